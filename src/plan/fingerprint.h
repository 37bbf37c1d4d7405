// What identifies a plan: the graph's canonical description (its JSON
// without names) and the build options that change which plans are made.
#pragma once

#include <string>

#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe::plan {

// The graph JSON (docs/graph-json.md) without graph, node and tensor
// names: what cuDNN sees (structure, UIDs, shapes, strides, types,
// attributes, scalar values).
std::string canonical_graph(const Graph &graph);

// hash128_hex(canonical_graph(graph)): cudnnfe_graph_get_fingerprint.
std::string graph_fingerprint(const Graph &graph);

// The options that decide which plans a GPU build makes (policy, filters,
// heuristics modes), as text; cache and target settings are not part of it.
std::string options_key(const BuildOptions &options);

// The persistent cache's key: 32 hex digits of the graph, the options, the
// GPU architecture and name and the cuDNN version.
std::string plan_key(const std::string &canonical, const BuildOptions &options, int sm,
                     const std::string &device_name, int64_t cudnn_version);

}  // namespace cudnnfe::plan
