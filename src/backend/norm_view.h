// Seeing a norm's tensors through fewer dims, as cuDNN's norm samples shape
// them ([rows, features, 1, 1] for layer and RMS norm, [B, S, features] for
// adaptive layer norm): x's dims are cut into ordered groups, and a tensor
// collapses each group into one dim when, within the group, its dims are
// all x's or all 1 and those of extent > 1 are contiguous in x's dimension
// order. A tensor that cannot be collapsed is described in its own dims
// instead (every operand of the node then is), and cuDNN decides.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/tensor.h"

namespace cudnnfe::backend {

class NormView {
 public:
  // `groups`: x's dims by group, in the order of the collapsed dims.
  NormView(const Tensor &x, std::vector<std::vector<size_t>> groups);

  // One collapsed dim per group: its extent (1 where `t` broadcasts over
  // the group) and the stride of its innermost dim (0 where the extent is
  // 1: the caller picks one). False when `t` does not collapse.
  struct Collapsed {
    std::vector<int64_t> dims, strides;
  };
  bool collapse(const Tensor &t, Collapsed *out) const;

 private:
  std::vector<std::vector<size_t>> groups_;  // each in x's order, outermost first
  std::vector<int64_t> x_dims_;
};

// Strides for `dims` where every dim of extent 1 continues the packing of
// the dims inside it in `order` (outermost first); other strides are kept.
std::vector<int64_t> canonical_strides(const std::vector<int64_t> &dims,
                                       std::vector<int64_t> strides,
                                       const std::vector<size_t> &order);

}  // namespace cudnnfe::backend
