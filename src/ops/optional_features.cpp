#include "ops/optional_features.h"

namespace cudnnfe {
namespace {

// Adds `name` when `in_use`, dropping it with `drop`.
void offer(std::vector<OptionalFeature> &out, bool in_use, const char *name,
           std::function<void(Node &)> drop) {
  if (in_use) out.push_back({name, std::move(drop)});
}

void drop_input(Node &node, size_t port) {
  node.inputs[port] = 0;
}

}  // namespace

std::vector<OptionalFeature> optional_features(const Node &node) {
  std::vector<OptionalFeature> out;
  switch (node.kind) {
    case OpKind::kSdpa: {
      const SdpaAttrs &a = node.as<SdpaAttrs>();
      offer(out, a.causal_mask, "causal mask (top-left)",
            [](Node &n) { n.as<SdpaAttrs>().causal_mask = false; });
      offer(out, a.causal_mask_bottom_right, "causal mask (bottom-right)",
            [](Node &n) { n.as<SdpaAttrs>().causal_mask_bottom_right = false; });
      offer(out, node.inputs[3] != 0, "bias", [](Node &n) { drop_input(n, 3); });
      offer(out, a.generate_stats, "stats output",
            [](Node &n) { n.as<SdpaAttrs>().generate_stats = false; });
      break;
    }
    case OpKind::kSdpaBackward: {
      const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
      offer(out, a.causal_mask, "causal mask (top-left)",
            [](Node &n) { n.as<SdpaBackwardAttrs>().causal_mask = false; });
      offer(out, a.causal_mask_bottom_right, "causal mask (bottom-right)",
            [](Node &n) { n.as<SdpaBackwardAttrs>().causal_mask_bottom_right = false; });
      offer(out, node.inputs[6] != 0, "bias", [](Node &n) { drop_input(n, 6); });
      offer(out, a.deterministic, "deterministic mode",
            [](Node &n) { n.as<SdpaBackwardAttrs>().deterministic = false; });
      break;
    }
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm: {
      const NormAttrs &a = node.as<NormAttrs>();
      offer(out, a.zero_centered_gamma, "zero-centred gamma",
            [](Node &n) { n.as<NormAttrs>().zero_centered_gamma = false; });
      offer(out, node.kind == OpKind::kRmsNorm && node.inputs[2] != 0, "bias",
            [](Node &n) { drop_input(n, 2); });
      break;
    }
    case OpKind::kAdaLayerNorm:
      offer(out, node.as<NormAttrs>().zero_centered_gamma, "zero-centred gamma",
            [](Node &n) { n.as<NormAttrs>().zero_centered_gamma = false; });
      break;
    case OpKind::kBatchNorm:
      offer(out, node.inputs[3] != 0, "running statistics", [](Node &n) {
        drop_input(n, 3);
        drop_input(n, 4);
      });
      break;
    case OpKind::kSoftmax:
      offer(out, node.as<SoftmaxAttrs>().generate_stats, "stats output",
            [](Node &n) { n.as<SoftmaxAttrs>().generate_stats = false; });
      break;
    default: break;
  }
  return out;
}

}  // namespace cudnnfe
