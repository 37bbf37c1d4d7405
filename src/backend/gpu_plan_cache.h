// The GPU plan caches: the in-process cache (key: canonical graph, options,
// device, cuDNN version), then the cache directory, and only then the
// heuristics and the plan search; and GPU plans from plan blobs. Which
// target a graph builds for is exec/build_graph.h's choice.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan_blob.h"
#include "plan/recorded_plan.h"

namespace cudnnfe::backend {

class GpuPlan;

// A GPU plan for the validated `graph`: from the in-process cache, the
// cache directory (options.plan_cache_dir) or a new build, by options.
// NOT_SUPPORTED messages end with what the refusal probe found.
std::unique_ptr<GpuPlan> build_gpu_graph_plan(const Graph &graph, Handle *handle,
                                              const BuildOptions &options, BuildRecord &record);

// supported_configurations (backend/gpu_plan_build.h) for the validated
// `graph` on the handle's GPU or the options' device properties; its
// NOT_SUPPORTED message ends with what the refusal probe found.
std::vector<OfferedConfig> check_gpu_support(const Graph &graph, Handle *handle,
                                             const BuildOptions &options);

// The GPU plan a plan blob records, built from its stored engine
// configuration. Null when it was made for another GPU or cuDNN, or no
// longer builds, and `rebuild_on_mismatch` (the caller builds the graph
// again); without it those throw BAD_SERIALIZED_DATA or NOT_SUPPORTED.
std::unique_ptr<GpuPlan> load_gpu_plan(const Graph &graph, Handle *handle,
                                       const plan::PlanRecord &r, bool rebuild_on_mismatch,
                                       BuildRecord &record);

// What a plan blob records of a built plan (the engine configuration and
// timings for a GPU plan; the graph and options for either).
plan::PlanRecord plan_record(const Graph &graph, const RecordedPlan &plan);

// After autotune changed `plan`'s selection: the caches remember it (and the
// cache directory's file is rewritten when the build used one).
void remember_selection(const Graph &graph, const GpuPlan &plan);

// The persistent-cache warm-up's claims (exec/plan_cache_warmup.cpp): it
// announces the directory keys it will load, begins and ends each (false:
// a build took the key over first), and cancels the rest when stopping.
void warmup_announce(const std::vector<std::string> &keys);
bool warmup_begin(const std::string &key);
void warmup_end();
void warmup_cancel();

struct CacheStats {
  int64_t entries = 0, hits = 0, misses = 0, disk_hits = 0, disk_writes = 0, disk_errors = 0;
};
CacheStats cache_stats();
void clear_cache();

}  // namespace cudnnfe::backend
