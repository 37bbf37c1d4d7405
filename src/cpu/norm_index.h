// Where each element of a norm's x finds its statistics and parameters: the
// groups of ops/norm_shapes.h as indices, shared by every norm's loop
// (norm_ref.cpp, grouped_norm_ref.cpp).
#pragma once

#include <cstddef>
#include <vector>

#include "cpu/strided_tensor.h"
#include "graph/node.h"

namespace cudnnfe {
namespace cpu {

// For every element of x in row-major order: its statistics group and its
// scale and bias elements, as row-major indices into the statistics shape
// (x's dims with the reduced ones 1) and into the scale's and the bias's
// own dims (each x's or 1: they broadcast).
struct NormIndex {
  std::vector<size_t> group, scale, bias;
  size_t groups = 1;       // statistics
  size_t params = 1;       // scale elements
  double per_group = 1.0;  // M, elements per group
};

// `bias` may be nullptr (then `bias` is left empty).
NormIndex norm_index(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                     const StridedTensor *bias);

// The effective multiplier of each scale element: the scale, or 1 + scale
// with zero-centred gamma.
std::vector<double> norm_gamma(const Node &node, const StridedTensor &scale);

}  // namespace cpu
}  // namespace cudnnfe
