// The C functions that open and close an attention score modifier (the
// sub-graph an sdpa or sdpa_backward node takes through its options).
// Not here: the rules (graph/score_mod.cpp, ops/score_mod.cpp).
#include "api/guard.h"

using namespace cudnnfe;

cudnnfe_status_t cudnnfe_graph_begin_score_mod(cudnnfe_graph_t *g, const char *name, int32_t ndims,
                                               const int64_t *dims, int64_t *score) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(score, "score");
    if (ndims != 4 || !dims)
      fail_argument("score modifier: dims must be the scores' 4 dims [b,h_q,s_q,s_kv]; got ndims ",
                    ndims, dims ? "" : " and NULL dims");
    *score = graph.begin_score_mod(string_or_empty(name), std::vector<int64_t>(dims, dims + 4));
  });
}

cudnnfe_status_t cudnnfe_graph_end_score_mod(cudnnfe_graph_t *g, int64_t score, int64_t result) {
  return guard_graph(g, [&](Graph &graph) { graph.end_score_mod(score, result); });
}
