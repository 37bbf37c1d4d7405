// TEMPORARY stub until the CPU reference lands.
#include "cpu/cpu_plan.h"

#include "core/error.h"

namespace cudnnfe {
std::unique_ptr<Plan> build_cpu_plan(const Graph &) {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "cpu reference not built yet");
}
}  // namespace cudnnfe
