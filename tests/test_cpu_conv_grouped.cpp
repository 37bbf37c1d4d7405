// Grouped and depthwise convolutions on the CPU reference (fprop, dgrad,
// wgrad; 1 to 3 spatial dims; NCHW and NHWC) against plain loops written
// here from the definition, independent of src/cpu/conv_ref.cpp.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;

// One grouped convolution: x [N, C, S...], w [K, C/groups, R...].
struct GroupedCase {
  const char *name;
  int64_t n, c, k, groups;
  Dims image, filter;  // spatial sizes
  Dims pad, stride, dilation;
};

const std::vector<GroupedCase> &grouped_cases() {
  static const std::vector<GroupedCase> cases = {
      {"2d groups=2", 2, 4, 6, 2, {5, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"2d groups=4 stride 2", 1, 8, 8, 4, {7, 5}, {3, 2}, {1, 0}, {2, 1}, {1, 1}},
      {"2d groups=8 dilation", 2, 16, 8, 8, {6, 6}, {2, 3}, {0, 2}, {1, 2}, {2, 1}},
      {"2d depthwise", 2, 6, 6, 6, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"2d depthwise multiplier 2", 1, 4, 8, 4, {4, 5}, {3, 3}, {1, 1}, {2, 2}, {1, 1}},
      {"1d groups=2", 2, 4, 4, 2, {9}, {3}, {1}, {2}, {1}},
      {"1d depthwise", 1, 8, 8, 8, {7}, {5}, {2}, {1}, {1}},
      {"3d groups=2", 1, 4, 2, 2, {3, 4, 4}, {2, 3, 3}, {0, 1, 1}, {1, 1, 2}, {1, 1, 1}},
      {"3d depthwise", 2, 3, 3, 3, {4, 3, 5}, {3, 2, 3}, {1, 0, 1}, {1, 1, 1}, {1, 2, 1}},
  };
  return cases;
}

int64_t product(const Dims &d) {
  int64_t p = 1;
  for (int64_t v : d) p *= v;
  return p;
}

Dims concat(Dims a, const Dims &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Packed strides, NC(D)(H)W or N(D)(H)WC.
Dims packed_strides(const Dims &dims, bool channels_last) {
  const size_t r = dims.size();
  Dims order;  // innermost first
  if (channels_last) {
    order.push_back(1);
    for (size_t i = r - 1; i >= 2; --i) order.push_back(static_cast<int64_t>(i));
  } else {
    for (size_t i = r - 1; i >= 1; --i) order.push_back(static_cast<int64_t>(i));
  }
  order.push_back(0);
  Dims strides(r);
  int64_t s = 1;
  for (int64_t i : order) {
    strides[static_cast<size_t>(i)] = s;
    s *= dims[static_cast<size_t>(i)];
  }
  return strides;
}

// Offset in a strided buffer of the `flat`-th element in NC(D)(H)W order.
int64_t offset_of(int64_t flat, const Dims &dims, const Dims &strides) {
  int64_t offset = 0;
  for (size_t i = dims.size(); i-- > 0;) {
    offset += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return offset;
}

std::vector<float> to_layout(const std::vector<double> &logical, const Dims &dims,
                             const Dims &strides) {
  std::vector<float> out(logical.size());
  for (int64_t i = 0; i < product(dims); ++i)
    out[static_cast<size_t>(offset_of(i, dims, strides))] = static_cast<float>(logical[i]);
  return out;
}

std::vector<double> from_layout(const std::vector<float> &buffer, const Dims &dims,
                                const Dims &strides) {
  std::vector<double> out(buffer.size());
  for (int64_t i = 0; i < product(dims); ++i)
    out[static_cast<size_t>(i)] = buffer[static_cast<size_t>(offset_of(i, dims, strides))];
  return out;
}

// Small integers in [-6, 6] that vary from element to element (period 13),
// so float sums are exact and a channel read from the wrong group changes
// the result.
std::vector<double> values(int64_t count, int seed) {
  std::vector<double> v(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i)
    v[static_cast<size_t>(i)] = static_cast<double>((i * 5 + seed * 3) % 13 - 6);
  return v;
}

// Spatial sizes padded to three dims with trailing ones.
std::array<int64_t, 3> three(const Dims &d, int64_t fill) {
  std::array<int64_t, 3> a{fill, fill, fill};
  for (size_t i = 0; i < d.size(); ++i) a[i] = d[i];
  return a;
}

// The three convolutions by their definition: for every (n, k, output
// position, c in k's group, tap), the image position p = o*s - pad + r*dil
// contributes when it lies inside the image.
struct Reference {
  const GroupedCase &c;
  Dims out;
  std::vector<double> y, dx, dw;

  Reference(const GroupedCase &gc, const std::vector<double> &x, const std::vector<double> &w,
            const std::vector<double> &dy, const Dims &out_spatial)
      : c(gc), out(out_spatial) {
    y.assign(static_cast<size_t>(c.n * c.k * product(out)), 0.0);
    dx.assign(x.size(), 0.0);
    dw.assign(w.size(), 0.0);
    const auto in = three(c.image, 1), f = three(c.filter, 1), o = three(out, 1);
    const auto pad = three(c.pad, 0), st = three(c.stride, 1), dil = three(c.dilation, 1);
    const int64_t cg = c.c / c.groups, kg = c.k / c.groups;
    for (int64_t n = 0; n < c.n; ++n)
      for (int64_t k = 0; k < c.k; ++k)
        for (int64_t cl = 0; cl < cg; ++cl)
          for (int64_t o0 = 0; o0 < o[0]; ++o0)
            for (int64_t o1 = 0; o1 < o[1]; ++o1)
              for (int64_t o2 = 0; o2 < o[2]; ++o2)
                for (int64_t r0 = 0; r0 < f[0]; ++r0)
                  for (int64_t r1 = 0; r1 < f[1]; ++r1)
                    for (int64_t r2 = 0; r2 < f[2]; ++r2) {
                      const int64_t p0 = o0 * st[0] - pad[0] + r0 * dil[0];
                      const int64_t p1 = o1 * st[1] - pad[1] + r1 * dil[1];
                      const int64_t p2 = o2 * st[2] - pad[2] + r2 * dil[2];
                      if (p0 < 0 || p0 >= in[0] || p1 < 0 || p1 >= in[1] || p2 < 0 || p2 >= in[2])
                        continue;
                      const int64_t ci = k / kg * cg + cl;
                      const size_t xi = static_cast<size_t>(
                          (((n * c.c + ci) * in[0] + p0) * in[1] + p1) * in[2] + p2);
                      const size_t wi = static_cast<size_t>(
                          (((k * cg + cl) * f[0] + r0) * f[1] + r1) * f[2] + r2);
                      const size_t yi = static_cast<size_t>(
                          (((n * c.k + k) * o[0] + o0) * o[1] + o1) * o[2] + o2);
                      y[yi] += x[xi] * w[wi];
                      dx[xi] += dy[yi] * w[wi];
                      dw[wi] += x[xi] * dy[yi];
                    }
  }
};

Dims out_spatial(const GroupedCase &c) {
  Dims out;
  for (size_t i = 0; i < c.image.size(); ++i)
    out.push_back(
        (c.image[i] + 2 * c.pad[i] - c.dilation[i] * (c.filter[i] - 1) - 1) / c.stride[i] + 1);
  return out;
}

cudnnfe_conv_options_t options_for(const GroupedCase &c) {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  for (size_t i = 0; i < c.image.size(); ++i) {
    o.pre_padding[i] = o.post_padding[i] = c.pad[i];
    o.stride[i] = c.stride[i];
    o.dilation[i] = c.dilation[i];
  }
  return o;
}

int64_t add_input(cudnnfe_graph_t *g, const char *name, const Dims &dims, const Dims &strides) {
  int64_t uid = 0;
  CHECK_OK(cudnnfe_graph_add_tensor(g, name, CUDNNFE_DTYPE_FLOAT, static_cast<int32_t>(dims.size()),
                                    dims.data(), strides.data(), &uid));
  return uid;
}

void expect_equal(const std::string &what, const std::vector<double> &got,
                  const std::vector<double> &want) {
  REQUIRE(got.size() == want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::fabs(got[i] - want[i]) > 1e-4 * (1.0 + std::fabs(want[i])) && bad++ < 3)
      CHECK_MSG(false, "%s[%zu] = %.6g, expected %.6g", what.c_str(), i, got[i], want[i]);
  CHECK_MSG(bad == 0, "%s: %d of %zu values differ", what.c_str(), bad, got.size());
}

// Runs fprop, dgrad and wgrad of one case in one graph and compares all three.
void run_case(const GroupedCase &c, bool channels_last) {
  const Dims xd = concat({c.n, c.c}, c.image), wd = concat({c.k, c.c / c.groups}, c.filter);
  const Dims yd = concat({c.n, c.k}, out_spatial(c));
  const Dims xs = packed_strides(xd, channels_last), ws = packed_strides(wd, channels_last);
  const Dims ys = packed_strides(yd, channels_last);
  const std::vector<double> x = values(product(xd), 1), w = values(product(wd), 2);
  const std::vector<double> dy = values(product(yd), 3);
  const Reference want(c, x, w, dy, out_spatial(c));

  cudnnfe_graph_t *g = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  const cudnnfe_conv_options_t o = options_for(c);
  const int32_t rank = static_cast<int32_t>(xd.size());
  int64_t tx = add_input(g, "x", xd, xs), tw = add_input(g, "w", wd, ws);
  int64_t tdy = add_input(g, "dy", yd, ys), ty = 0, tdx = 0, tdw = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g, tx, tw, &o, &ty));
  CHECK_OK(cudnnfe_graph_add_conv_dgrad(g, tdy, tw, &o, &tdx));
  CHECK_OK(cudnnfe_graph_add_conv_wgrad(g, tx, tdy, &o, &tdw));
  // As in cudnn-frontend, dgrad and wgrad outputs of a grouped convolution
  // are set by the caller: the group count is not visible in their inputs.
  CHECK_OK(cudnnfe_tensor_set_dims(g, tdx, rank, xd.data()));
  CHECK_OK(cudnnfe_tensor_set_strides(g, tdx, rank, xs.data()));
  CHECK_OK(cudnnfe_tensor_set_dims(g, tdw, rank, wd.data()));
  CHECK_OK(cudnnfe_tensor_set_strides(g, tdw, rank, ws.data()));
  for (int64_t t : {ty, tdx, tdw}) CHECK_OK(cudnnfe_tensor_set_output(g, t, 1));
  cudnnfe_build_options_t bo;
  cudnnfe_build_options_init(&bo);
  bo.target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_status_t built = cudnnfe_graph_build(g, nullptr, &bo);
  CHECK_MSG(built == CUDNNFE_STATUS_OK, "%s: build: %s", c.name, cudnnfe_graph_last_error(g));
  if (built == CUDNNFE_STATUS_OK) {
    // y's strides are the graph's: channels-last whatever x's layout (the
    // conv default), so an NCHW x gets an NHWC y.
    int64_t gdims[CUDNNFE_MAX_DIMS], gstrides[CUDNNFE_MAX_DIMS];
    int32_t grank = 0;
    REQUIRE_OK(cudnnfe_tensor_get_shape(g, ty, gdims, gstrides, CUDNNFE_MAX_DIMS, &grank));
    const Dims ygs(gstrides, gstrides + grank);
    CHECK((ygs == packed_strides(yd, true)));
    std::vector<float> bx = to_layout(x, xd, xs), bw = to_layout(w, wd, ws);
    std::vector<float> bdy = to_layout(dy, yd, ys), by(want.y.size()), bdx(x.size()), bdw(w.size());
    const std::vector<cudnnfe_binding_t> bindings = {{tx, bx.data()},   {tw, bw.data()},
                                                     {tdy, bdy.data()}, {ty, by.data()},
                                                     {tdx, bdx.data()}, {tdw, bdw.data()}};
    cudnnfe_handle_t *h = nullptr;
    REQUIRE_OK(cudnnfe_handle_create(&h, -1));
    CHECK_OK(cudnnfe_graph_execute(g, h, bindings.data(), bindings.size(), nullptr, 0, nullptr));
    cudnnfe_handle_destroy(h);
    const std::string tag = std::string(c.name) + (channels_last ? " NHWC" : " NCHW");
    expect_equal(tag + " y", from_layout(by, yd, ygs), want.y);
    expect_equal(tag + " dx", from_layout(bdx, xd, xs), want.dx);
    expect_equal(tag + " dw", from_layout(bdw, wd, ws), want.dw);
  }
  cudnnfe_graph_destroy(g);
}

TEST(cpu_conv_grouped_and_depthwise_nchw) {
  for (const GroupedCase &c : grouped_cases()) run_case(c, false);
}

TEST(cpu_conv_grouped_and_depthwise_nhwc) {
  for (const GroupedCase &c : grouped_cases()) run_case(c, true);
}

// Without set dims, dgrad and wgrad infer an ungrouped output (C from the
// weight, resp. the image), as cudnn-frontend would need them set too.
TEST(cpu_conv_grouped_fprop_infers_y_and_dgrad_defaults_ungrouped) {
  cudnnfe_graph_t *g = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  const Dims xd = {1, 8, 4, 4}, wd = {4, 2, 3, 3}, yd = {1, 4, 2, 2};
  int64_t tx = add_input(g, "x", xd, packed_strides(xd, false));
  int64_t tw = add_input(g, "w", wd, packed_strides(wd, false));
  int64_t tdy = add_input(g, "dy", yd, packed_strides(yd, false)), ty = 0, tdx = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g, tx, tw, nullptr, &ty));
  CHECK_OK(cudnnfe_graph_add_conv_dgrad(g, tdy, tw, nullptr, &tdx));
  int64_t dims[CUDNNFE_MAX_DIMS], strides[CUDNNFE_MAX_DIMS];
  int32_t rank = 0;
  CHECK_OK(cudnnfe_tensor_get_shape(g, ty, dims, strides, CUDNNFE_MAX_DIMS, &rank));
  CHECK((Dims(dims, dims + rank) == yd));
  CHECK_OK(cudnnfe_tensor_get_shape(g, tdx, dims, strides, CUDNNFE_MAX_DIMS, &rank));
  CHECK((Dims(dims, dims + rank) == Dims{1, 2, 4, 4}));
  cudnnfe_graph_destroy(g);
}

}  // namespace
