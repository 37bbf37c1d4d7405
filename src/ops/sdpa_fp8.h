// FP8 scaled dot-product attention, forward and backward: port numbers
// (shared by shape inference, the CPU reference and the lowering) and the
// per-kind entry points of ops/sdpa_fp8.cpp.
//
// The graph both ops stand for is cudnn-frontend's per-tensor-scaled FP8
// attention (docs in include/cudnnfe/cudnnfe.h, "FP8 attention"): FP8
// operands are multiplied as stored, every product is descaled in FLOAT, the
// softmax probabilities are scaled and cast to FP8 before the second
// matmul, and each FP8 result is written scaled, with the absolute maximum
// of its unscaled value (amax) as a FLOAT output.
#pragma once

#include "graph/graph.h"

namespace cudnnfe {

namespace sdpa_fp8_port {
enum Input : size_t {
  kQ,
  kK,
  kV,
  kDescaleQ,
  kDescaleK,
  kDescaleV,
  kDescaleS,
  kScaleS,
  kScaleO,
  // Optional (0: not given); ops/attention.cpp's attention_ports.
  kSeqLenQ,
  kSeqLenKv,
  kDropoutSeed,
  kDropoutOffset,
  kDropoutMask,
  kDropoutScale,
  kPageTableK,
  kPageTableV,
  kSinkToken,
  kInputCount
};
enum Output : size_t { kO, kStats, kAmaxS, kAmaxO, kOutputCount };
}  // namespace sdpa_fp8_port

namespace sdpa_fp8_backward_port {
enum Input : size_t {
  kQ,
  kK,
  kV,
  kO,
  kDO,
  kStats,
  kDescaleQ,
  kDescaleK,
  kDescaleV,
  kDescaleO,
  kDescaleDO,
  kDescaleS,
  kDescaleDP,
  kScaleS,
  kScaleDQ,
  kScaleDK,
  kScaleDV,
  kScaleDP,
  // Optional (0: not given); ops/attention.cpp's attention_ports.
  kSeqLenQ,
  kSeqLenKv,
  kDropoutSeed,
  kDropoutOffset,
  kDropoutMask,
  kDropoutScale,
  kDropoutScaleInv,
  kInputCount
};
enum Output : size_t { kDQ, kDK, kDV, kAmaxDQ, kAmaxDK, kAmaxDV, kAmaxDP, kOutputCount };
}  // namespace sdpa_fp8_backward_port

// Shape inference and rules (called when the op is added and at validation).
void infer_sdpa_fp8(Graph &graph, Node &node);
void infer_sdpa_fp8_backward(Graph &graph, Node &node);
// Data-type rules, once types are resolved (both kinds).
void check_types_sdpa_fp8(Graph &graph, Node &node);

// The softmax scale an FP8 attention node applies: attn_scale, or 1/sqrt(d)
// when 0 (d = q's last dim).
double sdpa_fp8_attn_scale(double attn_scale, int64_t head_dim);

}  // namespace cudnnfe
