// The stride lists tests build tensors with: packed (row-major),
// channels-last and transposed matrices, and whether two stride lists
// address the same memory. Dims are logical (N, C, spatial... for images).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace test_layouts {

using Dims = std::vector<int64_t>;

inline Dims packed(const Dims &d) {
  Dims s(d.size(), 1);
  for (int i = static_cast<int>(d.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * d[i + 1];
  return s;
}

// N, spatial..., C packed (rank >= 3). For C = 1 it gives C's stride 1,
// equal to the innermost spatial dim's, as torch's channels_last does.
inline Dims channels_last(const Dims &d) {
  Dims s(d.size());
  s[1] = 1;
  int64_t running = d[1];
  for (int i = static_cast<int>(d.size()) - 1; i >= 2; --i) {
    s[i] = running;
    running *= d[i];
  }
  s[0] = running;
  return s;
}

// The last two dims stored transposed (column-major matrices), batch packed
// outside them.
inline Dims transposed_matrices(const Dims &d) {
  const size_t r = d.size();
  Dims s(r);
  s[r - 2] = 1;
  s[r - 1] = d[r - 2];
  int64_t running = d[r - 2] * d[r - 1];
  for (int i = static_cast<int>(r) - 3; i >= 0; --i) {
    s[i] = running;
    running *= d[i];
  }
  return s;
}

// True when both stride lists address the same elements of `d` (a size-1
// dim's stride never counts).
inline bool same_memory(const Dims &d, const Dims &a, const Dims &b) {
  if (a.size() != d.size() || b.size() != d.size()) return false;
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] > 1 && a[i] != b[i]) return false;
  return true;
}

}  // namespace test_layouts
