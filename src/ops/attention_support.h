// The support rules of attention (sdpa, sdpa_backward, sdpa_fp8,
// sdpa_fp8_backward) on a GPU: where cudnn-frontend refuses a graph as
// GRAPH_NOT_SUPPORTED, or cuDNN computes it wrong. docs/refusals.md lists
// each rule with its evidence; the CPU reference is held to none of them.
#pragma once

#include "graph/graph.h"
#include "graph/support_target.h"

namespace cudnnfe {

// Throws NOT_SUPPORTED naming the node and the rule. Rules that depend on
// the cuDNN version or the architecture apply only once the target knows it.
void check_attention_support(const Graph &graph, const Node &node, const SupportTarget &target);

}  // namespace cudnnfe
