// The rules of each op kind: shape inference, type rules, which outputs
// exist, and the optional features the refusal probe may drop. One row per
// OpKind (op_rules.cpp); infer_and_check, check_types, output_used (ops.h)
// and optional_features read it. What an op is (name, ports, attribute
// fields) is graph/op_schema.h; how it runs is the CPU and backend tables.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "ops/optional_features.h"

namespace cudnnfe {

struct OpRules {
  OpKind kind;
  void (*infer)(Graph &graph, Node &node);
  // After the node's compute type is fixed; nullptr: inputs of any type.
  void (*check_types)(Graph &graph, Node &node);
  // Whether output `port` exists; nullptr: every output does.
  bool (*output_used)(const Node &node, size_t port);
  // Appends the features `node` uses; nullptr: the kind has none.
  void (*features)(std::vector<OptionalFeature> &out, const Node &node);
  // The support rules of a GPU target (ops.h, check_support); nullptr: none
  // beyond what cuDNN's own refusal says at build.
  void (*check_support)(const Graph &graph, const Node &node, const SupportTarget &target);
};

// The row of `kind`; every OpKind has one.
const OpRules &op_rules(OpKind kind);

}  // namespace cudnnfe
