// The transformer ops of the C API: layer/RMS norm forward and backward,
// softmax (attention is in api_attention.cpp).
#include "api/guard.h"
#include "api/norm_tensors.h"
#include "graph/op_schema.h"

using namespace cudnnfe;

void cudnnfe_norm_options_init_sized(cudnnfe_norm_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_norm_options_t *o) {
    o->phase = CUDNNFE_NORM_PHASE_TRAINING;
    o->epsilon = NormAttrs{}.epsilon;
    o->momentum = NormAttrs{}.momentum;
  });
}

void cudnnfe_softmax_options_init_sized(cudnnfe_softmax_options_t *o, size_t struct_size) {
  init_sized(o, struct_size,
             [](cudnnfe_softmax_options_t *o) { write_c_defaults(OpKind::kSoftmax, o); });
}

namespace {

NormAttrs norm_attrs(const cudnnfe_norm_options_t &o) {
  NormAttrs a;
  a.phase = o.phase;
  a.epsilon = o.epsilon;
  a.zero_centered_gamma = o.zero_centered_gamma != 0;
  return a;
}

// Writes an optional output UID: the node's output, or 0 when it has none.
void write_optional(int64_t *out, int64_t uid) {
  if (out) *out = uid;
}

void require_training_outputs(const NormAttrs &attrs, std::initializer_list<int64_t *> outs) {
  if (attrs.phase != CUDNNFE_NORM_PHASE_TRAINING) return;
  for (int64_t *out : outs) require_out(out, "statistics output (phase is TRAINING)");
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_layernorm(cudnnfe_graph_t *g, int64_t x, int64_t scale,
                                             int64_t bias, const cudnnfe_norm_options_t *options,
                                             int64_t *y, int64_t *mean, int64_t *inv_variance) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    NormAttrs a = norm_attrs(opts);
    require_training_outputs(a, {mean, inv_variance});
    refuse_norm_tensors(opts, "layernorm", true);
    const Node &node = graph.add_node(OpKind::kLayerNorm, string_or_empty(opts.name),
                                      {x, scale, bias, opts.epsilon_tensor}, a, opts.compute_dtype);
    *y = node.outputs[LayerNorm::kY];
    write_optional(mean, node.outputs[LayerNorm::kMean]);
    write_optional(inv_variance, node.outputs[LayerNorm::kInvVariance]);
  });
}

cudnnfe_status_t cudnnfe_graph_add_rmsnorm(cudnnfe_graph_t *g, int64_t x, int64_t scale,
                                           int64_t bias, const cudnnfe_norm_options_t *options,
                                           int64_t *y, int64_t *inv_rms) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    NormAttrs a = norm_attrs(opts);
    require_training_outputs(a, {inv_rms});
    refuse_norm_tensors(opts, "rmsnorm", true);
    const Node &node = graph.add_node(OpKind::kRmsNorm, string_or_empty(opts.name),
                                      {x, scale, bias, opts.epsilon_tensor}, a, opts.compute_dtype);
    *y = node.outputs[RmsNorm::kY];
    write_optional(inv_rms, node.outputs[RmsNorm::kInvRms]);
  });
}

cudnnfe_status_t cudnnfe_graph_add_layernorm_backward(
    cudnnfe_graph_t *g, int64_t dy, int64_t x, int64_t scale, int64_t mean, int64_t inv_variance,
    const cudnnfe_norm_options_t *options, int64_t *dx, int64_t *dscale, int64_t *dbias) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dx, "dx");
    require_out(dscale, "dscale");
    require_out(dbias, "dbias");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    refuse_norm_tensors(opts, "layernorm_backward", false);
    const Node &node =
        graph.add_node(OpKind::kLayerNormBackward, string_or_empty(opts.name),
                       {dy, x, scale, mean, inv_variance}, norm_attrs(opts), opts.compute_dtype);
    *dx = node.outputs[LayerNormBackward::kDx];
    *dscale = node.outputs[LayerNormBackward::kDscale];
    *dbias = node.outputs[LayerNormBackward::kDbias];
  });
}

cudnnfe_status_t cudnnfe_graph_add_rmsnorm_backward(cudnnfe_graph_t *g, int64_t dy, int64_t x,
                                                    int64_t scale, int64_t inv_rms,
                                                    const cudnnfe_norm_options_t *options,
                                                    int64_t *dx, int64_t *dscale, int64_t *dbias) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dx, "dx");
    require_out(dscale, "dscale");
    auto opts = read_options(options, cudnnfe_norm_options_init_sized, "norm options");
    refuse_norm_tensors(opts, "rmsnorm_backward", false);
    NormAttrs a = norm_attrs(opts);
    a.has_dbias = dbias != nullptr;
    const Node &node = graph.add_node(OpKind::kRmsNormBackward, string_or_empty(opts.name),
                                      {dy, x, scale, inv_rms}, a, opts.compute_dtype);
    *dx = node.outputs[RmsNormBackward::kDx];
    *dscale = node.outputs[RmsNormBackward::kDscale];
    write_optional(dbias, node.outputs[RmsNormBackward::kDbias]);
  });
}

cudnnfe_status_t cudnnfe_graph_add_softmax(cudnnfe_graph_t *g, int64_t x,
                                           const cudnnfe_softmax_options_t *options, int64_t *y,
                                           int64_t *stats) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_softmax_options_init_sized, "softmax options");
    if (opts.generate_stats) require_out(stats, "stats (generate_stats is set)");
    SoftmaxAttrs a;
    read_c_options(OpKind::kSoftmax, &opts, &a);
    const Node &node =
        graph.add_node(OpKind::kSoftmax, string_or_empty(opts.name), {x}, a, opts.compute_dtype);
    *y = node.outputs[Softmax::kY];
    write_optional(stats, node.outputs[Softmax::kStats]);
  });
}
