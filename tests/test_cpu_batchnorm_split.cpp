// The split batch-norm ops on the CPU reference: genstats against plain
// loops (NCHW and NHWC, alone and after a convolution), bn_finalize against
// hand values and, chained after genstats, against the batchnorm op, and
// dbn_weight against the batchnorm_backward op.
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

int64_t scalar(Built &b, const char *name, cudnnfe_dtype_t dtype, double value) {
  int64_t uid = 0;
  CHECK_OK(cudnnfe_graph_add_scalar(b.g, name, dtype, value, &uid));
  return uid;
}

// Outputs of bn_finalize in port order.
struct Finalized {
  int64_t t[6] = {};
};

Finalized add_bn_finalize(Built &b, int64_t sum, int64_t sq, int64_t scale, int64_t bias,
                          int64_t eps, int64_t count, int64_t prev_mean, int64_t prev_var,
                          int64_t momentum) {
  Finalized f;
  CHECK_OK(cudnnfe_graph_add_bn_finalize(b.g, sum, sq, scale, bias, eps, count, prev_mean, prev_var,
                                         momentum, nullptr, &f.t[0], &f.t[1], &f.t[2], &f.t[3],
                                         &f.t[4], &f.t[5]));
  return f;
}

// sum [6, -4], sq_sum [20, 12], M = 4, epsilon 0.25: mean [1.5, -1], biased
// var [2.75, 2], inv_variance [1/sqrt(3), 2/3]; scale [2, 3], bias [1, -1];
// running statistics from [0, 1] and [1, 1] at momentum 0.5, the variance
// unbiased (x 4/3).
TEST(cpu_bn_finalize_hand_values) {
  Built b;
  const Dims cd = {1, 2, 1, 1}, cs = packed(cd);
  int64_t sum = b.input("sum", cd, cs), sq = b.input("sq_sum", cd, cs);
  int64_t scale = b.input("scale", cd, cs), bias = b.input("bias", cd, cs);
  int64_t pm = b.input("prev_mean", cd, cs), pv = b.input("prev_var", cd, cs);
  const Finalized f =
      add_bn_finalize(b, sum, sq, scale, bias, scalar(b, "epsilon", CUDNNFE_DTYPE_FLOAT, 0.25),
                      scalar(b, "accum_count", CUDNNFE_DTYPE_INT64, 4), pm, pv,
                      scalar(b, "momentum", CUDNNFE_DTYPE_FLOAT, 0.5));
  for (int64_t t : f.t) {
    CHECK((b.dims(t) == cd));
    CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  }
  REQUIRE(b.build());
  std::vector<float> vsum = {6, -4}, vsq = {20, 12}, vscale = {2, 3}, vbias = {1, -1};
  std::vector<float> vpm = {0, 1}, vpv = {1, 1};
  std::vector<std::vector<float>> out(6, std::vector<float>(2));
  const cudnnfe_binding_t bind[] = {
      {sum, vsum.data()},      {sq, vsq.data()},        {scale, vscale.data()},
      {bias, vbias.data()},    {pm, vpm.data()},        {pv, vpv.data()},
      {f.t[0], out[0].data()}, {f.t[1], out[1].data()}, {f.t[2], out[2].data()},
      {f.t[3], out[3].data()}, {f.t[4], out[4].data()}, {f.t[5], out[5].data()}};
  REQUIRE_OK(cudnnfe_graph_execute(b.g, b.h, bind, 12, nullptr, 0, nullptr));
  const double inv0 = 1 / std::sqrt(3.0);
  expect_close("eq_scale", out[0], {2 * inv0, 2});
  expect_close("eq_bias", out[1], {1 - 1.5 * 2 * inv0, 1});
  expect_close("mean", out[2], {1.5, -1});
  expect_close("inv_variance", out[3], {inv0, 2.0 / 3});
  expect_close("next_running_mean", out[4], {0.75, 0});
  expect_close("next_running_var", out[5], {0.5 + 0.5 * 2.75 * 4 / 3, 0.5 + 0.5 * 2 * 4 / 3});
}

// Without running statistics there are no next_* outputs.
TEST(cpu_bn_finalize_without_running_statistics) {
  Built b;
  const Dims cd = {1, 3, 1, 1}, cs = packed(cd);
  int64_t sum = b.input("sum", cd, cs), sq = b.input("sq_sum", cd, cs);
  int64_t scale = b.input("scale", cd, cs), bias = b.input("bias", cd, cs);
  int64_t next_mean = -1, next_var = -1, out[4];
  CHECK_OK(cudnnfe_graph_add_bn_finalize(
      b.g, sum, sq, scale, bias, scalar(b, "epsilon", CUDNNFE_DTYPE_FLOAT, 1e-5),
      scalar(b, "accum_count", CUDNNFE_DTYPE_INT64, 10), 0, 0, 0, nullptr, &out[0], &out[1],
      &out[2], &out[3], &next_mean, &next_var));
  CHECK(next_mean == 0 && next_var == 0);
  size_t nodes = 0;
  CHECK_OK(cudnnfe_graph_get_node_count(b.g, &nodes));
  CHECK(nodes == 1);
}

// genstats -> bn_finalize gives the batchnorm op's statistics, and
// x * eq_scale + eq_bias its y: the split graph and the fused op agree.
TEST(cpu_genstats_bn_finalize_equals_batchnorm) {
  Built b;
  const Dims xd = {4, 3, 5, 6}, cd = {1, 3, 1, 1};
  const Dims xs = channels_last(xd), cs = channels_last(cd);
  int64_t x = b.input("x", xd, xs), scale = b.input("scale", cd, cs);
  int64_t bias = b.input("bias", cd, cs), pm = b.input("prev_mean", cd, cs);
  int64_t pv = b.input("prev_var", cd, cs), sum = 0, sq = 0;
  CHECK_OK(cudnnfe_graph_add_genstats(b.g, x, nullptr, &sum, &sq));
  const Finalized f =
      add_bn_finalize(b, sum, sq, scale, bias, scalar(b, "epsilon", CUDNNFE_DTYPE_FLOAT, 1e-3),
                      scalar(b, "accum_count", CUDNNFE_DTYPE_INT64, 4 * 5 * 6), pm, pv,
                      scalar(b, "momentum", CUDNNFE_DTYPE_FLOAT, 0.2));
  cudnnfe_norm_options_t no;
  cudnnfe_norm_options_init(&no);
  no.epsilon = 1e-3;
  no.momentum = 0.2;
  int64_t bn[5];
  CHECK_OK(cudnnfe_graph_add_batchnorm(b.g, x, scale, bias, pm, pv, &no, &bn[0], &bn[1], &bn[2],
                                       &bn[3], &bn[4]));
  for (int64_t t : f.t) CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  for (int64_t t : bn) CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  REQUIRE(b.build());
  const size_t n = static_cast<size_t>(product(xd));
  std::vector<float> vx(n), vy(n), vscale = {0.5f, -1.5f, 2}, vbias = {0.25f, 1, -2};
  for (size_t i = 0; i < n; ++i) vx[i] = static_cast<float>(std::sin(0.37 * i) * 3 + (i % 3));
  std::vector<float> vpm = {0.1f, -0.2f, 0.3f}, vpv = {1, 2, 0.5f};
  std::vector<std::vector<float>> fo(6, std::vector<float>(3)), bo(4, std::vector<float>(3));
  std::vector<cudnnfe_binding_t> bind = {{x, vx.data()},       {scale, vscale.data()},
                                         {bias, vbias.data()}, {pm, vpm.data()},
                                         {pv, vpv.data()},     {bn[0], vy.data()}};
  for (int i = 0; i < 6; ++i) bind.push_back({f.t[i], fo[i].data()});
  for (int i = 0; i < 4; ++i) bind.push_back({bn[1 + i], bo[i].data()});
  REQUIRE_OK(cudnnfe_graph_execute(b.g, b.h, bind.data(), bind.size(), nullptr, 0, nullptr));
  const char *names[] = {"mean", "inv_variance", "next_running_mean", "next_running_var"};
  for (int i = 0; i < 4; ++i)
    expect_close(names[i], fo[2 + i], std::vector<double>(bo[i].begin(), bo[i].end()));
  // y = x * eq_scale[c] + eq_bias[c]; the buffers are NHWC, so c = i % 3.
  std::vector<double> y_split(n);
  for (size_t i = 0; i < n; ++i) y_split[i] = vx[i] * fo[0][i % 3] + fo[1][i % 3];
  expect_close("y", vy, y_split);
}

// dbn_weight's dscale and dbias are batchnorm_backward's, and its
// coefficients rebuild batchnorm_backward's dx: dx = eq_scale_dy * dy +
// eq_scale_x * x + eq_bias. The statistics are arbitrary (both ops use
// the ones given).
TEST(cpu_dbn_weight_equals_batchnorm_backward) {
  Built b;
  const Dims xd = {3, 4, 5, 2}, cd = {1, 4, 1, 1};
  const Dims xs = packed(xd), cs = packed(cd);
  int64_t dy = b.input("dy", xd, xs), x = b.input("x", xd, xs);
  int64_t mean = b.input("mean", cd, cs), inv = b.input("inv_variance", cd, cs);
  int64_t scale = b.input("scale", cd, cs), w[5], bw[3];
  CHECK_OK(cudnnfe_graph_add_dbn_weight(b.g, dy, x, mean, inv, scale, nullptr, &w[0], &w[1], &w[2],
                                        &w[3], &w[4]));
  CHECK_OK(cudnnfe_graph_add_batchnorm_backward(b.g, dy, x, scale, mean, inv, nullptr, &bw[0],
                                                &bw[1], &bw[2]));
  for (int64_t t : w) {
    CHECK((b.dims(t) == cd));
    CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  }
  for (int64_t t : bw) CHECK_OK(cudnnfe_tensor_set_output(b.g, t, 1));
  REQUIRE(b.build());
  const size_t n = static_cast<size_t>(product(xd));
  std::vector<float> vdy(n), vx(n), vdx(n), vmean = {0.5f, -1, 0.25f, 2};
  std::vector<float> vinv = {1.5f, 0.5f, 2, 1}, vscale = {1, -2, 0.5f, 3};
  for (size_t i = 0; i < n; ++i) {
    vdy[i] = static_cast<float>(std::cos(0.7 * i));
    vx[i] = static_cast<float>(std::sin(0.3 * i) * 2 + 0.5);
  }
  std::vector<std::vector<float>> wo(5, std::vector<float>(4)), bo(2, std::vector<float>(4));
  std::vector<cudnnfe_binding_t> bind = {
      {dy, vdy.data()},       {x, vx.data()},      {mean, vmean.data()},  {inv, vinv.data()},
      {scale, vscale.data()}, {bw[0], vdx.data()}, {bw[1], bo[0].data()}, {bw[2], bo[1].data()}};
  for (int i = 0; i < 5; ++i) bind.push_back({w[i], wo[i].data()});
  REQUIRE_OK(cudnnfe_graph_execute(b.g, b.h, bind.data(), bind.size(), nullptr, 0, nullptr));
  expect_close("dscale", wo[0], std::vector<double>(bo[0].begin(), bo[0].end()));
  expect_close("dbias", wo[1], std::vector<double>(bo[1].begin(), bo[1].end()));
  std::vector<double> dx_split(n);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = i / 10 % 4;  // NCHW, 5 * 2 elements per plane
    dx_split[i] = wo[2][c] * vdy[i] + wo[3][c] * vx[i] + wo[4][c];
  }
  expect_close("dx", vdx, dx_split);
}

}  // namespace
