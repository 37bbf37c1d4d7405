// Batch norm, instance norm and adaptive layer norm (forward, batch norm
// inference, backward): shape rules. These norms are described by which of
// x's dims the statistics reduce over and which the parameters span
// (ops/norm_shapes.h):
//   batchnorm     x [N, C, spatial...]  statistics [1, C, 1...]  params [1, C, 1...]
//   instancenorm  x [N, C, spatial...]  statistics [N, C, 1...]  params [1, C, 1...]
//   adalayernorm  x [B, S, feat...]     statistics [B, S, 1...]  params [B or 1, 1, feat...]
// Adaptive layer norm's groups follow its scale, as layernorm's do: every dim
// after the first where the scale is not 1 is reduced, and scale and bias
// broadcast over the dims where they are 1.
#include <cmath>

#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/norm_shapes.h"
#include "ops/ops.h"

namespace cudnnfe {

namespace {

bool is_forward(OpKind kind) {
  return kind == OpKind::kBatchNorm || kind == OpKind::kInstanceNorm ||
         kind == OpKind::kAdaLayerNorm;
}

bool is_backward(OpKind kind) {
  return kind == OpKind::kBatchNormBackward || kind == OpKind::kInstanceNormBackward ||
         kind == OpKind::kAdaLayerNormBackward;
}

// What batch and instance norm's tensors are, for messages.
const char *stats_rule(OpKind kind) {
  switch (kind) {
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward: return "[N, C, 1, ...]: one per (n, c)";
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward:
      return "x's dims, 1 where adalayernorm's scale is not 1 (dim 0 kept)";
    default: return "[1, C, 1, ...]: one per channel";
  }
}

bool is_ada(OpKind kind) {
  return kind == OpKind::kAdaLayerNorm || kind == OpKind::kAdaLayerNormBackward;
}

void check_attrs(const Node &node, const NormAttrs &a) {
  const std::string label = Graph::label(node);
  if (!(a.epsilon >= 0) || !std::isfinite(a.epsilon))
    fail_graph(label, ": epsilon is ", a.epsilon, "; it must be finite and >= 0");
  if (a.phase != CUDNNFE_NORM_PHASE_TRAINING && a.phase != CUDNNFE_NORM_PHASE_INFERENCE)
    fail_graph(label, ": unknown phase ", a.phase);
  if (node.kind == OpKind::kBatchNorm) {
    if (a.phase != CUDNNFE_NORM_PHASE_TRAINING)
      fail_graph(label,
                 ": phase is INFERENCE, but batch norm inference reads the statistics instead of "
                 "computing them: use cudnnfe_graph_add_batchnorm_inference (mean, inv_variance "
                 "as inputs)");
    if (!(a.momentum >= 0 && a.momentum <= 1))
      fail_graph(label, ": momentum is ", a.momentum,
                 "; it must be in [0, 1] (the weight of this batch in the running statistics)");
  }
  const bool ada = node.kind == OpKind::kAdaLayerNorm || node.kind == OpKind::kAdaLayerNormBackward;
  if (a.zero_centered_gamma && !ada)
    fail_graph(label,
               ": zero_centered_gamma is offered by layernorm, rmsnorm and adalayernorm, not by ",
               op_kind_name(node.kind));
}

// x; batch and instance norm need its channel dim (dim 1).
const Tensor &checked_x(Graph &graph, const Node &node, size_t port) {
  const Tensor &x = required_input(graph, node, port);
  const size_t need = is_ada(node.kind) ? 1 : 2;
  if (x.dims.size() < need || x.dims.size() > 32)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", x.name, "\" has ",
               x.dims.size(), x.dims.size() == 1 ? " dim " : " dims ", dims_string(x.dims), "; ",
               op_kind_name(node.kind), " needs at least ", need, ": [N, C, spatial...]");
  return x;
}

// Scale (and bias) of batch and instance norm: [1, C, 1, ...]; of adaptive
// layer norm: x's dims or 1 each. Returns the groups they give.
// No bias port (the backward's): port 0 is x or dy, never a parameter.
constexpr size_t kNoBias = 0;

NormGroups check_params(Graph &graph, const Node &node, const Tensor &x, size_t scale_port,
                        size_t bias_port) {
  const Tensor &scale = required_input(graph, node, scale_port);
  const NormGroups groups = norm_groups(node.kind, x.dims, scale.dims);
  for (size_t port : {scale_port, bias_port}) {
    if (port == kNoBias) continue;
    const Tensor &t = required_input(graph, node, port);
    if (is_ada(node.kind))
      require_norm_param(node, port, t, x);
    else
      require_norm_shape(node, port, t, keep_dims(x.dims, groups.param),
                         "[1, C, 1, ...]: one value per channel");
  }
  return groups;
}

// batchnorm, instancenorm, adalayernorm: batchnorm's ports (the others'
// are the same up to bias and their statistics).
void infer_forward(Graph &graph, Node &node) {
  using namespace BatchNorm;
  static_assert(same_port(kBias, InstanceNorm::kBias, AdaLayerNorm::kBias) &&
                same_port(kInvVariance, InstanceNorm::kInvVariance, AdaLayerNorm::kInvVariance));
  check_norm_scalar_inputs(graph, node);
  const Tensor &x = checked_x(graph, node, kX);
  const NormGroups groups = check_params(graph, node, x, kScale, kBias);
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  const std::vector<int64_t> stats_layout = strides_like(stats, x.dims, x.strides);
  if (node.kind == OpKind::kBatchNorm) {
    const bool has_mean = node.inputs[kPrevRunningMean] != 0,
               has_var = node.inputs[kPrevRunningVar] != 0;
    if (has_mean != has_var)
      fail_graph(Graph::label(node), ": ", has_mean ? "prev_running_mean" : "prev_running_var",
                 " is given but ", has_mean ? "prev_running_var" : "prev_running_mean",
                 " is missing: running statistics need both (or neither)");
    if (has_mean) {
      for (size_t port : {kPrevRunningMean, kPrevRunningVar})
        require_norm_shape(node, port, graph.tensor(node.inputs[port]), stats,
                           stats_rule(node.kind));
      int64_t m = 1;
      for (size_t i = 0; i < x.dims.size(); ++i)
        if (groups.reduced & (1u << i)) m *= x.dims[i];
      if (m < 2)
        fail_graph(Graph::label(node), ": x \"", x.name, "\" ", dims_string(x.dims),
                   " has one value per channel; the running variance uses the unbiased batch "
                   "variance, which divides by N * spatial - 1 = 0");
    }
  }
  set_norm_output(graph, node, kY, x.dims, x.strides, false);
  for (size_t port = kMean; port < node.outputs.size(); ++port)
    set_norm_output(graph, node, port, stats, stats_layout, true);
}

void infer_inference(Graph &graph, Node &node) {
  using namespace BatchNormInference;
  const Tensor &x = checked_x(graph, node, kX);
  const NormGroups groups = check_params(graph, node, x, kScale, kBias);
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  for (size_t port : {kMean, kInvVariance})
    require_norm_shape(node, port, required_input(graph, node, port), stats,
                       "the statistics to apply, [1, C, 1, ...]");
  set_norm_output(graph, node, kY, x.dims, x.strides, false);
}

// The three backward kinds: batchnorm_backward's ports.
void infer_backward(Graph &graph, Node &node) {
  using namespace BatchNormBackward;
  static_assert(same_port(kDbias, InstanceNormBackward::kDbias, AdaLayerNormBackward::kDbias) &&
                same_port(kInvVariance, InstanceNormBackward::kInvVariance,
                          AdaLayerNormBackward::kInvVariance));
  const Tensor &dy = required_input(graph, node, kDy);
  const Tensor &x = checked_x(graph, node, kX);
  require_norm_shape(node, kDy, dy, x.dims, "x's shape");
  const NormGroups groups = check_params(graph, node, x, kScale, kNoBias);
  const Tensor &scale = graph.tensor(node.inputs[kScale]);
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  for (size_t port : {kMean, kInvVariance})
    require_norm_shape(node, port, required_input(graph, node, port), stats,
                       cat("the forward's statistics ", stats_rule(node.kind)).c_str());
  set_norm_output(graph, node, kDx, x.dims, x.strides, false);
  set_norm_output(graph, node, kDscale, scale.dims, scale.strides, false);
  set_norm_output(graph, node, kDbias, scale.dims, scale.strides, false);
  // Parameter gradients take the parameters' type (cuDNN writes them so).
  for (size_t port : {kDscale, kDbias}) {
    Tensor &grad = graph.tensor(node.outputs[port]);
    if (grad.dtype == CUDNNFE_DTYPE_NOT_SET) grad.dtype = scale.dtype;
  }
}

}  // namespace

void infer_grouped_norm(Graph &graph, Node &node) {
  check_attrs(node, node.as<NormAttrs>());
  if (is_forward(node.kind))
    infer_forward(graph, node);
  else if (is_backward(node.kind))
    infer_backward(graph, node);
  else
    infer_inference(graph, node);
}

}  // namespace cudnnfe
