// cuDNN 9 is a small dispatch library that loads its engine sub-libraries
// (hundreds of MB of kernels) the first time a process finalizes an operation
// graph or a plan; on an H100 that first use costs 100-200 ms even when the
// plan itself comes from the persistent cache. Loading them here, on a thread
// started when a handle is created, overlaps that cost with whatever the
// program does before its first build (allocating, reading weights). The
// dynamic loader then hands cuDNN the already-loaded libraries by soname.
//
// Not loaded here: cuBLASLt and NVRTC, which cuDNN dlopens later, inside its
// first heuristics query (cuBLASLt alone is about 68 ms on an H100). Loading
// them on this thread took a persistent matmul hit built at once from 153
// to 92 ms, but a program that exited while cuBLASLt was loading crashed at
// exit (tests/test_bound, 2 of 4 runs, cuDNN 9.19's wheel), so they are left
// to cuDNN.
#include "backend/engine_preload.h"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "backend/loader.h"
#include "core/log.h"

namespace cudnnfe::backend {
namespace {

// In the order cuDNN needs them for a first build: the graph library the
// backend API forwards to, the heuristics, then the engines.
constexpr const char *kSubLibraries[] = {"libcudnn_graph.so.9",
                                         "libcudnn_heuristic.so.9",
                                         "libcudnn_engines_precompiled.so.9",
                                         "libcudnn_engines_runtime_compiled.so.9",
                                         "libcudnn_ops.so.9",
                                         "libcudnn_cnn.so.9",
                                         "libcudnn_adv.so.9"};

bool disabled_by_environment() {
  const char *value = std::getenv("CUDNNFE_PRELOAD");
  return value && (std::strcmp(value, "0") == 0 || std::strcmp(value, "off") == 0);
}

std::string directory_of(const std::string &path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Loads each sub-library beside the cuDNN that the loader chose (never
// unloaded: cuDNN keeps them for the life of the process anyway).
void load_sub_libraries(const std::atomic<bool> &stop) {
  const std::string dir = directory_of(cudnn().path);
  for (const char *name : kSubLibraries) {
    if (stop) return;  // the process is exiting: load nothing more
    const auto start = std::chrono::steady_clock::now();
    void *lib = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log_debug("preload: ", name, lib ? " loaded in " : " not found (", ms, lib ? " ms" : " ms)");
  }
}

struct Preload {
  std::once_flag started;
  std::thread worker;
  std::atomic<bool> stop{false};
  double wall_ms = -1;
  std::mutex join_mutex;

  void join() {
    std::lock_guard<std::mutex> lock(join_mutex);
    if (worker.joinable()) worker.join();
  }
  // A program that exits before the preload ends waits for it here rather
  // than unloading libraries under a running dlopen.
  ~Preload() {
    stop = true;
    join();
  }
};

Preload &preload() {
  static Preload state;
  return state;
}

}  // namespace

void start_engine_preload(AfterPreload after) {
  if (disabled_by_environment()) return;
  // The loader's and the log's function-local statics are made before the
  // Preload object, so they outlive it and the thread it joins at exit.
  if (cudnn_report().origin == CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED) return;
  log_debug("preload: starting");
  Preload &state = preload();
  std::call_once(state.started, [&state, &after] {
    state.worker = std::thread([&state, after = std::move(after)] {
      const auto start = std::chrono::steady_clock::now();
      // Nothing may escape a thread; a failure here only loses the head start.
      try {
        load_sub_libraries(state.stop);
      } catch (...) {
        log_debug("preload: loading cuDNN's libraries failed");
      }
      state.wall_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      log_info("preloaded cuDNN's engine libraries in ", state.wall_ms,
               " ms (CUDNNFE_PRELOAD=0 turns this off)");
      try {
        if (after) after(state.stop);
      } catch (...) {
        log_debug("preload: the work after it failed");
      }
    });
  });
}

double wait_engine_preload() {
  Preload &state = preload();
  state.join();
  return state.wall_ms;
}

}  // namespace cudnnfe::backend
