// The build entry point of the C API and the plan caches. A build:
// validates, resolves the target and, for the GPU, looks the graph up in the
// in-process cache (key: canonical graph, options, device, cuDNN version),
// then in the cache directory, and only then runs heuristics and the plan
// search. Plan blobs (serialized plans) load through here too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/recorded_plan.h"

namespace cudnnfe::backend {

class GpuPlan;

// Validates and builds `graph` (cudnnfe_graph_build).
void build_graph(Graph &graph, Handle *handle, BuildOptions options);

// The built graph's plan blob (cudnnfe_graph_serialize_plan).
std::string serialize_plan(const Graph &graph);

// Loads a plan blob into the empty `graph` and builds it
// (cudnnfe_graph_deserialize_plan). On failure `graph` is left empty.
void load_plan(Graph &graph, Handle *handle, const char *data, size_t size,
               bool rebuild_on_mismatch);

// After autotune changed `plan`'s selection: the caches remember it (and the
// cache directory's file is rewritten when the build used one).
void remember_selection(const Graph &graph, const GpuPlan &plan);

struct CacheStats {
  int64_t entries = 0, hits = 0, misses = 0, disk_hits = 0, disk_writes = 0, disk_errors = 0;
};
CacheStats cache_stats();
void clear_cache();

}  // namespace cudnnfe::backend
