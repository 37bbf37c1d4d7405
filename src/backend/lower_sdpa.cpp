// Scaled dot-product attention through the composite graph that cuDNN
// recognizes and fuses into its flash-attention engines:
//
//   S = Q·Kᵀ -> S·scale -> [+ bias] -> [causal mask] -> softmax (with
//   stats = max + log(sum exp)) -> P (cast to the I/O type) -> O = P·V.
//
// Kᵀ is K's descriptor with its last two dims and strides swapped. GQA/MQA
// need nothing extra: the matmuls see h_kv heads on K and V against h_q on
// Q and S, and the engine maps each query head to its key/value head.
#include <limits>

#include "backend/lowering.h"
#include "ops/ops.h"

namespace cudnnfe::backend {
namespace {

constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;

PointwiseAttrs mode(cudnnfe_pointwise_mode_t m, int axis = 0) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  attrs.axis = axis;
  return attrs;
}

// The value masked scores take: -inf from cuDNN 9.10 on (its kernels
// special-case it), the lowest float before, as cudnn-frontend does.
double masked_value(size_t cudnn_version) {
  return cudnn_version >= 91000 ? -std::numeric_limits<double>::infinity()
                                : static_cast<double>(std::numeric_limits<float>::lowest());
}

// Keeps score (row i, col j) where i + shift >= j, with shift 0 for the
// top-left diagonal and s_kv - s_q for the bottom-right one.
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

}  // namespace

void lower_sdpa(Lowering &lowering, const Node &node) {
  const Graph &graph = lowering.graph();
  const SdpaAttrs &attrs = node.as<SdpaAttrs>();
  const Tensor &q = graph.tensor(node.inputs[0]);
  const Tensor &k = graph.tensor(node.inputs[1]);
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2];
  const int64_t h_kv = k.dims[1], s_kv = k.dims[2], d = k.dims[3];
  const cudnnDataType_t compute = to_cudnn(node.compute_dtype);
  const std::vector<int64_t> scores = {b, h_q, s_q, s_kv};
  const std::vector<int64_t> per_row = {b, h_q, s_q, 1};

  // S = Q·Kᵀ in float.
  cudnnBackendDescriptor_t kt = lowering.tensor_view(
      k.uid, {b, h_kv, d, s_kv}, {k.strides[0], k.strides[1], k.strides[3], k.strides[2]});
  cudnnBackendDescriptor_t s = lowering.virtual_tensor(scores, kFloat);
  add_matmul(lowering, compute, lowering.tensor(q.uid), kt, s);

  cudnnBackendDescriptor_t scaled = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_MUL), compute, s,
                lowering.scalar(effective_attn_scale(graph, node), CUDNNFE_DTYPE_FLOAT, 4), nullptr,
                scaled);
  s = scaled;

  if (node.inputs[3] != 0) {
    cudnnBackendDescriptor_t biased = lowering.virtual_tensor(scores, kFloat);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_ADD), compute, s,
                  lowering.tensor(node.inputs[3]), nullptr, biased);
    s = biased;
  }
  if (attrs.causal_mask || attrs.causal_mask_bottom_right)
    s = causal_mask(lowering, s, scores, attrs.causal_mask_bottom_right, compute);

  // Softmax, keeping max + log(sum) as the stats backward needs.
  cudnnBackendDescriptor_t max = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_MAX, compute, false, s, max);
  cudnnBackendDescriptor_t centered = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), compute, s, max, nullptr, centered);
  cudnnBackendDescriptor_t exp = lowering.virtual_tensor(scores, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_EXP), compute, centered, nullptr, nullptr, exp);
  cudnnBackendDescriptor_t sum = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, exp, sum);
  cudnnBackendDescriptor_t log_sum = lowering.virtual_tensor(per_row, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_LOG), compute, sum, nullptr, nullptr, log_sum);
  cudnnBackendDescriptor_t stats = node.outputs[1] != 0 ? lowering.tensor(node.outputs[1])
                                                        : lowering.virtual_tensor(per_row, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_ADD), compute, max, log_sum, nullptr, stats);
  // P in the I/O type: the second matmul's A operand must match V's type.
  cudnnBackendDescriptor_t p = lowering.virtual_tensor(scores, to_cudnn(q.dtype));
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_DIV), compute, exp, sum, nullptr, p);

  add_matmul(lowering, compute, p, lowering.tensor(node.inputs[2]),
             lowering.tensor(node.outputs[0]));
}

}  // namespace cudnnfe::backend
