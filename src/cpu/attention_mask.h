// The causal masks of attention, shared by the forward and backward loops.
#pragma once

#include <algorithm>
#include <cstdint>

namespace cudnnfe {
namespace cpu {

// Last key column query row `row` may see (columns 0..last; -1: none).
// Top-left alignment keeps col <= row; bottom-right keeps
// col <= row + s_kv - s_q, so the last query row sees every key.
inline int64_t last_visible_column(bool top_left, bool bottom_right, int64_t row, int64_t s_q,
                                   int64_t s_kv) {
  int64_t last = s_kv - 1;
  if (top_left) last = std::min(last, row);
  if (bottom_right) last = std::min(last, row + s_kv - s_q);
  return std::max<int64_t>(last, -1);
}

}  // namespace cpu
}  // namespace cudnnfe
