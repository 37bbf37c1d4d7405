// FP8 attention backward through the composite graph cudnn-frontend builds
// for per-tensor-scaled FP8 attention backward, which cuDNN fuses into its
// FP8 flash-attention backward engines:
//
//   D  = REDUCE_ADD(dO * O) * descale_dO * descale_o [* scale_inv]  (FLOAT)
//   S  = Q·Kᵀ * attn_scale * descale_q * descale_k [padding mask] [diagonal
//        band] - stats
//   P  = EXP(S);  P8ᵀ = RESHAPE(P [* M * scale] * scale_s as q's FP8 type)
//   dV = FP8 matmul(P8ᵀ, dO; descale_s, descale_dO, scale_dV, amax_dV)
//   dS = (dO·Vᵀ * descale_dO * descale_v - D) * P [* scale] * attn_scale
//   amax_dP = AMAX(dS);  dS8 = dS * scale_dP as dO's FP8 type
//   dQ = FP8 matmul(dS8, K; descale_dP, descale_k, scale_dQ, amax_dQ)
//   dK = FP8 matmul(RESHAPE(dS8)ᵀ, Q; descale_dP, descale_q, scale_dK, amax_dK)
//
// where an FP8 matmul is a·b in FLOAT (GQA: summed over each group of query
// heads), times both descales, its amax taken, then times the scale into
// the output (fp8::scaled_matmul); with sequence lengths every matmul gets
// them as GEMM overrides. M, scale and scale_inv are dropout's mask and
// scales (attention_masks.h). K is Kᵀ reshaped back (a FLOAT virtual
// view, as cudnn-frontend's intermediate type makes it).
#include "backend/attention_masks.h"
#include "backend/attribute_util.h"
#include "backend/lower_sdpa_fp8.h"
#include "ops/sdpa_fp8.h"

namespace cudnnfe::backend {
namespace {

std::vector<int64_t> swap_last(std::vector<int64_t> v) {
  std::swap(v[v.size() - 1], v[v.size() - 2]);
  return v;
}

void add_reshape(Lowering &lowering, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y,
                 const char *what) {
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, &x, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, &y, 1);
  add_operation_named(lowering, std::move(op), cat("RESHAPE (", what, ")"));
}

cudnnBackendDescriptor_t pointwise(Lowering &lowering, cudnnfe_pointwise_mode_t m,
                                   cudnnBackendDescriptor_t in0, cudnnBackendDescriptor_t in1,
                                   const std::vector<int64_t> &dims) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  cudnnBackendDescriptor_t out = lowering.virtual_tensor(dims, fp8::kFloat);
  add_pointwise(lowering, attrs, fp8::kFloat, in0, in1, nullptr, out);
  return out;
}

// D = rowsum(dO * O) * descale_dO * descale_o [* dropout's scale_inv]
// (FLOAT, [b, h_q, s_q, 1]).
cudnnBackendDescriptor_t softmax_sum(Lowering &lowering, const Node &node,
                                     AttentionLowering &attention, fp8::Scales &scales,
                                     cudnnBackendDescriptor_t do_desc,
                                     const std::vector<int64_t> &o_dims) {
  using namespace SdpaFp8Backward;
  const std::vector<int64_t> per_row = {o_dims[0], o_dims[1], o_dims[2], 1};
  cudnnBackendDescriptor_t do_o =
      pointwise(lowering, CUDNNFE_POINTWISE_MUL, do_desc, lowering.tensor(node.inputs[kO]), o_dims);
  cudnnBackendDescriptor_t row_sum = lowering.virtual_tensor(per_row, fp8::kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, fp8::kFloat, false, do_o, row_sum);
  cudnnBackendDescriptor_t delta = fp8::mul(lowering, row_sum, scales(kDescaleDO), per_row);
  delta = fp8::mul(lowering, delta, scales(kDescaleO), per_row);
  if (attention.dropout())
    delta = fp8::mul(lowering, delta, attention.dropout_scale_inv(), per_row);
  return delta;
}

// P = exp(S * attn_scale * descale_q * descale_k [padding] [band] - stats)
// from the scores S = Q·Kᵀ.
cudnnBackendDescriptor_t probabilities(Lowering &lowering, const Node &node,
                                       AttentionLowering &attention, fp8::Scales &scales,
                                       cudnnBackendDescriptor_t s,
                                       cudnnBackendDescriptor_t attn_scale) {
  using namespace SdpaFp8Backward;
  const std::vector<int64_t> &scores = attention.scores();
  s = fp8::mul(lowering, s, attn_scale, scores);
  s = fp8::mul(lowering, s, scales(kDescaleQ), scores);
  s = fp8::mul(lowering, s, scales(kDescaleK), scores);
  s = attention.padding_mask(s);
  s = attention.band_mask(s);
  s = pointwise(lowering, CUDNNFE_POINTWISE_SUB, s, lowering.tensor(node.inputs[kStats]), scores);
  return pointwise(lowering, CUDNNFE_POINTWISE_EXP, s, nullptr, scores);
}

}  // namespace

void lower_sdpa_fp8_backward(Lowering &lowering, const Node &node) {
  using namespace SdpaFp8Backward;
  using fp8::kFloat;
  const Graph &graph = lowering.graph();
  fp8::refuse_unmatched_options(node);
  const SdpaFp8BackwardAttrs &attrs = node.as<SdpaFp8BackwardAttrs>();
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  const Tensor &k = graph.tensor(node.inputs[kK]);
  const Tensor &v = graph.tensor(node.inputs[kV]);
  const Tensor &d_o = graph.tensor(node.inputs[kDO]);
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t s_kv = k.dims[2], d_v = v.dims[3];
  AttentionLowering attention(lowering, node);
  // GEMM overrides by the role of each matmul's dims (null without padding).
  const MatmulOverrides q_by_kv = {attention.seq_len_q(), attention.seq_len_kv(), nullptr};
  const MatmulOverrides kv_by_q = {attention.seq_len_kv(), nullptr, attention.seq_len_q()};
  const MatmulOverrides q_over_kv = {attention.seq_len_q(), nullptr, attention.seq_len_kv()};
  const std::vector<int64_t> scores = {b, h_q, s_q, s_kv};
  // Sᵀ-shaped views of the [b, h_q, s_q, s_kv] scores (a transpose: the
  // strides say so).
  const std::vector<int64_t> scores_t = {b, h_q, s_kv, s_q};
  const std::vector<int64_t> scores_t_strides = {h_q * s_q * s_kv, s_q * s_kv, 1, s_kv};
  fp8::Scales scales(lowering, node);
  cudnnBackendDescriptor_t q_desc = lowering.tensor(q.uid);
  cudnnBackendDescriptor_t do_desc = lowering.tensor(d_o.uid);
  cudnnBackendDescriptor_t attn_scale =
      lowering.scalar(sdpa_fp8_attn_scale(attrs.attn_scale, d), CUDNNFE_DTYPE_FLOAT, 4);

  cudnnBackendDescriptor_t delta =
      softmax_sum(lowering, node, attention, scales, do_desc, {b, h_q, s_q, d_v});
  // P = exp(S - stats), S scaled, descaled and masked.
  cudnnBackendDescriptor_t kt =
      lowering.tensor_view(k.uid, swap_last(k.dims), swap_last(k.strides));
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, kFloat, q_desc, kt, s, q_by_kv);
  cudnnBackendDescriptor_t p = probabilities(lowering, node, attention, scales, s, attn_scale);
  // dV = (P [* mask * dropout scale] * scale_s in q's FP8 type)ᵀ · dO.
  const cudnnDataType_t p_type = to_cudnn(q.dtype);
  cudnnBackendDescriptor_t p_dropped = p;
  if (attention.dropout()) {
    p_dropped = fp8::mul(lowering, p, attention.dropout_mask(), scores);
    p_dropped = fp8::mul(lowering, p_dropped, attention.dropout_scale(), scores);
  }
  cudnnBackendDescriptor_t p8 = fp8::mul(lowering, p_dropped, scales(kScaleS), scores, p_type);
  cudnnBackendDescriptor_t p8_t = lowering.virtual_tensor(scores_t, scores_t_strides, p_type);
  add_reshape(lowering, p8, p8_t, "P8ᵀ");
  fp8::scaled_matmul(lowering, p8_t, do_desc, scales(kDescaleS), scales(kDescaleDO),
                     scales(kScaleDV), {b, h_q, s_kv, d_v}, node.outputs[kDV],
                     node.outputs[kAmaxDV], kv_by_q);

  // dS = (dO·Vᵀ descaled - D) * P [* dropout scale] * attn_scale; its amax;
  // dS8 in dO's type. (cudnn-frontend's FP8 graph has no mask on dP: the
  // engine applies it, as the CPU reference's exact gradient does.)
  cudnnBackendDescriptor_t vt =
      lowering.tensor_view(v.uid, swap_last(v.dims), swap_last(v.strides));
  cudnnBackendDescriptor_t dp = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, kFloat, do_desc, vt, dp, q_by_kv);
  dp = fp8::mul(lowering, dp, scales(kDescaleDO), scores);
  dp = fp8::mul(lowering, dp, scales(kDescaleV), scores);
  cudnnBackendDescriptor_t ds = pointwise(lowering, CUDNNFE_POINTWISE_SUB, dp, delta, scores);
  ds = fp8::mul(lowering, ds, p, scores);
  if (attention.dropout()) ds = fp8::mul(lowering, ds, attention.dropout_scale(), scores);
  ds = fp8::mul(lowering, ds, attn_scale, scores);
  add_reduction(lowering, CUDNNFE_REDUCTION_AMAX, kFloat, false, ds,
                lowering.tensor(node.outputs[kAmaxDP]));
  const cudnnDataType_t ds_type = to_cudnn(d_o.dtype);
  cudnnBackendDescriptor_t ds8 = fp8::mul(lowering, ds, scales(kScaleDP), scores, ds_type);

  // dQ = dS8 · K, K being Kᵀ reshaped back (K's own strides).
  cudnnBackendDescriptor_t k_back = lowering.virtual_tensor(k.dims, k.strides, kFloat);
  add_reshape(lowering, kt, k_back, "K from Kᵀ");
  fp8::scaled_matmul(lowering, ds8, k_back, scales(kDescaleDP), scales(kDescaleK), scales(kScaleDQ),
                     {b, h_q, s_q, d}, node.outputs[kDQ], node.outputs[kAmaxDQ], q_over_kv);

  // dK = dS8ᵀ · Q.
  cudnnBackendDescriptor_t ds8_t = lowering.virtual_tensor(scores_t, scores_t_strides, ds_type);
  add_reshape(lowering, ds8, ds8_t, "dS8ᵀ");
  fp8::scaled_matmul(lowering, ds8_t, q_desc, scales(kDescaleDP), scales(kDescaleQ),
                     scales(kScaleDK), {b, h_q, s_kv, d}, node.outputs[kDK], node.outputs[kAmaxDK],
                     kv_by_q);
}

}  // namespace cudnnfe::backend
