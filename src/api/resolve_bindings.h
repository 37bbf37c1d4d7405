// The caller's (uid, pointer) bindings as the pointer table a plan executes
// with, and the checks of ordered pointers and of the workspace: execute
// (api_execute.cpp), bind (api_bound.cpp) and autotune (api_plans.cpp) share
// them so that all check buffers alike.
#pragma once

#include <cstddef>

#include "core/c_api.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe {

// Fills data[0 .. bound UIDs) in bound-UID order. INVALID_ARGUMENT for a
// NULL array, an unknown, virtual or scalar UID, a UID bound twice, a NULL
// buffer, or a bound tensor left without a binding (each message names the
// binding and the tensor).
void resolve_bindings(const Graph &graph, const cudnnfe_binding_t *bindings, size_t num_bindings,
                      void **data);

// Checks pointers given in bound-UID order (cudnnfe_graph_execute_ordered,
// cudnnfe_graph_bind): INVALID_ARGUMENT for a wrong count, a NULL array or a
// NULL pointer (naming its tensor).
void check_ordered(const Graph &graph, void *const *data, size_t count);

// INVALID_ARGUMENT when `workspace` is smaller than the plan needs, or NULL
// while it needs some.
void check_workspace(const Graph &graph, const Plan &plan, void *workspace, size_t workspace_size);

}  // namespace cudnnfe
