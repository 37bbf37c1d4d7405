// Plan control: plan count, info and selection; autotune; build info and
// the plan caches; built plans serialized; CUDA graphs.
#include <cstring>

#include "api/guard.h"
#include "api/resolve_bindings.h"
#include "backend/autotune.h"
#include "backend/gpu_plan.h"
#include "backend/gpu_plan_cache.h"
#include "exec/build_graph.h"
#include "plan/fingerprint.h"
#include "plan/recorded_plan.h"

using namespace cudnnfe;

namespace {

// Copies `src` into the caller's output struct up to its struct_size.
template <class Out>
void write_out(Out *dst, const Out &src, const char *what) {
  require_out(dst, what);
  if (dst->struct_size < sizeof(size_t) || dst->struct_size > sizeof(Out))
    fail_argument(what, ": struct_size is ", dst->struct_size, "; this library accepts ",
                  sizeof(size_t), " to ", sizeof(Out), " (call the struct's init function first)");
  const size_t n = dst->struct_size;
  std::memcpy(reinterpret_cast<char *>(dst) + sizeof(size_t),
              reinterpret_cast<const char *>(&src) + sizeof(size_t), n - sizeof(size_t));
}

size_t plan_index(const Graph &graph, const RecordedPlan &plan, int64_t index) {
  const size_t count = plan.plan_count();
  if (index < 0 || static_cast<uint64_t>(index) >= count)
    fail_argument("graph \"", graph.name, "\": plan index ", index, " is out of range; it has ",
                  count, " plan", count == 1 ? "" : "s",
                  count == 1 ? " (build with CUDNNFE_BUILD_POLICY_ALL for more)" : "");
  return static_cast<size_t>(index);
}

const backend::GpuPlan &gpu_plan_of(const Graph &graph, const char *what) {
  const backend::GpuPlan *plan = dynamic_cast<const backend::GpuPlan *>(&recorded_plan(graph));
  if (!plan)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "graph \"", graph.name,
         "\" was built for the CPU reference; ", what, " needs a GPU plan");
  return *plan;
}

cudnnfe_status_t cuda_graph_call(bool update, const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                 const cudnnfe_binding_t *bindings, size_t num_bindings,
                                 void *workspace, size_t workspace_size, void *cuda_graph) {
  return guard_handle(h, [&](Handle &handle) {
    const Graph &graph = graph_of(g);
    const backend::GpuPlan &plan = gpu_plan_of(graph, "a CUDA graph");
    if (!cuda_graph) fail_argument("cuda_graph is NULL");
    void *data[kMaxBoundTensors];
    resolve_bindings(graph, bindings, num_bindings, data);
    const int64_t needed = plan.workspace_size();
    if (static_cast<int64_t>(workspace_size) < needed || (needed > 0 && !workspace))
      fail_argument("graph \"", graph.name, "\": workspace of ", workspace_size, " bytes (",
                    workspace ? "" : "NULL, ", "the plan needs ", needed, ")");
    plan.cuda_graph(update, handle, data, workspace, cuda_graph);
  });
}

}  // namespace

void cudnnfe_plan_info_init_sized(cudnnfe_plan_info_t *info, size_t struct_size) {
  init_sized(info, struct_size, [](cudnnfe_plan_info_t *info) {
    info->engine_id = -1;
    info->autotune_time_ms = -1;
  });
}

cudnnfe_status_t cudnnfe_graph_get_plan_count(const cudnnfe_graph_t *g, int64_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    *count = static_cast<int64_t>(recorded_plan(graph).plan_count());
  });
}

cudnnfe_status_t cudnnfe_graph_get_plan_info(const cudnnfe_graph_t *g, int64_t index,
                                             cudnnfe_plan_info_t *info) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(info, "info");
    const RecordedPlan &plan = recorded_plan(graph);
    const size_t i = plan_index(graph, plan, index);
    const PlanEntry e = plan.entry(i);
    cudnnfe_plan_info_t out;
    cudnnfe_plan_info_init(&out);
    out.name = e.name->c_str();
    out.engine_id = e.engine_id;
    out.workspace_size = e.workspace_size;
    out.numerical_notes = e.numerical_notes;
    out.behavior_notes = e.behavior_notes;
    out.autotune_time_ms = e.autotune_time_ms;
    out.selected = plan.selected() == i ? 1 : 0;
    out.chosen_by_autotune = e.chosen_by_autotune ? 1 : 0;
    write_out(info, out, "plan info");
  });
}

cudnnfe_status_t cudnnfe_graph_get_checked_config_info(const cudnnfe_graph_t *g, int64_t index,
                                                       cudnnfe_plan_info_t *info) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(info, "info");
    const cudnnfe_graph &record = *find_graph(g);  // live: graph_of found it
    if (record.checked_configs.empty() ||
        record.checked_fingerprint != plan::graph_fingerprint(graph))
      fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", graph.name, "\": ",
           record.checked_configs.empty()
               ? "cudnnfe_graph_check_support has not found configurations"
               : "the graph changed since cudnnfe_graph_check_support",
           "; call it first");
    const size_t count = record.checked_configs.size();
    if (index < 0 || static_cast<uint64_t>(index) >= count)
      fail_argument("graph \"", graph.name, "\": configuration index ", index,
                    " is out of range; check_support found ", count);
    const OfferedConfig &c = record.checked_configs[static_cast<size_t>(index)];
    cudnnfe_plan_info_t out;
    cudnnfe_plan_info_init(&out);
    out.name = c.name.c_str();
    out.engine_id = c.engine_id;
    out.workspace_size = -1;
    out.numerical_notes = c.numerical_notes;
    out.behavior_notes = c.behavior_notes;
    write_out(info, out, "plan info");
  });
}

cudnnfe_status_t cudnnfe_graph_select_plan(cudnnfe_graph_t *g, int64_t index) {
  return guard_graph(g, [&](Graph &graph) {
    RecordedPlan &plan = recorded_plan(graph);
    plan.select(plan_index(graph, plan, index));
  });
}

cudnnfe_status_t cudnnfe_graph_get_selected_plan(const cudnnfe_graph_t *g, int64_t *index) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(index, "index");
    *index = static_cast<int64_t>(recorded_plan(graph).selected());
  });
}

void cudnnfe_autotune_options_init_sized(cudnnfe_autotune_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_autotune_options_t *o) {
    const backend::AutotuneOptions defaults;
    o->warmup_iterations = defaults.warmup;
    o->min_iterations = defaults.min_samples;
    o->max_iterations = defaults.max_samples;
    o->tolerance = defaults.tolerance;
    o->max_ms_per_plan = defaults.max_ms_per_plan;
  });
}

cudnnfe_status_t cudnnfe_graph_autotune(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                        const cudnnfe_binding_t *bindings, size_t num_bindings,
                                        void *workspace, size_t workspace_size, void *stream,
                                        const cudnnfe_autotune_options_t *options) {
  return guard_graph(g, [&](Graph &graph) {
    const cudnnfe_autotune_options_t o =
        read_options(options, cudnnfe_autotune_options_init_sized, "autotune options");
    if (o.warmup_iterations < 0 || o.warmup_iterations > 1000)
      fail_argument("autotune options: warmup_iterations is ", o.warmup_iterations,
                    "; expected 0 to 1000");
    if (o.min_iterations < 1 || o.max_iterations < o.min_iterations || o.max_iterations > 100000)
      fail_argument("autotune options: min_iterations ", o.min_iterations, " and max_iterations ",
                    o.max_iterations, " must satisfy 1 <= min <= max <= 100000");
    if (!(o.tolerance >= 0 && o.tolerance < 1))
      fail_argument("autotune options: tolerance is ", o.tolerance, "; expected 0 <= t < 1");
    if (!(o.max_ms_per_plan > 0))
      fail_argument("autotune options: max_ms_per_plan is ", o.max_ms_per_plan, "; expected > 0");
    Handle &handle = handle_of(h);
    gpu_plan_of(graph, "autotune");
    if (!bindings && num_bindings)
      fail_argument("bindings is NULL but num_bindings is ", num_bindings);
    if (!workspace && workspace_size)
      fail_argument("workspace is NULL but workspace_size is ", workspace_size,
                    " (NULL asks the library to allocate it: pass 0)");
    void *data[kMaxBoundTensors];
    const bool scratch = !bindings;
    if (!scratch) resolve_bindings(graph, bindings, num_bindings, data);
    backend::AutotuneOptions a;
    a.warmup = o.warmup_iterations;
    a.min_samples = o.min_iterations;
    a.max_samples = o.max_iterations;
    a.tolerance = o.tolerance;
    a.max_ms_per_plan = o.max_ms_per_plan;
    backend::autotune(graph, handle, scratch ? nullptr : data, workspace, workspace_size, stream,
                      a);
  });
}

void cudnnfe_build_info_init_sized(cudnnfe_build_info_t *info, size_t struct_size) {
  init_sized(info, struct_size, [](cudnnfe_build_info_t *) {});
}

cudnnfe_status_t cudnnfe_graph_get_build_info(const cudnnfe_graph_t *g,
                                              cudnnfe_build_info_t *info) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(info, "info");
    const BuildRecord &r = recorded_plan(graph).record;
    cudnnfe_build_info_t out;
    cudnnfe_build_info_init(&out);
    out.source = r.source;
    out.total_ms = r.total_ms;
    out.validate_ms = r.validate_ms;
    out.cache_ms = r.cache_ms;
    out.lower_ms = r.lower_ms;
    out.heuristics_ms = r.heuristics_ms;
    out.plan_build_ms = r.plan_build_ms;
    write_out(info, out, "build info");
  });
}

cudnnfe_status_t cudnnfe_graph_get_fingerprint(const cudnnfe_graph_t *g, char *buffer,
                                               size_t capacity) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(buffer, "buffer");
    if (capacity < CUDNNFE_FINGERPRINT_SIZE)
      fail_argument("capacity ", capacity, " is too small; a fingerprint needs ",
                    CUDNNFE_FINGERPRINT_SIZE, " (CUDNNFE_FINGERPRINT_SIZE)");
    const std::string f = plan::graph_fingerprint(graph);
    std::memcpy(buffer, f.c_str(), f.size() + 1);
  });
}

void cudnnfe_plan_cache_stats_init_sized(cudnnfe_plan_cache_stats_t *stats, size_t struct_size) {
  init_sized(stats, struct_size, [](cudnnfe_plan_cache_stats_t *) {});
}

cudnnfe_status_t cudnnfe_plan_cache_get_stats(cudnnfe_plan_cache_stats_t *stats) {
  return guard([&] {
    const backend::CacheStats s = backend::cache_stats();
    cudnnfe_plan_cache_stats_t out;
    cudnnfe_plan_cache_stats_init(&out);
    out.entries = s.entries;
    out.hits = s.hits;
    out.misses = s.misses;
    out.disk_hits = s.disk_hits;
    out.disk_writes = s.disk_writes;
    out.disk_errors = s.disk_errors;
    write_out(stats, out, "plan cache stats");
  });
}

cudnnfe_status_t cudnnfe_plan_cache_clear(void) {
  return guard([] { backend::clear_cache(); });
}

cudnnfe_status_t cudnnfe_graph_serialize_plan(const cudnnfe_graph_t *g, char *buffer,
                                              size_t capacity, size_t *size) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(size, "size");
    const std::string blob = serialize_plan(graph);
    if (buffer) {
      if (capacity < blob.size())
        fail_argument("capacity ", capacity, " is too small; the plan has ", blob.size(), " bytes");
      std::memcpy(buffer, blob.data(), blob.size());
    }
    *size = blob.size();
  });
}

void cudnnfe_plan_load_options_init_sized(cudnnfe_plan_load_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_plan_load_options_t *) {});
}

cudnnfe_status_t cudnnfe_graph_deserialize_plan(cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                                const char *data, size_t size,
                                                const cudnnfe_plan_load_options_t *options) {
  return guard_graph(g, [&](Graph &graph) {
    const cudnnfe_plan_load_options_t o =
        read_options(options, cudnnfe_plan_load_options_init_sized, "plan load options");
    if (o.rebuild_on_mismatch != 0 && o.rebuild_on_mismatch != 1)
      fail_argument("plan load options: rebuild_on_mismatch is ", o.rebuild_on_mismatch,
                    "; expected 0 or 1");
    if (!data && size) fail_argument("data is NULL");
    graph.require_mutable();
    if (!graph.tensors().empty() || !graph.nodes().empty())
      fail_argument("graph \"", graph.name,
                    "\" is not empty; load a plan into a freshly created graph");
    Handle *handle = h ? &handle_of(h) : nullptr;
    load_plan(graph, handle, data, size, o.rebuild_on_mismatch == 1);
  });
}

cudnnfe_status_t cudnnfe_graph_populate_cuda_graph(const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                                   const cudnnfe_binding_t *bindings,
                                                   size_t num_bindings, void *workspace,
                                                   size_t workspace_size, void *cuda_graph) {
  return cuda_graph_call(false, g, h, bindings, num_bindings, workspace, workspace_size,
                         cuda_graph);
}

cudnnfe_status_t cudnnfe_graph_update_cuda_graph(const cudnnfe_graph_t *g, cudnnfe_handle_t *h,
                                                 const cudnnfe_binding_t *bindings,
                                                 size_t num_bindings, void *workspace,
                                                 size_t workspace_size, void *cuda_graph) {
  return cuda_graph_call(true, g, h, bindings, num_bindings, workspace, workspace_size, cuda_graph);
}
