// Scaled dot-product attention shape and type rules, forward and backward:
// q, k, v and the outputs, then the options (scale tensor, padding, band,
// ALiBi, dropout, dBias) whose meaning ops/attention.h and
// docs/attention.md define.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/attention.h"
#include "ops/ops.h"

namespace cudnnfe {

namespace {

struct AttentionShape {
  int64_t b, h_q, s_q, d, h_kv, s_kv, d_v;
};

int64_t element_count(const Tensor &t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

// A tensor option that must hold exactly one element (a scale, a seed).
void require_one_element(Graph &graph, const Node &node, int64_t uid, const char *option,
                         const char *what) {
  if (uid == 0) return;
  const Tensor &t = graph.tensor(uid);
  if (element_count(t) != 1)
    fail_graph(Graph::label(node), ": ", option, " \"", t.name, "\" is ", dims_string(t.dims), "; ",
               option, " must hold one element (", what, ")");
}

// Checks that `t` broadcasts to `full` (each dim equal or 1).
void require_broadcast(const Node &node, const char *option, const Tensor &t,
                       const std::vector<int64_t> &full) {
  require_rank(node, option, t, 4, "[b|1, h_q|1, s_q|1, s_kv|1]");
  for (int i = 0; i < 4; ++i)
    if (t.dims[i] != full[i] && t.dims[i] != 1)
      fail_graph(Graph::label(node), ": ", option, " \"", t.name, "\" ", dims_string(t.dims),
                 " does not broadcast to [b,h_q,s_q,s_kv] = ", dims_string(full), " at dim ", i);
}

// The ragged offsets of packed page tables: each needs its table.
void check_packed_page_tables(Graph &graph, const Node &node, const AttentionSpec &s,
                              const AttentionShape &a) {
  const std::tuple<int64_t, int64_t, const char *> packed[] = {
      {s.ragged_page_table_k, s.page_table_k, "k"}, {s.ragged_page_table_v, s.page_table_v, "v"}};
  for (auto [uid, table, which] : packed) {
    if (uid == 0) continue;
    if (table == 0)
      fail_graph(Graph::label(node), ": ragged_offset_page_table_", which,
                 " is given but page_table_", which,
                 " is not; the offsets place the batches of a packed page table");
    const Tensor &t = graph.tensor(uid);
    if (t.dims != std::vector<int64_t>{a.b + 1, 1, 1, 1})
      fail_graph(Graph::label(node), ": ragged_offset_page_table_", which, " \"", t.name, "\" is ",
                 dims_string(t.dims), "; expected [b+1,1,1,1] = ", dims_string({a.b + 1, 1, 1, 1}),
                 " (the element offset of each batch's first page-table entry, and the end)");
  }
}

void require_dims(const Node &node, const char *port, const Tensor &t,
                  const std::vector<int64_t> &dims, const char *rule);

// Ragged offsets and page tables (docs/attention.md).
void check_ragged_and_paged(Graph &graph, const Node &node, const AttentionSpec &s,
                            const AttentionShape &a) {
  const std::string label = Graph::label(node);
  const bool backward = node.kind == OpKind::kSdpaBackward;
  const std::pair<int64_t, const char *> offsets[] = {
      {s.ragged_q, backward ? "ragged_offset_q (q and dQ)" : "ragged_offset_q"},
      {s.ragged_k, backward ? "ragged_offset_k (k and dK)" : "ragged_offset_k"},
      {s.ragged_v, backward ? "ragged_offset_v (v and dV)" : "ragged_offset_v"},
      {s.ragged_o, backward ? "ragged_offset_o (o and dO)" : "ragged_offset_o"},
      {s.ragged_stats, "ragged_offset_stats"},
      {s.ragged_score_max, "ragged_offset_score_max"},
      {s.ragged_score_sum_exp, "ragged_offset_score_sum_exp"}};
  for (auto [uid, option] : offsets) {
    if (uid == 0) continue;
    if (!s.options.padding_mask)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, label, ": ", option,
           " is given but padding_mask is 0; a ragged (packed) layout needs padding_mask "
           "with seq_len_q and seq_len_kv (the lengths of the packed sequences), as "
           "cudnn-frontend requires");
    const Tensor &t = graph.tensor(uid);
    if (t.dims != std::vector<int64_t>{a.b + 1, 1, 1, 1})
      fail_graph(label, ": ", option, " \"", t.name, "\" is ", dims_string(t.dims),
                 "; expected [b+1,1,1,1] = ", dims_string({a.b + 1, 1, 1, 1}),
                 " (the element offset of each sequence's start, and the end)");
  }
  if (s.options.max_seq_len_kv < 0)
    fail_graph(label, ": max_seq_len_kv is ", s.options.max_seq_len_kv,
               "; use 0 (inferred) or the paged cache's logical s_kv");
  if (s.options.max_seq_len_kv > 0 && !s.paged())
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, label, ": max_seq_len_kv is ", s.options.max_seq_len_kv,
         " but neither page_table_k nor page_table_v is given; it sets the s_kv of a paged K/V "
         "cache only, as in cudnn-frontend");
  check_packed_page_tables(graph, node, s, a);
  if (!s.paged()) return;
  if (!s.options.padding_mask && !(s.score_mod && s.seq_len_kv))
    fail_graph(label,
               ": a paged K/V cache (page_table_k, page_table_v) needs padding_mask with "
               "seq_len_kv (the number of valid keys of each batch), or seq_len_kv and a "
               "score_mod");
  const std::pair<int64_t, const char *> tables[] = {{s.page_table_k, "k"}, {s.page_table_v, "v"}};
  for (auto [uid, which] : tables) {
    if (uid == 0) continue;
    const Tensor &cache = graph.tensor(node.inputs[which[0] == 'k' ? Sdpa::kK : Sdpa::kV]);
    if ((which[0] == 'k' ? s.ragged_k : s.ragged_v) != 0)
      fail_graph(label, ": ", which, " is a paged cache (page_table_", which,
                 ") and ragged (ragged_offset_", which, "); use one");
    const int64_t page_size = cache.dims[2];
    const int64_t pages = checked_size(node, (CheckedInt(a.s_kv) + page_size - 1) / page_size,
                                       cat("pages of ", which, " (s_kv over the page size)"));
    const Tensor &t = graph.tensor(uid);
    if (t.dims != std::vector<int64_t>{a.b, 1, pages, 1})
      fail_graph(label, ": page_table_", which, " \"", t.name, "\" is ", dims_string(t.dims),
                 "; expected [b,1,ceil(s_kv/page_size),1] = ", dims_string({a.b, 1, pages, 1}),
                 " (s_kv = ", a.s_kv, ", page_size = ", page_size, ", ", which,
                 "'s container dims[2])");
  }
}

// The options beyond q, k, v and bias (docs/attention.md).
void check_attention_options(Graph &graph, const Node &node, const AttentionSpec &s,
                             const AttentionShape &a) {
  const std::string label = Graph::label(node);
  const AttentionOptions &o = s.options;
  if (s.attn_scale_tensor != 0 && s.attn_scale != 0.0)
    fail_graph(label, ": attn_scale (", s.attn_scale, ") and attn_scale_tensor are both set; ",
               "set one (attn_scale 0 with a tensor)");
  require_one_element(graph, node, s.attn_scale_tensor, "attn_scale_tensor", "the softmax scale");

  // Padding: both sequence-length tensors, [b,1,1,1].
  if (o.padding_mask) {
    for (auto [uid, option] : {std::pair{s.seq_len_q, "seq_len_q"}, {s.seq_len_kv, "seq_len_kv"}}) {
      if (uid == 0)
        fail_graph(label, ": padding_mask is set but ", option,
                   " is missing; give an INT32 [b,1,1,1] tensor of per-batch lengths");
      const Tensor &t = graph.tensor(uid);
      if (t.dims != std::vector<int64_t>{a.b, 1, 1, 1})
        fail_graph(label, ": ", option, " \"", t.name, "\" is ", dims_string(t.dims),
                   "; expected [b,1,1,1] = ", dims_string({a.b, 1, 1, 1}),
                   " (one length per batch)");
    }
  } else if ((s.seq_len_q != 0 || s.seq_len_kv != 0) && !s.score_mod) {
    fail_graph(label, ": ", s.seq_len_q ? "seq_len_q" : "seq_len_kv",
               " is given but padding_mask is 0; sequence lengths are read only with "
               "padding_mask = 1 (or by a score_mod, as cudnn-frontend allows)");
  } else {
    // With a score modifier the lengths only bound the GPU's matmuls and
    // paged loads; the modifier masks what they leave (docs/attention.md).
    for (auto [uid, option] : {std::pair{s.seq_len_q, "seq_len_q"}, {s.seq_len_kv, "seq_len_kv"}})
      if (uid != 0)
        require_dims(node, option, graph.tensor(uid), {a.b, 1, 1, 1}, "one length per batch");
  }

  check_diagonal_band(node, s);

  // Dropout.
  const double p = o.dropout_probability;
  if (!(p >= 0.0 && p < 1.0))
    fail_graph(label, ": dropout_probability is ", p, "; it must be in [0, 1)");
  if ((s.dropout_seed != 0) != (s.dropout_offset != 0))
    fail_graph(label, ": dropout needs both dropout_seed and dropout_offset (",
               s.dropout_seed ? "dropout_offset" : "dropout_seed", " is missing)");
  if (p > 0.0 && s.dropout_seed == 0)
    fail_graph(label, ": dropout_probability is ", p,
               " but dropout_seed and dropout_offset are missing; give INT64 tensors of one "
               "element (or a dropout_mask with dropout_probability 0)");
  if ((s.dropout_mask != 0) != (s.dropout_scale != 0))
    fail_graph(label, ": a given dropout needs both dropout_mask and dropout_scale (",
               s.dropout_mask ? "dropout_scale" : "dropout_mask", " is missing)");
  if (s.dropout_mask != 0 && (s.dropout_seed != 0 || p != 0.0))
    fail_graph(label,
               ": dropout_mask and a drawn dropout (dropout_seed, dropout_probability) are "
               "exclusive; use one form");
  require_one_element(graph, node, s.dropout_seed, "dropout_seed", "the Philox seed");
  require_one_element(graph, node, s.dropout_offset, "dropout_offset", "the Philox offset");
  require_one_element(graph, node, s.dropout_scale, "dropout_scale", "the kept values' scale");
  if (s.dropout_mask != 0)
    require_broadcast(node, "dropout_mask", graph.tensor(s.dropout_mask),
                      {a.b, a.h_q, a.s_q, a.s_kv});
  check_ragged_and_paged(graph, node, s, a);
  if (node.kind == OpKind::kSdpaBackward || node.kind == OpKind::kSdpaFp8Backward) {
    if (s.dropout_mask != 0 && s.dropout_scale_inv == 0)
      fail_graph(label, ": dropout_mask needs dropout_scale_inv in the backward pass (a FLOAT ",
                 "tensor of one element holding 1 / dropout_scale)");
    if (s.dropout_mask == 0 && s.dropout_scale_inv != 0)
      fail_graph(label, ": dropout_scale_inv is given without dropout_mask");
    require_one_element(graph, node, s.dropout_scale_inv, "dropout_scale_inv", "1 / dropout_scale");
  }
}

// Checks q, k, v, the mask flags, bias and the options, shared
// by the forward and backward ops.
AttentionShape check_attention_inputs(Graph &graph, const Node &node) {
  const AttentionSpec spec = attention_spec(node);
  const Tensor &q = required_input(graph, node, Sdpa::kQ);
  const Tensor &k = required_input(graph, node, Sdpa::kK);
  const Tensor &v = required_input(graph, node, Sdpa::kV);
  require_rank(node, "q", q, 4, "[b,h_q,s_q,d]");
  require_rank(node, "k", k, 4, "[b,h_kv,s_kv,d]");
  require_rank(node, "v", v, 4, "[b,h_kv,s_kv,d_v]");
  AttentionShape a{q.dims[0], q.dims[1], q.dims[2],
                   q.dims[3], k.dims[1], attention_kv_length(graph, node),
                   v.dims[3]};
  auto mismatch = [&](const Tensor &t, const char *port, int dim, const char *what,
                      int64_t expected, const char *rule) {
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" ", dims_string(t.dims), " has ",
               what, " = ", t.dims[dim], "; expected ", expected, " (", rule, ")");
  };
  // A paged k or v is a page container [num_pages, h_kv, page_size, d]:
  // its batch and sequence dims are the cache's, not the attention's.
  if (!spec.page_table_k && k.dims[0] != a.b) mismatch(k, "k", 0, "b", a.b, "q's batch");
  if (!spec.page_table_v && v.dims[0] != a.b) mismatch(v, "v", 0, "b", a.b, "q's batch");
  if (k.dims[3] != a.d) mismatch(k, "k", 3, "d", a.d, "q's head dim");
  if (!spec.paged() && v.dims[2] != a.s_kv) mismatch(v, "v", 2, "s", a.s_kv, "k's sequence length");
  require_head_groups(node, q, k, v);
  if (spec.causal_mask && spec.causal_mask_bottom_right)
    fail_graph(Graph::label(node),
               ": causal_mask and causal_mask_bottom_right are exclusive; set one");
  if (spec.attn_scale != spec.attn_scale) fail_graph(Graph::label(node), ": attn_scale is NaN");
  if (spec.bias != 0)
    require_broadcast(node, "bias", graph.tensor(spec.bias), {a.b, a.h_q, a.s_q, a.s_kv});
  check_attention_options(graph, node, spec, a);
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
// `ragged_port`: the input port of the ragged offsets that place the
// output's batch rows (THD layouts), or kNone.
void output_like(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                 const DimOrder &order, size_t ragged_port = AttentionPorts::kNone) {
  Tensor &out = set_output_shape(graph, node, port, dims, order);
  if (out.dims != dims)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but ", op_kind_name(node.kind), " produces ", dims_string(dims));
  out.batch_at_offsets = ragged_port < node.inputs.size() && node.inputs[ragged_port] != 0;
}

void require_dtype(Graph &graph, const Node &node, int64_t uid, const char *option,
                   std::initializer_list<cudnnfe_dtype_t> allowed, const char *expected) {
  if (uid == 0) return;
  const Tensor &t = graph.tensor(uid);
  for (cudnnfe_dtype_t d : allowed)
    if (t.dtype == d) return;
  fail_graph(Graph::label(node), ": ", option, " \"", t.name, "\" is ", dtype_name(t.dtype), "; ",
             option, " must be ", expected);
}

// The forward's implementation choice, sink logits and block mask
// (docs/attention.md).
void check_forward_options(Graph &graph, const Node &node, const AttentionShape &a) {
  const std::string label = Graph::label(node);
  const cudnnfe_attention_implementation_t impl = node.as<SdpaAttrs>().implementation;
  if (impl < CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO ||
      impl > CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED)
    fail_graph(label, ": implementation ", impl,
               " is unknown; use CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO (0), COMPOSITE (1) or "
               "UNIFIED (2)");
  const AttentionSpec s = attention_spec(node);
  if (s.sink_token != 0)
    require_dims(node, "sink_token", graph.tensor(s.sink_token), {1, a.h_q, 1, 1},
                 "one sink logit per query head");
  if (s.block_mask == 0) return;
  require_dims(node, "block_mask", graph.tensor(s.block_mask),
               block_mask_dims(a.b, a.h_q, a.s_q, a.s_kv),
               "[b,h_q,ceil(s_q/128),ceil(ceil(s_kv/128)/8)]: one bit per 128x128 tile of the "
               "scores, eight key tiles to a byte");
  if (impl == CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE)
    fail_graph(label,
               ": block_mask needs the UNIFIED implementation (the composite graph has no block "
               "mask); use AUTO or UNIFIED");
}

// A tensor the caller made for output `port`: its dims must be `dims` (a
// size the caller left unset takes them); FLOAT unless the caller said.
void caller_output(Graph &graph, const Node &node, size_t port, const std::vector<int64_t> &dims,
                   const char *what, size_t ragged_port = AttentionPorts::kNone) {
  const int64_t uid = node.outputs[port];
  if (uid == 0) {
    if (ragged_port != AttentionPorts::kNone && node.inputs[ragged_port] != 0)
      fail_graph(Graph::label(node), ": ", input_port_names(node.kind)[ragged_port],
                 " is given but ", output_port_names(node.kind)[port], " is not asked for");
    return;
  }
  const Tensor &t = graph.tensor(uid);
  if (t.dims_set_by_user && t.dims != dims)
    fail_graph(Graph::label(node), ": ", output_port_names(node.kind)[port], " \"", t.name,
               "\" is ", dims_string(t.dims), "; expected ", dims_string(dims), " (", what, ")");
  output_like(graph, node, port, dims, row_major_order(dims.size()), ragged_port);
  Tensor &out = graph.tensor(uid);
  if (out.dtype == CUDNNFE_DTYPE_NOT_SET) out.dtype = CUDNNFE_DTYPE_FLOAT;
}

// The forward's softmax row max, sum of exponentials and drawn dropout mask,
// into tensors the caller made (docs/attention.md).
void infer_softmax_dumps(Graph &graph, const Node &node, const AttentionShape &a) {
  const std::vector<int64_t> per_row = {a.b, a.h_q, a.s_q, 1};
  const AttentionPorts &ports = attention_ports(node.kind);
  caller_output(graph, node, Sdpa::kScoreMax, per_row, "the row max of the scores",
                ports.ragged_score_max);
  caller_output(graph, node, Sdpa::kScoreSumExp, per_row, "the row sum of exp(score - score_max)",
                ports.ragged_score_sum_exp);
  if (node.outputs[Sdpa::kRngDump] == 0) return;
  if (!attention_spec(node).seeded_dropout())
    fail_graph(
        Graph::label(node), ": rng_dump \"", graph.tensor(node.outputs[Sdpa::kRngDump]).name,
        "\" dumps the dropout mask drawn from dropout_seed and dropout_offset, and this node "
        "draws none");
  caller_output(graph, node, Sdpa::kRngDump, {a.b, a.h_q, a.s_q, a.s_kv},
                "one mask element per score [b,h_q,s_q,s_kv]");
}

// The backward's sink logits and their gradient, dSink_token: the caller's
// tensor of one gradient per sink logit (docs/attention.md).
void infer_backward_sink(Graph &graph, const Node &node, const AttentionShape &a) {
  const int64_t sink = attention_spec(node).sink_token;
  const std::vector<int64_t> dims = {1, a.h_q, 1, 1};
  if (sink != 0)
    require_dims(node, "sink_token", graph.tensor(sink), dims, "one sink logit per query head");
  const int64_t dsink = node.outputs[SdpaBackward::kDSinkToken];
  if (dsink == 0) return;
  const Tensor &t = graph.tensor(dsink);
  if (sink == 0)
    fail_graph(Graph::label(node), ": dSink_token \"", t.name,
               "\" is asked for but sink_token is not given; the sink's gradient needs the "
               "forward's sink logits");
  if (t.dims_set_by_user && t.dims != dims)
    fail_graph(Graph::label(node), ": dSink_token \"", t.name, "\" is ", dims_string(t.dims),
               "; expected ", dims_string(dims),
               " (one gradient per sink logit, sink_token's dims)");
  output_like(graph, node, SdpaBackward::kDSinkToken, dims, row_major_order(dims.size()));
  Tensor &out = graph.tensor(dsink);
  if (out.dtype == CUDNNFE_DTYPE_NOT_SET) out.dtype = CUDNNFE_DTYPE_FLOAT;
}

}  // namespace

void check_attention_tensor_options(Graph &graph, const Node &node) {
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  const Tensor &k = graph.tensor(node.inputs[Sdpa::kK]);
  const Tensor &v = graph.tensor(node.inputs[Sdpa::kV]);
  const AttentionShape a{q.dims[0], q.dims[1], q.dims[2],
                         q.dims[3], k.dims[1], attention_kv_length(graph, node),
                         v.dims[3]};
  check_attention_options(graph, node, attention_spec(node), a);
}

void check_attention_option_types(Graph &graph, const Node &node) {
  const AttentionSpec s = attention_spec(node);
  const char *kFloatOnly = "FLOAT";
  require_dtype(graph, node, s.attn_scale_tensor, "attn_scale_tensor", {CUDNNFE_DTYPE_FLOAT},
                kFloatOnly);
  // INT64 lengths too: cudnn-frontend passes torch's default integers through
  // (sample 52's torch.randint lengths), and cuDNN's compares take them.
  require_dtype(graph, node, s.seq_len_q, "seq_len_q", {CUDNNFE_DTYPE_INT32, CUDNNFE_DTYPE_INT64},
                "INT32 or INT64");
  require_dtype(graph, node, s.seq_len_kv, "seq_len_kv", {CUDNNFE_DTYPE_INT32, CUDNNFE_DTYPE_INT64},
                "INT32 or INT64");
  require_dtype(graph, node, s.dropout_seed, "dropout_seed", {CUDNNFE_DTYPE_INT64}, "INT64");
  require_dtype(graph, node, s.dropout_offset, "dropout_offset", {CUDNNFE_DTYPE_INT64}, "INT64");
  require_dtype(graph, node, s.dropout_scale, "dropout_scale", {CUDNNFE_DTYPE_FLOAT}, kFloatOnly);
  require_dtype(graph, node, s.dropout_scale_inv, "dropout_scale_inv", {CUDNNFE_DTYPE_FLOAT},
                kFloatOnly);
  const std::pair<int64_t, const char *> offsets[] = {
      {s.ragged_q, "ragged_offset_q"},
      {s.ragged_k, "ragged_offset_k"},
      {s.ragged_v, "ragged_offset_v"},
      {s.ragged_o, "ragged_offset_o"},
      {s.ragged_stats, "ragged_offset_stats"},
      {s.ragged_score_max, "ragged_offset_score_max"},
      {s.ragged_score_sum_exp, "ragged_offset_score_sum_exp"},
      {s.ragged_page_table_k, "ragged_offset_page_table_k"},
      {s.ragged_page_table_v, "ragged_offset_page_table_v"}};
  for (auto [uid, which] : offsets)
    require_dtype(graph, node, uid, which, {CUDNNFE_DTYPE_INT32, CUDNNFE_DTYPE_INT64},
                  "INT32 or INT64");
  require_dtype(graph, node, s.page_table_k, "page_table_k", {CUDNNFE_DTYPE_INT32}, "INT32");
  require_dtype(graph, node, s.page_table_v, "page_table_v", {CUDNNFE_DTYPE_INT32}, "INT32");
  require_dtype(graph, node, s.sink_token, "sink_token", {CUDNNFE_DTYPE_FLOAT}, kFloatOnly);
  require_dtype(graph, node, s.block_mask, "block_mask", {CUDNNFE_DTYPE_UINT8}, "UINT8");
  require_dtype(graph, node, s.dropout_mask, "dropout_mask",
                {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16,
                 CUDNNFE_DTYPE_INT8, CUDNNFE_DTYPE_UINT8},
                "FLOAT, HALF, BFLOAT16, INT8 or UINT8");
}

void infer_sdpa(Graph &graph, Node &node) {
  const SdpaAttrs &attrs = node.as<SdpaAttrs>();
  AttentionShape a = check_attention_inputs(graph, node);
  check_forward_options(graph, node, a);
  infer_score_mods(graph, node, {a.b, a.h_q, a.s_q, a.s_kv});
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  // A ragged q's batch stride is unused (often 0): O still keeps the batch
  // outermost, whatever its own layout.
  std::vector<int64_t> order = q.strides;
  if (attention_spec(node).ragged_q != 0)
    order[0] = *std::max_element(q.strides.begin(), q.strides.end()) + 1;
  output_like(graph, node, Sdpa::kO, {a.b, a.h_q, a.s_q, a.d_v}, dimension_order(q.dims, order),
              attention_ports(node.kind).ragged_o);
  const AttentionPorts &ports = attention_ports(node.kind);
  if (!attrs.generate_stats && node.inputs[ports.ragged_stats] != 0)
    fail_graph(Graph::label(node),
               ": ragged_offset_stats is given but generate_stats is 0; there are no stats to "
               "place");
  if (attrs.generate_stats) {
    std::vector<int64_t> stats = {a.b, a.h_q, a.s_q, 1};
    output_like(graph, node, Sdpa::kStats, stats, row_major_order(stats.size()),
                ports.ragged_stats);
    Tensor &st = graph.tensor(node.outputs[Sdpa::kStats]);
    if (st.dtype == CUDNNFE_DTYPE_NOT_SET) st.dtype = CUDNNFE_DTYPE_FLOAT;
  }
  infer_softmax_dumps(graph, node, a);
}

void infer_sdpa_backward(Graph &graph, Node &node) {
  const SdpaBackwardAttrs &attrs = node.as<SdpaBackwardAttrs>();
  AttentionShape a = check_attention_inputs(graph, node);
  infer_score_mods(graph, node, {a.b, a.h_q, a.s_q, a.s_kv});
  using namespace SdpaBackward;
  const Tensor &q = graph.tensor(node.inputs[kQ]);
  const Tensor &k = graph.tensor(node.inputs[kK]);
  const Tensor &v = graph.tensor(node.inputs[kV]);
  const std::vector<int64_t> o_dims = {a.b, a.h_q, a.s_q, a.d_v};
  require_dims(node, "o", required_input(graph, node, kO), o_dims, "the forward's output");
  require_dims(node, "dO", required_input(graph, node, kDO), o_dims, "o's shape");
  require_dims(node, "stats", required_input(graph, node, kStats), {a.b, a.h_q, a.s_q, 1},
               "the forward's stats");
  const AttentionPorts &ports = attention_ports(node.kind);
  output_like(graph, node, kDQ, q.dims, dimension_order(q), ports.ragged_q);
  output_like(graph, node, kDK, k.dims, dimension_order(k), ports.ragged_k);
  output_like(graph, node, kDV, v.dims, dimension_order(v), ports.ragged_v);
  if (attrs.generate_dbias) {
    const int64_t bias = node.inputs[attention_ports(node.kind).bias];
    if (bias == 0) fail_graph(Graph::label(node), ": dbias is asked for but the node has no bias");
    const Tensor &b = graph.tensor(bias);
    const std::vector<int64_t> dims = {1, a.h_q, a.s_q, a.s_kv};
    if (b.dims != dims)
      fail_graph(Graph::label(node),
                 ": dbias needs bias of dims [1,h_q,s_q,s_kv] = ", dims_string(dims),
                 " (the one dBias shape cuDNN's attention engines produce); ", "bias \"", b.name,
                 "\" is ", dims_string(b.dims));
    output_like(graph, node, kDBias, dims, dimension_order(b));
  }
  infer_backward_sink(graph, node, a);
}

void check_types_sdpa(Graph &graph, Node &node) {
  const Tensor &q = graph.tensor(node.inputs[Sdpa::kQ]);
  for (size_t port : {Sdpa::kK, Sdpa::kV}) {
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

  check_attention_option_types(graph, node);
  check_score_mod_types(graph, node);
  if (node.kind == OpKind::kSdpa) {
    for (size_t port : {Sdpa::kStats, Sdpa::kScoreMax, Sdpa::kScoreSumExp, Sdpa::kRngDump})
      if (node.outputs[port] != 0 && graph.tensor(node.outputs[port]).dtype != CUDNNFE_DTYPE_FLOAT)
        fail_graph(Graph::label(node), ": ", output_port_names(node.kind)[port], " \"",
                   graph.tensor(node.outputs[port]).name, "\" is ",
                   dtype_name(graph.tensor(node.outputs[port]).dtype), "; it must be FLOAT");
    return;
  }
  for (size_t port : {SdpaBackward::kO, SdpaBackward::kDO}) {
    const Tensor &t = graph.tensor(node.inputs[port]);
    if (t.dtype != q.dtype)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name, "\" is ",
                 dtype_name(t.dtype), " but q \"", q.name, "\" is ", dtype_name(q.dtype),
                 "; q, k, v, o and dO must share a data type");
  }
  const Tensor &stats = graph.tensor(node.inputs[SdpaBackward::kStats]);
  if (stats.dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": stats \"", stats.name, "\" is ", dtype_name(stats.dtype),
               "; stats must be FLOAT");
  const int64_t dbias = node.outputs[SdpaBackward::kDBias];
  if (dbias != 0 && !dtype_is_float(graph.tensor(dbias).dtype))
    fail_graph(Graph::label(node), ": dBias \"", graph.tensor(dbias).name, "\" is ",
               dtype_name(graph.tensor(dbias).dtype), "; dBias must be a floating type");
  const int64_t dsink = node.outputs[SdpaBackward::kDSinkToken];
  if (dsink != 0 && graph.tensor(dsink).dtype != CUDNNFE_DTYPE_FLOAT)
    fail_graph(Graph::label(node), ": dSink_token \"", graph.tensor(dsink).name, "\" is ",
               dtype_name(graph.tensor(dsink).dtype),
               "; dSink_token must be FLOAT (as sink_token)");
}

}  // namespace cudnnfe
