// Degenerate shapes (dims of size 1) on the CPU reference, through the
// public C API: the layouts that shape inference gives outputs when a size-1
// dim makes the operands' strides ambiguous (docs/design.md "Output
// layouts"), and the values of convolutions, matmuls, norms and broadcasts
// of such shapes in NCHW and NHWC against plain loops.
//
// The cases behind it: 22 forward convolutions with one input channel and a
// channels-last image (x 1x1x36x16, strides (576,1,16,1): C's stride equals
// W's) got an "NHCW" output from a dimension order that ranked C beside W by
// its stride alone, while the caller bound an NHWC buffer, as cudnn-frontend
// (whose conv outputs are channels-last) lets it.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "harness.h"
#include "test_layouts.h"

namespace {

using namespace test_layouts;
using Values = std::vector<double>;

// ---- layouts ----

int64_t count(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

int64_t span(const Dims &d, const Dims &s) {
  int64_t last = 0;
  for (size_t i = 0; i < d.size(); ++i) last += (d[i] - 1) * s[i];
  return last + 1;
}

// Row-major logical index -> offset under strides.
int64_t offset_of(int64_t flat, const Dims &d, const Dims &s) {
  int64_t off = 0;
  for (int i = static_cast<int>(d.size()) - 1; i >= 0; --i) {
    off += (flat % d[i]) * s[i];
    flat /= d[i];
  }
  return off;
}

std::string text(const Dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Small integers (exact in float sums) that differ from element to element.
Values values(int64_t n, int seed) {
  Values v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7 + seed * 5) % 11 - 5);
  return v;
}

// ---- a graph on the CPU reference ----

class G {
 public:
  G() { cudnnfe_graph_create(&g_); }
  ~G() { cudnnfe_graph_destroy(g_); }
  G(const G &) = delete;
  G &operator=(const G &) = delete;
  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, const Dims &dims, const Dims &strides) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, CUDNNFE_DTYPE_FLOAT,
                                      static_cast<int32_t>(dims.size()), dims.data(),
                                      strides.data(), &uid));
    return uid;
  }
  int64_t pointwise(cudnnfe_pointwise_mode_t mode, int64_t a, int64_t b = 0) {
    int64_t out = 0;
    CHECK_OK(cudnnfe_graph_add_pointwise(g_, mode, a, b, 0, nullptr, &out));
    return out;
  }
  void output(int64_t uid) { CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1)); }
  Dims dims(int64_t uid) const { return shape(uid, true); }
  Dims strides(int64_t uid) const { return shape(uid, false); }

  bool build() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    const cudnnfe_status_t s = cudnnfe_graph_build(g_, nullptr, &o);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  build failed: %s: %s\n", cudnnfe_status_name(s), cudnnfe_graph_last_error(g_));
    return s == CUDNNFE_STATUS_OK;
  }

  // Binds logical `inputs` (laid out by each tensor's strides) and NaN-filled
  // outputs, runs, and returns every output in logical row-major order.
  std::map<int64_t, Values> run(const std::map<int64_t, Values> &inputs,
                                const std::vector<int64_t> &outputs) const {
    std::map<int64_t, std::vector<float>> memory;
    std::vector<cudnnfe_binding_t> bindings;
    for (const auto &[uid, logical] : inputs) {
      const Dims d = dims(uid), s = strides(uid);
      std::vector<float> &m = memory[uid];
      m.assign(static_cast<size_t>(span(d, s)), 0.0f);
      for (int64_t i = 0; i < count(d); ++i)
        m[static_cast<size_t>(offset_of(i, d, s))] = static_cast<float>(logical[i]);
    }
    for (int64_t uid : outputs)
      memory[uid].assign(static_cast<size_t>(span(dims(uid), strides(uid))), NAN);
    for (auto &[uid, m] : memory) bindings.push_back({uid, m.data()});
    cudnnfe_handle_t *h = nullptr;
    cudnnfe_handle_create(&h, -1);
    const cudnnfe_status_t s =
        cudnnfe_graph_execute(g_, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  execute failed: %s: %s\n", cudnnfe_status_name(s),
                  cudnnfe_handle_last_error(h));
    CHECK(s == CUDNNFE_STATUS_OK);
    cudnnfe_handle_destroy(h);
    std::map<int64_t, Values> out;
    for (int64_t uid : outputs) {
      const Dims d = dims(uid), st = strides(uid);
      Values &v = out[uid];
      for (int64_t i = 0; i < count(d); ++i)
        v.push_back(memory[uid][static_cast<size_t>(offset_of(i, d, st))]);
    }
    return out;
  }

 private:
  Dims shape(int64_t uid, bool want_dims) const {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, d, s, CUDNNFE_MAX_DIMS, &rank));
    return want_dims ? Dims(d, d + rank) : Dims(s, s + rank);
  }

  cudnnfe_graph_t *g_ = nullptr;
};

void expect_values(const std::string &what, const Values &got, const Values &want,
                   double tol = 1e-5) {
  CHECK_MSG(got.size() == want.size(), "%s: %zu values, expected %zu", what.c_str(), got.size(),
            want.size());
  int bad = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i]))) && bad++ < 3)
      CHECK_MSG(false, "%s[%zu] = %.8g, expected %.8g", what.c_str(), i, got[i], want[i]);
  CHECK_MSG(bad == 0, "%s: %d of %zu values differ", what.c_str(), bad, got.size());
}

#define CHECK_STRIDES(got, want)                                                     \
  CHECK_MSG((got) == (want), "%s: strides %s, expected %s", #got, text(got).c_str(), \
            text(want).c_str())

// ---- convolution ----

struct ConvCase {
  const char *name;
  Dims x, w;
  Dims pad, stride, dilation;
};

// Spatial values padded to three with `fill`.
Dims three(const Dims &v, int64_t fill) {
  Dims out = v;
  while (out.size() < 3) out.push_back(fill);
  return out;
}

Dims conv_y_dims(const ConvCase &c) {
  Dims y = {c.x[0], c.w[0]};
  for (size_t i = 2; i < c.x.size(); ++i)
    y.push_back(
        (c.x[i] + 2 * c.pad[i - 2] - c.dilation[i - 2] * (c.w[i] - 1) - 1) / c.stride[i - 2] + 1);
  return y;
}

// Calls f(x index, w index, y index) for every tap of the convolution
// (cross-correlation, one group) whose image position is inside x.
void for_each_tap(const ConvCase &c, const std::function<void(int64_t, int64_t, int64_t)> &f) {
  const Dims yd = conv_y_dims(c);
  const Dims xs = three(Dims(c.x.begin() + 2, c.x.end()), 1);
  const Dims ws = three(Dims(c.w.begin() + 2, c.w.end()), 1);
  const Dims ys = three(Dims(yd.begin() + 2, yd.end()), 1);
  const Dims pad = three(c.pad, 0), st = three(c.stride, 1), dil = three(c.dilation, 1);
  const int64_t n_ = c.x[0], k_ = c.w[0], c_ = c.x[1];
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t k = 0; k < k_; ++k)
      for (int64_t o0 = 0; o0 < ys[0]; ++o0)
        for (int64_t o1 = 0; o1 < ys[1]; ++o1)
          for (int64_t o2 = 0; o2 < ys[2]; ++o2)
            for (int64_t ch = 0; ch < c_; ++ch)
              for (int64_t r0 = 0; r0 < ws[0]; ++r0)
                for (int64_t r1 = 0; r1 < ws[1]; ++r1)
                  for (int64_t r2 = 0; r2 < ws[2]; ++r2) {
                    const int64_t p0 = o0 * st[0] - pad[0] + r0 * dil[0];
                    const int64_t p1 = o1 * st[1] - pad[1] + r1 * dil[1];
                    const int64_t p2 = o2 * st[2] - pad[2] + r2 * dil[2];
                    if (p0 < 0 || p0 >= xs[0] || p1 < 0 || p1 >= xs[1] || p2 < 0 || p2 >= xs[2])
                      continue;
                    f((((n * c_ + ch) * xs[0] + p0) * xs[1] + p1) * xs[2] + p2,
                      (((k * c_ + ch) * ws[0] + r0) * ws[1] + r1) * ws[2] + r2,
                      (((n * k_ + k) * ys[0] + o0) * ys[1] + o1) * ys[2] + o2);
                  }
}

cudnnfe_conv_options_t conv_options(const ConvCase &c) {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  for (size_t i = 0; i < c.pad.size(); ++i) {
    o.pre_padding[i] = o.post_padding[i] = c.pad[i];
    o.stride[i] = c.stride[i];
    o.dilation[i] = c.dilation[i];
  }
  return o;
}

const std::vector<ConvCase> &conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"c1", {2, 1, 6, 5}, {3, 1, 3, 2}, {1, 1}, {1, 1}, {1, 1}},
      {"k1", {2, 3, 6, 5}, {1, 3, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"n1", {1, 3, 6, 5}, {4, 3, 3, 3}, {0, 0}, {2, 2}, {1, 1}},
      {"h1", {2, 3, 1, 7}, {4, 3, 1, 3}, {0, 1}, {1, 1}, {1, 1}},
      {"w1", {2, 3, 7, 1}, {4, 3, 3, 1}, {1, 0}, {1, 1}, {1, 1}},
      {"n1_c1_k1", {1, 1, 5, 5}, {1, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
      {"1d_c1", {2, 1, 9}, {4, 1, 3}, {1}, {2}, {1}},
      // Two of the corpus cases (the third, 3-D and large, is checked for its
      // layout below and runs on the GPU in test_gpu_degenerate).
      {"corpus_1x1x36x16_w196x1x5x7", {1, 1, 36, 16}, {196, 1, 5, 7}, {1, 1}, {1, 1}, {1, 1}},
      {"corpus_2x1x4x4_w196x1x3x1", {2, 1, 4, 4}, {196, 1, 3, 1}, {1, 0}, {1, 2}, {1, 1}},
      {"3d_c1_d1", {2, 1, 1, 5, 6}, {3, 1, 1, 3, 1}, {0, 1, 0}, {1, 1, 2}, {1, 1, 1}},
  };
  return cases;
}

// Fprop, dgrad and wgrad of one case with x, w and dy in NCHW or NHWC
// (channels-last as torch lays out C = 1: C's stride 1, equal to W's),
// outputs left to inference: they must be channels-last and hold the plain
// loops' values.
void run_conv_case(const ConvCase &c, bool nhwc) {
  const std::string tag = std::string(c.name) + (nhwc ? " NHWC" : " NCHW");
  const Dims yd = conv_y_dims(c);
  auto layout = [&](const Dims &d) { return nhwc ? channels_last(d) : packed(d); };
  const Values x = values(count(c.x), 1), w = values(count(c.w), 2), dy = values(count(yd), 3);
  Values y_want(static_cast<size_t>(count(yd)), 0.0), dx_want(x.size(), 0.0),
      dw_want(w.size(), 0.0);
  for_each_tap(c, [&](int64_t xi, int64_t wi, int64_t yi) {
    y_want[yi] += x[xi] * w[wi];
    dx_want[xi] += dy[yi] * w[wi];
    dw_want[wi] += x[xi] * dy[yi];
  });

  G g;
  const int32_t rank = static_cast<int32_t>(c.x.size());
  const cudnnfe_conv_options_t o = conv_options(c);
  const int64_t tx = g.input("x", c.x, layout(c.x)), tw = g.input("w", c.w, layout(c.w));
  const int64_t tdy = g.input("dy", yd, layout(yd));
  int64_t ty = 0, tdx = 0, tdw = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), tx, tw, &o, &ty));
  REQUIRE_OK(cudnnfe_graph_add_conv_dgrad(g.get(), tdy, tw, &o, &tdx));
  REQUIRE_OK(cudnnfe_graph_add_conv_wgrad(g.get(), tx, tdy, &o, &tdw));
  // Strides > 1 hide the sizes; as in cudnn-frontend, the caller gives them.
  CHECK_OK(cudnnfe_tensor_set_dims(g.get(), tdx, rank, c.x.data()));
  CHECK_OK(cudnnfe_tensor_set_dims(g.get(), tdw, rank, c.w.data()));
  for (int64_t t : {ty, tdx, tdw}) g.output(t);
  REQUIRE(g.build());
  CHECK_MSG(g.dims(ty) == yd, "%s: y dims %s", tag.c_str(), text(g.dims(ty)).c_str());
  CHECK_MSG(g.strides(ty) == channels_last(yd), "%s: y strides %s, expected channels-last %s",
            tag.c_str(), text(g.strides(ty)).c_str(), text(channels_last(yd)).c_str());
  CHECK_MSG(g.strides(tdx) == channels_last(c.x), "%s: dx strides %s", tag.c_str(),
            text(g.strides(tdx)).c_str());
  CHECK_MSG(g.strides(tdw) == channels_last(c.w), "%s: dw strides %s", tag.c_str(),
            text(g.strides(tdw)).c_str());
  auto out = g.run({{tx, x}, {tw, w}, {tdy, dy}}, {ty, tdx, tdw});
  expect_values(tag + " y", out[ty], y_want);
  expect_values(tag + " dx", out[tdx], dx_want);
  expect_values(tag + " dw", out[tdw], dw_want);
}

TEST(conv_degenerate_shapes_nchw_and_nhwc_match_plain_loops) {
  for (const ConvCase &c : conv_cases())
    for (bool nhwc : {false, true}) run_conv_case(c, nhwc);
}

// The corpus's first case exactly: torch channels_last strides for C = 1
// (576,1,16,1), a bias epilogue, and the output read as the NHWC buffer the
// caller allocated (not through the graph's strides).
TEST(conv_corpus_c1_nhwc_with_bias_writes_the_nhwc_buffer) {
  const ConvCase c = conv_cases()[7];
  const Dims yd = conv_y_dims(c);
  REQUIRE((yd == Dims{1, 196, 34, 12}));
  G g;
  const int64_t tx = g.input("x", c.x, {576, 1, 16, 1});
  const int64_t tw = g.input("w", c.w, {35, 1, 7, 1});
  const int64_t tb = g.input("b", {1, 196, 1, 1}, {196, 1, 196, 196});
  const cudnnfe_conv_options_t o = conv_options(c);
  int64_t ty = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), tx, tw, &o, &ty));
  const int64_t out = g.pointwise(CUDNNFE_POINTWISE_ADD, ty, tb);
  g.output(out);
  REQUIRE(g.build());
  const Dims want = {34 * 12 * 196, 1, 12 * 196, 196};
  CHECK_STRIDES(g.strides(ty), want);
  CHECK_STRIDES(g.strides(out), want);
  const Values x = values(count(c.x), 1), w = values(count(c.w), 2), b = values(196, 4);
  Values y_want(static_cast<size_t>(count(yd)), 0.0);
  for_each_tap(c, [&](int64_t xi, int64_t wi, int64_t yi) { y_want[yi] += x[xi] * w[wi]; });
  for (int64_t i = 0; i < count(yd); ++i) y_want[i] += b[(i / (34 * 12)) % 196];
  // Bound as torch's channels_last Y: read back by NHWC offsets.
  std::vector<float> vx(static_cast<size_t>(count(c.x))), vw(static_cast<size_t>(count(c.w)));
  for (int64_t i = 0; i < count(c.x); ++i) vx[offset_of(i, c.x, {576, 1, 16, 1})] = float(x[i]);
  for (int64_t i = 0; i < count(c.w); ++i) vw[offset_of(i, c.w, {35, 1, 7, 1})] = float(w[i]);
  std::vector<float> vb(b.begin(), b.end()), vy(static_cast<size_t>(count(yd)), NAN);
  const std::vector<cudnnfe_binding_t> bindings = {
      {tx, vx.data()}, {tw, vw.data()}, {tb, vb.data()}, {out, vy.data()}};
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  CHECK_OK(
      cudnnfe_graph_execute(g.get(), h, bindings.data(), bindings.size(), nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  Values got;
  for (int64_t i = 0; i < count(yd); ++i) got.push_back(vy[offset_of(i, yd, channels_last(yd))]);
  expect_values("corpus y + b", got, y_want);
}

// The third corpus case (3-D, NDHWC, C = 1, stride (2,1,1), dilation
// (1,1,2)): inference only, it is large for the CPU reference.
TEST(conv_corpus_3d_c1_ndhwc_output_is_ndhwc) {
  const Dims xd = {2, 1, 36, 49, 81}, wd = {256, 1, 1, 3, 1};
  G g;
  const int64_t tx = g.input("x", xd, channels_last(xd));
  const int64_t tw = g.input("w", wd, channels_last(wd));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.stride[0] = 2;
  o.dilation[2] = 2;
  int64_t ty = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), tx, tw, &o, &ty));
  g.output(ty);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  const Dims yd = {2, 256, 18, 47, 81};
  CHECK_MSG(g.dims(ty) == yd, "y dims %s", text(g.dims(ty)).c_str());
  CHECK_STRIDES(g.strides(ty), channels_last(yd));
}

// Strides the caller sets are kept (an NCHW y of an NHWC x), and a
// convolution's output keeps channels-last after set_dims (dgrad).
TEST(conv_output_strides_set_by_the_caller_are_kept) {
  const Dims xd = {2, 1, 6, 5}, wd = {3, 1, 3, 3}, yd = {2, 3, 4, 3};
  G g;
  const int64_t tx = g.input("x", xd, channels_last(xd)), tw = g.input("w", wd, packed(wd));
  int64_t ty = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), tx, tw, nullptr, &ty));
  CHECK_OK(cudnnfe_tensor_set_strides(g.get(), ty, 4, packed(yd).data()));
  g.output(ty);
  REQUIRE(g.build());
  CHECK_STRIDES(g.strides(ty), packed(yd));
  const Values x = values(count(xd), 1), w = values(count(wd), 2);
  Values want(static_cast<size_t>(count(yd)), 0.0);
  for_each_tap({"", xd, wd, {0, 0}, {1, 1}, {1, 1}},
               [&](int64_t xi, int64_t wi, int64_t yi) { want[yi] += x[xi] * w[wi]; });
  expect_values("NCHW y of an NHWC x", g.run({{tx, x}, {tw, w}}, {ty})[ty], want);

  G d;
  const int64_t tdy = d.input("dy", {1, 4, 3, 3}, packed({1, 4, 3, 3}));
  const int64_t tw2 = d.input("w", {4, 1, 3, 3}, packed({4, 1, 3, 3}));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.stride[0] = o.stride[1] = 2;
  int64_t tdx = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_dgrad(d.get(), tdy, tw2, &o, &tdx));
  const Dims dxd = {1, 1, 8, 8};
  CHECK_OK(cudnnfe_tensor_set_dims(d.get(), tdx, 4, dxd.data()));
  d.output(tdx);
  CHECK_OK(cudnnfe_graph_validate(d.get()));
  CHECK_STRIDES(d.strides(tdx), channels_last(dxd));
}

// set_dims re-derives strides in the tensor's dimension order: a C = 1
// channels-last input grown to C = 3 stays channels-last (it became "NHCW"
// when C ranked beside W by its stride alone), a contiguous one NCHW.
TEST(set_dims_keeps_the_layout_a_size1_dim_left_ambiguous) {
  G g;
  const int64_t nhwc = g.input("nhwc", {2, 1, 4, 4}, {16, 1, 4, 1});
  const int64_t nchw = g.input("nchw", {2, 1, 4, 4}, {16, 16, 4, 1});
  const Dims grown = {2, 3, 4, 4};
  CHECK_OK(cudnnfe_tensor_set_dims(g.get(), nhwc, 4, grown.data()));
  CHECK_OK(cudnnfe_tensor_set_dims(g.get(), nchw, 4, grown.data()));
  CHECK_STRIDES(g.strides(nhwc), channels_last(grown));
  CHECK_STRIDES(g.strides(nchw), packed(grown));
}

// ---- pointwise broadcasts ----

// x [2,1,4,4] + bias [1,8,1,1]: the output's K dim comes from the bias, its
// order from x; NHWC x gives an NHWC output, NCHW x an NCHW one. The bias
// has more elements than x, but says nothing about where H and W go.
TEST(pointwise_broadcast_of_a_size1_channel_keeps_x_layout) {
  const Dims xd = {2, 1, 4, 4};
  for (int64_t k : {8, 64})
    for (bool nhwc : {false, true}) {
      const Dims b_dims = {1, k, 1, 1}, o_dims = {2, k, 4, 4};
      G g;
      const int64_t tx = g.input("x", xd, nhwc ? Dims{16, 1, 4, 1} : Dims{16, 16, 4, 1});
      const int64_t tb = g.input("b", b_dims, packed(b_dims));
      const int64_t out = g.pointwise(CUDNNFE_POINTWISE_ADD, tx, tb);
      g.output(out);
      REQUIRE(g.build());
      const Dims want = nhwc ? channels_last(o_dims) : packed(o_dims);
      CHECK_MSG(g.strides(out) == want, "K=%lld %s: out strides %s, expected %s",
                static_cast<long long>(k), nhwc ? "NHWC" : "NCHW", text(g.strides(out)).c_str(),
                text(want).c_str());
      const Values x = values(count(xd), 1), b = values(k, 2);
      Values expect;
      for (int64_t i = 0; i < count(o_dims); ++i) {
        const int64_t n = i / (k * 16), ch = (i / 16) % k, hw = i % 16;
        expect.push_back(x[n * 16 + hw] + b[ch]);
      }
      expect_values("x + b", g.run({{tx, x}, {tb, b}}, {out})[out], expect);
    }
}

// An operand with the output's dims gives its exact strides, size-1 dims
// included; [1,1,1,8] * [3,1,5,1] broadcasts both ways.
TEST(pointwise_size1_operands) {
  G g;
  const int64_t a = g.input("a", {2, 1, 3, 3}, {9, 1, 3, 1});
  const int64_t s = g.input("s", {1, 1, 1, 1}, {1, 1, 1, 1});
  const int64_t y = g.pointwise(CUDNNFE_POINTWISE_MUL, a, s);
  const int64_t p = g.input("p", {1, 1, 1, 8}, {8, 8, 8, 1});
  const int64_t q = g.input("q", {3, 1, 5, 1}, {5, 5, 1, 1});
  const int64_t pq = g.pointwise(CUDNNFE_POINTWISE_MUL, p, q);
  g.output(y);
  g.output(pq);
  REQUIRE(g.build());
  CHECK_STRIDES(g.strides(y), (Dims{9, 1, 3, 1}));
  CHECK_STRIDES(g.strides(pq), packed({3, 1, 5, 8}));
  const Values va = values(18, 1), vs = {3}, vp = values(8, 2), vq = values(15, 3);
  auto out = g.run({{a, va}, {s, vs}, {p, vp}, {q, vq}}, {y, pq});
  Values wy, wpq;
  for (double v : va) wy.push_back(3 * v);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 8; ++k) wpq.push_back(vp[k] * vq[i * 5 + j]);
  expect_values("a * s", out[y], wy);
  expect_values("p * q", out[pq], wpq);
}

// ---- matmul with M, N or K = 1 ----

struct MatmulCase {
  const char *name;
  Dims a, b;
};

TEST(matmul_m_n_k_of_one_plain_and_transposed) {
  const MatmulCase cases[] = {
      {"m1", {2, 1, 5}, {2, 5, 3}},          {"n1", {2, 4, 5}, {2, 5, 1}},
      {"k1", {2, 4, 1}, {2, 1, 3}},          {"m1_n1", {3, 1, 6}, {3, 6, 1}},
      {"m1_k1_bcast", {1, 1, 1}, {3, 1, 4}}, {"n1_bcast", {3, 4, 5}, {1, 5, 1}},
  };
  for (const MatmulCase &c : cases)
    for (int layout = 0; layout < 4; ++layout) {
      const bool at = layout & 1, bt = layout & 2;
      const std::string tag = std::string(c.name) + (at ? " aT" : " a") + (bt ? " bT" : " b");
      G g;
      const int64_t ta = g.input("a", c.a, at ? transposed_matrices(c.a) : packed(c.a));
      const int64_t tb = g.input("b", c.b, bt ? transposed_matrices(c.b) : packed(c.b));
      int64_t tc = 0;
      REQUIRE_OK(cudnnfe_graph_add_matmul(g.get(), ta, tb, nullptr, &tc));
      g.output(tc);
      REQUIRE(g.build());
      const int64_t batch = std::max(c.a[0], c.b[0]), m = c.a[1], k = c.a[2], n = c.b[2];
      const Dims cd = {batch, m, n};
      CHECK_MSG(g.dims(tc) == cd, "%s: c dims %s", tag.c_str(), text(g.dims(tc)).c_str());
      CHECK_MSG(g.strides(tc) == packed(cd), "%s: c strides %s (row-major expected)", tag.c_str(),
                text(g.strides(tc)).c_str());
      const Values va = values(count(c.a), 1), vb = values(count(c.b), 2);
      Values want;
      for (int64_t bi = 0; bi < batch; ++bi)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p)
              s += va[(c.a[0] == 1 ? 0 : bi) * m * k + i * k + p] *
                   vb[(c.b[0] == 1 ? 0 : bi) * k * n + p * n + j];
            want.push_back(s);
          }
      expect_values(tag, g.run({{ta, va}, {tb, vb}}, {tc})[tc], want);
    }
}

// ---- norms with C = 1 or a size-1 feature dim ----

// Layer norm over [C, H, W] with C = 1, and over [C, 1, 1]: y keeps x's
// layout (the same memory as x), and NCHW and NHWC give the same values.
TEST(layernorm_with_size1_feature_dims) {
  const Dims shapes[] = {{3, 1, 2, 5}, {4, 6, 1, 1}, {2, 1, 1, 1}};
  for (const Dims &xd : shapes) {
    std::map<bool, Values> results;
    for (bool nhwc : {false, true}) {
      G g;
      const Dims xs = nhwc ? channels_last(xd) : packed(xd);
      Dims pd = xd;
      pd[0] = 1;
      const int64_t x = g.input("x", xd, xs);
      const int64_t scale = g.input("scale", pd, nhwc ? channels_last(pd) : packed(pd));
      const int64_t bias = g.input("bias", pd, nhwc ? channels_last(pd) : packed(pd));
      int64_t y = 0, mean = 0, inv = 0;
      REQUIRE_OK(cudnnfe_graph_add_layernorm(g.get(), x, scale, bias, nullptr, &y, &mean, &inv));
      g.output(y);
      REQUIRE(g.build());
      CHECK_MSG(same_memory(xd, g.strides(y), xs), "%s %s: y strides %s vs x %s", text(xd).c_str(),
                nhwc ? "NHWC" : "NCHW", text(g.strides(y)).c_str(), text(xs).c_str());
      const int64_t m = count(pd);
      const Values vx = values(count(xd), 1), vs = values(m, 2), vb = values(m, 3);
      Values want;
      for (int64_t r = 0; r < xd[0]; ++r) {
        double mu = 0, var = 0;
        for (int64_t i = 0; i < m; ++i) mu += vx[r * m + i] / m;
        for (int64_t i = 0; i < m; ++i) var += (vx[r * m + i] - mu) * (vx[r * m + i] - mu) / m;
        for (int64_t i = 0; i < m; ++i)
          want.push_back((vx[r * m + i] - mu) / std::sqrt(var + 1e-5) * vs[i] + vb[i]);
      }
      results[nhwc] = g.run({{x, vx}, {scale, vs}, {bias, vb}}, {y})[y];
      expect_values(text(xd) + (nhwc ? " NHWC" : " NCHW"), results[nhwc], want, 1e-4);
    }
  }
}

// Batch norm of a one-channel image: statistics over N, H, W; NCHW and
// NHWC (C's stride 1, as W's) agree with the plain computation.
TEST(batchnorm_one_channel) {
  const Dims xd = {3, 1, 2, 4}, cd = {1, 1, 1, 1};
  for (bool nhwc : {false, true}) {
    G g;
    const Dims xs = nhwc ? channels_last(xd) : packed(xd);
    const int64_t x = g.input("x", xd, xs);
    const int64_t scale = g.input("scale", cd, packed(cd)), bias = g.input("bias", cd, packed(cd));
    int64_t y = 0, mean = 0, inv = 0, rm = 0, rv = 0;
    REQUIRE_OK(cudnnfe_graph_add_batchnorm(g.get(), x, scale, bias, 0, 0, nullptr, &y, &mean, &inv,
                                           &rm, &rv));
    g.output(y);
    g.output(mean);
    REQUIRE(g.build());
    CHECK(same_memory(xd, g.strides(y), xs));
    const Values vx = values(count(xd), 1);
    double mu = 0, var = 0;
    for (double v : vx) mu += v / vx.size();
    for (double v : vx) var += (v - mu) * (v - mu) / vx.size();
    Values want;
    for (double v : vx) want.push_back((v - mu) / std::sqrt(var + 1e-5) * 2 - 1);
    auto out = g.run({{x, vx}, {scale, {2}}, {bias, {-1}}}, {y, mean});
    expect_values(nhwc ? "bn NHWC y" : "bn NCHW y", out[y], want, 1e-4);
    expect_values("bn mean", out[mean], {mu}, 1e-5);
  }
}

// ---- reductions and pooling: channels-last outputs ----

TEST(reduction_and_pooling_outputs_are_channels_last) {
  G g;
  const Dims xd = {2, 3, 4, 5};
  const int64_t x = g.input("x", xd, packed(xd));
  cudnnfe_reduction_options_t r;
  cudnnfe_reduction_options_init(&r);
  r.axes_mask = 0x1u;  // over N: [1, 3, 4, 5]
  int64_t sum = 0;
  REQUIRE_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_ADD, x, &r, &sum));
  const int64_t x3 = g.input("x3", {1, 4, 6}, packed({1, 4, 6}));
  int64_t sum3 = 0;
  REQUIRE_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_ADD, x3, &r, &sum3));
  const int64_t x2 = g.input("x2", {4, 6}, packed({4, 6}));
  int64_t sum2 = 0;
  r.axes_mask = 0x2u;
  REQUIRE_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_ADD, x2, &r, &sum2));
  cudnnfe_resample_options_t p;
  cudnnfe_resample_options_init(&p);
  int64_t pooled = 0, index = 0;
  REQUIRE_OK(cudnnfe_graph_add_resample(g.get(), x, &p, &pooled, &index));
  for (int64_t t : {sum, sum3, sum2, pooled}) g.output(t);
  REQUIRE(g.build());
  CHECK_STRIDES(g.strides(sum), channels_last({1, 3, 4, 5}));
  // cudnn-frontend's NHWC order for 3 dims: dim 1 innermost.
  CHECK_STRIDES(g.strides(sum3), (Dims{24, 1, 4}));
  CHECK_STRIDES(g.strides(sum2), (Dims{1, 1}));
  CHECK_STRIDES(g.strides(pooled), channels_last({2, 3, 2, 2}));
  const Values vx = values(count(xd), 1), v3 = values(24, 2), v2 = values(24, 3);
  auto out = g.run({{x, vx}, {x3, v3}, {x2, v2}}, {sum, sum3, sum2, pooled});
  Values want(60, 0.0), want2(4, 0.0), want_pool;
  for (int64_t i = 0; i < 120; ++i) want[i % 60] += vx[i];
  for (int64_t i = 0; i < 24; ++i) want2[i / 6] += v2[i];
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t ch = 0; ch < 3; ++ch)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 2; ++j) {
          double m = -INFINITY;
          for (int64_t a = 0; a < 2; ++a)
            for (int64_t b = 0; b < 2; ++b)
              m = std::max(m, vx[((n * 3 + ch) * 4 + 2 * i + a) * 5 + 2 * j + b]);
          want_pool.push_back(m);
        }
  expect_values("sum over N", out[sum], want);
  expect_values("sum over batch (3 dims)", out[sum3], v3);
  expect_values("row sums", out[sum2], want2);
  expect_values("max pool", out[pooled], want_pool);
}

// ---- attention with s = 1 or h = 1 ----

// O takes q's dimension order. With h = 1 a BSHD q has h's stride equal to
// s's (and a BHSD q h's equal to b's); with s_q = 1 a BSHD q has s's stride
// equal to b's: the size-1 dim goes inside the dim it ties with, so O keeps
// q's strides exactly. BHSD and BSHD inputs give the same O.
TEST(sdpa_with_size1_heads_or_sequences) {
  struct Case {
    const char *name;
    int64_t b, h, sq, skv, d;
  } cases[] = {{"h1", 2, 1, 5, 6, 8},
               {"sq1", 2, 3, 1, 6, 8},
               {"skv1", 1, 2, 4, 1, 8},
               {"h1_sq1", 1, 1, 1, 3, 4}};
  for (const Case &c : cases) {
    std::map<bool, Values> o_values;
    for (bool bshd : {false, true}) {
      auto dims = [&](int64_t s) { return Dims{c.b, c.h, s, c.d}; };
      auto strides = [&](int64_t s) {
        return bshd ? Dims{s * c.h * c.d, c.d, c.h * c.d, 1} : packed(dims(s));
      };
      G g;
      const int64_t q = g.input("q", dims(c.sq), strides(c.sq));
      const int64_t k = g.input("k", dims(c.skv), strides(c.skv));
      const int64_t v = g.input("v", dims(c.skv), strides(c.skv));
      int64_t o = 0;
      REQUIRE_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, nullptr, &o, nullptr));
      g.output(o);
      REQUIRE(g.build());
      const std::string tag = std::string(c.name) + (bshd ? " BSHD" : " BHSD");
      CHECK_MSG(g.strides(o) == strides(c.sq), "%s: O strides %s, expected q's %s", tag.c_str(),
                text(g.strides(o)).c_str(), text(strides(c.sq)).c_str());
      const Values vq = values(count(dims(c.sq)), 1), vk = values(count(dims(c.skv)), 2),
                   vv = values(count(dims(c.skv)), 3);
      o_values[bshd] = g.run({{q, vq}, {k, vk}, {v, vv}}, {o})[o];
    }
    expect_values(std::string(c.name) + " BSHD vs BHSD", o_values[true], o_values[false], 1e-6);
  }
}

// ---- the audit's other places ----

// Outputs whose size-1 dims have strides that repeat another dim's are not
// aliasing; a stride that does make elements share memory is refused.
TEST(size1_strides_do_not_count_as_aliasing) {
  G g;
  const Dims xd = {2, 3, 4, 5};
  const int64_t x = g.input("x", xd, packed(xd));
  const int64_t w = g.input("w", {1, 3, 1, 1}, packed({1, 3, 1, 1}));
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, nullptr, &y));
  const Dims odd = {20, 0, 5, 1};  // K = 1: any stride places its one channel
  CHECK_OK(cudnnfe_tensor_set_strides(g.get(), y, 4, odd.data()));
  g.output(y);
  REQUIRE(g.build());
  CHECK_STRIDES(g.strides(y), odd);

  G bad;
  const int64_t bx = bad.input("x", xd, packed(xd));
  const int64_t bw = bad.input("w", {2, 3, 1, 1}, packed({2, 3, 1, 1}));
  int64_t by = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(bad.get(), bx, bw, nullptr, &by));
  const Dims overlap = {20, 1, 5, 1};  // K = 2 with W's stride: shared memory
  CHECK_OK(cudnnfe_tensor_set_strides(bad.get(), by, 4, overlap.data()));
  bad.output(by);
  CHECK_FAILS(cudnnfe_graph_validate(bad.get()), CUDNNFE_STATUS_INVALID_GRAPH, "share memory");
}

// Execute-time shapes: an override that changes only a size-1 dim's stride
// leaves the other tensors' memory as built, so they need no override.
TEST(shape_override_of_a_size1_stride_needs_no_other_override) {
  G g;
  const Dims xd = {2, 1, 3, 4};
  const int64_t x = g.input("x", xd, packed(xd));
  const int64_t y = g.pointwise(CUDNNFE_POINTWISE_RELU_FWD, x);
  g.output(y);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  o.override_shape_enabled = 1;
  REQUIRE_OK(cudnnfe_graph_build(g.get(), nullptr, &o));
  CHECK_STRIDES(g.strides(y), packed(xd));
  // The same memory with C's stride as torch's channels_last gives it.
  const Dims nhwc = {12, 1, 4, 1};
  const cudnnfe_shape_override_t ov = {x, 4, xd.data(), nhwc.data()};
  std::vector<float> vx(24), vy(24, NAN);
  for (int i = 0; i < 24; ++i) vx[i] = static_cast<float>(i % 7) - 3;
  const cudnnfe_binding_t bindings[] = {{x, vx.data()}, {y, vy.data()}};
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  CHECK_OK(
      cudnnfe_graph_execute_with_overrides(g.get(), h, bindings, 2, &ov, 1, nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  int bad = 0;
  for (int i = 0; i < 24; ++i) bad += vy[i] != std::max(vx[i], 0.0f);
  CHECK_MSG(bad == 0, "%d of 24 relu values wrong", bad);
}

// Graph JSON: a document that recorded another layout for an inferred
// output (as one written before convolution outputs defaulted to
// channels-last would) loads with that layout; today's documents round-trip.
TEST(graph_json_keeps_recorded_output_layouts) {
  G g;
  const Dims xd = {2, 3, 5, 5}, wd = {4, 3, 3, 3}, yd = {2, 4, 3, 3};
  const int64_t x = g.input("x", xd, packed(xd)), w = g.input("w", wd, packed(wd));
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, nullptr, &y));
  g.output(y);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), json.data(), json.size(), &size));
  json.resize(size);
  while (!json.empty() && json.back() == '\0') json.pop_back();
  {
    G copy;
    REQUIRE_OK(cudnnfe_graph_deserialize(copy.get(), json.data(), json.size()));
    CHECK_STRIDES(copy.strides(y), channels_last(yd));
  }
  // Rewrite y's recorded strides to NCHW, as an older document has them.
  const std::string nhwc = "[36, 1, 12, 4]", nchw = "[36, 9, 3, 1]";
  const size_t at = json.find(nhwc);
  REQUIRE(at != std::string::npos);
  json.replace(at, nhwc.size(), nchw);
  G old;
  REQUIRE_OK(cudnnfe_graph_deserialize(old.get(), json.data(), json.size()));
  CHECK_STRIDES(old.strides(y), packed(yd));
}

}  // namespace
