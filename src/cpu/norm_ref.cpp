// Layer norm and RMS norm, forward and backward, in double. Statistics are
// per group of x's elements (cpu/norm_index.h: the dims where the scale is
// not 1 are reduced), M elements per group:
//   layernorm  xhat = (x - mean) * inv_variance, inv_variance = 1/sqrt(var + eps)
//              with the biased variance (divided by M)
//   rmsnorm    xhat = x * inv_rms, inv_rms = 1/sqrt(mean(x^2) + eps)
//   y = xhat * g + bias, g = scale (or 1 + scale with zero-centred gamma),
//   scale and bias broadcast over the dims where they are 1
// Backward uses the statistics it is given (like cuDNN), not recomputed ones:
//   dscale = sum dy * xhat, dbias = sum dy   (over the elements of a scale element)
//   dx = inv * (dy*g - mean(dy*g) - xhat * mean(dy*g * xhat))   (layernorm)
//   dx = inv * (dy*g - xhat * mean(dy*g * xhat))                 (rmsnorm)
#include <cmath>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/norm_index.h"
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
  const NormIndex at = norm_index(node, x, scale, bias);
  std::vector<double> xs = load_dense(x, compute);
  const std::vector<double> g = gamma(node, scale);
  const std::vector<double> b = bias ? load_dense(*bias, compute) : std::vector<double>();
  std::vector<double> mean(at.groups, 0.0), sq(at.groups, 0.0), inv(at.groups);
  if (layer) {
    for (size_t e = 0; e < xs.size(); ++e) mean[at.group[e]] += xs[e];
    for (double &mu : mean) mu /= at.per_group;
  }
  for (size_t e = 0; e < xs.size(); ++e) {
    const double d = xs[e] - mean[at.group[e]];
    sq[at.group[e]] += d * d;
  }
  for (size_t s = 0; s < at.groups; ++s) inv[s] = 1.0 / std::sqrt(sq[s] / at.per_group + eps);
  for (size_t e = 0; e < xs.size(); ++e) {
    const size_t s = at.group[e];
    xs[e] = (xs[e] - mean[s]) * inv[s] * g[at.scale[e]];
    if (bias) xs[e] += b[at.bias[e]];
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
  const NormIndex at = norm_index(node, x, scale, nullptr);
  const std::vector<double> dys = load_dense(dy, compute);
  const std::vector<double> xs = load_dense(x, compute);
  const std::vector<double> g = gamma(node, scale);
  const std::vector<double> inv = load_dense(inv_in, compute);
  const std::vector<double> mean =
      mean_in ? load_dense(*mean_in, compute) : std::vector<double>(inv.size(), 0.0);
  const bool layer = is_layernorm(node);
  std::vector<double> xhat(xs.size()), dyg(xs.size());
  std::vector<double> sum_dyg(at.groups, 0.0), sum_dyg_xhat(at.groups, 0.0);
  std::vector<double> dg(at.params, 0.0), db(at.params, 0.0);
  for (size_t e = 0; e < xs.size(); ++e) {
    const size_t s = at.group[e], p = at.scale[e];
    xhat[e] = (xs[e] - mean[s]) * inv[s];
    dyg[e] = dys[e] * g[p];
    sum_dyg[s] += dyg[e];
    sum_dyg_xhat[s] += dyg[e] * xhat[e];
    dg[p] += dys[e] * xhat[e];
    db[p] += dys[e];
  }
  std::vector<double> dxs(xs.size());
  for (size_t e = 0; e < xs.size(); ++e) {
    const size_t s = at.group[e];
    const double md = layer ? sum_dyg[s] / at.per_group : 0.0;
    dxs[e] = inv[s] * (dyg[e] - md - xhat[e] * sum_dyg_xhat[s] / at.per_group);
  }
  store_dense(dx, std::move(dxs), compute);
  if (dscale) store_dense(*dscale, dg, compute);
  if (dbias) store_dense(*dbias, db, compute);
}

}  // namespace cpu
}  // namespace cudnnfe
