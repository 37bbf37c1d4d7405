// Layer norm and RMS norm, forward and backward: shape rules. The scale's
// dims choose the groups (ops/norm_shapes.h): statistics per index of the
// dims where the scale is 1, over the dims where it is not; scale and bias
// broadcast over the dims where they are 1.
#include <cmath>

#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/norm_shapes.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

void check_attrs(const Node &node, const NormAttrs &attrs) {
  if (!(attrs.epsilon >= 0) || !std::isfinite(attrs.epsilon))
    fail_graph(Graph::label(node), ": epsilon is ", attrs.epsilon, "; it must be finite and >= 0");
  if (attrs.phase != CUDNNFE_NORM_PHASE_TRAINING && attrs.phase != CUDNNFE_NORM_PHASE_INFERENCE)
    fail_graph(Graph::label(node), ": unknown phase ", attrs.phase);
}

// x's dims with the reduced ones set to 1.
std::vector<int64_t> stats_dims(const Node &node, const Tensor &x, const Tensor &scale) {
  return keep_dims(x.dims, ~norm_groups(node.kind, x.dims, scale.dims).reduced);
}

// layernorm and rmsnorm: layernorm's ports (rmsnorm's bias is optional and
// its one statistic, inv_rms, is at mean's port).
void infer_forward(Graph &graph, Node &node) {
  using namespace LayerNorm;
  static_assert(same_port(kBias, RmsNorm::kBias) && same_port(kMean, RmsNorm::kInvRms));
  const Tensor &x = required_input(graph, node, kX);
  const Tensor &scale = required_input(graph, node, kScale);
  require_norm_param(node, kScale, scale, x);
  if (node.kind == OpKind::kLayerNorm || node.inputs[kBias] != 0)
    require_norm_param(node, kBias, required_input(graph, node, kBias), x);
  const std::vector<int64_t> stats = stats_dims(node, x, scale);
  set_norm_output(graph, node, kY, x.dims, x.strides, false);
  for (size_t port = kMean; port < node.outputs.size(); ++port)
    set_norm_output(graph, node, port, stats, strides_like(stats, x.dims, x.strides), true);
}

// layernorm_backward's ports; rmsnorm_backward's statistic (inv_rms) is at
// mean's port and it has no inv_variance.
void infer_backward(Graph &graph, Node &node) {
  using namespace LayerNormBackward;
  static_assert(same_port(kScale, RmsNormBackward::kScale) &&
                same_port(kMean, RmsNormBackward::kInvRms) &&
                same_port(kDbias, RmsNormBackward::kDbias));
  const Tensor &dy = required_input(graph, node, kDy);
  const Tensor &x = required_input(graph, node, kX);
  require_norm_shape(node, kDy, dy, x.dims, "x's shape");
  const Tensor &scale = required_input(graph, node, kScale);
  require_norm_param(node, kScale, scale, x);
  const std::vector<int64_t> stats = stats_dims(node, x, scale);
  for (size_t port = kMean; port < node.inputs.size(); ++port)
    require_norm_shape(node, port, required_input(graph, node, port), stats,
                       "the forward's statistics: x's dims, 1 where the scale is not 1");
  set_norm_output(graph, node, kDx, x.dims, x.strides, false);
  set_norm_output(graph, node, kDscale, scale.dims, scale.strides, false);
  set_norm_output(graph, node, kDbias, scale.dims, scale.strides, false);
  // Parameter gradients take the parameters' type (cuDNN's norm backward
  // writes them so), not the graph's io type.
  for (size_t port : {kDscale, kDbias}) {
    if (!node.outputs[port]) continue;
    Tensor &grad = graph.tensor(node.outputs[port]);
    if (grad.dtype == CUDNNFE_DTYPE_NOT_SET) grad.dtype = scale.dtype;
  }
}

}  // namespace

void infer_norm(Graph &graph, Node &node) {
  check_attrs(node, node.as<NormAttrs>());
  if (node.kind == OpKind::kLayerNorm || node.kind == OpKind::kRmsNorm) {
    check_norm_scalar_inputs(graph, node);
    infer_forward(graph, node);
  } else {
    infer_backward(graph, node);
  }
}

}  // namespace cudnnfe
