// The frontend's part of the workspace: non-virtual tensors a lowering keeps
// for itself (composite SDPA backward's softmax_sum and dQ accumulator).
// The caller's workspace is split: the frontend's tensors first, each at a
// 256-byte aligned offset, then cuDNN's workspace at the next 256-byte
// boundary. The plan's workspace size covers both; execute binds each
// frontend tensor to its slice (no allocation on execute).
//
// How a plan builder supports it (lower_graph in gpu_plan_build.cpp, and
// PlanSet):
//   1. lowering.allow_workspace_tensors() before lowering (without it a
//      lowering that needs such tensors is refused with NOT_SUPPORTED);
//   2. the variant pack's UIDs list the frontend tensors after the graph's;
//   3. workspace size = FrontendWorkspace::total(backend plan's workspace size);
//   4. at execute, bind(data, graph_bound, workspace, pointers) makes the
//      bound pointer table and returns cuDNN's workspace pointer.
#pragma once

#include <vector>

#include "backend/lowering.h"

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

}  // namespace cudnnfe::backend
