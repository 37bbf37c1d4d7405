// The frontend's part of the workspace: non-virtual tensors a lowering keeps
// for itself (composite SDPA backward's softmax_sum and dQ accumulator).
// The caller's workspace is split: the frontend's tensors first, each at a
// 256-byte aligned offset, then cuDNN's workspace at the next 256-byte
// boundary. The plan's workspace size covers both; execute binds each
// frontend tensor to its slice (no allocation on execute).
//
// How a plan builder supports it (lower_graph and GpuPlan):
//   1. lowering.allow_workspace_tensors() before lowering (without it a
//      lowering that needs such tensors is refused with NOT_SUPPORTED);
//   2. the variant pack's bound UIDs are plan_bound_uids(graph, lowering):
//      the graph's, then the frontend tensors';
//   3. workspace size = layout.total(backend plan's workspace size);
//   4. at execute, layout.bind(data, graph_bound, workspace, pointers)
//      makes the bound pointer table and returns cuDNN's workspace pointer.
#pragma once

#include <memory>
#include <vector>

#include "backend/lowering.h"
#include "exec/plan.h"

namespace cudnnfe::backend {

struct FrontendWorkspace {
  std::vector<WorkspaceTensor> tensors;
  int64_t bytes = 0;  // the frontend's part, before cuDNN's

  static FrontendWorkspace of(const Lowering &lowering);
  bool empty() const { return tensors.empty(); }
  // Where cuDNN's workspace starts.
  int64_t backend_offset() const;
  // Total workspace for a backend plan that needs `backend_bytes`.
  int64_t total(int64_t backend_bytes) const { return backend_offset() + backend_bytes; }
  // Copies the graph's `graph_bound` pointers, appends the frontend tensors'
  // slices of `workspace`, and returns cuDNN's part of `workspace`.
  void *bind(void *const *data, size_t graph_bound, void *workspace, void **pointers) const;
};

// The variant pack's bound UIDs: the graph's, then the frontend tensors'.
std::vector<int64_t> plan_bound_uids(const Graph &graph, const Lowering &lowering);

// Wraps a plan built with plan_bound_uids() whose execute takes the full
// pointer table (graph's + frontend's) and cuDNN's workspace: the wrapper
// takes the graph's pointers and the caller's whole workspace. Returns
// `plan` itself when the lowering has no frontend tensors.
std::unique_ptr<Plan> with_frontend_workspace(std::unique_ptr<Plan> plan, const Graph &graph,
                                              const Lowering &lowering);

}  // namespace cudnnfe::backend
