// One check of verify mode (docs/verify.md): sample a plan run's outputs,
// find what those elements depend on (cpu/cpu_plan.h, Demand), copy just
// that back to the host, compute the sample with the CPU reference and
// compare. Which runs are checked is exec/verify.cpp's business.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cpu/cpu_plan.h"
#include "graph/graph.h"
#include "plan/plan.h"

namespace cudnnfe::verify {

struct CheckResult {
  enum Kind { kPassed, kNotVerified, kFailed } kind = kPassed;
  // Passed: what was compared; not verified: why; failed: the error message
  // (graph, node, worst element, tolerance, plan, cuDNN, GPU).
  std::string text;
  std::vector<std::string> skipped;  // outputs left out, each with why
  std::string full_nodes;            // the nodes the reference ran in full
  std::string times;                 // the stages' milliseconds
  size_t bytes_read = 0;             // copied back from the plan's buffers
};

// Why the graph cannot be checked at all ("" when it can).
std::string graph_obstacle(const Graph &graph);

// Plan `candidate` of the built graph for messages: "eng9_k2=3 (engine 9,
// cuDNN 9.19.0, GPU NVIDIA H200 (device 0))", or the CPU reference.
std::string plan_text(const Graph &graph, size_t candidate);

// Checks the run of plan `candidate` of `graph` that wrote `data` (bound
// UID order) on `stream`, waiting for the stream first. Throws only when the
// check itself fails (a copy, host memory).
CheckResult check_run(const Graph &graph, const SampledReference &reference, size_t candidate,
                      void *const *data, void *stream, const VerifySettings &settings);

}  // namespace cudnnfe::verify
