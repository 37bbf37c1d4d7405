// Batched matrix multiply with broadcast batch dims, accumulated in double.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_matmul(const Node &node, const StridedTensor &a, const StridedTensor &b,
                const StridedTensor &c) {
  const int rank = c.rank;
  if (rank < 2 || a.rank != rank || b.rank != rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs a, b and c of equal rank >= 2");
  const int64_t m = c.dims[rank - 2], n = c.dims[rank - 1], k = a.dims[rank - 1];
  const cudnnfe_dtype_t compute = node.compute_dtype;

  // Batch index space is c's leading dims; a and b read them broadcast.
  Index batch_dims{};
  for (int i = 0; i + 2 < rank; ++i) batch_dims[i] = c.dims[i];
  const int batch_rank = rank - 2;
  const Index a_strides = broadcast_strides(a, rank, c.dims);
  const Index b_strides = broadcast_strides(b, rank, c.dims);

  std::vector<double> a_row(static_cast<size_t>(k)), b_mat(static_cast<size_t>(k * n)),
      acc(static_cast<size_t>(n));
  Index batch{};
  do {
    int64_t a_base = 0, b_base = 0, c_base = 0;
    for (int i = 0; i < batch_rank; ++i) {
      a_base += batch[i] * a_strides[i];
      b_base += batch[i] * b_strides[i];
      c_base += batch[i] * c.strides[i];
    }
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        b_mat[kk * n + j] = round_to_compute(
            b.load(b_base + kk * b.strides[rank - 2] + j * b.strides[rank - 1]), compute);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t kk = 0; kk < k; ++kk)
        a_row[kk] = round_to_compute(
            a.load(a_base + i * a.strides[rank - 2] + kk * a.strides[rank - 1]), compute);
      std::fill(acc.begin(), acc.end(), 0.0);
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j) acc[j] += a_row[kk] * b_mat[kk * n + j];
      for (int64_t j = 0; j < n; ++j)
        c.store(c_base + i * c.strides[rank - 2] + j * c.strides[rank - 1],
                round_to_compute(acc[j], compute));
    }
  } while (next_index(batch, batch_rank, batch_dims));
}

}  // namespace cpu
}  // namespace cudnnfe
