// Layer norm and RMS norm, forward and backward: shape rules. Statistics are
// per index of dim 0, over all other dims.
#include <cmath>

#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

std::vector<int64_t> stats_dims(const Tensor &x) {
  std::vector<int64_t> dims(x.dims.size(), 1);
  dims[0] = x.dims[0];
  return dims;
}

std::vector<int64_t> param_dims(const Tensor &x) {
  std::vector<int64_t> dims = x.dims;
  dims[0] = 1;
  return dims;
}

void check_attrs(const Node &node, const NormAttrs &attrs) {
  if (!(attrs.epsilon >= 0) || !std::isfinite(attrs.epsilon))
    fail_graph(Graph::label(node), ": epsilon is ", attrs.epsilon, "; it must be finite and >= 0");
  if (attrs.phase != CUDNNFE_NORM_PHASE_TRAINING && attrs.phase != CUDNNFE_NORM_PHASE_INFERENCE)
    fail_graph(Graph::label(node), ": unknown phase ", attrs.phase);
}

void infer_forward(Graph &graph, Node &node, const NormAttrs &attrs) {
  const Tensor &x = required_input(graph, node, 0);
  if (x.dims.size() < 2)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" has ", x.dims.size(), " dim ",
               dims_string(x.dims), "; normalization needs at least 2 [N, features...]");
  require_norm_shape(node, 1, required_input(graph, node, 1), param_dims(x), "[1, x's other dims]");
  if (node.kind == OpKind::kLayerNorm || node.inputs[2] != 0)
    require_norm_shape(node, 2, required_input(graph, node, 2), param_dims(x),
                       "[1, x's other dims]");
  set_norm_output(graph, node, 0, x.dims, dimension_order(x), false);
  for (size_t port = 1; port < node.outputs.size(); ++port)
    set_norm_output(graph, node, port, stats_dims(x), row_major_order(x.dims.size()), true);
  (void)attrs;
}

void infer_backward(Graph &graph, Node &node) {
  const Tensor &dy = required_input(graph, node, 0);
  const Tensor &x = required_input(graph, node, 1);
  if (x.dims.size() < 2)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" has ", x.dims.size(), " dim ",
               dims_string(x.dims), "; normalization needs at least 2 [N, features...]");
  require_norm_shape(node, 0, dy, x.dims, "x's shape");
  const Tensor &scale = required_input(graph, node, 2);
  require_norm_shape(node, 2, scale, param_dims(x), "[1, x's other dims]");
  for (size_t port = 3; port < node.inputs.size(); ++port)
    require_norm_shape(node, port, required_input(graph, node, port), stats_dims(x),
                       "the forward's statistics [N, 1, ...]");
  set_norm_output(graph, node, 0, x.dims, dimension_order(x), false);
  set_norm_output(graph, node, 1, scale.dims, dimension_order(scale), false);
  set_norm_output(graph, node, 2, scale.dims, dimension_order(scale), false);
  // Parameter gradients take the parameters' type (cuDNN's norm backward
  // writes them so), not the graph's io type.
  for (size_t port = 1; port < 3; ++port) {
    if (!node.outputs[port]) continue;
    Tensor &grad = graph.tensor(node.outputs[port]);
    if (grad.dtype == CUDNNFE_DTYPE_NOT_SET) grad.dtype = scale.dtype;
  }
}

}  // namespace

void infer_norm(Graph &graph, Node &node) {
  const NormAttrs &attrs = node.as<NormAttrs>();
  check_attrs(node, attrs);
  if (node.kind == OpKind::kLayerNorm || node.kind == OpKind::kRmsNorm) {
    check_norm_scalar_inputs(graph, node);
    infer_forward(graph, node, attrs);
  } else
    infer_backward(graph, node);
}

}  // namespace cudnnfe
