// The C function of paged_cache_load (include/cudnnfe/cudnnfe.h, experimental part).
#include "api/guard.h"

using namespace cudnnfe;

void cudnnfe_paged_cache_load_options_init_sized(cudnnfe_paged_cache_load_options_t *o,
                                                 size_t struct_size) {
  // Zero is every default: no name, compute type from the graph.
  init_sized(o, struct_size, [](cudnnfe_paged_cache_load_options_t *) {});
}

cudnnfe_status_t cudnnfe_graph_add_paged_cache_load(
    cudnnfe_graph_t *g, int64_t container, int64_t seq_len, int64_t page_table,
    const cudnnfe_paged_cache_load_options_t *options, int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_paged_cache_load_options_init_sized,
                             "paged_cache_load options");
    const Node &node =
        graph.add_node(OpKind::kPagedCacheLoad, string_or_empty(opts.name),
                       {container, seq_len, page_table}, MatmulAttrs{}, opts.compute_dtype);
    *y = node.outputs[PagedCacheLoad::kY];
  });
}
