// Warming the in-process plan cache from the persistent cache directory on
// the engine-preload thread (docs/plans.md): a new process's first builds of
// graphs it built in an earlier run then hit memory instead of paying for
// cuDNN's first use of each engine while the program waits.
#pragma once

#include <atomic>

namespace cudnnfe {

// Loads the newest plan files of $CUDNNFE_PLAN_CACHE_DIR (at most
// kWarmupMaxPlans) for `device` (-1: device 0) into the in-process cache, as a
// build with that directory would on a miss. Returns at once when the variable
// is unset; skips files made for another GPU or cuDNN, or damaged; stops
// between files when `stop` becomes true. Never throws.
void warm_plan_cache_from_environment(int device, const std::atomic<bool> &stop);

constexpr int kWarmupMaxPlans = 16;

}  // namespace cudnnfe
