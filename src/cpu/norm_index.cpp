// Where each element of a norm's x finds its statistics and parameters
// (cpu/norm_index.h).
#include "cpu/norm_index.h"

#include "ops/norm_shapes.h"

namespace cudnnfe {
namespace cpu {
namespace {

std::vector<int64_t> dims_of(const StridedTensor &t) {
  return std::vector<int64_t>(t.dims.begin(), t.dims.begin() + t.rank);
}

// Row-major strides of `dims` with the broadcast dims (extent 1) at 0.
Index broadcast_row_major(const std::vector<int64_t> &dims) {
  Index strides{};
  int64_t running = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = dims[i] == 1 ? 0 : running;
    running *= dims[i];
  }
  return strides;
}

size_t dot(const Index &index, const Index &strides, int rank) {
  int64_t at = 0;
  for (int i = 0; i < rank; ++i) at += index[i] * strides[i];
  return static_cast<size_t>(at);
}

}  // namespace

NormIndex norm_index(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                     const StridedTensor *bias) {
  const std::vector<int64_t> x_dims = dims_of(x);
  const NormGroups g = norm_groups(node.kind, x_dims, dims_of(scale));
  const std::vector<int64_t> stats = keep_dims(x_dims, ~g.reduced);
  NormIndex out;
  for (int i = 0; i < x.rank; ++i) {
    out.groups *= static_cast<size_t>(stats[i]);
    out.params *= static_cast<size_t>(scale.dims[i]);
    if (g.reduced & (1u << i)) out.per_group *= static_cast<double>(x.dims[i]);
  }
  const Index group_strides = broadcast_row_major(stats);
  const Index scale_strides = broadcast_row_major(dims_of(scale));
  const Index bias_strides = bias ? broadcast_row_major(dims_of(*bias)) : Index{};
  const size_t count = static_cast<size_t>(x.element_count());
  out.group.reserve(count);
  out.scale.reserve(count);
  if (bias) out.bias.reserve(count);
  Index index{};
  do {
    out.group.push_back(dot(index, group_strides, x.rank));
    out.scale.push_back(dot(index, scale_strides, x.rank));
    if (bias) out.bias.push_back(dot(index, bias_strides, x.rank));
  } while (next_index(index, x.rank, x.dims));
  return out;
}

std::vector<double> norm_gamma(const Node &node, const StridedTensor &scale) {
  std::vector<double> g = load_dense(scale, node.compute_dtype);
  if (node.as<NormAttrs>().zero_centered_gamma)
    for (double &v : g) v += 1.0;
  return g;
}

}  // namespace cpu
}  // namespace cudnnfe
