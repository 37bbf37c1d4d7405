// moe_grouped_matmul and its backward: cuDNN's
// CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL(_BWD)_DESCRIPTOR, with the
// attributes cudnn-frontend sets (docs/moe.md). A cuDNN that cannot create
// the descriptor refuses the op with NOT_SUPPORTED; no version table here.
#include "backend/attribute_util.h"
#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "core/error.h"
#include "graph/graph.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

// The operation descriptor, or NOT_SUPPORTED when the loaded cuDNN does not
// know its type (cuDNN added the forward and the backward at different
// releases; creating it is the probe).
Descriptor make_operation(Lowering &lowering, const Node &node, cudnnBackendDescriptorType_t type,
                          const char *type_name) {
  try {
    return Descriptor(type);
  } catch (const Error &e) {
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": the loaded cuDNN ",
         plan::cudnn_version_string(static_cast<int64_t>(lowering.cudnn_version())),
         " cannot create ", type_name, " (", e.message(), "); ", op_kind_name(node.kind),
         " needs a cuDNN whose backend has it (cudnnfe was built with cuDNN ",
         plan::cudnn_version_string(CUDNN_VERSION), " headers, which define it)");
  }
}

cudnnMoeGroupedMatmulMode_t mode_of(cudnnfe_moe_grouped_matmul_mode_t mode) {
  switch (mode) {
    case CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER: return CUDNN_MOE_GROUPED_MATMUL_MODE_GATHER;
    case CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER: return CUDNN_MOE_GROUPED_MATMUL_MODE_SCATTER;
    default: return CUDNN_MOE_GROUPED_MATMUL_MODE_NONE;
  }
}

void set_tensor(Lowering &lowering, Descriptor &op, cudnnBackendAttributeName_t name, int64_t uid) {
  cudnnBackendDescriptor_t d = lowering.tensor(uid);
  op.set_descriptors(name, &d, 1);
}

void lower_forward(Lowering &lowering, const Node &node) {
  const MoeGroupedMatmulAttrs &a = node.as<MoeGroupedMatmulAttrs>();
  Descriptor op =
      make_operation(lowering, node, CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR,
                     "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_DESCRIPTOR");
  set_attribute(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MODE,
                CUDNN_TYPE_MOE_GROUPED_MATMUL_MODE, mode_of(a.mode), "the routing mode");
  op.set_data_type(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_MATH_PREC, to_cudnn(node.compute_dtype));
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_DESC, node.inputs[0]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_WEIGHT_DESC, node.inputs[1]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_FIRST_TOKEN_OFFSET_DESC,
             node.inputs[2]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_OUTPUT_DESC, node.outputs[0]);
  if (a.mode != CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE)
    set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_INDEX_DESC,
               node.inputs[3]);
  if (a.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER) {
    set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOKEN_KS_DESC, node.inputs[4]);
    set_attribute(op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_TOP_K, CUDNN_TYPE_INT32, a.top_k,
                  "top_k");
  }
  add_operation_named(lowering, std::move(op),
                      cat(Graph::label(node), ": cuDNN's MoE grouped matmul operation"));
}

void lower_backward(Lowering &lowering, const Node &node) {
  Descriptor op =
      make_operation(lowering, node, CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR,
                     "CUDNN_BACKEND_OPERATION_MOE_GROUPED_MATMUL_BWD_DESCRIPTOR");
  op.set_data_type(CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_MATH_PREC,
                   to_cudnn(node.compute_dtype));
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_TOKEN_DESC, node.inputs[1]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DWEIGHT_DESC,
             node.outputs[0]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_FIRST_TOKEN_OFFSET_DESC,
             node.inputs[2]);
  set_tensor(lowering, op, CUDNN_ATTR_OPERATION_MOE_GROUPED_MATMUL_BWD_DOUTPUT_DESC,
             node.inputs[0]);
  add_operation_named(lowering, std::move(op),
                      cat(Graph::label(node), ": cuDNN's MoE grouped matmul backward operation"));
}

}  // namespace

void lower_moe_grouped_matmul(Lowering &lowering, const Node &node) {
  if (node.kind == OpKind::kMoeGroupedMatmul) return lower_forward(lowering, node);
  lower_backward(lowering, node);
}

}  // namespace cudnnfe::backend
