// Batch norm, instance norm and adaptive layer norm (forward, batch norm
// inference, backward): shape rules. These norms are described by which of
// x's dims the statistics reduce over and which the parameters span
// (NormGroups in ops.h):
//   batchnorm     x [N, C, spatial...]  statistics [1, C, 1...]  params [1, C, 1...]
//   instancenorm  x [N, C, spatial...]  statistics [N, C, 1...]  params [1, C, 1...]
//   adalayernorm  x [B, S, feat...]     statistics [B, S, 1...]  params [B, 1, feat...]
#include <cmath>

#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/ops.h"

namespace cudnnfe {

NormGroups norm_groups(OpKind kind, size_t rank) {
  NormGroups g;
  const uint32_t all = rank >= 32 ? ~0u : (1u << rank) - 1;
  const uint32_t from2 = all & ~3u;  // dims 2.. (spatial or features)
  switch (kind) {
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward:
      g.reduced = all & ~2u;
      g.param = 2u;
      break;
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward:
      g.reduced = from2;
      g.param = 2u;
      break;
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward:
      g.reduced = from2;
      g.param = 1u | from2;
      break;
    default: break;
  }
  return g;
}

bool is_grouped_norm(OpKind kind) {
  return norm_groups(kind, 4).param != 0;
}

std::vector<int64_t> keep_dims(const std::vector<int64_t> &dims, uint32_t mask) {
  std::vector<int64_t> out(dims.size(), 1);
  for (size_t i = 0; i < dims.size() && i < 32; ++i)
    if (mask & (1u << i)) out[i] = dims[i];
  return out;
}

namespace {

bool is_forward(OpKind kind) {
  return kind == OpKind::kBatchNorm || kind == OpKind::kInstanceNorm ||
         kind == OpKind::kAdaLayerNorm;
}

bool is_backward(OpKind kind) {
  return kind == OpKind::kBatchNormBackward || kind == OpKind::kInstanceNormBackward ||
         kind == OpKind::kAdaLayerNormBackward;
}

// What each norm calls its dims, for messages.
const char *x_rule(OpKind kind) {
  switch (kind) {
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return "[B, S, features...]";
    default: return "[N, C, spatial...]";
  }
}

const char *param_rule(OpKind kind) {
  switch (kind) {
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return "[B, 1, features...]: one scale per sample";
    default: return "[1, C, 1, ...]: one value per channel";
  }
}

const char *stats_rule(OpKind kind) {
  switch (kind) {
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward: return "[N, C, 1, ...]: one per (n, c)";
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return "[B, S, 1, ...]: one per (b, s)";
    default: return "[1, C, 1, ...]: one per channel";
  }
}

size_t min_rank(OpKind kind) {
  switch (kind) {
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward: return 2;
    default: return 3;
  }
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

const Tensor &checked_x(Graph &graph, const Node &node, size_t port) {
  const Tensor &x = required_input(graph, node, port);
  const size_t need = min_rank(node.kind);
  if (x.dims.size() < need || x.dims.size() > 32)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", x.name, "\" has ",
               x.dims.size(), x.dims.size() == 1 ? " dim " : " dims ", dims_string(x.dims), "; ",
               op_kind_name(node.kind), " needs at least ", need, ": ", x_rule(node.kind));
  return x;
}

void infer_forward(Graph &graph, Node &node) {
  check_norm_scalar_inputs(graph, node);
  const Tensor &x = checked_x(graph, node, 0);
  const NormGroups groups = norm_groups(node.kind, x.dims.size());
  const std::vector<int64_t> params = keep_dims(x.dims, groups.param);
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  require_norm_shape(node, 1, required_input(graph, node, 1), params, param_rule(node.kind));
  require_norm_shape(node, 2, required_input(graph, node, 2), params, param_rule(node.kind));
  const DimOrder stats_layout = dimension_order(x);
  if (node.kind == OpKind::kBatchNorm) {
    const bool has_mean = node.inputs[3] != 0, has_var = node.inputs[4] != 0;
    if (has_mean != has_var)
      fail_graph(Graph::label(node), ": ", has_mean ? "prev_running_mean" : "prev_running_var",
                 " is given but ", has_mean ? "prev_running_var" : "prev_running_mean",
                 " is missing: running statistics need both (or neither)");
    if (has_mean) {
      for (size_t port = 3; port < 5; ++port)
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
  set_norm_output(graph, node, 0, x.dims, dimension_order(x), false);
  for (size_t port = 1; port < node.outputs.size(); ++port)
    set_norm_output(graph, node, port, stats, stats_layout, true);
}

void infer_inference(Graph &graph, Node &node) {
  const Tensor &x = checked_x(graph, node, 0);
  const NormGroups groups = norm_groups(node.kind, x.dims.size());
  const std::vector<int64_t> params = keep_dims(x.dims, groups.param);
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  require_norm_shape(node, 1, required_input(graph, node, 1), params, param_rule(node.kind));
  require_norm_shape(node, 2, required_input(graph, node, 2), params, param_rule(node.kind));
  for (size_t port = 3; port < 5; ++port)
    require_norm_shape(node, port, required_input(graph, node, port), stats,
                       "the statistics to apply, [1, C, 1, ...]");
  set_norm_output(graph, node, 0, x.dims, dimension_order(x), false);
}

void infer_backward(Graph &graph, Node &node) {
  const Tensor &dy = required_input(graph, node, 0);
  const Tensor &x = checked_x(graph, node, 1);
  require_norm_shape(node, 0, dy, x.dims, "x's shape");
  const NormGroups groups = norm_groups(node.kind, x.dims.size());
  const Tensor &scale = required_input(graph, node, 2);
  require_norm_shape(node, 2, scale, keep_dims(x.dims, groups.param), param_rule(node.kind));
  const std::vector<int64_t> stats = keep_dims(x.dims, ~groups.reduced);
  for (size_t port = 3; port < 5; ++port)
    require_norm_shape(node, port, required_input(graph, node, port), stats,
                       cat("the forward's statistics ", stats_rule(node.kind)).c_str());
  set_norm_output(graph, node, 0, x.dims, dimension_order(x), false);
  set_norm_output(graph, node, 1, scale.dims, dimension_order(scale), false);
  set_norm_output(graph, node, 2, scale.dims, dimension_order(scale), false);
  // Parameter gradients take the parameters' type (cuDNN writes them so).
  for (size_t port = 1; port < 3; ++port) {
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
