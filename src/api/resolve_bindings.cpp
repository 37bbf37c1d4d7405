// The caller's (uid, pointer) bindings as the plan's pointer table, and the
// checks of ordered pointers and workspaces (api/resolve_bindings.h). No
// heap allocation unless they fail.
#include "api/resolve_bindings.h"

#include "core/error.h"

namespace cudnnfe {

void resolve_bindings(const Graph &graph, const cudnnfe_binding_t *bindings, size_t num_bindings,
                      void **data) {
  if (num_bindings && !bindings)
    fail_argument("bindings is NULL but num_bindings is ", num_bindings);
  const size_t bound = graph.bound_uids().size();
  for (size_t i = 0; i < bound; ++i) data[i] = nullptr;
  for (size_t i = 0; i < num_bindings; ++i) {
    const int64_t uid = bindings[i].uid;
    const int index = graph.bound_index(uid);
    if (index < 0) {
      if (graph.was_pruned(uid)) continue;  // left the graph at validation: ignored
      const Tensor &t = graph.tensor(uid);  // throws for unknown UIDs
      if (graph.is_unread_input(t)) continue;
      fail_argument("binding ", i, ": tensor \"", t.name, "\" (UID ", uid, ") is ",
                    t.is_scalar ? "a pass-by-value scalar" : "virtual (not an output)",
                    " and takes no buffer");
    }
    if (data[index])
      fail_argument("binding ", i, ": tensor \"", graph.tensor(uid).name, "\" (UID ", uid,
                    ") is bound twice");
    if (!bindings[i].data)
      fail_argument("binding ", i, ": tensor \"", graph.tensor(uid).name, "\" (UID ", uid,
                    ") has a NULL buffer");
    data[index] = bindings[i].data;
  }
  for (size_t i = 0; i < bound; ++i)
    if (!data[i])
      fail_argument("graph \"", graph.name, "\": tensor \"",
                    graph.tensor(graph.bound_uids()[i]).name, "\" (UID ", graph.bound_uids()[i],
                    ") has no binding");
}

void check_ordered(const Graph &graph, void *const *data, size_t count) {
  const auto &bound = graph.bound_uids();
  if (count != bound.size())
    fail_argument("graph \"", graph.name, "\": ", count, " pointers given for ", bound.size(),
                  " bound tensors (cudnnfe_graph_get_bound_uids)");
  if (count && !data) fail_argument("data is NULL");
  for (size_t i = 0; i < count; ++i)
    if (!data[i])
      fail_argument("data[", i, "] for tensor \"", graph.tensor(bound[i]).name, "\" (UID ",
                    bound[i], ") is NULL");
}

void check_workspace(const Graph &graph, const Plan &plan, void *workspace, size_t workspace_size) {
  plan.require_runnable();  // a clearer message than a workspace size it cannot use
  const int64_t needed = plan.workspace_size();
  if (static_cast<int64_t>(workspace_size) < needed)
    fail_argument("graph \"", graph.name, "\": workspace of ", workspace_size,
                  " bytes is too small; the plan needs ", needed,
                  " (cudnnfe_graph_get_workspace_size)");
  if (needed > 0 && !workspace)
    fail_argument("graph \"", graph.name, "\": workspace is NULL but the plan needs ", needed,
                  " bytes");
}

}  // namespace cudnnfe
