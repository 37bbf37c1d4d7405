// Matmul shape rules: c[..., M, N] = a[..., M, K] @ b[..., K, N] with batch
// dims broadcast where one side is 1.
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_matmul(Graph &graph, Node &node) {
  const Tensor &a = required_input(graph, node, Matmul::kA);
  const Tensor &b = required_input(graph, node, Matmul::kB);
  const size_t rank = a.dims.size();
  if (rank < 2)
    fail_graph(Graph::label(node), ": a \"", a.name, "\" has ", rank, " dim ", dims_string(a.dims),
               "; matmul needs at least 2 [..., M, K]");
  if (b.dims.size() != rank)
    fail_graph(Graph::label(node), ": a \"", a.name, "\" has ", rank, " dims ", dims_string(a.dims),
               " but b \"", b.name, "\" has ", b.dims.size(), " dims ", dims_string(b.dims),
               "; ranks must match");
  const int64_t m = a.dims[rank - 2], k = a.dims[rank - 1];
  const int64_t kb = b.dims[rank - 2], n = b.dims[rank - 1];
  if (k != kb)
    fail_graph(Graph::label(node), ": a \"", a.name, "\" ", dims_string(a.dims), " has K = ", k,
               " but b \"", b.name, "\" ", dims_string(b.dims), " has K = ", kb,
               "; a's last dim must equal b's second-to-last");
  std::vector<int64_t> c(rank);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (a.dims[i] != b.dims[i] && a.dims[i] != 1 && b.dims[i] != 1)
      fail_graph(Graph::label(node), ": batch dim ", i, " is ", a.dims[i], " in a \"", a.name,
                 "\" and ", b.dims[i], " in b \"", b.name, "\"; they must match or one be 1");
    c[i] = std::max(a.dims[i], b.dims[i]);
  }
  c[rank - 2] = m;
  c[rank - 1] = n;
  Tensor &out = set_output_shape(graph, node, Matmul::kC, c, row_major_order(c.size()));
  if (out.dims != c)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but the matmul produces ", dims_string(c));
}

}  // namespace cudnnfe
