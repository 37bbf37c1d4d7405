// A built cuDNN execution plan and everything it needs at execute: the
// descriptors it was made from, the variant pack's UID order, the scalars'
// by-value bytes and the workspace size. Immutable after construction, so
// many threads may execute it at once, each with its own Handle.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "backend/descriptor.h"
#include "backend/lowering.h"
#include "exec/plan.h"

namespace cudnnfe::backend {

// Most pass-by-value scalars one plan may have (execute keeps their
// pointers on the stack beside the bound tensors').
constexpr size_t kMaxScalars = 64;

class GpuPlan final : public Plan {
 public:
  // `bound_uids` are the graph's bound UIDs in execute order.
  GpuPlan(std::deque<Descriptor> descriptors, Descriptor operation_graph, Descriptor plan,
          const std::vector<int64_t> &bound_uids, std::vector<ScalarValue> scalars,
          int64_t workspace_size, std::string name, int device);

  cudnnfe_target_t target() const override { return CUDNNFE_TARGET_GPU; }
  int64_t workspace_size() const override { return workspace_size_; }
  const std::string &name() const override { return name_; }
  void execute(Handle &handle, void *const *data, void *workspace, void *stream) const override;

 private:
  // Declared first so that they are destroyed last: the plan refers to them.
  std::deque<Descriptor> descriptors_;
  Descriptor operation_graph_;
  Descriptor plan_;
  // Bound UIDs, then scalar UIDs: the variant pack's order.
  std::vector<int64_t> uids_;
  size_t bound_count_;
  std::vector<ScalarValue> scalars_;
  int64_t workspace_size_;
  std::string name_;
  int device_;
};

}  // namespace cudnnfe::backend
