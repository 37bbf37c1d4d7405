// The attention ops of the C API: scaled dot-product attention forward and
// backward (with dBias through the _ex variant). Input port order: node.cpp.
#include "api/guard.h"

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

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_sdpa(cudnnfe_graph_t *g, int64_t q, int64_t k, int64_t v,
                                        const cudnnfe_sdpa_options_t *options, int64_t *o_uid,
                                        int64_t *stats) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(o_uid, "o");
    auto o = read_options(options, cudnnfe_sdpa_options_init_sized, "sdpa options");
    if (o.generate_stats) require_out(stats, "stats (generate_stats is set)");
    SdpaAttrs a;
    a.attn_scale = o.attn_scale;
    a.generate_stats = o.generate_stats != 0;
    a.causal_mask = o.causal_mask != 0;
    a.causal_mask_bottom_right = o.causal_mask_bottom_right != 0;
    a.options = attention_options(o);
    a.options.max_seq_len_kv = o.max_seq_len_kv;
    a.implementation = o.implementation;
    a.score_mod.score = o.score_mod;
    const Node &node =
        graph.add_node(OpKind::kSdpa, string_or_empty(o.name),
                       {q, k, v, o.bias, o.attn_scale_tensor, o.seq_len_q, o.seq_len_kv,
                        o.dropout_seed, o.dropout_offset, o.dropout_mask, o.dropout_scale,
                        o.ragged_offset_q, o.ragged_offset_k, o.ragged_offset_v, o.ragged_offset_o,
                        o.page_table_k, o.page_table_v, o.sink_token, o.block_mask},
                       a, o.compute_dtype);
    *o_uid = node.outputs[0];
    if (stats) *stats = node.outputs[1];
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_backward_ex(cudnnfe_graph_t *g, int64_t q, int64_t k,
                                                    int64_t v, int64_t o, int64_t d_o,
                                                    int64_t stats,
                                                    const cudnnfe_sdpa_backward_options_t *options,
                                                    int64_t *dq, int64_t *dk, int64_t *dv,
                                                    int64_t *dbias) {
  return guard_graph(g, [&](Graph &graph) {
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
    a.generate_dbias = dbias != nullptr;
    a.score_mod.score = opts.score_mod;
    a.score_mod_bprop.score = opts.score_mod_bprop;
    const Node &node =
        graph.add_node(OpKind::kSdpaBackward, string_or_empty(opts.name),
                       {q, k, v, o, d_o, stats, opts.bias, opts.attn_scale_tensor, opts.seq_len_q,
                        opts.seq_len_kv, opts.dropout_seed, opts.dropout_offset, opts.dropout_mask,
                        opts.dropout_scale, opts.dropout_scale_inv, opts.ragged_offset_q,
                        opts.ragged_offset_k, opts.ragged_offset_v, opts.ragged_offset_o},
                       a, opts.compute_dtype);
    *dq = node.outputs[0];
    *dk = node.outputs[1];
    *dv = node.outputs[2];
    if (dbias) *dbias = node.outputs[3];
  });
}

cudnnfe_status_t cudnnfe_graph_add_sdpa_backward(cudnnfe_graph_t *g, int64_t q, int64_t k,
                                                 int64_t v, int64_t o, int64_t d_o, int64_t stats,
                                                 const cudnnfe_sdpa_backward_options_t *options,
                                                 int64_t *dq, int64_t *dk, int64_t *dv) {
  return cudnnfe_graph_add_sdpa_backward_ex(g, q, k, v, o, d_o, stats, options, dq, dk, dv,
                                            nullptr);
}
