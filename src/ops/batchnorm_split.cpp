// The split batch-norm training graph of cudnn-frontend: genstats (the
// per-channel sum and sum of squares of x [N, C, ...]): shape rules. It
// does not fuse anything; cuDNN fuses genstats after a convolution.
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

// [1, C, 1, ...] for x [N, C, ...].
std::vector<int64_t> channel_dims(const Tensor &x) {
  std::vector<int64_t> d(x.dims.size(), 1);
  d[1] = x.dims[1];
  return d;
}

// Sets a per-channel output, refusing a disagreeing override; FLOAT unless set.
void set_channel_output(Graph &graph, const Node &node, size_t port, const Tensor &x) {
  const std::vector<int64_t> dims = channel_dims(x);
  Tensor &out = set_output_shape(graph, node, port, dims, x.strides);
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": ", output_port_names(node.kind)[port], " \"", out.name,
               "\" was set to ", dims_string(out.dims), "; expected ", dims_string(dims),
               " (one value per channel of x \"", x.name, "\")");
  if (out.dtype == CUDNNFE_DTYPE_NOT_SET) out.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace

void infer_genstats(Graph &graph, Node &node) {
  const Tensor &x = required_input(graph, node, 0);
  if (x.dims.size() < 2)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" has ", x.dims.size(), " dims ",
               dims_string(x.dims), "; expected [N, C, ...] (at least 2)");
  set_channel_output(graph, node, 0, x);
  set_channel_output(graph, node, 1, x);
}

}  // namespace cudnnfe
