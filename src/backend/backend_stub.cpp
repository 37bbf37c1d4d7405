// TEMPORARY stub until the cuDNN backend lands.
#include "backend/backend.h"
#include "core/error.h"

namespace cudnnfe::backend {
int device_count() {
  return 0;
}
int64_t cudnn_version() {
  fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, "backend not built yet");
}
bool gpu_available() {
  return false;
}
std::unique_ptr<Plan> build_gpu_plan(const Graph &, Handle *, const BuildOptions &) {
  fail(CUDNNFE_STATUS_CUDNN_UNAVAILABLE, "backend not built yet");
}
void release_handle(Handle &) {}
}  // namespace cudnnfe::backend
