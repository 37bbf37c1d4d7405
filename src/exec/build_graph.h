// Turning a graph into its plan on a target: validation, the choice between
// the CPU reference and the GPU (backend/gpu_plan_cache.h), and plan blobs
// (docs/plans.md) in both directions. The C functions of api_build.cpp and
// api_plans.cpp call these; how a plan is made is each target's own.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/recorded_plan.h"

namespace cudnnfe {

// What validation holds a graph to when `options` build it with `handle`
// (graph/support_target.h): nothing beyond shapes and types for the CPU
// reference; for a GPU its architecture (options' sm_version when set) and
// the loaded cuDNN's version, as far as they can be read.
SupportTarget support_target(Handle *handle, const BuildOptions &options);

// Validates and builds `graph` (cudnnfe_graph_build).
void build_graph(Graph &graph, Handle *handle, BuildOptions options);

// Validates `graph` as build does and, for a GPU target, finds the engine
// configurations a build could make, building none
// (cudnnfe_graph_check_support); the CPU reference has one, "cpu_reference".
std::vector<OfferedConfig> check_graph_support(Graph &graph, Handle *handle, BuildOptions options);

// The built graph's plan blob (cudnnfe_graph_serialize_plan).
std::string serialize_plan(const Graph &graph);

// Loads a plan blob into the empty `graph` and builds it
// (cudnnfe_graph_deserialize_plan). On failure `graph` is left empty.
void load_plan(Graph &graph, Handle *handle, const char *data, size_t size,
               bool rebuild_on_mismatch);

// Builds the GPU plan blob `data` through the plan caches with `cache_dir`
// (the in-process cache keeps it; plan_cache_warmup.h). Returns false, doing
// nothing, for a CPU plan or one made for another GPU or cuDNN.
bool load_plan_into_cache(Graph &graph, Handle *handle, const char *data, size_t size,
                          const std::string &cache_dir);

}  // namespace cudnnfe
