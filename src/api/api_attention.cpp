// The attention ops of the C API: scaled dot-product attention forward (its
// softmax dumps into the caller's tensors) and backward (with dBias through
// the _ex variant, and the sink's gradient into the caller's dsink_token
// tensor), and ragged offsets given to
// their operands after they were added. Port order: graph/op_list.def.
// An option naming a caller's tensor as an output (score_max, dsink_token,
// ...) is a cudnnfe_graph_set_next_output request made here: one mechanism
// for every caller-made output.
#include <algorithm>
#include <initializer_list>
#include <utility>

#include "api/guard.h"
#include "ops/attention.h"

using namespace cudnnfe;

void cudnnfe_sdpa_options_init_sized(cudnnfe_sdpa_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_sdpa_options_t *o) {
    o->implementation = SdpaAttrs{}.implementation;
    o->window_left = AttentionOptions{}.window_left;
    o->window_right = AttentionOptions{}.window_right;
    o->diagonal_alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  });
}

void cudnnfe_sdpa_backward_options_init_sized(cudnnfe_sdpa_backward_options_t *o,
                                              size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_sdpa_backward_options_t *o) {
    o->window_left = AttentionOptions{}.window_left;
    o->window_right = AttentionOptions{}.window_right;
    o->diagonal_alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  });
}

namespace {

// The shared options of either struct (same field names).
template <class Options>
AttentionOptions attention_options(const Options &o) {
  AttentionOptions a;
  a.padding_mask = o.padding_mask != 0;
  a.window_left = o.window_left;
  a.window_right = o.window_right;
  a.diagonal_alignment = o.diagonal_alignment;
  a.alibi_mask = o.alibi_mask != 0;
  a.dropout_probability = o.dropout_probability;
  return a;
}

// Makes the options' caller-made outputs (port name, UID; 0: none) requests
// of the next node, as cudnnfe_graph_set_next_output does. A refused request
// drops them all: the add call that failed consumes them.
void request_outputs(Graph &graph,
                     std::initializer_list<std::pair<const char *, int64_t>> outputs) {
  try {
    for (const auto &[port, uid] : outputs)
      if (uid != 0) graph.set_next_output(port, uid);
  } catch (...) {
    graph.drop_next_outputs();
    throw;
  }
}

// Drops the pending set_next_output requests when an add call fails before
// its add_node consumed them (after it, there is nothing left to drop).
struct ConsumeNextOutputs {
  Graph &graph;
  ~ConsumeNextOutputs() { graph.drop_next_outputs(); }
};

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_sdpa(cudnnfe_graph_t *g, int64_t q, int64_t k, int64_t v,
                                        const cudnnfe_sdpa_options_t *options, int64_t *o_uid,
                                        int64_t *stats) {
  return guard_graph(g, [&](Graph &graph) {
    ConsumeNextOutputs consume{graph};
    require_out(o_uid, "o");
    auto o = read_options(options, cudnnfe_sdpa_options_init_sized, "sdpa options");
    if (o.generate_stats) require_out(stats, "stats (generate_stats is set)");
    request_outputs(
        graph,
        {{"score_max", o.score_max}, {"score_sum_exp", o.score_sum_exp}, {"rng_dump", o.rng_dump}});
    SdpaAttrs a;
    a.attn_scale = o.attn_scale;
    // An output asked for with cudnnfe_graph_set_next_output is made.
    a.generate_stats = o.generate_stats != 0 || graph.next_output_requested("stats");
    a.causal_mask = o.causal_mask != 0;
    a.causal_mask_bottom_right = o.causal_mask_bottom_right != 0;
    a.options = attention_options(o);
    a.options.max_seq_len_kv = o.max_seq_len_kv;
    a.implementation = o.implementation;
    a.score_mod.score = o.score_mod;
    if (o.unfuse_fma != 0 && o.unfuse_fma != 1)
      fail_argument("sdpa options: unfuse_fma is ", o.unfuse_fma, "; expected 0 or 1");
    a.unfuse_fma = o.unfuse_fma == 1;
    a.generate_score_max = graph.next_output_requested("score_max");
    a.generate_score_sum_exp = graph.next_output_requested("score_sum_exp");
    a.generate_rng_dump = graph.next_output_requested("rng_dump");
    const Node &node = graph.add_node(OpKind::kSdpa, string_or_empty(o.name),
                                      {q,
                                       k,
                                       v,
                                       o.bias,
                                       o.attn_scale_tensor,
                                       o.seq_len_q,
                                       o.seq_len_kv,
                                       o.dropout_seed,
                                       o.dropout_offset,
                                       o.dropout_mask,
                                       o.dropout_scale,
                                       o.ragged_offset_q,
                                       o.ragged_offset_k,
                                       o.ragged_offset_v,
                                       o.ragged_offset_o,
                                       o.page_table_k,
                                       o.page_table_v,
                                       o.sink_token,
                                       o.block_mask,
                                       o.ragged_offset_page_table_k,
                                       o.ragged_offset_page_table_v,
                                       o.ragged_offset_stats,
                                       o.ragged_offset_score_max,
                                       o.ragged_offset_score_sum_exp},
                                      a, o.compute_dtype);
    *o_uid = node.outputs[Sdpa::kO];
    if (stats) *stats = node.outputs[Sdpa::kStats];
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_backward_ex(cudnnfe_graph_t *g, int64_t q, int64_t k,
                                                    int64_t v, int64_t o, int64_t d_o,
                                                    int64_t stats,
                                                    const cudnnfe_sdpa_backward_options_t *options,
                                                    int64_t *dq, int64_t *dk, int64_t *dv,
                                                    int64_t *dbias) {
  return guard_graph(g, [&](Graph &graph) {
    ConsumeNextOutputs consume{graph};
    require_out(dq, "dq");
    require_out(dk, "dk");
    require_out(dv, "dv");
    auto opts =
        read_options(options, cudnnfe_sdpa_backward_options_init_sized, "sdpa_backward options");
    SdpaBackwardAttrs a;
    a.attn_scale = opts.attn_scale;
    a.causal_mask = opts.causal_mask != 0;
    a.causal_mask_bottom_right = opts.causal_mask_bottom_right != 0;
    a.deterministic = opts.deterministic != 0;
    a.options = attention_options(opts);
    // dsink_token is a set_next_output request; dBias is made for the _ex
    // variant's pointer or for a request.
    request_outputs(graph, {{"dSink_token", opts.dsink_token}});
    a.generate_dbias = dbias != nullptr || graph.next_output_requested("dBias");
    a.generate_dsink = graph.next_output_requested("dSink_token");
    for (auto [bound, what] : {std::pair{opts.max_total_seq_len_q, "max_total_seq_len_q"},
                               {opts.max_total_seq_len_kv, "max_total_seq_len_kv"}})
      if (bound < 0)
        fail_argument("sdpa_backward options: ", what, " is ", bound,
                      "; expected a token count >= 0 (0: not given)");
    a.max_total_seq_len_q = opts.max_total_seq_len_q;
    a.max_total_seq_len_kv = opts.max_total_seq_len_kv;
    a.score_mod.score = opts.score_mod;
    a.score_mod_bprop.score = opts.score_mod_bprop;
    const Node &node = graph.add_node(OpKind::kSdpaBackward, string_or_empty(opts.name),
                                      {q,
                                       k,
                                       v,
                                       o,
                                       d_o,
                                       stats,
                                       opts.bias,
                                       opts.attn_scale_tensor,
                                       opts.seq_len_q,
                                       opts.seq_len_kv,
                                       opts.dropout_seed,
                                       opts.dropout_offset,
                                       opts.dropout_mask,
                                       opts.dropout_scale,
                                       opts.dropout_scale_inv,
                                       opts.ragged_offset_q,
                                       opts.ragged_offset_k,
                                       opts.ragged_offset_v,
                                       opts.ragged_offset_o,
                                       opts.ragged_offset_stats,
                                       opts.sink_token},
                                      a, opts.compute_dtype);
    *dq = node.outputs[SdpaBackward::kDQ];
    *dk = node.outputs[SdpaBackward::kDK];
    *dv = node.outputs[SdpaBackward::kDV];
    if (dbias) *dbias = node.outputs[SdpaBackward::kDBias];
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_backward(cudnnfe_graph_t *g, int64_t q, int64_t k,
                                                 int64_t v, int64_t o, int64_t d_o, int64_t stats,
                                                 const cudnnfe_sdpa_backward_options_t *options,
                                                 int64_t *dq, int64_t *dk, int64_t *dv) {
  return cudnnfe_graph_add_sdpa_backward_ex(g, q, k, v, o, d_o, stats, options, dq, dk, dv,
                                            nullptr);
}

namespace {

// Where tensor `t`'s ragged offsets live in an attention node: (node index,
// input port of the offsets). An output that shares its input's offsets
// (the backward's gradients) must be given those very offsets.
struct RaggedSlot {
  size_t node, port;
};

// The slot of output `port` of node `index`, or none (the node writes `t`
// with offsets that `offset` already matches).
std::vector<RaggedSlot> output_slot(const Graph &graph, size_t index, size_t port, const Tensor &t,
                                    int64_t offset) {
  const Node &node = graph.nodes()[index];
  const AttentionPorts &p = attention_ports(node.kind);
  if (node.kind == OpKind::kSdpa) {
    using namespace Sdpa;
    const std::pair<size_t, size_t> by_port[] = {{kO, p.ragged_o},
                                                 {kStats, p.ragged_stats},
                                                 {kScoreMax, p.ragged_score_max},
                                                 {kScoreSumExp, p.ragged_score_sum_exp}};
    for (auto [out, ragged] : by_port)
      if (port == out) return {{index, ragged}};
    return {};
  }
  if (node.kind != OpKind::kSdpaBackward) return {};
  // A gradient has its input's layout: one offset describes both.
  struct Gradient {
    size_t port, ragged;
    const char *name, *input;
  };
  using namespace SdpaBackward;
  const Gradient gradients[] = {
      {kDQ, p.ragged_q, "dQ", "q"}, {kDK, p.ragged_k, "dK", "k"}, {kDV, p.ragged_v, "dV", "v"}};
  for (const Gradient &g : gradients) {
    if (port != g.port) continue;
    if (node.inputs[g.ragged] != offset)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": ", g.name, " \"", t.name,
           "\" has the layout of ", g.input, " (ragged_offset_", g.input,
           " describes both); other offsets for ", g.name, " are not offered");
    return {{index, g.ragged}};
  }
  return {};
}

// The slots of the attention nodes that read `t` at a ragged-capable port.
std::vector<RaggedSlot> input_slots(const Graph &graph, const Tensor &t, int64_t offset) {
  std::vector<RaggedSlot> slots;
  for (size_t index : graph.readers_of(t.uid)) {
    const Node &node = graph.nodes()[index];
    if (node.kind != OpKind::kSdpa && node.kind != OpKind::kSdpaBackward) continue;
    const AttentionPorts &p = attention_ports(node.kind);
    const std::pair<size_t, size_t> ports[] = {{Sdpa::kQ, p.ragged_q},
                                               {Sdpa::kK, p.ragged_k},
                                               {Sdpa::kV, p.ragged_v},
                                               {p.page_table_k, p.ragged_page_table_k},
                                               {p.page_table_v, p.ragged_page_table_v}};
    for (auto [port, ragged] : ports)
      if (port != AttentionPorts::kNone && node.inputs[port] == t.uid)
        slots.push_back({index, ragged});
    if (node.kind != OpKind::kSdpaBackward) continue;
    using namespace SdpaBackward;
    if (node.inputs[kStats] == t.uid) slots.push_back({index, p.ragged_stats});
    if (node.inputs[kO] == t.uid) slots.push_back({index, p.ragged_o});
    if (node.inputs[kDO] != t.uid || node.inputs[kO] == t.uid) continue;
    if (node.inputs[p.ragged_o] != offset)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": dO \"", t.name,
           "\" has the layout of o (ragged_offset_o describes both); give o its offsets first, "
           "then dO the same ones");
    slots.push_back({index, p.ragged_o});  // dO agrees with o: nothing changes
  }
  return slots;
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_set_ragged_offset(cudnnfe_graph_t *g, int64_t tensor,
                                                 int64_t offset) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    const Tensor &t = graph.tensor(tensor);
    if (offset != 0 && graph.tensor(offset).is_virtual)
      fail_argument("tensor \"", t.name, "\": ragged offsets \"", graph.tensor(offset).name,
                    "\" are an op's virtual output; they must be a graph input");
    std::vector<RaggedSlot> slots = input_slots(graph, t, offset);
    if (t.producer >= 0) {
      const Node &node = graph.nodes()[static_cast<size_t>(t.producer)];
      const size_t port = static_cast<size_t>(
          std::find(node.outputs.begin(), node.outputs.end(), t.uid) - node.outputs.begin());
      for (RaggedSlot s : output_slot(graph, static_cast<size_t>(t.producer), port, t, offset))
        slots.push_back(s);
    }
    if (slots.empty())
      fail_argument("tensor \"", t.name,
                    "\" is no operand of an attention node that takes ragged offsets (sdpa's q, "
                    "k, v, O, stats, score_max, score_sum_exp, page_table_k, page_table_v; "
                    "sdpa_backward's q, k, v, o, dO, stats, dQ, dK, dV); ragged (packed) layouts "
                    "are offered for these only");
    for (RaggedSlot s : slots) graph.set_node_input(s.node, s.port, offset);
  });
}
