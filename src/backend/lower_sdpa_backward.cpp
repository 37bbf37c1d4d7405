// Scaled dot-product attention backward through the composite graph that
// cuDNN recognizes and fuses into its flash-attention backward engines:
//
//   softmax_sum = REDUCE_ADD(dO * O) * 1      (FLOAT, frontend workspace)
//   S  = Q·Kᵀ * scale [+ bias] - stats [causal mask] ; P = EXP(S)
//   dV = Pᵀ·dO                                (Pᵀ: a RESHAPE to the I/O type)
//   dP = dO·Vᵀ ; dS = (dP - softmax_sum) * P * scale
//   dK = dSᵀ·Q ; dQ = dS·K                    (K: a RESHAPE of Kᵀ)
//
// dQ goes through a FLOAT accumulator in the frontend's workspace (cuDNN >=
// 9.6 zeroes it itself) and an IDENTITY to dQ; with `deterministic`, or
// before 9.6, dQ is written directly (the engines' own dP-workspace path).
// GQA/MQA: dK and dV are computed per query head (virtual, I/O type) and
// summed over each group of h_q / h_kv heads by a REDUCTION ADD.
#include <limits>

#include "backend/attribute_util.h"
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

double masked_value(size_t cudnn_version) {
  return cudnn_version >= 91000 ? -std::numeric_limits<double>::infinity()
                                : static_cast<double>(std::numeric_limits<float>::lowest());
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

// Keeps (row i, col j) where i + shift >= j (shift 0 top-left, s_kv - s_q
// bottom-right); the rest become the masked value.
cudnnBackendDescriptor_t causal_mask(Lowering &lowering, cudnnBackendDescriptor_t scores,
                                     const std::vector<int64_t> &dims, bool bottom_right,
                                     cudnnDataType_t compute) {
  cudnnBackendDescriptor_t row = lowering.virtual_tensor(dims, CUDNN_DATA_INT32);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_GEN_INDEX, 2), compute, scores, nullptr, nullptr,
                row);
  cudnnBackendDescriptor_t col = lowering.virtual_tensor(dims, CUDNN_DATA_INT32);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_GEN_INDEX, 3), compute, scores, nullptr, nullptr,
                col);
  if (bottom_right) {
    const int64_t s_q = dims[2], s_kv = dims[3];
    cudnnBackendDescriptor_t plus_kv = lowering.virtual_tensor(dims, CUDNN_DATA_INT32);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_ADD), CUDNN_DATA_INT32, row,
                  lowering.scalar(static_cast<double>(s_kv), CUDNNFE_DTYPE_INT32, 4), nullptr,
                  plus_kv);
    cudnnBackendDescriptor_t shifted = lowering.virtual_tensor(dims, CUDNN_DATA_INT32);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), CUDNN_DATA_INT32, plus_kv,
                  lowering.scalar(static_cast<double>(s_q), CUDNNFE_DTYPE_INT32, 4), nullptr,
                  shifted);
    row = shifted;
  }
  cudnnBackendDescriptor_t keep = lowering.virtual_tensor(dims, CUDNN_DATA_BOOLEAN);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_CMP_GE), CUDNN_DATA_BOOLEAN, row, col, nullptr,
                keep);
  cudnnBackendDescriptor_t masked = lowering.virtual_tensor(dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_BINARY_SELECT), compute, scores,
                lowering.scalar(masked_value(lowering.cudnn_version()), CUDNNFE_DTYPE_FLOAT, 4),
                keep, masked);
  return masked;
}

// out = a·b, or for GQA/MQA (h_q != h of `out`) a per-query-head product
// in the I/O type reduced over each group of heads into `out`.
void matmul_into(Lowering &lowering, cudnnDataType_t compute, cudnnBackendDescriptor_t a,
                 cudnnBackendDescriptor_t b, int64_t out_uid, const std::vector<int64_t> &full,
                 cudnnDataType_t io) {
  const Tensor &out = lowering.graph().tensor(out_uid);
  if (out.dims[1] == full[1]) {
    add_matmul(lowering, compute, a, b, lowering.tensor(out_uid));
    return;
  }
  cudnnBackendDescriptor_t per_head = lowering.virtual_tensor(full, io);
  add_matmul(lowering, compute, a, b, per_head);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, per_head,
                lowering.tensor(out_uid));
}

}  // namespace

void lower_sdpa_backward(Lowering &lowering, const Node &node) {
  const Graph &graph = lowering.graph();
  const SdpaBackwardAttrs &attrs = node.as<SdpaBackwardAttrs>();
  const Tensor &q = graph.tensor(node.inputs[0]);
  const Tensor &k = graph.tensor(node.inputs[1]);
  const Tensor &v = graph.tensor(node.inputs[2]);
  const int64_t o = node.inputs[3], d_o = node.inputs[4], stats = node.inputs[5];
  const int64_t bias = node.inputs[6];
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t s_kv = k.dims[2], d_v = v.dims[3];
  const cudnnDataType_t compute = to_cudnn(node.compute_dtype);
  const cudnnDataType_t io = to_cudnn(q.dtype);
  const std::vector<int64_t> scores = {b, h_q, s_q, s_kv};
  const std::vector<int64_t> per_row = {b, h_q, s_q, 1};
  // Sᵀ-shaped views of [b, h_q, s_q, s_kv] scores (a transpose, not a
  // reinterpretation: the strides say so).
  const std::vector<int64_t> scores_t = {b, h_q, s_kv, s_q};
  const std::vector<int64_t> scores_t_strides = {h_q * s_q * s_kv, s_q * s_kv, 1, s_kv};
  const bool accumulate_dq =
      !attrs.deterministic && lowering.cudnn_version() >= kAccumulatorZeroedSince;

  cudnnBackendDescriptor_t q_desc = lowering.tensor(q.uid);
  cudnnBackendDescriptor_t do_desc = lowering.tensor(d_o);
  cudnnBackendDescriptor_t kt =
      lowering.tensor_view(k.uid, swap_last(k.dims), swap_last(k.strides));
  cudnnBackendDescriptor_t vt =
      lowering.tensor_view(v.uid, swap_last(v.dims), swap_last(v.strides));
  cudnnBackendDescriptor_t one = lowering.scalar(1.0, CUDNNFE_DTYPE_FLOAT, 4);
  cudnnBackendDescriptor_t scale =
      lowering.scalar(effective_attn_scale(graph, node), CUDNNFE_DTYPE_FLOAT, 4);

  // softmax_sum = sum over d_v of dO * O.
  cudnnBackendDescriptor_t do_o = lowering.virtual_tensor({b, h_q, s_q, d_v}, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, do_desc, lowering.tensor(o),
                nullptr, do_o);
  cudnnBackendDescriptor_t row_sum = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, do_o, row_sum);
  cudnnBackendDescriptor_t softmax_sum =
      lowering.workspace_tensor(per_row, CUDNNFE_DTYPE_FLOAT, "softmax_sum");
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, row_sum, one, nullptr, softmax_sum);

  // P = exp(Q·Kᵀ * scale [+ bias] - stats), masked.
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, q_desc, kt, s);
  cudnnBackendDescriptor_t scaled = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, s, scale, nullptr, scaled);
  s = scaled;
  if (bias != 0) {
    cudnnBackendDescriptor_t biased = lowering.virtual_tensor(scores, kFloat);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_ADD), compute, s, lowering.tensor(bias), nullptr,
                  biased);
    s = biased;
  }
  cudnnBackendDescriptor_t centered = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), compute, s, lowering.tensor(stats), nullptr,
                centered);
  s = centered;
  if (attrs.causal_mask || attrs.causal_mask_bottom_right)
    s = causal_mask(lowering, s, scores, attrs.causal_mask_bottom_right, compute);
  cudnnBackendDescriptor_t p = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_EXP), compute, s, nullptr, nullptr, p);

  // dV = Pᵀ·dO.
  cudnnBackendDescriptor_t p_t = lowering.virtual_tensor(scores_t, scores_t_strides, io);
  add_reshape(lowering, p, p_t, "Pᵀ");
  matmul_into(lowering, compute, p_t, do_desc, node.outputs[2], {b, h_q, s_kv, d_v}, io);

  // dS = (dO·Vᵀ - softmax_sum) * P * scale.
  cudnnBackendDescriptor_t dp = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, do_desc, vt, dp);
  cudnnBackendDescriptor_t dp_centered = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), compute, dp, softmax_sum, nullptr,
                dp_centered);
  cudnnBackendDescriptor_t dp_p = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, dp_centered, p, nullptr, dp_p);
  cudnnBackendDescriptor_t ds = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, dp_p, scale, nullptr, ds);

  // dK = dSᵀ·Q.
  cudnnBackendDescriptor_t ds_t = lowering.virtual_tensor(scores_t, scores_t_strides, io);
  add_reshape(lowering, ds, ds_t, "dSᵀ");
  matmul_into(lowering, compute, ds_t, q_desc, node.outputs[1], {b, h_q, s_kv, d}, io);

  // dQ = dS·K, K being Kᵀ reshaped back (K's own strides).
  cudnnBackendDescriptor_t k_back = lowering.virtual_tensor(k.dims, k.strides, io);
  add_reshape(lowering, kt, k_back, "K from Kᵀ");
  if (accumulate_dq) {
    cudnnBackendDescriptor_t dq_accum =
        lowering.workspace_tensor({b, h_q, s_q, d}, CUDNNFE_DTYPE_FLOAT, "the dQ accumulator");
    add_matmul(lowering, compute, ds, k_back, dq_accum);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_IDENTITY), compute, dq_accum, nullptr, nullptr,
                  lowering.tensor(node.outputs[0]));
  } else {
    add_matmul(lowering, compute, ds, k_back, lowering.tensor(node.outputs[0]));
  }
}

}  // namespace cudnnfe::backend
