// Verify mode's host copies (docs/verify.md): each bound tensor a check
// touches gets a zeroed host buffer as large as the tensor's span (a
// "mirror"), and only the byte ranges that hold the elements it reads are
// copied into it, from the GPU or from the caller's host memory.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>
#include <vector>

#include "backend/device_copy.h"
#include "cpu/element_mask.h"
#include "cpu/strided_tensor.h"
#include "graph/tensor.h"

namespace cudnnfe::verify {

// Ranges closer than this many bytes are copied as one (fewer, larger
// copies; at most this much extra per range).
constexpr size_t kRangeGap = 64 * 1024;

// Bytes of the buffer a tensor's dims and strides reach.
size_t span_bytes(const Tensor &t);

// A zeroed host buffer of a tensor's span. calloc, not a vector: the
// system hands out large zeroed blocks untouched, so a check pays only for
// the pages it reads or writes (a few rows of a 64 MiB tensor, say).
class Mirror {
 public:
  Mirror() = default;
  explicit Mirror(size_t bytes);  // throws OUT_OF_MEMORY
  unsigned char *data() const { return bytes_.get(); }

 private:
  struct Free {
    void operator()(unsigned char *p) const { std::free(p); }
  };
  std::unique_ptr<unsigned char, Free> bytes_;
};

// `t`'s layout as the CPU reference views it, on `data`.
cpu::StridedTensor strided_view(const Tensor &t, void *data);

// The byte ranges of `t`'s buffer that hold the elements of `mask`, sorted,
// ranges closer than kRangeGap merged.
std::vector<backend::ByteRange> element_ranges(const Tensor &t, const cpu::ElementMask &mask);

// Where a plan's buffers live: the GPU `device`, or host memory.
struct Source {
  bool on_device = false;
  int device = 0;
};

// Copies `ranges` of `buffer` to the same offsets of `mirror`. Device
// sources need backend::wait_for_stream first.
void gather(const Source &source, const void *buffer, const std::vector<backend::ByteRange> &ranges,
            unsigned char *mirror);

}  // namespace cudnnfe::verify
