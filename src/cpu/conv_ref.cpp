// Convolution forward, data gradient and weight gradient as direct loops.
// Tensors are first read into packed NC(D)(H)W doubles; missing spatial dims
// become trailing dims of size 1, so every case runs as a 3-D convolution.
// Grouped convolutions loop per group: output channel k reads the image
// channels of its group only (the weight holds C / groups channels).
#include <algorithm>
#include <array>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

using Dims3 = std::array<int64_t, 3>;

// Sizes of one convolution: image/dx spatial `in`, filter `filt`, loss/y
// spatial `out`, with N images, C input and K output channels in `groups`
// groups of cg = C / groups input and kg = K / groups output channels.
struct ConvGeometry {
  int64_t n = 1, c = 1, k = 1, groups = 1, cg = 1, kg = 1;
  Dims3 in{1, 1, 1}, filt{1, 1, 1}, out{1, 1, 1};
  Dims3 pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};
  bool flip = false;  // CONVOLUTION mode reverses the filter spatially

  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  // Offset of filter tap `r` of (ki, ci) in packed KC(D)(H)W order, where ci
  // counts within ki's group.
  int64_t filter_index(int64_t ki, int64_t ci, const Dims3 &r) const {
    Dims3 q = r;
    if (flip)
      for (int d = 0; d < 3; ++d) q[d] = filt[d] - 1 - r[d];
    return (((ki * cg + ci) * filt[0] + q[0]) * filt[1] + q[1]) * filt[2] + q[2];
  }
};

Dims3 spatial(const StridedTensor &t) {
  Dims3 s{1, 1, 1};
  for (int d = 0; d + 2 < t.rank; ++d) s[d] = t.dims[2 + d];
  return s;
}

// Output o reads image position p = o * stride - pad + r * dilation through
// tap r. For one tap, calls f(o_offset, p_offset, count) for each row of
// outputs along the innermost dim whose positions fall inside the image:
// outputs o_offset + i and positions p_offset + i * stride[2] (offsets in
// packed spatial order), i < count. Padding is skipped, not tested per
// element, which keeps the inner loops branch-free.
template <class F>
void for_each_tap_row(const ConvGeometry &g, const Dims3 &r, F &&f) {
  Dims3 base, lo, hi;
  for (int d = 0; d < 3; ++d) {
    base[d] = r[d] * g.dilation[d] - g.pad[d];
    if (g.in[d] - 1 - base[d] < 0) return;  // the tap only ever sees padding
    lo[d] = base[d] >= 0 ? 0 : (-base[d] + g.stride[d] - 1) / g.stride[d];
    hi[d] = std::min(g.out[d] - 1, (g.in[d] - 1 - base[d]) / g.stride[d]);
    if (lo[d] > hi[d]) return;
  }
  for (int64_t o0 = lo[0]; o0 <= hi[0]; ++o0) {
    const int64_t p0 = o0 * g.stride[0] + base[0];
    for (int64_t o1 = lo[1]; o1 <= hi[1]; ++o1) {
      const int64_t p1 = o1 * g.stride[1] + base[1];
      f((o0 * g.out[1] + o1) * g.out[2] + lo[2],
        (p0 * g.in[1] + p1) * g.in[2] + lo[2] * g.stride[2] + base[2], hi[2] - lo[2] + 1);
    }
  }
}

// Calls f(r) for every tap of the filter.
template <class F>
void for_each_tap(const Dims3 &filt, F &&f) {
  Dims3 r{};
  for (r[0] = 0; r[0] < filt[0]; ++r[0])
    for (r[1] = 0; r[1] < filt[1]; ++r[1])
      for (r[2] = 0; r[2] < filt[2]; ++r[2]) f(static_cast<const Dims3 &>(r));
}

// y[n,k,o] = sum_{c in k's group, r} x[n,c,p(o,r)] * w[k,c,r]
void fprop(const ConvGeometry &g, const std::vector<double> &x, const std::vector<double> &w,
           std::vector<double> &y) {
  const int64_t s = g.stride[2];
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t ki = 0; ki < g.k; ++ki) {
      double *y_plane = &y[static_cast<size_t>((ni * g.k + ki) * g.out_size())];
      const int64_t c0 = ki / g.kg * g.cg;  // first image channel of ki's group
      for (int64_t cl = 0; cl < g.cg; ++cl) {
        const double *x_plane = &x[static_cast<size_t>((ni * g.c + c0 + cl) * g.in_size())];
        for_each_tap(g.filt, [&](const Dims3 &r) {
          const double wv = w[static_cast<size_t>(g.filter_index(ki, cl, r))];
          for_each_tap_row(g, r, [&](int64_t o, int64_t p, int64_t count) {
            for (int64_t i = 0; i < count; ++i) y_plane[o + i] += wv * x_plane[p + i * s];
          });
        });
      }
    }
}

// dx[n,c,p] = sum over (k in c's group, r, o) with p(o,r) = p of dy[n,k,o] * w[k,c,r]
void dgrad(const ConvGeometry &g, const std::vector<double> &dy, const std::vector<double> &w,
           std::vector<double> &dx) {
  const int64_t s = g.stride[2];
  for (int64_t ni = 0; ni < g.n; ++ni)
    for (int64_t ci = 0; ci < g.c; ++ci) {
      double *dx_plane = &dx[static_cast<size_t>((ni * g.c + ci) * g.in_size())];
      const int64_t k0 = ci / g.cg * g.kg;  // first output channel of ci's group
      for (int64_t ki = k0; ki < k0 + g.kg; ++ki) {
        const double *dy_plane = &dy[static_cast<size_t>((ni * g.k + ki) * g.out_size())];
        for_each_tap(g.filt, [&](const Dims3 &r) {
          const double wv = w[static_cast<size_t>(g.filter_index(ki, ci % g.cg, r))];
          for_each_tap_row(g, r, [&](int64_t o, int64_t p, int64_t count) {
            for (int64_t i = 0; i < count; ++i) dx_plane[p + i * s] += wv * dy_plane[o + i];
          });
        });
      }
    }
}

// dw[k,c,r] = sum_{n,o} x[n,c,p(o,r)] * dy[n,k,o], c in k's group
void wgrad(const ConvGeometry &g, const std::vector<double> &x, const std::vector<double> &dy,
           std::vector<double> &dw) {
  const int64_t s = g.stride[2];
  for (int64_t ki = 0; ki < g.k; ++ki)
    for (int64_t cl = 0; cl < g.cg; ++cl)
      for_each_tap(g.filt, [&](const Dims3 &r) {
        const int64_t ci = ki / g.kg * g.cg + cl;
        double acc = 0.0;
        for (int64_t ni = 0; ni < g.n; ++ni) {
          const double *x_plane = &x[static_cast<size_t>((ni * g.c + ci) * g.in_size())];
          const double *dy_plane = &dy[static_cast<size_t>((ni * g.k + ki) * g.out_size())];
          for_each_tap_row(g, r, [&](int64_t o, int64_t p, int64_t count) {
            for (int64_t i = 0; i < count; ++i) acc += x_plane[p + i * s] * dy_plane[o + i];
          });
        }
        dw[static_cast<size_t>(g.filter_index(ki, cl, r))] = acc;
      });
}

}  // namespace

void run_conv(const Node &node, const StridedTensor &in0, const StridedTensor &in1,
              const StridedTensor &out) {
  const ConvAttrs &attrs = node.as<ConvAttrs>();
  if (in0.rank < 3 || in0.rank > 5 || in1.rank != in0.rank || out.rank != in0.rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference runs convolutions of 1 to 3 spatial dims only");
  ConvGeometry g;
  g.flip = attrs.mode == CUDNNFE_CONV_MODE_CONVOLUTION;
  for (int d = 0; d + 2 < in0.rank; ++d) {
    g.pad[d] = attrs.pre_padding[d];
    g.stride[d] = attrs.stride[d];
    g.dilation[d] = attrs.dilation[d];
  }
  // Post padding only bounds the output size, which shape inference fixed.
  const StridedTensor *image = nullptr, *filter = nullptr, *loss = nullptr;
  switch (node.kind) {
    case OpKind::kConvFprop: image = &in0, filter = &in1, loss = &out; break;
    case OpKind::kConvDgrad: loss = &in0, filter = &in1, image = &out; break;
    case OpKind::kConvWgrad: image = &in0, loss = &in1, filter = &out; break;
    default: fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": not a convolution");
  }
  g.n = image->dims[0];
  g.c = image->dims[1];
  g.k = loss->dims[1];
  g.cg = filter->dims[1];
  // Shape inference checked that C and K divide into whole groups.
  g.groups = g.c / g.cg;
  g.kg = g.k / g.groups;
  g.in = spatial(*image);
  g.filt = spatial(*filter);
  g.out = spatial(*loss);

  const cudnnfe_dtype_t compute = node.compute_dtype;
  const std::vector<double> a = load_dense(in0, compute);
  const std::vector<double> b = load_dense(in1, compute);
  std::vector<double> result(static_cast<size_t>(out.element_count()));
  switch (node.kind) {
    case OpKind::kConvFprop: fprop(g, a, b, result); break;
    case OpKind::kConvDgrad: dgrad(g, a, b, result); break;
    default: wgrad(g, a, b, result); break;
  }
  store_dense(out, std::move(result), compute);
}

}  // namespace cpu
}  // namespace cudnnfe
