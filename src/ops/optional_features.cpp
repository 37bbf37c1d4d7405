#include "ops/optional_features.h"

#include <type_traits>

#include "graph/score_mod.h"
#include "ops/attention.h"
#include "ops/op_rules.h"

namespace cudnnfe {
namespace {

// Adds `name` when `in_use`, dropping it with `drop`.
void offer(std::vector<OptionalFeature> &out, bool in_use, const char *name,
           std::function<void(Node &)> drop) {
  if (in_use) out.push_back({name, std::move(drop)});
}

void drop_input(Node &node, size_t port) {
  if (port != AttentionPorts::kNone) node.inputs[port] = 0;
}

// The options sdpa and sdpa_backward share (docs/attention.md).
template <class Attrs>
void offer_attention(std::vector<OptionalFeature> &out, const Node &node) {
  const Attrs &a = node.as<Attrs>();
  const AttentionOptions &o = a.options;
  const AttentionPorts ports = attention_ports(node.kind);
  auto given = [&node](size_t port) {
    return port != AttentionPorts::kNone && node.inputs[port] != 0;
  };
  offer(out, a.causal_mask, "causal mask (top-left)",
        [](Node &n) { n.as<Attrs>().causal_mask = false; });
  offer(out, a.causal_mask_bottom_right, "causal mask (bottom-right)",
        [](Node &n) { n.as<Attrs>().causal_mask_bottom_right = false; });
  offer(out, o.window_left >= 0 || o.window_right >= 0, "sliding window", [](Node &n) {
    n.as<Attrs>().options.window_left = -1;
    n.as<Attrs>().options.window_right = -1;
  });
  offer(out, o.alibi_mask, "ALiBi mask", [](Node &n) { n.as<Attrs>().options.alibi_mask = false; });
  // Ragged and paged layouts come first: they need the padding mask, so
  // dropping the padding mask drops them too.
  offer(
      out,
      given(ports.ragged_q) || given(ports.ragged_k) || given(ports.ragged_v) ||
          given(ports.ragged_o) || given(ports.ragged_stats) || given(ports.ragged_score_max) ||
          given(ports.ragged_score_sum_exp),
      "ragged (packed) layout", [ports](Node &n) {
        for (size_t port : {ports.ragged_q, ports.ragged_k, ports.ragged_v, ports.ragged_o,
                            ports.ragged_stats, ports.ragged_score_max, ports.ragged_score_sum_exp})
          drop_input(n, port);
      });
  // Without its page tables a paged node is valid only when the containers
  // happen to have the attention's shape; otherwise that probe is skipped.
  offer(out, given(ports.page_table_k) || given(ports.page_table_v), "paged K/V cache",
        [ports](Node &n) {
          for (size_t port : {ports.page_table_k, ports.page_table_v, ports.ragged_page_table_k,
                              ports.ragged_page_table_v})
            drop_input(n, port);
          n.as<Attrs>().options.max_seq_len_kv = 0;
        });
  offer(out, o.padding_mask, "padding mask", [ports](Node &n) {
    n.as<Attrs>().options.padding_mask = false;
    for (size_t port : {ports.seq_len_q, ports.seq_len_kv, ports.ragged_q, ports.ragged_k,
                        ports.ragged_v, ports.ragged_o, ports.page_table_k, ports.page_table_v,
                        ports.ragged_page_table_k, ports.ragged_page_table_v, ports.ragged_stats,
                        ports.ragged_score_max, ports.ragged_score_sum_exp})
      drop_input(n, port);
    n.as<Attrs>().options.max_seq_len_kv = 0;
  });
  offer(out, o.dropout_probability > 0 || given(ports.dropout_mask), "dropout", [ports](Node &n) {
    n.as<Attrs>().options.dropout_probability = 0;
    for (size_t port : {ports.dropout_seed, ports.dropout_offset, ports.dropout_mask,
                        ports.dropout_scale, ports.dropout_scale_inv})
      drop_input(n, port);
  });
  offer(out, given(ports.bias), "bias", [ports](Node &n) {
    drop_input(n, ports.bias);
    if constexpr (std::is_same_v<Attrs, SdpaBackwardAttrs>) n.as<Attrs>().generate_dbias = false;
  });
  offer(out, given(ports.attn_scale), "scale tensor",
        [ports](Node &n) { drop_input(n, ports.attn_scale); });
  // The modifiers' graph inputs follow the fixed ports (graph/score_mod.h).
  offer(out, !score_mods(node).empty(), "score modifier", [](Node &n) {
    for (ScoreMod *m : score_mods(n)) *m = ScoreMod{};
    n.inputs.resize(input_port_names(n.kind).size());
  });
}

}  // namespace

void offer_sdpa_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer_attention<SdpaAttrs>(out, node);
  offer(out, node.as<SdpaAttrs>().generate_stats, "stats output",
        [](Node &n) { n.as<SdpaAttrs>().generate_stats = false; });
  const AttentionPorts &ports = attention_ports(node.kind);
  offer(out, node.inputs[ports.sink_token] != 0, "sink token",
        [ports](Node &n) { drop_input(n, ports.sink_token); });
  offer(out, node.inputs[ports.block_mask] != 0, "block mask",
        [ports](Node &n) { drop_input(n, ports.block_mask); });
}

void offer_sdpa_backward_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer_attention<SdpaBackwardAttrs>(out, node);
  offer(out, node.as<SdpaBackwardAttrs>().generate_dbias, "bias gradient",
        [](Node &n) { n.as<SdpaBackwardAttrs>().generate_dbias = false; });
  const AttentionPorts &ports = attention_ports(node.kind);
  offer(out, node.inputs[ports.sink_token] != 0, "sink token", [ports](Node &n) {
    drop_input(n, ports.sink_token);
    n.as<SdpaBackwardAttrs>().generate_dsink = false;
  });
  offer(out, node.as<SdpaBackwardAttrs>().deterministic, "deterministic mode",
        [](Node &n) { n.as<SdpaBackwardAttrs>().deterministic = false; });
}

void offer_norm_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer(out, node.as<NormAttrs>().zero_centered_gamma, "zero-centred gamma",
        [](Node &n) { n.as<NormAttrs>().zero_centered_gamma = false; });
  offer(out, node.kind == OpKind::kRmsNorm && node.inputs[RmsNorm::kBias] != 0, "bias",
        [](Node &n) { drop_input(n, RmsNorm::kBias); });
}

void offer_adalayernorm_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer(out, node.as<NormAttrs>().zero_centered_gamma, "zero-centred gamma",
        [](Node &n) { n.as<NormAttrs>().zero_centered_gamma = false; });
}

void offer_batchnorm_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer(out, node.inputs[BatchNorm::kPrevRunningMean] != 0, "running statistics", [](Node &n) {
    drop_input(n, BatchNorm::kPrevRunningMean);
    drop_input(n, BatchNorm::kPrevRunningVar);
  });
}

void offer_softmax_features(std::vector<OptionalFeature> &out, const Node &node) {
  offer(out, node.as<SoftmaxAttrs>().generate_stats, "stats output",
        [](Node &n) { n.as<SoftmaxAttrs>().generate_stats = false; });
}

std::vector<OptionalFeature> optional_features(const Node &node) {
  std::vector<OptionalFeature> out;
  if (auto offer_features = op_rules(node.kind).features) offer_features(out, node);
  return out;
}

}  // namespace cudnnfe
