// The caller's (uid, pointer) bindings as the pointer table a plan executes
// with: execute (api_execute.cpp) and autotune (api_plans.cpp) share it so
// that both check bindings alike.
#pragma once

#include <cstddef>

#include "core/c_api.h"
#include "graph/graph.h"

namespace cudnnfe {

// Fills data[0 .. bound UIDs) in bound-UID order. INVALID_ARGUMENT for a
// NULL array, an unknown, virtual or scalar UID, a UID bound twice, a NULL
// buffer, or a bound tensor left without a binding (each message names the
// binding and the tensor).
void resolve_bindings(const Graph &graph, const cudnnfe_binding_t *bindings, size_t num_bindings,
                      void **data);

}  // namespace cudnnfe
