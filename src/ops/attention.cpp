#include "ops/attention.h"

#include <cmath>

#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {

namespace {

// Each kind's ports by name (graph/op_list.def); the rest stay kNone.
AttentionPorts sdpa_ports() {
  using namespace Sdpa;
  AttentionPorts p;
  p.bias = kBias, p.attn_scale = kAttnScale, p.seq_len_q = kSeqLenQ, p.seq_len_kv = kSeqLenKv;
  p.dropout_seed = kDropoutSeed, p.dropout_offset = kDropoutOffset;
  p.dropout_mask = kDropoutMask, p.dropout_scale = kDropoutScale;
  p.ragged_q = kRaggedOffsetQ, p.ragged_k = kRaggedOffsetK, p.ragged_v = kRaggedOffsetV;
  p.ragged_o = kRaggedOffsetO, p.page_table_k = kPageTableK, p.page_table_v = kPageTableV;
  p.sink_token = kSinkToken, p.block_mask = kBlockMask;
  p.ragged_page_table_k = kRaggedOffsetPageTableK;
  p.ragged_page_table_v = kRaggedOffsetPageTableV;
  p.ragged_stats = kRaggedOffsetStats, p.ragged_score_max = kRaggedOffsetScoreMax;
  p.ragged_score_sum_exp = kRaggedOffsetScoreSumExp;
  return p;
}

AttentionPorts sdpa_backward_ports() {
  using namespace SdpaBackward;
  AttentionPorts p;
  p.bias = kBias, p.attn_scale = kAttnScale, p.seq_len_q = kSeqLenQ, p.seq_len_kv = kSeqLenKv;
  p.dropout_seed = kDropoutSeed, p.dropout_offset = kDropoutOffset;
  p.dropout_mask = kDropoutMask, p.dropout_scale = kDropoutScale;
  p.dropout_scale_inv = kDropoutScaleInv;
  p.ragged_q = kRaggedOffsetQ, p.ragged_k = kRaggedOffsetK, p.ragged_v = kRaggedOffsetV;
  p.ragged_o = kRaggedOffsetO, p.ragged_stats = kRaggedOffsetStats, p.sink_token = kSinkToken;
  return p;
}

// FP8 attention: sequence lengths, dropout and (forward) page tables and
// sink logits after the descales and scales (its band is attributes).
AttentionPorts sdpa_fp8_ports() {
  using namespace SdpaFp8;
  AttentionPorts p;
  p.seq_len_q = kSeqLenQ, p.seq_len_kv = kSeqLenKv;
  p.dropout_seed = kDropoutSeed, p.dropout_offset = kDropoutOffset;
  p.dropout_mask = kDropoutMask, p.dropout_scale = kDropoutScale;
  p.page_table_k = kPageTableK, p.page_table_v = kPageTableV, p.sink_token = kSinkToken;
  return p;
}

AttentionPorts sdpa_fp8_backward_ports() {
  using namespace SdpaFp8Backward;
  AttentionPorts p;
  p.seq_len_q = kSeqLenQ, p.seq_len_kv = kSeqLenKv;
  p.dropout_seed = kDropoutSeed, p.dropout_offset = kDropoutOffset;
  p.dropout_mask = kDropoutMask, p.dropout_scale = kDropoutScale;
  p.dropout_scale_inv = kDropoutScaleInv;
  return p;
}

}  // namespace

const AttentionPorts &attention_ports(OpKind kind) {
  static const AttentionPorts forward = sdpa_ports(), backward = sdpa_backward_ports(),
                              fp8_forward = sdpa_fp8_ports(),
                              fp8_backward = sdpa_fp8_backward_ports();
  if (kind == OpKind::kSdpaFp8) return fp8_forward;
  if (kind == OpKind::kSdpaFp8Backward) return fp8_backward;
  return kind == OpKind::kSdpa ? forward : backward;
}

AttentionSpec attention_spec(const Node &node) {
  AttentionSpec s;
  // What every attention kind's attributes have.
  auto common = [&s](const auto &a) {
    s.attn_scale = a.attn_scale;
    s.causal_mask = a.causal_mask;
    s.options = a.options;
  };
  switch (node.kind) {
    case OpKind::kSdpa: {
      const SdpaAttrs &a = node.as<SdpaAttrs>();
      common(a);
      s.causal_mask_bottom_right = a.causal_mask_bottom_right;
      s.score_mod = !a.score_mod.empty();
      break;
    }
    case OpKind::kSdpaFp8: common(node.as<SdpaFp8Attrs>()); break;
    case OpKind::kSdpaFp8Backward: common(node.as<SdpaFp8BackwardAttrs>()); break;
    default: {
      const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
      common(a);
      s.causal_mask_bottom_right = a.causal_mask_bottom_right;
      s.score_mod = !a.score_mod.empty();
      s.score_mod_bprop = !a.score_mod_bprop.empty();
    }
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
  s.ragged_page_table_k = at(p.ragged_page_table_k);
  s.ragged_page_table_v = at(p.ragged_page_table_v);
  s.ragged_stats = at(p.ragged_stats);
  s.ragged_score_max = at(p.ragged_score_max);
  s.ragged_score_sum_exp = at(p.ragged_score_sum_exp);
  return s;
}

void check_diagonal_band(const Node &node, const AttentionSpec &s) {
  const std::string label = Graph::label(node);
  const AttentionOptions &o = s.options;
  if (o.window_left == 0 || o.window_left < -1)
    fail_graph(label, ": window_left is ", o.window_left,
               "; use -1 (no left bound) or >= 1 (row i sees columns j > d(i) - window_left; "
               "0 would hide every column)");
  if (o.window_right < -1)
    fail_graph(label, ": window_right is ", o.window_right,
               "; use -1 (no right bound) or >= 0 (row i sees columns j <= d(i) + window_right)");
  if (o.diagonal_alignment != CUDNNFE_DIAGONAL_TOP_LEFT &&
      o.diagonal_alignment != CUDNNFE_DIAGONAL_BOTTOM_RIGHT)
    fail_graph(
        label, ": diagonal_alignment ", o.diagonal_alignment,
        " is unknown; use CUDNNFE_DIAGONAL_TOP_LEFT (0) or CUDNNFE_DIAGONAL_BOTTOM_RIGHT (1)");
  if ((s.causal_mask || s.causal_mask_bottom_right) && o.window_right > 0)
    fail_graph(label, ": ", s.causal_mask ? "causal_mask" : "causal_mask_bottom_right",
               " means window_right = 0, but window_right is ", o.window_right,
               "; drop the causal flag to widen the band");
  if (s.causal_mask && o.diagonal_alignment == CUDNNFE_DIAGONAL_BOTTOM_RIGHT)
    fail_graph(label, ": causal_mask is aligned top-left but diagonal_alignment is BOTTOM_RIGHT; ",
               node.kind == OpKind::kSdpaFp8 || node.kind == OpKind::kSdpaFp8Backward
                   ? "use window_right = 0 with BOTTOM_RIGHT instead (FP8 attention has no "
                     "causal_mask_bottom_right)"
                   : "use causal_mask_bottom_right");
}

std::vector<int64_t> block_mask_dims(int64_t b, int64_t h_q, int64_t s_q, int64_t s_kv) {
  const int64_t kv_tiles = (s_kv + kBlockMaskTile - 1) / kBlockMaskTile;
  return {b, h_q, (s_q + kBlockMaskTile - 1) / kBlockMaskTile, (kv_tiles + 7) / 8};
}

void require_head_groups(const Node &node, const Tensor &q, const Tensor &k, const Tensor &v) {
  for (const Tensor *t : {&k, &v}) {
    const int64_t heads = t->dims[1];
    if (heads < 1 || q.dims[1] % heads != 0)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": q \"", q.name, "\" ",
           dims_string(q.dims), " has ", q.dims[1], " heads and ", t == &k ? "k" : "v", " \"",
           t->name, "\" ", dims_string(t->dims), " has ", heads,
           "; the head counts of k and v must each divide q's (GQA/MQA)");
  }
}

int64_t attention_kv_length(const Graph &graph, const Node &node) {
  const AttentionSpec s = attention_spec(node);
  const Tensor &k = graph.tensor(node.inputs[Sdpa::kK]);
  if (!s.paged()) return k.dims[2];
  if (s.options.max_seq_len_kv > 0) return s.options.max_seq_len_kv;
  if (!s.page_table_k) return k.dims[2];
  const Tensor &v = graph.tensor(node.inputs[Sdpa::kV]);
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
