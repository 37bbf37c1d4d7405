// Validation, build and queries on a built graph.
#include <algorithm>
#include <cstdlib>
#include <utility>

#include "api/guard.h"
#include "backend/backend.h"
#include "exec/build_graph.h"
#include "exec/verify.h"
#include "plan/fingerprint.h"
#include "plan/plan.h"

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
  // Plan control (appended fields; older structs keep their defaults).
  if (o.policy != CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE && o.policy != CUDNNFE_BUILD_POLICY_ALL)
    fail_argument("build options: policy is ", o.policy,
                  ", not a build policy (HEURISTICS_CHOICE or ALL)");
  b.policy = o.policy;
  if (o.max_workspace_size < -1)
    fail_argument("build options: max_workspace_size is ", o.max_workspace_size,
                  "; expected -1 (no limit) or a byte count >= 0");
  b.max_workspace_size = o.max_workspace_size;
  if (o.exclude_numerical_notes & ~uint32_t{CUDNNFE_NUMERICAL_NOTE_ALL})
    fail_argument("build options: exclude_numerical_notes has unknown bits ",
                  o.exclude_numerical_notes & ~uint32_t{CUDNNFE_NUMERICAL_NOTE_ALL},
                  " (known: CUDNNFE_NUMERICAL_NOTE_ALL = ", CUDNNFE_NUMERICAL_NOTE_ALL, ")");
  auto check_behavior = [](uint32_t bits, const char *field) {
    if (bits & ~uint32_t{CUDNNFE_BEHAVIOR_NOTE_ALL})
      fail_argument("build options: ", field, " has unknown bits ",
                    bits & ~uint32_t{CUDNNFE_BEHAVIOR_NOTE_ALL},
                    " (known: CUDNNFE_BEHAVIOR_NOTE_ALL = ", CUDNNFE_BEHAVIOR_NOTE_ALL, ")");
  };
  check_behavior(o.exclude_behavior_notes, "exclude_behavior_notes");
  check_behavior(o.require_behavior_notes, "require_behavior_notes");
  if (o.exclude_behavior_notes & o.require_behavior_notes)
    fail_argument("build options: behaviour notes ",
                  o.exclude_behavior_notes & o.require_behavior_notes,
                  " are both excluded and required");
  b.exclude_numerical_notes = o.exclude_numerical_notes;
  b.exclude_behavior_notes = o.exclude_behavior_notes;
  b.require_behavior_notes = o.require_behavior_notes;
  if (o.num_exclude_engines < 0 || o.num_exclude_engines > 256)
    fail_argument("build options: num_exclude_engines is ", o.num_exclude_engines,
                  "; expected 0 to 256");
  if (o.num_exclude_engines > 0 && !o.exclude_engines)
    fail_argument("build options: exclude_engines is NULL but num_exclude_engines is ",
                  o.num_exclude_engines);
  for (int i = 0; i < o.num_exclude_engines; ++i) {
    if (o.exclude_engines[i] < 0)
      fail_argument("build options: exclude_engines[", i, "] is ", o.exclude_engines[i],
                    "; engine ids are >= 0");
    b.exclude_engines.push_back(o.exclude_engines[i]);
  }
  std::sort(b.exclude_engines.begin(), b.exclude_engines.end());
  b.exclude_engines.erase(std::unique(b.exclude_engines.begin(), b.exclude_engines.end()),
                          b.exclude_engines.end());
  if (o.max_plans < 0)
    fail_argument("build options: max_plans is ", o.max_plans, "; expected >= 0");
  b.max_plans = o.max_plans;
  if (o.disable_plan_cache != 0 && o.disable_plan_cache != 1)
    fail_argument("build options: disable_plan_cache is ", o.disable_plan_cache,
                  "; expected 0 or 1");
  b.use_plan_cache = o.disable_plan_cache == 0;
  if (o.plan_cache_dir) {
    b.plan_cache_dir = o.plan_cache_dir;
  } else if (const char *env = std::getenv("CUDNNFE_PLAN_CACHE_DIR")) {
    b.plan_cache_dir = env;
  }
  if (!b.use_plan_cache) b.plan_cache_dir.clear();
  if (o.override_shape_enabled != 0 && o.override_shape_enabled != 1)
    fail_argument("build options: override_shape_enabled is ", o.override_shape_enabled,
                  "; expected 0 or 1");
  b.override_shape_enabled = o.override_shape_enabled == 1;
  if (o.dynamic_shape_enabled != 0 && o.dynamic_shape_enabled != 1)
    fail_argument("build options: dynamic_shape_enabled is ", o.dynamic_shape_enabled,
                  "; expected 0 or 1");
  b.dynamic_shape_enabled = o.dynamic_shape_enabled == 1;
  if (o.kernel_cache) b.kernel_cache = kernel_cache_of(o.kernel_cache);
  b.requested_target = b.target;
  for (auto [value, what] : {std::pair{o.sm_count, "sm_count"}, {o.sm_version, "sm_version"}})
    if (value < 0)
      fail_argument("build options: ", what, " is ", value, "; expected 0 (the GPU's) or more");
  b.sm_count = o.sm_count;
  b.sm_version = o.sm_version;
  if (o.device_properties) {
    if (b.target == CUDNNFE_TARGET_CPU_REFERENCE)
      fail_argument(
          "build options: device_properties describe a GPU to build for without one, but the "
          "target is CPU_REFERENCE, which does not use them; use target AUTO or GPU, or leave "
          "device_properties NULL");
    b.device_properties = device_properties_of(o.device_properties);
    b.target = CUDNNFE_TARGET_GPU;  // AUTO must not fall back to the CPU without a GPU
  }
  b.verify = resolve_verify_settings(o.verify, o.verify_samples, o.verify_rtol);
  return b;
}

// The handle of a build or check_support: NULL, or h's. A build from device
// properties uses no GPU, so it takes none.
Handle *build_handle(cudnnfe_handle_t *h, const BuildOptions &b, const char *call) {
  Handle *handle = h ? &handle_of(h) : nullptr;
  if (handle && b.device_properties)
    fail_argument(call,
                  ": a handle and build options' device_properties were both given; a build from "
                  "device properties uses no GPU, so pass handle NULL (give the handle to "
                  "cudnnfe_graph_deserialize_plan on the GPU instead)");
  return handle;
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_validate(cudnnfe_graph_t *g) {
  return cudnnfe_graph_validate_for_build(g, nullptr, nullptr);
}

cudnnfe_status_t cudnnfe_graph_validate_for_build(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                                  const cudnnfe_build_options_t *options) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    const BuildOptions b =
        to_build_options(read_options(options, cudnnfe_build_options_init_sized, "build options"));
    graph.validate(support_target(h ? &handle_of(h) : nullptr, b));
  });
}

cudnnfe_status_t cudnnfe_graph_build(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                     const cudnnfe_build_options_t *options) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    BuildOptions b =
        to_build_options(read_options(options, cudnnfe_build_options_init_sized, "build options"));
    Handle *handle = build_handle(h, b, "build");
    // Validation and target: src/exec/build_graph.cpp; GPU plan caches and
    // heuristics: src/backend/gpu_plan_cache.cpp.
    try {
      build_graph(graph, handle, std::move(b));
    } catch (const Error &e) {
      graph.set_build_failure(cat(status_name(e.status()), ": ", e.message()));
      throw;
    } catch (const std::bad_alloc &) {
      graph.set_build_failure("out of host memory");
      throw;
    }
  });
}

cudnnfe_status_t cudnnfe_graph_check_support(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                             const cudnnfe_build_options_t *options,
                                             int64_t *num_configs) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    BuildOptions b = to_build_options(
        read_options(options, cudnnfe_build_options_init_sized, "check_support options"));
    Handle *handle = build_handle(h, b, "check_support");
    const cudnnfe_graph &record = *find_graph(g);  // live: graph_of found it
    record.checked_configs.clear();
    record.checked_fingerprint.clear();
    std::vector<OfferedConfig> configs = check_graph_support(graph, handle, std::move(b));
    record.checked_fingerprint = plan::graph_fingerprint(graph);
    record.checked_configs = std::move(configs);
    if (num_configs) *num_configs = static_cast<int64_t>(record.checked_configs.size());
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
