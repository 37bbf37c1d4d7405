// Verify mode's host copies (exec/verify_copy.h).
#include "exec/verify_copy.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu/cpu_plan.h"

namespace cudnnfe::verify {
namespace {

// Appends byte range [first, end) to `ranges`, merging it into the last
// one when it starts inside it or less than kRangeGap after it.
void add_range(std::vector<backend::ByteRange> &ranges, size_t first, size_t end) {
  if (!ranges.empty()) {
    backend::ByteRange &last = ranges.back();
    if (first >= last.first && first <= last.end + kRangeGap) {
      last.end = std::max(last.end, end);
      return;
    }
  }
  ranges.push_back({first, end});
}

// Element offset `offset` of `t` as bytes.
void add_element(std::vector<backend::ByteRange> &ranges, const Tensor &t, int64_t offset) {
  const size_t off = static_cast<size_t>(offset);
  if (t.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED) return add_range(ranges, off / 8, off / 8 + 1);
  const size_t size = dtype_size(t.dtype);
  add_range(ranges, off * size, (off + 1) * size);
}

// Whether offsets grow with the logical index: each dim's stride passes
// everything the dims after it reach.
bool row_major_order(const Tensor &t) {
  int64_t inner = 0;  // largest offset the dims after i reach
  for (size_t i = t.dims.size(); i-- > 0;) {
    if (t.dims[i] == 1) continue;
    if (t.strides[i] <= inner) return false;
    inner += (t.dims[i] - 1) * t.strides[i];
  }
  return true;
}

int64_t offset_of(const Tensor &t, int64_t linear) {
  int64_t offset = 0;
  for (size_t i = t.dims.size(); i-- > 0;) {
    offset += (linear % t.dims[i]) * t.strides[i];
    linear /= t.dims[i];
  }
  return offset;
}

// Every element in memory order (dims by falling stride), testing each:
// for dense masks over permuted layouts (NHWC, BSHD).
std::vector<backend::ByteRange> ranges_by_memory_order(const Tensor &t,
                                                       const cpu::ElementMask &mask) {
  const size_t rank = t.dims.size();
  std::vector<size_t> order(rank);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return t.strides[a] > t.strides[b]; });
  std::vector<int64_t> linear_stride(rank, 1);
  for (size_t i = rank - 1; i-- > 0;) linear_stride[i] = linear_stride[i + 1] * t.dims[i + 1];
  std::vector<int64_t> index(rank, 0);
  int64_t linear = 0, offset = 0;
  std::vector<backend::ByteRange> ranges;
  for (;;) {
    if (mask.test(linear)) add_element(ranges, t, offset);
    size_t k = rank;
    while (k-- > 0) {
      const size_t d = order[k];
      if (++index[d] < t.dims[d]) {
        linear += linear_stride[d];
        offset += t.strides[d];
        break;
      }
      linear -= (t.dims[d] - 1) * linear_stride[d];
      offset -= (t.dims[d] - 1) * t.strides[d];
      index[d] = 0;
    }
    if (k == static_cast<size_t>(-1)) break;
  }
  return ranges;
}

}  // namespace

size_t span_bytes(const Tensor &t) {
  const size_t span = static_cast<size_t>(t.element_span());
  if (t.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED) return (span + 7) / 8;
  return span * dtype_size(t.dtype);
}

Mirror::Mirror(size_t bytes)
    : bytes_(static_cast<unsigned char *>(std::calloc(bytes ? bytes : 1, 1))) {
  if (!bytes_)
    fail(CUDNNFE_STATUS_OUT_OF_MEMORY, "verify: no host memory for a copy of ", bytes, " bytes");
}

cpu::StridedTensor strided_view(const Tensor &t, void *data) {
  cpu::StridedTensor v = tensor_layout(t);
  v.data = data;
  return v;
}

std::vector<backend::ByteRange> element_ranges(const Tensor &t, const cpu::ElementMask &mask) {
  const int64_t count = mask.count();
  if (count == 0) return {};
  std::vector<backend::ByteRange> ranges;
  if (row_major_order(t)) {
    mask.for_each([&](int64_t linear) { add_element(ranges, t, offset_of(t, linear)); });
    return ranges;
  }
  if (count * 16 >= mask.size()) return ranges_by_memory_order(t, mask);
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(count));
  mask.for_each([&](int64_t linear) { offsets.push_back(offset_of(t, linear)); });
  std::sort(offsets.begin(), offsets.end());
  for (int64_t offset : offsets) add_element(ranges, t, offset);
  return ranges;
}

void gather(const Source &source, const void *buffer, const std::vector<backend::ByteRange> &ranges,
            unsigned char *mirror) {
  if (source.on_device) return backend::copy_ranges_to_host(source.device, buffer, mirror, ranges);
  const auto *from = static_cast<const unsigned char *>(buffer);
  for (const backend::ByteRange &r : ranges)
    std::memcpy(mirror + r.first, from + r.first, r.end - r.first);
}

}  // namespace cudnnfe::verify
