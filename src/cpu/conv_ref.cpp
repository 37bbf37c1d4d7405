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
#include "cpu/reference_table.h"
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

// The three tensors of a convolution by role, and its geometry.
struct ConvProblem {
  const StridedTensor *image = nullptr, *filter = nullptr, *loss = nullptr;
  ConvGeometry g;
};

ConvProblem conv_problem(const Node &node, const StridedTensor &in0, const StridedTensor &in1,
                         const StridedTensor &out) {
  const ConvAttrs &attrs = node.as<ConvAttrs>();
  if (in0.rank < 3 || in0.rank > 5 || in1.rank != in0.rank || out.rank != in0.rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference runs convolutions of 1 to 3 spatial dims only");
  ConvProblem p;
  ConvGeometry &g = p.g;
  g.flip = attrs.mode == CUDNNFE_CONV_MODE_CONVOLUTION;
  for (int d = 0; d + 2 < in0.rank; ++d) {
    g.pad[d] = attrs.pre_padding[d];
    g.stride[d] = attrs.stride[d];
    g.dilation[d] = attrs.dilation[d];
  }
  // Post padding only bounds the output size, which shape inference fixed.
  switch (node.kind) {
    case OpKind::kConvFprop: p.image = &in0, p.filter = &in1, p.loss = &out; break;
    case OpKind::kConvDgrad: p.loss = &in0, p.filter = &in1, p.image = &out; break;
    case OpKind::kConvWgrad: p.image = &in0, p.loss = &in1, p.filter = &out; break;
    default: fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": not a convolution");
  }
  g.n = p.image->dims[0];
  g.c = p.image->dims[1];
  g.k = p.loss->dims[1];
  g.cg = p.filter->dims[1];
  // Shape inference checked that C and K divide into whole groups.
  g.groups = g.c / g.cg;
  g.kg = g.k / g.groups;
  g.in = spatial(*p.image);
  g.filt = spatial(*p.filter);
  g.out = spatial(*p.loss);
  return p;
}

// ---------------------------------------------------------------------------
// Sampled convolution (verify mode): one wanted element at a time, by the
// same sums as the loops above, reading the tensors in place.

// Element (n, c, s) of an image-, loss- or filter-shaped tensor: s is a
// spatial position (missing spatial dims are 0).
int64_t element_offset(const StridedTensor &t, int64_t n, int64_t c, const Dims3 &s) {
  int64_t off = n * t.strides[0] + c * t.strides[1];
  for (int d = 0; d + 2 < t.rank; ++d) off += s[d] * t.strides[2 + d];
  return off;
}
int64_t element_linear(const Dims3 &spatial_dims, int64_t channels, int64_t n, int64_t c,
                       const Dims3 &s) {
  return (((n * channels + c) * spatial_dims[0] + s[0]) * spatial_dims[1] + s[1]) *
             spatial_dims[2] +
         s[2];
}
// (n, c, s) of logical index `linear` of a tensor with `channels` and
// `spatial_dims`.
void split_linear(int64_t linear, const Dims3 &spatial_dims, int64_t channels, int64_t &n,
                  int64_t &c, Dims3 &s) {
  for (int d = 2; d >= 0; --d) {
    s[d] = linear % spatial_dims[d];
    linear /= spatial_dims[d];
  }
  c = linear % channels;
  n = linear / channels;
}

// The image position that output o reads through tap r, or false when it
// falls in the padding.
bool image_position(const ConvGeometry &g, const Dims3 &o, const Dims3 &r, Dims3 &p) {
  for (int d = 0; d < 3; ++d) {
    p[d] = o[d] * g.stride[d] - g.pad[d] + r[d] * g.dilation[d];
    if (p[d] < 0 || p[d] >= g.in[d]) return false;
  }
  return true;
}

// The output position that reads image position p through tap r, or false.
bool output_position(const ConvGeometry &g, const Dims3 &p, const Dims3 &r, Dims3 &o) {
  for (int d = 0; d < 3; ++d) {
    const int64_t q = p[d] + g.pad[d] - r[d] * g.dilation[d];
    if (q < 0 || q % g.stride[d] != 0 || q / g.stride[d] >= g.out[d]) return false;
    o[d] = q / g.stride[d];
  }
  return true;
}

// The filter's tap r of (k, cl) in its own layout (flipped for CONVOLUTION).
int64_t filter_offset(const ConvGeometry &g, const StridedTensor &w, int64_t k, int64_t cl,
                      const Dims3 &r) {
  Dims3 q = r;
  if (g.flip)
    for (int d = 0; d < 3; ++d) q[d] = g.filt[d] - 1 - r[d];
  return element_offset(w, k, cl, q);
}

double sampled_element(const ConvProblem &p, OpKind kind, cudnnfe_dtype_t compute, int64_t linear) {
  const ConvGeometry &g = p.g;
  auto at = [&](const StridedTensor &t, int64_t off) {
    return round_to_compute(t.load(off), compute);
  };
  double acc = 0.0;
  int64_t a = 0, b = 0;  // (n, k) of y, (n, c) of dx, (k, cl) of dw
  Dims3 s;
  if (kind == OpKind::kConvFprop) {
    split_linear(linear, g.out, g.k, a, b, s);
    const int64_t c0 = b / g.kg * g.cg;
    for (int64_t cl = 0; cl < g.cg; ++cl)
      for_each_tap(g.filt, [&](const Dims3 &r) {
        Dims3 pos;
        if (image_position(g, s, r, pos))
          acc += at(*p.image, element_offset(*p.image, a, c0 + cl, pos)) *
                 at(*p.filter, filter_offset(g, *p.filter, b, cl, r));
      });
  } else if (kind == OpKind::kConvDgrad) {
    split_linear(linear, g.in, g.c, a, b, s);
    const int64_t k0 = b / g.cg * g.kg;
    for (int64_t k = k0; k < k0 + g.kg; ++k)
      for_each_tap(g.filt, [&](const Dims3 &r) {
        Dims3 o;
        if (output_position(g, s, r, o))
          acc += at(*p.loss, element_offset(*p.loss, a, k, o)) *
                 at(*p.filter, filter_offset(g, *p.filter, k, b % g.cg, r));
      });
  } else {
    // dw[k, cl, r] in the filter's own (unflipped) tap order.
    split_linear(linear, g.filt, g.cg, a, b, s);
    Dims3 r = s;
    if (g.flip)
      for (int d = 0; d < 3; ++d) r[d] = g.filt[d] - 1 - s[d];
    const int64_t ci = a / g.kg * g.cg + b;
    for (int64_t n = 0; n < g.n; ++n)
      for_each_tap(g.out, [&](const Dims3 &o) {
        Dims3 pos;
        if (image_position(g, o, r, pos))
          acc += at(*p.image, element_offset(*p.image, n, ci, pos)) *
                 at(*p.loss, element_offset(*p.loss, n, a, o));
      });
  }
  return acc;
}

}  // namespace

void run_conv(const Node &node, const StridedTensor &in0, const StridedTensor &in1,
              const StridedTensor &out, const ElementMask *want) {
  const ConvProblem p = conv_problem(node, in0, in1, out);
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (want && !want->all()) {
    want->for_each([&](int64_t linear) {
      const double v = sampled_element(p, node.kind, compute, linear);
      out.store(out.offset(unravel(linear, out.rank, out.dims).data()),
                round_to_compute(v, compute));
    });
    return;
  }
  const std::vector<double> a = load_dense(in0, compute);
  const std::vector<double> b = load_dense(in1, compute);
  std::vector<double> result(static_cast<size_t>(out.element_count()));
  switch (node.kind) {
    case OpKind::kConvFprop: fprop(p.g, a, b, result); break;
    case OpKind::kConvDgrad: dgrad(p.g, a, b, result); break;
    default: wgrad(p.g, a, b, result); break;
  }
  store_dense(out, std::move(result), compute);
}

// Marks the receptive fields: for y[n, k, o] the image window of k's group
// and filter k; for dx[n, c, p] the loss positions that reach p in c's
// group and their filters' channel c; for dw[k, cl, r] channel cl of k's
// group at every position tap r reads, and loss channel k.
void demand_conv(const DemandStep &t) {
  // conv_fprop's port names; conv_dgrad's and conv_wgrad's ports are at the
  // same positions (cpu/reference_table.cpp).
  const ElementMask *want = t.wanted(ConvFprop::kY);
  if (!want) return;
  const ConvProblem p = conv_problem(t.node, *t.in(ConvFprop::kImage), *t.in(ConvFprop::kWeight),
                                     *t.out(ConvFprop::kY));
  const ConvGeometry &g = p.g;
  ElementMask &in0 = *t.needed(ConvFprop::kImage), &in1 = *t.needed(ConvFprop::kWeight);
  const int64_t taps = g.filt[0] * g.filt[1] * g.filt[2];
  want->for_each([&](int64_t linear) {
    int64_t a, b;
    Dims3 s;
    if (t.node.kind == OpKind::kConvFprop) {
      split_linear(linear, g.out, g.k, a, b, s);
      const int64_t c0 = b / g.kg * g.cg;
      for (int64_t cl = 0; cl < g.cg; ++cl)
        for_each_tap(g.filt, [&](const Dims3 &r) {
          Dims3 pos;
          if (image_position(g, s, r, pos)) in0.set(element_linear(g.in, g.c, a, c0 + cl, pos));
        });
      in1.set_range(b * g.cg * taps, (b + 1) * g.cg * taps);
    } else if (t.node.kind == OpKind::kConvDgrad) {
      split_linear(linear, g.in, g.c, a, b, s);
      const int64_t k0 = b / g.cg * g.kg;
      for (int64_t k = k0; k < k0 + g.kg; ++k) {
        for_each_tap(g.filt, [&](const Dims3 &r) {
          Dims3 o;
          if (output_position(g, s, r, o)) in0.set(element_linear(g.out, g.k, a, k, o));
        });
        const int64_t first = (k * g.cg + b % g.cg) * taps;
        in1.set_range(first, first + taps);
      }
    } else {
      split_linear(linear, g.filt, g.cg, a, b, s);
      Dims3 r = s;
      if (g.flip)
        for (int d = 0; d < 3; ++d) r[d] = g.filt[d] - 1 - s[d];
      const int64_t ci = a / g.kg * g.cg + b;
      for (int64_t n = 0; n < g.n; ++n) {
        for_each_tap(g.out, [&](const Dims3 &o) {
          Dims3 pos;
          if (image_position(g, o, r, pos)) in0.set(element_linear(g.in, g.c, n, ci, pos));
        });
        const int64_t first = (n * g.k + a) * g.out_size();
        in1.set_range(first, first + g.out_size());
      }
    }
  });
}

}  // namespace cpu
}  // namespace cudnnfe
