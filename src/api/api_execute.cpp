// The execute hot path. No heap allocation on success: the pointer table
// lives on the stack, UIDs are found by binary search over a sorted vector
// fixed at build, and errors (the only allocating path) go on the handle.
#include "api/guard.h"
#include "api/resolve_bindings.h"
#include "exec/shape_override.h"
#include "exec/verify.h"
#include "plan/plan.h"

using namespace cudnnfe;

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
    if (Verifier *v = plan.verifier()) v->after_execute(graph, handle, data, stream);
  });
}

cudnnfe_status_t cudnnfe_graph_execute_with_overrides(const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                                      const cudnnfe_binding_t *bindings,
                                                      size_t num_bindings,
                                                      const cudnnfe_shape_override_t *overrides,
                                                      size_t num_overrides, void *workspace,
                                                      size_t workspace_size, void *stream) {
  return guard_handle(h, [&](Handle &handle) {
    const Graph &graph = graph_of(g);
    const Plan &plan = graph.plan();
    const std::vector<ShapeOverride> shapes = read_shape_overrides(graph, overrides, num_overrides);
    void *data[kMaxBoundTensors] = {};
    resolve_bindings(graph, bindings, num_bindings, data);
    check_workspace(graph, plan, workspace, workspace_size);
    if (shapes.empty())
      plan.execute(handle, data, workspace, stream);
    else if (plan.target() == CUDNNFE_TARGET_CPU_REFERENCE)
      execute_cpu_overridden(graph, handle, data, shapes);  // exec/shape_override.cpp
    else
      plan.execute_overridden(handle, data, shapes, workspace, stream);
    if (Verifier *v = plan.verifier()) {
      if (shapes.empty())
        v->after_execute(graph, handle, data, stream);
      else
        v->skip_overridden(graph);
    }
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
    check_ordered(graph, data, count);
    check_workspace(graph, plan, workspace, workspace_size);
    plan.execute(handle, data, workspace, stream);
    if (Verifier *v = plan.verifier()) v->after_execute(graph, handle, data, stream);
  });
}
