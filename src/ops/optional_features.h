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

// The features `node` uses (only those set), in the order to try them.
std::vector<OptionalFeature> optional_features(const Node &node);

}  // namespace cudnnfe
