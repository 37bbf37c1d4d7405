#include "backend/device.h"

#include <map>
#include <memory>
#include <mutex>

#include "backend/descriptor.h"
#include "backend/loader.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

void check_cuda(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, what, " failed: ", cuda_error_text(error));
}

// Creates a cuDNN handle on `device` (made current first).
cudnnHandle_t create_handle(int device) {
  const CudnnApi &dnn = cudnn();
  ensure_device(device);
  cudnnHandle_t handle = nullptr;
  cudnnStatus_t status = dnn.Create(&handle);
  if (status != CUDNN_STATUS_SUCCESS) {
    std::string reason = last_error();
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cudnnCreate on device ", device, " (",
         describe_device(device), ") failed: ", status_text(status),
         reason.empty() ? "" : cat(": ", reason));
  }
  return handle;
}

}  // namespace

int device_count() {
  const CudartApi *rt = cudart_if_loaded();
  if (!rt) return 0;
  int count = 0;
  if (rt->GetDeviceCount(&count) != cudaSuccess) {
    rt->GetLastError();  // a missing driver is not sticky; clear it anyway
    return 0;
  }
  return count;
}

int current_device() {
  const CudartApi &rt = cudart();
  if (device_count() == 0)
    fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, "no usable CUDA device (the CUDA runtime at ", rt.path,
         " reports none; is the NVIDIA driver installed?)");
  int device = 0;
  check_cuda(rt.GetDevice(&device), "cudaGetDevice");
  return device;
}

void ensure_device(int device) {
  const CudartApi &rt = cudart();
  // cudaGetDevice reports device 0 on a thread that never made a CUDA call,
  // although no context is current there yet, and cuDNN's launches then
  // fail with CUDA error 201. Thread pools and Go (goroutines move between
  // OS threads) hit this, so each thread makes the context current itself
  // once; cudaSetDevice does that for the primary context.
  thread_local int made_current = -1;
  int current = -1;
  check_cuda(rt.GetDevice(&current), "cudaGetDevice");
  if (current == device && made_current == device) return;
  cudaError_t error = rt.SetDevice(device);
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, "cudaSetDevice(", device, ") failed: ", cuda_error_text(error));
  made_current = device;
}

const DeviceInfo &device_info(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<DeviceInfo>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it != cache.end()) return *it->second;
  const CudartApi &rt = cudart();
  auto info = std::make_unique<DeviceInfo>();
  info->device = device;
  int major = 0, minor = 0;
  check_cuda(rt.DeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
             "cudaDeviceGetAttribute(compute capability)");
  check_cuda(rt.DeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
             "cudaDeviceGetAttribute(compute capability)");
  check_cuda(rt.DeviceGetAttribute(&info->sm_count, cudaDevAttrMultiProcessorCount, device),
             "cudaDeviceGetAttribute(multiprocessor count)");
  info->sm_version = major * 10 + minor;
  // cudaDeviceProp starts with `char name[256]` in every CUDA version; the
  // rest of its layout varies, so the buffer is far larger than any.
  auto props = std::make_unique<char[]>(16384);
  if (rt.GetDeviceProperties(reinterpret_cast<cudaDeviceProp *>(props.get()), device) ==
      cudaSuccess) {
    props[255] = '\0';
    info->name = props.get();
  } else {
    rt.GetLastError();
    info->name = cat("CUDA device ", device);
  }
  return *cache.emplace(device, std::move(info)).first->second;
}

std::string describe_device(int device) {
  try {
    const DeviceInfo &info = device_info(device);
    return cat(info.name, " (sm_", info.sm_version, ")");
  } catch (const Error &e) {
    return cat("device ", device, " (unknown: ", e.message(), ")");
  }
}

void init_handle(Handle &handle) {
  if (handle.cudnn) return;
  cudnn();  // report a missing cuDNN before touching the GPU
  const int device = handle.device >= 0 ? handle.device : current_device();
  if (handle.device >= 0 && device >= device_count())
    fail(CUDNNFE_STATUS_INVALID_ARGUMENT, "the handle was created for CUDA device ", device,
         " but only ", device_count(), " device(s) are usable");
  handle.cudnn = create_handle(device);
  handle.device = device;
  // A new cuDNN handle runs on the default stream.
  handle.stream = nullptr;
  handle.stream_set = true;
}

cudnnHandle_t shared_handle(int device) {
  static std::mutex mutex;
  static std::map<int, cudnnHandle_t> handles;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = handles.find(device);
  if (it != handles.end()) return it->second;
  cudnnHandle_t handle = create_handle(device);
  handles.emplace(device, handle);
  return handle;
}

}  // namespace cudnnfe::backend
