// Resampling forward on the CPU: pooling (max, average including or
// excluding padding) and upsampling (nearest, bilinear/trilinear), 1 to 3
// spatial dims, in double with inputs rounded to the compute type.
//
// Pooling: output o of spatial dim d covers input positions
// o * stride - pre + r for window offsets r. Positions outside the image
// read the padding: ZERO gives 0, NEG_INF is skipped (-infinity never
// wins), EDGE reads the nearest edge element. Max pooling propagates NaN
// (a NaN in the window is the result) and its index is the window
// position, row-major over the window, of the first maximum (or first NaN).
// Average pooling divides by the window size (INCLUDE_PADDING) or by the
// number of in-image positions (EXCLUDE_PADDING).
//
// Upsampling by an integer scale s: output o reads source coordinate
// c = (o + 0.5) / s - 0.5 (half-pixel centres). NEAREST takes
// floor(o / s); BILINEAR interpolates between floor(c) and floor(c) + 1,
// with c clamped to [0, in - 1] (edges repeat).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

using Dims3 = std::array<int64_t, 3>;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Geometry {
  int spatial = 0;
  Dims3 in{1, 1, 1}, out{1, 1, 1};
};

// Offsets of x (and y) for batch n, channel c and a spatial index.
int64_t offset(const StridedTensor &t, int64_t n, int64_t c, const Dims3 &s, int spatial) {
  int64_t off = n * t.strides[0] + c * t.strides[1];
  for (int d = 0; d < spatial; ++d) off += s[d] * t.strides[2 + d];
  return off;
}

// Advances a spatial index over `dims` (first `spatial` entries).
bool next_spatial(Dims3 &index, const Dims3 &dims, int spatial) {
  for (int d = spatial - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

void pool(const Node &node, const ResampleAttrs &a, const Geometry &g, const StridedTensor &x,
          const StridedTensor &y, const StridedTensor *index) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const bool max = a.mode == CUDNNFE_RESAMPLE_MAXPOOL;
  Dims3 window{1, 1, 1};
  int64_t window_size = 1;
  for (int d = 0; d < g.spatial; ++d) {
    window[d] = a.window[d];
    window_size *= window[d];
  }
  for (int64_t n = 0; n < x.dims[0]; ++n) {
    for (int64_t c = 0; c < x.dims[1]; ++c) {
      Dims3 o{0, 0, 0};
      do {
        double best = kNegInf, sum = 0.0;
        int64_t best_at = -1, inside = 0, position = 0;
        Dims3 r{0, 0, 0};
        do {
          Dims3 p{0, 0, 0};
          bool in_image = true;
          for (int d = 0; d < g.spatial; ++d) {
            p[d] = o[d] * a.stride[d] - a.pre_padding[d] + r[d];
            if (p[d] < 0 || p[d] >= g.in[d]) in_image = false;
          }
          double v = 0.0;
          bool counts = true;
          if (in_image) {
            v = round_to_compute(x.load(offset(x, n, c, p, g.spatial)), compute);
            ++inside;
          } else if (a.padding_mode == CUDNNFE_PADDING_EDGE) {
            for (int d = 0; d < g.spatial; ++d) p[d] = std::clamp<int64_t>(p[d], 0, g.in[d] - 1);
            v = round_to_compute(x.load(offset(x, n, c, p, g.spatial)), compute);
          } else if (a.padding_mode == CUDNNFE_PADDING_NEG_INF) {
            counts = false;  // never the maximum
          }
          if (max && counts) {
            const bool take = best_at < 0 || (!std::isnan(best) && (std::isnan(v) || v > best));
            if (take) {
              best = v;
              best_at = position;
            }
          }
          sum += v;
          ++position;
        } while (next_spatial(r, window, g.spatial));
        double result;
        if (max) {
          result = best_at < 0 ? kNegInf : best;
        } else {
          const double divisor = a.mode == CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                     ? static_cast<double>(window_size)
                                     : static_cast<double>(inside);
          result = sum / divisor;
        }
        y.store(offset(y, n, c, o, g.spatial), round_to_compute(result, compute));
        if (index) index->store(offset(*index, n, c, o, g.spatial), static_cast<double>(best_at));
      } while (next_spatial(o, g.out, g.spatial));
    }
  }
}

void upsample(const Node &node, const ResampleAttrs &a, const Geometry &g, const StridedTensor &x,
              const StridedTensor &y) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const bool nearest = a.mode == CUDNNFE_RESAMPLE_NEAREST;
  const int corners = nearest ? 1 : 1 << g.spatial;
  for (int64_t n = 0; n < x.dims[0]; ++n) {
    for (int64_t c = 0; c < x.dims[1]; ++c) {
      Dims3 o{0, 0, 0};
      do {
        // Per dim: the two source positions and the weight of the second.
        Dims3 lo{0, 0, 0}, hi{0, 0, 0};
        std::array<double, 3> w{0, 0, 0};
        for (int d = 0; d < g.spatial; ++d) {
          if (nearest) {
            lo[d] = std::min(o[d] / a.scale[d], g.in[d] - 1);
            continue;
          }
          double src = (static_cast<double>(o[d]) + 0.5) / static_cast<double>(a.scale[d]) - 0.5;
          src = std::clamp(src, 0.0, static_cast<double>(g.in[d] - 1));
          lo[d] = static_cast<int64_t>(std::floor(src));
          hi[d] = std::min(lo[d] + 1, g.in[d] - 1);
          w[d] = src - static_cast<double>(lo[d]);
        }
        double value = 0.0;
        for (int corner = 0; corner < corners; ++corner) {
          Dims3 p{0, 0, 0};
          double weight = 1.0;
          for (int d = 0; d < g.spatial; ++d) {
            const bool upper = !nearest && ((corner >> d) & 1);
            p[d] = upper ? hi[d] : lo[d];
            if (!nearest) weight *= upper ? w[d] : 1.0 - w[d];
          }
          if (weight == 0.0) continue;
          value += weight * round_to_compute(x.load(offset(x, n, c, p, g.spatial)), compute);
        }
        y.store(offset(y, n, c, o, g.spatial), round_to_compute(value, compute));
      } while (next_spatial(o, g.out, g.spatial));
    }
  }
}

}  // namespace

void run_resample(const Node &node, const StridedTensor &x, const StridedTensor &y,
                  const StridedTensor *index) {
  const ResampleAttrs &a = node.as<ResampleAttrs>();
  if (x.rank != y.rank || x.rank < 3 || x.rank > 5)
    fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": unexpected ranks");
  Geometry g;
  g.spatial = x.rank - 2;
  for (int d = 0; d < g.spatial; ++d) {
    g.in[d] = x.dims[2 + d];
    g.out[d] = y.dims[2 + d];
  }
  if (a.mode == CUDNNFE_RESAMPLE_NEAREST || a.mode == CUDNNFE_RESAMPLE_BILINEAR)
    upsample(node, a, g, x, y);
  else
    pool(node, a, g, x, y, index);
}

}  // namespace cpu
}  // namespace cudnnfe
