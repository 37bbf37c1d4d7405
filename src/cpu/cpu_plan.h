// The CPU reference executor: runs every node of a graph with plain loops
// on host buffers. It is what CI runs and the oracle for GPU results.
#pragma once

#include <memory>

#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe {

// `graph` must be validated and must outlive the plan (the graph owns it).
std::unique_ptr<Plan> build_cpu_plan(const Graph &graph);

}  // namespace cudnnfe
