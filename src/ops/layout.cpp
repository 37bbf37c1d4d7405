// Reshape, transpose, slice and concatenate: shape rules. These ops move or
// view data without arithmetic, so their outputs keep their inputs' data
// type (graph.cpp's type resolution, checked in check_types_layout).
#include <algorithm>
#include <cstdint>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

const Tensor &data_input(Graph &graph, const Node &node, size_t port) {
  const Tensor &x = required_input(graph, node, port);
  if (x.is_scalar)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", x.name,
               "\" is a scalar; ", op_kind_name(node.kind), " needs a tensor");
  return x;
}

// Every layout op has one output, y.
static_assert(same_port(Reshape::kY, Transpose::kY, Slice::kY, Concatenate::kY));

// The output with `dims`, refusing a user override that disagrees.
Tensor &exact_output(Graph &graph, const Node &node, const std::vector<int64_t> &dims,
                     const DimOrder &order, const char *rule) {
  Tensor &y = set_output_shape(graph, node, Reshape::kY, dims, order);
  if (y.dims != dims)
    fail_graph(Graph::label(node), ": output \"", y.name, "\" was set to ", dims_string(y.dims),
               " but ", rule, " gives ", dims_string(dims));
  return y;
}

void check_count(const Node &node, const char *what, size_t count, size_t rank, const Tensor &x) {
  if (count != rank)
    fail_graph(Graph::label(node), ": ", what, " has ", count, " entries but x \"", x.name,
               "\" has ", rank, " dims ", dims_string(x.dims));
}

void infer_reshape(Graph &graph, Node &node) {
  ReshapeAttrs &attrs = node.as<ReshapeAttrs>();
  const Tensor &x = data_input(graph, node, Reshape::kX);
  // Dims the caller set on y (cudnnfe_tensor_set_dims after the reshape was
  // added, or y given as the output) are the new shape: cudnn-frontend's
  // reshape without dims, whose output's set_dim decides.
  if (!node.outputs.empty() && node.outputs[Reshape::kY] != 0 &&
      graph.has_tensor(node.outputs[Reshape::kY])) {
    const Tensor &y = graph.tensor(node.outputs[Reshape::kY]);
    if (y.dims_set_by_user && !y.dims.empty()) attrs.dims = y.dims;
  }
  if (attrs.dims.empty() || attrs.dims.size() > CUDNNFE_MAX_DIMS)
    fail_graph(Graph::label(node), ": ", attrs.dims.size(), " dims requested; expected 1 to ",
               CUDNNFE_MAX_DIMS);
  for (size_t i = 0; i < attrs.dims.size(); ++i) {
    if (attrs.dims[i] <= 0)
      fail_graph(Graph::label(node), ": dim ", i, " of the new shape ", dims_string(attrs.dims),
                 " is ", attrs.dims[i], "; dims must be positive");
  }
  auto checked_count = checked_element_count(attrs.dims);
  if (!checked_count)
    fail_graph(Graph::label(node), ": the new shape ", dims_string(attrs.dims), " has more than ",
               kMaxTensorElementsText, " elements; x \"", x.name, "\" has ", x.element_count());
  const int64_t count = *checked_count;
  if (count != x.element_count())
    fail_graph(Graph::label(node), ": the new shape ", dims_string(attrs.dims), " has ", count,
               " elements but x \"", x.name, "\" ", dims_string(x.dims), " has ", x.element_count(),
               "; a reshape keeps the element count");
  exact_output(graph, node, attrs.dims, row_major_order(attrs.dims.size()), "the reshape");
}

void infer_transpose(Graph &graph, Node &node) {
  const TransposeAttrs &attrs = node.as<TransposeAttrs>();
  const Tensor &x = data_input(graph, node, Transpose::kX);
  const size_t rank = x.dims.size();
  check_count(node, "permutation", attrs.permutation.size(), rank, x);
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> dims(rank), view(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t p = attrs.permutation[i];
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)])
      fail_graph(Graph::label(node), ": permutation ", dims_string(attrs.permutation),
                 " is not a permutation of 0..", rank - 1, " (entry ", i, " is ", p, ")");
    seen[static_cast<size_t>(p)] = true;
    dims[i] = x.dims[static_cast<size_t>(p)];
    view[i] = x.strides[static_cast<size_t>(p)];
  }
  // Packed in x's memory order: x's strides permuted when x is packed (in
  // any order), i.e. a view of x's memory.
  exact_output(graph, node, dims, dimension_order(dims, view), "the permutation");
}

void infer_slice(Graph &graph, Node &node) {
  const SliceAttrs &attrs = node.as<SliceAttrs>();
  const Tensor &x = data_input(graph, node, Slice::kX);
  const size_t rank = x.dims.size();
  check_count(node, "start", attrs.start.size(), rank, x);
  check_count(node, "end", attrs.end.size(), rank, x);
  check_count(node, "step", attrs.step.size(), rank, x);
  std::vector<int64_t> dims(rank), strides(rank);
  int64_t offset = x.view_offset;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t start = attrs.start[i], end = attrs.end[i], step = attrs.step[i];
    if (step < 1)
      fail_graph(Graph::label(node), ": step of dim ", i, " is ", step, "; steps must be >= 1");
    if (start < 0 || end > x.dims[i] || start >= end)
      fail_graph(Graph::label(node), ": dim ", i, " range [", start, ", ", end,
                 ") is empty or outside x \"", x.name, "\"'s dim of ", x.dims[i],
                 "; need 0 <= start < end <= dim (no negative indices)");
    dims[i] = (end - start - 1) / step + 1;
    strides[i] = checked_size(node, CheckedInt(x.strides[i]) * step,
                              cat("stride of dim ", i, " (x stride times step)"));
    offset = checked_size(node, CheckedInt(start) * x.strides[i] + offset,
                          cat("offset of dim ", i, " (start times x stride)"));
  }
  Tensor &y = graph.tensor(node.outputs[Slice::kY]);
  if (y.dims_set_by_user && y.dims != dims)
    fail_graph(Graph::label(node), ": output \"", y.name, "\" was set to ", dims_string(y.dims),
               " but the slice gives ", dims_string(dims));
  // cudnnfe has no slice operation (cuDNN 9.19 has none; cudnn-frontend's
  // slice.h refuses its operation before cuDNN 9.22 with GRAPH_NOT_SUPPORTED
  // and otherwise offsets the pointer): a slice is a view of x, so an output
  // with a layout or a buffer of its own is a graph cudnnfe cannot run.
  if (y.strides_set_by_user && y.strides != strides)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": output \"", y.name,
         "\" strides were set to ", dims_string(y.strides), " but a slice is a view of x \"",
         x.name, "\" with strides ", dims_string(strides), " (x's strides times the steps)");
  if (!y.is_virtual)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": output \"", y.name,
         "\" is marked as a graph output, but a slice is a view of x \"", x.name,
         "\"'s buffer with no buffer of its own; feed it to an op (e.g. pointwise IDENTITY) and "
         "mark that op's output");
  y.dims = dims;
  y.strides = strides;
  y.view_of = x.view_of != 0 ? x.view_of : x.uid;
  y.view_offset = offset;
}

void infer_concatenate(Graph &graph, Node &node) {
  const ConcatAttrs &attrs = node.as<ConcatAttrs>();
  size_t count = 0;
  while (count < node.inputs.size() && node.inputs[count] != 0) ++count;
  for (size_t port = count; port < node.inputs.size(); ++port)
    if (node.inputs[port] != 0)
      fail_graph(Graph::label(node), ": input ", Graph::input_port(node, port),
                 " is given but input ", Graph::input_port(node, count),
                 " is not; inputs fill x0, x1, ... without gaps");
  if (count < 2)
    fail_graph(Graph::label(node), ": ", count, " input(s); concatenate joins 2 to ",
               kMaxConcatInputs, " tensors");
  const Tensor &first = data_input(graph, node, Concatenate::kX0);
  const int rank = static_cast<int>(first.dims.size());
  if (attrs.axis < 0 || attrs.axis >= rank)
    fail_graph(Graph::label(node), ": axis ", attrs.axis, " is outside x0 \"", first.name, "\"'s ",
               rank, " dims");
  std::vector<int64_t> dims = first.dims;
  dims[attrs.axis] = 0;
  for (size_t port = 0; port < count; ++port) {
    const Tensor &t = data_input(graph, node, port);
    if (t.dims.size() != first.dims.size())
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" has ",
                 t.dims.size(), " dims ", dims_string(t.dims), " but x0 \"", first.name, "\" has ",
                 rank, "; concatenated tensors need equal ranks");
    for (int i = 0; i < rank; ++i)
      if (i != attrs.axis && t.dims[i] != first.dims[i])
        fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" ",
                   dims_string(t.dims), " differs from x0 \"", first.name, "\" ",
                   dims_string(first.dims), " at dim ", i, "; only the axis (", attrs.axis,
                   ") may differ");
    dims[attrs.axis] = checked_size(node, CheckedInt(dims[attrs.axis]) + t.dims[attrs.axis],
                                    cat("the concatenated axis ", attrs.axis));
  }
  exact_output(graph, node, dims, dimension_order(first), "the concatenation");
}

}  // namespace

void infer_layout(Graph &graph, Node &node) {
  switch (node.kind) {
    case OpKind::kReshape: return infer_reshape(graph, node);
    case OpKind::kTranspose: return infer_transpose(graph, node);
    case OpKind::kSlice: return infer_slice(graph, node);
    default: return infer_concatenate(graph, node);
  }
}

void check_types_layout(Graph &graph, Node &node) {
  const Tensor &y = graph.tensor(node.outputs[Reshape::kY]);
  for (size_t port = 0; port < node.inputs.size(); ++port) {
    if (node.inputs[port] == 0) continue;
    const Tensor &x = graph.tensor(node.inputs[port]);
    if (x.dtype != y.dtype)
      fail_graph(Graph::label(node), ": output \"", y.name, "\" has data type ",
                 dtype_name(y.dtype), " but ", Graph::input_port(node, port), " \"", x.name,
                 "\" has ", dtype_name(x.dtype), "; ", op_kind_name(node.kind),
                 " does not convert types (add a pointwise IDENTITY to convert)");
  }
}

}  // namespace cudnnfe
