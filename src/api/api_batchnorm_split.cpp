// The C functions of the split batch-norm training graph: genstats,
// bn_finalize and dbn_weight.
#include "api/guard.h"

using namespace cudnnfe;

void cudnnfe_genstats_options_init_sized(cudnnfe_genstats_options_t *o, size_t struct_size) {
  // Zero is every default: no name, compute type from the graph.
  init_sized(o, struct_size, [](cudnnfe_genstats_options_t *) {});
}

cudnnfe_status_t cudnnfe_graph_add_genstats(cudnnfe_graph_t *g, int64_t x,
                                            const cudnnfe_genstats_options_t *options, int64_t *sum,
                                            int64_t *sq_sum) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(sum, "sum");
    require_out(sq_sum, "sq_sum");
    auto opts = read_options(options, cudnnfe_genstats_options_init_sized, "genstats options");
    const Node &node = graph.add_node(OpKind::kGenStats, string_or_empty(opts.name), {x},
                                      GenStatsAttrs{}, opts.compute_dtype);
    *sum = node.outputs[GenStats::kSum];
    *sq_sum = node.outputs[GenStats::kSqSum];
  });
}

void cudnnfe_bn_finalize_options_init_sized(cudnnfe_bn_finalize_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_bn_finalize_options_t *) {});
}

cudnnfe_status_t cudnnfe_graph_add_bn_finalize(
    cudnnfe_graph_t *g, int64_t sum, int64_t sq_sum, int64_t scale, int64_t bias, int64_t epsilon,
    int64_t accum_count, int64_t prev_running_mean, int64_t prev_running_var, int64_t momentum,
    const cudnnfe_bn_finalize_options_t *options, int64_t *eq_scale, int64_t *eq_bias,
    int64_t *mean, int64_t *inv_variance, int64_t *next_running_mean, int64_t *next_running_var) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(eq_scale, "eq_scale");
    require_out(eq_bias, "eq_bias");
    require_out(mean, "mean");
    require_out(inv_variance, "inv_variance");
    if (prev_running_mean || prev_running_var || momentum) {
      require_out(next_running_mean, "next_running_mean (running statistics given)");
      require_out(next_running_var, "next_running_var (running statistics given)");
    }
    auto opts =
        read_options(options, cudnnfe_bn_finalize_options_init_sized, "bn_finalize options");
    const Node &node = graph.add_node(OpKind::kBnFinalize, string_or_empty(opts.name),
                                      {sum, sq_sum, scale, bias, epsilon, accum_count,
                                       prev_running_mean, prev_running_var, momentum},
                                      GenStatsAttrs{}, opts.compute_dtype);
    *eq_scale = node.outputs[BnFinalize::kEqScale];
    *eq_bias = node.outputs[BnFinalize::kEqBias];
    *mean = node.outputs[BnFinalize::kMean];
    *inv_variance = node.outputs[BnFinalize::kInvVariance];
    if (next_running_mean) *next_running_mean = node.outputs[BnFinalize::kNextRunningMean];
    if (next_running_var) *next_running_var = node.outputs[BnFinalize::kNextRunningVar];
  });
}

void cudnnfe_dbn_weight_options_init_sized(cudnnfe_dbn_weight_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_dbn_weight_options_t *) {});
}

cudnnfe_status_t cudnnfe_graph_add_dbn_weight(cudnnfe_graph_t *g, int64_t dy, int64_t x,
                                              int64_t mean, int64_t inv_variance, int64_t scale,
                                              const cudnnfe_dbn_weight_options_t *options,
                                              int64_t *dscale, int64_t *dbias, int64_t *eq_scale_dy,
                                              int64_t *eq_scale_x, int64_t *eq_bias) {
  return guard_graph(g, [&](Graph &graph) {
    int64_t *outs[] = {dscale, dbias, eq_scale_dy, eq_scale_x, eq_bias};
    const char *names[] = {"dscale", "dbias", "eq_scale_dy", "eq_scale_x", "eq_bias"};
    for (size_t i = 0; i < 5; ++i) require_out(outs[i], names[i]);
    auto opts = read_options(options, cudnnfe_dbn_weight_options_init_sized, "dbn_weight options");
    const Node &node =
        graph.add_node(OpKind::kDbnWeight, string_or_empty(opts.name),
                       {dy, x, mean, inv_variance, scale}, GenStatsAttrs{}, opts.compute_dtype);
    for (size_t i = 0; i < 5; ++i) *outs[i] = node.outputs[i];
  });
}
