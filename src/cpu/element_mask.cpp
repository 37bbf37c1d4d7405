// Element sets of verify mode (cpu/element_mask.h).
#include "cpu/element_mask.h"

namespace cudnnfe::cpu {

void ElementMask::set_range(int64_t first, int64_t end) {
  for (int64_t i = first; i < end;) {
    if ((i & 63) == 0 && end - i >= 64) {
      words_[static_cast<size_t>(i >> 6)] = ~uint64_t{0};
      i += 64;
    } else {
      set(i++);
    }
  }
}

bool ElementMask::any_in(int64_t first, int64_t end) const {
  for (int64_t i = first; i < end;) {
    if ((i & 63) == 0 && end - i >= 64) {
      if (words_[static_cast<size_t>(i >> 6)]) return true;
      i += 64;
    } else if (test(i++)) {
      return true;
    }
  }
  return false;
}

bool ElementMask::all() const {
  return count() == size_;
}

int64_t ElementMask::count() const {
  int64_t n = 0;
  for (uint64_t w : words_) n += __builtin_popcountll(w);
  return n;
}

void ElementMask::merge(const ElementMask &other) {
  for (size_t w = 0; w < words_.size() && w < other.words_.size(); ++w)
    words_[w] |= other.words_[w];
}

ElementMask rows_of(const ElementMask &want, int64_t row_length) {
  ElementMask rows(want.size() / row_length);
  want.for_each([&](int64_t i) { rows.set(i / row_length); });
  return rows;
}

Index unravel(int64_t linear, int rank, const Index &dims) {
  Index index{};
  for (int i = rank - 1; i >= 0; --i) {
    index[i] = linear % dims[i];
    linear /= dims[i];
  }
  return index;
}

int64_t ravel(const Index &index, int rank, const Index &dims) {
  int64_t linear = 0;
  for (int i = 0; i < rank; ++i) linear = linear * dims[i] + index[i];
  return linear;
}

}  // namespace cudnnfe::cpu
