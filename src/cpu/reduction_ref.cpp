// Reductions: every element of x folds into the y element it maps to (its
// index with the reduced dims set to 0), accumulating in double.
//
// Empty-set results: MUL_NO_ZEROS over only zeros gives 1 (the empty
// product); MIN and MAX ignore NaN like fmin/fmax.
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

double initial_value(cudnnfe_reduction_mode_t mode) {
  switch (mode) {
    case CUDNNFE_REDUCTION_MUL:
    case CUDNNFE_REDUCTION_MUL_NO_ZEROS: return 1.0;
    case CUDNNFE_REDUCTION_MIN: return std::numeric_limits<double>::infinity();
    case CUDNNFE_REDUCTION_MAX: return -std::numeric_limits<double>::infinity();
    default: return 0.0;
  }
}

double fold(cudnnfe_reduction_mode_t mode, double acc, double x) {
  switch (mode) {
    case CUDNNFE_REDUCTION_ADD:
    case CUDNNFE_REDUCTION_AVG: return acc + x;
    case CUDNNFE_REDUCTION_MUL: return acc * x;
    case CUDNNFE_REDUCTION_MIN: return std::fmin(acc, x);
    case CUDNNFE_REDUCTION_MAX: return std::fmax(acc, x);
    case CUDNNFE_REDUCTION_AMAX: return std::fmax(acc, std::fabs(x));
    case CUDNNFE_REDUCTION_NORM1: return acc + std::fabs(x);
    case CUDNNFE_REDUCTION_NORM2: return acc + x * x;
    case CUDNNFE_REDUCTION_MUL_NO_ZEROS: return x == 0.0 ? acc : acc * x;
  }
  return acc;
}

bool is_reduced(const StridedTensor &x, const StridedTensor &y, int i) {
  return y.dims[i] == 1 && x.dims[i] != 1;
}

// Calls f(x index) for every x element that folds into y element `index`.
template <class F>
void for_each_source(const StridedTensor &x, const StridedTensor &y, Index index, F &&f) {
  const int rank = x.rank;
  Index extent{};
  for (int i = 0; i < rank; ++i) extent[i] = is_reduced(x, y, i) ? x.dims[i] : 1;
  Index step{};
  do {
    Index at = index;
    for (int i = 0; i < rank; ++i)
      if (is_reduced(x, y, i)) at[i] = step[i];
    f(static_cast<const Index &>(at));
  } while (next_index(step, rank, extent));
}

double finish(cudnnfe_reduction_mode_t mode, double acc, int64_t group, cudnnfe_dtype_t compute) {
  if (mode == CUDNNFE_REDUCTION_AVG) acc /= static_cast<double>(group);
  if (mode == CUDNNFE_REDUCTION_NORM2) acc = std::sqrt(acc);
  return round_to_compute(acc, compute);
}

void require_equal_rank(const Node &node, const StridedTensor &x, const StridedTensor &y) {
  if (x.rank != y.rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs x and y of equal rank");
}

}  // namespace

// y element i reads the x elements that fold into it.
void demand_reduction(const DemandStep &t) {
  const ElementMask *want = t.wanted(Reduction::kY);
  if (!want) return;
  const StridedTensor &x = *t.in(Reduction::kX), &y = *t.out(Reduction::kY);
  require_equal_rank(t.node, x, y);
  want->for_each([&](int64_t linear) {
    for_each_source(x, y, unravel(linear, y.rank, y.dims),
                    [&](const Index &at) { t.needed(0)->set(ravel(at, x.rank, x.dims)); });
  });
}

bool reduction_supported(cudnnfe_reduction_mode_t mode) {
  return mode >= CUDNNFE_REDUCTION_ADD && mode <= CUDNNFE_REDUCTION_MUL_NO_ZEROS;
}

void run_reduction(const Node &node, const StridedTensor &x, const StridedTensor &y,
                   const ElementMask *want) {
  const ReductionAttrs &attrs = node.as<ReductionAttrs>();
  if (!reduction_supported(attrs.mode))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": reduction mode ", attrs.mode,
         " is not supported by the CPU reference");
  require_equal_rank(node, x, y);
  const int rank = x.rank;
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (want && !want->all()) {
    want->for_each([&](int64_t linear) {
      const Index index = unravel(linear, rank, y.dims);
      double acc = initial_value(attrs.mode);
      int64_t group = 0;
      for_each_source(x, y, index, [&](const Index &at) {
        acc = fold(attrs.mode, acc, round_to_compute(x.load(x.offset(at.data())), compute));
        ++group;
      });
      y.store(y.offset(index.data()), finish(attrs.mode, acc, group, compute));
    });
    return;
  }

  // Position in packed y of each x element: reduced dims contribute 0.
  Index y_packed{};
  int64_t running = 1, group = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const bool reduced = is_reduced(x, y, i);
    y_packed[i] = reduced ? 0 : running;
    running *= y.dims[i];
    if (reduced) group *= x.dims[i];
  }
  std::vector<double> acc(static_cast<size_t>(y.element_count()), initial_value(attrs.mode));
  Index index{};
  do {
    int64_t slot = 0;
    for (int i = 0; i < rank; ++i) slot += index[i] * y_packed[i];
    const double v = round_to_compute(x.load(x.offset(index.data())), compute);
    acc[slot] = fold(attrs.mode, acc[slot], v);
  } while (next_index(index, rank, x.dims));

  for (double &a : acc) a = finish(attrs.mode, a, group, compute);
  store_dense(y, acc);
}

}  // namespace cpu
}  // namespace cudnnfe
