// The default bound execution (Plan::bind): for plans with no bound form of
// their own, the CPU reference among them, each run calls execute() on the
// pointers given at bind. It makes no CUDA graph.
#include <vector>

#include "core/error.h"
#include "plan/plan.h"

namespace cudnnfe {
namespace {

class PlainBoundRun final : public BoundRun {
 public:
  PlainBoundRun(const Plan &plan, void *const *data, size_t count, void *workspace)
      : plan_(plan), data_(data, data + count), workspace_(workspace) {}
  void run(Handle &handle, void *stream) override {
    plan_.execute(handle, data_.data(), workspace_, stream);
  }

 private:
  const Plan &plan_;  // the graph owns it; the bound execution checks it is still there
  std::vector<void *> data_;
  void *workspace_;
};

}  // namespace

std::unique_ptr<BoundRun> Plan::bind(Handle &handle, void *const *data, size_t count,
                                     void *workspace, cudnnfe_cuda_graph_mode_t mode) const {
  (void)handle;
  if (mode != CUDNNFE_CUDA_GRAPH_OFF)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "plan ", name(),
         " cannot run as a CUDA graph; bind with cuda_graph = CUDNNFE_CUDA_GRAPH_OFF");
  return std::make_unique<PlainBoundRun>(*this, data, count, workspace);
}

}  // namespace cudnnfe
