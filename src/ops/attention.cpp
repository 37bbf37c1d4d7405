#include "ops/attention.h"

#include <cmath>

#include "ops/ops.h"

namespace cudnnfe {

const AttentionPorts &attention_ports(OpKind kind) {
  // Port order of node.cpp's table.
  constexpr size_t kNone = AttentionPorts::kNone;
  static const AttentionPorts forward = {3,  4,  5,  6,  7,  8,  9,  10, kNone,
                                         11, 12, 13, 14, 15, 16, 17, 18};
  static const AttentionPorts backward = {6,  7,  8,  9,  10,    11,    12,    13,   14,
                                          15, 16, 17, 18, kNone, kNone, kNone, kNone};
  return kind == OpKind::kSdpa ? forward : backward;
}

AttentionSpec attention_spec(const Node &node) {
  AttentionSpec s;
  if (node.kind == OpKind::kSdpa) {
    const SdpaAttrs &a = node.as<SdpaAttrs>();
    s.attn_scale = a.attn_scale;
    s.causal_mask = a.causal_mask;
    s.causal_mask_bottom_right = a.causal_mask_bottom_right;
    s.options = a.options;
    s.score_mod = !a.score_mod.empty();
  } else {
    const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
    s.attn_scale = a.attn_scale;
    s.causal_mask = a.causal_mask;
    s.causal_mask_bottom_right = a.causal_mask_bottom_right;
    s.options = a.options;
    s.score_mod = !a.score_mod.empty();
    s.score_mod_bprop = !a.score_mod_bprop.empty();
  }
  const AttentionPorts &p = attention_ports(node.kind);
  auto at = [&](size_t port) -> int64_t {
    return port != AttentionPorts::kNone && port < node.inputs.size() ? node.inputs[port] : 0;
  };
  s.bias = at(p.bias);
  s.attn_scale_tensor = at(p.attn_scale);
  s.seq_len_q = at(p.seq_len_q);
  s.seq_len_kv = at(p.seq_len_kv);
  s.dropout_seed = at(p.dropout_seed);
  s.dropout_offset = at(p.dropout_offset);
  s.dropout_mask = at(p.dropout_mask);
  s.dropout_scale = at(p.dropout_scale);
  s.dropout_scale_inv = at(p.dropout_scale_inv);
  s.ragged_q = at(p.ragged_q);
  s.ragged_k = at(p.ragged_k);
  s.ragged_v = at(p.ragged_v);
  s.ragged_o = at(p.ragged_o);
  s.page_table_k = at(p.page_table_k);
  s.page_table_v = at(p.page_table_v);
  s.sink_token = at(p.sink_token);
  s.block_mask = at(p.block_mask);
  return s;
}

std::vector<int64_t> block_mask_dims(int64_t b, int64_t h_q, int64_t s_q, int64_t s_kv) {
  const int64_t kv_tiles = (s_kv + kBlockMaskTile - 1) / kBlockMaskTile;
  return {b, h_q, (s_q + kBlockMaskTile - 1) / kBlockMaskTile, (kv_tiles + 7) / 8};
}

int64_t attention_kv_length(const Graph &graph, const Node &node) {
  const AttentionSpec s = attention_spec(node);
  const Tensor &k = graph.tensor(node.inputs[1]);
  if (!s.paged()) return k.dims[2];
  if (s.options.max_seq_len_kv > 0) return s.options.max_seq_len_kv;
  if (!s.page_table_k) return k.dims[2];
  const Tensor &v = graph.tensor(node.inputs[2]);
  if (!s.page_table_v) return v.dims[2];
  return checked_size(node, CheckedInt(graph.tensor(s.page_table_k).dims[2]) * k.dims[2],
                      "s_kv (pages per sequence times the page size)");
}

std::vector<float> alibi_slopes(int64_t heads) {
  std::vector<float> slopes;
  if (heads <= 0) return slopes;
  int64_t n = 1;
  while (n * 2 <= heads) n *= 2;
  const float nf = static_cast<float>(n);
  for (int64_t h = 0; h < n; ++h)
    slopes.push_back(std::pow(2.0f, -8.0f * static_cast<float>(h + 1) / nf));
  for (int64_t h = n; h < heads; ++h)
    slopes.push_back(std::pow(2.0f, -4.0f * static_cast<float>(2 * (h - n) + 1) / nf));
  return slopes;
}

}  // namespace cudnnfe
