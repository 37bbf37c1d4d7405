// cuDNN 9 is a small dispatch library that loads its engine sub-libraries
// (hundreds of MB of kernels) the first time a process finalizes an operation
// graph or a plan; on an H100 that first use costs 100-200 ms even when the
// plan itself comes from the persistent cache. Loading them here, on a thread
// started when a handle is created, overlaps that cost with whatever the
// program does before its first build (allocating, reading weights). The
// dynamic loader then hands cuDNN the already-loaded libraries by soname;
// the same goes for cuBLASLt and NVRTC, which cuDNN itself dlopens late.
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
void load_sub_libraries() {
  const std::string dir = directory_of(cudnn().path);
  for (const char *name : kSubLibraries) {
    const auto start = std::chrono::steady_clock::now();
    void *lib = dlopen((dir + name).c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log_debug("preload: ", name, lib ? " loaded in " : " not found (", ms, lib ? " ms" : " ms)");
  }
}

// cuDNN dlopens cuBLASLt (from its precompiled engines) and NVRTC (from
// its graph library) on first use, by soname with its own RUNPATH: the
// PyPI wheels keep them in ../../cu<major>/lib (CUDA 13) or in
// ../../cublas/lib and ../../cuda_nvrtc/lib (CUDA 12) beside cudnn/lib. Once
// loaded here, cuDNN's own dlopen finds them by soname. The major is the
// CUDA cuDNN was built for (cudnnGetCudartVersion), not the one we load.
int cudnn_cuda_major() {
  void *lib = dlopen(cudnn().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!lib) return 0;
  using GetCudart = size_t (*)();
  auto get = reinterpret_cast<GetCudart>(dlsym(lib, "cudnnGetCudartVersion"));
  const int major = get ? static_cast<int>(get() / 1000) : 0;
  dlclose(lib);
  return major;
}

void load_first_use_libraries() {
  const int major = cudnn_cuda_major();
  if (major == 0) return;
  const std::string dir = directory_of(cudnn().path), m = std::to_string(major);
  const struct {
    std::string soname, wheel12_dir;
  } libraries[] = {{"libcublasLt.so." + m, "cublas"}, {"libnvrtc.so." + m, "cuda_nvrtc"}};
  for (const auto &l : libraries) {
    const auto start = std::chrono::steady_clock::now();
    void *lib = nullptr;
    for (const std::string &path : {dir + "../../cu" + m + "/lib/" + l.soname,
                                    dir + "../../" + l.wheel12_dir + "/lib/" + l.soname, l.soname})
      if ((lib = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL))) break;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    log_debug("preload: ", l.soname, lib ? " loaded in " : " not found (", ms,
              lib ? " ms" : " ms)");
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
        load_sub_libraries();
        load_first_use_libraries();
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
