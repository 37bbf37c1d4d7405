// Mixture-of-experts grouped matmul and its backward in the C API.
#include "api/guard.h"
#include "core/dtype.h"
#include "graph/op_schema.h"

using namespace cudnnfe;

void cudnnfe_moe_grouped_matmul_options_init_sized(cudnnfe_moe_grouped_matmul_options_t *o,
                                                   size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_moe_grouped_matmul_options_t *o) {
    write_c_defaults(OpKind::kMoeGroupedMatmul, o);
  });
}

cudnnfe_status_t cudnnfe_graph_add_moe_grouped_matmul(
    cudnnfe_graph_t *g, int64_t token, int64_t weight, int64_t first_token_offset,
    int64_t token_index, int64_t token_ks, const cudnnfe_moe_grouped_matmul_options_t *options,
    int64_t *output) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(output, "output");
    auto opts = read_options(options, cudnnfe_moe_grouped_matmul_options_init_sized,
                             "moe_grouped_matmul options");
    if (!moe_grouped_matmul_mode_is_valid(opts.mode))
      fail_argument("moe_grouped_matmul: mode is ", opts.mode,
                    "; expected NONE (0), GATHER (1) or SCATTER (2)");
    if (opts.top_k < 1)
      fail_argument("moe_grouped_matmul: top_k is ", opts.top_k, "; it must be at least 1");
    MoeGroupedMatmulAttrs a;
    read_c_options(OpKind::kMoeGroupedMatmul, &opts, &a);
    *output = graph
                  .add_node(OpKind::kMoeGroupedMatmul, string_or_empty(opts.name),
                            {token, weight, first_token_offset, token_index, token_ks}, a,
                            opts.compute_dtype)
                  .outputs[MoeGroupedMatmul::kOutput];
  });
}

cudnnfe_status_t cudnnfe_graph_add_moe_grouped_matmul_backward(
    cudnnfe_graph_t *g, int64_t doutput, int64_t token, int64_t first_token_offset,
    const cudnnfe_moe_grouped_matmul_options_t *options, int64_t *dweight) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dweight, "dweight");
    auto opts = read_options(options, cudnnfe_moe_grouped_matmul_options_init_sized,
                             "moe_grouped_matmul options");
    // cuDNN's backward descriptor has no routing: its rows are the forward's
    // routed rows, so a gathered or scattered forward's gradient is taken on
    // the routed token matrix.
    if (opts.mode != CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE)
      fail_argument("moe_grouped_matmul_backward: mode is ",
                    moe_grouped_matmul_mode_name(opts.mode),
                    "; the backward takes NONE only (route the tokens first)");
    *dweight =
        graph
            .add_node(OpKind::kMoeGroupedMatmulBackward, string_or_empty(opts.name),
                      {doutput, token, first_token_offset}, MatmulAttrs{}, opts.compute_dtype)
            .outputs[MoeGroupedMatmulBackward::kDweight];
  });
}
