// Batched matrix multiply with broadcast batch dims, accumulated in double.
#include <algorithm>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

void require_ranks(const Node &node, const StridedTensor &a, const StridedTensor &b,
                   const StridedTensor &c) {
  if (c.rank < 2 || a.rank != c.rank || b.rank != c.rank)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs a, b and c of equal rank >= 2");
}

// The logical index of a's (or b's) element (batch of c's `index`, row,
// column), batch dims of size 1 broadcast.
int64_t operand_linear(const StridedTensor &t, const Index &index, int64_t row, int64_t col) {
  const int rank = t.rank;
  int64_t linear = 0;
  for (int i = 0; i + 2 < rank; ++i) linear = linear * t.dims[i] + (t.dims[i] == 1 ? 0 : index[i]);
  return (linear * t.dims[rank - 2] + row) * t.dims[rank - 1] + col;
}

// Verify mode: the wanted elements of c only, each a dot product of k terms.
void sampled_matmul(const Node &node, const StridedTensor &a, const StridedTensor &b,
                    const StridedTensor &c, const ElementMask &want) {
  const int rank = c.rank;
  const int64_t k = a.dims[rank - 1];
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const Index a_strides = broadcast_strides(a, rank, c.dims);
  const Index b_strides = broadcast_strides(b, rank, c.dims);
  want.for_each([&](int64_t linear) {
    const Index index = unravel(linear, rank, c.dims);
    int64_t a_at = index[rank - 2] * a.strides[rank - 2],
            b_at = index[rank - 1] * b.strides[rank - 1];
    for (int i = 0; i + 2 < rank; ++i) {
      a_at += index[i] * a_strides[i];
      b_at += index[i] * b_strides[i];
    }
    double acc = 0.0;
    for (int64_t kk = 0; kk < k; ++kk)
      acc += round_to_compute(a.load(a_at + kk * a.strides[rank - 1]), compute) *
             round_to_compute(b.load(b_at + kk * b.strides[rank - 2]), compute);
    c.store(c.offset(index.data()), round_to_compute(acc, compute));
  });
}

}  // namespace

// c[..., i, j] reads row i of a and column j of b (of its batch).
void demand_matmul(const DemandStep &t) {
  const ElementMask *want = t.wanted(Matmul::kC);
  if (!want) return;
  const StridedTensor &a = *t.in(Matmul::kA), &b = *t.in(Matmul::kB), &c = *t.out(Matmul::kC);
  require_ranks(t.node, a, b, c);
  const int rank = c.rank;
  const int64_t k = a.dims[rank - 1];
  want->for_each([&](int64_t linear) {
    const Index index = unravel(linear, rank, c.dims);
    const int64_t a_row = operand_linear(a, index, index[rank - 2], 0);
    t.needed(0)->set_range(a_row, a_row + k);
    for (int64_t kk = 0; kk < k; ++kk)
      t.needed(1)->set(operand_linear(b, index, kk, index[rank - 1]));
  });
}

void run_matmul(const Node &node, const StridedTensor &a, const StridedTensor &b,
                const StridedTensor &c, const ElementMask *want) {
  require_ranks(node, a, b, c);
  if (want && !want->all()) return sampled_matmul(node, a, b, c, *want);
  const int rank = c.rank;
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
