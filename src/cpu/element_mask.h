// A set of a tensor's elements, by logical row-major index over its dims:
// which elements verify mode samples and which ones the CPU reference must
// compute or read to produce them (cpu/demand.h, docs/verify.md). One bit
// per element, so a mask of a 2^25-element tensor takes 4 MiB.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/strided_tensor.h"

namespace cudnnfe::cpu {

class ElementMask {
 public:
  ElementMask() = default;
  // `count` elements, none set.
  explicit ElementMask(int64_t count)
      : size_(count), words_(static_cast<size_t>((count + 63) / 64), 0) {}

  int64_t size() const { return size_; }
  void set(int64_t i) { words_[static_cast<size_t>(i >> 6)] |= uint64_t{1} << (i & 63); }
  bool test(int64_t i) const { return (words_[static_cast<size_t>(i >> 6)] >> (i & 63)) & 1u; }
  // Sets elements first..end-1.
  void set_range(int64_t first, int64_t end);
  void set_all() { set_range(0, size_); }
  // Whether any of elements first..end-1 is set.
  bool any_in(int64_t first, int64_t end) const;
  bool any() const { return any_in(0, size_); }
  bool all() const;
  int64_t count() const;
  void merge(const ElementMask &other);

  // Calls f(i) for every set element, in ascending order.
  template <class F>
  void for_each(F &&f) const {
    for (size_t w = 0; w < words_.size(); ++w) {
      uint64_t bits = words_[w];
      while (bits) {
        const int bit = __builtin_ctzll(bits);
        f(static_cast<int64_t>(w * 64 + static_cast<size_t>(bit)));
        bits &= bits - 1;
      }
    }
  }

 private:
  int64_t size_ = 0;
  std::vector<uint64_t> words_;
};

// The rows of `want` (each `row_length` consecutive elements) that hold a
// wanted element: a mask of want.size() / row_length rows.
ElementMask rows_of(const ElementMask &want, int64_t row_length);

// The multi-index of logical row-major index `linear` over `dims` (rank
// `rank`), and back.
Index unravel(int64_t linear, int rank, const Index &dims);
int64_t ravel(const Index &index, int rank, const Index &dims);

}  // namespace cudnnfe::cpu
