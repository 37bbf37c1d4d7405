// Reduction shape rules: each output dim equals the input's or is 1. An
// output whose strides are not set is channels-last (cudnn-frontend's
// reduction.h default; row-major for 2 dims).
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_reduction(Graph &graph, Node &node) {
  const ReductionAttrs &attrs = node.as<ReductionAttrs>();
  if (std::string(reduction_mode_name(attrs.mode)) == "UNKNOWN")
    fail_graph(Graph::label(node), ": unknown reduction mode ", attrs.mode);
  const Tensor &x = required_input(graph, node, Reduction::kX);
  const size_t rank = x.dims.size();
  if (rank < 32 && (attrs.axes_mask >> rank) != 0)
    fail_graph(Graph::label(node), ": axes_mask 0x", std::hex, attrs.axes_mask, std::dec,
               " names dims beyond x \"", x.name, "\"'s ", rank, " dims");
  std::vector<int64_t> dims = x.dims;
  for (size_t i = 0; i < rank; ++i)
    if (attrs.axes_mask == 0 || (attrs.axes_mask >> i) & 1u) dims[i] = 1;
  Tensor &out = set_output_shape(graph, node, Reduction::kY, dims, channels_last_order(rank));
  if (out.dims.size() != rank)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" has ", out.dims.size(), " dims ",
               dims_string(out.dims), "; a reduction keeps x's rank ", rank);
  for (size_t i = 0; i < rank; ++i)
    if (out.dims[i] != x.dims[i] && out.dims[i] != 1)
      fail_graph(Graph::label(node), ": output \"", out.name, "\" dim ", i, " is ", out.dims[i],
                 "; it must be x's (", x.dims[i], ") or 1 (reduced)");
}

}  // namespace cudnnfe
