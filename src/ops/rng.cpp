// Random numbers: shape and parameter rules. The output's shape comes from
// the node's attributes; seed and offset are optional one-element tensors
// (given together).
#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_rng(Graph &graph, Node &node) {
  const RngAttrs &attrs = node.as<RngAttrs>();
  if (std::string(rng_distribution_name(attrs.distribution)) == "UNKNOWN")
    fail_graph(Graph::label(node), ": unknown distribution ", attrs.distribution);
  switch (attrs.distribution) {
    case CUDNNFE_RNG_BERNOULLI:
      if (!(attrs.bernoulli_probability >= 0.0 && attrs.bernoulli_probability <= 1.0))
        fail_graph(Graph::label(node), ": bernoulli_probability is ", attrs.bernoulli_probability,
                   "; it must be in [0, 1]");
      break;
    case CUDNNFE_RNG_UNIFORM:
      if (!std::isfinite(attrs.uniform_min) || !std::isfinite(attrs.uniform_max) ||
          !(attrs.uniform_min < attrs.uniform_max))
        fail_graph(Graph::label(node), ": uniform range [", attrs.uniform_min, ", ",
                   attrs.uniform_max, ") must be finite with min < max");
      break;
    default:
      if (!std::isfinite(attrs.normal_mean) || !std::isfinite(attrs.normal_stddev) ||
          attrs.normal_stddev < 0.0)
        fail_graph(Graph::label(node), ": normal mean ", attrs.normal_mean, " and stddev ",
                   attrs.normal_stddev, " must be finite with stddev >= 0");
      break;
  }
  if (attrs.dims.empty() || attrs.dims.size() > CUDNNFE_MAX_DIMS)
    fail_graph(Graph::label(node), ": ", attrs.dims.size(), " dims requested; expected 1 to ",
               CUDNNFE_MAX_DIMS);
  for (size_t i = 0; i < attrs.dims.size(); ++i)
    if (attrs.dims[i] <= 0)
      fail_graph(Graph::label(node), ": dim ", i, " of ", dims_string(attrs.dims), " is ",
                 attrs.dims[i], "; dims must be positive");
  if ((node.inputs[Rng::kSeed] == 0) != (node.inputs[Rng::kOffset] == 0))
    fail_graph(Graph::label(node), ": ", node.inputs[Rng::kSeed] ? "seed" : "offset",
               " is given without ", node.inputs[Rng::kSeed] ? "offset" : "seed",
               "; give both tensors, or neither (then options.seed and offset 0 are used)");
  for (size_t port : {Rng::kSeed, Rng::kOffset}) {
    if (!node.inputs[port]) continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.element_count() != 1)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" ",
                 dims_string(t.dims), " has ", t.element_count(),
                 " elements; it must hold exactly one");
  }
  Tensor &y =
      set_output_shape(graph, node, Rng::kY, attrs.dims, row_major_order(attrs.dims.size()));
  if (y.dims != attrs.dims)
    fail_graph(Graph::label(node), ": output \"", y.name, "\" was set to ", dims_string(y.dims),
               " but the rng's dims are ", dims_string(attrs.dims));
}

void check_types_rng(Graph &graph, Node &node) {
  for (size_t port : {Rng::kSeed, Rng::kOffset}) {
    if (!node.inputs[port]) continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dtype != CUDNNFE_DTYPE_INT64 && t.dtype != CUDNNFE_DTYPE_INT32)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name,
                 "\" has data type ", dtype_name(t.dtype),
                 "; seed and offset are INT64 (or INT32)");
  }
}

}  // namespace cudnnfe
