// Scaled dot-product attention through the composite graph that cuDNN
// recognizes and fuses into its flash-attention engines (or, when the node's
// implementation choice says so, the unified operation of
// lower_sdpa_unified.cpp):
//
//   S = Q·Kᵀ -> S·scale -> [score_mod] -> [+ bias] [+ ALiBi] -> [padding mask] ->
//   [diagonal band: causal / sliding window] -> softmax (with stats = max +
//   log(sum exp); a sink logit raises the max to max(max, sink) and adds
//   exp(sink - max) to the sum, as cudnn-frontend's softmax does) -> P [*
//   dropout mask * scale] (cast to the I/O type) -> O = P·V.
//
// The score modifiers and dropout are shared with the backward
// (attention_masks.h). With sequence lengths the two matmuls get them as
// GEMM overrides (Q·Kᵀ: M = seq_len_q, N = seq_len_kv; P·V: M = seq_len_q,
// K = seq_len_kv). Kᵀ is K's descriptor with its last two dims and strides
// swapped. GQA/MQA need nothing extra: the matmuls see h_kv heads on K and V
// against h_q on Q and S, and the engine maps each query head to its
// key/value head.
#include "backend/attention_masks.h"
#include "backend/attribute_util.h"
#include "backend/lower_score_mod.h"
#include "backend/lowering.h"
#include "ops/ops.h"

namespace cudnnfe::backend {
namespace {

constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;

}  // namespace

void lower_sdpa(Lowering &lowering, const Node &node) {
  if (sdpa_runs_unified(lowering, node)) return lower_sdpa_unified(lowering, node);
  const Graph &graph = lowering.graph();
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  AttentionLowering attention(lowering, node);
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2];
  const cudnnDataType_t compute = attention.compute();
  const cudnnDataType_t io = to_cudnn(q.dtype);
  const std::vector<int64_t> &scores = attention.scores();
  const std::vector<int64_t> per_row = {b, h_q, s_q, 1};

  // S = Q·Kᵀ in float (a paged K loaded from its pages).
  cudnnBackendDescriptor_t kt = attention.keys_transposed(io);
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, lowering.tensor(q.uid), kt, s,
             {attention.seq_len_q(), attention.seq_len_kv(), nullptr});
  s = attention.binary(CUDNNFE_POINTWISE_MUL, s, attention.attn_scale(), kFloat);
  s = lower_score_mod(lowering, node.as<SdpaAttrs>().score_mod, s);
  s = attention.add_bias_and_alibi(s);
  s = attention.padding_mask(s);
  s = attention.band_mask(s);

  // Softmax, keeping max + log(sum) as the stats backward needs and the row
  // max and sum the caller asked for; P in the I/O type (the second matmul's
  // A operand must match V's type), after dropout when there is one
  // (attention_masks.h: apply_dropout).
  auto kept = [&](size_t port) {
    return node.outputs[port] != 0 ? lowering.tensor(node.outputs[port]) : nullptr;
  };
  cudnnBackendDescriptor_t p =
      attention.softmax(s, {kept(1), kept(Sdpa::kScoreMax), kept(Sdpa::kScoreSumExp)},
                        attention.dropout() ? kFloat : io);
  p = attention.apply_dropout(p, io);

  cudnnBackendDescriptor_t v_desc = attention.values(io);
  add_matmul(lowering, compute, p, v_desc, lowering.tensor(node.outputs[Sdpa::kO]),
             {attention.seq_len_q(), nullptr, attention.seq_len_kv()});
}

}  // namespace cudnnfe::backend
