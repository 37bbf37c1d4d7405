// moe_grouped_matmul and moe_grouped_matmul_backward: shape and type rules
// (docs/moe.md). Forward: output[1, R, N] from token[1, T, K] and
// weight[E, K, N], R the routed rows of the mode. Backward: dweight[E, K, N]
// from doutput[1, T, N] and token[1, T, K].
#include "ops/moe_grouped_matmul.h"

#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

using Mode = cudnnfe_moe_grouped_matmul_mode_t;

const Tensor &tensor_input(Graph &graph, const Node &node, size_t port) {
  const Tensor &t = required_input(graph, node, port);
  if (t.is_scalar)
    fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name,
               "\" is a scalar; ", op_kind_name(node.kind), " needs a tensor");
  return t;
}

// [1, rows, cols]: one batch of row vectors.
void require_row_matrix(const Node &node, const std::string &port, const Tensor &t) {
  require_rank(node, port, t, 3, "[1, rows, cols]");
  if (t.dims[0] != 1)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has dims ", dims_string(t.dims),
               "; dim 0 must be 1 ([1, rows, cols])");
}

// [rows, 1, 1] or [1, rows, 1]: a column of INT32 indices along `axis`.
void require_index_column(const Node &node, const std::string &port, const Tensor &t, int axis,
                          int64_t rows, const char *rule) {
  std::vector<int64_t> dims{1, 1, 1};
  dims[axis] = rows;
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has dims ", dims_string(t.dims),
               "; expected ", dims_string(dims), " (", rule, ")");
}

// The group count first_token_offset gives for `experts` experts.
MoeGroups checked_groups(const Node &node, const Tensor &offsets, int64_t experts) {
  require_rank(node, "first_token_offset", offsets, 3, "[G, 1, 1] or [G + 1, 1, 1]");
  const MoeGroups g = moe_groups(offsets.dims[0], experts);
  if (g.count == 0 || offsets.dims[1] != 1 || offsets.dims[2] != 1)
    fail_graph(Graph::label(node), ": first_token_offset \"", offsets.name, "\" has dims ",
               dims_string(offsets.dims), " for ", experts,
               " experts; expected [G, 1, 1] group starts (E > 1) or [G + 1, 1, 1] boundaries, "
               "G a positive multiple of the expert count");
  return g;
}

// A port the mode reads must be given; one it does not read must not be.
void require_port_use(Graph &graph, const Node &node, size_t port, bool read) {
  const Mode mode = node.as<MoeGroupedMatmulAttrs>().mode;
  if (read && node.inputs[port] == 0)
    fail_graph(Graph::label(node), ": mode ", moe_grouped_matmul_mode_name(mode), " reads input ",
               Graph::input_port(node, port), ", which is missing");
  if (!read && node.inputs[port] != 0)
    fail_graph(Graph::label(node), ": input ", Graph::input_port(node, port), " \"",
               graph.tensor(node.inputs[port]).name, "\" is given but mode ",
               moe_grouped_matmul_mode_name(mode), " does not read it; pass 0");
}

void infer_forward(Graph &graph, Node &node) {
  using namespace MoeGroupedMatmul;
  const MoeGroupedMatmulAttrs &a = node.as<MoeGroupedMatmulAttrs>();
  if (!moe_grouped_matmul_mode_is_valid(a.mode))
    fail_graph(Graph::label(node), ": mode ", a.mode, " is not NONE, GATHER or SCATTER");
  if (a.top_k < 1) fail_graph(Graph::label(node), ": top_k is ", a.top_k, "; it must be >= 1");
  const Tensor &token = tensor_input(graph, node, kToken);
  const Tensor &weight = tensor_input(graph, node, kWeight);
  const Tensor &offsets = tensor_input(graph, node, kFirstTokenOffset);
  require_row_matrix(node, "token", token);
  require_rank(node, "weight", weight, 3, "[E, K, N]");
  if (weight.dims[1] != token.dims[2])
    fail_graph(Graph::label(node), ": token \"", token.name, "\" ", dims_string(token.dims),
               " has K = ", token.dims[2], " but weight \"", weight.name, "\" ",
               dims_string(weight.dims), " has K = ", weight.dims[1],
               "; token's dim 2 must equal weight's dim 1");
  checked_groups(node, offsets, weight.dims[0]);
  const bool gather = a.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER;
  const bool scatter = a.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER;
  require_port_use(graph, node, kTokenIndex, gather || scatter);
  require_port_use(graph, node, kTokenKs, scatter);
  int64_t rows = token.dims[1];
  if (gather) rows = tensor_input(graph, node, kTokenIndex).dims[1];
  if (gather || scatter)
    require_index_column(node, "token_index", tensor_input(graph, node, kTokenIndex), 1, rows,
                         "one token row per routed row");
  if (scatter)
    require_index_column(node, "token_ks", tensor_input(graph, node, kTokenKs), 1, rows,
                         "one top-k slot per routed row");
  const std::vector<int64_t> dims{1, rows, weight.dims[2]};
  Tensor &out =
      set_output_shape(graph, node, MoeGroupedMatmul::kOutput, dims, row_major_order(dims.size()));
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but the mode ", moe_grouped_matmul_mode_name(a.mode), " produces ",
               dims_string(dims));
}

void infer_backward(Graph &graph, Node &node) {
  const Tensor &doutput = tensor_input(graph, node, MoeGroupedMatmulBackward::kDoutput);
  const Tensor &token = tensor_input(graph, node, MoeGroupedMatmulBackward::kToken);
  const Tensor &offsets = tensor_input(graph, node, MoeGroupedMatmulBackward::kFirstTokenOffset);
  require_row_matrix(node, "doutput", doutput);
  require_row_matrix(node, "token", token);
  if (doutput.dims[1] != token.dims[1])
    fail_graph(Graph::label(node), ": doutput \"", doutput.name, "\" ", dims_string(doutput.dims),
               " and token \"", token.name, "\" ", dims_string(token.dims),
               " must have the same rows (dim 1)");
  require_rank(node, "first_token_offset", offsets, 3, "[G, 1, 1] or [G + 1, 1, 1]");
  const int64_t k = token.dims[2], n = doutput.dims[2];
  const std::vector<int64_t> dims{offsets.dims[0], k, n};
  // Column-major in K and N, as cuDNN's weights are (strides [K*N, 1, K]).
  Tensor &dweight =
      set_output_shape(graph, node, MoeGroupedMatmulBackward::kDweight, dims, DimOrder{{0, 2, 1}});
  require_rank(node, "dweight", dweight, 3, "[E, K, N]");
  if (dweight.dims[1] != k || dweight.dims[2] != n)
    fail_graph(Graph::label(node), ": dweight \"", dweight.name, "\" was set to ",
               dims_string(dweight.dims), "; expected [E, ", k, ", ", n,
               "] (token's K, doutput's N)");
  checked_groups(node, offsets, dweight.dims[0]);
}

void require_type(const Node &node, const Tensor &t, const std::string &port, bool ok,
                  const char *expected) {
  if (!ok)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has data type ",
               dtype_name(t.dtype), "; ", op_kind_name(node.kind), " needs ", expected);
}

}  // namespace

void infer_moe_grouped_matmul(Graph &graph, Node &node) {
  if (node.kind == OpKind::kMoeGroupedMatmul) return infer_forward(graph, node);
  infer_backward(graph, node);
}

void check_types_moe_grouped_matmul(Graph &graph, Node &node) {
  // Offsets and indices count rows: an integer type (cudnn-frontend's samples
  // use INT32). The matrices' and the output's types are cuDNN's to decide
  // (the CPU reference reads and writes every type).
  const bool forward = node.kind == OpKind::kMoeGroupedMatmul;
  const size_t offset_port = forward ? size_t{MoeGroupedMatmul::kFirstTokenOffset}
                                     : size_t{MoeGroupedMatmulBackward::kFirstTokenOffset};
  for (size_t port = offset_port; port < node.inputs.size(); ++port) {
    if (node.inputs[port] == 0) continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    require_type(node, t, Graph::input_port(node, port), dtype_is_integer(t.dtype),
                 "an integer type for offsets and indices (INT32 in cudnn-frontend's samples)");
  }
}

}  // namespace cudnnfe
