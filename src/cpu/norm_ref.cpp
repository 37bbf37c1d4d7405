// Layer norm and RMS norm, forward and backward, in double. Statistics are
// per index of dim 0 over all other dims (M elements per row):
//   layernorm  xhat = (x - mean) * inv_variance, inv_variance = 1/sqrt(var + eps)
//              with the biased variance (divided by M)
//   rmsnorm    xhat = x * inv_rms, inv_rms = 1/sqrt(mean(x^2) + eps)
//   y = xhat * g + bias, g = scale (or 1 + scale with zero-centred gamma)
// Backward uses the statistics it is given (like cuDNN), not recomputed ones:
//   dscale = sum_n dy * xhat, dbias = sum_n dy
//   dx = inv * (dy*g - mean(dy*g) - xhat * mean(dy*g * xhat))   (layernorm)
//   dx = inv * (dy*g - xhat * mean(dy*g * xhat))                 (rmsnorm)
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

// The effective per-feature multiplier g.
std::vector<double> gamma(const Node &node, const StridedTensor &scale) {
  std::vector<double> g = load_dense(scale, node.compute_dtype);
  if (node.as<NormAttrs>().zero_centered_gamma)
    for (double &v : g) v += 1.0;
  return g;
}

bool is_layernorm(const Node &node) {
  return node.kind == OpKind::kLayerNorm || node.kind == OpKind::kLayerNormBackward;
}

}  // namespace

void run_norm_forward(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                      const StridedTensor *bias, const StridedTensor &y, const StridedTensor *stat0,
                      const StridedTensor *stat1) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const double eps = node.as<NormAttrs>().epsilon;
  const bool layer = is_layernorm(node);
  std::vector<double> xs = load_dense(x, compute);
  const std::vector<double> g = gamma(node, scale);
  const std::vector<double> b = bias ? load_dense(*bias, compute) : std::vector<double>();
  const size_t n = static_cast<size_t>(x.dims[0]), m = xs.size() / n;
  std::vector<double> mean(n, 0.0), inv(n);
  for (size_t r = 0; r < n; ++r) {
    double *row = &xs[r * m];
    double mu = 0.0, sq = 0.0;
    if (layer) {
      for (size_t j = 0; j < m; ++j) mu += row[j];
      mu /= static_cast<double>(m);
    }
    for (size_t j = 0; j < m; ++j) sq += (row[j] - mu) * (row[j] - mu);
    mean[r] = mu;
    inv[r] = 1.0 / std::sqrt(sq / static_cast<double>(m) + eps);
    for (size_t j = 0; j < m; ++j) {
      row[j] = (row[j] - mu) * inv[r] * g[j];
      if (!b.empty()) row[j] += b[j];
    }
  }
  store_dense(y, std::move(xs), compute);
  // Statistics: layernorm writes (mean, inv_variance), rmsnorm (inv_rms).
  if (layer) {
    if (stat0) store_dense(*stat0, mean, compute);
    if (stat1) store_dense(*stat1, inv, compute);
  } else if (stat0) {
    store_dense(*stat0, inv, compute);
  }
}

void run_norm_backward(const Node &node, const StridedTensor &dy, const StridedTensor &x,
                       const StridedTensor &scale, const StridedTensor *mean_in,
                       const StridedTensor &inv_in, const StridedTensor &dx,
                       const StridedTensor *dscale, const StridedTensor *dbias) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const std::vector<double> dys = load_dense(dy, compute);
  const std::vector<double> xs = load_dense(x, compute);
  const std::vector<double> g = gamma(node, scale);
  const std::vector<double> inv = load_dense(inv_in, compute);
  const std::vector<double> mean =
      mean_in ? load_dense(*mean_in, compute) : std::vector<double>(inv.size(), 0.0);
  const size_t n = static_cast<size_t>(x.dims[0]), m = xs.size() / n;
  const bool layer = is_layernorm(node);
  std::vector<double> dxs(xs.size()), dg(m, 0.0), db(m, 0.0), xhat(m), dyg(m);
  for (size_t r = 0; r < n; ++r) {
    double sum_dyg = 0.0, sum_dyg_xhat = 0.0;
    for (size_t j = 0; j < m; ++j) {
      const size_t i = r * m + j;
      xhat[j] = (xs[i] - mean[r]) * inv[r];
      dyg[j] = dys[i] * g[j];
      sum_dyg += dyg[j];
      sum_dyg_xhat += dyg[j] * xhat[j];
      dg[j] += dys[i] * xhat[j];
      db[j] += dys[i];
    }
    const double md = layer ? sum_dyg / static_cast<double>(m) : 0.0;
    const double mdx = sum_dyg_xhat / static_cast<double>(m);
    for (size_t j = 0; j < m; ++j) dxs[r * m + j] = inv[r] * (dyg[j] - md - xhat[j] * mdx);
  }
  store_dense(dx, std::move(dxs), compute);
  if (dscale) store_dense(*dscale, dg, compute);
  if (dbias) store_dense(*dbias, db, compute);
}

}  // namespace cpu
}  // namespace cudnnfe
