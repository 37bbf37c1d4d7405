// CUDA devices and cuDNN handles: which GPU a build or an execute runs on,
// what it is called in messages, and the cudnnHandle_t for it.
#pragma once

#include <string>

#include "backend/nvidia_api.h"
#include "exec/handle.h"

namespace cudnnfe::backend {

struct DeviceInfo {
  int device = 0;
  std::string name;    // "NVIDIA H100 80GB HBM3"
  int sm_version = 0;  // 90 for compute capability 9.0
  int sm_count = 0;
};

// Number of usable devices; 0 when the runtime or driver is missing.
int device_count();

// The calling thread's current device. Throws CUDNN_UNAVAILABLE when no GPU
// is usable, CUDA_ERROR when the runtime fails.
int current_device();

// Makes `device` current on the calling thread if it is not already.
// Throws CUDA_ERROR.
void ensure_device(int device);

// Name and architecture of `device` (queried once, then cached).
const DeviceInfo &device_info(int device);

// "NVIDIA H100 80GB HBM3 (sm_90)", or the reason the GPU is unknown.
std::string describe_device(int device);

// Creates the handle's cuDNN handle on its device (fixing device -1 to the
// current one) unless it already has one. Throws.
void init_handle(Handle &handle);

// A cuDNN handle owned by the library for `device`, created on first use and
// kept for the life of the process (for builds given no handle).
cudnnHandle_t shared_handle(int device);

}  // namespace cudnnfe::backend
