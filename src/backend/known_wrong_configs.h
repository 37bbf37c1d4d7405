// Engine configurations that cuDNN offers for a graph but computes wrongly
// (class 3 of docs/refusals.md): the plan builder skips them, so the next
// configuration cuDNN offers is built instead. Each rule names its evidence.
#pragma once

#include <string>

#include "graph/graph.h"
#include "plan/plan_blob.h"

namespace cudnnfe::backend {

// Why `config` must not run `graph` ("" when nothing is known against it).
std::string known_wrong_config(const Graph &graph, const plan::EngineConfig &config);

// Why a CUDA graph recorded by stream capture of cudnnBackendExecute does not
// do `graph`'s work ("" when nothing is known against it). cuDNN's native
// population (cudnnBackendPopulateCudaGraph) is not concerned.
std::string known_wrong_under_capture(const Graph &graph);

}  // namespace cudnnfe::backend
