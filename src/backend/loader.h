// Run-time loading of cuDNN 9 and the CUDA runtime with dlopen, in the
// order of include/cudnnfe/cudnnfe.h (explicit variable, already loaded,
// search directories, system). The installed headers supply only the
// function types: cudnnfe never links either library, so it loads (and runs
// the CPU reference) without them.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <string>

#include "core/c_api.h"

namespace cudnnfe::backend {

// The cuDNN entry points the backend uses.
struct CudnnApi {
  decltype(&cudnnGetVersion) GetVersion;
  decltype(&cudnnGetErrorString) GetErrorString;
  decltype(&cudnnGetLastErrorString) GetLastErrorString;
  decltype(&cudnnCreate) Create;
  decltype(&cudnnDestroy) Destroy;
  decltype(&cudnnSetStream) SetStream;
  decltype(&cudnnBackendCreateDescriptor) BackendCreateDescriptor;
  decltype(&cudnnBackendDestroyDescriptor) BackendDestroyDescriptor;
  decltype(&cudnnBackendSetAttribute) BackendSetAttribute;
  decltype(&cudnnBackendGetAttribute) BackendGetAttribute;
  decltype(&cudnnBackendFinalize) BackendFinalize;
  decltype(&cudnnBackendExecute) BackendExecute;
  // Path that was loaded, for messages.
  std::string path;
};

// The CUDA runtime entry points: device queries for build and execute, and
// memory, copies and events for autotuning.
struct CudartApi {
  decltype(&cudaGetDeviceCount) GetDeviceCount;
  decltype(&cudaGetDevice) GetDevice;
  decltype(&cudaSetDevice) SetDevice;
  decltype(&cudaDeviceGetAttribute) DeviceGetAttribute;
  // cudaGetDeviceProperties under its CUDA 12 (_v2) or 13 name; only the
  // leading `name` field is read, into an oversized buffer (the struct's
  // size differs between versions).
  decltype(&cudaGetDeviceProperties) GetDeviceProperties;
  decltype(&cudaGetErrorString) GetErrorString;
  decltype(&cudaGetErrorName) GetErrorName;
  decltype(&cudaGetLastError) GetLastError;
  decltype(&cudaMalloc) Malloc;
  decltype(&cudaFree) Free;
  decltype(&cudaMemcpy) Memcpy;
  decltype(&cudaMemset) Memset;
  decltype(&cudaDeviceSynchronize) DeviceSynchronize;
  decltype(&cudaStreamSynchronize) StreamSynchronize;
  decltype(&cudaEventCreate) EventCreate;
  decltype(&cudaEventDestroy) EventDestroy;
  decltype(&cudaEventRecord) EventRecord;
  decltype(&cudaEventSynchronize) EventSynchronize;
  decltype(&cudaEventElapsedTime) EventElapsedTime;
  decltype(&cudaRuntimeGetVersion) RuntimeGetVersion;
  std::string path;
};

// Loads cuDNN on first call (thread-safe, once per process). Throws
// CUDNN_UNAVAILABLE naming every path tried and dlerror() for each.
const CudnnApi &cudnn();

// Loads the CUDA runtime on first call. Throws CUDNN_UNAVAILABLE as above.
const CudartApi &cudart();

// The CUDA runtime, or null when it cannot be loaded (never throws).
const CudartApi *cudart_if_loaded();

// Which file was loaded for one library, by which rule, and why; on failure
// origin is NOT_LOADED and reason holds the error (every path tried).
struct LoadReport {
  std::string path;
  cudnnfe_library_origin_t origin = CUDNNFE_LIBRARY_ORIGIN_NOT_LOADED;
  std::string reason;
  int64_t version = 0;
};

// Load the library if not yet tried, then report (never throw).
LoadReport cudnn_report();
LoadReport cudart_report();

// "CUDA error cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string cuda_error_text(cudaError_t error);

}  // namespace cudnnfe::backend
