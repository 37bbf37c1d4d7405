// Softmax over the last dimension as the composite cuDNN recognizes inside
// attention:
//
//   max = REDUCTION MAX(x) -> x - max -> EXP -> sum = REDUCTION ADD ->
//   y = exp / sum, and with stats: stats = max + LOG(sum) (log-sum-exp).
//
// Per-row intermediates are FLOAT [..., 1]. Whether an engine runs this
// graph on its own (outside attention) is cuDNN's call: a refusal comes back
// as NOT_SUPPORTED with cuDNN's reason.
#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

PointwiseAttrs mode(cudnnfe_pointwise_mode_t m) {
  PointwiseAttrs attrs;
  attrs.mode = m;
  return attrs;
}

}  // namespace

void lower_softmax(Lowering &lowering, const Node &node) {
  const Graph &graph = lowering.graph();
  const Tensor &x = graph.tensor(node.inputs[Softmax::kX]);
  const cudnnDataType_t compute = to_cudnn(node.compute_dtype);
  constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;
  // Intermediates take the rank the lowering gives x (at least 3, padded
  // with leading ones).
  std::vector<int64_t> dims = x.dims;
  while (dims.size() < 3) dims.insert(dims.begin(), 1);
  std::vector<int64_t> per_row = dims;
  per_row.back() = 1;

  cudnnBackendDescriptor_t in = lowering.tensor(x.uid);
  cudnnBackendDescriptor_t max = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_MAX, compute, false, in, max);
  cudnnBackendDescriptor_t centered = lowering.virtual_tensor(dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_SUB), compute, in, max, nullptr, centered);
  cudnnBackendDescriptor_t exp = lowering.virtual_tensor(dims, kFloat);
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_EXP), compute, centered, nullptr, nullptr, exp);
  cudnnBackendDescriptor_t sum = lowering.virtual_tensor(per_row, kFloat);
  add_reduction(lowering, CUDNNFE_REDUCTION_ADD, compute, false, exp, sum);
  if (node.outputs[Softmax::kStats] != 0) {
    cudnnBackendDescriptor_t log_sum = lowering.virtual_tensor(per_row, kFloat);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_LOG), compute, sum, nullptr, nullptr, log_sum);
    add_pointwise(lowering, mode(CUDNNFE_POINTWISE_ADD), compute, max, log_sum, nullptr,
                  lowering.tensor(node.outputs[Softmax::kStats]));
  }
  add_pointwise(lowering, mode(CUDNNFE_POINTWISE_DIV), compute, exp, sum, nullptr,
                lowering.tensor(node.outputs[Softmax::kY]));
}

}  // namespace cudnnfe::backend
