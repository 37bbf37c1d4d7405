// Scaled dot-product attention backward through the composite graph that
// cuDNN recognizes and fuses into its flash-attention backward engines
// (cudnn-frontend's arrangement; M is dropout's mask, 1/(1-p) its scale):
//
//   softmax_sum = REDUCE_ADD(dO * O) * [1 - p | scale_inv | 1]   (FLOAT, frontend workspace)
//   S  = Q·Kᵀ * scale [score_mod] [+ bias] [+ ALiBi] [padding mask] - stats [band mask]
//   P  = EXP(S) [* M * 1/(1-p)]
//   dV = Pᵀ·dO                                 (Pᵀ: a RESHAPE to the I/O type)
//   dP = dO·Vᵀ [* M] ; dS' = (dP - softmax_sum) * EXP(S) [* 1/(1-p)]
//   [dBias = REDUCE_ADD over the batch of dS'] ; dS = [score_mod_bprop](dS') * scale
//   dK = dSᵀ·Q ; dQ = dS·K                     (K: a RESHAPE of Kᵀ)
//   [dSink = REDUCE_ADD over b and s_q of EXP(sink - stats) * REDUCE_ADD(dO * O)]
//
// The score modifiers and dropout are shared with the forward
// (attention_masks.h); with sequence lengths every matmul gets them as GEMM
// overrides. dQ goes through a FLOAT accumulator in the frontend's workspace
// (cuDNN >= 9.6 zeroes it itself) and an IDENTITY to dQ; with
// `deterministic` or dBias, or before 9.6, dQ is written directly (the
// engines' own dP-workspace path). GQA/MQA: dK and dV are computed per
// query head (virtual, I/O type) and summed over each group of h_q / h_kv
// heads by a REDUCTION ADD.
#include <limits>

#include "backend/attention_masks.h"
#include "backend/attribute_util.h"
#include "backend/lower_score_mod.h"
#include "backend/lowering.h"
#include "ops/ops.h"

namespace cudnnfe::backend {
namespace {

constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;
// From 9.6 the engines zero the dQ accumulator themselves; before, the
// frontend had to memset it, which cudnnfe's execute does not do.
constexpr size_t kAccumulatorZeroedSince = 90600;

PointwiseAttrs mode(cudnnfe_pointwise_mode_t m, int axis = 0) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  attrs.axis = axis;
  return attrs;
}

// Transposed view of the last two dims: dims and strides swapped.
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

// out = a·b, or for GQA/MQA (h_q != h of `out`) a per-query-head product
// in the I/O type reduced over each group of heads into `out`.
void matmul_into(Lowering &lowering, cudnnDataType_t compute, cudnnBackendDescriptor_t a,
                 cudnnBackendDescriptor_t b, int64_t out_uid, const std::vector<int64_t> &full,
                 cudnnDataType_t io, const MatmulOverrides &overrides) {
  const Tensor &out = lowering.graph().tensor(out_uid);
  if (out.dims[1] == full[1]) {
    add_matmul(lowering, compute, a, b, lowering.tensor(out_uid), overrides);
    return;
  }
  cudnnBackendDescriptor_t per_head = lowering.virtual_tensor(full, io);
  add_matmul(lowering, compute, a, b, per_head, overrides);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, per_head,
                lowering.tensor(out_uid));
}

// dSink: cudnn-frontend's chain EXP(sink - stats) * sum(dO * O), reduced
// into dSink's [1, h_q, 1, 1], which cuDNN 9.13 and newer fuse into the
// backward engine. Read literally the chain is +P_sink * D, the opposite of
// the analytic gradient -P_sink * D (docs/attention.md); cudnn-frontend's own
// test compares cuDNN's dSink with torch's autograd gradient, so the engine
// takes the chain as a pattern and gives the autograd sign. No NEG is added:
// an op outside the pattern would keep the engines from fusing the graph.
// tests/test_gpu_attention_options.cpp checks the sign against the CPU
// reference (and says so when it comes out flipped).
void add_sink_gradient(Lowering &lowering, const Node &node, cudnnDataType_t compute,
                       cudnnBackendDescriptor_t row_sum) {
  const Tensor &stats = lowering.graph().tensor(node.inputs[SdpaBackward::kStats]);
  cudnnBackendDescriptor_t shifted = lowering.virtual_tensor(stats.dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), compute,
                lowering.tensor(attention_spec(node).sink_token), lowering.tensor(stats.uid),
                nullptr, shifted);
  cudnnBackendDescriptor_t p_sink = lowering.virtual_tensor(stats.dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_EXP), compute, shifted, nullptr, nullptr, p_sink);
  cudnnBackendDescriptor_t per_row = lowering.virtual_tensor(stats.dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, p_sink, row_sum, nullptr, per_row);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, per_row,
                lowering.tensor(node.outputs[SdpaBackward::kDSinkToken]));
}

}  // namespace

void lower_sdpa_backward(Lowering &lowering, const Node &node) {
  const Graph &graph = lowering.graph();
  const SdpaBackwardAttrs &attrs = node.as<SdpaBackwardAttrs>();
  using namespace SdpaBackward;
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  const Tensor &k = graph.tensor(node.inputs[kK]);
  const Tensor &v = graph.tensor(node.inputs[kV]);
  const int64_t o = node.inputs[kO], d_o = node.inputs[kDO], stats = node.inputs[kStats];
  const int64_t dbias = node.outputs[SdpaBackward::kDBias];
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t s_kv = k.dims[2], d_v = v.dims[3];
  AttentionLowering attention(lowering, node);
  const cudnnDataType_t compute = attention.compute();
  const cudnnDataType_t io = to_cudnn(q.dtype);
  const std::vector<int64_t> &scores = attention.scores();
  const std::vector<int64_t> per_row = {b, h_q, s_q, 1};
  // Sᵀ-shaped views of [b, h_q, s_q, s_kv] scores (a transpose, not a
  // reinterpretation: the strides say so).
  const std::vector<int64_t> scores_t = {b, h_q, s_kv, s_q};
  const std::vector<int64_t> scores_t_strides = {h_q * s_q * s_kv, s_q * s_kv, 1, s_kv};
  // dBias, like deterministic, needs the engines' dP-workspace path.
  const bool accumulate_dq =
      !attrs.deterministic && dbias == 0 && lowering.cudnn_version() >= kAccumulatorZeroedSince;
  // GEMM overrides by the role of each matmul's dims (null without padding).
  const MatmulOverrides q_by_kv = {attention.seq_len_q(), attention.seq_len_kv(), nullptr};
  const MatmulOverrides kv_by_q = {attention.seq_len_kv(), nullptr, attention.seq_len_q()};
  const MatmulOverrides q_over_kv = {attention.seq_len_q(), nullptr, attention.seq_len_kv()};

  cudnnBackendDescriptor_t q_desc = lowering.tensor(q.uid);
  cudnnBackendDescriptor_t do_desc = lowering.tensor(d_o);
  cudnnBackendDescriptor_t kt =
      lowering.tensor_view(k.uid, swap_last(k.dims), swap_last(k.strides));
  cudnnBackendDescriptor_t vt =
      lowering.tensor_view(v.uid, swap_last(v.dims), swap_last(v.strides));

  // softmax_sum = sum over d_v of dO * O (times 1 - p with dropout).
  cudnnBackendDescriptor_t do_o = lowering.virtual_tensor({b, h_q, s_q, d_v}, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, do_desc, lowering.tensor(o),
                nullptr, do_o);
  cudnnBackendDescriptor_t row_sum = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, do_o, row_sum);
  if (node.outputs[SdpaBackward::kDSinkToken] != 0)
    add_sink_gradient(lowering, node, compute, row_sum);
  cudnnBackendDescriptor_t softmax_sum =
      lowering.workspace_tensor(per_row, CUDNNFE_DTYPE_FLOAT, "softmax_sum");
  // (Every scalar made must be used: cuDNN refuses a variant pack with a
  // UID its plan does not know, so `one` exists only without dropout.)
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, row_sum,
                attention.dropout() ? attention.dropout_scale_inv()
                                    : lowering.scalar(1.0, CUDNNFE_DTYPE_FLOAT, 4),
                nullptr, softmax_sum);

  // P = exp(Q·Kᵀ * scale [+ bias] [+ ALiBi] - stats), masked.
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, q_desc, kt, s, q_by_kv);
  s = attention.binary(CUDNNFE_POINTWISE_MUL, s, attention.attn_scale(), kFloat);
  s = lower_score_mod(lowering, attrs.score_mod, s);
  s = attention.add_bias_and_alibi(s);
  s = attention.padding_mask(s);
  s = attention.binary(CUDNNFE_POINTWISE_SUB, s, lowering.tensor(stats), kFloat);
  // cuDNN 9.0 to 9.9 lose the padding when the stats are subtracted: apply
  // it again (cudnn-frontend does the same).
  if (attention.padded() && lowering.cudnn_version() >= 90000 && lowering.cudnn_version() < 91000)
    s = attention.padding_mask(s);
  s = attention.band_mask(s);
  cudnnBackendDescriptor_t p = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_EXP), compute, s, nullptr, nullptr, p);
  cudnnBackendDescriptor_t p_dropped = p;
  if (attention.dropout()) {
    p_dropped = attention.binary(CUDNNFE_POINTWISE_MUL, p, attention.dropout_mask(), kFloat);
    p_dropped =
        attention.binary(CUDNNFE_POINTWISE_MUL, p_dropped, attention.dropout_scale(), kFloat);
  }

  // dV = Pᵀ·dO.
  cudnnBackendDescriptor_t p_t = lowering.virtual_tensor(scores_t, scores_t_strides, io);
  add_reshape(lowering, p_dropped, p_t, "Pᵀ");
  matmul_into(lowering, compute, p_t, do_desc, node.outputs[kDV], {b, h_q, s_kv, d_v}, io, kv_by_q);

  // dS = (dO·Vᵀ [* M] - softmax_sum) * P [* 1/(1-p)] * scale.
  cudnnBackendDescriptor_t dp = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, do_desc, vt, dp, q_by_kv);
  if (attention.dropout())
    dp = attention.binary(CUDNNFE_POINTWISE_MUL, dp, attention.dropout_mask(), kFloat);
  cudnnBackendDescriptor_t ds = attention.binary(CUDNNFE_POINTWISE_SUB, dp, softmax_sum, kFloat);
  ds = attention.binary(CUDNNFE_POINTWISE_MUL, ds, p, kFloat);
  if (attention.dropout())
    ds = attention.binary(CUDNNFE_POINTWISE_MUL, ds, attention.dropout_scale(), kFloat);
  if (dbias != 0)
    add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, ds, lowering.tensor(dbias));
  ds = lower_score_mod(lowering, attrs.score_mod_bprop, ds);
  ds = attention.binary(CUDNNFE_POINTWISE_MUL, ds, attention.attn_scale(), kFloat);

  // dK = dSᵀ·Q.
  cudnnBackendDescriptor_t ds_t = lowering.virtual_tensor(scores_t, scores_t_strides, io);
  add_reshape(lowering, ds, ds_t, "dSᵀ");
  matmul_into(lowering, compute, ds_t, q_desc, node.outputs[kDK], {b, h_q, s_kv, d}, io, kv_by_q);

  // dQ = dS·K, K being Kᵀ reshaped back (K's own strides).
  cudnnBackendDescriptor_t k_back =
      lowering.virtual_tensor(k.dims, k.strides, io, attention.spec().ragged_k);
  add_reshape(lowering, kt, k_back, "K from Kᵀ");
  if (accumulate_dq) {
    cudnnBackendDescriptor_t dq_accum =
        lowering.workspace_tensor({b, h_q, s_q, d}, CUDNNFE_DTYPE_FLOAT, "the dQ accumulator");
    add_matmul(lowering, compute, ds, k_back, dq_accum, q_over_kv);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_IDENTITY), compute, dq_accum, nullptr, nullptr,
                  lowering.tensor(node.outputs[kDQ]));
  } else {
    add_matmul(lowering, compute, ds, k_back, lowering.tensor(node.outputs[kDQ]), q_over_kv);
  }
}

}  // namespace cudnnfe::backend
