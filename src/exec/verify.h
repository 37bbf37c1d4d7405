// Verify mode (docs/verify.md): the first execution of each plan of a graph
// built with it is checked against the CPU reference on a sample of output
// elements, computing only those elements (and what they depend on) on the
// CPU. A mismatch is CUDNNFE_STATUS_VERIFY_FAILED; what cannot be checked
// passes and is logged as "not verified: <why>".
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cpu/cpu_plan.h"
#include "exec/handle.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe {

// The settings of a build: `mode` and the environment (CUDNNFE_VERIFY when
// mode is FROM_ENV, CUDNNFE_VERIFY_SAMPLES when samples is 0).
// INVALID_ARGUMENT naming the field or variable for a bad value.
VerifySettings resolve_verify_settings(cudnnfe_verify_mode_t mode, int32_t samples, double rtol);

// The checks of one built graph's plan; shared by the plan and its bound
// executions, used by any number of threads.
class Verifier {
 public:
  Verifier(VerifySettings settings, size_t plan_count);

  // After the graph's plan ran on `data` (graph.bound_uids() order) on
  // `stream`: checks the selected plan the first time it runs. One thread
  // checks; others running it meanwhile are not held. A plan that failed
  // fails each later execute with the same message.
  void after_execute(const Graph &graph, Handle &handle, void *const *data, void *stream);

  // Checks the run of plan `candidate` that just wrote `data` (a bound
  // execution's first run). Throws VERIFY_FAILED on a mismatch.
  void check(const Graph &graph, size_t candidate, Handle &handle, void *const *data, void *stream);

  // An execute with execute-time shapes: not checked (logged once).
  void skip_overridden(const Graph &graph);

 private:
  enum State : int { kUnchecked, kChecking, kDone, kFailed };

  const SampledReference &reference(const Graph &graph);

  VerifySettings settings_;
  size_t plan_count_;
  std::unique_ptr<std::atomic<int>[]> state_;  // per plan
  std::mutex mutex_;
  std::vector<std::string> failures_;  // per plan, under mutex_
  std::unique_ptr<SampledReference> reference_;
  std::string reference_error_;  // why the CPU reference cannot run the graph
  bool reference_tried_ = false;
  std::atomic<bool> overridden_logged_{false};
};

// Gives the built graph's plan a verifier when `settings` ask for one.
void attach_verifier(Graph &graph, const VerifySettings &settings);

// `run` (a bound execution of `graph`'s plan on `data`) with its first run
// checked when the plan has a verifier; `run` itself otherwise.
std::unique_ptr<BoundRun> verified_bound_run(std::unique_ptr<BoundRun> run, const Graph &graph,
                                             void *const *data, size_t count);

}  // namespace cudnnfe
