// Loading cuDNN and the CUDA runtime: the file search (backend/library_search.cpp),
// then every entry point and the version; one log line per library.
#include "backend/loader.h"

#include <dlfcn.h>

#include <mutex>

#include "backend/library_search.h"
#include "core/error.h"
#include "core/log.h"

namespace cudnnfe::backend {
namespace {

// Resolves `symbol` into `slot`; records missing symbols in `missing`.
template <class Fn>
void resolve(void *lib, const char *symbol, Fn *slot, std::string *missing) {
  *slot = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!*slot) *missing += cat(missing->empty() ? "" : ", ", symbol);
}

struct CudnnState {
  CudnnApi api{};
  std::string error;
  FoundLibrary found;
  int64_t version = 0;
};

struct CudartState {
  CudartApi api{};
  std::string error;
  FoundLibrary found;
  int64_t version = 0;
};

// One INFO line per library: what loaded, from where and why, or why not.
void log_outcome(const char *title, const FoundLibrary &found, int64_t version,
                 const std::string &error) {
  if (error.empty())
    log_info("loader: ", title, " ", version, " from ", found.path, " (", found.reason, ")");
  else
    log_info("loader: ", title, " not loaded: ", error);
}

LoadReport report(const FoundLibrary &found, int64_t version, const std::string &error) {
  if (!error.empty()) return LoadReport{"", CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED, error, 0};
  return LoadReport{found.path, found.origin, found.reason, version};
}

// Resolves the entry points of the library find_library opened and checks
// that it is cuDNN 9.
void load_cudnn_symbols(CudnnState &state) {
  void *lib = state.found.handle;
  state.api.path = state.found.path;
  if (!lib) {
    state.error = cat(state.found.reason,
                      "; install cuDNN 9 (pip install nvidia-cudnn-cu12 or -cu13) or set "
                      "CUDNNFE_CUDNN_LIBRARY to its libcudnn.so.9");
    return;
  }
  std::string missing;
  CudnnApi &a = state.api;
  resolve(lib, "cudnnGetVersion", &a.GetVersion, &missing);
  resolve(lib, "cudnnGetErrorString", &a.GetErrorString, &missing);
  resolve(lib, "cudnnGetLastErrorString", &a.GetLastErrorString, &missing);
  resolve(lib, "cudnnCreate", &a.Create, &missing);
  resolve(lib, "cudnnDestroy", &a.Destroy, &missing);
  resolve(lib, "cudnnSetStream", &a.SetStream, &missing);
  resolve(lib, "cudnnBackendCreateDescriptor", &a.BackendCreateDescriptor, &missing);
  resolve(lib, "cudnnBackendDestroyDescriptor", &a.BackendDestroyDescriptor, &missing);
  resolve(lib, "cudnnBackendSetAttribute", &a.BackendSetAttribute, &missing);
  resolve(lib, "cudnnBackendGetAttribute", &a.BackendGetAttribute, &missing);
  resolve(lib, "cudnnBackendFinalize", &a.BackendFinalize, &missing);
  resolve(lib, "cudnnBackendExecute", &a.BackendExecute, &missing);
  if (!missing.empty()) {
    state.error = cat("cuDNN at ", a.path, " lacks ", missing, "; cudnnfe needs cuDNN 9");
    return;
  }
  const size_t version = a.GetVersion();
  state.version = static_cast<int64_t>(version);
  if (version < 90000 || version >= 100000)
    state.error = cat("cuDNN at ", a.path, " reports version ", version, "; cudnnfe needs cuDNN 9");
}

CudnnState &load_cudnn() {
  static CudnnState state;
  static std::once_flag once;
  std::call_once(once, [] {
    state.found = find_library(
        {CUDNNFE_LIBRARY_CUDNN, "cuDNN 9", "CUDNNFE_CUDNN_LIBRARY", {"libcudnn.so.9"}});
    load_cudnn_symbols(state);
    log_outcome("cuDNN", state.found, state.version, state.error);
  });
  return state;
}

// Resolves the CUDA runtime's entry points and reads its version.
void load_cudart_symbols(CudartState &state) {
  void *lib = state.found.handle;
  state.api.path = state.found.path;
  if (!lib) {
    state.error = cat(state.found.reason,
                      "; install CUDA 12 or 13 (pip install nvidia-cuda-runtime-cu12) or set "
                      "CUDNNFE_CUDART_LIBRARY");
    return;
  }
  std::string missing;
  CudartApi &a = state.api;
  resolve(lib, "cudaGetDeviceCount", &a.GetDeviceCount, &missing);
  resolve(lib, "cudaGetDevice", &a.GetDevice, &missing);
  resolve(lib, "cudaSetDevice", &a.SetDevice, &missing);
  resolve(lib, "cudaDeviceGetAttribute", &a.DeviceGetAttribute, &missing);
  // CUDA 12 keeps the old struct under the plain name; _v2 is current.
  a.GetDeviceProperties =
      reinterpret_cast<decltype(a.GetDeviceProperties)>(dlsym(lib, "cudaGetDeviceProperties_v2"));
  if (!a.GetDeviceProperties)
    resolve(lib, "cudaGetDeviceProperties", &a.GetDeviceProperties, &missing);
  resolve(lib, "cudaGetErrorString", &a.GetErrorString, &missing);
  resolve(lib, "cudaGetErrorName", &a.GetErrorName, &missing);
  resolve(lib, "cudaGetLastError", &a.GetLastError, &missing);
  resolve(lib, "cudaMalloc", &a.Malloc, &missing);
  resolve(lib, "cudaFree", &a.Free, &missing);
  resolve(lib, "cudaMemcpy", &a.Memcpy, &missing);
  resolve(lib, "cudaMemset", &a.Memset, &missing);
  resolve(lib, "cudaDeviceSynchronize", &a.DeviceSynchronize, &missing);
  resolve(lib, "cudaStreamSynchronize", &a.StreamSynchronize, &missing);
  resolve(lib, "cudaEventCreate", &a.EventCreate, &missing);
  resolve(lib, "cudaEventDestroy", &a.EventDestroy, &missing);
  resolve(lib, "cudaEventRecord", &a.EventRecord, &missing);
  resolve(lib, "cudaEventSynchronize", &a.EventSynchronize, &missing);
  resolve(lib, "cudaEventElapsedTime", &a.EventElapsedTime, &missing);
  resolve(lib, "cudaRuntimeGetVersion", &a.RuntimeGetVersion, &missing);
  if (!missing.empty()) {
    state.error = cat("the CUDA runtime at ", a.path, " lacks ", missing);
    return;
  }
  int version = 0;
  if (a.RuntimeGetVersion(&version) == cudaSuccess) state.version = version;
}

CudartState &load_cudart() {
  static CudartState state;
  static std::once_flag once;
  std::call_once(once, [] {
    state.found = find_library({CUDNNFE_LIBRARY_CUDART,
                                "the CUDA runtime",
                                "CUDNNFE_CUDART_LIBRARY",
                                {"libcudart.so.13", "libcudart.so.12"}});
    load_cudart_symbols(state);
    log_outcome("the CUDA runtime", state.found, state.version, state.error);
  });
  return state;
}

}  // namespace

const CudnnApi &cudnn() {
  const CudnnState &state = load_cudnn();
  if (!state.error.empty()) fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, state.error);
  return state.api;
}

const CudartApi &cudart() {
  const CudartState &state = load_cudart();
  if (!state.error.empty()) fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, state.error);
  return state.api;
}

const CudaGraphRuntimeApi &cuda_graph_runtime() {
  static CudaGraphRuntimeApi api;
  static std::once_flag once;
  const CudartState &state = load_cudart();
  if (!state.error.empty()) fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, state.error);
  std::call_once(once, [&] {
    void *lib = state.found.handle;
    resolve(lib, "cudaStreamCreateWithFlags", &api.StreamCreateWithFlags, &api.missing);
    resolve(lib, "cudaStreamDestroy", &api.StreamDestroy, &api.missing);
    resolve(lib, "cudaStreamBeginCapture", &api.StreamBeginCapture, &api.missing);
    resolve(lib, "cudaStreamEndCapture", &api.StreamEndCapture, &api.missing);
    resolve(lib, "cudaGraphCreate", &api.GraphCreate, &api.missing);
    resolve(lib, "cudaGraphInstantiateWithFlags", &api.GraphInstantiateWithFlags, &api.missing);
    resolve(lib, "cudaGraphDestroy", &api.GraphDestroy, &api.missing);
    resolve(lib, "cudaGraphExecDestroy", &api.GraphExecDestroy, &api.missing);
    resolve(lib, "cudaGraphLaunch", &api.GraphLaunch, &api.missing);
    // Optional: only execute replay needs it (without it, execute never replays).
    api.StreamIsCapturing =
        reinterpret_cast<decltype(api.StreamIsCapturing)>(dlsym(lib, "cudaStreamIsCapturing"));
  });
  return api;
}

LoadReport cudnn_report() {
  const CudnnState &state = load_cudnn();
  return report(state.found, state.version, state.error);
}

LoadReport cudart_report() {
  const CudartState &state = load_cudart();
  return report(state.found, state.version, state.error);
}

const CudartApi *cudart_if_loaded() {
  const CudartState &state = load_cudart();
  return state.error.empty() ? &state.api : nullptr;
}

std::string cuda_error_text(cudaError_t error) {
  const CudartApi *rt = cudart_if_loaded();
  if (!rt) return cat("CUDA error ", static_cast<int>(error));
  return cat("CUDA error ", rt->GetErrorName(error), " (", rt->GetErrorString(error), ")");
}

}  // namespace cudnnfe::backend
