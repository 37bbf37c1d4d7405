// Block-scale quantize and dequantize on the CPU (the rule of
// docs/layout-ops.md, "Block scaling"): per block, scale = amax / max(y
// type) in float rounded up to a power of two (FP8_E8M0), y = x / scale
// rounded to nearest even and saturated by the FP8 store.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/reference_ops.h"
#include "graph/node.h"

namespace cudnnfe {
namespace cpu {
namespace {

int resolved_axis(const Node &node, int rank) {
  const int axis = node.as<BlockScaleAttrs>().axis;
  return axis < 0 ? axis + rank : axis;
}

// Calls body(block index, offset in x, k) for the block_size elements of
// each block, block by block (blocks in row-major order of the scale).
template <class Body>
void for_each_block(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                    Body body) {
  const int rank = x.rank;
  const int axis = resolved_axis(node, rank);
  const int64_t block = node.as<BlockScaleAttrs>().block_size;
  if (scale.element_count() == 0) return;
  Index s{};
  do {
    Index i = s;
    const int64_t start = s[axis] * block;
    for (int64_t k = 0; k < block; ++k) {
      i[axis] = start + k;
      body(s, x.offset(i.data()), k);
    }
  } while (next_index(s, rank, scale.dims));
}

double max_finite(cudnnfe_dtype_t fp8) {
  return fp8 == CUDNNFE_DTYPE_FP8_E5M2 ? 57344.0 : 448.0;
}

}  // namespace

double block_scale_for_amax(double amax, cudnnfe_dtype_t y_dtype) {
  if (std::isnan(amax)) return std::numeric_limits<double>::quiet_NaN();
  // cuDNN computes in FLOAT: the quotient is a float before rounding up.
  const float ratio = static_cast<float>(amax) / static_cast<float>(max_finite(y_dtype));
  return decode_fp8_e8m0(encode_fp8_e8m0(ratio));
}

void run_block_scale_quantize(const Node &node, const StridedTensor &x, const StridedTensor &y,
                              const StridedTensor &scale) {
  const int64_t block = node.as<BlockScaleAttrs>().block_size;
  std::vector<double> values(static_cast<size_t>(block));
  double amax = 0.0;
  for_each_block(node, x, scale, [&](const Index &s, int64_t offset, int64_t k) {
    const double v = x.load(offset);
    values[k] = v;
    if (k == 0) amax = 0.0;
    amax = std::isnan(v) || std::isnan(amax) ? std::numeric_limits<double>::quiet_NaN()
                                             : std::max(amax, std::fabs(v));
    if (k + 1 < block) return;
    const double sc = block_scale_for_amax(amax, y.dtype);
    scale.store(scale.offset(s.data()), sc);
    // y and x share dims, so x's index maps to y's through their strides.
    for (int64_t j = 0; j < block; ++j) {
      Index i = s;
      const int axis = resolved_axis(node, x.rank);
      i[axis] = s[axis] * block + j;
      y.store(y.offset(i.data()), values[j] / sc);
    }
  });
}

void run_block_scale_dequantize(const Node &node, const StridedTensor &x,
                                const StridedTensor &scale, const StridedTensor &y) {
  const int64_t block = node.as<BlockScaleAttrs>().block_size;
  const int axis = resolved_axis(node, x.rank);
  for_each_block(node, x, scale, [&](const Index &s, int64_t offset, int64_t k) {
    Index i = s;
    i[axis] = s[axis] * block + k;
    const double product = static_cast<float>(x.load(offset) * scale.load(scale.offset(s.data())));
    y.store(y.offset(i.data()), product);
  });
}

}  // namespace cpu
}  // namespace cudnnfe
