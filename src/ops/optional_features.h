// The optional features of each op, as ways to drop them from a copy of a
// node: refused GPU builds are explained by asking the backend whether the
// node builds without one of them (src/backend/refusal_probe.cpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/node.h"

namespace cudnnfe {

struct OptionalFeature {
  std::string name;                  // "causal mask", "bias", ...
  std::function<void(Node &)> drop;  // clears it in a copy of the node
};

// The features `node` uses (only those set), in the order to try them: the
// kind's row in ops/op_rules.h names one of the functions below.
std::vector<OptionalFeature> optional_features(const Node &node);

void offer_sdpa_features(std::vector<OptionalFeature> &out, const Node &node);
void offer_sdpa_backward_features(std::vector<OptionalFeature> &out, const Node &node);
// layernorm, rmsnorm.
void offer_norm_features(std::vector<OptionalFeature> &out, const Node &node);
void offer_adalayernorm_features(std::vector<OptionalFeature> &out, const Node &node);
void offer_batchnorm_features(std::vector<OptionalFeature> &out, const Node &node);
void offer_softmax_features(std::vector<OptionalFeature> &out, const Node &node);

}  // namespace cudnnfe
