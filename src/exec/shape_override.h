// Execute-time shapes (cudnnfe_graph_execute_with_overrides): reading and
// checking the caller's overrides against a built graph, and running the CPU
// reference with them. The GPU side is GpuPlan::execute_overridden.
#pragma once

#include <vector>

#include "core/c_api.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe {

// The overrides as C++ values, checked: the graph was built with
// override_shape_enabled, each UID is a bound tensor given once, ranks
// match, dims are positive and strides non-negative. Throws naming the
// tensor and the rule.
std::vector<ShapeOverride> read_shape_overrides(const Graph &graph,
                                                const cudnnfe_shape_override_t *overrides,
                                                size_t count);

// Runs the CPU reference on a copy of `graph` whose shapes are inferred again
// from the overridden ones. Throws INVALID_ARGUMENT when a bound tensor's
// shape would change without an override, or an overridden output's shape is
// not the one its op makes.
void execute_cpu_overridden(const Graph &graph, Handle &handle, void *const *data,
                            const std::vector<ShapeOverride> &overrides);

}  // namespace cudnnfe
