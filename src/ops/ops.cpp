// Shape inference and type checks: the rules table's entry points and the
// helpers the per-kind files share (ops/ops.h).
#include "ops/ops.h"

#include <algorithm>
#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/op_rules.h"

namespace cudnnfe {

void infer_and_check(Graph &graph, Node &node) {
  op_rules(node.kind).infer(graph, node);
}

void check_support(const Graph &graph, const Node &node, const SupportTarget &target) {
  if (auto rules = op_rules(node.kind).check_support) rules(graph, node, target);
}

static bool is_logic(const Node &node) {
  if (node.kind != OpKind::kPointwise) return false;
  const cudnnfe_pointwise_mode_t m = node.as<PointwiseAttrs>().mode;
  return m >= CUDNNFE_POINTWISE_LOGICAL_AND && m <= CUDNNFE_POINTWISE_LOGICAL_NOT;
}

// Comparisons and logic may compute in BOOLEAN, as cudnn-frontend's score
// modifiers ask (test_flexible_sdpa*.py; cuDNN takes it as their math type).
static bool boolean_math_allowed(const Node &node) {
  if (is_logic(node)) return true;
  if (node.kind != OpKind::kPointwise) return false;
  const cudnnfe_pointwise_mode_t m = node.as<PointwiseAttrs>().mode;
  return m >= CUDNNFE_POINTWISE_CMP_EQ && m <= CUDNNFE_POINTWISE_CMP_LE;
}

void check_types(Graph &graph, Node &node) {
  // Logic left to the default computes in BOOLEAN (the math type every
  // engine takes for it); a compute type the caller gives is kept, as
  // cudnn-frontend keeps it (its score modifiers ask for FLOAT logic, and
  // cuDNN's attention engines match that pattern).
  if (node.compute_dtype == CUDNNFE_DTYPE_NOT_SET && is_logic(node))
    node.compute_dtype = CUDNNFE_DTYPE_BOOLEAN;
  if (node.compute_dtype == CUDNNFE_DTYPE_NOT_SET)
    node.compute_dtype =
        graph.compute_dtype != CUDNNFE_DTYPE_NOT_SET ? graph.compute_dtype : CUDNNFE_DTYPE_FLOAT;
  // Any compute type is a well-formed graph: cuDNN decides what it takes
  // (cudnn-frontend passes the type on unchecked), and the CPU reference
  // refuses at build what it cannot compute in (compute_type_computable).
  if (auto rule = op_rules(node.kind).check_types) rule(graph, node);
}

bool compute_type_computable(const Node &node) {
  switch (node.compute_dtype) {
    case CUDNNFE_DTYPE_FLOAT:
    case CUDNNFE_DTYPE_HALF:
    case CUDNNFE_DTYPE_INT32:
    case CUDNNFE_DTYPE_DOUBLE: return true;
    case CUDNNFE_DTYPE_BOOLEAN: return boolean_math_allowed(node);
    default: return false;
  }
}

void check_numeric_inputs(Graph &graph, const Node &node, size_t end_port) {
  for (size_t port = 0; port < std::min(end_port, node.inputs.size()); ++port) {
    if (node.inputs[port] == 0) continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (!dtype_is_float(t.dtype) && t.dtype != CUDNNFE_DTYPE_INT8)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name,
                 "\" has data type ", dtype_name(t.dtype), ", which ", op_kind_name(node.kind),
                 " does not accept");
  }
}

bool output_used(const Node &node, size_t port) {
  auto used = op_rules(node.kind).output_used;
  return !used || used(node, port);
}

double effective_attn_scale(const Graph &graph, const Node &node) {
  double scale = node.kind == OpKind::kSdpa ? node.as<SdpaAttrs>().attn_scale
                                            : node.as<SdpaBackwardAttrs>().attn_scale;
  if (scale != 0.0) return scale;
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  return 1.0 / std::sqrt(static_cast<double>(q.dims.back()));
}

const Tensor &required_input(Graph &graph, const Node &node, size_t port) {
  if (node.inputs[port] == 0)
    fail_graph(Graph::label(node), ": input ", Graph::input_port(node, port), " is missing");
  return graph.tensor(node.inputs[port]);
}

int64_t checked_size(const Node &node, CheckedInt size, const std::string &what) {
  auto value = size.get();
  if (!value) fail_graph(Graph::label(node), ": ", what, " overflows 64 bits");
  return *value;
}

Tensor &set_output_shape(Graph &graph, const Node &node, size_t port,
                         const std::vector<int64_t> &dims, const DimOrder &order) {
  Tensor &out = graph.tensor(node.outputs[port]);
  const std::string what = cat(Graph::label(node), ": output \"", out.name, "\"");
  require_shape_fits(CUDNNFE_STATUS_INVALID_GRAPH, what, dims, nullptr);
  if (!out.dims_set_by_user) out.dims = dims;
  if (!out.strides_set_by_user || out.strides.size() != out.dims.size())
    out.strides = packed_strides(out.dims, order);
  require_shape_fits(CUDNNFE_STATUS_INVALID_GRAPH, what, out.dims, &out.strides);
  return out;
}

void require_rank(const Node &node, const std::string &port, const Tensor &t, size_t rank,
                  const char *expected) {
  if (t.dims.size() != rank)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has ", t.dims.size(), " dims ",
               dims_string(t.dims), "; expected ", rank, " ", expected);
}

}  // namespace cudnnfe
