// A forward norm's epsilon (and batch norm's momentum) given as a tensor
// read at execute instead of a number (cudnn-frontend's pass-by-value
// tensors; cudnnfe_norm_options_t.epsilon_tensor): its input ports and its
// rule. Shared by validation, the CPU reference and the lowering so the
// three agree on the ports. The values themselves are checked when read.
#pragma once

#include <cstddef>

#include "graph/graph.h"
#include "graph/node.h"

namespace cudnnfe {

// Input ports of the optional tensors; kNone where the kind has none.
struct NormScalarPorts {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t epsilon = kNone, momentum = kNone;
};
NormScalarPorts norm_scalar_ports(OpKind kind);

// INVALID_GRAPH unless each given tensor is a one-element floating-point
// graph input (or scalar), NOT_SET becoming FLOAT: a value cuDNN can read
// by value, not one the graph computes. The GPU needs FLOAT.
void check_norm_scalar_inputs(Graph &graph, const Node &node);

// Folds a scalar (cudnnfe_graph_add_scalar) given as node `index`'s epsilon
// or momentum into the number the node takes (NormAttrs), and detaches it:
// its value is known when the graph is built, so nothing reads it at execute
// (what cudnn-frontend's Python API does with a host value; since 0.4).
// Other kinds and graph-input tensors are left alone.
void fold_scalar_operands(Graph &graph, size_t index);

}  // namespace cudnnfe
