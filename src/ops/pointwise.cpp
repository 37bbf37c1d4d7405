// Pointwise shape rules: operands of equal rank whose dims equal the
// output's or are 1 (broadcast); the output's strides follow its operands'.
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

// Pointwise's inputs in0, in1 and in2 (graph/op_list.def).
constexpr int kOperands = Pointwise::kInputCount;

// cudnn-frontend's rule: an output whose strides were not set takes the exact strides of the
// first operand with its dims, so that a result can be written in place into a strided view
// (a slice of a larger tensor). A broadcast operand (a stride 0 on a dim > 1) would make
// elements overlap, so it gives none; without such an operand the output stays packed in the
// widest operand's order. A slice (a view into its input's buffer, whose strides are its
// parent's) gives none either: cudnn-frontend's slice output is a tensor of its own.
static void take_operand_strides(Graph &graph, const Node &node, int arity, Tensor &out) {
  for (int port = 0; port < arity; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dims != out.dims || t.view_of != 0) continue;
    bool overlaps = false;
    for (size_t i = 0; i < t.dims.size(); ++i) overlaps |= t.dims[i] > 1 && t.strides[i] == 0;
    if (!overlaps) out.strides = t.strides;
    return;
  }
}

// The dims whose strides say something about the layout: size > 1 and not
// a broadcast (stride 0). A per-channel [1,C,1,1] has one, an NHWC [N,1,H,W]
// three.
static int layout_dims(const Tensor &t) {
  int count = 0;
  for (size_t i = 0; i < t.dims.size(); ++i) count += t.dims[i] > 1 && t.strides[i] != 0;
  return count;
}

// The operand whose dimension order a broadcast output takes: the one with
// the most layout dims, then the most elements, then the first. A scalar-like
// or per-channel operand must not decide the layout of a wider result (a
// bias [1,K,1,1] with K > N*H*W has more elements than x [N,1,H,W] but says
// nothing about where H and W go).
static const Tensor &layout_operand(Graph &graph, const Node &node, int arity) {
  const Tensor *best = &graph.tensor(node.inputs[Pointwise::kIn0]);
  for (int port = Pointwise::kIn1; port < arity; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    const int a = layout_dims(t), b = layout_dims(*best);
    if (a > b || (a == b && t.element_count() > best->element_count())) best = &t;
  }
  return *best;
}

void infer_pointwise(Graph &graph, Node &node) {
  const PointwiseAttrs &attrs = node.as<PointwiseAttrs>();
  const int arity = pointwise_arity(attrs.mode);
  if (arity == 0) fail_graph(Graph::label(node), ": unknown pointwise mode ", attrs.mode);
  for (int port = 0; port < kOperands; ++port) {
    bool given = node.inputs[port] != 0;
    if (port < arity && !given)
      fail_graph(Graph::label(node), ": mode ", pointwise_mode_name(attrs.mode), " reads ", arity,
                 " input(s) but ", Graph::input_port(node, port), " is missing");
    if (port >= arity && given)
      fail_graph(Graph::label(node), ": mode ", pointwise_mode_name(attrs.mode), " reads ", arity,
                 " input(s) but ", Graph::input_port(node, port), " was given");
  }
  // Scalars take the rank of the other operands (all ones); see
  // cudnnfe_graph_add_scalar.
  size_t rank = 0;
  for (int port = 0; port < arity; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (!t.is_scalar) rank = std::max(rank, t.dims.size());
  }
  for (int port = 0; port < arity && rank > 0; ++port) {
    Tensor &t = graph.tensor(node.inputs[port]);
    if (t.is_scalar && t.dims.size() != rank) {
      t.dims.assign(rank, 1);
      t.strides.assign(rank, 1);
    }
  }
  const Tensor &first = graph.tensor(node.inputs[Pointwise::kIn0]);
  std::vector<int64_t> dims = first.dims;
  for (int port = Pointwise::kIn1; port < arity; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dims.size() != dims.size())
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" has ",
                 t.dims.size(), " dims ", dims_string(t.dims), " but in0 \"", first.name, "\" has ",
                 dims.size(), " ", dims_string(first.dims),
                 "; pointwise operands need equal ranks");
    for (size_t i = 0; i < dims.size(); ++i) {
      if (t.dims[i] != dims[i] && t.dims[i] != 1 && dims[i] != 1)
        fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" ",
                   dims_string(t.dims), " does not broadcast with ", dims_string(dims), " at dim ",
                   i, " (", t.dims[i], " vs ", dims[i], ")");
      dims[i] = std::max(dims[i], t.dims[i]);
    }
  }
  if (attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX &&
      (attrs.axis < 0 || attrs.axis >= static_cast<int>(dims.size())))
    fail_graph(Graph::label(node), ": GEN_INDEX axis ", attrs.axis, " is outside in0's ",
               dims.size(), " dims");
  const Tensor &layout = layout_operand(graph, node, arity);
  Tensor &out = set_output_shape(graph, node, Pointwise::kOut, dims, dimension_order(layout));
  if (!out.strides_set_by_user) take_operand_strides(graph, node, arity, out);
  if (out.dims.size() != dims.size())
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but the operands have ", dims.size(), " dims");
  for (int port = 0; port < arity; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    for (size_t i = 0; i < dims.size(); ++i)
      if (t.dims[i] != out.dims[i] && t.dims[i] != 1)
        fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" ",
                   dims_string(t.dims), " does not broadcast to output ", dims_string(out.dims));
  }
  // Comparisons and logic produce booleans; GEN_INDEX produces indices.
  if (out.dtype == CUDNNFE_DTYPE_NOT_SET) {
    if (attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX) out.dtype = CUDNNFE_DTYPE_INT32;
    if ((attrs.mode >= CUDNNFE_POINTWISE_CMP_EQ && attrs.mode <= CUDNNFE_POINTWISE_CMP_LE) ||
        (attrs.mode >= CUDNNFE_POINTWISE_LOGICAL_AND &&
         attrs.mode <= CUDNNFE_POINTWISE_LOGICAL_NOT))
      out.dtype = CUDNNFE_DTYPE_BOOLEAN;
  }
}

}  // namespace cudnnfe
