// FP8 scaled dot-product attention, forward and backward: the per-kind
// entry points of ops/sdpa_fp8.cpp.
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

// Their ports: SdpaFp8 and SdpaFp8Backward (graph/op_list.def).

// Shape inference and rules (called when the op is added and at validation).
void infer_sdpa_fp8(Graph &graph, Node &node);
void infer_sdpa_fp8_backward(Graph &graph, Node &node);
// Data-type rules, once types are resolved (both kinds).
void check_types_sdpa_fp8(Graph &graph, Node &node);

// The softmax scale an FP8 attention node applies: attn_scale, or 1/sqrt(d)
// when 0 (d = q's last dim).
double sdpa_fp8_attn_scale(double attn_scale, int64_t head_dim);

}  // namespace cudnnfe
