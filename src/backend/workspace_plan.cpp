#include "backend/workspace_plan.h"

#include "core/error.h"

namespace cudnnfe::backend {
namespace {

constexpr int64_t kAlign = 256;

int64_t align_up(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

class FrontendWorkspacePlan final : public Plan {
 public:
  FrontendWorkspacePlan(std::unique_ptr<Plan> inner, size_t graph_bound, FrontendWorkspace layout)
      : inner_(std::move(inner)), graph_bound_(graph_bound), layout_(std::move(layout)) {
    if (graph_bound_ + layout_.tensors.size() > kMaxBoundTensors)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the plan has ", graph_bound_, " bound tensors and ",
           layout_.tensors.size(), " workspace tensors; at most ", kMaxBoundTensors, " in all");
  }

  cudnnfe_target_t target() const override { return inner_->target(); }
  int64_t workspace_size() const override { return layout_.total(inner_->workspace_size()); }
  const std::string &name() const override { return inner_->name(); }

  void execute(Handle &handle, void *const *data, void *workspace, void *stream) const override {
    void *pointers[kMaxBoundTensors];
    void *backend = layout_.bind(data, graph_bound_, workspace, pointers);
    inner_->execute(handle, pointers, backend, stream);
  }

 private:
  std::unique_ptr<Plan> inner_;
  size_t graph_bound_;
  FrontendWorkspace layout_;
};

}  // namespace

FrontendWorkspace FrontendWorkspace::of(const Lowering &lowering) {
  FrontendWorkspace w;
  w.tensors = lowering.workspace_tensors();
  w.bytes = lowering.frontend_workspace_bytes();
  return w;
}

int64_t FrontendWorkspace::backend_offset() const {
  return empty() ? 0 : align_up(bytes);
}

void *FrontendWorkspace::bind(void *const *data, size_t graph_bound, void *workspace,
                              void **pointers) const {
  for (size_t i = 0; i < graph_bound; ++i) pointers[i] = data[i];
  char *base = static_cast<char *>(workspace);
  for (size_t i = 0; i < tensors.size(); ++i) pointers[graph_bound + i] = base + tensors[i].offset;
  return empty() ? workspace : base + backend_offset();
}

std::vector<int64_t> plan_bound_uids(const Graph &graph, const Lowering &lowering) {
  std::vector<int64_t> uids = graph.bound_uids();
  for (const WorkspaceTensor &t : lowering.workspace_tensors()) uids.push_back(t.uid);
  return uids;
}

std::unique_ptr<Plan> with_frontend_workspace(std::unique_ptr<Plan> plan, const Graph &graph,
                                              const Lowering &lowering) {
  if (lowering.workspace_tensors().empty()) return plan;
  return std::make_unique<FrontendWorkspacePlan>(std::move(plan), graph.bound_uids().size(),
                                                 FrontendWorkspace::of(lowering));
}

}  // namespace cudnnfe::backend
