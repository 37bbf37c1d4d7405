// The backend's entry points that are not lowering or build: what the
// machine offers, and freeing a handle's cuDNN state.
#include "backend/backend.h"

#include "backend/descriptor.h"
#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"

namespace cudnnfe::backend {

int64_t cudnn_version() {
  return static_cast<int64_t>(cudnn().GetVersion());
}

bool gpu_available() {
  try {
    cudnn();
    return device_count() > 0;
  } catch (const Error &) {
    return false;
  }
}

void release_handle(Handle &handle) {
  if (!handle.cudnn) return;
  // cudnnDestroy works on the handle's device; failures here cannot be
  // reported usefully (the handle is going away), so they are ignored.
  try {
    ensure_device(handle.device);
  } catch (const Error &) {
  }
  cudnn().Destroy(static_cast<cudnnHandle_t>(handle.cudnn));
  handle.cudnn = nullptr;
  handle.stream = nullptr;
  handle.stream_set = false;
}

}  // namespace cudnnfe::backend
