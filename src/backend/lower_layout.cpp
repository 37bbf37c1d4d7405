// Reshape, transpose, slice and concatenate.
//
// cuDNN 9.19's reshape operation (CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR)
// is a view: y is the same memory as x described by other dims and strides,
// and no data moves (cuDNN 9.22 adds a LOGICAL mode that this lowering does
// not use yet). So a reshape lowers when x's layout can be viewed with y's
// dims in row-major order (always for packed row-major x), and a transpose
// as a view whose strides are x's strides permuted:
//   - a virtual y of a graph input (or of a slice of one) becomes a pointer
//     view like a slice (no operation; cuDNN 9.14/9.19 run no graph with a
//     reshape operation outside their fused attention patterns);
//   - otherwise the reshape operation, with a virtual y described by the
//     view strides and a bound y required to have them already.
//
// A slice is no operation at all: its output is a non-virtual tensor at an
// offset into its graph input's buffer (Lowering::pointer_view,
// PlanSet::views).
//
// Concatenate lowers to CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR, which
// cuDNN 9.7 introduced; older libraries are refused by name.
#include <algorithm>

#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "core/error.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

constexpr size_t kConcatSince = 90700;

// Strides that show x's memory (dims `from`, strides `strides`) as `to`
// with the row-major element order kept; false when no strides can (the
// reshape would need to move data). Dims of x are grouped into runs that
// are contiguous in memory; each run must be split into whole dims of `to`.
bool view_strides(const std::vector<int64_t> &from, const std::vector<int64_t> &strides,
                  const std::vector<int64_t> &to, std::vector<int64_t> *out) {
  out->assign(to.size(), 0);
  int target = static_cast<int>(to.size()) - 1;
  int64_t run_elements = 1, placed = 1;
  int64_t base = strides.back();
  for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
    run_elements *= from[d];
    // The run ends at dim d unless dim d - 1 continues it in memory.
    const bool run_ends = d == 0 || (from[d - 1] != 1 && strides[d - 1] != run_elements * base);
    if (!run_ends) continue;
    while (target >= 0 && (placed < run_elements || to[target] == 1)) {
      (*out)[target] = placed * base;
      placed *= to[target];
      --target;
    }
    if (placed != run_elements) return false;
    if (d > 0) {
      base = strides[d - 1];
      run_elements = 1;
      placed = 1;
    }
  }
  // Trailing dims of size 1 that no run claimed.
  while (target >= 0 && to[target] == 1) (*out)[target--] = placed * base;
  return target < 0;
}

// A reshape or transpose node (their ports are reshape's).
void add_reshape(Lowering &lowering, const Node &node, const std::vector<int64_t> &view) {
  static_assert(same_port(Reshape::kX, Transpose::kX) && same_port(Reshape::kY, Transpose::kY));
  const Graph &graph = lowering.graph();
  const Tensor &x = graph.tensor(node.inputs[Reshape::kX]);
  const Tensor &y = graph.tensor(node.outputs[Reshape::kY]);
  // A virtual view of a graph input (or of a slice of one) needs no
  // operation: cuDNN reads it as a pointer view, like a slice.
  const bool x_is_input = x.view_of != 0 || (x.producer < 0 && x.is_bound());
  if (y.is_virtual && x_is_input) {
    lowering.pointer_view(y.uid, x.view_of != 0 ? x.view_of : x.uid, x.view_offset, view);
    return;
  }
  cudnnBackendDescriptor_t in = lowering.tensor(x.uid);
  cudnnBackendDescriptor_t out;
  if (y.is_virtual) {
    out = lowering.tensor_with_strides(y.uid, view);
  } else {
    if (!same_layout(y.dims, y.strides, view))
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "output \"", y.name, "\" has strides ",
           dims_string(y.strides), " but cuDNN's reshape operation only views x \"", x.name,
           "\"'s memory, which gives strides ", dims_string(view),
           "; set the output's strides to those (or leave the output virtual)");
    out = lowering.tensor(y.uid);
  }
  Descriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, &in, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, &out, 1);
  add_operation_named(lowering, std::move(op), "cuDNN's reshape operation");
}

void lower_reshape(Lowering &lowering, const Node &node) {
  const Tensor &x = lowering.graph().tensor(node.inputs[Reshape::kX]);
  const Tensor &y = lowering.graph().tensor(node.outputs[Reshape::kY]);
  std::vector<int64_t> view;
  if (!view_strides(x.dims, x.strides, y.dims, &view))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "x \"", x.name, "\" ", dims_string(x.dims), " with strides ",
         dims_string(x.strides), " cannot be viewed as ", dims_string(y.dims),
         " in row-major order, and cuDNN's reshape operation moves no data; give x a packed "
         "row-major layout (or use the CPU reference)");
  add_reshape(lowering, node, view);
}

void lower_transpose(Lowering &lowering, const Node &node) {
  const Tensor &x = lowering.graph().tensor(node.inputs[Transpose::kX]);
  const std::vector<int64_t> &perm = node.as<TransposeAttrs>().permutation;
  std::vector<int64_t> view(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) view[i] = x.strides[static_cast<size_t>(perm[i])];
  add_reshape(lowering, node, view);
}

void lower_slice(Lowering &lowering, const Node &node) {
  // Nothing to add: consumers describe the view (Lowering::tensor), which
  // also refuses slices of tensors that are not graph inputs.
  lowering.tensor(node.outputs[Slice::kY]);
}

void lower_concatenate(Lowering &lowering, const Node &node) {
  if (lowering.cudnn_version() < kConcatSince)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "concatenate needs cuDNN 9.7 or newer ",
         "(CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR); the loaded cuDNN is ",
         plan::cudnn_version_string(static_cast<int64_t>(lowering.cudnn_version())));
  const Tensor &y = lowering.graph().tensor(node.outputs[Concatenate::kY]);
  std::vector<cudnnBackendDescriptor_t> inputs;
  for (int64_t uid : node.inputs)
    if (uid != 0) inputs.push_back(lowering.tensor(uid));
  cudnnBackendDescriptor_t out = lowering.tensor(y.uid);
  // The lowering pads tensors of fewer than 3 dims with leading ones.
  const int64_t pad = std::max<int64_t>(0, 3 - static_cast<int64_t>(y.dims.size()));
  Descriptor op(CUDNN_BACKEND_OPERATION_CONCAT_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_CONCAT_INPUT_DESCS, inputs.data(),
                     static_cast<int64_t>(inputs.size()));
  op.set_descriptors(CUDNN_ATTR_OPERATION_CONCAT_OUTPUT_DESC, &out, 1);
  op.set_int64(CUDNN_ATTR_OPERATION_CONCAT_AXIS, node.as<ConcatAttrs>().axis + pad);
  add_operation_named(lowering, std::move(op), "cuDNN's concatenate operation");
}

}  // namespace

void lower_layout(Lowering &lowering, const Node &node) {
  switch (node.kind) {
    case OpKind::kReshape: return lower_reshape(lowering, node);
    case OpKind::kTranspose: return lower_transpose(lowering, node);
    case OpKind::kSlice: return lower_slice(lowering, node);
    default: return lower_concatenate(lowering, node);
  }
}

}  // namespace cudnnfe::backend
