// Run-time loading of cuDNN 9 and the CUDA runtime with dlopen, in the
// order of include/cudnnfe/cudnnfe.h (explicit variable, already loaded,
// search directories, system). The installed headers supply only the
// function types: cudnnfe never links either library, so it loads (and runs
// the CPU reference) without them.
#pragma once

#include <string>

#include "backend/nvidia_api.h"
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

// The CUDA runtime's graph and stream-capture entry points, for bound
// executions that replay a CUDA graph (cudnnfe_graph_bind). They are looked
// up apart from CudartApi so that a runtime without them still runs
// everything else: `missing` names those absent ("" when all are there).
struct CudaGraphRuntimeApi {
  cudaError_t (*StreamCreateWithFlags)(cudaStream_t *, unsigned int) = nullptr;
  cudaError_t (*StreamDestroy)(cudaStream_t) = nullptr;
  cudaError_t (*StreamBeginCapture)(cudaStream_t, cudaStreamCaptureMode) = nullptr;
  cudaError_t (*StreamEndCapture)(cudaStream_t, cudaGraph_t *) = nullptr;
  cudaError_t (*GraphCreate)(cudaGraph_t *, unsigned int) = nullptr;
  cudaError_t (*GraphInstantiateWithFlags)(cudaGraphExec_t *, cudaGraph_t,
                                           unsigned long long) = nullptr;
  cudaError_t (*GraphDestroy)(cudaGraph_t) = nullptr;
  cudaError_t (*GraphExecDestroy)(cudaGraphExec_t) = nullptr;
  cudaError_t (*GraphLaunch)(cudaGraphExec_t, cudaStream_t) = nullptr;
  // Null where the runtime lacks it (not listed in `missing`).
  cudaError_t (*StreamIsCapturing)(cudaStream_t, cudaStreamCaptureStatus *) = nullptr;
  std::string missing;
};

// Loads cuDNN on first call (thread-safe, once per process). Throws
// CUDNN_UNAVAILABLE naming every path tried and dlerror() for each.
const CudnnApi &cudnn();

// Loads the CUDA runtime on first call. Throws CUDNN_UNAVAILABLE as above.
const CudartApi &cudart();

// The CUDA runtime's graph entry points (loads the runtime: throws
// CUDNN_UNAVAILABLE as cudart() does; absent entry points are listed in
// `missing`, never thrown).
const CudaGraphRuntimeApi &cuda_graph_runtime();

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
