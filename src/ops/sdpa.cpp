// Scaled dot-product attention shape and type rules.
#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

namespace {

struct AttentionShape {
  int64_t b, h_q, s_q, d, h_kv, s_kv, d_v;
};

// Checks q, k, v (ports 0-2), the mask flags and an optional bias, shared by
// the forward and backward ops.
AttentionShape check_attention_inputs(Graph &graph, const Node &node, bool causal,
                                      bool causal_bottom_right, double attn_scale,
                                      size_t bias_port) {
  const Tensor &q = required_input(graph, node, 0);
  const Tensor &k = required_input(graph, node, 1);
  const Tensor &v = required_input(graph, node, 2);
  require_rank(node, "q", q, 4, "[b,h_q,s_q,d]");
  require_rank(node, "k", k, 4, "[b,h_kv,s_kv,d]");
  require_rank(node, "v", v, 4, "[b,h_kv,s_kv,d_v]");
  AttentionShape a{q.dims[0], q.dims[1], q.dims[2], q.dims[3], k.dims[1], k.dims[2], v.dims[3]};
  auto mismatch = [&](const Tensor &t, const char *port, int dim, const char *what,
                      int64_t expected, const char *rule) {
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" ", dims_string(t.dims), " has ",
               what, " = ", t.dims[dim], "; expected ", expected, " (", rule, ")");
  };
  if (k.dims[0] != a.b) mismatch(k, "k", 0, "b", a.b, "q's batch");
  if (v.dims[0] != a.b) mismatch(v, "v", 0, "b", a.b, "q's batch");
  if (k.dims[3] != a.d) mismatch(k, "k", 3, "d", a.d, "q's head dim");
  if (v.dims[1] != a.h_kv) mismatch(v, "v", 1, "h", a.h_kv, "k's head count");
  if (v.dims[2] != a.s_kv) mismatch(v, "v", 2, "s", a.s_kv, "k's sequence length");
  if (a.h_q % a.h_kv != 0)
    fail_graph(Graph::label(node), ": q has ", a.h_q, " heads and k has ", a.h_kv,
               "; h_q must be a multiple of h_kv (GQA/MQA)");
  if (causal && causal_bottom_right)
    fail_graph(Graph::label(node),
               ": causal_mask and causal_mask_bottom_right are exclusive; set one");
  if (attn_scale != attn_scale) fail_graph(Graph::label(node), ": attn_scale is NaN");
  if (node.inputs[bias_port] != 0) {
    const Tensor &bias = graph.tensor(node.inputs[bias_port]);
    require_rank(node, "bias", bias, 4, "[b|1, h_q|1, s_q|1, s_kv]");
    const int64_t full[4] = {a.b, a.h_q, a.s_q, a.s_kv};
    for (int i = 0; i < 4; ++i)
      if (bias.dims[i] != full[i] && bias.dims[i] != 1)
        fail_graph(Graph::label(node), ": bias \"", bias.name, "\" ", dims_string(bias.dims),
                   " does not broadcast to [b,h_q,s_q,s_kv] = ",
                   dims_string({a.b, a.h_q, a.s_q, a.s_kv}), " at dim ", i);
  }
  return a;
}

void require_dims(const Node &node, const char *port, const Tensor &t,
                  const std::vector<int64_t> &dims, const char *rule) {
  if (t.dims != dims)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" is ", dims_string(t.dims),
               "; expected ", dims_string(dims), " (", rule, ")");
}

// Sets an output that mirrors an input's shape and layout (O like q, dQ like
// q, ...), refusing a user override that disagrees.
void output_like(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &layout) {
  Tensor &out = set_output_shape(graph, node, port, dims, layout);
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but ", op_kind_name(node.kind), " produces ", dims_string(dims));
}

}  // namespace

void infer_sdpa(Graph &graph, Node &node) {
  const SdpaAttrs &attrs = node.as<SdpaAttrs>();
  AttentionShape a = check_attention_inputs(graph, node, attrs.causal_mask,
                                            attrs.causal_mask_bottom_right, attrs.attn_scale, 3);
  const Tensor &q = graph.tensor(node.inputs[0]);
  output_like(graph, node, 0, {a.b, a.h_q, a.s_q, a.d_v}, q.strides);
  if (attrs.generate_stats) {
    std::vector<int64_t> stats = {a.b, a.h_q, a.s_q, 1};
    output_like(graph, node, 1, stats, packed_strides(stats));
    Tensor &st = graph.tensor(node.outputs[1]);
    if (st.dtype == CUDNNFE_DTYPE_NOT_SET) st.dtype = CUDNNFE_DTYPE_FLOAT;
  }
}

void infer_sdpa_backward(Graph &graph, Node &node) {
  const SdpaBackwardAttrs &attrs = node.as<SdpaBackwardAttrs>();
  AttentionShape a = check_attention_inputs(graph, node, attrs.causal_mask,
                                            attrs.causal_mask_bottom_right, attrs.attn_scale, 6);
  const Tensor &q = graph.tensor(node.inputs[0]);
  const Tensor &k = graph.tensor(node.inputs[1]);
  const Tensor &v = graph.tensor(node.inputs[2]);
  const std::vector<int64_t> o_dims = {a.b, a.h_q, a.s_q, a.d_v};
  require_dims(node, "o", required_input(graph, node, 3), o_dims, "the forward's output");
  require_dims(node, "dO", required_input(graph, node, 4), o_dims, "o's shape");
  require_dims(node, "stats", required_input(graph, node, 5), {a.b, a.h_q, a.s_q, 1},
               "the forward's stats");
  output_like(graph, node, 0, q.dims, q.strides);
  output_like(graph, node, 1, k.dims, k.strides);
  output_like(graph, node, 2, v.dims, v.strides);
}

void check_types_sdpa(Graph &graph, Node &node) {
  const Tensor &q = graph.tensor(node.inputs[0]);
  for (int port = 1; port < 3; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dtype != q.dtype)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
                 dtype_name(t.dtype), " but q \"", q.name, "\" is ", dtype_name(q.dtype),
                 "; q, k and v must share a data type");
  }
  if (q.dtype != CUDNNFE_DTYPE_HALF && q.dtype != CUDNNFE_DTYPE_BFLOAT16 &&
      q.dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": q \"", q.name, "\" is ", dtype_name(q.dtype),
               "; attention takes HALF or BFLOAT16 (FLOAT on the CPU reference)");
  if (node.kind == OpKind::kSdpa) {
    if (node.outputs[1] != 0 && graph.tensor(node.outputs[1]).dtype != CUDNNFE_DTYPE_FLOAT)
      fail_graph(Graph::label(node), ": stats \"", graph.tensor(node.outputs[1]).name,
                 "\" must be FLOAT");
    return;
  }
  for (int port = 3; port < 5; ++port) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dtype != q.dtype)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
                 dtype_name(t.dtype), " but q \"", q.name, "\" is ", dtype_name(q.dtype),
                 "; q, k, v, o and dO must share a data type");
  }
  const Tensor &stats = graph.tensor(node.inputs[5]);
  if (stats.dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": stats \"", stats.name, "\" is ", dtype_name(stats.dtype),
               "; stats must be FLOAT");
}

}  // namespace cudnnfe
