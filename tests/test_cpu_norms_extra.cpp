// The CPU reference of batch norm (training with running statistics,
// inference, backward), instance norm and adaptive layer norm, and of layer
// and RMS norm with scale and bias that broadcast ([b, s, d] with [1, 1, d]),
// through the public C API: forward results against straightforward loops written here
// (independent of the library's grouped implementation), backward results
// against central differences of the forward, plus shape, layout and type
// inference of the outputs and the options' defaults.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;
using Values = std::vector<double>;

int64_t product(const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Offset of the `flat`-th logical (row-major) element under `strides`.
int64_t offset_of(int64_t flat, const Dims &dims, const Dims &strides) {
  int64_t offset = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    offset += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return offset;
}

int64_t span_of(const Dims &dims, const Dims &strides) {
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
  return last + 1;
}

// NHWC-style strides for [N, C, spatial...]: C innermost.
Dims channels_last(const Dims &dims) {
  Dims s(dims.size());
  int64_t running = 1;
  s[1] = running;
  running *= dims[1];
  for (size_t i = dims.size() - 1; i >= 2; --i) {
    s[i] = running;
    running *= dims[i];
  }
  s[0] = running;
  return s;
}

// Deterministic values in [lo, hi).
Values pattern(size_t n, uint32_t seed, double lo = -2.0, double hi = 2.0) {
  Values v(n);
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = lo + (hi - lo) * static_cast<double>((seed >> 8) % 4096) / 4096.0;
  }
  return v;
}

bool close(double got, double want, double tol) {
  return std::fabs(got - want) <= tol * (1.0 + std::fabs(want));
}

void expect_values(const std::string &what, const Values &got, const Values &want,
                   double tol = 1e-12) {
  CHECK_MSG(got.size() == want.size(), "%s: %zu values, expected %zu", what.c_str(), got.size(),
            want.size());
  int shown = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    if (close(got[i], want[i], tol)) continue;
    ++testing::state().failures;
    if (shown++ < 5)
      std::printf("  %s[%zu] = %.12g, expected %.12g\n", what.c_str(), i, got[i], want[i]);
  }
}

cudnnfe_norm_options_t options(double epsilon, int phase = CUDNNFE_NORM_PHASE_TRAINING) {
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.epsilon = epsilon;
  o.phase = phase;
  o.compute_dtype = CUDNNFE_DTYPE_DOUBLE;
  return o;
}

// A graph on the CPU reference whose tensors are fed and read as logical
// (row-major) DOUBLE values, laid out in memory with each tensor's strides.
class Net {
 public:
  Net() { cudnnfe_graph_create(&g_); }
  ~Net() { cudnnfe_graph_destroy(g_); }
  Net(const Net &) = delete;
  Net &operator=(const Net &) = delete;
  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, const Dims &dims, const Dims &strides = {},
                cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_DOUBLE) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, dtype, static_cast<int32_t>(dims.size()),
                                      dims.data(), strides.empty() ? nullptr : strides.data(),
                                      &uid));
    return uid;
  }

  void output(int64_t uid, cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_DOUBLE) {
    CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1));
    CHECK_OK(cudnnfe_tensor_set_dtype(g_, uid, dtype));
    outputs_.push_back(uid);
  }

  Dims dims(int64_t uid) const { return shape(uid, true); }
  Dims strides(int64_t uid) const { return shape(uid, false); }
  cudnnfe_dtype_t dtype(int64_t uid) const {
    cudnnfe_dtype_t dt = CUDNNFE_DTYPE_NOT_SET;
    CHECK_OK(cudnnfe_tensor_get_dtype(g_, uid, &dt));
    return dt;
  }

  // Builds (once) and runs; returns every output's logical values (NaN
  // where the library wrote nothing).
  std::map<int64_t, Values> run(const std::map<int64_t, Values> &inputs) {
    std::map<int64_t, Values> results;
    if (!built_) {
      cudnnfe_build_options_t o;
      cudnnfe_build_options_init(&o);
      o.target = CUDNNFE_TARGET_CPU_REFERENCE;
      cudnnfe_status_t s = cudnnfe_graph_build(g_, nullptr, &o);
      if (s != CUDNNFE_STATUS_OK) {
        std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g_));
        ++testing::state().failures;
        return results;
      }
      built_ = true;
    }
    std::map<int64_t, Values> memory;
    std::vector<cudnnfe_binding_t> bindings;
    for (const auto &[uid, logical] : inputs) {
      const Dims d = dims(uid), s = strides(uid);
      Values &mem = memory[uid];
      mem.assign(static_cast<size_t>(span_of(d, s)), 0.0);
      for (int64_t i = 0; i < product(d); ++i)
        mem[static_cast<size_t>(offset_of(i, d, s))] = logical[static_cast<size_t>(i)];
    }
    for (int64_t uid : outputs_)
      memory[uid].assign(static_cast<size_t>(span_of(dims(uid), strides(uid))), NAN);
    for (auto &[uid, mem] : memory) bindings.push_back({uid, mem.data()});
    cudnnfe_handle_t *h = nullptr;
    cudnnfe_handle_create(&h, -1);
    cudnnfe_status_t s =
        cudnnfe_graph_execute(g_, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK) {
      std::printf("  execute failed: %s\n", cudnnfe_handle_last_error(h));
      ++testing::state().failures;
    }
    cudnnfe_handle_destroy(h);
    for (int64_t uid : outputs_) {
      const Dims d = dims(uid), st = strides(uid);
      Values &out = results[uid];
      for (int64_t i = 0; i < product(d); ++i)
        out.push_back(memory[uid][static_cast<size_t>(offset_of(i, d, st))]);
    }
    return results;
  }

 private:
  Dims shape(int64_t uid, bool want_dims) const {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, d, s, CUDNNFE_MAX_DIMS, &rank));
    const int64_t *src = want_dims ? d : s;
    return Dims(src, src + rank);
  }

  cudnnfe_graph_t *g_ = nullptr;
  std::vector<int64_t> outputs_;
  bool built_ = false;
};

// ---- independent forward computations (explicit loops per op) ----

struct Expected {
  Values y, mean, inv, next_mean, next_var;
};

// Batch norm on x [N, C, H, W] (logical row-major values).
Expected batchnorm_4d(const Dims &d, const Values &x, const Values &scale, const Values &bias,
                      double eps, const Values &prev_mean = {}, const Values &prev_var = {},
                      double momentum = 0) {
  const int64_t n = d[0], c = d[1], h = d[2], w = d[3];
  Expected e;
  e.y.resize(x.size());
  for (int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sq = 0, count = static_cast<double>(n * h * w);
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) sum += x[((a * c + ch) * h + i) * w + j];
    const double mean = sum / count;
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const double v = x[((a * c + ch) * h + i) * w + j] - mean;
          sq += v * v;
        }
    const double var = sq / count, inv = 1.0 / std::sqrt(var + eps);
    e.mean.push_back(mean);
    e.inv.push_back(inv);
    if (!prev_mean.empty()) {
      e.next_mean.push_back((1 - momentum) * prev_mean[ch] + momentum * mean);
      e.next_var.push_back((1 - momentum) * prev_var[ch] + momentum * sq / (count - 1));
    }
    for (int64_t a = 0; a < n; ++a)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) {
          const int64_t k = ((a * c + ch) * h + i) * w + j;
          e.y[k] = (x[k] - mean) * inv * scale[ch] + bias[ch];
        }
  }
  return e;
}

// Instance norm on x [N, C, S] (S = the spatial dims flattened).
Expected instancenorm_3d(int64_t n, int64_t c, int64_t s, const Values &x, const Values &scale,
                         const Values &bias, double eps) {
  Expected e;
  e.y.resize(x.size());
  for (int64_t a = 0; a < n; ++a)
    for (int64_t ch = 0; ch < c; ++ch) {
      const double *row = &x[(a * c + ch) * s];
      double sum = 0, sq = 0;
      for (int64_t k = 0; k < s; ++k) sum += row[k];
      const double mean = sum / s;
      for (int64_t k = 0; k < s; ++k) sq += (row[k] - mean) * (row[k] - mean);
      const double inv = 1.0 / std::sqrt(sq / s + eps);
      e.mean.push_back(mean);
      e.inv.push_back(inv);
      for (int64_t k = 0; k < s; ++k)
        e.y[(a * c + ch) * s + k] = (row[k] - mean) * inv * scale[ch] + bias[ch];
    }
  return e;
}

// Adaptive layer norm on x [B, S, D] (D = the features flattened), scale
// and bias [B, D]; `one` = 1 for zero-centred gamma.
Expected adalayernorm_3d(int64_t b, int64_t s, int64_t d, const Values &x, const Values &scale,
                         const Values &bias, double eps, double one = 0) {
  Expected e;
  e.y.resize(x.size());
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < s; ++t) {
      const double *row = &x[(i * s + t) * d];
      double sum = 0, sq = 0;
      for (int64_t k = 0; k < d; ++k) sum += row[k];
      const double mean = sum / d;
      for (int64_t k = 0; k < d; ++k) sq += (row[k] - mean) * (row[k] - mean);
      const double inv = 1.0 / std::sqrt(sq / d + eps);
      e.mean.push_back(mean);
      e.inv.push_back(inv);
      for (int64_t k = 0; k < d; ++k)
        e.y[(i * s + t) * d + k] =
            (row[k] - mean) * inv * (one + scale[i * d + k]) + bias[i * d + k];
    }
  return e;
}

// Layer norm (or RMS norm: `centered` false) of x [rows, d] row by row,
// scale and bias [d] shared by every row.
Expected layernorm_rows(int64_t rows, int64_t d, const Values &x, const Values &scale,
                        const Values &bias, double eps, bool centered = true) {
  Expected e;
  e.y.resize(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x[r * d];
    double sum = 0, sq = 0;
    if (centered)
      for (int64_t k = 0; k < d; ++k) sum += row[k];
    const double mean = sum / d;
    for (int64_t k = 0; k < d; ++k) sq += (row[k] - mean) * (row[k] - mean);
    const double inv = 1.0 / std::sqrt(sq / d + eps);
    e.mean.push_back(mean);
    e.inv.push_back(inv);
    for (int64_t k = 0; k < d; ++k)
      e.y[r * d + k] = (row[k] - mean) * inv * scale[k] + (bias.empty() ? 0.0 : bias[k]);
  }
  return e;
}

Dims per_channel(const Dims &x) {
  Dims d(x.size(), 1);
  d[1] = x[1];
  return d;
}

}  // namespace

// ---- batch norm ----

TEST(cpu_batchnorm_training_nhwc_with_running_statistics) {
  const Dims xd = {2, 3, 2, 2};
  const Values x = pattern(24, 1), scale = {0.5, -1.25, 2.0}, bias = {0.1, 0.0, -0.3};
  const Values prev_mean = {0.2, -0.4, 1.0}, prev_var = {1.5, 0.25, 3.0};
  const double eps = 1e-3, momentum = 0.2;
  Net g;
  int64_t tx = g.input("x", xd, channels_last(xd));
  int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
  int64_t tpm = g.input("prev_mean", per_channel(xd)), tpv = g.input("prev_var", per_channel(xd));
  cudnnfe_norm_options_t o = options(eps);
  o.momentum = momentum;
  int64_t y, mean, inv, next_mean, next_var;
  REQUIRE_OK(cudnnfe_graph_add_batchnorm(g.get(), tx, ts, tb, tpm, tpv, &o, &y, &mean, &inv,
                                         &next_mean, &next_var));
  // Inferred: y like x (NHWC), statistics [1, C, 1, 1] FLOAT with x's
  // dimension order.
  CHECK(g.dims(y) == xd && g.strides(y) == channels_last(xd));
  for (int64_t t : {mean, inv, next_mean, next_var}) {
    CHECK(g.dims(t) == per_channel(xd));
    CHECK((g.strides(t) == Dims{3, 1, 3, 3}));
    CHECK(g.dtype(t) == CUDNNFE_DTYPE_FLOAT);
  }
  for (int64_t t : {y, mean, inv, next_mean, next_var}) g.output(t);
  auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}, {tpm, prev_mean}, {tpv, prev_var}});
  const Expected e = batchnorm_4d(xd, x, scale, bias, eps, prev_mean, prev_var, momentum);
  expect_values("y", r[y], e.y);
  expect_values("mean", r[mean], e.mean);
  expect_values("inv_variance", r[inv], e.inv);
  expect_values("next_running_mean", r[next_mean], e.next_mean);
  expect_values("next_running_var (unbiased batch variance)", r[next_var], e.next_var);
}

TEST(cpu_batchnorm_running_statistics_update_in_place) {
  // FLOAT tensors, next_* bound to prev_*'s buffers: updated in place.
  const Dims xd = {4, 2, 3, 1};
  const Values xv = pattern(24, 7, -1, 3);
  cudnnfe_graph_t *g = nullptr;
  cudnnfe_graph_create(&g);
  int64_t x, s, b, pm, pv, y, m, iv, nm, nv;
  const int64_t pd[] = {1, 2, 1, 1};
  cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 4, xd.data(), nullptr, &x);
  cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &s);
  cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &b);
  cudnnfe_graph_add_tensor(g, "running_mean", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &pm);
  cudnnfe_graph_add_tensor(g, "running_var", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &pv);
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  CHECK(o.momentum == 0.1);  // the default
  o.epsilon = 0;
  o.momentum = 0.5;
  REQUIRE_OK(cudnnfe_graph_add_batchnorm(g, x, s, b, pm, pv, &o, &y, &m, &iv, &nm, &nv));
  for (int64_t t : {y, m, iv, nm, nv}) cudnnfe_tensor_set_output(g, t, 1);
  cudnnfe_build_options_t bo;
  cudnnfe_build_options_init(&bo);
  bo.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &bo));
  std::vector<float> fx(xv.begin(), xv.end()), fs = {1, 1}, fb = {0, 0}, rm = {1, -1}, rv = {2, 4};
  std::vector<float> fy(24), fm(2), fi(2);
  std::vector<cudnnfe_binding_t> bind = {
      {x, fx.data()}, {s, fs.data()}, {b, fb.data()},  {pm, rm.data()}, {pv, rv.data()},
      {y, fy.data()}, {m, fm.data()}, {iv, fi.data()}, {nm, rm.data()}, {nv, rv.data()}};
  cudnnfe_handle_t *h = nullptr;
  cudnnfe_handle_create(&h, -1);
  CHECK_OK(cudnnfe_graph_execute(g, h, bind.data(), bind.size(), nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  // Channel c holds x[:, c, :, 0]: 12 values.
  for (int c = 0; c < 2; ++c) {
    double sum = 0, sq = 0;
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 3; ++i) sum += fx[(n * 2 + c) * 3 + i];
    const double mean = sum / 12;
    for (int n = 0; n < 4; ++n)
      for (int i = 0; i < 3; ++i) sq += std::pow(fx[(n * 2 + c) * 3 + i] - mean, 2);
    const double prev_m = c ? -1 : 1, prev_v = c ? 4 : 2;
    CHECK_MSG(close(rm[c], 0.5 * prev_m + 0.5 * mean, 1e-6), "running mean[%d] %g", c, rm[c]);
    CHECK_MSG(close(rv[c], 0.5 * prev_v + 0.5 * sq / 11, 1e-6), "running var[%d] %g", c, rv[c]);
    CHECK_MSG(close(fi[c], 1 / std::sqrt(sq / 12), 1e-6), "inv_variance[%d] %g", c, fi[c]);
  }
  cudnnfe_graph_destroy(g);
}

TEST(cpu_batchnorm_without_running_statistics_rank2_and_5d) {
  // [N, C]: statistics over N only.
  {
    const Dims xd = {5, 3};
    const Values x = pattern(15, 3), scale = {1.0, 2.0, -0.5}, bias = {0.0, 1.0, 0.25};
    Net g;
    int64_t tx = g.input("x", xd), ts = g.input("scale", {1, 3}), tb = g.input("bias", {1, 3});
    cudnnfe_norm_options_t o = options(1e-4);
    int64_t y, mean, inv, nm = 99, nv = 99;
    REQUIRE_OK(
        cudnnfe_graph_add_batchnorm(g.get(), tx, ts, tb, 0, 0, &o, &y, &mean, &inv, &nm, &nv));
    CHECK(nm == 0 && nv == 0);  // no running statistics
    for (int64_t t : {y, mean, inv}) g.output(t);
    auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
    const Expected e = batchnorm_4d({5, 3, 1, 1}, x, scale, bias, 1e-4);
    expect_values("y [N,C]", r[y], e.y);
    expect_values("mean [N,C]", r[mean], e.mean);
    expect_values("inv [N,C]", r[inv], e.inv);
  }
  // [N, C, D, H, W] channels-last: statistics over N, D, H, W (compared
  // with the 4-D loops on [N, C, D*H, W] in logical order).
  {
    const Dims xd = {2, 2, 2, 3, 2};
    const Values x = pattern(48, 5), scale = {0.75, 1.5}, bias = {-1.0, 0.5};
    Net g;
    int64_t tx = g.input("x", xd, channels_last(xd));
    int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
    cudnnfe_norm_options_t o = options(1e-5);
    int64_t y, mean, inv;
    REQUIRE_OK(cudnnfe_graph_add_batchnorm(g.get(), tx, ts, tb, 0, 0, &o, &y, &mean, &inv, nullptr,
                                           nullptr));
    for (int64_t t : {y, mean, inv}) g.output(t);
    auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
    const Expected e = batchnorm_4d({2, 2, 6, 2}, x, scale, bias, 1e-5);
    expect_values("y 5d", r[y], e.y);
    expect_values("mean 5d", r[mean], e.mean);
    expect_values("inv 5d", r[inv], e.inv);
  }
}

TEST(cpu_batchnorm_inference_applies_the_given_statistics) {
  const Dims xd = {3, 4, 2, 3};
  const Values x = pattern(72, 11), scale = {1.0, -2.0, 0.5, 3.0}, bias = {0.0, 0.5, -0.5, 1.0};
  // From running statistics: inv_variance = 1/sqrt(running_var + eps).
  const Values run_mean = {0.1, -0.2, 0.3, 0.0}, run_var = {1.0, 0.5, 2.0, 0.25};
  Values inv_var;
  for (double v : run_var) inv_var.push_back(1.0 / std::sqrt(v + 1e-5));
  Net g;
  int64_t tx = g.input("x", xd, channels_last(xd));
  int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
  int64_t tm = g.input("mean", per_channel(xd)), ti = g.input("inv_variance", per_channel(xd));
  cudnnfe_norm_options_t o = options(123.0);  // epsilon is not read
  o.phase = CUDNNFE_NORM_PHASE_TRAINING;      // nor the phase
  int64_t y;
  REQUIRE_OK(cudnnfe_graph_add_batchnorm_inference(g.get(), tx, ts, tb, tm, ti, &o, &y));
  CHECK(g.dims(y) == xd && g.strides(y) == channels_last(xd));
  g.output(y);
  auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}, {tm, run_mean}, {ti, inv_var}});
  Values want(x.size());
  for (int64_t n = 0; n < 3; ++n)
    for (int64_t c = 0; c < 4; ++c)
      for (int64_t k = 0; k < 6; ++k) {
        const int64_t i = (n * 4 + c) * 6 + k;
        want[i] = (x[i] - run_mean[c]) * inv_var[c] * scale[c] + bias[c];
      }
  expect_values("y", r[y], want);
}

TEST(cpu_batchnorm_inference_equals_its_pointwise_chain) {
  // y = (x - mean) * inv_variance * scale + bias as four pointwise ops (the
  // form the header suggests where cuDNN has no standalone engine) gives
  // batchnorm_inference's result.
  const Dims xd = {2, 3, 2, 2}, pd = {1, 3, 1, 1};
  const Values x = pattern(24, 61), scale = {0.5, 1.5, -1.0}, bias = {0.25, 0.0, -0.5};
  const Values mean = {0.1, -0.3, 0.7}, inv = {1.5, 0.5, 2.0};
  Values results[2];
  for (int chain = 0; chain < 2; ++chain) {
    Net g;
    int64_t tx = g.input("x", xd, channels_last(xd));
    int64_t ts = g.input("scale", pd), tb = g.input("bias", pd);
    int64_t tm = g.input("mean", pd), ti = g.input("inv", pd);
    int64_t y = 0;
    if (chain) {
      int64_t t0 = 0, t1 = 0, t2 = 0;
      CHECK_OK(
          cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_SUB, tx, tm, 0, nullptr, &t0));
      CHECK_OK(
          cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, t0, ti, 0, nullptr, &t1));
      CHECK_OK(
          cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, t1, ts, 0, nullptr, &t2));
      CHECK_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_ADD, t2, tb, 0, nullptr, &y));
      CHECK_OK(cudnnfe_graph_set_intermediate_dtype(g.get(), CUDNNFE_DTYPE_DOUBLE));
      CHECK_OK(cudnnfe_graph_set_compute_dtype(g.get(), CUDNNFE_DTYPE_DOUBLE));
    } else {
      cudnnfe_norm_options_t o = options(0);
      CHECK_OK(cudnnfe_graph_add_batchnorm_inference(g.get(), tx, ts, tb, tm, ti, &o, &y));
    }
    g.output(y);
    results[chain] = g.run({{tx, x}, {ts, scale}, {tb, bias}, {tm, mean}, {ti, inv}})[y];
  }
  expect_values("pointwise chain", results[1], results[0], 1e-14);
}

// ---- instance norm ----

TEST(cpu_instancenorm_training_and_inference) {
  for (int phase : {CUDNNFE_NORM_PHASE_TRAINING, CUDNNFE_NORM_PHASE_INFERENCE}) {
    for (bool nhwc : {false, true}) {
      const Dims xd = {2, 3, 2, 3};
      const Values x = pattern(36, 21), scale = {1.5, -0.5, 1.0}, bias = {0.2, 0.0, -0.7};
      Net g;
      int64_t tx = g.input("x", xd, nhwc ? channels_last(xd) : Dims{});
      int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
      cudnnfe_norm_options_t o = options(1e-2, phase);
      int64_t y, mean = 99, inv = 99;
      REQUIRE_OK(cudnnfe_graph_add_instancenorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
      g.output(y);
      const Expected e = instancenorm_3d(2, 3, 6, x, scale, bias, 1e-2);
      if (phase == CUDNNFE_NORM_PHASE_INFERENCE) {
        CHECK(mean == 0 && inv == 0);
      } else {
        CHECK((g.dims(mean) == Dims{2, 3, 1, 1}));
        CHECK(g.strides(mean) == (nhwc ? Dims{3, 1, 3, 3} : Dims{3, 1, 1, 1}));
        CHECK(g.dtype(inv) == CUDNNFE_DTYPE_FLOAT);
        g.output(mean);
        g.output(inv);
      }
      auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
      expect_values(nhwc ? "y nhwc" : "y nchw", r[y], e.y);
      if (mean) {
        expect_values("mean", r[mean], e.mean);
        expect_values("inv_variance", r[inv], e.inv);
      }
    }
  }
  // 5-D: statistics over D, H, W.
  const Dims xd = {1, 2, 2, 2, 3};
  const Values x = pattern(24, 23), scale = {1.0, 2.0}, bias = {0.0, -1.0};
  Net g;
  int64_t tx = g.input("x", xd, channels_last(xd));
  int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
  cudnnfe_norm_options_t o = options(1e-5);
  int64_t y, mean, inv;
  REQUIRE_OK(cudnnfe_graph_add_instancenorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
  for (int64_t t : {y, mean, inv}) g.output(t);
  auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
  const Expected e = instancenorm_3d(1, 2, 12, x, scale, bias, 1e-5);
  expect_values("y 5d", r[y], e.y);
  expect_values("mean 5d", r[mean], e.mean);
  expect_values("inv 5d", r[inv], e.inv);
}

// ---- adaptive layer norm ----

TEST(cpu_adalayernorm_forward_and_zero_centered_gamma) {
  for (int zero_centered : {0, 1}) {
    for (bool rank4 : {false, true}) {
      // [B=2, S=3, D=4], or the same features as [2, 3, 2, 2].
      const Dims xd = rank4 ? Dims{2, 3, 2, 2} : Dims{2, 3, 4};
      const Dims pd = rank4 ? Dims{2, 1, 2, 2} : Dims{2, 1, 4};
      const Values x = pattern(24, 31), scale = pattern(8, 33, -1, 1), bias = pattern(8, 35);
      Net g;
      int64_t tx = g.input("x", xd), ts = g.input("scale", pd), tb = g.input("bias", pd);
      cudnnfe_norm_options_t o = options(1e-3);
      o.zero_centered_gamma = zero_centered;
      int64_t y, mean, inv;
      REQUIRE_OK(cudnnfe_graph_add_adalayernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
      CHECK(g.dims(mean) == (rank4 ? Dims{2, 3, 1, 1} : Dims{2, 3, 1}));
      for (int64_t t : {y, mean, inv}) g.output(t);
      auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
      const Expected e = adalayernorm_3d(2, 3, 4, x, scale, bias, 1e-3, zero_centered);
      const std::string tag =
          std::string(zero_centered ? " (1 + scale)" : "") + (rank4 ? " [2,3,2,2]" : " [2,3,4]");
      expect_values("y" + tag, r[y], e.y);
      expect_values("mean" + tag, r[mean], e.mean);
      expect_values("inv_variance" + tag, r[inv], e.inv);
    }
  }
  // Inference: no statistics.
  Net g;
  int64_t tx = g.input("x", {2, 3, 4}), ts = g.input("scale", {2, 1, 4}),
          tb = g.input("bias", {2, 1, 4});
  cudnnfe_norm_options_t o = options(1e-3, CUDNNFE_NORM_PHASE_INFERENCE);
  int64_t y, mean = 5, inv = 5;
  REQUIRE_OK(cudnnfe_graph_add_adalayernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
  CHECK(mean == 0 && inv == 0);
  g.output(y);
  const Values x = pattern(24, 41), scale = pattern(8, 43), bias = pattern(8, 45);
  auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
  expect_values("y inference", r[y], adalayernorm_3d(2, 3, 4, x, scale, bias, 1e-3).y);
}

// ---- layer and RMS norm with broadcast parameters ----

// A transformer's LayerNorm: x [b, s, d] normalized per token over d, scale
// and bias [1, 1, d] (cudnn-frontend infers the statistics as x's dims with
// 1 where the scale is not 1: [b, s, 1]). Also x in an s-major layout, RMS
// norm, a rank-1 x, and a scale over (s, d): per-sample statistics [b, 1, 1].
TEST(cpu_layernorm_scale_broadcasts_over_leading_dims) {
  const int64_t b = 2, sq = 3, d = 5;
  const Values x = pattern(b * sq * d, 61), scale = pattern(d, 63, 0.5, 1.5),
               bias = pattern(d, 65, -0.5, 0.5);
  for (bool rms : {false, true})
    for (bool s_major : {false, true}) {
      Net g;
      const Dims strides = s_major ? Dims{d, b * d, 1} : Dims{};
      int64_t tx = g.input("x", {b, sq, d}, strides), ts = g.input("scale", {1, 1, d});
      int64_t tb = g.input("bias", {1, 1, d});
      cudnnfe_norm_options_t o = options(1e-3);
      int64_t y = 0, mean = 0, inv = 0;
      if (rms)
        REQUIRE_OK(cudnnfe_graph_add_rmsnorm(g.get(), tx, ts, tb, &o, &y, &inv));
      else
        REQUIRE_OK(cudnnfe_graph_add_layernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
      CHECK(g.dims(inv) == (Dims{b, sq, 1}));
      if (mean) CHECK(g.dims(mean) == (Dims{b, sq, 1}));
      CHECK(g.dims(y) == (Dims{b, sq, d}));
      for (int64_t t : {y, mean, inv})
        if (t) g.output(t);
      auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
      const Expected e = layernorm_rows(b * sq, d, x, scale, bias, 1e-3, !rms);
      const std::string tag = std::string(rms ? "rmsnorm" : "layernorm") +
                              (s_major ? " s-major" : "") + " [b,s,d] [1,1,d] ";
      expect_values(tag + "y", r[y], e.y);
      expect_values(tag + "inv", r[inv], e.inv);
      if (mean) expect_values(tag + "mean", r[mean], e.mean);
    }
  {
    // A rank-1 x: one group of every element.
    Net g;
    int64_t tx = g.input("x", {d}), ts = g.input("scale", {d}), tb = g.input("bias", {d});
    cudnnfe_norm_options_t o = options(1e-3);
    int64_t y = 0, mean = 0, inv = 0;
    REQUIRE_OK(cudnnfe_graph_add_layernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
    CHECK(g.dims(mean) == (Dims{1}));
    for (int64_t t : {y, mean, inv}) g.output(t);
    const Values x1(x.begin(), x.begin() + d);
    auto r = g.run({{tx, x1}, {ts, scale}, {tb, bias}});
    const Expected e = layernorm_rows(1, d, x1, scale, bias, 1e-3);
    expect_values("layernorm rank 1 y", r[y], e.y);
    expect_values("layernorm rank 1 mean", r[mean], e.mean);
  }
  {
    // Scale over (s, d), bias shared over s: per-sample statistics.
    Net g;
    int64_t tx = g.input("x", {b, sq, d}), ts = g.input("scale", {1, sq, d});
    int64_t tb = g.input("bias", {1, 1, d});
    cudnnfe_norm_options_t o = options(1e-3);
    int64_t y = 0, mean = 0, inv = 0;
    REQUIRE_OK(cudnnfe_graph_add_layernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
    CHECK(g.dims(mean) == (Dims{b, 1, 1}));
    for (int64_t t : {y, mean, inv}) g.output(t);
    const Values big_scale = pattern(sq * d, 67, 0.5, 1.5);
    auto r = g.run({{tx, x}, {ts, big_scale}, {tb, bias}});
    Values tiled_bias;
    for (int64_t t = 0; t < sq; ++t) tiled_bias.insert(tiled_bias.end(), bias.begin(), bias.end());
    const Expected e = layernorm_rows(b, sq * d, x, big_scale, tiled_bias, 1e-3);
    expect_values("layernorm [1,s,d] scale y", r[y], e.y);
    expect_values("layernorm [1,s,d] scale inv", r[inv], e.inv);
  }
}

// ---- backward against central differences ----

// Central difference of sum(dy * y) along each element of `param`.
Values numeric_gradient(Values param, const Values &dy, double h,
                        const std::function<Values(const Values &)> &forward) {
  Values grad(param.size());
  for (size_t i = 0; i < param.size(); ++i) {
    const double saved = param[i];
    param[i] = saved + h;
    const Values up = forward(param);
    param[i] = saved - h;
    const Values down = forward(param);
    param[i] = saved;
    double diff = 0.0;
    for (size_t j = 0; j < dy.size(); ++j) diff += dy[j] * (up[j] - down[j]);
    grad[i] = diff / (2 * h);
  }
  return grad;
}

namespace {

enum class Kind { kBatch, kInstance, kAda, kLayer, kRms };

struct BackwardCase {
  const char *name;
  Kind kind;
  Dims x, params, stats;
  bool nhwc;
  int zero_centered;
};

// Runs the forward on the CPU reference in DOUBLE: y, mean, inv_variance.
Expected forward(const BackwardCase &c, const Values &x, const Values &scale, const Values &bias,
                 double eps) {
  Net g;
  int64_t tx = g.input("x", c.x, c.nhwc ? channels_last(c.x) : Dims{});
  int64_t ts = g.input("scale", c.params), tb = g.input("bias", c.params);
  cudnnfe_norm_options_t o = options(eps);
  o.zero_centered_gamma = c.zero_centered;
  int64_t y = 0, mean = 0, inv = 0;
  if (c.kind == Kind::kBatch)
    CHECK_OK(cudnnfe_graph_add_batchnorm(g.get(), tx, ts, tb, 0, 0, &o, &y, &mean, &inv, nullptr,
                                         nullptr));
  else if (c.kind == Kind::kInstance)
    CHECK_OK(cudnnfe_graph_add_instancenorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
  else if (c.kind == Kind::kAda)
    CHECK_OK(cudnnfe_graph_add_adalayernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
  else if (c.kind == Kind::kLayer)
    CHECK_OK(cudnnfe_graph_add_layernorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv));
  else
    CHECK_OK(cudnnfe_graph_add_rmsnorm(g.get(), tx, ts, tb, &o, &y, &inv));
  Expected e;
  if (!y) return e;
  for (int64_t t : {y, mean, inv})
    if (t) g.output(t);
  auto r = g.run({{tx, x}, {ts, scale}, {tb, bias}});
  e.y = r[y];
  if (mean) e.mean = r[mean];
  e.inv = r[inv];
  return e;
}

}  // namespace

TEST(cpu_grouped_norm_backward_matches_numeric_gradients) {
  const BackwardCase cases[] = {
      {"batchnorm", Kind::kBatch, {3, 2, 2, 2}, {1, 2, 1, 1}, {1, 2, 1, 1}, true, 0},
      {"batchnorm [N,C]", Kind::kBatch, {6, 3}, {1, 3}, {1, 3}, false, 0},
      {"instancenorm", Kind::kInstance, {2, 2, 3, 2}, {1, 2, 1, 1}, {2, 2, 1, 1}, true, 0},
      {"adalayernorm", Kind::kAda, {2, 3, 4}, {2, 1, 4}, {2, 3, 1}, false, 0},
      {"adalayernorm (1 + scale)", Kind::kAda, {2, 3, 4}, {2, 1, 4}, {2, 3, 1}, false, 1},
      // Parameters shared across the batch, as a transformer's LayerNorm has
      // them: [b, s, d] x with [1, 1, d] scale and bias.
      {"adalayernorm [1,1,d]", Kind::kAda, {2, 3, 4}, {1, 1, 4}, {2, 3, 1}, false, 0},
      {"layernorm [b,s,d] [1,1,d]", Kind::kLayer, {2, 3, 4}, {1, 1, 4}, {2, 3, 1}, false, 0},
      {"layernorm [b,s,d] [1,s,d]", Kind::kLayer, {2, 3, 4}, {1, 3, 4}, {2, 1, 1}, false, 0},
      {"layernorm (1 + scale) [1,1,d]", Kind::kLayer, {2, 3, 4}, {1, 1, 4}, {2, 3, 1}, false, 1},
      {"rmsnorm [b,s,d] [1,1,d]", Kind::kRms, {2, 3, 4}, {1, 1, 4}, {2, 3, 1}, false, 0},
      {"instancenorm [N,C]", Kind::kInstance, {3, 2}, {1, 2}, {3, 2}, false, 0},
  };
  const double eps = 0.05, h = 1e-5;
  for (const BackwardCase &c : cases) {
    const size_t nx = static_cast<size_t>(product(c.x)),
                 np = static_cast<size_t>(product(c.params));
    const Values x = pattern(nx, 51, -1.5, 2.0), dy = pattern(nx, 53, -1, 1);
    const Values scale = pattern(np, 55, 0.5, 1.5), bias = pattern(np, 57, -0.5, 0.5);
    const Expected f = forward(c, x, scale, bias, eps);
    Net g;
    int64_t tdy = g.input("dy", c.x, c.nhwc ? channels_last(c.x) : Dims{});
    int64_t tx = g.input("x", c.x, c.nhwc ? channels_last(c.x) : Dims{});
    int64_t ts = g.input("scale", c.params);
    int64_t tm = c.kind == Kind::kRms ? 0 : g.input("mean", c.stats);
    int64_t ti = g.input("inv_variance", c.stats);
    cudnnfe_norm_options_t o = options(eps);
    o.zero_centered_gamma = c.zero_centered;
    int64_t dx = 0, dscale = 0, dbias = 0;
    if (c.kind == Kind::kBatch)
      CHECK_OK(cudnnfe_graph_add_batchnorm_backward(g.get(), tdy, tx, ts, tm, ti, &o, &dx, &dscale,
                                                    &dbias));
    else if (c.kind == Kind::kInstance)
      CHECK_OK(cudnnfe_graph_add_instancenorm_backward(g.get(), tdy, tx, ts, tm, ti, &o, &dx,
                                                       &dscale, &dbias));
    else if (c.kind == Kind::kAda)
      CHECK_OK(cudnnfe_graph_add_adalayernorm_backward(g.get(), tdy, tx, ts, tm, ti, &o, &dx,
                                                       &dscale, &dbias));
    else if (c.kind == Kind::kLayer)
      CHECK_OK(cudnnfe_graph_add_layernorm_backward(g.get(), tdy, tx, ts, tm, ti, &o, &dx, &dscale,
                                                    &dbias));
    else
      CHECK_OK(
          cudnnfe_graph_add_rmsnorm_backward(g.get(), tdy, tx, ts, ti, &o, &dx, &dscale, &dbias));
    if (!dx) continue;
    CHECK(g.dims(dx) == c.x && g.dims(dscale) == c.params && g.dims(dbias) == c.params);
    CHECK(g.dtype(dscale) == CUDNNFE_DTYPE_DOUBLE);  // scale's type
    for (int64_t t : {dx, dscale, dbias}) g.output(t);
    std::map<int64_t, Values> inputs = {{tdy, dy}, {tx, x}, {ts, scale}, {ti, f.inv}};
    if (tm) inputs[tm] = f.mean;
    auto r = g.run(inputs);
    auto by_x = [&](const Values &p) { return forward(c, p, scale, bias, eps).y; };
    auto by_scale = [&](const Values &p) { return forward(c, x, p, bias, eps).y; };
    auto by_bias = [&](const Values &p) { return forward(c, x, scale, p, eps).y; };
    const std::string name = c.name;
    expect_values(name + " dx", r[dx], numeric_gradient(x, dy, h, by_x), 1e-7);
    expect_values(name + " dscale", r[dscale], numeric_gradient(scale, dy, h, by_scale), 1e-7);
    expect_values(name + " dbias", r[dbias], numeric_gradient(bias, dy, h, by_bias), 1e-7);
  }
}

// ---- types, defaults and the options struct's ABI ----

TEST(cpu_grouped_norm_types_and_old_options_struct) {
  cudnnfe_graph_t *g = nullptr;
  cudnnfe_graph_create(&g);
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_HALF);
  const int64_t xd[] = {2, 8, 4, 4}, pd[] = {1, 8, 1, 1}, sd[] = {2, 8, 1, 1};
  int64_t x, s, b, st;
  cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_HALF, 4, xd, nullptr, &x);
  cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_HALF, 4, pd, nullptr, &s);
  cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_HALF, 4, pd, nullptr, &b);
  cudnnfe_graph_add_tensor(g, "stats", CUDNNFE_DTYPE_FLOAT, 4, sd, nullptr, &st);
  int64_t y, m, iv, dx, ds, db;
  REQUIRE_OK(cudnnfe_graph_add_instancenorm(g, x, s, b, nullptr, &y, &m, &iv));
  REQUIRE_OK(cudnnfe_graph_add_instancenorm_backward(g, x, x, s, st, st, nullptr, &dx, &ds, &db));
  cudnnfe_tensor_set_output(g, y, 1);
  CHECK_OK(cudnnfe_graph_validate(g));
  cudnnfe_dtype_t dt;
  cudnnfe_tensor_get_dtype(g, m, &dt);
  CHECK(dt == CUDNNFE_DTYPE_FLOAT);  // statistics
  cudnnfe_tensor_get_dtype(g, ds, &dt);
  CHECK(dt == CUDNNFE_DTYPE_HALF);  // scale's type
  // A caller compiled before `momentum` existed passes a smaller struct:
  // momentum keeps its default (0.1, as the JSON shows).
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.struct_size = offsetof(cudnnfe_norm_options_t, momentum);
  o.momentum = 0.75;  // beyond struct_size: not read
  int64_t y2, m2, iv2;
  REQUIRE_OK(cudnnfe_graph_add_batchnorm(g, x, s, b, 0, 0, &o, &y2, &m2, &iv2, nullptr, nullptr));
  size_t size = 0;
  cudnnfe_graph_serialize(g, nullptr, 0, &size);
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g, json.data(), json.size(), &size));
  CHECK(json.find("\"momentum\": 0.10000000000000001") != std::string::npos);
  CHECK(json.find("0.75") == std::string::npos);
  cudnnfe_graph_destroy(g);
}

// ---- epsilon and momentum as tensors read at execute ----

TEST(cpu_norm_epsilon_and_momentum_tensors_are_read_at_execute) {
  const Dims xd = {2, 3, 2, 2};
  const Values x = pattern(24, 5), scale = {0.5, -1.25, 2.0}, bias = {0.1, 0.0, -0.3};
  const Values prev_mean = {0.2, -0.4, 1.0}, prev_var = {1.5, 0.25, 3.0};
  Net g;
  int64_t tx = g.input("x", xd, channels_last(xd));
  int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
  int64_t tpm = g.input("prev_mean", per_channel(xd)), tpv = g.input("prev_var", per_channel(xd));
  int64_t teps = g.input("epsilon", {1, 1, 1, 1}), tmom = g.input("momentum", {1, 1, 1, 1});
  cudnnfe_norm_options_t o = options(1e-5);  // the numbers are not used
  o.epsilon_tensor = teps;
  o.momentum_tensor = tmom;
  int64_t y, mean, inv, next_mean, next_var;
  REQUIRE_OK(cudnnfe_graph_add_batchnorm(g.get(), tx, ts, tb, tpm, tpv, &o, &y, &mean, &inv,
                                         &next_mean, &next_var));
  for (int64_t t : {y, mean, inv, next_mean, next_var}) g.output(t);
  for (const auto &[eps, momentum] : {std::pair{1e-3, 0.2}, std::pair{0.5, 0.9}}) {
    auto r = g.run({{tx, x},
                    {ts, scale},
                    {tb, bias},
                    {tpm, prev_mean},
                    {tpv, prev_var},
                    {teps, {eps}},
                    {tmom, {momentum}}});
    const Expected e = batchnorm_4d(xd, x, scale, bias, eps, prev_mean, prev_var, momentum);
    expect_values("y", r[y], e.y);
    expect_values("inv_variance", r[inv], e.inv);
    expect_values("next_running_var", r[next_var], e.next_var);
  }

  Net n;  // instance norm (the stats-forward C path)
  int64_t nx = n.input("x", xd), ns = n.input("scale", per_channel(xd));
  int64_t nb = n.input("bias", per_channel(xd)), neps = n.input("epsilon", {1, 1, 1, 1});
  cudnnfe_norm_options_t io = options(1e-5, CUDNNFE_NORM_PHASE_INFERENCE);
  io.epsilon_tensor = neps;
  int64_t ny = 0;
  REQUIRE_OK(cudnnfe_graph_add_instancenorm(n.get(), nx, ns, nb, &io, &ny, nullptr, nullptr));
  n.output(ny);
  auto r = n.run({{nx, x}, {ns, scale}, {nb, bias}, {neps, {0.25}}});
  expect_values("instancenorm y", r[ny], instancenorm_3d(2, 3, 4, x, scale, bias, 0.25).y);
}

TEST(cpu_norm_epsilon_tensor_bad_inputs) {
  const Dims xd = {2, 3, 2, 2};
  Net g;
  int64_t tx = g.input("x", xd);
  int64_t ts = g.input("scale", per_channel(xd)), tb = g.input("bias", per_channel(xd));
  int64_t two = g.input("eps2", {2});
  cudnnfe_norm_options_t o = options(1e-5);
  o.epsilon_tensor = two;
  int64_t y, mean, inv;
  CHECK(cudnnfe_graph_add_instancenorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv) ==
        CUDNNFE_STATUS_INVALID_GRAPH);
  CHECK(std::strstr(cudnnfe_graph_last_error(g.get()), "epsilon \"eps2\" has 2 elements"));
  int64_t one = g.input("eps1", {1});
  o.epsilon_tensor = one;
  int64_t dx, ds, db;
  CHECK(cudnnfe_graph_add_batchnorm_backward(g.get(), tx, tx, ts, ts, ts, &o, &dx, &ds, &db) ==
        CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK(std::strstr(cudnnfe_graph_last_error(g.get()), "reads no epsilon"));
  o.epsilon_tensor = 0;
  o.momentum_tensor = one;
  CHECK(cudnnfe_graph_add_instancenorm(g.get(), tx, ts, tb, &o, &y, &mean, &inv) ==
        CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK(std::strstr(cudnnfe_graph_last_error(g.get()), "only batchnorm reads a momentum"));
}
