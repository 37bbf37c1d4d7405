// Block-scale quantize and dequantize: cuDNN's
// CUDNN_BACKEND_OPERATION_BLOCK_SCALE_(DE)QUANTIZE_DESCRIPTOR. cuDNN takes
// only the block size: the blocked axis is implied by the scale tensor's
// dims, the layout by the tensors' strides.
#include "backend/attribute_util.h"
#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "core/error.h"
#include "graph/graph.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

constexpr size_t kBlockScaleSince = 90700;

void require_version(Lowering &lowering, const Node &node, const char *descriptor) {
  if (lowering.cudnn_version() < kBlockScaleSince)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, op_kind_name(node.kind), " needs cuDNN 9.7 or newer (",
         descriptor, "); the loaded cuDNN is ",
         plan::cudnn_version_string(static_cast<int64_t>(lowering.cudnn_version())));
}

}  // namespace

void lower_block_scale(Lowering &lowering, const Node &node) {
  const int32_t block_size = static_cast<int32_t>(node.as<BlockScaleAttrs>().block_size);
  const cudnnDataType_t math = CUDNN_DATA_FLOAT;
  if (node.kind == OpKind::kBlockScaleQuantize) {
    require_version(lowering, node, "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR");
    using namespace BlockScaleQuantize;
    cudnnBackendDescriptor_t x = lowering.tensor(node.inputs[kX]);
    cudnnBackendDescriptor_t y = lowering.tensor(node.outputs[kY]);
    cudnnBackendDescriptor_t scale = lowering.tensor(node.outputs[kScale]);
    Descriptor op(CUDNN_BACKEND_OPERATION_BLOCK_SCALE_QUANTIZE_DESCRIPTOR);
    op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_XDESC, &x, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_YDESC, &y, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_SCALE_DESC, &scale, 1);
    op.set_data_type(CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_MATH_PREC, math);
    set_attribute(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_QUANTIZE_BLOCK_SIZE, CUDNN_TYPE_INT32,
                  block_size, "the block size");
    add_operation_named(lowering, std::move(op), "cuDNN's block scale quantize operation");
    return;
  }
  require_version(lowering, node, "CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR");
  using namespace BlockScaleDequantize;
  cudnnBackendDescriptor_t x = lowering.tensor(node.inputs[kX]);
  cudnnBackendDescriptor_t scale = lowering.tensor(node.inputs[kScale]);
  cudnnBackendDescriptor_t y = lowering.tensor(node.outputs[kY]);
  Descriptor op(CUDNN_BACKEND_OPERATION_BLOCK_SCALE_DEQUANTIZE_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_XDESC, &x, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_SCALE_DESC, &scale, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_YDESC, &y, 1);
  op.set_data_type(CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_MATH_PREC, math);
  set_attribute(op, CUDNN_ATTR_OPERATION_BLOCK_SCALE_DEQUANTIZE_BLOCK_SIZE, CUDNN_TYPE_INT32,
                block_size, "the block size");
  add_operation_named(lowering, std::move(op), "cuDNN's block scale dequantize operation");
}

}  // namespace cudnnfe::backend
