// FP8 attention forward through the composite graph cudnn-frontend builds
// for per-tensor-scaled FP8 attention, which cuDNN fuses into its FP8
// flash-attention engines (Hopper and newer):
//
//   S = Q·Kᵀ (FP8 operands, FLOAT result) * attn_scale * descale_q *
//       descale_k -> [+ ALiBi] [padding mask] [diagonal band: causal /
//       sliding window] (attention's, attention_masks.h) -> softmax (max,
//       sub, exp, sum; stats = max + log(sum); P = exp / sum; a sink logit
//       joins max and sum, AttentionLowering::softmax) -> [dropout]
//   amax_s = AMAX(P);  P8 = P * scale_s, cast to q's FP8 type
//   O' = P8·V * descale_s * descale_v;  amax_o = AMAX(O');  O = O' * scale_o
//
// With sequence lengths both matmuls get them as GEMM overrides, as in
// sdpa; a paged K or V is gathered by PAGED_CACHE_LOAD (cuDNN 9.5+).
// Kᵀ is K's descriptor with its last two dims and strides swapped. GQA needs
// nothing extra: the engine maps each query head to its key/value head.
#include "backend/lower_sdpa_fp8.h"

#include "backend/attention_masks.h"
#include "core/error.h"
#include "ops/sdpa_fp8.h"

namespace cudnnfe::backend {
namespace fp8 {
namespace {

PointwiseAttrs mode(cudnnfe_pointwise_mode_t m) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  return attrs;
}

}  // namespace

cudnnBackendDescriptor_t Scales::operator()(size_t port) {
  const int64_t uid = node_.inputs.at(port);
  auto it = made_.find(uid);
  if (it != made_.end()) return it->second;
  const Tensor &t = lowering_.graph().tensor(uid);
  cudnnBackendDescriptor_t desc;
  if (t.is_scalar)
    desc = lowering_.operand(uid, 4);
  else if (t.dims.size() == 4)
    desc = lowering_.tensor(uid);
  else
    desc = lowering_.tensor_view(uid, {1, 1, 1, 1}, {1, 1, 1, 1});
  made_.emplace(uid, desc);
  return desc;
}

cudnnBackendDescriptor_t mul(Lowering &lowering, cudnnBackendDescriptor_t a,
                             cudnnBackendDescriptor_t b, const std::vector<int64_t> &dims,
                             cudnnDataType_t type, cudnnBackendDescriptor_t into) {
  cudnnBackendDescriptor_t out = into ? into : lowering.virtual_tensor(dims, type);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), kFloat, a, b, nullptr, out);
  return out;
}

void scaled_matmul(Lowering &lowering, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                   cudnnBackendDescriptor_t descale_a, cudnnBackendDescriptor_t descale_b,
                   cudnnBackendDescriptor_t scale_c, const std::vector<int64_t> &full,
                   int64_t c_uid, int64_t amax_uid, const MatmulOverrides &overrides) {
  const Tensor &c = lowering.graph().tensor(c_uid);
  cudnnBackendDescriptor_t product = lowering.virtual_tensor(full, kFloat);
  add_matmul(lowering, kFloat, a, b, product, overrides);
  if (c.dims[1] != full[1]) {  // GQA: sum the query heads of each key/value head
    cudnnBackendDescriptor_t summed = lowering.virtual_tensor(c.dims, kFloat);
    add_reduction(lowering, CUDNNFE_REDUCTION_ADD, kFloat, false, product, summed);
    product = summed;
  }
  cudnnBackendDescriptor_t descaled = mul(lowering, product, descale_a, c.dims);
  descaled = mul(lowering, descaled, descale_b, c.dims);
  add_reduction(lowering, CUDNNFE_REDUCTION_AMAX, kFloat, false, descaled,
                lowering.tensor(amax_uid));
  mul(lowering, descaled, scale_c, c.dims, kFloat, lowering.tensor(c_uid));
}

// Measured, not assumed: cuDNN 9.14 and 9.19 on an H100 built these graphs
// (engine 2) and returned O and stats far from the reference (ALiBi: O off
// by more than its largest value; a given dropout mask: amax_o 80 against
// 1.2; sink logits on 9.14, which 9.19 refuses itself: O off by 1.2x its
// largest value) in tests/test_gpu_fp8.cpp, so they are refused rather than
// wrong.
// The backward's dropout follows the forward's (its graph has no check).
void refuse_unmatched_options(const Node &node) {
  const AttentionSpec s = attention_spec(node);
  const char *what = s.options.alibi_mask                     ? "ALiBi"
                     : s.seeded_dropout() || s.mask_dropout() ? "dropout"
                     : s.sink_token                           ? "a sink logit"
                                                              : nullptr;
  if (what)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": ", what,
         " with FP8 attention is refused on the GPU: cuDNN's FP8 attention engines build the "
         "graph but return values that differ from the reference (cudnnfe's GPU test, cuDNN "
         "9.14 and 9.19 on an H100); the CPU reference runs it");
}

}  // namespace fp8

void lower_sdpa_fp8(Lowering &lowering, const Node &node) {
  using namespace SdpaFp8;
  using fp8::kFloat;
  const Graph &graph = lowering.graph();
  fp8::refuse_unmatched_options(node);
  const SdpaFp8Attrs &attrs = node.as<SdpaFp8Attrs>();
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  AttentionLowering attention(lowering, node);
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const std::vector<int64_t> &scores = attention.scores();
  const std::vector<int64_t> per_row = {b, h_q, s_q, 1};
  const cudnnDataType_t io = to_cudnn(q.dtype);
  fp8::Scales scales(lowering, node);

  // S = Q·Kᵀ in FLOAT (a paged K loaded from its pages), then the softmax
  // scale and the two descales.
  cudnnBackendDescriptor_t kt = attention.keys_transposed(io);
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, kFloat, lowering.tensor(q.uid), kt, s,
             {attention.seq_len_q(), attention.seq_len_kv(), nullptr});
  s = fp8::mul(lowering, s,
               lowering.scalar(sdpa_fp8_attn_scale(attrs.attn_scale, d), CUDNNFE_DTYPE_FLOAT, 4),
               scores);
  s = fp8::mul(lowering, s, scales(kDescaleQ), scores);
  s = fp8::mul(lowering, s, scales(kDescaleK), scores);
  s = attention.add_bias_and_alibi(s);
  s = attention.padding_mask(s);
  s = attention.band_mask(s);

  // Softmax (with the sink logit when given), stats virtual unless asked for.
  cudnnBackendDescriptor_t stats = node.outputs[kStats] != 0
                                       ? lowering.tensor(node.outputs[kStats])
                                       : lowering.virtual_tensor(per_row, kFloat);
  cudnnBackendDescriptor_t p = attention.softmax(s, {stats}, kFloat);
  p = attention.apply_dropout(p, kFloat);

  // amax of P (after dropout), then P scaled and cast to q's FP8 type for
  // the second matmul.
  add_reduction(lowering, CUDNNFE_REDUCTION_AMAX, kFloat, false, p,
                lowering.tensor(node.outputs[kAmaxS]));
  cudnnBackendDescriptor_t p8 = fp8::mul(lowering, p, scales(kScaleS), scores, io);

  cudnnBackendDescriptor_t v_desc = attention.values(io);
  fp8::scaled_matmul(lowering, p8, v_desc, scales(kDescaleS), scales(kDescaleV), scales(kScaleO),
                     graph.tensor(node.outputs[kO]).dims, node.outputs[kO], node.outputs[kAmaxO],
                     {attention.seq_len_q(), nullptr, attention.seq_len_kv()});
}

}  // namespace cudnnfe::backend
