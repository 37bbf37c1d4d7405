#include "backend/device_constants.h"

#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

constexpr size_t kAlign = 256;

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, what,
         " for the plan's constant tensors failed: ", cuda_error_text(status));
}

}  // namespace

DeviceConstants::DeviceConstants(const std::vector<ConstantTensor> &tensors, int device) {
  size_t bytes = 0;
  for (const ConstantTensor &t : tensors) {
    offsets_.push_back(bytes);
    bytes += (t.bytes.size() + kAlign - 1) / kAlign * kAlign;
  }
  if (bytes == 0) return;
  const CudartApi &rt = cudart();
  ensure_device(device);
  check(rt.Malloc(&base_, bytes), "cudaMalloc");
  for (size_t i = 0; i < tensors.size(); ++i) {
    const cudaError_t status =
        rt.Memcpy(static_cast<char *>(base_) + offsets_[i], tensors[i].bytes.data(),
                  tensors[i].bytes.size(), cudaMemcpyHostToDevice);
    if (status != cudaSuccess) {
      rt.Free(base_);
      base_ = nullptr;
      check(status, "cudaMemcpy");
    }
  }
}

DeviceConstants::~DeviceConstants() {
  // At process exit the runtime may already be unloading; nothing to do then.
  if (base_)
    if (const CudartApi *rt = cudart_if_loaded()) rt->Free(base_);
}

}  // namespace cudnnfe::backend
