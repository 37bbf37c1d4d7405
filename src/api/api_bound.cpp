// The C functions of bound execution (cudnnfe_graph_bind, cudnnfe_bound_*):
// every check is made once at bind; a run checks only that its graph and
// handle are still there and that the graph was not built again.
#include "api/guard.h"
#include "api/resolve_bindings.h"
#include "backend/known_wrong_configs.h"
#include "exec/verify.h"
#include "plan/plan.h"
#include "plan/recorded_plan.h"

using namespace cudnnfe;

namespace {

bool cuda_graph_mode_is_valid(cudnnfe_cuda_graph_mode_t mode) {
  return mode >= CUDNNFE_CUDA_GRAPH_OFF && mode <= CUDNNFE_CUDA_GRAPH_AUTO;
}

const char *cuda_graph_mode_name(cudnnfe_cuda_graph_mode_t mode) {
  switch (mode) {
    case CUDNNFE_CUDA_GRAPH_NATIVE: return "CUDNNFE_CUDA_GRAPH_NATIVE";
    case CUDNNFE_CUDA_GRAPH_CAPTURE: return "CUDNNFE_CUDA_GRAPH_CAPTURE";
    case CUDNNFE_CUDA_GRAPH_AUTO: return "CUDNNFE_CUDA_GRAPH_AUTO";
    default: return "CUDNNFE_CUDA_GRAPH_OFF";
  }
}

// A recorded CUDA graph replays the work exactly as it was at bind, so it
// is refused where that differs from an execute: the CPU reference (no
// CUDA graph), and pass-by-value inputs, whose value cuDNN reads from host
// memory when it is called -- once, at bind, for a CUDA graph.
void check_cuda_graph_allowed(const Graph &graph, const Plan &plan,
                              cudnnfe_cuda_graph_mode_t mode) {
  const char *what = cuda_graph_mode_name(mode);
  if (plan.target() == CUDNNFE_TARGET_CPU_REFERENCE)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "bind: graph \"", graph.name,
         "\" is built for the CPU reference, which has no CUDA graph (cuda_graph = ", what,
         "); bind with CUDNNFE_CUDA_GRAPH_OFF");
  for (int64_t uid : graph.bound_uids()) {
    const Tensor &t = graph.tensor(uid);
    if (t.pass_by_value)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "bind: graph \"", graph.name, "\": tensor \"", t.name,
           "\" (UID ", uid, ") is pass-by-value, read from host memory at each execute, but a ",
           "CUDA graph (cuda_graph = ", what,
           ") would keep the value it has at bind; bind with CUDNNFE_CUDA_GRAPH_OFF");
  }
}

// The mode a bind uses: AUTO records by stream capture only where the plan
// lacks cuDNN's native population, and never where capture is known to
// record the work wrongly (then no CUDA graph: OFF); an explicit CAPTURE
// there is refused.
cudnnfe_cuda_graph_mode_t checked_capture_mode(const Graph &graph, const Plan &plan,
                                               cudnnfe_cuda_graph_mode_t mode) {
  if (mode != CUDNNFE_CUDA_GRAPH_CAPTURE && mode != CUDNNFE_CUDA_GRAPH_AUTO) return mode;
  const std::string why = backend::known_wrong_under_capture(graph);
  if (why.empty()) return mode;
  if (mode == CUDNNFE_CUDA_GRAPH_CAPTURE)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "bind: graph \"", graph.name, "\": ", why,
         " (docs/refusals.md); bind with CUDNNFE_CUDA_GRAPH_OFF, or CUDNNFE_CUDA_GRAPH_NATIVE "
         "where the plan supports it");
  const auto *recorded = dynamic_cast<const RecordedPlan *>(&plan);
  const bool native = recorded && (recorded->entry(recorded->selected()).behavior_notes &
                                   CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API);
  return native ? mode : CUDNNFE_CUDA_GRAPH_OFF;
}

// The live record behind a bound execution's token.
cudnnfe_bound &bound_of(const cudnnfe_bound *token) {
  if (!token) fail_argument("bound execution is NULL");
  cudnnfe_bound *record = find_bound(token);
  if (!record)
    fail_argument("bound execution pointer ", static_cast<const void *>(token),
                  " is not a live cudnnfe bound execution (destroyed, or not from "
                  "cudnnfe_graph_bind)");
  return *record;
}

// The graph a bound execution was made from, as long as it still has the
// plan bound then.
void check_graph_unchanged(const cudnnfe_bound &b) {
  const cudnnfe_graph *record = find_graph(b.graph);
  if (!record)
    fail_argument(
        "bound execution: its graph was destroyed (destroy bound executions before "
        "their graph)");
  const Graph &graph = *record->impl;
  if (graph.plan_serial() != b.plan_serial)
    fail(CUDNNFE_STATUS_WRONG_STATE, "bound execution: graph \"", graph.name,
         "\" was built again (or given another plan) since bind; bind again");
}

}  // namespace

void cudnnfe_bind_options_init_sized(cudnnfe_bind_options_t *options, size_t struct_size) {
  init_sized(options, struct_size,
             [](cudnnfe_bind_options_t *o) { o->cuda_graph = CUDNNFE_CUDA_GRAPH_OFF; });
}

cudnnfe_status_t cudnnfe_graph_bind(cudnnfe_bound_t **bound, const cudnnfe_graph_t *g,
                                    cudnnfe_handle_t *h, void *const *data, size_t count,
                                    void *workspace, size_t workspace_size,
                                    const cudnnfe_bind_options_t *options) {
  return guard_handle(h, [&](Handle &handle) {
    require_out(bound, "bound");
    const auto o = read_options(options, cudnnfe_bind_options_init_sized, "bind options");
    if (!cuda_graph_mode_is_valid(o.cuda_graph))
      fail_argument("bind options: cuda_graph is ", o.cuda_graph,
                    "; expected CUDNNFE_CUDA_GRAPH_OFF (0) to CUDNNFE_CUDA_GRAPH_AUTO (3)");
    const Graph &graph = graph_of(g);
    const Plan &plan = graph.plan();
    check_ordered(graph, data, count);
    check_workspace(graph, plan, workspace, workspace_size);
    cudnnfe_cuda_graph_mode_t mode = o.cuda_graph;
    if (mode != CUDNNFE_CUDA_GRAPH_OFF) {
      check_cuda_graph_allowed(graph, plan, mode);
      mode = checked_capture_mode(graph, plan, mode);
    }
    auto record = std::make_unique<cudnnfe_bound>();
    record->graph = g;
    record->handle = h;
    record->plan_serial = graph.plan_serial();
    // Verify mode checks the first run of every bound execution (a CUDA
    // graph replays the work another way than execute).
    record->impl =
        verified_bound_run(plan.bind(handle, data, count, workspace, mode), graph, data, count);
    *bound = register_bound(std::move(record));
  });
}

cudnnfe_status_t cudnnfe_bound_execute(cudnnfe_bound_t *bound, void *stream) {
  cudnnfe_bound *b = find_bound(bound);
  if (!b) return guard([&] { bound_of(bound); });  // the message for a bad token
  return guard_handle(b->handle, [&](Handle &handle) {
    check_graph_unchanged(*b);
    b->impl->run(handle, stream);
  });
}

cudnnfe_status_t cudnnfe_bound_get_cuda_graph_mode(const cudnnfe_bound_t *bound,
                                                   cudnnfe_cuda_graph_mode_t *mode) {
  return guard([&] {
    require_out(mode, "mode");
    *mode = bound_of(bound).impl->mode();
  });
}

cudnnfe_status_t cudnnfe_bound_destroy(cudnnfe_bound_t *bound) {
  if (!bound) return CUDNNFE_STATUS_OK;
  return guard([&] { unregister_bound(bound); });
}
