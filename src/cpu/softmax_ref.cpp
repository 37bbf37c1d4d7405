// Softmax over the last dimension, in double: y = exp(x - max) / sum and
// stats = max + log(sum), the natural-log log-sum-exp of each row. A row of
// only -inf gives y = 0 and stats = -inf (as attention's masked rows do).
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_softmax(const Node &node, const StridedTensor &x, const StridedTensor &y,
                 const StridedTensor *stats) {
  if (x.rank != y.rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs x and y of equal rank");
  const cudnnfe_dtype_t compute = node.compute_dtype;
  std::vector<double> values = load_dense(x);
  const size_t row = static_cast<size_t>(x.dims[x.rank - 1]);
  const size_t rows = values.size() / row;
  std::vector<double> lse(rows);
  for (size_t r = 0; r < rows; ++r) {
    double *v = &values[r * row];
    double max = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < row; ++j) {
      v[j] = round_to_compute(v[j], compute);
      max = std::fmax(max, v[j]);
    }
    if (max == -std::numeric_limits<double>::infinity()) {
      for (size_t j = 0; j < row; ++j) v[j] = 0.0;
      lse[r] = max;
      continue;
    }
    double sum = 0.0;
    for (size_t j = 0; j < row; ++j) {
      v[j] = std::exp(v[j] - max);
      sum += v[j];
    }
    for (size_t j = 0; j < row; ++j) v[j] = round_to_compute(v[j] / sum, compute);
    lse[r] = round_to_compute(max + std::log(sum), compute);
  }
  store_dense(y, values);
  if (stats) store_dense(*stats, lse);
}

}  // namespace cpu
}  // namespace cudnnfe
