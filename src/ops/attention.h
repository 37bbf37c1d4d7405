// What an attention node (sdpa, sdpa_backward, sdpa_fp8,
// sdpa_fp8_backward) asks for beyond q, k and v:
// which input port holds which optional tensor, the effective diagonal
// band, and ALiBi's slopes. Shared by validation (ops/sdpa.cpp), the CPU
// reference (cpu/attention_mask.h) and the lowering (backend/
// attention_masks.cpp), so that the three agree by construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/graph.h"
#include "graph/node.h"

namespace cudnnfe {

// Input ports of an attention node's optional tensors, for code shared by
// the four kinds (each kind's own ports: Sdpa::kBias, ... in
// graph/op_list.def); kNone where the kind has no such port (the forward
// has no dropout_scale_inv).
struct AttentionPorts {
  static constexpr size_t kNone = static_cast<size_t>(-1);
  size_t bias = kNone, attn_scale = kNone, seq_len_q = kNone, seq_len_kv = kNone,
         dropout_seed = kNone, dropout_offset = kNone, dropout_mask = kNone, dropout_scale = kNone,
         dropout_scale_inv = kNone;
  // Ragged offsets of q, k, v and o (the backward's also describe dQ, dK,
  // dV and dO); the forward's page tables of k and v (kNone backward).
  size_t ragged_q = kNone, ragged_k = kNone, ragged_v = kNone, ragged_o = kNone,
         page_table_k = kNone, page_table_v = kNone;
  // The sink logits (the backward's for dSink_token), and the forward's block
  // mask (kNone backward).
  size_t sink_token = kNone, block_mask = kNone;
  // The ragged offsets of the forward's packed page tables (kNone backward).
  size_t ragged_page_table_k = kNone, ragged_page_table_v = kNone;
  // The ragged offsets of stats (the forward's output, the backward's input).
  size_t ragged_stats = kNone;
  // The ragged offsets of the forward's score_max and score_sum_exp.
  size_t ragged_score_max = kNone, ragged_score_sum_exp = kNone;
};
const AttentionPorts &attention_ports(OpKind kind);

// q, k and v lead every attention kind's inputs: code shared by the kinds
// reads them through Sdpa's names (Sdpa::kQ, ...).
static_assert(same_port(Sdpa::kQ, SdpaBackward::kQ, SdpaFp8::kQ, SdpaFp8Backward::kQ) &&
              same_port(Sdpa::kK, SdpaBackward::kK, SdpaFp8::kK, SdpaFp8Backward::kK) &&
              same_port(Sdpa::kV, SdpaBackward::kV, SdpaFp8::kV, SdpaFp8Backward::kV));

// An attention node's settings, forward or backward alike (FP8 attention
// included: padding, dropout and the forward's page tables and sink logits
// as tensor options, its band in `options`). Tensor fields are UIDs (0: not given).
struct AttentionSpec {
  double attn_scale = 0.0;  // 0: 1/sqrt(d) unless attn_scale_tensor
  bool causal_mask = false;
  bool causal_mask_bottom_right = false;
  AttentionOptions options;
  int64_t bias = 0, attn_scale_tensor = 0, seq_len_q = 0, seq_len_kv = 0;
  int64_t dropout_seed = 0, dropout_offset = 0, dropout_mask = 0, dropout_scale = 0,
          dropout_scale_inv = 0;
  int64_t ragged_q = 0, ragged_k = 0, ragged_v = 0, ragged_o = 0;
  int64_t page_table_k = 0, page_table_v = 0;
  int64_t sink_token = 0, block_mask = 0;
  int64_t ragged_page_table_k = 0, ragged_page_table_v = 0, ragged_stats = 0;
  int64_t ragged_score_max = 0, ragged_score_sum_exp = 0;
  // Score modifiers (docs/attention.md): the forward's, and the backward's
  // gradient modifier.
  bool score_mod = false, score_mod_bprop = false;

  // Whether the diagonal is aligned at the bottom-right corner.
  bool bottom_right() const {
    return causal_mask_bottom_right ||
           (!causal_mask && options.diagonal_alignment == CUDNNFE_DIAGONAL_BOTTOM_RIGHT);
  }
  // The band's bounds around the diagonal; -1 where that side is open. A
  // causal flag is a right bound of 0.
  int64_t right_bound() const {
    return causal_mask || causal_mask_bottom_right ? 0 : options.window_right;
  }
  int64_t left_bound() const { return options.window_left; }
  bool has_band() const { return right_bound() >= 0 || left_bound() >= 1; }
  // Dropout drawn from a seed (p may be 0), or from the caller's mask.
  bool seeded_dropout() const { return dropout_seed != 0; }
  bool mask_dropout() const { return dropout_mask != 0; }
  bool ragged() const { return ragged_q || ragged_k || ragged_v || ragged_o || ragged_stats; }
  bool paged() const { return page_table_k || page_table_v; }
};

// The spec of an sdpa, sdpa_backward, sdpa_fp8 or sdpa_fp8_backward node.
AttentionSpec attention_spec(const Node &node);

// The diagonal band's rules (window_left, window_right, diagonal_alignment
// and their agreement with the causal flags), the same for every attention
// kind: fails naming the node, the option and the rule.
void check_diagonal_band(const Node &node, const AttentionSpec &spec);

// The tensor options' rules (attn_scale_tensor, padding, the band, ALiBi,
// dropout, ragged offsets, page tables: their presence, dims and mutual
// rules), for every attention kind (ops/sdpa.cpp): fails naming the node,
// the option and the rule.
void check_attention_tensor_options(Graph &graph, const Node &node);
// Their data types, once types are resolved.
void check_attention_option_types(Graph &graph, const Node &node);

// GQA/MQA: k's and v's head counts (which may differ, as cudnn-frontend
// allows) must each divide q's, so that consecutive query heads share a key
// and a value head. Fails with NOT_SUPPORTED, cudnn-frontend's class.
void require_head_groups(const Node &node, const Tensor &q, const Tensor &k, const Tensor &v);

// The logical key length s_kv of an attention node: k's dims[2], or with
// a paged cache max_seq_len_kv when set, else the unpaged one of k and v,
// else k's pages * page_size (docs/attention.md).
int64_t attention_kv_length(const Graph &graph, const Node &node);

// The side of a block mask's tiles (cuDNN's 128 x 128), and its dims for
// the scores [b, h_q, s_q, s_kv]: [b, h_q, ceil(s_q / 128), ceil(ceil(s_kv
// / 128) / 8)], eight key tiles to a byte.
constexpr int64_t kBlockMaskTile = 128;
std::vector<int64_t> block_mask_dims(int64_t b, int64_t h_q, int64_t s_q, int64_t s_kv);

// ALiBi slopes of `heads` query heads, cudnn-frontend's formula: n = the
// largest power of two <= heads; 2^(-8 (h + 1) / n) for h < n, then
// 2^(-4 (2 (h - n) + 1) / n). Computed in float, as cuDNN receives them.
std::vector<float> alibi_slopes(int64_t heads);

}  // namespace cudnnfe
