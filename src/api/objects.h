// The C-visible objects behind the opaque pointers, and how a pointer from
// the caller is checked before use.
//
// The pointer a caller holds is a token, not the object's address: an
// address in a reserved range that is never mapped, so nothing else in the
// process has it and it is never dereferenced. Tokens are handed out in
// increasing order and not reused until the range wraps (2^32 creations;
// fewer only where the address space is limited), skipping live ones, so a
// pointer kept after destroy stays refused even after other objects were
// created and destroyed in between.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan.h"

// The records behind the tokens; the C header declares these names only as
// incomplete types, and a token's value is never the record's address.
struct cudnnfe_graph {
  cudnnfe::Graph *impl = nullptr;
  // What the last cudnnfe_graph_check_support found, and the fingerprint of
  // the graph it was found for (a changed graph has none).
  // Written under the graph's calls (not its execute), like the graph itself.
  mutable std::vector<cudnnfe::OfferedConfig> checked_configs;
  mutable std::string checked_fingerprint;
  // Message of the last failing call on this graph; the mutex is taken only
  // on failure and by the reader, never on the execute path.
  mutable std::mutex error_mutex;
  mutable std::string last_error;
};

struct cudnnfe_kernel_cache {
  std::shared_ptr<cudnnfe::backend::KernelCache> impl;
};

struct cudnnfe_device_properties {
  std::shared_ptr<const cudnnfe::backend::DeviceProperties> impl;
};

struct cudnnfe_handle {
  cudnnfe::Handle *impl = nullptr;
};

// A bound execution (cudnnfe_graph_bind): the tokens of its graph and
// handle, checked at every run, and the plan's bound form.
struct cudnnfe_bound {
  const cudnnfe_graph *graph = nullptr;
  cudnnfe_handle *handle = nullptr;
  uint64_t plan_serial = 0;  // the graph's plan at bind (Graph::plan_serial)
  std::unique_ptr<cudnnfe::BoundRun> impl;
};

namespace cudnnfe {

// Registers a new record (taking ownership of it) and returns its token.
cudnnfe_graph *register_graph(Graph *impl);
cudnnfe_handle *register_handle(Handle *impl);
// Unregisters the live object behind `token` and returns its record (the
// caller deletes record->impl); INVALID_ARGUMENT naming the pointer when it
// is not live.
std::unique_ptr<cudnnfe_graph> unregister_graph(const cudnnfe_graph *token);
std::unique_ptr<cudnnfe_handle> unregister_handle(const cudnnfe_handle *token);

// The record behind a token, or nullptr for NULL, destroyed or foreign ones.
const cudnnfe_graph *find_graph(const cudnnfe_graph *token);
cudnnfe_handle *find_handle(const cudnnfe_handle *token);

// The object behind a token; INVALID_ARGUMENT for NULL, destroyed or foreign.
const cudnnfe_graph &graph_record(const cudnnfe_graph *token);
Graph &graph_of(const cudnnfe_graph *token);
Handle &handle_of(const cudnnfe_handle *token);

// Kernel caches (backend/kernel_cache.h) have tokens too.
cudnnfe_kernel_cache *register_kernel_cache(std::shared_ptr<backend::KernelCache> impl);
std::unique_ptr<cudnnfe_kernel_cache> unregister_kernel_cache(const cudnnfe_kernel_cache *token);
// The cache behind a token (shared with the plans that use it);
// INVALID_ARGUMENT for NULL, destroyed or foreign.
std::shared_ptr<backend::KernelCache> kernel_cache_of(const cudnnfe_kernel_cache *token);

// Device properties (backend/device_properties.h) have tokens too.
cudnnfe_device_properties *register_device_properties(
    std::shared_ptr<const backend::DeviceProperties> impl);
std::unique_ptr<cudnnfe_device_properties> unregister_device_properties(
    const cudnnfe_device_properties *token);
// The properties behind a token (shared with the builds that use them);
// INVALID_ARGUMENT for NULL, destroyed or foreign.
std::shared_ptr<const backend::DeviceProperties> device_properties_of(
    const cudnnfe_device_properties *token);

// Bound executions have tokens too. find_bound: nullptr for NULL,
// destroyed or foreign tokens.
cudnnfe_bound *register_bound(std::unique_ptr<cudnnfe_bound> record);
std::unique_ptr<cudnnfe_bound> unregister_bound(const cudnnfe_bound *token);
cudnnfe_bound *find_bound(const cudnnfe_bound *token);

}  // namespace cudnnfe
