// Which key columns each query row of attention sees, for the CPU
// reference's forward and backward loops: the causal flags, the diagonal
// band and padding (ops/attention.h, docs/attention.md). Every combination
// leaves one contiguous range of columns per row.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "cpu/strided_tensor.h"
#include "ops/attention.h"

namespace cudnnfe {
namespace cpu {

// Columns first..last (inclusive); empty when first > last.
struct ColumnRange {
  int64_t first = 0;
  int64_t last = -1;
  bool empty() const { return first > last; }
};

// Whether a block mask (ops/attention.h, block_mask_dims) keeps score (n,
// h, i, j): bit t % 8 of byte t / 8 in tile row i / 128, t = j / 128.
inline bool block_mask_keeps(const StridedTensor &mask, int64_t n, int64_t h, int64_t i,
                             int64_t j) {
  const int64_t tile = j / kBlockMaskTile;
  const double byte =
      mask.load(n * mask.strides[0] + h * mask.strides[1] + (i / kBlockMaskTile) * mask.strides[2] +
                (tile / 8) * mask.strides[3]);
  return ((static_cast<unsigned>(byte) >> (tile % 8)) & 1u) != 0;
}

class AttentionMask {
 public:
  // `seq_len_q` / `seq_len_kv`: the INT32 [b,1,1,1] tensors with
  // padding_mask (else nullptr). Lengths outside 0..s_q / 0..s_kv are
  // refused with INVALID_ARGUMENT naming the node.
  AttentionMask(const AttentionSpec &spec, const std::string &label, int64_t batch, int64_t s_q,
                int64_t s_kv, const StridedTensor *seq_len_q, const StridedTensor *seq_len_kv)
      : bottom_right_(spec.bottom_right()),
        left_(spec.left_bound()),
        right_(spec.right_bound()),
        rows_(static_cast<size_t>(batch), s_q),
        cols_(static_cast<size_t>(batch), s_kv) {
    if (!spec.options.padding_mask) return;
    read_lengths(*seq_len_q, "seq_len_q", s_q, label, rows_);
    read_lengths(*seq_len_kv, "seq_len_kv", s_kv, label, cols_);
  }

  // Valid query rows and key columns of batch n (s_q and s_kv without
  // padding).
  int64_t rows(int64_t n) const { return rows_[static_cast<size_t>(n)]; }
  int64_t cols(int64_t n) const { return cols_[static_cast<size_t>(n)]; }

  // The columns row i of batch n sees: j < cols(n), and around the
  // diagonal d(i) = i (top-left) or i + cols(n) - rows(n) (bottom-right),
  // j > d(i) - left (left >= 1) and j <= d(i) + right (right >= 0). A
  // padding row (i >= rows(n)) sees none.
  ColumnRange columns(int64_t n, int64_t i) const {
    ColumnRange r;
    if (i >= rows(n)) return r;
    r.first = 0;
    r.last = cols(n) - 1;
    const int64_t diagonal = bottom_right_ ? i + cols(n) - rows(n) : i;
    if (right_ >= 0) r.last = std::min(r.last, diagonal + right_);
    if (left_ >= 1) r.first = std::max(r.first, diagonal - left_ + 1);
    return r;
  }

 private:
  static void read_lengths(const StridedTensor &t, const char *what, int64_t max,
                           const std::string &label, std::vector<int64_t> &out) {
    for (size_t n = 0; n < out.size(); ++n) {
      const double value = t.load(static_cast<int64_t>(n) * t.strides[0]);
      if (!(value >= 0 && value <= static_cast<double>(max)))
        fail(CUDNNFE_STATUS_INVALID_ARGUMENT, label, ": ", what, "[", n, "] = ", value,
             " is outside 0..", max);
      out[n] = static_cast<int64_t>(value);
    }
  }

  bool bottom_right_;
  int64_t left_, right_;
  std::vector<int64_t> rows_, cols_;
};

}  // namespace cpu
}  // namespace cudnnfe
