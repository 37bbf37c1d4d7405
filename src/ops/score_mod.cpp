// The rules of an attention node's score modifiers against its scores: the
// placeholder and result are [b, h_q, s_q, s_kv] and the result is a
// floating type; their nodes follow the pointwise rules. Not here: the
// scope rules (which nodes and inputs a modifier may have: graph/score_mod.cpp).
#include "graph/score_mod.h"

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_score_mods(Graph &graph, Node &node, const std::vector<int64_t> &dims) {
  for (ScoreMod *m : score_mods(node)) {
    const char *option = score_mod_option(node, *m);
    const Tensor &score = graph.tensor(m->score);
    if (score.dims != dims)
      fail_graph(Graph::label(node), ": ", option, " score tensor \"", score.name, "\" is ",
                 dims_string(score.dims),
                 "; expected the scores' [b,h_q,s_q,s_kv] = ", dims_string(dims));
    for (Node &sub : m->nodes) infer_and_check(graph, sub);
    const Tensor &result = graph.tensor(m->result);
    if (result.dims != dims)
      fail_graph(Graph::label(node), ": ", option, " result \"", result.name, "\" is ",
                 dims_string(result.dims),
                 "; expected the scores' [b,h_q,s_q,s_kv] = ", dims_string(dims));
  }
}

void check_score_mod_types(Graph &graph, Node &node) {
  for (ScoreMod *m : score_mods(node)) {
    for (Node &sub : m->nodes) check_types(graph, sub);
    const Tensor &result = graph.tensor(m->result);
    if (!dtype_is_float(result.dtype))
      fail_graph(Graph::label(node), ": ", score_mod_option(node, *m), " result \"", result.name,
                 "\" is ", dtype_name(result.dtype),
                 "; the scores need a floating type (select with binary_select, not a mask)");
  }
}

}  // namespace cudnnfe
