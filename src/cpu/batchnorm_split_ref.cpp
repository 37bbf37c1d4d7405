// genstats and bn_finalize in double. genstats: sum[c] = sum of x[n, c,
// ...] over every dim but C, sq_sum[c] the same of x^2. bn_finalize, with
// M = accum_count: mean = sum / M, var = sq_sum / M - mean^2 (biased),
// inv_variance = 1 / sqrt(var + epsilon), eq_scale = scale * inv_variance,
// eq_bias = bias - mean * eq_scale, and the running statistics as
// batchnorm updates them: next = (1 - momentum) * prev + momentum * batch,
// the batch variance unbiased (var * M / (M - 1)). dbn_weight, with M the
// elements per channel and xhat = (x - mean) * inv_variance: dbias = sum
// dy, dscale = sum dy * xhat, and dx = eq_scale_dy * dy + eq_scale_x * x +
// eq_bias (batch norm's dx) with eq_scale_dy = scale * inv_variance,
// eq_scale_x = -eq_scale_dy * inv_variance * dscale / M, eq_bias =
// eq_scale_dy * (mean * inv_variance * dscale - dbias) / M. Values are read and
// written through the node's compute type, as the other reference ops do.
#include <cmath>
#include <utility>
#include <vector>

#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_genstats(const Node &node, const StridedTensor &x, const StridedTensor &sum,
                  const StridedTensor &sq_sum) {
  const std::vector<double> xs = load_dense(x, node.compute_dtype);
  const int64_t c = x.dims[1];
  int64_t inner = 1;  // elements of one (n, c) plane
  for (int i = 2; i < x.rank; ++i) inner *= x.dims[i];
  std::vector<double> s(static_cast<size_t>(c), 0.0), sq(static_cast<size_t>(c), 0.0);
  for (size_t e = 0; e < xs.size(); ++e) {
    const size_t ci = static_cast<size_t>(static_cast<int64_t>(e) / inner % c);
    s[ci] += xs[e];
    sq[ci] += xs[e] * xs[e];
  }
  store_dense(sum, std::move(s), node.compute_dtype);
  store_dense(sq_sum, std::move(sq), node.compute_dtype);
}

namespace {

double scalar(const StridedTensor &t) {
  return load_dense(t).at(0);
}

}  // namespace

void run_bn_finalize(const Node &node, const StridedTensor *const *in,
                     const StridedTensor *const *out) {
  using namespace BnFinalize;
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const std::vector<double> sum = load_dense(*in[kSum], compute);
  const std::vector<double> sq = load_dense(*in[kSqSum], compute);
  const std::vector<double> scale = load_dense(*in[kScale], compute);
  const std::vector<double> bias = load_dense(*in[kBias], compute);
  const double epsilon = scalar(*in[kEpsilon]), count = scalar(*in[kAccumCount]);
  const size_t c = sum.size();
  std::vector<double> eq_scale(c), eq_bias(c), mean(c), inv(c), var(c);
  for (size_t i = 0; i < c; ++i) {
    mean[i] = sum[i] / count;
    var[i] = sq[i] / count - mean[i] * mean[i];
    inv[i] = 1.0 / std::sqrt(var[i] + epsilon);
    eq_scale[i] = scale[i] * inv[i];
    eq_bias[i] = bias[i] - mean[i] * eq_scale[i];
  }
  store_dense(*out[kEqScale], std::move(eq_scale), compute);
  store_dense(*out[kEqBias], std::move(eq_bias), compute);
  store_dense(*out[kMean], mean, compute);
  store_dense(*out[kInvVariance], std::move(inv), compute);
  if (!in[kPrevRunningMean] || !out[kNextRunningMean] || !out[kNextRunningVar]) return;
  std::vector<double> next_mean = load_dense(*in[kPrevRunningMean], compute);
  std::vector<double> next_var = load_dense(*in[kPrevRunningVar], compute);
  const double m = scalar(*in[kMomentum]);
  for (size_t i = 0; i < c; ++i) {
    next_mean[i] = (1.0 - m) * next_mean[i] + m * mean[i];
    next_var[i] = (1.0 - m) * next_var[i] + m * var[i] * count / (count - 1.0);
  }
  store_dense(*out[kNextRunningMean], std::move(next_mean), compute);
  store_dense(*out[kNextRunningVar], std::move(next_var), compute);
}

void run_dbn_weight(const Node &node, const StridedTensor *const *in,
                    const StridedTensor *const *out) {
  using namespace DbnWeight;
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const std::vector<double> dy = load_dense(*in[kDy], compute), x = load_dense(*in[kX], compute);
  const std::vector<double> mean = load_dense(*in[kMean], compute);
  const std::vector<double> inv = load_dense(*in[kInvVariance], compute);
  const std::vector<double> scale = load_dense(*in[kScale], compute);
  const StridedTensor &t = *in[kDy];
  const size_t c = static_cast<size_t>(t.dims[1]);
  size_t inner = 1;  // elements of one (n, c) plane
  for (int i = 2; i < t.rank; ++i) inner *= static_cast<size_t>(t.dims[i]);
  const double m = static_cast<double>(dy.size() / c);
  std::vector<double> dscale(c, 0.0), dbias(c, 0.0), eq_dy(c), eq_x(c), eq_bias(c);
  for (size_t e = 0; e < dy.size(); ++e) {
    const size_t ci = e / inner % c;
    dbias[ci] += dy[e];
    dscale[ci] += dy[e] * (x[e] - mean[ci]) * inv[ci];
  }
  for (size_t i = 0; i < c; ++i) {
    eq_dy[i] = scale[i] * inv[i];
    eq_x[i] = -eq_dy[i] * inv[i] * dscale[i] / m;
    eq_bias[i] = eq_dy[i] * (mean[i] * inv[i] * dscale[i] - dbias[i]) / m;
  }
  store_dense(*out[kDscale], std::move(dscale), compute);
  store_dense(*out[kDbias], std::move(dbias), compute);
  store_dense(*out[kEqScaleDy], std::move(eq_dy), compute);
  store_dense(*out[kEqScaleX], std::move(eq_x), compute);
  store_dense(*out[kEqBias], std::move(eq_bias), compute);
}

}  // namespace cpu
}  // namespace cudnnfe
