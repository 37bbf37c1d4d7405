// A forward norm's epsilon and momentum tensors: their ports (the ports
// named so in graph/op_list.def) and their rule. Not their values: the CPU
// reference reads those at execute (cpu/reference_table.cpp).
#include "ops/norm_scalars.h"

#include "core/dtype.h"
#include "core/error.h"
#include "graph/op_schema.h"
#include "ops/ops.h"

namespace cudnnfe {

NormScalarPorts norm_scalar_ports(OpKind kind) {
  // The forward norms whose rows name these ports; bn_finalize's epsilon and
  // momentum are required operands with rules of their own.
  NormScalarPorts p;
  if (kind == OpKind::kBnFinalize) return p;
  const std::vector<std::string> &inputs = op_schema(kind).inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == "epsilon") p.epsilon = i;
    if (inputs[i] == "momentum") p.momentum = i;
  }
  return p;
}

namespace {

void check_one(Graph &graph, const Node &node, size_t port) {
  if (port == NormScalarPorts::kNone || port >= node.inputs.size() || node.inputs[port] == 0)
    return;
  Tensor &t = graph.tensor(node.inputs[port]);
  const std::string where =
      Graph::label(node) + ": " + Graph::input_port(node, port) + " \"" + t.name + "\"";
  // cuDNN reads epsilon and the exponential average factor by value
  // (cudnn_graph.h: CUDNN_ATTR_TENSOR_IS_BY_VALUE "should be set to true" on
  // CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC), which a computed tensor
  // cannot be.
  if (t.producer >= 0)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, where,
         " is computed by the graph; cuDNN reads it by value, so it must be a graph input (a "
         "value read at execute, pass-by-value for the GPU)");
  if (t.element_count() != 1)
    fail_graph(where, " has ", t.element_count(), " elements ", dims_string(t.dims),
               "; expected one");
  if (t.dtype == CUDNNFE_DTYPE_NOT_SET) t.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace

void fold_scalar_operands(Graph &graph, size_t index) {
  const Node &node = graph.nodes().at(index);
  const NormScalarPorts p = norm_scalar_ports(node.kind);
  for (size_t port : {p.epsilon, p.momentum}) {
    if (port == NormScalarPorts::kNone || port >= node.inputs.size() || node.inputs[port] == 0)
      continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (!t.is_scalar) continue;
    NormAttrs &attrs = graph.nodes()[index].as<NormAttrs>();
    (port == p.epsilon ? attrs.epsilon : attrs.momentum) = t.scalar_value;
    graph.set_node_input(index, port, 0);
  }
}

void check_norm_scalar_inputs(Graph &graph, const Node &node) {
  const NormScalarPorts p = norm_scalar_ports(node.kind);
  check_one(graph, node, p.epsilon);
  check_one(graph, node, p.momentum);
}

}  // namespace cudnnfe
