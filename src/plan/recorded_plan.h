// A built plan together with how it was built: every plan a build makes
// (CPU reference or cuDNN) derives from RecordedPlan, which answers the plan
// control queries (count, info, selection) and carries the build record
// (source, per-stage times) and the options the build used.
#pragma once

#include <memory>
#include <string>

#include "plan/plan.h"

namespace cudnnfe {

class Graph;

struct BuildRecord {
  cudnnfe_plan_source_t source = CUDNNFE_PLAN_SOURCE_BUILT;
  double total_ms = 0;
  double validate_ms = 0;
  double cache_ms = 0;
  double lower_ms = 0;
  double heuristics_ms = 0;
  double plan_build_ms = 0;
};

// One plan of a graph as the C API reports it.
struct PlanEntry {
  const std::string *name = nullptr;
  int64_t engine_id = -1;
  int64_t workspace_size = 0;
  uint32_t numerical_notes = 0;
  uint32_t behavior_notes = 0;
  double autotune_time_ms = -1;
  bool chosen_by_autotune = false;
};

class RecordedPlan : public Plan {
 public:
  BuildRecord record;
  // The options of the build, with `target` resolved and `requested_target`
  // as the caller gave it; serialized with the plan.
  BuildOptions options;

  virtual size_t plan_count() const { return 1; }
  virtual size_t selected() const { return 0; }
  // `index` < plan_count(), checked by the caller.
  virtual void select(size_t index) { (void)index; }
  virtual PlanEntry entry(size_t index) const;
};

// The CPU reference plan of a validated graph, wrapped with its record.
std::unique_ptr<RecordedPlan> make_cpu_reference_plan(const Graph &graph);

// The RecordedPlan of a built graph (every build makes one); throws
// WRONG_STATE before build.
const RecordedPlan &recorded_plan(const Graph &graph);
RecordedPlan &recorded_plan(Graph &graph);

}  // namespace cudnnfe
