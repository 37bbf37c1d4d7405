// Explaining a refused GPU build by asking the loaded backend smaller
// questions instead of consulting a table of versions: which node, built
// alone, is refused, and which optional feature of it, when dropped, lets
// it build. What the answer says holds for this cuDNN on this GPU.
#pragma once

#include <string>

#include "backend/gpu_plan_build.h"

namespace cudnnfe::backend {

// A sentence for the refusal message, or "" when probing found nothing to
// add (or CUDNNFE_REFUSAL_PROBES=0). Never throws; costs a few builds.
std::string probe_refusal(const Graph &graph, const BuildTarget &target,
                          const BuildOptions &options);

}  // namespace cudnnfe::backend
