// Validation, build and queries on a built graph.
#include "api/guard.h"
#include "backend/backend.h"
#include "cpu/cpu_plan.h"
#include "exec/plan.h"

using namespace cudnnfe;

namespace {

BuildOptions to_build_options(const cudnnfe_build_options_t &o) {
  BuildOptions b;
  if (o.target != CUDNNFE_TARGET_AUTO && o.target != CUDNNFE_TARGET_GPU &&
      o.target != CUDNNFE_TARGET_CPU_REFERENCE)
    fail_argument("build options: unknown target ", o.target);
  b.target = o.target;
  if (o.num_heur_modes < 1 || o.num_heur_modes > 4)
    fail_argument("build options: num_heur_modes is ", o.num_heur_modes, "; expected 1 to 4");
  b.heur_modes.clear();
  for (int i = 0; i < o.num_heur_modes; ++i) {
    cudnnfe_heur_mode_t mode = o.heur_modes[i];
    if (mode != CUDNNFE_HEUR_MODE_A && mode != CUDNNFE_HEUR_MODE_B &&
        mode != CUDNNFE_HEUR_MODE_FALLBACK)
      fail_argument("build options: heur_modes[", i, "] is ", mode,
                    ", not a heuristic mode (A, B or FALLBACK)");
    b.heur_modes.push_back(mode);
  }
  return b;
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_validate(cudnnfe_graph_t *g) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    graph.validate();
  });
}

cudnnfe_status_t cudnnfe_graph_build(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                     const cudnnfe_build_options_t *options) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    BuildOptions b =
        to_build_options(read_options(options, cudnnfe_build_options_init, "build options"));
    Handle *handle = h ? &handle_of(h) : nullptr;
    graph.validate();
    if (b.target == CUDNNFE_TARGET_AUTO)
      b.target = backend::gpu_available() ? CUDNNFE_TARGET_GPU : CUDNNFE_TARGET_CPU_REFERENCE;
    if (b.target == CUDNNFE_TARGET_GPU)
      graph.set_plan(backend::build_gpu_plan(graph, handle, b));
    else
      graph.set_plan(build_cpu_plan(graph));
  });
}

cudnnfe_status_t cudnnfe_graph_is_built(const cudnnfe_graph_t *g, int32_t *is_built) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(is_built, "is_built");
    *is_built = graph.built() ? 1 : 0;
  });
}

cudnnfe_status_t cudnnfe_graph_get_target(const cudnnfe_graph_t *g, cudnnfe_target_t *target) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(target, "target");
    *target = graph.plan().target();
  });
}

cudnnfe_status_t cudnnfe_graph_get_workspace_size(const cudnnfe_graph_t *g, int64_t *size) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(size, "size");
    *size = graph.plan().workspace_size();
  });
}

cudnnfe_status_t cudnnfe_graph_get_plan_name(const cudnnfe_graph_t *g, const char **name) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(name, "name");
    *name = graph.plan().name().c_str();
  });
}
