// The split batch-norm ops (genstats) on the CPU reference against plain
// loops written here, in NCHW and NHWC, alone and after a convolution.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;

int64_t product(const Dims &d) {
  int64_t p = 1;
  for (int64_t v : d) p *= v;
  return p;
}

// NHWC strides of [N, C, spatial...].
Dims channels_last(const Dims &d) {
  Dims s(d.size());
  int64_t step = 1;
  s[1] = step;
  step *= d[1];
  for (size_t i = d.size(); i-- > 2;) {
    s[i] = step;
    step *= d[i];
  }
  s[0] = step;
  return s;
}

Dims packed(const Dims &d) {
  Dims s(d.size());
  int64_t step = 1;
  for (size_t i = d.size(); i-- > 0;) {
    s[i] = step;
    step *= d[i];
  }
  return s;
}

// Logical index (row-major over dims) -> buffer offset.
int64_t offset_of(int64_t flat, const Dims &dims, const Dims &strides) {
  int64_t offset = 0;
  for (size_t i = dims.size(); i-- > 0;) {
    offset += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return offset;
}

struct Built {
  cudnnfe_graph_t *g = nullptr;
  cudnnfe_handle_t *h = nullptr;
  Built() {
    cudnnfe_graph_create(&g);
    cudnnfe_handle_create(&h, -1);
  }
  ~Built() {
    cudnnfe_handle_destroy(h);
    cudnnfe_graph_destroy(g);
  }
  int64_t input(const char *name, const Dims &dims, const Dims &strides) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g, name, CUDNNFE_DTYPE_FLOAT,
                                      static_cast<int32_t>(dims.size()), dims.data(),
                                      strides.data(), &uid));
    return uid;
  }
  bool build() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_status_t s = cudnnfe_graph_build(g, nullptr, &o);
    if (s != CUDNNFE_STATUS_OK) std::printf("  build: %s\n", cudnnfe_graph_last_error(g));
    return s == CUDNNFE_STATUS_OK;
  }
  Dims dims(int64_t uid) {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t n = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g, uid, d, s, CUDNNFE_MAX_DIMS, &n));
    return Dims(d, d + n);
  }
};

void expect_close(const std::string &what, const std::vector<float> &got,
                  const std::vector<double> &want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK_MSG(std::fabs(got[i] - want[i]) <= 1e-5 * (1.0 + std::fabs(want[i])),
              "%s[%zu] = %.7g, expected %.7g", what.c_str(), i, got[i], want[i]);
}

void run_genstats_case(const Dims &xd, bool nhwc) {
  const Dims xs = nhwc ? channels_last(xd) : packed(xd);
  const int64_t c = xd[1], count = product(xd);
  std::vector<double> logical(static_cast<size_t>(count));
  std::vector<float> buffer(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    logical[static_cast<size_t>(i)] = 0.25 * static_cast<double>((i * 37) % 23) - 2.0;
    buffer[static_cast<size_t>(offset_of(i, xd, xs))] =
        static_cast<float>(logical[static_cast<size_t>(i)]);
  }
  // Independent loops: channel of logical index i is (i / inner) % C.
  int64_t inner = 1;
  for (size_t d = 2; d < xd.size(); ++d) inner *= xd[d];
  std::vector<double> sum(static_cast<size_t>(c), 0.0), sq(static_cast<size_t>(c), 0.0);
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t e = 0; e < inner; ++e) {
        const double v = logical[static_cast<size_t>((n * c + ci) * inner + e)];
        sum[static_cast<size_t>(ci)] += v;
        sq[static_cast<size_t>(ci)] += v * v;
      }
  Built b;
  int64_t x = b.input("x", xd, xs), s = 0, q = 0;
  CHECK_OK(cudnnfe_graph_add_genstats(b.g, x, nullptr, &s, &q));
  Dims stats(xd.size(), 1);
  stats[1] = c;
  CHECK((b.dims(s) == stats));
  CHECK((b.dims(q) == stats));
  cudnnfe_dtype_t dt = CUDNNFE_DTYPE_NOT_SET;
  CHECK_OK(cudnnfe_tensor_get_dtype(b.g, s, &dt));
  CHECK(dt == CUDNNFE_DTYPE_FLOAT);
  CHECK_OK(cudnnfe_tensor_set_output(b.g, s, 1));
  CHECK_OK(cudnnfe_tensor_set_output(b.g, q, 1));
  REQUIRE(b.build());
  std::vector<float> vs(static_cast<size_t>(c)), vq(static_cast<size_t>(c));
  const cudnnfe_binding_t bind[] = {{x, buffer.data()}, {s, vs.data()}, {q, vq.data()}};
  REQUIRE_OK(cudnnfe_graph_execute(b.g, b.h, bind, 3, nullptr, 0, nullptr));
  expect_close("sum", vs, sum);
  expect_close("sq_sum", vq, sq);
}

TEST(cpu_genstats_nchw_and_nhwc) {
  for (bool nhwc : {false, true}) {
    run_genstats_case({2, 3, 4, 5}, nhwc);
    run_genstats_case({3, 8, 2, 3, 2}, nhwc);
    run_genstats_case({4, 5, 7}, nhwc);
  }
}

// The pattern of cudnn-frontend's test_conv_genstats: y = conv(x, w) is an
// output and genstats reads it. x = 1 everywhere, w = 1: every y is C*R*S
// inside, so the sums are known in closed form.
TEST(cpu_genstats_after_conv) {
  Built b;
  const Dims xd = {2, 4, 5, 5}, wd = {3, 4, 3, 3};
  int64_t x = b.input("x", xd, channels_last(xd)), w = b.input("w", wd, channels_last(wd));
  int64_t y = 0, s = 0, q = 0;
  CHECK_OK(cudnnfe_graph_add_conv_fprop(b.g, x, w, nullptr, &y));
  cudnnfe_genstats_options_t o;
  cudnnfe_genstats_options_init(&o);
  o.name = "genstats";
  CHECK_OK(cudnnfe_graph_add_genstats(b.g, y, &o, &s, &q));
  for (int64_t t : {y, s, q}) CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  REQUIRE(b.build());
  std::vector<float> vx(static_cast<size_t>(product(xd)), 1.0f);
  std::vector<float> vw(static_cast<size_t>(product(wd)), 1.0f);
  std::vector<float> vy(2 * 3 * 3 * 3), vs(3), vq(3);
  const cudnnfe_binding_t bind[] = {
      {x, vx.data()}, {w, vw.data()}, {y, vy.data()}, {s, vs.data()}, {q, vq.data()}};
  REQUIRE_OK(cudnnfe_graph_execute(b.g, b.h, bind, 5, nullptr, 0, nullptr));
  // 2 images x 9 outputs per channel, each 36.
  expect_close("sum", vs, {648, 648, 648});
  expect_close("sq_sum", vq, {23328, 23328, 23328});
}

}  // namespace
