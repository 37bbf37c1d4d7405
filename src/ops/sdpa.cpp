// Scaled dot-product attention shape and type rules.
#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

void infer_sdpa(Graph &graph, Node &node) {
  const SdpaAttrs &attrs = node.as<SdpaAttrs>();
  const Tensor &q = required_input(graph, node, 0);
  const Tensor &k = required_input(graph, node, 1);
  const Tensor &v = required_input(graph, node, 2);
  require_rank(node, "q", q, 4, "[b,h_q,s_q,d]");
  require_rank(node, "k", k, 4, "[b,h_kv,s_kv,d]");
  require_rank(node, "v", v, 4, "[b,h_kv,s_kv,d_v]");
  const int64_t b = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t h_kv = k.dims[1], s_kv = k.dims[2];
  auto mismatch = [&](const Tensor &t, const char *port, int dim, const char *what,
                      int64_t expected, const char *rule) {
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" ", dims_string(t.dims), " has ",
               what, " = ", t.dims[dim], "; expected ", expected, " (", rule, ")");
  };
  if (k.dims[0] != b) mismatch(k, "k", 0, "b", b, "q's batch");
  if (v.dims[0] != b) mismatch(v, "v", 0, "b", b, "q's batch");
  if (k.dims[3] != d) mismatch(k, "k", 3, "d", d, "q's head dim");
  if (v.dims[1] != h_kv) mismatch(v, "v", 1, "h", h_kv, "k's head count");
  if (v.dims[2] != s_kv) mismatch(v, "v", 2, "s", s_kv, "k's sequence length");
  if (h_q % h_kv != 0)
    fail_graph(Graph::label(node), ": q has ", h_q, " heads and k has ", h_kv,
               "; h_q must be a multiple of h_kv (GQA/MQA)");
  if (attrs.causal_mask && attrs.causal_mask_bottom_right)
    fail_graph(Graph::label(node),
               ": causal_mask and causal_mask_bottom_right are exclusive; set one");
  if (attrs.attn_scale != attrs.attn_scale) fail_graph(Graph::label(node), ": attn_scale is NaN");
  if (node.inputs[3] != 0) {
    const Tensor &bias = graph.tensor(node.inputs[3]);
    require_rank(node, "bias", bias, 4, "[b|1, h_q|1, s_q|1, s_kv]");
    const int64_t full[4] = {b, h_q, s_q, s_kv};
    for (int i = 0; i < 4; ++i)
      if (bias.dims[i] != full[i] && bias.dims[i] != 1)
        fail_graph(Graph::label(node), ": bias \"", bias.name, "\" ", dims_string(bias.dims),
                   " does not broadcast to [b,h_q,s_q,s_kv] = ", dims_string({b, h_q, s_q, s_kv}),
                   " at dim ", i);
  }
  std::vector<int64_t> o = {b, h_q, s_q, v.dims[3]};
  Tensor &out = set_output_shape(graph, node, 0, o, q.strides);
  if (out.dims != o)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but attention produces ", dims_string(o));
  if (attrs.generate_stats) {
    std::vector<int64_t> stats = {b, h_q, s_q, 1};
    Tensor &st = set_output_shape(graph, node, 1, stats, packed_strides(stats));
    if (st.dims != stats)
      fail_graph(Graph::label(node), ": stats \"", st.name, "\" was set to ", dims_string(st.dims),
                 "; stats are ", dims_string(stats));
    if (st.dtype == CUDNNFE_DTYPE_NOT_SET) st.dtype = CUDNNFE_DTYPE_FLOAT;
  }
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
  if (node.outputs[1] != 0 && graph.tensor(node.outputs[1]).dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": stats \"", graph.tensor(node.outputs[1]).name,
               "\" must be FLOAT");
}

}  // namespace cudnnfe
