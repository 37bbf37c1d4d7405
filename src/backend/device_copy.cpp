// Verify mode's copies (backend/device_copy.h): plain cudaMemcpy with
// cudaMemcpyDefault after the caller's stream is done, so any pointer the
// CUDA runtime knows works and no stream of ours is involved.
#include "backend/device_copy.h"

#include "backend/device.h"
#include "backend/loader.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

void check(cudaError_t error, const char *what) {
  if (error != cudaSuccess)
    fail(CUDNNFE_STATUS_CUDA_ERROR, "verify: ", what, " failed: ", cuda_error_text(error));
}

}  // namespace

void wait_for_stream(int device, void *stream, const char *what) {
  ensure_device(device);
  check(cudart().StreamSynchronize(static_cast<cudaStream_t>(stream)), what);
}

void copy_ranges_to_host(int device, const void *source, unsigned char *host,
                         const std::vector<ByteRange> &ranges) {
  ensure_device(device);
  const auto *from = static_cast<const unsigned char *>(source);
  for (const ByteRange &r : ranges)
    check(cudart().Memcpy(host + r.first, from + r.first, r.end - r.first, cudaMemcpyDefault),
          "cudaMemcpy of an input or output back to the host");
}

void copy_to_buffer(int device, void *target, const void *host, size_t bytes) {
  ensure_device(device);
  check(cudart().Memcpy(target, host, bytes, cudaMemcpyDefault), "cudaMemcpy to the device");
}

}  // namespace cudnnfe::backend
