// Batch norm, instance norm and adaptive layer norm in double, as one loop
// over "groups": each element of x belongs to one statistics group (its
// index with the reduced dims zeroed) and reads one parameter (its index
// with the non-parameter dims zeroed); see cpu/norm_index.h. With M
// elements per group:
//   mean = sum(x) / M, var = sum((x - mean)^2) / M (biased),
//   inv = 1 / sqrt(var + eps), xhat = (x - mean) * inv, y = xhat * g + bias
// with g = scale (1 + scale with zero-centred gamma). Batch norm's running
// statistics: next = (1 - momentum) * prev + momentum * batch, the batch
// variance unbiased (var * M / (M - 1)). Backward uses the statistics it is
// given (like cuDNN), as layer norm's does (run_norm_backward, norm_ref.cpp).
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/error.h"
#include "cpu/norm_index.h"
#include "cpu/reference_ops.h"

namespace cudnnfe {
namespace cpu {
void run_grouped_norm_forward(const Node &node, const GroupedNormTensors &t) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const NormAttrs &attrs = node.as<NormAttrs>();
  const NormIndex gi = norm_index(node, *t.x, *t.scale, t.bias);
  std::vector<double> xs = load_dense(*t.x, compute);
  const std::vector<double> g = norm_gamma(node, *t.scale);
  const std::vector<double> b = load_dense(*t.bias, compute);
  std::vector<double> mean(gi.groups, 0.0), inv(gi.groups, 0.0), var(gi.groups, 0.0);
  if (t.given_mean) {
    // Batch norm inference: the statistics are inputs.
    mean = load_dense(*t.given_mean, compute);
    inv = load_dense(*t.given_inv, compute);
  } else {
    for (size_t e = 0; e < xs.size(); ++e) mean[gi.group[e]] += xs[e];
    for (double &m : mean) m /= gi.per_group;
    for (size_t e = 0; e < xs.size(); ++e) {
      const double d = xs[e] - mean[gi.group[e]];
      var[gi.group[e]] += d * d;
    }
    for (size_t s = 0; s < gi.groups; ++s) {
      var[s] /= gi.per_group;
      inv[s] = 1.0 / std::sqrt(var[s] + attrs.epsilon);
    }
  }
  for (size_t e = 0; e < xs.size(); ++e) {
    const size_t s = gi.group[e];
    xs[e] = (xs[e] - mean[s]) * inv[s] * g[gi.scale[e]] + b[gi.bias[e]];
  }
  store_dense(*t.y, std::move(xs), compute);
  if (t.given_mean) return;
  if (t.prev_mean && t.next_mean && t.prev_var && t.next_var) {
    const double m = attrs.momentum, bessel = gi.per_group / (gi.per_group - 1.0);
    std::vector<double> run_mean = load_dense(*t.prev_mean, compute);
    std::vector<double> run_var = load_dense(*t.prev_var, compute);
    for (size_t s = 0; s < gi.groups; ++s) {
      run_mean[s] = (1.0 - m) * run_mean[s] + m * mean[s];
      run_var[s] = (1.0 - m) * run_var[s] + m * var[s] * bessel;
    }
    store_dense(*t.next_mean, std::move(run_mean), compute);
    store_dense(*t.next_var, std::move(run_var), compute);
  }
  if (t.mean) store_dense(*t.mean, std::move(mean), compute);
  if (t.inv) store_dense(*t.inv, std::move(inv), compute);
}

}  // namespace cpu
}  // namespace cudnnfe
