// Options initialisers and the op-adding functions: each copies the caller's
// options over the defaults and adds one node.
#include <algorithm>

#include "api/guard.h"
#include "graph/op_schema.h"

using namespace cudnnfe;

void cudnnfe_conv_options_init_sized(cudnnfe_conv_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_conv_options_t *o) {
    for (int i = 0; i < CUDNNFE_MAX_SPATIAL_DIMS; ++i) o->stride[i] = o->dilation[i] = 1;
    o->mode = CUDNNFE_CONV_MODE_CROSS_CORRELATION;
  });
}

void cudnnfe_matmul_options_init_sized(cudnnfe_matmul_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_matmul_options_t *) {});
}

void cudnnfe_pointwise_options_init_sized(cudnnfe_pointwise_options_t *o, size_t struct_size) {
  init_sized(o, struct_size,
             [](cudnnfe_pointwise_options_t *o) { write_c_defaults(OpKind::kPointwise, o); });
}

void cudnnfe_reduction_options_init_sized(cudnnfe_reduction_options_t *o, size_t struct_size) {
  init_sized(o, struct_size,
             [](cudnnfe_reduction_options_t *o) { write_c_defaults(OpKind::kReduction, o); });
}

void cudnnfe_build_options_init_sized(cudnnfe_build_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_build_options_t *o) {
    o->target = CUDNNFE_TARGET_AUTO;
    o->num_heur_modes = 2;
    o->heur_modes[0] = CUDNNFE_HEUR_MODE_A;
    o->heur_modes[1] = CUDNNFE_HEUR_MODE_FALLBACK;
    o->policy = CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE;
    o->max_workspace_size = -1;
  });
}

namespace {

ConvAttrs conv_attrs(const cudnnfe_conv_options_t &o) {
  ConvAttrs a;
  if (o.spatial_dims < 0 || o.spatial_dims > CUDNNFE_MAX_SPATIAL_DIMS)
    fail_argument("conv options: spatial_dims is ", o.spatial_dims, "; expected 0 to 3");
  a.spatial_dims = o.spatial_dims;
  for (int i = 0; i < CUDNNFE_MAX_SPATIAL_DIMS; ++i) {
    a.pre_padding[i] = o.pre_padding[i];
    a.post_padding[i] = o.post_padding[i];
    a.stride[i] = o.stride[i];
    a.dilation[i] = o.dilation[i];
  }
  a.mode = o.mode;
  return a;
}

cudnnfe_status_t add_conv(cudnnfe_graph_t *g, OpKind kind, int64_t in0, int64_t in1,
                          const cudnnfe_conv_options_t *options, int64_t *out) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(out, "output uid");
    auto o = read_options(options, cudnnfe_conv_options_init_sized, "conv options");
    const Node &node =
        graph.add_node(kind, string_or_empty(o.name), {in0, in1}, conv_attrs(o), o.compute_dtype);
    static_assert(same_port(ConvFprop::kY, ConvDgrad::kDx, ConvWgrad::kDw));
    *out = node.outputs[ConvFprop::kY];
  });
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_conv_fprop(cudnnfe_graph_t *g, int64_t image, int64_t weight,
                                              const cudnnfe_conv_options_t *options, int64_t *y) {
  return add_conv(g, OpKind::kConvFprop, image, weight, options, y);
}

cudnnfe_status_t cudnnfe_graph_add_conv_dgrad(cudnnfe_graph_t *g, int64_t loss, int64_t weight,
                                              const cudnnfe_conv_options_t *options, int64_t *dx) {
  return add_conv(g, OpKind::kConvDgrad, loss, weight, options, dx);
}

cudnnfe_status_t cudnnfe_graph_add_conv_wgrad(cudnnfe_graph_t *g, int64_t image, int64_t loss,
                                              const cudnnfe_conv_options_t *options, int64_t *dw) {
  return add_conv(g, OpKind::kConvWgrad, image, loss, options, dw);
}

cudnnfe_status_t cudnnfe_graph_add_matmul(cudnnfe_graph_t *g, int64_t a, int64_t b,
                                          const cudnnfe_matmul_options_t *options, int64_t *c) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(c, "c");
    auto o = read_options(options, cudnnfe_matmul_options_init_sized, "matmul options");
    const Node &node = graph.add_node(OpKind::kMatmul, string_or_empty(o.name), {a, b},
                                      MatmulAttrs{}, o.compute_dtype);
    *c = node.outputs[Matmul::kC];
  });
}

cudnnfe_status_t cudnnfe_graph_add_pointwise(cudnnfe_graph_t *g, cudnnfe_pointwise_mode_t mode,
                                             int64_t in0, int64_t in1, int64_t in2,
                                             const cudnnfe_pointwise_options_t *options,
                                             int64_t *out) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(out, "out");
    auto o = read_options(options, cudnnfe_pointwise_options_init_sized, "pointwise options");
    if (pointwise_arity(mode) == 0) fail_argument("unknown pointwise mode ", mode);
    PointwiseAttrs a;
    a.mode = mode;
    read_c_options(OpKind::kPointwise, &o, &a);
    const Node &node = graph.add_node(OpKind::kPointwise, string_or_empty(o.name), {in0, in1, in2},
                                      a, o.compute_dtype);
    *out = node.outputs[Pointwise::kOut];
  });
}

cudnnfe_status_t cudnnfe_graph_add_reduction(cudnnfe_graph_t *g, cudnnfe_reduction_mode_t mode,
                                             int64_t x, const cudnnfe_reduction_options_t *options,
                                             int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto o = read_options(options, cudnnfe_reduction_options_init_sized, "reduction options");
    if (std::string(reduction_mode_name(mode)) == "UNKNOWN")
      fail_argument("unknown reduction mode ", mode);
    ReductionAttrs a;
    a.mode = mode;
    read_c_options(OpKind::kReduction, &o, &a);
    const Node &node =
        graph.add_node(OpKind::kReduction, string_or_empty(o.name), {x}, a, o.compute_dtype);
    *y = node.outputs[Reduction::kY];
  });
}
