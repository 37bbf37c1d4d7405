// Block-scale (microscaling) quantize and dequantize in the C API.
#include "api/guard.h"
#include "core/dtype.h"
#include "graph/op_schema.h"

using namespace cudnnfe;

void cudnnfe_block_scale_options_init_sized(cudnnfe_block_scale_options_t *o, size_t struct_size) {
  // Quantize's fields are a superset of dequantize's.
  init_sized(o, struct_size, [](cudnnfe_block_scale_options_t *o) {
    write_c_defaults(OpKind::kBlockScaleQuantize, o);
  });
}

namespace {

BlockScaleAttrs block_scale_attrs(const cudnnfe_block_scale_options_t &opts, const char *op) {
  if (opts.block_size < 1)
    fail_argument(op, ": block_size is ", opts.block_size, "; it must be at least 1");
  if (opts.axis < -CUDNNFE_MAX_DIMS || opts.axis >= CUDNNFE_MAX_DIMS)
    fail_argument(op, ": axis is ", opts.axis, "; expected ", -CUDNNFE_MAX_DIMS, " to ",
                  CUDNNFE_MAX_DIMS - 1);
  BlockScaleAttrs a;
  read_c_options(OpKind::kBlockScaleQuantize, &opts, &a);
  return a;
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_block_scale_quantize(
    cudnnfe_graph_t *g, int64_t x, const cudnnfe_block_scale_options_t *options, int64_t *y,
    int64_t *scale) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    require_out(scale, "scale");
    auto opts =
        read_options(options, cudnnfe_block_scale_options_init_sized, "block scale options");
    BlockScaleAttrs a = block_scale_attrs(opts, "block_scale_quantize");
    const Node &node = graph.add_node(OpKind::kBlockScaleQuantize, string_or_empty(opts.name), {x},
                                      a, CUDNNFE_DTYPE_FLOAT);
    *y = node.outputs[BlockScaleQuantize::kY];
    *scale = node.outputs[BlockScaleQuantize::kScale];
  });
}

cudnnfe_status_t cudnnfe_graph_add_block_scale_dequantize(
    cudnnfe_graph_t *g, int64_t x, int64_t scale, const cudnnfe_block_scale_options_t *options,
    int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts =
        read_options(options, cudnnfe_block_scale_options_init_sized, "block scale options");
    BlockScaleAttrs a = block_scale_attrs(opts, "block_scale_dequantize");
    *y = graph
             .add_node(OpKind::kBlockScaleDequantize, string_or_empty(opts.name), {x, scale}, a,
                       CUDNNFE_DTYPE_FLOAT)
             .outputs[BlockScaleDequantize::kY];
  });
}
