// The C functions of the split batch-norm training graph: genstats.
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
    *sum = node.outputs[0];
    *sq_sum = node.outputs[1];
  });
}
