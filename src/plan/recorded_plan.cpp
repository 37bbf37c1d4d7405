#include "plan/recorded_plan.h"

#include "core/error.h"
#include "cpu/cpu_plan.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace {

class CpuReferencePlan final : public RecordedPlan {
 public:
  explicit CpuReferencePlan(std::unique_ptr<Plan> inner) : inner_(std::move(inner)) {}
  cudnnfe_target_t target() const override { return inner_->target(); }
  int64_t workspace_size() const override { return inner_->workspace_size(); }
  const std::string &name() const override { return inner_->name(); }
  void execute(Handle &handle, void *const *data, void *workspace, void *stream) const override {
    inner_->execute(handle, data, workspace, stream);
  }

 private:
  std::unique_ptr<Plan> inner_;
};

}  // namespace

PlanEntry RecordedPlan::entry(size_t index) const {
  (void)index;
  PlanEntry e;
  e.name = &name();
  e.workspace_size = workspace_size();
  return e;
}

std::unique_ptr<RecordedPlan> make_cpu_reference_plan(const Graph &graph) {
  return std::make_unique<CpuReferencePlan>(build_cpu_plan(graph));
}

const RecordedPlan &recorded_plan(const Graph &graph) {
  const Plan &plan = graph.plan();
  const RecordedPlan *recorded = dynamic_cast<const RecordedPlan *>(&plan);
  if (!recorded)
    fail(CUDNNFE_STATUS_INTERNAL, "graph \"", graph.name, "\": its plan carries no build record");
  return *recorded;
}

RecordedPlan &recorded_plan(Graph &graph) {
  // Plans are created non-const and owned by the graph: casting back is safe.
  return const_cast<RecordedPlan &>(recorded_plan(static_cast<const Graph &>(graph)));
}

}  // namespace cudnnfe
