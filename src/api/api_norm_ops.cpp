// The C functions of batch norm, instance norm and adaptive layer norm
// (forward, batch norm inference, backward). The options struct is the one
// layernorm and rmsnorm take (cudnnfe_norm_options_t, initialized in
// api_transformer_ops.cpp).
#include "api/guard.h"
#include "api/norm_tensors.h"

using namespace cudnnfe;

namespace {

NormAttrs attrs_of(const cudnnfe_norm_options_t &o) {
  NormAttrs a;
  a.phase = o.phase;
  a.epsilon = o.epsilon;
  a.zero_centered_gamma = o.zero_centered_gamma != 0;
  a.momentum = o.momentum;
  return a;
}

void write_optional(int64_t *out, int64_t uid) {
  if (out) *out = uid;
}

// Forward with (y, mean, inv_variance): instancenorm and adalayernorm.
cudnnfe_status_t add_stats_forward(cudnnfe_graph_t *g, OpKind kind, int64_t x, int64_t scale,
                                   int64_t bias, const cudnnfe_norm_options_t *options, int64_t *y,
                                   int64_t *mean, int64_t *inv_variance) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    const NormAttrs a = attrs_of(opts);
    if (a.phase == CUDNNFE_NORM_PHASE_TRAINING) {
      require_out(mean, "mean (phase is TRAINING)");
      require_out(inv_variance, "inv_variance (phase is TRAINING)");
    }
    refuse_norm_tensors(opts, op_kind_name(kind), true);
    const Node &node = graph.add_node(kind, string_or_empty(opts.name),
                                      {x, scale, bias, opts.epsilon_tensor}, a, opts.compute_dtype);
    using namespace InstanceNorm;
    static_assert(same_port(kInvVariance, AdaLayerNorm::kInvVariance));
    *y = node.outputs[kY];
    write_optional(mean, node.outputs[kMean]);
    write_optional(inv_variance, node.outputs[kInvVariance]);
  });
}

cudnnfe_status_t add_backward(cudnnfe_graph_t *g, OpKind kind, int64_t dy, int64_t x, int64_t scale,
                              int64_t mean, int64_t inv_variance,
                              const cudnnfe_norm_options_t *options, int64_t *dx, int64_t *dscale,
                              int64_t *dbias) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dx, "dx");
    require_out(dscale, "dscale");
    require_out(dbias, "dbias");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    refuse_norm_tensors(opts, op_kind_name(kind), false);
    const Node &node =
        graph.add_node(kind, string_or_empty(opts.name), {dy, x, scale, mean, inv_variance},
                       attrs_of(opts), opts.compute_dtype);
    using namespace BatchNormBackward;
    static_assert(same_port(kDbias, InstanceNormBackward::kDbias, AdaLayerNormBackward::kDbias));
    *dx = node.outputs[kDx];
    *dscale = node.outputs[kDscale];
    *dbias = node.outputs[kDbias];
  });
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_batchnorm(
    cudnnfe_graph_t *g, int64_t x, int64_t scale, int64_t bias, int64_t prev_running_mean,
    int64_t prev_running_var, const cudnnfe_norm_options_t *options, int64_t *y, int64_t *mean,
    int64_t *inv_variance, int64_t *next_running_mean, int64_t *next_running_var) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    require_out(mean, "mean");
    require_out(inv_variance, "inv_variance");
    if (prev_running_mean || prev_running_var) {
      require_out(next_running_mean, "next_running_mean (running statistics are given)");
      require_out(next_running_var, "next_running_var (running statistics are given)");
    }
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    const Node &node = graph.add_node(OpKind::kBatchNorm, string_or_empty(opts.name),
                                      {x, scale, bias, prev_running_mean, prev_running_var,
                                       opts.epsilon_tensor, opts.momentum_tensor},
                                      attrs_of(opts), opts.compute_dtype);
    *y = node.outputs[BatchNorm::kY];
    *mean = node.outputs[BatchNorm::kMean];
    *inv_variance = node.outputs[BatchNorm::kInvVariance];
    write_optional(next_running_mean, node.outputs[BatchNorm::kNextRunningMean]);
    write_optional(next_running_var, node.outputs[BatchNorm::kNextRunningVar]);
  });
}

cudnnfe_status_t cudnnfe_graph_add_batchnorm_inference(cudnnfe_graph_t *g, int64_t x, int64_t scale,
                                                       int64_t bias, int64_t mean,
                                                       int64_t inv_variance,
                                                       const cudnnfe_norm_options_t *options,
                                                       int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    // Only the name and the compute type apply: the statistics are given.
    refuse_norm_tensors(opts, "batchnorm_inference", false);
    NormAttrs a;
    a.phase = CUDNNFE_NORM_PHASE_INFERENCE;
    const Node &node = graph.add_node(OpKind::kBatchNormInference, string_or_empty(opts.name),
                                      {x, scale, bias, mean, inv_variance}, a, opts.compute_dtype);
    *y = node.outputs[BatchNormInference::kY];
  });
}

cudnnfe_status_t cudnnfe_graph_add_batchnorm_backward(
    cudnnfe_graph_t *g, int64_t dy, int64_t x, int64_t scale, int64_t mean, int64_t inv_variance,
    const cudnnfe_norm_options_t *options, int64_t *dx, int64_t *dscale, int64_t *dbias) {
  return add_backward(g, OpKind::kBatchNormBackward, dy, x, scale, mean, inv_variance, options, dx,
                      dscale, dbias);
}

cudnnfe_status_t cudnnfe_graph_add_instancenorm(cudnnfe_graph_t *g, int64_t x, int64_t scale,
                                                int64_t bias, const cudnnfe_norm_options_t *options,
                                                int64_t *y, int64_t *mean, int64_t *inv_variance) {
  return add_stats_forward(g, OpKind::kInstanceNorm, x, scale, bias, options, y, mean,
                           inv_variance);
}

cudnnfe_status_t cudnnfe_graph_add_instancenorm_backward(
    cudnnfe_graph_t *g, int64_t dy, int64_t x, int64_t scale, int64_t mean, int64_t inv_variance,
    const cudnnfe_norm_options_t *options, int64_t *dx, int64_t *dscale, int64_t *dbias) {
  return add_backward(g, OpKind::kInstanceNormBackward, dy, x, scale, mean, inv_variance, options,
                      dx, dscale, dbias);
}

cudnnfe_status_t cudnnfe_graph_add_adalayernorm(cudnnfe_graph_t *g, int64_t x, int64_t scale,
                                                int64_t bias, const cudnnfe_norm_options_t *options,
                                                int64_t *y, int64_t *mean, int64_t *inv_variance) {
  return add_stats_forward(g, OpKind::kAdaLayerNorm, x, scale, bias, options, y, mean,
                           inv_variance);
}

cudnnfe_status_t cudnnfe_graph_add_adalayernorm_backward(
    cudnnfe_graph_t *g, int64_t dy, int64_t x, int64_t scale, int64_t mean, int64_t inv_variance,
    const cudnnfe_norm_options_t *options, int64_t *dx, int64_t *dscale, int64_t *dbias) {
  return add_backward(g, OpKind::kAdaLayerNormBackward, dy, x, scale, mean, inv_variance, options,
                      dx, dscale, dbias);
}
