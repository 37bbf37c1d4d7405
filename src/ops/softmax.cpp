// Softmax over the last dimension: shape rules.
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_softmax(Graph &graph, Node &node) {
  const Tensor &x = required_input(graph, node, Softmax::kX);
  Tensor &y = set_output_shape(graph, node, Softmax::kY, x.dims, dimension_order(x));
  if (y.dims != x.dims)
    fail_graph(Graph::label(node), ": output \"", y.name, "\" was set to ", dims_string(y.dims),
               " but softmax keeps x \"", x.name, "\"'s shape ", dims_string(x.dims));
  if (node.outputs[Softmax::kStats]) {
    std::vector<int64_t> dims = x.dims;
    dims.back() = 1;
    Tensor &stats =
        set_output_shape(graph, node, Softmax::kStats, dims, row_major_order(dims.size()));
    if (stats.dims != dims)
      fail_graph(Graph::label(node), ": stats \"", stats.name, "\" was set to ",
                 dims_string(stats.dims), "; stats are ", dims_string(dims));
    if (stats.dtype == CUDNNFE_DTYPE_NOT_SET) stats.dtype = CUDNNFE_DTYPE_FLOAT;
  }
}

}  // namespace cudnnfe
