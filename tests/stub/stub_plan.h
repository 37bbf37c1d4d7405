// A one-candidate GPU plan from the stub cuDNN (tests/stub) for a graph
// built for the CPU reference: what the stub tests and the host-cost
// benchmarks (bench/bench_host_overhead.cpp, bench/bench_verify.cpp) run
// the GPU execute path with, without a GPU. Needs the static library's
// internals (links cudnnfe_static).
#pragma once

#include <memory>
#include <utility>

#include "api/objects.h"
#include "backend/descriptor.h"
#include "backend/gpu_plan.h"

namespace stub {

// Replaces the built graph's plan with a GPU plan named "stub_plan" whose
// variant pack lists every bound tensor; `behavior_notes` are its notes.
inline void give_gpu_plan(cudnnfe_graph_t *g, uint32_t behavior_notes = 0) {
  using namespace cudnnfe;
  Graph &graph = graph_of(g);
  auto set = std::make_shared<backend::PlanSet>();
  backend::Candidate c;
  c.plan = backend::Descriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  c.name = "stub_plan";
  c.behavior_notes = behavior_notes;
  set->candidates.push_back(std::move(c));
  for (size_t i = 0; i < graph.bound_uids().size(); ++i) {
    set->uids.push_back(graph.bound_uids()[i]);
    set->slots.push_back(i);
  }
  set->graph_bound = graph.bound_uids().size();
  for (int64_t uid : graph.bound_uids())
    if (graph.tensor(uid).pass_by_value) set->has_by_value_inputs = true;
  set->seal();
  graph.set_plan(std::make_unique<backend::GpuPlan>(set, 0));
}

}  // namespace stub
