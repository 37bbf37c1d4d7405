#include "api/objects.h"

#include <vector>

#include "core/error.h"

namespace cudnnfe {
namespace {

template <class Slot>
class SlotPool {
 public:
  Slot *acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (free_.empty()) return new Slot();  // never deleted: see objects.h
    Slot *slot = free_.back();
    free_.pop_back();
    return slot;
  }
  void release(Slot *slot) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(slot);
  }

 private:
  std::mutex mutex_;
  std::vector<Slot *> free_;
};

SlotPool<cudnnfe_graph> &graph_pool() {
  static auto *pool = new SlotPool<cudnnfe_graph>();  // outlives static destructors
  return *pool;
}
SlotPool<cudnnfe_handle> &handle_pool() {
  static auto *pool = new SlotPool<cudnnfe_handle>();
  return *pool;
}

}  // namespace

cudnnfe_graph *acquire_graph_slot() {
  return graph_pool().acquire();
}
void release_graph_slot(cudnnfe_graph *slot) {
  graph_pool().release(slot);
}
cudnnfe_handle *acquire_handle_slot() {
  return handle_pool().acquire();
}
void release_handle_slot(cudnnfe_handle *slot) {
  handle_pool().release(slot);
}

Graph &graph_of(const cudnnfe_graph *g) {
  if (!g) fail_argument("graph is NULL");
  if (g->tag != kLiveGraphTag)
    fail_argument("graph pointer ", static_cast<const void *>(g),
                  " is not a live cudnnfe graph (destroyed, or not from cudnnfe_graph_create)");
  return *g->impl;
}

Handle &handle_of(const cudnnfe_handle *h) {
  if (!h) fail_argument("handle is NULL");
  if (h->tag != kLiveHandleTag)
    fail_argument("handle pointer ", static_cast<const void *>(h),
                  " is not a live cudnnfe handle (destroyed, or not from cudnnfe_handle_create)");
  return *h->impl;
}

}  // namespace cudnnfe
