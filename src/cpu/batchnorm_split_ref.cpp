// genstats in double: sum[c] = sum of x[n, c, ...] over every dim but C,
// sq_sum[c] the same of x^2. Values are read and written through the
// node's compute type, as the other reference ops do.
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

}  // namespace cpu
}  // namespace cudnnfe
