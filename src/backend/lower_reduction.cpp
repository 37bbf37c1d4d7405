// Reduction: a reduction descriptor (operator, math type, determinism) and
// the operation; the reduced dims are those where y has 1 and x does not.
#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

cudnnReduceTensorOp_t to_cudnn_op(cudnnfe_reduction_mode_t mode) {
  switch (mode) {
    case CUDNNFE_REDUCTION_ADD: return CUDNN_REDUCE_TENSOR_ADD;
    case CUDNNFE_REDUCTION_MUL: return CUDNN_REDUCE_TENSOR_MUL;
    case CUDNNFE_REDUCTION_MIN: return CUDNN_REDUCE_TENSOR_MIN;
    case CUDNNFE_REDUCTION_MAX: return CUDNN_REDUCE_TENSOR_MAX;
    case CUDNNFE_REDUCTION_AMAX: return CUDNN_REDUCE_TENSOR_AMAX;
    case CUDNNFE_REDUCTION_AVG: return CUDNN_REDUCE_TENSOR_AVG;
    case CUDNNFE_REDUCTION_NORM1: return CUDNN_REDUCE_TENSOR_NORM1;
    case CUDNNFE_REDUCTION_NORM2: return CUDNN_REDUCE_TENSOR_NORM2;
    case CUDNNFE_REDUCTION_MUL_NO_ZEROS: return CUDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    default:
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "reduction mode ", mode, " has no cuDNN equivalent");
  }
}

// The determinism attribute appeared in cuDNN 9.11.
constexpr size_t kDeterministicSince = 91100;

}  // namespace

void add_reduction(Lowering &lowering, cudnnfe_reduction_mode_t mode, cudnnDataType_t compute,
                   bool deterministic, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
  Descriptor desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  desc.set_reduction_op(CUDNN_ATTR_REDUCTION_OPERATOR, to_cudnn_op(mode));
  desc.set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, compute);
  if (deterministic) {
    if (lowering.cudnn_version() < kDeterministicSince)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "deterministic reductions need cuDNN 9.11 or newer");
    desc.set_bool(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, true);
  }
  lowering.finalize(desc);
  const Descriptor &kept = lowering.keep(std::move(desc));
  Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, &x, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, &y, 1);
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, kept);
  lowering.add_operation(std::move(op));
}

void lower_reduction(Lowering &lowering, const Node &node) {
  const ReductionAttrs &attrs = node.as<ReductionAttrs>();
  add_reduction(lowering, attrs.mode, to_cudnn(node.compute_dtype), attrs.deterministic,
                lowering.tensor(node.inputs[Reduction::kX]),
                lowering.tensor(node.outputs[Reduction::kY]));
}

}  // namespace cudnnfe::backend
