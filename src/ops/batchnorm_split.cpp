// The split batch-norm training graph of cudnn-frontend: shape and type
// rules of genstats (the per-channel sum and sum of squares of x [N, C,
// ...]), bn_finalize (batch-norm statistics and the equivalent scale and
// bias from those sums) and dbn_weight (batch norm backward's dscale,
// dbias and the per-channel coefficients of dx). It fuses nothing; cuDNN fuses genstats after
// a convolution.
#include "core/dtype.h"
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

// Sets a per-channel output of `dims`, refusing a disagreeing override;
// FLOAT unless set.
void set_channel_output(Graph &graph, const Node &node, size_t port, const Tensor &x,
                        const std::vector<int64_t> &dims) {
  Tensor &out = set_output_shape(graph, node, port, dims, dimension_order(x));
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": ", output_port_names(node.kind)[port], " \"", out.name,
               "\" was set to ", dims_string(out.dims), "; expected ", dims_string(dims),
               " (one value per channel of x \"", x.name, "\")");
  if (out.dtype == CUDNNFE_DTYPE_NOT_SET) out.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace

void infer_genstats(Graph &graph, Node &node) {
  using namespace GenStats;
  const Tensor &x = required_input(graph, node, kX);
  if (x.dims.size() < 2)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" has ", x.dims.size(), " dims ",
               dims_string(x.dims), "; expected [N, C, ...] (at least 2)");
  set_channel_output(graph, node, kSum, x, channel_dims(x));
  set_channel_output(graph, node, kSqSum, x, channel_dims(x));
}

namespace {

void require_dims(const Node &node, size_t port, const Tensor &t, const std::vector<int64_t> &dims,
                  const char *rule) {
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), "; expected ", dims_string(dims), " (", rule, ")");
}

void require_one_element(const Node &node, size_t port, const Tensor &t) {
  if (t.element_count() != 1)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
               dims_string(t.dims), "; expected one element (a scalar)");
}

}  // namespace

void infer_bn_finalize(Graph &graph, Node &node) {
  using namespace BnFinalize;
  const Tensor &sum = required_input(graph, node, kSum);
  if (sum.dims.size() < 2)
    fail_graph(Graph::label(node), ": sum \"", sum.name, "\" has ", sum.dims.size(),
               " dims; expected [1, C, 1, ...] (genstats' output)");
  const std::vector<int64_t> dims = channel_dims(sum);
  require_dims(node, kSum, sum, dims, "one value per channel");
  for (size_t port : {kSqSum, kScale, kBias})
    require_dims(node, port, required_input(graph, node, port), dims, "sum's shape");
  require_one_element(node, kEpsilon, required_input(graph, node, kEpsilon));
  require_one_element(node, kAccumCount, required_input(graph, node, kAccumCount));
  // The running statistics come as a set: both previous values and momentum, or none.
  const int given = (node.inputs[kPrevRunningMean] != 0) + (node.inputs[kPrevRunningVar] != 0) +
                    (node.inputs[kMomentum] != 0);
  if (given != 0 && given != 3)
    fail_graph(Graph::label(node),
               ": prev_running_mean, prev_running_var and momentum are given together or not "
               "at all (",
               given, " of 3 given)");
  if (given == 3) {
    for (size_t port : {kPrevRunningMean, kPrevRunningVar})
      require_dims(node, port, required_input(graph, node, port), dims, "sum's shape");
    require_one_element(node, kMomentum, required_input(graph, node, kMomentum));
  }
  for (size_t port = 0; port < node.outputs.size(); ++port)
    if (node.outputs[port]) set_channel_output(graph, node, port, sum, dims);
}

void infer_dbn_weight(Graph &graph, Node &node) {
  using namespace DbnWeight;
  const Tensor &dy = required_input(graph, node, kDy);
  const Tensor &x = required_input(graph, node, kX);
  if (dy.dims.size() < 2)
    fail_graph(Graph::label(node), ": dy \"", dy.name, "\" has ", dy.dims.size(), " dims ",
               dims_string(dy.dims), "; expected [N, C, ...] (at least 2)");
  require_dims(node, kX, x, dy.dims, "dy's shape");
  const std::vector<int64_t> dims = channel_dims(dy);
  for (size_t port : {kMean, kInvVariance, kScale})
    require_dims(node, port, required_input(graph, node, port), dims, "one value per channel");
  for (size_t port = 0; port < node.outputs.size(); ++port)
    set_channel_output(graph, node, port, dy, dims);
}

}  // namespace cudnnfe
