// genstats: cuDNN's CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR in mode
// SUM_SQSUM, with x's data type as its math precision (as cudnn-frontend
// sets it).
#include "backend/attribute_util.h"
#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "graph/graph.h"

namespace cudnnfe::backend {

void lower_genstats(Lowering &lowering, const Node &node) {
  cudnnBackendDescriptor_t x = lowering.tensor(node.inputs[0]);
  cudnnBackendDescriptor_t sum = lowering.tensor(node.outputs[0]);
  cudnnBackendDescriptor_t sq_sum = lowering.tensor(node.outputs[1]);
  Descriptor op(CUDNN_BACKEND_OPERATION_GEN_STATS_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_XDESC, &x, 1);
  set_attribute(op, CUDNN_ATTR_OPERATION_GENSTATS_MODE, CUDNN_TYPE_GENSTATS_MODE,
                CUDNN_GENSTATS_SUM_SQSUM, "the statistics mode");
  op.set_data_type(CUDNN_ATTR_OPERATION_GENSTATS_MATH_PREC,
                   to_cudnn(lowering.graph().tensor(node.inputs[0]).dtype));
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_SUMDESC, &sum, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_GENSTATS_SQSUMDESC, &sq_sum, 1);
  add_operation_named(lowering, std::move(op), "cuDNN's genstats operation");
}

}  // namespace cudnnfe::backend
