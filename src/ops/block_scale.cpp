// Block-scale quantize and dequantize (microscaling): shape rules. x is cut
// into blocks of block_size consecutive elements along one axis; the scale
// tensor has one element per block (x's dims with the axis divided by
// block_size). The types are cuDNN's to decide; the CPU reference computes
// MXFP8 only (cpu/reference_table.cpp, check_block_scale).
#include <algorithm>
#include <numeric>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

const Tensor &tensor_input(Graph &graph, const Node &node, size_t port) {
  const Tensor &t = required_input(graph, node, port);
  if (t.is_scalar)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name,
               "\" is a scalar; ", op_kind_name(node.kind), " needs a tensor");
  return t;
}

// Resolves the axis against x's rank and checks block_size divides it.
int checked_axis(const Node &node, const Tensor &x) {
  const BlockScaleAttrs &a = node.as<BlockScaleAttrs>();
  const int rank = static_cast<int>(x.dims.size());
  if (a.block_size < 1)
    fail_graph(Graph::label(node), ": block_size is ", a.block_size, "; it must be at least 1");
  const int axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (axis < 0 || axis >= rank)
    fail_graph(Graph::label(node), ": axis ", a.axis, " is outside x \"", x.name, "\"'s ", rank,
               " dims ", dims_string(x.dims), " (negative axes count from the end)");
  if (x.dims[axis] % a.block_size != 0)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" ", dims_string(x.dims), " has ",
               x.dims[axis], " elements along axis ", axis, ", not a multiple of block_size ",
               a.block_size, "; every block must be whole");
  return axis;
}

std::vector<int64_t> scale_dims(const Node &node, const Tensor &x, int axis) {
  std::vector<int64_t> dims = x.dims;
  dims[axis] /= node.as<BlockScaleAttrs>().block_size;
  return dims;
}

// x's dimension order with `axis` moved innermost.
DimOrder axis_innermost_order(const Tensor &x, int axis) {
  DimOrder order = dimension_order(x);
  std::vector<size_t> &o = order.outer_to_inner;
  o.erase(std::find(o.begin(), o.end(), static_cast<size_t>(axis)));
  o.push_back(static_cast<size_t>(axis));
  return order;
}

void require_dims(const Node &node, const Tensor &t, const char *port,
                  const std::vector<int64_t> &dims, const char *rule) {
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has dims ", dims_string(t.dims),
               " but ", rule, " gives ", dims_string(dims));
}

void infer_quantize(Graph &graph, Node &node) {
  const BlockScaleAttrs &a = node.as<BlockScaleAttrs>();
  const Tensor &x = tensor_input(graph, node, BlockScaleQuantize::kX);
  const int axis = checked_axis(node, x);
  const std::vector<int64_t> x_dims = x.dims;
  const DimOrder layout = a.transpose ? axis_innermost_order(x, axis) : dimension_order(x);
  const std::vector<int64_t> s_dims = scale_dims(node, x, axis);
  Tensor &y = set_output_shape(graph, node, BlockScaleQuantize::kY, x_dims, layout);
  require_dims(node, y, "output y", x_dims, "x's shape");
  if (y.dtype == CUDNNFE_DTYPE_NOT_SET) y.dtype = a.y_dtype;
  Tensor &scale = set_output_shape(graph, node, BlockScaleQuantize::kScale, s_dims, layout);
  require_dims(node, scale, "output scale", s_dims,
               cat("x's dims with axis ", axis, " divided by block_size ", a.block_size).c_str());
  if (scale.dtype == CUDNNFE_DTYPE_NOT_SET) scale.dtype = CUDNNFE_DTYPE_FP8_E8M0;
}

void infer_dequantize(Graph &graph, Node &node) {
  const BlockScaleAttrs &a = node.as<BlockScaleAttrs>();
  const Tensor &x = tensor_input(graph, node, BlockScaleDequantize::kX);
  const Tensor &scale = tensor_input(graph, node, BlockScaleDequantize::kScale);
  const int axis = checked_axis(node, x);
  const std::vector<int64_t> x_dims = x.dims;
  const DimOrder x_order = dimension_order(x);
  require_dims(node, scale, "input scale", scale_dims(node, x, axis),
               cat("x's dims with axis ", axis, " divided by block_size ", a.block_size).c_str());
  Tensor &y = set_output_shape(graph, node, BlockScaleDequantize::kY, x_dims, x_order);
  require_dims(node, y, "output y", x_dims, "x's shape");
  // An FP8 x must not pass its type on to a graph output (graph.cpp's
  // resolution would): without an io type a bound y is FLOAT.
  if (y.dtype == CUDNNFE_DTYPE_NOT_SET && !y.is_virtual && graph.io_dtype == CUDNNFE_DTYPE_NOT_SET)
    y.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace

void infer_block_scale(Graph &graph, Node &node) {
  if (node.kind == OpKind::kBlockScaleQuantize) return infer_quantize(graph, node);
  infer_dequantize(graph, node);
}

}  // namespace cudnnfe
