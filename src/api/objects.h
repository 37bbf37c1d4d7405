// The C-visible objects behind the opaque pointers, and how a pointer from
// the caller is checked before use.
//
// Graph and handle objects are allocated from slot pools that never return
// memory to the system: a destroyed object's slot keeps a "dead" tag, so a
// stale pointer is reported instead of read after free (also under ASan).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan.h"

struct cudnnfe_graph {
  uint64_t tag = 0;
  cudnnfe::Graph *impl = nullptr;
  // Message of the last failing call on this graph; the mutex is taken only
  // on failure and by the reader, never on the execute path.
  mutable std::mutex error_mutex;
  mutable std::string last_error;
};

struct cudnnfe_kernel_cache {
  uint64_t tag = 0;
  std::shared_ptr<cudnnfe::backend::KernelCache> impl;
};

struct cudnnfe_handle {
  uint64_t tag = 0;
  cudnnfe::Handle *impl = nullptr;
};

namespace cudnnfe {

constexpr uint64_t kLiveGraphTag = 0x4846454e44554347ull;   // "GCUDNEFH"
constexpr uint64_t kLiveHandleTag = 0x4c444e4148454655ull;  // "UFEHANDL"
constexpr uint64_t kDeadTag = 0xdeaddeaddeaddeadull;

cudnnfe_graph *acquire_graph_slot();
void release_graph_slot(cudnnfe_graph *slot);
cudnnfe_handle *acquire_handle_slot();
void release_handle_slot(cudnnfe_handle *slot);

inline bool is_live(const cudnnfe_graph *g) {
  return g && g->tag == kLiveGraphTag;
}
inline bool is_live(const cudnnfe_handle *h) {
  return h && h->tag == kLiveHandleTag;
}

// The graph behind `g`; INVALID_ARGUMENT for NULL, destroyed or foreign.
Graph &graph_of(const cudnnfe_graph *g);
// The cache behind `c` (shared with the plans that use it); INVALID_ARGUMENT
// for NULL, destroyed or foreign.
std::shared_ptr<backend::KernelCache> kernel_cache_of(const cudnnfe_kernel_cache *c);
constexpr uint64_t kLiveKernelCacheTag = 0x4548434143454b55ull;  // "UKECACHE"
Handle &handle_of(const cudnnfe_handle *h);

}  // namespace cudnnfe
