// Loads cuDNN's engine sub-libraries on a background thread when a handle is
// created, so that a process's first build (or persistent-cache hit) does not
// pay for loading them; CUDNNFE_PRELOAD=0 turns it off. docs/plans.md.
#pragma once

#include <atomic>
#include <functional>

namespace cudnnfe::backend {

// Work for the preload thread once the libraries are loaded; `stop` turns
// true when the process exits, and the work should then return soon.
using AfterPreload = std::function<void(const std::atomic<bool> &stop)>;

// Starts the preload once per process (later calls do nothing), then runs
// `after` on the same thread. Never fails: a missing cuDNN or GPU leaves the
// first build to report it.
void start_engine_preload(AfterPreload after);

// Blocks until a started preload has finished (benchmarks, tests); returns
// its wall time in milliseconds, or -1 when none was started.
double wait_engine_preload();

}  // namespace cudnnfe::backend
