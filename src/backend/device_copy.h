// Copies between the caller's buffers and host memory for verify mode
// (exec/verify.cpp, docs/verify.md): after an execute, the elements a check
// needs are read back, synchronously, once the caller's stream is done.
#pragma once

#include <cstddef>
#include <vector>

namespace cudnnfe::backend {

// A byte range [first, end) of a buffer.
struct ByteRange {
  size_t first = 0;
  size_t end = 0;
};

// Waits for `stream` (a cudaStream_t; NULL: the default stream) on the
// current device `device`. Throws CUDA_ERROR naming `what`.
void wait_for_stream(int device, void *stream, const char *what);

// Copies each range of the buffer at `source` (device, managed or pinned
// memory: any pointer the CUDA runtime knows) to the same offsets of
// `host`. Call wait_for_stream first. Throws CUDA_ERROR.
void copy_ranges_to_host(int device, const void *source, unsigned char *host,
                         const std::vector<ByteRange> &ranges);

// Writes `bytes` bytes from host memory to `target` (any CUDA pointer).
void copy_to_buffer(int device, void *target, const void *host, size_t bytes);

}  // namespace cudnnfe::backend
