// The CPU reference executor against hand-computed values, through the
// public C API only: every op family, layouts, dtype rounding, virtual
// intermediates, scalars, fusions and concurrent execution.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_util.h"
#include "harness.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- graph helpers ----

// Owns a graph; adds tensors and ops with fewer lines per test.
class TestGraph {
 public:
  TestGraph() { cudnnfe_graph_create(&g_); }
  ~TestGraph() { cudnnfe_graph_destroy(g_); }
  TestGraph(const TestGraph &) = delete;
  TestGraph &operator=(const TestGraph &) = delete;

  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, cudnnfe_dtype_t dtype, const std::vector<int64_t> &dims,
                const std::vector<int64_t> &strides = {}) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, dtype, static_cast<int32_t>(dims.size()),
                                      dims.data(), strides.empty() ? nullptr : strides.data(),
                                      &uid));
    return uid;
  }

  int64_t scalar(const char *name, cudnnfe_dtype_t dtype, double value) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_scalar(g_, name, dtype, value, &uid));
    return uid;
  }

  int64_t pointwise(cudnnfe_pointwise_mode_t mode, int64_t in0, int64_t in1 = 0, int64_t in2 = 0,
                    const cudnnfe_pointwise_options_t *options = nullptr) {
    int64_t out = 0;
    CHECK_OK(cudnnfe_graph_add_pointwise(g_, mode, in0, in1, in2, options, &out));
    return out;
  }

  // Marks `uid` as a graph output, optionally with a data type.
  void output(int64_t uid, cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_NOT_SET) {
    CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1));
    if (dtype != CUDNNFE_DTYPE_NOT_SET) CHECK_OK(cudnnfe_tensor_set_dtype(g_, uid, dtype));
  }

  bool build() {
    cudnnfe_build_options_t options;
    cudnnfe_build_options_init(&options);
    options.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_status_t status = cudnnfe_graph_build(g_, nullptr, &options);
    if (status != CUDNNFE_STATUS_OK)
      std::printf("  build failed: %s: %s\n", cudnnfe_status_name(status),
                  cudnnfe_graph_last_error(g_));
    return status == CUDNNFE_STATUS_OK;
  }

  bool execute(const std::vector<cudnnfe_binding_t> &bindings) const {
    cudnnfe_handle_t *handle = nullptr;
    if (cudnnfe_handle_create(&handle, -1) != CUDNNFE_STATUS_OK) return false;
    cudnnfe_status_t status =
        cudnnfe_graph_execute(g_, handle, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (status != CUDNNFE_STATUS_OK)
      std::printf("  execute failed: %s: %s\n", cudnnfe_status_name(status),
                  cudnnfe_handle_last_error(handle));
    cudnnfe_handle_destroy(handle);
    return status == CUDNNFE_STATUS_OK;
  }

  std::vector<int64_t> dims(int64_t uid) const { return shape(uid, true); }
  std::vector<int64_t> strides(int64_t uid) const { return shape(uid, false); }

 private:
  std::vector<int64_t> shape(int64_t uid, bool want_dims) const {
    int64_t dims[CUDNNFE_MAX_DIMS], strides[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, dims, strides, CUDNNFE_MAX_DIMS, &rank));
    const int64_t *src = want_dims ? dims : strides;
    return std::vector<int64_t>(src, src + rank);
  }

  cudnnfe_graph_t *g_ = nullptr;
};

cudnnfe_conv_options_t conv_options() {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  return o;
}

cudnnfe_pointwise_options_t pointwise_options() {
  cudnnfe_pointwise_options_t o;
  cudnnfe_pointwise_options_init(&o);
  return o;
}

// ---- layout helpers ----

int64_t product(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Offset of the `flat`-th logical (row-major) element under `strides`.
int64_t strided_offset(int64_t flat, const std::vector<int64_t> &dims,
                       const std::vector<int64_t> &strides) {
  int64_t offset = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    offset += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return offset;
}

int64_t span(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides) {
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
  return last + 1;
}

// Lays logical row-major values out in memory with `strides`.
std::vector<float> scatter(const std::vector<float> &logical, const std::vector<int64_t> &dims,
                           const std::vector<int64_t> &strides) {
  std::vector<float> memory(static_cast<size_t>(span(dims, strides)), 0.0f);
  for (int64_t i = 0; i < product(dims); ++i)
    memory[static_cast<size_t>(strided_offset(i, dims, strides))] = logical[i];
  return memory;
}

// Reads memory laid out with `strides` back in logical row-major order.
template <class T>
std::vector<double> gather(const std::vector<T> &memory, const std::vector<int64_t> &dims,
                           const std::vector<int64_t> &strides) {
  std::vector<double> logical(static_cast<size_t>(product(dims)));
  for (int64_t i = 0; i < product(dims); ++i)
    logical[i] = static_cast<double>(memory[static_cast<size_t>(strided_offset(i, dims, strides))]);
  return logical;
}

// ---- comparisons ----

bool close(double got, double want, double tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
}

template <class T>
void expect_values(const char *what, const std::vector<T> &got, const std::vector<double> &want,
                   double tol = 1e-6) {
  CHECK_MSG(got.size() == want.size(), "%s: %zu values, expected %zu", what, got.size(),
            want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    CHECK_MSG(close(static_cast<double>(got[i]), want[i], tol), "%s[%zu] = %.9g, expected %.9g",
              what, i, static_cast<double>(got[i]), want[i]);
}

// Deterministic small values in [-2, 2) with a few decimals.
std::vector<float> pattern(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = static_cast<float>((seed >> 8) % 4096) / 1024.0f - 2.0f;
  }
  return v;
}

double dot(const std::vector<float> &a, const std::vector<float> &b) {
  double sum = 0.0;
  for (size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}

// ---- plan basics ----

TEST(cpu_plan_reports_target_workspace_and_name) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4});
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_NEG, x);
  g.output(y);
  REQUIRE(g.build());
  cudnnfe_target_t target = 0;
  CHECK_OK(cudnnfe_graph_get_target(g.get(), &target));
  CHECK(target == CUDNNFE_TARGET_CPU_REFERENCE);
  int64_t workspace = -1;
  CHECK_OK(cudnnfe_graph_get_workspace_size(g.get(), &workspace));
  CHECK(workspace == 0);
  const char *name = nullptr;
  CHECK_OK(cudnnfe_graph_get_plan_name(g.get(), &name));
  CHECK(name && std::strcmp(name, "cpu_reference") == 0);
}

TEST(cpu_execute_ordered_uses_bound_uid_order) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_FLOAT, {3});
  int64_t b = g.input("b", CUDNNFE_DTYPE_FLOAT, {3});
  int64_t c = g.pointwise(CUDNNFE_POINTWISE_SUB, a, b);
  g.output(c);
  REQUIRE(g.build());
  size_t count = 0;
  CHECK_OK(cudnnfe_graph_get_bound_uids(g.get(), nullptr, 0, &count));
  REQUIRE(count == 3);
  int64_t uids[3];
  CHECK_OK(cudnnfe_graph_get_bound_uids(g.get(), uids, 3, &count));
  std::vector<float> va = {5, 6, 7}, vb = {1, 2, 4}, vc(3);
  void *data[3];
  for (int i = 0; i < 3; ++i)
    data[i] = uids[i] == a ? va.data() : uids[i] == b ? static_cast<void *>(vb.data()) : vc.data();
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  CHECK_OK(cudnnfe_graph_execute_ordered(g.get(), h, data, 3, nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  expect_values("c", vc, {4, 4, 3});
}

// ---- convolution ----

// x = 1..9 (3x3), w = [1 2; 3 4]: the textbook 2x2 cross-correlation.
TEST(cpu_conv_fprop_2d_cross_correlation_and_convolution_mode) {
  for (int mode : {CUDNNFE_CONV_MODE_CROSS_CORRELATION, CUDNNFE_CONV_MODE_CONVOLUTION}) {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 3});
    int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    cudnnfe_conv_options_t o = conv_options();
    o.mode = mode;
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, &o, &y));
    g.output(y);
    REQUIRE(g.build());
    std::vector<float> vx = {1, 2, 3, 4, 5, 6, 7, 8, 9}, vw = {1, 2, 3, 4}, vy(4);
    REQUIRE(g.execute({{x, vx.data()}, {w, vw.data()}, {y, vy.data()}}));
    if (mode == CUDNNFE_CONV_MODE_CROSS_CORRELATION)
      expect_values("y (cross-correlation)", vy, {37, 47, 67, 77});
    else  // the filter is flipped: [4 3; 2 1]
      expect_values("y (convolution)", vy, {23, 33, 53, 63});
  }
}

// x 1x2x4x4 = (i%7)-3, w 2x2x3x3 = (i%5)-2; values from a direct loop.
const std::vector<float> kConvX = [] {
  std::vector<float> v(32);
  for (int i = 0; i < 32; ++i) v[i] = static_cast<float>(i % 7 - 3);
  return v;
}();
const std::vector<float> kConvW = [] {
  std::vector<float> v(36);
  for (int i = 0; i < 36; ++i) v[i] = static_cast<float>(i % 5 - 2);
  return v;
}();

struct ConvCase {
  const char *what;
  int64_t pad, stride, dilation;
  int mode;
  std::vector<int64_t> y_dims;
  std::vector<double> y;
};

const std::vector<ConvCase> &conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"pad 1 stride 2",
       1,
       2,
       1,
       CUDNNFE_CONV_MODE_CROSS_CORRELATION,
       {1, 2, 2, 2},
       {-4, 4, 2, -3, 7, -3, -15, 18}},
      {"pad 2 dilation 2",
       2,
       1,
       2,
       CUDNNFE_CONV_MODE_CROSS_CORRELATION,
       {1, 2, 4, 4},
       {-3, 0,  -4, -4, -5, 5,  10, -4, 4,  3, 3,  4,  0,  13, 0,  -6,
        0,  -3, 4,  3,  -5, -8, 0,  13, -3, 0, -4, -4, -5, 5,  10, -4}},
      {"pad 1 convolution mode",
       1,
       1,
       1,
       CUDNNFE_CONV_MODE_CONVOLUTION,
       {1, 2, 4, 4},
       {-26, -10, 11,  13,  16, 7,  -17, -29, -10, 16,  27,  16, 3, -16, -29, -3,
        10,  4,   -16, -20, -4, 16, 24,  16,  8,   -29, -42, 2,  7, 17,  14,  -3}},
  };
  return cases;
}

void run_conv_case(const ConvCase &c, bool nhwc) {
  const std::vector<int64_t> x_dims = {1, 2, 4, 4}, w_dims = {2, 2, 3, 3};
  // NHWC image and KRSC filter: channels innermost.
  const std::vector<int64_t> x_strides =
      nhwc ? std::vector<int64_t>{32, 1, 8, 2} : std::vector<int64_t>{32, 16, 4, 1};
  const std::vector<int64_t> w_strides =
      nhwc ? std::vector<int64_t>{18, 1, 6, 2} : std::vector<int64_t>{18, 9, 3, 1};
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, x_dims, x_strides);
  int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, w_dims, w_strides);
  cudnnfe_conv_options_t o = conv_options();
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = c.pad;
  o.stride[0] = o.stride[1] = c.stride;
  o.dilation[0] = o.dilation[1] = c.dilation;
  o.mode = c.mode;
  int64_t y = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, &o, &y));
  g.output(y);
  if (!g.build()) {
    CHECK_MSG(false, "%s: build failed", c.what);
    return;
  }
  if (g.dims(y) != c.y_dims) {
    CHECK_MSG(false, "%s: unexpected output dims", c.what);
    return;
  }
  const std::vector<int64_t> y_strides = g.strides(y);
  if (nhwc) CHECK_MSG(y_strides[1] == 1, "%s: y should be NHWC like x", c.what);
  std::vector<float> vx = scatter(kConvX, x_dims, x_strides);
  std::vector<float> vw = scatter(kConvW, w_dims, w_strides);
  std::vector<float> vy(static_cast<size_t>(span(c.y_dims, y_strides)));
  CHECK(g.execute({{x, vx.data()}, {w, vw.data()}, {y, vy.data()}}));
  expect_values(c.what, gather(vy, c.y_dims, y_strides), c.y);
}

TEST(cpu_conv_fprop_padding_stride_dilation_nchw) {
  for (const ConvCase &c : conv_cases()) run_conv_case(c, false);
}

TEST(cpu_conv_fprop_padding_stride_dilation_nhwc) {
  for (const ConvCase &c : conv_cases()) run_conv_case(c, true);
}

TEST(cpu_conv_fprop_1d_asymmetric_padding) {
  struct Case {
    int64_t pre, post, stride, dilation;
    std::vector<double> y;
  };
  // x = 1..5, w = [1 0 -1]: y[o] = x[o*s - pre] - x[o*s - pre + 2*dil].
  const Case cases[] = {
      {1, 1, 2, 1, {-2, -2, 4}},
      {2, 2, 1, 2, {-3, -4, -4, 2, 3}},
      {0, 2, 1, 1, {-2, -2, -2, 4, 5}},
  };
  for (const Case &c : cases) {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 5});
    int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {1, 1, 3});
    cudnnfe_conv_options_t o = conv_options();
    o.pre_padding[0] = c.pre;
    o.post_padding[0] = c.post;
    o.stride[0] = c.stride;
    o.dilation[0] = c.dilation;
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, &o, &y));
    g.output(y);
    REQUIRE(g.build());
    std::vector<float> vx = {1, 2, 3, 4, 5}, vw = {1, 0, -1}, vy(c.y.size());
    REQUIRE(g.execute({{x, vx.data()}, {w, vw.data()}, {y, vy.data()}}));
    expect_values("y", vy, c.y);
  }
}

TEST(cpu_conv_fprop_3d) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 3, 3});
  int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2, 2});
  int64_t y = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, nullptr, &y));
  g.output(y);
  REQUIRE(g.build());
  REQUIRE((g.dims(y) == std::vector<int64_t>{1, 1, 1, 2, 2}));
  std::vector<float> vx(18), vw(8, 1.0f), vy(4);
  for (int i = 0; i < 18; ++i) vx[i] = static_cast<float>(i + 1);
  REQUIRE(g.execute({{x, vx.data()}, {w, vw.data()}, {y, vy.data()}}));
  // Sum of each 2x2x2 block of 1..18: 60 + 24*h + 8*w.
  expect_values("y", vy, {60, 68, 84, 92});
}

TEST(cpu_conv_dgrad_and_wgrad_hand_values) {
  // dy = w = [1 2; 3 4], stride 1: dx is the full correlation (3x3).
  {
    TestGraph g;
    int64_t dy = g.input("dy", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t dx = 0;
    CHECK_OK(cudnnfe_graph_add_conv_dgrad(g.get(), dy, w, nullptr, &dx));
    g.output(dx);
    REQUIRE(g.build());
    std::vector<float> vdy = {1, 2, 3, 4}, vw = {1, 2, 3, 4}, vdx(9);
    REQUIRE(g.execute({{dy, vdy.data()}, {w, vw.data()}, {dx, vdx.data()}}));
    expect_values("dx", vdx, {1, 4, 4, 6, 20, 16, 9, 24, 16});
  }
  // x = 1..9, dy = [1 2; 3 4]: dw[r][s] = sum_o x[o + (r,s)] * dy[o].
  {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 3});
    int64_t dy = g.input("dy", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t dw = 0;
    CHECK_OK(cudnnfe_graph_add_conv_wgrad(g.get(), x, dy, nullptr, &dw));
    g.output(dw);
    REQUIRE(g.build());
    std::vector<float> vx = {1, 2, 3, 4, 5, 6, 7, 8, 9}, vdy = {1, 2, 3, 4}, vdw(4);
    REQUIRE(g.execute({{x, vx.data()}, {dy, vdy.data()}, {dw, vdw.data()}}));
    expect_values("dw", vdw, {37, 47, 67, 77});
  }
}

// Stride 2, padding 1, 3x3 filter over a 4x4 image: stride 2 hides one
// size in each direction, so dx (inferred 3x3) and dw (inferred 4x4) are set.
TEST(cpu_conv_dgrad_and_wgrad_stride_padding) {
  cudnnfe_conv_options_t o = conv_options();
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
  o.stride[0] = o.stride[1] = 2;
  const std::vector<float> vdy_data = {1, -2, 3, 4};
  {
    TestGraph g;
    int64_t dy = g.input("dy", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 3});
    int64_t dx = 0;
    CHECK_OK(cudnnfe_graph_add_conv_dgrad(g.get(), dy, w, &o, &dx));
    const int64_t dx_dims[] = {1, 1, 4, 4};
    CHECK_OK(cudnnfe_tensor_set_dims(g.get(), dx, 4, dx_dims));
    g.output(dx);
    REQUIRE(g.build());
    std::vector<float> vdy = vdy_data, vw = {1, 2, 3, 4, 5, 6, 7, 8, 9}, vdx(16);
    REQUIRE(g.execute({{dy, vdy.data()}, {w, vw.data()}, {dx, vdx.data()}}));
    expect_values("dx", vdx, {5, -2, -10, -12, 14, 8, -8, -6, 15, 34, 20, 24, 24, 55, 32, 36});
  }
  {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 4, 4});
    int64_t dy = g.input("dy", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t dw = 0;
    CHECK_OK(cudnnfe_graph_add_conv_wgrad(g.get(), x, dy, &o, &dw));
    // Inference picks the largest consistent filter (4x4); ask for 3x3.
    const int64_t dw_dims[] = {1, 1, 3, 3};
    CHECK_OK(cudnnfe_tensor_set_dims(g.get(), dw, 4, dw_dims));
    g.output(dw);
    REQUIRE(g.build());
    REQUIRE((g.dims(dw) == std::vector<int64_t>{1, 1, 3, 3}));
    std::vector<float> vx(16), vdy = vdy_data, vdw(9);
    for (int i = 0; i < 16; ++i) vx[i] = static_cast<float>(i - 5);
    REQUIRE(g.execute({{x, vx.data()}, {dy, vdy.data()}, {dw, vdw.data()}}));
    expect_values("dw", vdw, {0, 1, 8, 24, 30, 36, 32, 54, 60});
  }
}

// dgrad and wgrad are the adjoints of fprop: <fprop(x,w), dy> equals
// <x, dgrad(dy,w)> and <w, wgrad(x,dy)>. One graph runs all three.
TEST(cpu_conv_gradients_are_adjoint_to_fprop) {
  for (int mode : {CUDNNFE_CONV_MODE_CROSS_CORRELATION, CUDNNFE_CONV_MODE_CONVOLUTION}) {
    const std::vector<int64_t> x_dims = {2, 3, 7, 6}, w_dims = {4, 3, 3, 2};
    cudnnfe_conv_options_t o = conv_options();
    o.pre_padding[0] = 2;
    o.post_padding[0] = 1;
    o.pre_padding[1] = 1;
    o.stride[0] = 2;
    o.dilation[1] = 2;
    o.mode = mode;
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, x_dims);
    int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, w_dims);
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, &o, &y));
    g.output(y);
    const std::vector<int64_t> y_dims = g.dims(y);
    REQUIRE((y_dims == std::vector<int64_t>{2, 4, 4, 5}));
    int64_t dy = g.input("dy", CUDNNFE_DTYPE_FLOAT, y_dims);
    int64_t dx = 0, dw = 0;
    CHECK_OK(cudnnfe_graph_add_conv_dgrad(g.get(), dy, w, &o, &dx));
    CHECK_OK(cudnnfe_tensor_set_dims(g.get(), dx, 4, x_dims.data()));
    CHECK_OK(cudnnfe_graph_add_conv_wgrad(g.get(), x, dy, &o, &dw));
    CHECK_OK(cudnnfe_tensor_set_dims(g.get(), dw, 4, w_dims.data()));
    g.output(dx);
    g.output(dw);
    REQUIRE(g.build());
    std::vector<float> vx = pattern(product(x_dims), 1), vw = pattern(product(w_dims), 2);
    std::vector<float> vdy = pattern(product(y_dims), 3);
    std::vector<float> vy(vdy.size()), vdx(vx.size()), vdw(vw.size());
    REQUIRE(g.execute({{x, vx.data()},
                       {w, vw.data()},
                       {y, vy.data()},
                       {dy, vdy.data()},
                       {dx, vdx.data()},
                       {dw, vdw.data()}}));
    // y, dx and dw are channels-last (the conv outputs' default); read them
    // back in logical order through the graph's strides.
    REQUIRE((g.strides(y) == std::vector<int64_t>{80, 1, 20, 4}));
    auto logical = [&](const std::vector<float> &memory, int64_t uid) {
      const std::vector<double> v = gather(memory, g.dims(uid), g.strides(uid));
      return std::vector<float>(v.begin(), v.end());
    };
    vy = logical(vy, y);
    vdx = logical(vdx, dx);
    vdw = logical(vdw, dw);
    const double forward = dot(vy, vdy);
    CHECK_MSG(close(dot(vx, vdx), forward, 1e-5), "<x,dx> %.9g vs <y,dy> %.9g", dot(vx, vdx),
              forward);
    CHECK_MSG(close(dot(vw, vdw), forward, 1e-5), "<w,dw> %.9g vs <y,dy> %.9g", dot(vw, vdw),
              forward);
  }
}

// ---- matmul ----

// a [2,1,2,3] = 1..12, b [1,2,3,2] = (i%4)-1 stored transposed (K inner):
// batch dims broadcast both ways to c [2,2,2,2].
TEST(cpu_matmul_batch_broadcast_transposed_b) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_FLOAT, {2, 1, 2, 3});
  int64_t b = g.input("b", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 2}, {12, 6, 1, 3});
  int64_t c = 0;
  CHECK_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  g.output(c);
  REQUIRE(g.build());
  REQUIRE((g.dims(c) == std::vector<int64_t>{2, 2, 2, 2}));
  std::vector<float> va(12), vc(16);
  for (int i = 0; i < 12; ++i) va[i] = static_cast<float>(i + 1);
  std::vector<float> vb = {-1, 1, -1, 0, 2, 0, 1, -1, 1, 2, 0, 2};  // transposed storage
  REQUIRE(g.execute({{a, va.data()}, {b, vb.data()}, {c, vc.data()}}));
  expect_values("c", vc, {-2, 4, -5, 10, 2, 8, 5, 20, -8, 16, -11, 22, 8, 32, 11, 44});
}

TEST(cpu_matmul_int8_inputs_int32_compute) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_INT8, {2, 2});
  int64_t b = g.input("b", CUDNNFE_DTYPE_INT8, {2, 2});
  cudnnfe_matmul_options_t o;
  cudnnfe_matmul_options_init(&o);
  o.compute_dtype = CUDNNFE_DTYPE_INT32;
  int64_t c = 0;
  CHECK_OK(cudnnfe_graph_add_matmul(g.get(), a, b, &o, &c));
  g.output(c, CUDNNFE_DTYPE_INT32);
  REQUIRE(g.build());
  std::vector<int8_t> va = {127, -128, 3, 4}, vb = {100, 1, 100, -1};
  std::vector<int32_t> vc(4);
  REQUIRE(g.execute({{a, va.data()}, {b, vb.data()}, {c, vc.data()}}));
  expect_values("c", vc, {127 * 100 - 128 * 100, 127 + 128, 300 + 400, 3 - 4});
}

// ---- pointwise ----

const std::vector<double> kA = {-2.0, -0.5, 0.0, 0.75, 1.5, 3.0};
const std::vector<double> kB = {1.5, -2.0, 0.5, 0.75, -1.0, 2.0};
const std::vector<double> kPos = {0.25, 0.5, 1.0, 2.0, 4.0, 9.0};
const std::vector<double> kDy = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
const std::vector<double> kL0 = {0, 1, 0, 2, -1, 0};
const std::vector<double> kL1 = {0, 0, 1, 3, 0, -2};
const std::vector<double> kNone = {};

struct PointwiseCase {
  cudnnfe_pointwise_mode_t mode;
  // "relu": clip [1, 2], slope 0.5; "elu": alpha 2; "softplus": beta 2;
  // "swish": beta 1.5; "": defaults.
  const char *params;
  std::vector<double> in0, in1;
  std::vector<double> out;
};

// Expected values: the formulas of cudnnfe.h evaluated in double.
const std::vector<PointwiseCase> &pointwise_cases() {
  static const std::vector<PointwiseCase> cases = {
      {CUDNNFE_POINTWISE_ADD, "", kA, kB, {-0.5, -2.5, 0.5, 1.5, 0.5, 5}},
      {CUDNNFE_POINTWISE_ADD_SQUARE, "", kA, kB, {0.25, 3.5, 0.25, 1.3125, 2.5, 7}},
      {CUDNNFE_POINTWISE_SUB, "", kA, kB, {-3.5, 1.5, -0.5, 0, 2.5, 1}},
      {CUDNNFE_POINTWISE_MUL, "", kA, kB, {-3, 1, 0, 0.5625, -1.5, 6}},
      {CUDNNFE_POINTWISE_DIV, "", kA, kB, {-1.33333333, 0.25, 0, 1, -1.5, 1.5}},
      {CUDNNFE_POINTWISE_MAX, "", kA, kB, {1.5, -0.5, 0.5, 0.75, 1.5, 3}},
      {CUDNNFE_POINTWISE_MIN, "", kA, kB, {-2, -2, 0, 0.75, -1, 2}},
      {CUDNNFE_POINTWISE_MOD, "", kA, kB, {-0.5, -0.5, 0, 0, 0.5, 1}},
      {CUDNNFE_POINTWISE_POW, "", kPos, kB, {0.125, 4, 1, 1.68179283, 0.25, 81}},
      {CUDNNFE_POINTWISE_ATAN2,
       "",
       kA,
       kB,
       {-0.927295218, -2.89661399, 0, 0.785398163, 2.15879893, 0.982793723}},
      {CUDNNFE_POINTWISE_NEG, "", kA, kNone, {2, 0.5, -0, -0.75, -1.5, -3}},
      {CUDNNFE_POINTWISE_ABS, "", kA, kNone, {2, 0.5, 0, 0.75, 1.5, 3}},
      {CUDNNFE_POINTWISE_CEIL, "", {-1.5, -0.5, 0.0, 0.25, 1.5, 2.0}, kNone, {-1, 0, 0, 1, 2, 2}},
      {CUDNNFE_POINTWISE_FLOOR, "", {-1.5, -0.5, 0.0, 0.25, 1.5, 2.0}, kNone, {-2, -1, 0, 0, 1, 2}},
      {CUDNNFE_POINTWISE_RECIPROCAL, "", kB, kNone, {0.666666667, -0.5, 2, 1.33333333, -1, 0.5}},
      {CUDNNFE_POINTWISE_SQRT, "", kPos, kNone, {0.5, 0.707106781, 1, 1.41421356, 2, 3}},
      {CUDNNFE_POINTWISE_RSQRT, "", kPos, kNone, {2, 1.41421356, 1, 0.707106781, 0.5, 0.333333333}},
      {CUDNNFE_POINTWISE_EXP,
       "",
       kA,
       kNone,
       {0.135335283, 0.60653066, 1, 2.11700002, 4.48168907, 20.0855369}},
      {CUDNNFE_POINTWISE_LOG,
       "",
       kPos,
       kNone,
       {-1.38629436, -0.693147181, 0, 0.693147181, 1.38629436, 2.19722458}},
      {CUDNNFE_POINTWISE_SIN,
       "",
       kA,
       kNone,
       {-0.909297427, -0.479425539, 0, 0.68163876, 0.997494987, 0.141120008}},
      {CUDNNFE_POINTWISE_COS,
       "",
       kA,
       kNone,
       {-0.416146837, 0.877582562, 1, 0.731688869, 0.0707372017, -0.989992497}},
      {CUDNNFE_POINTWISE_TAN,
       "",
       kA,
       kNone,
       {2.18503986, -0.54630249, 0, 0.93159646, 14.1014199, -0.142546543}},
      {CUDNNFE_POINTWISE_ERF,
       "",
       kA,
       kNone,
       {-0.995322265, -0.520499878, 0, 0.711155634, 0.966105146, 0.99997791}},
      {CUDNNFE_POINTWISE_IDENTITY, "", kA, kNone, {-2, -0.5, 0, 0.75, 1.5, 3}},
      {CUDNNFE_POINTWISE_RELU_FWD, "", kA, kNone, {0, 0, 0, 0.75, 1.5, 3}},
      {CUDNNFE_POINTWISE_RELU_FWD, "relu", kA, kNone, {-0.5, 0.25, 0.5, 0.875, 1.5, 2}},
      {CUDNNFE_POINTWISE_TANH_FWD,
       "",
       kA,
       kNone,
       {-0.96402758, -0.462117157, 0, 0.635148952, 0.905148254, 0.995054754}},
      {CUDNNFE_POINTWISE_SIGMOID_FWD,
       "",
       kA,
       kNone,
       {0.119202922, 0.377540669, 0.5, 0.679178699, 0.817574476, 0.952574127}},
      {CUDNNFE_POINTWISE_ELU_FWD, "elu", kA, kNone, {-1.72932943, -0.786938681, 0, 0.75, 1.5, 3}},
      {CUDNNFE_POINTWISE_GELU_FWD,
       "",
       kA,
       kNone,
       {-0.0455002639, -0.154268769, 0, 0.580029486, 1.3997892, 2.99595031}},
      {CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD,
       "",
       kA,
       kNone,
       {-0.0454023059, -0.15428599, 0, 0.579960555, 1.39957158, 2.99636261}},
      {CUDNNFE_POINTWISE_SOFTPLUS_FWD,
       "softplus",
       kA,
       kNone,
       {0.00907496396, 0.156630844, 0.34657359, 0.850706639, 1.52429368, 3.00123784}},
      {CUDNNFE_POINTWISE_SWISH_FWD,
       "swish",
       kA,
       kNone,
       {-0.0948517464, -0.16041065, 0, 0.56618624, 1.3569758, 2.96703917}},
      {CUDNNFE_POINTWISE_RELU_BWD, "", kDy, kB, {1, 0, 3, 4, 0, 6}},
      {CUDNNFE_POINTWISE_RELU_BWD, "relu", kDy, kB, {1, 1, 1.5, 2, 2.5, 0}},
      {CUDNNFE_POINTWISE_TANH_BWD,
       "",
       kDy,
       kB,
       {0.180706639, 0.14130165, 2.3593432, 2.38634323, 2.09987171, 0.423904949}},
      {CUDNNFE_POINTWISE_SIGMOID_BWD,
       "",
       kDy,
       kB,
       {0.149146452, 0.209987171, 0.705011137, 0.871579975, 0.983059666, 0.629961512}},
      {CUDNNFE_POINTWISE_ELU_BWD, "elu", kDy, kB, {1, 0.541341133, 3, 4, 3.67879441, 6}},
      {CUDNNFE_POINTWISE_GELU_BWD,
       "",
       kDy,
       kB,
       {1.12746919, -0.170463602, 2.60248537, 3.99690289, -0.416577353, 6.51139081}},
      {CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD,
       "",
       kDy,
       kB,
       {1.12771079, -0.172198513, 2.60210971, 3.99575302, -0.414820419, 6.51659554}},
      {CUDNNFE_POINTWISE_SOFTPLUS_BWD,
       "softplus",
       kDy,
       kB,
       {0.952574127, 0.0359724199, 2.19317574, 3.2702979, 0.59601461, 5.89208274}},
      {CUDNNFE_POINTWISE_SWISH_BWD,
       "swish",
       kDy,
       kB,
       {1.09873091, -0.176208212, 2.52779983, 3.85224252, -0.206470771, 6.52862464}},
      {CUDNNFE_POINTWISE_CMP_EQ, "", kA, kB, {0, 0, 0, 1, 0, 0}},
      {CUDNNFE_POINTWISE_CMP_NEQ, "", kA, kB, {1, 1, 1, 0, 1, 1}},
      {CUDNNFE_POINTWISE_CMP_GT, "", kA, kB, {0, 1, 0, 0, 1, 1}},
      {CUDNNFE_POINTWISE_CMP_GE, "", kA, kB, {0, 1, 0, 1, 1, 1}},
      {CUDNNFE_POINTWISE_CMP_LT, "", kA, kB, {1, 0, 1, 0, 0, 0}},
      {CUDNNFE_POINTWISE_CMP_LE, "", kA, kB, {1, 0, 1, 1, 0, 0}},
      {CUDNNFE_POINTWISE_LOGICAL_AND, "", kL0, kL1, {0, 0, 0, 1, 0, 0}},
      {CUDNNFE_POINTWISE_LOGICAL_OR, "", kL0, kL1, {0, 1, 1, 1, 1, 1}},
      {CUDNNFE_POINTWISE_LOGICAL_NOT, "", kL0, kNone, {1, 0, 1, 0, 0, 1}},
  };
  return cases;
}

cudnnfe_pointwise_options_t params_for(const char *params) {
  cudnnfe_pointwise_options_t o = pointwise_options();
  if (std::strcmp(params, "relu") == 0) {
    o.relu_lower_clip = 1.0;
    o.relu_upper_clip = 2.0;
    o.relu_lower_clip_slope = 0.5;
  } else if (std::strcmp(params, "elu") == 0) {
    o.elu_alpha = 2.0;
  } else if (std::strcmp(params, "softplus") == 0) {
    o.softplus_beta = 2.0;
  } else if (std::strcmp(params, "swish") == 0) {
    o.swish_beta = 1.5;
  }
  return o;
}

std::vector<float> to_float(const std::vector<double> &v) {
  return std::vector<float>(v.begin(), v.end());
}

// Reads an output of any of the types pointwise ops produce as doubles.
std::vector<double> decode(const std::vector<uint8_t> &bytes, cudnnfe_dtype_t dtype, size_t n) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == CUDNNFE_DTYPE_FLOAT) {
      float f;
      std::memcpy(&f, &bytes[i * 4], 4);
      out[i] = f;
    } else if (dtype == CUDNNFE_DTYPE_INT32) {
      int32_t v;
      std::memcpy(&v, &bytes[i * 4], 4);
      out[i] = v;
    } else {
      out[i] = bytes[i];  // BOOLEAN
    }
  }
  return out;
}

TEST(cpu_pointwise_every_mode) {
  for (const PointwiseCase &c : pointwise_cases()) {
    TestGraph g;
    int64_t in0 = g.input("in0", CUDNNFE_DTYPE_FLOAT, {2, 3});
    int64_t in1 = c.in1.empty() ? 0 : g.input("in1", CUDNNFE_DTYPE_FLOAT, {2, 3});
    cudnnfe_pointwise_options_t o = params_for(c.params);
    int64_t out = g.pointwise(c.mode, in0, in1, 0, &o);
    g.output(out);
    if (!g.build()) {
      CHECK_MSG(false, "mode %d: build failed", c.mode);
      continue;
    }
    cudnnfe_dtype_t out_dtype = 0;
    CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), out, &out_dtype));
    const bool boolean =
        (c.mode >= CUDNNFE_POINTWISE_CMP_EQ && c.mode <= CUDNNFE_POINTWISE_LOGICAL_NOT);
    CHECK_MSG(out_dtype == (boolean ? CUDNNFE_DTYPE_BOOLEAN : CUDNNFE_DTYPE_FLOAT),
              "mode %d: output dtype %s", c.mode, cudnnfe_dtype_name(out_dtype));
    std::vector<float> v0 = to_float(c.in0), v1 = to_float(c.in1);
    std::vector<uint8_t> vout(6 * cudnnfe_dtype_size(out_dtype));
    std::vector<cudnnfe_binding_t> bindings = {{in0, v0.data()}, {out, vout.data()}};
    if (in1) bindings.push_back({in1, v1.data()});
    CHECK(g.execute(bindings));
    const std::string what = std::string(cudnnfe_dtype_name(out_dtype)) + " output of mode " +
                             std::to_string(c.mode) + (*c.params ? " with " : "") + c.params;
    expect_values(what.c_str(), decode(vout, out_dtype, 6), c.out, 2e-6);
  }
}

TEST(cpu_pointwise_binary_select_broadcasts_operands) {
  TestGraph g;
  int64_t in0 = g.input("in0", CUDNNFE_DTYPE_FLOAT, {2, 3});
  int64_t in1 = g.input("in1", CUDNNFE_DTYPE_FLOAT, {1, 3});
  int64_t in2 = g.input("in2", CUDNNFE_DTYPE_BOOLEAN, {2, 1});
  int64_t out = g.pointwise(CUDNNFE_POINTWISE_BINARY_SELECT, in0, in1, in2);
  g.output(out);
  REQUIRE(g.build());
  REQUIRE((g.dims(out) == std::vector<int64_t>{2, 3}));
  std::vector<float> v0 = to_float(kA), v1 = {10, 20, 30}, vout(6);
  std::vector<uint8_t> v2 = {1, 0};
  REQUIRE(g.execute({{in0, v0.data()}, {in1, v1.data()}, {in2, v2.data()}, {out, vout.data()}}));
  expect_values("out", vout, {-2, -0.5, 0, 10, 20, 30});
}

// BOOLEAN_PACKED is cuDNN's layout: element offset o is bit o % 8 (least
// significant first) of byte o / 8; bits of a written byte beyond the
// tensor's span are left as they were.
TEST(cpu_boolean_packed_output_and_input) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 5});
  int64_t zero = g.scalar("zero", CUDNNFE_DTYPE_FLOAT, 0.0);
  int64_t mask = g.pointwise(CUDNNFE_POINTWISE_CMP_GT, x, zero);
  g.output(mask, CUDNNFE_DTYPE_BOOLEAN_PACKED);
  REQUIRE(g.build());
  const std::vector<float> vx = {1, -1, 2, 0, 3, -2, 4, 5, -3, 6};
  std::vector<uint8_t> bits = {0x00, 0xf0};  // the high bits of byte 1 must survive
  REQUIRE(g.execute({{x, const_cast<float *>(vx.data())}, {mask, bits.data()}}));
  // x > 0: 1 0 1 0 1 | 0 1 1 0 1 -> byte 0 = 0b11010101, byte 1 = 0b10 | 0xf0.
  CHECK_MSG(bits[0] == 0xd5 && bits[1] == 0xf2, "bits %02x %02x", bits[0], bits[1]);

  TestGraph s;  // a packed mask read by BINARY_SELECT
  int64_t a = s.input("a", CUDNNFE_DTYPE_FLOAT, {2, 5});
  int64_t b = s.input("b", CUDNNFE_DTYPE_FLOAT, {2, 5});
  int64_t m = s.input("m", CUDNNFE_DTYPE_BOOLEAN_PACKED, {2, 5});
  int64_t out = s.pointwise(CUDNNFE_POINTWISE_BINARY_SELECT, a, b, m);
  s.output(out);
  REQUIRE(s.build());
  const std::vector<float> va = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<float> vb = {-0.0f, -1, -2, -3, -4, -5, -6, -7, -8, -9};
  std::vector<float> vout(10);
  REQUIRE(s.execute({{a, const_cast<float *>(va.data())},
                     {b, const_cast<float *>(vb.data())},
                     {m, bits.data()},
                     {out, vout.data()}}));
  expect_values("select", vout, {0, -1, 2, -3, 4, -5, 6, 7, -8, 9});
}

TEST(cpu_boolean_packed_has_no_layout_ops) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_BOOLEAN_PACKED, {2, 8});
  const int32_t perm[2] = {1, 0};
  int64_t y = 0;
  CHECK_OK(cudnnfe_graph_add_transpose(g.get(), x, 2, perm, nullptr, &y));
  g.output(y);
  REQUIRE(g.build());
  std::vector<uint8_t> vx = {0x0f, 0xf0}, vy = {0, 0};
  // Refused when run (the CPU plan copies whole bytes), with the type named.
  CHECK(!g.execute({{x, vx.data()}, {y, vy.data()}}));
}

TEST(cpu_pointwise_broadcast_stride_zero_and_transposed_output) {
  TestGraph g;
  // in0 column-major; in1 a [2,3] view of 3 floats (row stride 0).
  int64_t in0 = g.input("in0", CUDNNFE_DTYPE_FLOAT, {2, 3}, {1, 2});
  int64_t in1 = g.input("in1", CUDNNFE_DTYPE_FLOAT, {2, 3}, {0, 1});
  int64_t out = g.pointwise(CUDNNFE_POINTWISE_MUL, in0, in1);
  g.output(out);
  REQUIRE(g.build());
  const std::vector<int64_t> out_strides = g.strides(out);
  CHECK((out_strides == std::vector<int64_t>{1, 2}));
  std::vector<float> v0 = scatter({1, 2, 3, 4, 5, 6}, {2, 3}, {1, 2}), v1 = {1, 10, 100};
  std::vector<float> vout(6);
  REQUIRE(g.execute({{in0, v0.data()}, {in1, v1.data()}, {out, vout.data()}}));
  expect_values("out", gather(vout, {2, 3}, out_strides), {1, 20, 300, 4, 50, 600});
}

TEST(cpu_pointwise_gen_index_along_each_axis) {
  for (int axis : {0, 1}) {
    TestGraph g;
    int64_t in0 = g.input("in0", CUDNNFE_DTYPE_FLOAT, {2, 3});
    cudnnfe_pointwise_options_t o = pointwise_options();
    o.axis = axis;
    int64_t out = g.pointwise(CUDNNFE_POINTWISE_GEN_INDEX, in0, 0, 0, &o);
    g.output(out);
    REQUIRE(g.build());
    cudnnfe_dtype_t dtype = 0;
    CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), out, &dtype));
    CHECK(dtype == CUDNNFE_DTYPE_INT32);
    std::vector<float> v0(6, 7.0f);
    std::vector<int32_t> vout(6, -1);
    REQUIRE(g.execute({{in0, v0.data()}, {out, vout.data()}}));
    if (axis == 0)
      expect_values("axis 0", vout, {0, 0, 0, 1, 1, 1});
    else
      expect_values("axis 1", vout, {0, 1, 2, 0, 1, 2});
  }
}

TEST(cpu_pointwise_int32_compute_is_integer_arithmetic) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_INT32, {4});
  int64_t b = g.input("b", CUDNNFE_DTYPE_INT32, {4});
  cudnnfe_pointwise_options_t o = pointwise_options();
  o.compute_dtype = CUDNNFE_DTYPE_INT32;
  int64_t q = g.pointwise(CUDNNFE_POINTWISE_DIV, a, b, 0, &o);
  g.output(q);
  REQUIRE(g.build());
  std::vector<int32_t> va = {7, -7, 9, 100000000}, vb = {2, 2, 3, 3}, vq(4);
  REQUIRE(g.execute({{a, va.data()}, {b, vb.data()}, {q, vq.data()}}));
  expect_values("a / b", vq, {3, -3, 3, 33333333}, 0.0);
}

TEST(cpu_pointwise_double_compute_keeps_double_precision) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_DOUBLE, {2});
  int64_t b = g.input("b", CUDNNFE_DTYPE_DOUBLE, {2});
  cudnnfe_pointwise_options_t o = pointwise_options();
  o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
  int64_t c = g.pointwise(CUDNNFE_POINTWISE_SUB, a, b, 0, &o);
  g.output(c);
  REQUIRE(g.build());
  std::vector<double> va = {1.0 + 1e-12, 3.0}, vb = {1.0, 1e-13}, vc(2);
  REQUIRE(g.execute({{a, va.data()}, {b, vb.data()}, {c, vc.data()}}));
  CHECK(vc[0] == (1.0 + 1e-12) - 1.0);
  CHECK(vc[1] == 3.0 - 1e-13);
}

// ---- reductions ----

TEST(cpu_reduction_every_mode_over_each_axis_set) {
  struct Case {
    cudnnfe_reduction_mode_t mode;
    std::vector<double> rows, cols, all;  // masks 0b10, 0b01, 0
  };
  // x = [[1, -2, 3], [0, 5, -4]]
  const Case cases[] = {
      {CUDNNFE_REDUCTION_ADD, {2, 1}, {1, 3, -1}, {3}},
      {CUDNNFE_REDUCTION_MUL, {-6, 0}, {0, -10, -12}, {0}},
      {CUDNNFE_REDUCTION_MIN, {-2, -4}, {0, -2, -4}, {-4}},
      {CUDNNFE_REDUCTION_MAX, {3, 5}, {1, 5, 3}, {5}},
      {CUDNNFE_REDUCTION_AMAX, {3, 5}, {1, 5, 4}, {5}},
      {CUDNNFE_REDUCTION_AVG, {2.0 / 3.0, 1.0 / 3.0}, {0.5, 1.5, -0.5}, {0.5}},
      {CUDNNFE_REDUCTION_NORM1, {6, 9}, {1, 7, 7}, {15}},
      {CUDNNFE_REDUCTION_NORM2,
       {std::sqrt(14.0), std::sqrt(41.0)},
       {1, std::sqrt(29.0), 5},
       {std::sqrt(55.0)}},
      {CUDNNFE_REDUCTION_MUL_NO_ZEROS, {-6, -20}, {1, -10, -12}, {120}},
  };
  for (const Case &c : cases) {
    for (uint32_t mask : {2u, 1u, 0u}) {
      TestGraph g;
      int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 3});
      cudnnfe_reduction_options_t o;
      cudnnfe_reduction_options_init(&o);
      o.axes_mask = mask;
      int64_t y = 0;
      CHECK_OK(cudnnfe_graph_add_reduction(g.get(), c.mode, x, &o, &y));
      g.output(y);
      REQUIRE(g.build());
      const std::vector<double> &want = mask == 2 ? c.rows : mask == 1 ? c.cols : c.all;
      std::vector<float> vx = {1, -2, 3, 0, 5, -4}, vy(want.size(), -99.0f);
      REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}}));
      const std::string what =
          "reduction mode " + std::to_string(c.mode) + " mask " + std::to_string(mask);
      expect_values(what.c_str(), vy, want);
    }
  }
}

TEST(cpu_reduction_middle_axis_of_strided_input_and_all_zero_product) {
  {
    TestGraph g;
    // x [2,3,2] stored with dim 0 innermost.
    const std::vector<int64_t> dims = {2, 3, 2}, strides = {1, 4, 2};
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, dims, strides);
    cudnnfe_reduction_options_t o;
    cudnnfe_reduction_options_init(&o);
    o.axes_mask = 2;
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_ADD, x, &o, &y));
    g.output(y);
    REQUIRE(g.build());
    REQUIRE((g.dims(y) == std::vector<int64_t>{2, 1, 2}));
    std::vector<float> logical(12);
    for (int i = 0; i < 12; ++i) logical[i] = static_cast<float>(i);
    std::vector<float> vx = scatter(logical, dims, strides), vy(4);
    REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}}));
    expect_values("y", gather(vy, {2, 1, 2}, g.strides(y)), {6, 9, 24, 27});
  }
  {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3});
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_MUL_NO_ZEROS, x, nullptr, &y));
    g.output(y);
    REQUIRE(g.build());
    std::vector<float> vx = {0, 0, 0}, vy(1);
    REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}}));
    expect_values("product of no non-zeros", vy, {1});
  }
}

// ---- attention ----

// q [s_q=2, d=2], k [s_kv=3, 2], v [3, d_v=2]; expected values from a
// direct evaluation of softmax(scale * q k^T + bias) v in double.
const std::vector<float> kQ = {0.5f, -1.0f, 1.5f, 0.25f};
const std::vector<float> kK = {1, 0, 0, 1, 1, 1};
const std::vector<float> kV = {1, 2, 3, 4, 5, 6};

struct SdpaCase {
  const char *what;
  int causal;  // 0 none, 1 top-left, 2 bottom-right
  bool bias;
  double scale;  // 0: default 1/sqrt(d)
  std::vector<double> o, stats;
};

TEST(cpu_sdpa_masks_bias_scale_and_stats) {
  const SdpaCase cases[] = {
      {"no mask",
       0,
       false,
       0.5,
       {2.6214634009509603, 3.6214634009509603, 3.099796102529569, 4.099796102529569},
       {0.9818375667944002, 1.7314827450339756}},
      {"causal top-left",
       1,
       false,
       0.5,
       {1.0, 2.0, 1.6972902706678916, 2.6972902706678914},
       {0.25, 1.1787006782765186}},
      {"causal bottom-right",
       2,
       false,
       0.5,
       {1.6416426016492138, 2.641642601649214, 3.099796102529569, 4.099796102529569},
       {0.6368710061149, 1.7314827450339756}},
      {"bias",
       0,
       true,
       0.5,
       {3.0, 4.0, 3.5563743400316206, 4.556374340031621},
       {1.5489161848417257, 2.388180875036285}},
      {"default scale",
       0,
       false,
       0.0,
       {2.4487767623518963, 3.4487767623518963, 3.1483687901668316, 4.14836879016683},
       {0.9629362024803058, 2.01868377222116}},
  };
  for (const SdpaCase &c : cases) {
    TestGraph g;
    int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 2});
    int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 2});
    // Bias [1,1,1,s_kv] broadcasts over batch, heads and query rows.
    int64_t bias = c.bias ? g.input("bias", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 3}) : 0;
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    o.name = "attn";
    o.attn_scale = c.scale;
    o.generate_stats = 1;
    o.causal_mask = c.causal == 1;
    o.causal_mask_bottom_right = c.causal == 2;
    o.bias = bias;
    int64_t out = 0, stats = 0;
    CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, &stats));
    g.output(out);
    g.output(stats);
    REQUIRE(g.build());
    std::vector<float> vq = kQ, vk = kK, vv = kV, vb = {0.5f, -0.25f, 1.0f}, vo(4), vs(2);
    std::vector<cudnnfe_binding_t> bindings = {
        {q, vq.data()}, {k, vk.data()}, {v, vv.data()}, {out, vo.data()}, {stats, vs.data()}};
    if (bias) bindings.push_back({bias, vb.data()});
    REQUIRE(g.execute(bindings));
    expect_values((std::string(c.what) + ": O").c_str(), vo, c.o, 1e-6);
    expect_values((std::string(c.what) + ": stats").c_str(), vs, c.stats, 1e-6);
  }
}

// Two query heads share one kv head; q and O are stored BSHD.
TEST(cpu_sdpa_gqa_with_bshd_layout) {
  TestGraph g;
  const std::vector<int64_t> q_dims = {1, 2, 2, 2}, q_strides = {8, 2, 4, 1};
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, q_dims, q_strides);
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 2});
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 2});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.attn_scale = 0.5;
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, nullptr));
  g.output(out);
  REQUIRE(g.build());
  const std::vector<int64_t> o_strides = g.strides(out);
  CHECK((o_strides == q_strides));
  std::vector<float> logical_q = kQ;  // head 0: kQ; head 1: -kQ
  for (float f : kQ) logical_q.push_back(-f);
  std::vector<float> vq = scatter(logical_q, q_dims, q_strides), vk = kK, vv = kV, vo(8);
  REQUIRE(g.execute({{q, vq.data()}, {k, vk.data()}, {v, vv.data()}, {out, vo.data()}}));
  expect_values("O", gather(vo, q_dims, o_strides),
                {2.6214634009509603, 3.6214634009509603, 3.099796102529569, 4.099796102529569,
                 3.2722447376128097, 4.27224473761281, 2.937344093263232, 3.937344093263232});
}

// s_q = 3 > s_kv = 2 with bottom-right alignment: row 0 sees no column.
TEST(cpu_sdpa_fully_masked_row_gives_zero_output) {
  TestGraph g;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 2});
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.attn_scale = 0.5;
  o.causal_mask_bottom_right = 1;
  o.generate_stats = 1;
  int64_t out = 0, stats = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, &stats));
  g.output(out);
  g.output(stats);
  REQUIRE(g.build());
  std::vector<float> vq = {0.5f, -1.0f, 1.5f, 0.25f, 1, 1}, vk = {1, 0, 0, 1}, vv = {1, 2, 3, 4};
  std::vector<float> vo(6, 42.0f), vs(3);
  REQUIRE(g.execute(
      {{q, vq.data()}, {k, vk.data()}, {v, vv.data()}, {out, vo.data()}, {stats, vs.data()}}));
  expect_values("O", vo, {0, 0, 1, 2, 2, 3});
  expect_values("stats", vs, {-kInf, 0.75, 1.1931471805599454});
}

// ---- data types ----

// FLOAT in, IDENTITY, `dtype` out: the stored bytes of each value.
template <class Bits>
std::vector<Bits> convert_to(cudnnfe_dtype_t dtype, const std::vector<float> &values) {
  TestGraph g;
  const int64_t n = static_cast<int64_t>(values.size());
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {n});
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_IDENTITY, x);
  g.output(y, dtype);
  std::vector<Bits> out(values.size());
  if (!g.build()) return {};
  std::vector<float> in = values;
  CHECK(g.execute({{x, in.data()}, {y, out.data()}}));
  return out;
}

// `dtype` in (raw bytes), IDENTITY, FLOAT out.
template <class Bits>
std::vector<float> convert_from(cudnnfe_dtype_t dtype, const std::vector<Bits> &bits) {
  TestGraph g;
  const int64_t n = static_cast<int64_t>(bits.size());
  int64_t x = g.input("x", dtype, {n});
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_IDENTITY, x);
  g.output(y, CUDNNFE_DTYPE_FLOAT);
  std::vector<float> out(bits.size());
  if (!g.build()) return {};
  std::vector<Bits> in = bits;
  CHECK(g.execute({{x, in.data()}, {y, out.data()}}));
  return out;
}

template <class Bits>
void expect_bits(const char *what, const std::vector<Bits> &got, const std::vector<Bits> &want) {
  CHECK_MSG(got.size() == want.size(), "%s: %zu values, expected %zu", what, got.size(),
            want.size());
  for (size_t i = 0; i < got.size() && i < want.size(); ++i)
    CHECK_MSG(got[i] == want[i], "%s[%zu] = 0x%x, expected 0x%x", what, i,
              static_cast<unsigned>(got[i]), static_cast<unsigned>(want[i]));
}

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kFloatInf = std::numeric_limits<float>::infinity();

TEST(cpu_dtype_half_round_to_nearest_even) {
  const std::vector<float> in = {1.0f,
                                 -2.0f,
                                 65504.0f,
                                 65519.0f,
                                 65520.0f,
                                 -1e9f,
                                 1.0f + 0x1p-11f,             // halfway: to even (1.0)
                                 1.0f + 3 * 0x1p-11f,         // halfway: to even (1 + 2^-9)
                                 1.0f + 0x1p-11f + 0x1p-20f,  // just above halfway: up
                                 0x1p-24f,                    // smallest subnormal
                                 0x1p-25f,                    // halfway to 0: to even (0)
                                 3 * 0x1p-25f,                // halfway between 1 and 2 units: 2
                                 0x1p-14f,                    // smallest normal
                                 -0.0f,
                                 kFloatInf,
                                 0.333333343f};
  const std::vector<uint16_t> want = {0x3c00, 0xc000, 0x7bff, 0x7bff, 0x7c00, 0xfc00,
                                      0x3c00, 0x3c02, 0x3c01, 0x0001, 0x0000, 0x0002,
                                      0x0400, 0x8000, 0x7c00, 0x3555};
  expect_bits("half", convert_to<uint16_t>(CUDNNFE_DTYPE_HALF, in), want);
  std::vector<uint16_t> nan = convert_to<uint16_t>(CUDNNFE_DTYPE_HALF, {kNan});
  CHECK(nan.size() == 1 && (nan[0] & 0x7c00) == 0x7c00 && (nan[0] & 0x03ff) != 0);
  expect_values("half read back",
                convert_from<uint16_t>(CUDNNFE_DTYPE_HALF, {0x0001, 0x7c00, 0x3555, 0xfbff}),
                {0x1p-24, kInf, 0.333251953125, -65504.0}, 0.0);
  CHECK(std::isnan(convert_from<uint16_t>(CUDNNFE_DTYPE_HALF, {0x7e01}).at(0)));
}

TEST(cpu_dtype_bfloat16_round_to_nearest_even) {
  const std::vector<float> in = {1.0f,
                                 1.0f + 0x1p-8f,
                                 1.0f + 3 * 0x1p-8f,
                                 1.0f + 0x1p-8f + 0x1p-20f,
                                 3.4028235e38f,
                                 -0x1p-133f,
                                 0.1f};
  const std::vector<uint16_t> want = {0x3f80, 0x3f80, 0x3f82, 0x3f81, 0x7f80, 0x8001, 0x3dcd};
  expect_bits("bfloat16", convert_to<uint16_t>(CUDNNFE_DTYPE_BFLOAT16, in), want);
  expect_values("bfloat16 read back",
                convert_from<uint16_t>(CUDNNFE_DTYPE_BFLOAT16, {0x3dcd, 0xff80, 0x0001}),
                {0.10009765625, -kInf, 0x1p-133}, 0.0);
}

TEST(cpu_dtype_fp8_saturate_and_round) {
  // E4M3: max 448, no infinity; out-of-range and inf saturate; NaN 0x7f.
  const std::vector<float> e4m3_in = {1.0f,    448.0f,  464.0f,  500.0f,   kFloatInf, -1000.0f,
                                      0x1p-9f, 1.0625f, 1.1875f, 0x1p-10f, kNan,      -0.0f};
  const std::vector<uint8_t> e4m3_want = {0x38, 0x7e, 0x7e, 0x7e, 0x7e, 0xfe,
                                          0x01, 0x38, 0x3a, 0x00, 0x7f, 0x80};
  expect_bits("e4m3", convert_to<uint8_t>(CUDNNFE_DTYPE_FP8_E4M3, e4m3_in), e4m3_want);
  std::vector<float> e4m3_back =
      convert_from<uint8_t>(CUDNNFE_DTYPE_FP8_E4M3, {0x7e, 0x01, 0xff, 0x08});
  REQUIRE(e4m3_back.size() == 4);
  CHECK(e4m3_back[0] == 448.0f && e4m3_back[1] == 0x1p-9f && std::isnan(e4m3_back[2]) &&
        e4m3_back[3] == 0x1p-6f);
  // E5M2: max 57344; satfinite conversion clamps overflow and infinity.
  const std::vector<float> e5m2_in = {1.0f,   57344.0f, 1e6f,     -kFloatInf,
                                      1.125f, 1.375f,   0x1p-16f, kNan};
  const std::vector<uint8_t> e5m2_want = {0x3c, 0x7b, 0x7b, 0xfb, 0x3c, 0x3e, 0x01, 0x7f};
  expect_bits("e5m2", convert_to<uint8_t>(CUDNNFE_DTYPE_FP8_E5M2, e5m2_in), e5m2_want);
  std::vector<float> e5m2_back = convert_from<uint8_t>(CUDNNFE_DTYPE_FP8_E5M2, {0x7c, 0x7b, 0x7d});
  REQUIRE(e5m2_back.size() == 3);
  CHECK(e5m2_back[0] == kFloatInf && e5m2_back[1] == 57344.0f && std::isnan(e5m2_back[2]));
}

TEST(cpu_dtype_integer_and_boolean_outputs) {
  const std::vector<float> in = {2.5f, 3.5f, -2.5f, 300.0f, -300.0f, kNan, 0.4f, -0.0f};
  expect_values("int8", convert_to<int8_t>(CUDNNFE_DTYPE_INT8, in), {2, 4, -2, 127, -128, 0, 0, 0},
                0.0);
  expect_values("uint8", convert_to<uint8_t>(CUDNNFE_DTYPE_UINT8, in), {2, 4, 0, 255, 0, 0, 0, 0},
                0.0);
  expect_values("int32", convert_to<int32_t>(CUDNNFE_DTYPE_INT32, {2.5f, -7.5f, 3e9f, -3e9f}),
                {2, -8, 2147483647.0, -2147483648.0}, 0.0);
  expect_values("int64", convert_to<int64_t>(CUDNNFE_DTYPE_INT64, {0x1p40f, -0.5f}), {0x1p40, 0},
                0.0);
  expect_values("boolean", convert_to<uint8_t>(CUDNNFE_DTYPE_BOOLEAN, {0.0f, 0.5f, -2.0f, kNan}),
                {0, 1, 1, 1}, 0.0);
  expect_values("boolean read", convert_from<uint8_t>(CUDNNFE_DTYPE_BOOLEAN, {0, 1, 7}), {0, 1, 1},
                0.0);
  expect_values("int8 read", convert_from<int8_t>(CUDNNFE_DTYPE_INT8, {-128, 127}), {-128, 127},
                0.0);
}

// An intermediate declared HALF is rounded to half before the next op
// reads it: x - half(x) exposes the rounding error.
TEST(cpu_virtual_intermediate_rounds_to_its_dtype) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4});
  int64_t t = g.pointwise(CUDNNFE_POINTWISE_IDENTITY, x);
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), t, CUDNNFE_DTYPE_HALF));
  int64_t d = g.pointwise(CUDNNFE_POINTWISE_SUB, x, t);
  g.output(d);
  REQUIRE(g.build());
  std::vector<float> vx = {1.0f + 0x1p-12f, 0.1f, 65519.0f, 3.0f}, vd(4);
  REQUIRE(g.execute({{x, vx.data()}, {d, vd.data()}}));
  expect_values("x - half(x)", vd,
                {0x1p-12, static_cast<double>(0.1f) - 0.0999755859375, 15.0, 0.0}, 0.0);
}

TEST(cpu_graph_intermediate_dtype_applies_to_virtual_tensors) {
  TestGraph g;
  CHECK_OK(cudnnfe_graph_set_intermediate_dtype(g.get(), CUDNNFE_DTYPE_BFLOAT16));
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3});
  int64_t t = g.pointwise(CUDNNFE_POINTWISE_IDENTITY, x);
  int64_t d = g.pointwise(CUDNNFE_POINTWISE_SUB, x, t);
  g.output(d);
  REQUIRE(g.build());
  // bf16 keeps 8 significant bits; both ties go to even.
  std::vector<float> vx = {1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 2.0f}, vd(3);
  REQUIRE(g.execute({{x, vx.data()}, {d, vd.data()}}));
  expect_values("x - bf16(x)", vd, {0x1p-8, -0x1p-8, 0.0}, 0.0);
}

// FP8 intermediate between two scalings: 500 saturates to 448.
TEST(cpu_fp8_intermediate_with_scalar_scales) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3});
  int64_t up = g.scalar("up", CUDNNFE_DTYPE_FLOAT, 2.0);
  int64_t down = g.scalar("down", CUDNNFE_DTYPE_FLOAT, 0.5);
  int64_t t = g.pointwise(CUDNNFE_POINTWISE_MUL, x, up);
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), t, CUDNNFE_DTYPE_FP8_E4M3));
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_MUL, t, down);
  g.output(y, CUDNNFE_DTYPE_FLOAT);  // else it takes t's FP8 type
  REQUIRE(g.build());
  int32_t bound = -1;
  CHECK_OK(cudnnfe_tensor_is_bound(g.get(), up, &bound));
  CHECK(bound == 0);
  // 2 * 1.0625 = 2.125 lies between e4m3 neighbours 2.0 and 2.25: tie to even.
  std::vector<float> vx = {250.0f, 1.0625f, -3.0f}, vy(3);
  REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}}));
  expect_values("y", vy, {224.0, 1.0, -3.0}, 0.0);
}

TEST(cpu_scalar_values_are_rounded_to_their_dtype) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3});
  int64_t s = g.scalar("s", CUDNNFE_DTYPE_HALF, 0.1);
  int64_t m = g.scalar("m", CUDNNFE_DTYPE_FLOAT, 2.5);
  int64_t t = g.pointwise(CUDNNFE_POINTWISE_MUL, x, m);
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_ADD, t, s);
  g.output(y);
  REQUIRE(g.build());
  std::vector<float> vx = {0, 1, -2}, vy(3);
  REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}}));
  const double h = 0.0999755859375;  // 0.1 as half
  expect_values("y", vy,
                {h, static_cast<double>(2.5f + static_cast<float>(h)),
                 static_cast<double>(-5.0f + static_cast<float>(h))},
                0.0);
}

// A scalar takes its consumer's rank (all ones), as either operand.
TEST(cpu_scalar_broadcasts_against_rank4_operands) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 2});
  int64_t s = g.scalar("s", CUDNNFE_DTYPE_FLOAT, -1.5);
  int64_t t = g.scalar("t", CUDNNFE_DTYPE_FLOAT, 10.0);
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_MUL, x, s);
  int64_t z = g.pointwise(CUDNNFE_POINTWISE_SUB, t, y);
  g.output(z);
  REQUIRE(g.build());
  REQUIRE((g.dims(z) == std::vector<int64_t>{1, 2, 1, 2}));
  std::vector<float> vx = {1, 2, 3, 4}, vz(4);
  REQUIRE(g.execute({{x, vx.data()}, {z, vz.data()}}));
  expect_values("10 - x * -1.5", vz, {11.5, 13, 14.5, 16}, 0.0);
}

// HALF attention: inputs exact in half, O rounded to half.
TEST(cpu_sdpa_half_inputs_round_output_to_half) {
  TestGraph g;
  int64_t q = g.input("q", CUDNNFE_DTYPE_HALF, {1, 1, 2, 2});
  int64_t k = g.input("k", CUDNNFE_DTYPE_HALF, {1, 1, 3, 2});
  int64_t v = g.input("v", CUDNNFE_DTYPE_HALF, {1, 1, 3, 2});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.attn_scale = 0.5;
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, nullptr));
  g.output(out);
  REQUIRE(g.build());
  // 0.5, -1, 1.5, 0.25 | 1 0 0 1 1 1 | 1..6 as half bits.
  std::vector<uint16_t> vq = {0x3800, 0xbc00, 0x3e00, 0x3400};
  std::vector<uint16_t> vk = {0x3c00, 0, 0, 0x3c00, 0x3c00, 0x3c00};
  std::vector<uint16_t> vv = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600};
  std::vector<uint16_t> vo(4);
  REQUIRE(g.execute({{q, vq.data()}, {k, vk.data()}, {v, vv.data()}, {out, vo.data()}}));
  // The nearest halves of 2.62146, 3.62146, 3.09980, 4.09980.
  expect_bits("O", vo, std::vector<uint16_t>{0x413e, 0x433e, 0x4233, 0x441a});
}

// ---- fusions ----

TEST(cpu_fusion_conv_bias_relu) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 3, 3});
  int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {2, 1, 2, 2});
  int64_t b = g.input("b", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  int64_t y = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, nullptr, &y));
  int64_t yb = g.pointwise(CUDNNFE_POINTWISE_ADD, y, b);
  int64_t r = g.pointwise(CUDNNFE_POINTWISE_RELU_FWD, yb);
  g.output(r);
  REQUIRE(g.build());
  std::vector<float> vx = {-4, -3, -2, -1, 0, 1, 2, 3, 4};
  std::vector<float> vw = {1, 1, 1, 1, -1, 0, 0, -1}, vb = {-5, 1}, vr(8);
  REQUIRE(g.execute({{x, vx.data()}, {w, vw.data()}, {b, vb.data()}, {r, vr.data()}}));
  // The conv output, and so r, is channels-last; compare in logical order.
  REQUIRE((g.strides(r) == std::vector<int64_t>{8, 1, 4, 2}));
  // conv: k0 [-8 -4 4 8], k1 [4 2 -2 -4]; + bias; relu.
  expect_values("relu(conv + b)", gather(vr, g.dims(r), g.strides(r)), {0, 0, 0, 3, 5, 3, 0, 0});
}

TEST(cpu_fusion_matmul_bias_gelu) {
  TestGraph g;
  int64_t a = g.input("a", CUDNNFE_DTYPE_FLOAT, {1, 2, 2});
  int64_t b = g.input("b", CUDNNFE_DTYPE_FLOAT, {1, 2, 2});
  int64_t bias = g.input("bias", CUDNNFE_DTYPE_FLOAT, {1, 1, 2});
  int64_t c = 0;
  CHECK_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  int64_t cb = g.pointwise(CUDNNFE_POINTWISE_ADD, c, bias);
  int64_t y = g.pointwise(CUDNNFE_POINTWISE_GELU_FWD, cb);
  g.output(y);
  REQUIRE(g.build());
  std::vector<float> va = {1, 2, 3, 4}, vb = {0.5f, -1, 0.25f, 0.5f}, vbias = {-1, 0.5f}, vy(4);
  REQUIRE(g.execute({{a, va.data()}, {b, vb.data()}, {bias, vbias.data()}, {y, vy.data()}}));
  // a @ b = [[1, 0], [2.5, -1]]; + bias = [[0, 0.5], [1.5, -0.5]].
  expect_values("gelu(a @ b + bias)", vy, {0.0, 0.345731405, 1.39978919, -0.154268769}, 2e-6);
}

// ---- softmax and normalizations ----

TEST(cpu_softmax_rows_and_stats) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3, 3});
  cudnnfe_softmax_options_t o;
  cudnnfe_softmax_options_init(&o);
  o.generate_stats = 1;
  int64_t y = 0, stats = 0;
  CHECK_OK(cudnnfe_graph_add_softmax(g.get(), x, &o, &y, &stats));
  g.output(y);
  g.output(stats);
  REQUIRE(g.build());
  std::vector<float> vx = {1, 2, 3, 0, 0, std::log(2.0f), -kFloatInf, -kFloatInf, -kFloatInf};
  std::vector<float> vy(9), vs(3);
  REQUIRE(g.execute({{x, vx.data()}, {y, vy.data()}, {stats, vs.data()}}));
  // Row 0: exp(x - 3) / (1 + e^-1 + e^-2); row 1: [1, 1, 2] / 4; row 2 is
  // all -inf: zeros and stats -inf.
  expect_values(
      "y", vy,
      {0.09003057317038046, 0.24472847105479764, 0.6652409557748218, 0.25, 0.25, 0.5, 0, 0, 0},
      1e-6);
  expect_values("stats", vs, {3.4076059644443806, std::log(4.0), -kInf}, 1e-6);
}

cudnnfe_norm_options_t norm_options(double epsilon, int phase = CUDNNFE_NORM_PHASE_TRAINING) {
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.epsilon = epsilon;
  o.phase = phase;
  return o;
}

// x rows [1 2 3 4] (mean 2.5, variance 1.25) and [0 4 0 4] (mean 2,
// variance 4), epsilon 0, scale [1 2 0.5 -1], bias [0 1 0 -1].
const std::vector<float> kNormX = {1, 2, 3, 4, 0, 4, 0, 4};
const std::vector<float> kNormScale = {1, 2, 0.5f, -1}, kNormBias = {0, 1, 0, -1};

TEST(cpu_layernorm_forward_training_and_zero_centered_gamma) {
  for (int zero_centered : {0, 1}) {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 4});
    int64_t scale = g.input("scale", CUDNNFE_DTYPE_FLOAT, {1, 4});
    int64_t bias = g.input("bias", CUDNNFE_DTYPE_FLOAT, {1, 4});
    cudnnfe_norm_options_t o = norm_options(0.0);
    o.zero_centered_gamma = zero_centered;
    int64_t y = 0, mean = 0, inv = 0;
    CHECK_OK(cudnnfe_graph_add_layernorm(g.get(), x, scale, bias, &o, &y, &mean, &inv));
    g.output(y);
    g.output(mean);
    g.output(inv);
    REQUIRE(g.build());
    std::vector<float> vx = kNormX, vs = kNormScale, vb = kNormBias, vy(8), vm(2), vi(2);
    REQUIRE(g.execute({{x, vx.data()},
                       {scale, vs.data()},
                       {bias, vb.data()},
                       {y, vy.data()},
                       {mean, vm.data()},
                       {inv, vi.data()}}));
    if (zero_centered)  // gamma = 1 + scale = [2 3 1.5 0]
      expect_values(
          "y (1 + scale)", vy,
          {-2.6832815729997477, -0.34164078649987384, 0.6708203932499369, -1.0, -2, 4, -1.5, -1});
    else
      expect_values("y", vy,
                    {-1.3416407864998738, 0.10557280900008414, 0.22360679774997896,
                     -2.341640786499874, -1, 3, -0.5, -2});
    expect_values("mean", vm, {2.5, 2});
    expect_values("inv_variance", vi, {0.8944271909999159, 0.5});
  }
}

TEST(cpu_rmsnorm_forward_inference_and_training) {
  for (int phase : {CUDNNFE_NORM_PHASE_TRAINING, CUDNNFE_NORM_PHASE_INFERENCE}) {
    TestGraph g;
    int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 4});
    int64_t scale = g.input("scale", CUDNNFE_DTYPE_FLOAT, {1, 4});
    cudnnfe_norm_options_t o = norm_options(0.0, phase);
    int64_t y = 0, inv = 0;
    CHECK_OK(cudnnfe_graph_add_rmsnorm(g.get(), x, scale, 0, &o, &y,
                                       phase == CUDNNFE_NORM_PHASE_TRAINING ? &inv : nullptr));
    g.output(y);
    if (inv) g.output(inv);
    REQUIRE(g.build());
    std::vector<float> vx = kNormX, vs = kNormScale, vy(8), vi(2);
    std::vector<cudnnfe_binding_t> bindings = {{x, vx.data()}, {scale, vs.data()}, {y, vy.data()}};
    if (inv) bindings.push_back({inv, vi.data()});
    REQUIRE(g.execute(bindings));
    // inv_rms = 1/sqrt(7.5) and 1/sqrt(8).
    expect_values("y", vy,
                  {0.3651483716701107, 1.4605934866804429, 0.5477225575051661, -1.4605934866804429,
                   0, 2.8284271247461903, 0, -1.4142135623730951});
    if (inv) expect_values("inv_rms", vi, {0.3651483716701107, 0.35355339059327373});
  }
}

// Forward of a norm in DOUBLE: y and the statistics (all DOUBLE).
struct NormForward {
  std::vector<double> y, mean, inv;
};

NormForward norm_forward(bool layer, const std::vector<double> &x, const std::vector<double> &scale,
                         const std::vector<double> &bias, double epsilon) {
  TestGraph g;
  const int64_t n = 2, m = static_cast<int64_t>(scale.size());
  int64_t tx = g.input("x", CUDNNFE_DTYPE_DOUBLE, {n, m});
  int64_t ts = g.input("scale", CUDNNFE_DTYPE_DOUBLE, {1, m});
  int64_t tb = g.input("bias", CUDNNFE_DTYPE_DOUBLE, {1, m});
  cudnnfe_norm_options_t o = norm_options(epsilon);
  o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
  int64_t y = 0, s0 = 0, s1 = 0;
  if (layer)
    CHECK_OK(cudnnfe_graph_add_layernorm(g.get(), tx, ts, tb, &o, &y, &s0, &s1));
  else
    CHECK_OK(cudnnfe_graph_add_rmsnorm(g.get(), tx, ts, tb, &o, &y, &s1));
  g.output(y, CUDNNFE_DTYPE_DOUBLE);
  if (s0) g.output(s0, CUDNNFE_DTYPE_DOUBLE);
  g.output(s1, CUDNNFE_DTYPE_DOUBLE);
  NormForward f{std::vector<double>(x.size()), std::vector<double>(n), std::vector<double>(n)};
  if (!g.build()) return f;
  std::vector<double> vx = x, vs = scale, vb = bias;
  std::vector<cudnnfe_binding_t> bindings = {
      {tx, vx.data()}, {ts, vs.data()}, {tb, vb.data()}, {y, f.y.data()}, {s1, f.inv.data()}};
  if (s0) bindings.push_back({s0, f.mean.data()});
  CHECK(g.execute(bindings));
  return f;
}

// Central difference of sum(dy * y) along each element of `param`.
template <class Forward>
std::vector<double> numeric_gradient(std::vector<double> param, const std::vector<double> &dy,
                                     double h, Forward forward) {
  std::vector<double> grad(param.size());
  for (size_t i = 0; i < param.size(); ++i) {
    const double saved = param[i];
    param[i] = saved + h;
    const std::vector<double> up = forward(param);
    param[i] = saved - h;
    const std::vector<double> down = forward(param);
    param[i] = saved;
    double diff = 0.0;
    for (size_t j = 0; j < dy.size(); ++j) diff += dy[j] * (up[j] - down[j]);
    grad[i] = diff / (2 * h);
  }
  return grad;
}

// Backward in DOUBLE against central differences of the forward.
TEST(cpu_norm_backward_matches_numeric_gradients) {
  const std::vector<double> x = {0.3, -1.2, 2.0, 0.7, 1.5, -0.4, -0.9, 0.2};
  const std::vector<double> scale = {1.1, -0.6, 0.8, 1.7}, bias = {0.1, 0.2, -0.3, 0.4};
  const std::vector<double> dy = {0.5, -1.0, 0.25, 2.0, -0.75, 1.25, 0.3, -0.2};
  const double eps = 0.01, h = 1e-5;
  for (bool layer : {true, false}) {
    const NormForward f = norm_forward(layer, x, scale, bias, eps);
    TestGraph g;
    int64_t tdy = g.input("dy", CUDNNFE_DTYPE_DOUBLE, {2, 4});
    int64_t tx = g.input("x", CUDNNFE_DTYPE_DOUBLE, {2, 4});
    int64_t ts = g.input("scale", CUDNNFE_DTYPE_DOUBLE, {1, 4});
    int64_t tmean = layer ? g.input("mean", CUDNNFE_DTYPE_DOUBLE, {2, 1}) : 0;
    int64_t tinv = g.input("inv", CUDNNFE_DTYPE_DOUBLE, {2, 1});
    cudnnfe_norm_options_t o = norm_options(eps);
    o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
    int64_t dx = 0, dscale = 0, dbias = 0;
    if (layer)
      CHECK_OK(cudnnfe_graph_add_layernorm_backward(g.get(), tdy, tx, ts, tmean, tinv, &o, &dx,
                                                    &dscale, &dbias));
    else
      CHECK_OK(
          cudnnfe_graph_add_rmsnorm_backward(g.get(), tdy, tx, ts, tinv, &o, &dx, &dscale, &dbias));
    for (int64_t out : {dx, dscale, dbias}) g.output(out, CUDNNFE_DTYPE_DOUBLE);
    REQUIRE(g.build());
    std::vector<double> vdy = dy, vx = x, vs = scale, vm = f.mean, vi = f.inv;
    std::vector<double> vdx(8), vds(4), vdb(4);
    std::vector<cudnnfe_binding_t> bindings = {
        {tdy, vdy.data()}, {tx, vx.data()},      {ts, vs.data()},    {tinv, vi.data()},
        {dx, vdx.data()},  {dscale, vds.data()}, {dbias, vdb.data()}};
    if (tmean) bindings.push_back({tmean, vm.data()});
    REQUIRE(g.execute(bindings));
    const char *name = layer ? "layernorm" : "rmsnorm";
    auto by_x = [&](const std::vector<double> &p) {
      return norm_forward(layer, p, scale, bias, eps).y;
    };
    auto by_scale = [&](const std::vector<double> &p) {
      return norm_forward(layer, x, p, bias, eps).y;
    };
    auto by_bias = [&](const std::vector<double> &p) {
      return norm_forward(layer, x, scale, p, eps).y;
    };
    expect_values((std::string(name) + " dx").c_str(), vdx, numeric_gradient(x, dy, h, by_x), 1e-7);
    expect_values((std::string(name) + " dscale").c_str(), vds,
                  numeric_gradient(scale, dy, h, by_scale), 1e-7);
    expect_values((std::string(name) + " dbias").c_str(), vdb,
                  numeric_gradient(bias, dy, h, by_bias), 1e-7);
  }
}

// ---- attention backward ----

struct AttentionInputs {
  std::vector<double> q, k, v;
};

struct AttentionConfig {
  int causal;  // 0 none, 1 top-left, 2 bottom-right
  bool bias;
};

// q [1,2,3,2], k [1,1,4,2], v [1,1,4,3]: two q heads share one kv head.
const std::vector<int64_t> kBwdQ = {1, 2, 3, 2}, kBwdK = {1, 1, 4, 2}, kBwdV = {1, 1, 4, 3};
const std::vector<int64_t> kBwdO = {1, 2, 3, 3}, kBwdStats = {1, 2, 3, 1};
const std::vector<int64_t> kBwdBias = {1, 1, 3, 4};

void set_attention_options(const AttentionConfig &c, int64_t bias, double *scale, int32_t *tl,
                           int32_t *br, int64_t *bias_out) {
  *scale = 0.6;
  *tl = c.causal == 1;
  *br = c.causal == 2;
  *bias_out = bias;
}

// Forward attention in FLOAT: O (and stats when `stats` is given).
std::vector<double> attention_forward(const AttentionConfig &c, const AttentionInputs &in,
                                      std::vector<float> *o_out = nullptr,
                                      std::vector<float> *stats_out = nullptr) {
  TestGraph g;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, kBwdQ);
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, kBwdK);
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, kBwdV);
  int64_t bias = c.bias ? g.input("bias", CUDNNFE_DTYPE_FLOAT, kBwdBias) : 0;
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  set_attention_options(c, bias, &o.attn_scale, &o.causal_mask, &o.causal_mask_bottom_right,
                        &o.bias);
  o.generate_stats = 1;
  int64_t out = 0, stats = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, &stats));
  g.output(out);
  g.output(stats);
  std::vector<float> vo(product(kBwdO)), vs(product(kBwdStats));
  if (!g.build()) return {};
  std::vector<float> vq(in.q.begin(), in.q.end()), vk(in.k.begin(), in.k.end());
  std::vector<float> vv(in.v.begin(), in.v.end()),
      vb = {0.5f, -0.25f, 1.0f, 0.0f, -1.0f, 0.75f, 0.0f, 0.25f, 0.0f, 0.0f, -0.5f, 1.5f};
  std::vector<cudnnfe_binding_t> bindings = {
      {q, vq.data()}, {k, vk.data()}, {v, vv.data()}, {out, vo.data()}, {stats, vs.data()}};
  if (bias) bindings.push_back({bias, vb.data()});
  CHECK(g.execute(bindings));
  if (o_out) *o_out = vo;
  if (stats_out) *stats_out = vs;
  return std::vector<double>(vo.begin(), vo.end());
}

// dQ, dK, dV (GQA, each mask, with and without bias) against central
// differences of sum(dO * O) through the forward.
TEST(cpu_sdpa_backward_matches_numeric_gradients) {
  AttentionInputs in;
  for (float f : pattern(product(kBwdQ), 11)) in.q.push_back(f);
  for (float f : pattern(product(kBwdK), 12)) in.k.push_back(f);
  for (float f : pattern(product(kBwdV), 13)) in.v.push_back(f);
  std::vector<double> d_o;
  for (float f : pattern(product(kBwdO), 14)) d_o.push_back(f);
  const AttentionConfig configs[] = {{0, false}, {1, false}, {2, true}, {0, true}};
  for (const AttentionConfig &c : configs) {
    std::vector<float> vo, vs;
    attention_forward(c, in, &vo, &vs);
    REQUIRE(!vo.empty());
    TestGraph g;
    int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, kBwdQ);
    int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, kBwdK);
    int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, kBwdV);
    int64_t o = g.input("o", CUDNNFE_DTYPE_FLOAT, kBwdO);
    int64_t dO = g.input("dO", CUDNNFE_DTYPE_FLOAT, kBwdO);
    int64_t stats = g.input("stats", CUDNNFE_DTYPE_FLOAT, kBwdStats);
    int64_t bias = c.bias ? g.input("bias", CUDNNFE_DTYPE_FLOAT, kBwdBias) : 0;
    cudnnfe_sdpa_backward_options_t opts;
    cudnnfe_sdpa_backward_options_init(&opts);
    set_attention_options(c, bias, &opts.attn_scale, &opts.causal_mask,
                          &opts.causal_mask_bottom_right, &opts.bias);
    int64_t dq = 0, dk = 0, dv = 0;
    CHECK_OK(cudnnfe_graph_add_sdpa_backward(g.get(), q, k, v, o, dO, stats, &opts, &dq, &dk, &dv));
    g.output(dq);
    g.output(dk);
    g.output(dv);
    REQUIRE(g.build());
    std::vector<float> vq(in.q.begin(), in.q.end()), vk(in.k.begin(), in.k.end());
    std::vector<float> vv(in.v.begin(), in.v.end()), vdo(d_o.begin(), d_o.end());
    std::vector<float> vb = {0.5f, -0.25f, 1.0f, 0.0f, -1.0f, 0.75f,
                             0.0f, 0.25f,  0.0f, 0.0f, -0.5f, 1.5f};
    std::vector<float> vdq(vq.size()), vdk(vk.size()), vdv(vv.size());
    std::vector<cudnnfe_binding_t> bindings = {
        {q, vq.data()},     {k, vk.data()},   {v, vv.data()},   {o, vo.data()},  {dO, vdo.data()},
        {stats, vs.data()}, {dq, vdq.data()}, {dk, vdk.data()}, {dv, vdv.data()}};
    if (bias) bindings.push_back({bias, vb.data()});
    REQUIRE(g.execute(bindings));
    const double h = 4e-3;
    auto by_q = [&](const std::vector<double> &p) { return attention_forward(c, {p, in.k, in.v}); };
    auto by_k = [&](const std::vector<double> &p) { return attention_forward(c, {in.q, p, in.v}); };
    auto by_v = [&](const std::vector<double> &p) { return attention_forward(c, {in.q, in.k, p}); };
    const std::string what = "mask " + std::to_string(c.causal) + (c.bias ? " bias" : "");
    expect_values((what + ": dQ").c_str(), vdq, numeric_gradient(in.q, d_o, h, by_q), 2e-4);
    expect_values((what + ": dK").c_str(), vdk, numeric_gradient(in.k, d_o, h, by_k), 2e-4);
    expect_values((what + ": dV").c_str(), vdv, numeric_gradient(in.v, d_o, h, by_v), 2e-4);
  }
}

// ---- concurrency and errors ----

TEST(cpu_plan_executes_concurrently) {
  TestGraph g;
  int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 3, 6, 6});
  int64_t w = g.input("w", CUDNNFE_DTYPE_FLOAT, {4, 3, 3, 3});
  cudnnfe_conv_options_t o = conv_options();
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
  int64_t y = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(g.get(), x, w, &o, &y));
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), y, CUDNNFE_DTYPE_HALF));  // virtual, rounded
  int64_t r = g.pointwise(CUDNNFE_POINTWISE_TANH_FWD, y);
  g.output(r, CUDNNFE_DTYPE_FLOAT);
  REQUIRE(g.build());
  const std::vector<float> vx = pattern(2 * 3 * 36, 7), vw = pattern(4 * 3 * 9, 8);
  std::vector<float> expected(2 * 4 * 36);
  {
    std::vector<float> ix = vx, iw = vw;
    REQUIRE(g.execute({{x, ix.data()}, {w, iw.data()}, {r, expected.data()}}));
  }
  constexpr int kThreads = 8;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cudnnfe_handle_t *h = nullptr;
      if (cudnnfe_handle_create(&h, -1) != CUDNNFE_STATUS_OK) {
        mismatches[t] = -1;
        return;
      }
      std::vector<float> ix = vx, iw = vw, out(expected.size());
      for (int iter = 0; iter < 20; ++iter) {
        cudnnfe_binding_t bindings[] = {{x, ix.data()}, {w, iw.data()}, {r, out.data()}};
        if (cudnnfe_graph_execute(g.get(), h, bindings, 3, nullptr, 0, nullptr) !=
                CUDNNFE_STATUS_OK ||
            std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) != 0)
          ++mismatches[t];
      }
      cudnnfe_handle_destroy(h);
    });
  }
  for (std::thread &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t)
    CHECK_MSG(mismatches[t] == 0, "thread %d: %d bad runs", t, mismatches[t]);
}

TEST(cpu_unsupported_compute_type_names_the_node) {
  TestGraph g;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "int_attention";
  o.compute_dtype = CUDNNFE_DTYPE_INT32;
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.get(), q, k, v, &o, &out, nullptr));
  g.output(out);
  cudnnfe_build_options_t b;
  cudnnfe_build_options_init(&b);
  b.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_FAILS(cudnnfe_graph_build(g.get(), nullptr, &b), CUDNNFE_STATUS_NOT_SUPPORTED,
              "sdpa \"int_attention\"", "INT32");
  int32_t built = 1;
  CHECK_OK(cudnnfe_graph_is_built(g.get(), &built));
  CHECK(built == 0);
}

}  // namespace

// HALF and BFLOAT16 loads widen by moving bits (cpu/dtype_convert.cpp): every
// one of the 65536 patterns of each reads as the tests' own conversion says
// (NaN as NaN), through an IDENTITY to DOUBLE.
TEST(half_and_bfloat16_loads_are_exact_for_every_pattern) {
  for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16}) {
    cudnnfe_graph_t *g = nullptr;
    REQUIRE_OK(cudnnfe_graph_create(&g));
    const int64_t n[1] = {65536};
    int64_t x = 0, y = 0;
    REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", dt, 1, n, nullptr, &x));
    cudnnfe_pointwise_options_t o;
    cudnnfe_pointwise_options_init(&o);
    o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
    REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_IDENTITY, x, 0, 0, &o, &y));
    REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
    REQUIRE_OK(cudnnfe_tensor_set_dtype(g, y, CUDNNFE_DTYPE_DOUBLE));
    cudnnfe_build_options_t b;
    cudnnfe_build_options_init(&b);
    b.target = CUDNNFE_TARGET_CPU_REFERENCE;
    REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &b));
    std::vector<uint16_t> in(65536);
    std::vector<double> out(65536);
    for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<uint16_t>(i);
    cudnnfe_handle_t *h = nullptr;
    REQUIRE_OK(cudnnfe_handle_create(&h, -1));
    cudnnfe_binding_t bind[2] = {{x, in.data()}, {y, out.data()}};
    CHECK_OK(cudnnfe_graph_execute(g, h, bind, 2, nullptr, 0, nullptr));
    int wrong = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const float want =
          dt == CUDNNFE_DTYPE_HALF ? gpu::half_to_float(in[i]) : gpu::bf16_to_float(in[i]);
      const bool same = std::isnan(want)
                            ? std::isnan(out[i])
                            : out[i] == want && std::signbit(out[i]) == std::signbit(want);
      if (!same && wrong++ < 3)
        std::printf("  %s pattern 0x%04zx read as %.9g, expected %.9g\n", cudnnfe_dtype_name(dt), i,
                    out[i], static_cast<double>(want));
    }
    CHECK(wrong == 0);
    cudnnfe_handle_destroy(h);
    cudnnfe_graph_destroy(g);
  }
}

// HALF and BFLOAT16 stores of normal results round straight from the
// double's bits (cpu/dtype_convert.cpp): they must equal one rounding to
// nearest even, computed here with frexp/ldexp, for values across each
// format's range, exact ties and their neighbours included, through an
// IDENTITY from DOUBLE.
namespace {

uint16_t round_to_16(double v, int man_bits, int bias, bool *special) {
  *special = !std::isfinite(v) || v == 0.0;
  if (*special) return 0;
  int e = 0;
  std::frexp(std::fabs(v), &e);
  const int exponent = e - 1;
  if (exponent < 1 - bias) {  // a subnormal result: not this test's subject
    *special = true;
    return 0;
  }
  const double units = std::nearbyint(std::ldexp(std::fabs(v), man_bits - exponent));
  const double rounded = std::ldexp(units, exponent - man_bits);
  std::frexp(rounded, &e);
  const int field = e - 1 + bias;
  if (field >= 2 * bias + 1) {  // overflow to infinity
    *special = true;
    return 0;
  }
  const uint32_t man =
      static_cast<uint32_t>(std::ldexp(rounded, man_bits - (e - 1))) & ((1u << man_bits) - 1);
  return static_cast<uint16_t>((std::signbit(v) ? 0x8000u : 0u) |
                               (static_cast<uint32_t>(field) << man_bits) | man);
}

}  // namespace

TEST(half_and_bfloat16_stores_round_once_to_nearest_even) {
  std::mt19937_64 rng(11);
  for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16}) {
    const int man_bits = dt == CUDNNFE_DTYPE_HALF ? 10 : 7,
              bias = dt == CUDNNFE_DTYPE_HALF ? 15 : 127;
    std::vector<double> in;
    std::uniform_int_distribution<int> exp(-bias - 3, bias + 2);
    for (int i = 0; i < 60000; ++i) {
      const double m = 1.0 + std::ldexp(static_cast<double>(rng() >> 12), -52);
      double v = std::ldexp(m, exp(rng));
      if (i % 3 == 1) {  // an exact tie between two representable values, or a neighbour
        v = std::ldexp(std::floor(std::ldexp(m, man_bits)) + 0.5, exp(rng) - man_bits);
        if (i % 2) v = std::nextafter(v, i % 4 == 1 ? 0.0 : 1e300);
      }
      in.push_back(i % 5 == 0 ? -v : v);
    }
    cudnnfe_graph_t *g = nullptr;
    REQUIRE_OK(cudnnfe_graph_create(&g));
    const int64_t n[1] = {static_cast<int64_t>(in.size())};
    int64_t x = 0, y = 0;
    REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_DOUBLE, 1, n, nullptr, &x));
    cudnnfe_pointwise_options_t o;
    cudnnfe_pointwise_options_init(&o);
    o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
    REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_IDENTITY, x, 0, 0, &o, &y));
    REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
    REQUIRE_OK(cudnnfe_tensor_set_dtype(g, y, dt));
    cudnnfe_build_options_t b;
    cudnnfe_build_options_init(&b);
    b.target = CUDNNFE_TARGET_CPU_REFERENCE;
    REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &b));
    std::vector<uint16_t> out(in.size());
    cudnnfe_handle_t *h = nullptr;
    REQUIRE_OK(cudnnfe_handle_create(&h, -1));
    cudnnfe_binding_t bind[2] = {{x, in.data()}, {y, out.data()}};
    CHECK_OK(cudnnfe_graph_execute(g, h, bind, 2, nullptr, 0, nullptr));
    int wrong = 0, checked = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      bool special = false;
      const uint16_t want = round_to_16(in[i], man_bits, bias, &special);
      if (special) continue;
      ++checked;
      if (out[i] != want && wrong++ < 3)
        std::printf("  %s: %.17g stored as 0x%04x, expected 0x%04x\n", cudnnfe_dtype_name(dt),
                    in[i], out[i], want);
    }
    CHECK(wrong == 0);
    CHECK(checked > 30000);
    cudnnfe_handle_destroy(h);
    cudnnfe_graph_destroy(g);
  }
}
