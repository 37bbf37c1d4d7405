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
//   dx = inv * (dy*g - mean(dy*g) - xhat * mean(dy*g * xhat))   (a norm with a mean)
//   dx = inv * (dy*g - xhat * mean(dy*g * xhat))                 (rmsnorm)
// The grouped norms' backward (batch, instance, adaptive layer norm) is the
// first: their groups come from the same norm_index.
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/norm_index.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

bool is_layernorm(const Node &node) {
  return node.kind == OpKind::kLayerNorm;
}

// Normalizes one row of m values in place; returns (mean, inverse
// deviation): layernorm's mean and inv_variance, rmsnorm's 0 and inv_rms.
std::pair<double, double> normalize_row(double *row, size_t m, bool layer, double eps,
                                        const std::vector<double> &g,
                                        const std::vector<double> &b) {
  double mu = 0.0, sq = 0.0;
  if (layer) {
    for (size_t j = 0; j < m; ++j) mu += row[j];
    mu /= static_cast<double>(m);
  }
  for (size_t j = 0; j < m; ++j) sq += (row[j] - mu) * (row[j] - mu);
  const double inv = 1.0 / std::sqrt(sq / static_cast<double>(m) + eps);
  for (size_t j = 0; j < m; ++j) {
    row[j] = (row[j] - mu) * inv * g[j];
    if (!b.empty()) row[j] += b[j];
  }
  return {mu, inv};
}

// Calls f(offset, j) for the m elements of row r of t (dim 0 = r) in
// logical order.
template <class F>
void for_each_in_row(const StridedTensor &t, int64_t r, F &&f) {
  Index index{};
  index[0] = r;
  Index dims = t.dims;
  dims[0] = 1;
  size_t j = 0;
  do {
    f(t.offset(index.data()), j++);
  } while (next_index(index, t.rank, dims));
}

// Verify mode: only the wanted rows, read and written in place.
void sampled_norm_forward(const Node &node, const StridedTensor &x, const std::vector<double> &g,
                          const std::vector<double> &b, const StridedTensor &y,
                          const StridedTensor *stat0, const StridedTensor *stat1,
                          const ElementMask &rows) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const bool layer = is_layernorm(node);
  const size_t m = static_cast<size_t>(x.element_count() / x.dims[0]);
  std::vector<double> row(m);
  auto store_stat = [&](const StridedTensor *s, int64_t r, double v) {
    if (s) s->store(r * s->strides[0], round_to_compute(v, compute));
  };
  rows.for_each([&](int64_t r) {
    for_each_in_row(
        x, r, [&](int64_t off, size_t j) { row[j] = round_to_compute(x.load(off), compute); });
    const auto [mu, inv] = normalize_row(row.data(), m, layer, node.as<NormAttrs>().epsilon, g, b);
    for_each_in_row(
        y, r, [&](int64_t off, size_t j) { y.store(off, round_to_compute(row[j], compute)); });
    if (layer) {
      store_stat(stat0, r, mu);
      store_stat(stat1, r, inv);
    } else {
      store_stat(stat0, r, inv);
    }
  });
}

}  // namespace

ElementMask norm_rows(const StridedTensor &y, const std::vector<const ElementMask *> &want) {
  const int64_t n = y.dims[0];
  ElementMask rows(n);
  for (const ElementMask *w : want)
    if (w) rows.merge(rows_of(*w, w->size() / n));
  return rows;
}

// Row r of y and of the statistics reads row r of x, and all of scale,
// bias and the epsilon and momentum tensors.
void demand_norm_forward(const DemandStep &t) {
  const StridedTensor &x = *t.in(LayerNorm::kX);
  const ElementMask rows = norm_rows(*t.out(LayerNorm::kY), t.want);
  const int64_t m = x.element_count() / x.dims[0];
  rows.for_each([&](int64_t r) { t.needed(LayerNorm::kX)->set_range(r * m, (r + 1) * m); });
  t.need_all_from(1);
}

void run_norm_forward(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                      const StridedTensor *bias, const StridedTensor &y, const StridedTensor *stat0,
                      const StridedTensor *stat1, const ElementMask *rows) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const double eps = node.as<NormAttrs>().epsilon;
  const bool layer = is_layernorm(node);
  const NormIndex at = norm_index(node, x, scale, bias);
  const std::vector<double> g = norm_gamma(node, scale);
  const std::vector<double> b = bias ? load_dense(*bias, compute) : std::vector<double>();
  // Verify mode's sampled rows: when each of x's dim-0 rows is one group
  // with the whole scale (the classic [N, features...] norm), compute only
  // the rows asked for; a broadcast grouping runs in full.
  const size_t n = static_cast<size_t>(x.dims[0]);
  if (rows && !rows->all() && at.groups == n &&
      static_cast<int64_t>(at.params * n) == x.element_count())
    return sampled_norm_forward(node, x, g, b, y, stat0, stat1, *rows);
  std::vector<double> xs = load_dense(x, compute);
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
  const std::vector<double> g = norm_gamma(node, scale);
  const std::vector<double> inv = load_dense(inv_in, compute);
  const std::vector<double> mean =
      mean_in ? load_dense(*mean_in, compute) : std::vector<double>(inv.size(), 0.0);
  // Every norm with a mean centres x; rmsnorm alone has none.
  const bool centred = mean_in != nullptr;
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
    const double md = centred ? sum_dyg[s] / at.per_group : 0.0;
    dxs[e] = inv[s] * (dyg[e] - md - xhat[e] * sum_dyg_xhat[s] / at.per_group);
  }
  store_dense(dx, std::move(dxs), compute);
  if (dscale) store_dense(*dscale, dg, compute);
  if (dbias) store_dense(*dbias, db, compute);
}

}  // namespace cpu
}  // namespace cudnnfe
