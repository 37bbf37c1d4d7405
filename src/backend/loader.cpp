#include "backend/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace cudnnfe::backend {
namespace {

// Candidate file names: the environment variable alone when set (so that a
// wrong override fails loudly instead of silently loading another copy),
// else the usual SONAMEs.
std::vector<std::string> candidates(const char *env_var, std::vector<std::string> defaults) {
  const char *env = std::getenv(env_var);
  if (env && *env) return {env};
  return defaults;
}

// dlopens the first candidate that loads; on failure `tried` lists every
// path with its dlerror().
void *open_first(const std::vector<std::string> &names, std::string *loaded, std::string *tried) {
  for (const std::string &name : names) {
    dlerror();
    void *lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      *loaded = name;
      return lib;
    }
    const char *why = dlerror();
    *tried += cat(tried->empty() ? "" : "; ", name, ": ", why ? why : "unknown dlopen error");
  }
  return nullptr;
}

// Resolves `symbol` into `slot`; records missing symbols in `missing`.
template <class Fn>
void resolve(void *lib, const char *symbol, Fn *slot, std::string *missing) {
  *slot = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!*slot) *missing += cat(missing->empty() ? "" : ", ", symbol);
}

struct CudnnState {
  CudnnApi api{};
  std::string error;
};

struct CudartState {
  CudartApi api{};
  std::string error;
};

CudnnState &load_cudnn() {
  static CudnnState state;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    void *lib =
        open_first(candidates("CUDNNFE_CUDNN_LIBRARY", {"libcudnn.so.9"}), &state.api.path, &tried);
    if (!lib) {
      state.error = cat("cuDNN 9 could not be loaded (tried ", tried,
                        "); install cuDNN 9 or set CUDNNFE_CUDNN_LIBRARY to its libcudnn.so.9");
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
    if (version < 90000 || version >= 100000)
      state.error =
          cat("cuDNN at ", a.path, " reports version ", version, "; cudnnfe needs cuDNN 9");
  });
  return state;
}

CudartState &load_cudart() {
  static CudartState state;
  static std::once_flag once;
  std::call_once(once, [] {
    std::string tried;
    void *lib =
        open_first(candidates("CUDNNFE_CUDART_LIBRARY", {"libcudart.so.13", "libcudart.so.12"}),
                   &state.api.path, &tried);
    if (!lib) {
      state.error = cat("the CUDA runtime could not be loaded (tried ", tried,
                        "); install CUDA 12 or 13 or set CUDNNFE_CUDART_LIBRARY");
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
    if (!missing.empty()) state.error = cat("the CUDA runtime at ", a.path, " lacks ", missing);
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
