// Library-wide functions: versions, names, the thread's last error, and
// what the machine offers.
#include "api/guard.h"
#include "backend/backend.h"
#include "core/dtype.h"

using namespace cudnnfe;

namespace cudnnfe {
std::string &thread_error() {
  thread_local std::string message;
  return message;
}
}  // namespace cudnnfe

uint32_t cudnnfe_version(void) {
  return CUDNNFE_VERSION;
}

cudnnfe_status_t cudnnfe_check_version(uint32_t header_version, uint32_t abi_version) {
  return guard([&] {
    if (abi_version != CUDNNFE_ABI_VERSION)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "ABI mismatch: the caller was built for ABI ", abi_version,
           " but the loaded libcudnnfe has ABI ", CUDNNFE_ABI_VERSION);
    if (header_version > CUDNNFE_VERSION)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "the caller was built against cudnnfe ", header_version,
           " but the loaded libcudnnfe is older (", CUDNNFE_VERSION, ")");
  });
}

cudnnfe_status_t cudnnfe_cudnn_version(int64_t *version) {
  return guard([&] {
    require_out(version, "version");
    *version = backend::cudnn_version();
  });
}

cudnnfe_status_t cudnnfe_device_count(int32_t *count) {
  return guard([&] {
    require_out(count, "count");
    *count = backend::device_count();
  });
}

const char *cudnnfe_status_name(cudnnfe_status_t status) {
  return status_name(status);
}
const char *cudnnfe_dtype_name(cudnnfe_dtype_t dtype) {
  return dtype_name(dtype);
}
size_t cudnnfe_dtype_size(cudnnfe_dtype_t dtype) {
  return dtype_size(dtype);
}
const char *cudnnfe_last_error(void) {
  return thread_error().c_str();
}
