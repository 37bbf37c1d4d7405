// The execute hot path. No heap allocation on success: the pointer table
// lives on the stack, UIDs are found by binary search over a sorted vector
// fixed at build, and errors (the only allocating path) go on the handle.
#include "api/guard.h"
#include "api/resolve_bindings.h"
#include "plan/plan.h"

using namespace cudnnfe;

namespace {

void check_workspace(const Graph &graph, const Plan &plan, void *workspace, size_t workspace_size) {
  const int64_t needed = plan.workspace_size();
  if (static_cast<int64_t>(workspace_size) < needed)
    fail_argument("graph \"", graph.name, "\": workspace of ", workspace_size,
                  " bytes is too small; the plan needs ", needed,
                  " (cudnnfe_graph_get_workspace_size)");
  if (needed > 0 && !workspace)
    fail_argument("graph \"", graph.name, "\": workspace is NULL but the plan needs ", needed,
                  " bytes");
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_execute(const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                       const cudnnfe_binding_t *bindings, size_t num_bindings,
                                       void *workspace, size_t workspace_size, void *stream) {
  return guard_handle(h, [&](Handle &handle) {
    const Graph &graph = graph_of(g);
    const Plan &plan = graph.plan();
    void *data[kMaxBoundTensors] = {};
    resolve_bindings(graph, bindings, num_bindings, data);
    check_workspace(graph, plan, workspace, workspace_size);
    plan.execute(handle, data, workspace, stream);
  });
}

cudnnfe_status_t cudnnfe_graph_get_bound_uids(const cudnnfe_graph_t *g, int64_t *uids,
                                              size_t capacity, size_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    graph.plan();  // WRONG_STATE before build: the order is fixed at build
    const auto &bound = graph.bound_uids();
    if (uids) {
      if (capacity < bound.size())
        fail_argument("capacity ", capacity, " is too small for ", bound.size(), " UIDs");
      std::copy(bound.begin(), bound.end(), uids);
    }
    *count = bound.size();
  });
}

cudnnfe_status_t cudnnfe_graph_execute_ordered(const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                               void *const *data, size_t count, void *workspace,
                                               size_t workspace_size, void *stream) {
  return guard_handle(h, [&](Handle &handle) {
    const Graph &graph = graph_of(g);
    const Plan &plan = graph.plan();
    const auto &bound = graph.bound_uids();
    if (count != bound.size())
      fail_argument("graph \"", graph.name, "\": ", count, " pointers given for ", bound.size(),
                    " bound tensors (cudnnfe_graph_get_bound_uids)");
    if (count && !data) fail_argument("data is NULL");
    for (size_t i = 0; i < count; ++i)
      if (!data[i])
        fail_argument("data[", i, "] for tensor \"", graph.tensor(bound[i]).name, "\" (UID ",
                      bound[i], ") is NULL");
    check_workspace(graph, plan, workspace, workspace_size);
    plan.execute(handle, data, workspace, stream);
  });
}
