// Score modifiers of attention nodes (docs/attention.md, "Score
// modifiers"): which modifiers a node holds and the graph inputs they read.
// Not here: their validation against the scores (ops/sdpa.cpp), their
// evaluation (cpu/score_mod_eval.h) or lowering (backend/lower_score_mod.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "graph/node.h"

namespace cudnnfe {

class Graph;

// The modifiers of an sdpa (score_mod) or sdpa_backward (score_mod,
// score_mod_bprop) node that are set; empty for other kinds.
std::vector<ScoreMod *> score_mods(Node &node);
std::vector<const ScoreMod *> score_mods(const Node &node);
// The modifier option's name ("score_mod" or "score_mod_bprop") of mods[i].
const char *score_mod_option(const Node &node, const ScoreMod &mod);

// Whether `t` is a score modifier's tensor (its placeholder or a node
// output): virtual, written by no node of the graph's list.
bool is_score_mod_tensor(const Graph &graph, int64_t uid);

// The graph inputs and scalars that `node`'s modifiers read, each once, in
// the order their nodes read them: the node's inputs after its fixed ports.
std::vector<int64_t> score_mod_inputs(const Graph &graph, const Node &node);

}  // namespace cudnnfe
