// Score modifier scopes of a graph: opening one, closing it (the rules its
// nodes follow), and handing it to the attention node that names it.
// Not here: the rules against the attention's scores (ops/sdpa.cpp).
#include "graph/score_mod.h"

#include <algorithm>
#include <unordered_set>

#include "core/error.h"
#include "graph/graph.h"

namespace cudnnfe {

std::vector<ScoreMod *> score_mods(Node &node) {
  std::vector<ScoreMod *> out;
  auto add = [&](ScoreMod &m) {
    if (!m.empty()) out.push_back(&m);
  };
  if (node.kind == OpKind::kSdpa) add(node.as<SdpaAttrs>().score_mod);
  if (node.kind == OpKind::kSdpaBackward) {
    add(node.as<SdpaBackwardAttrs>().score_mod);
    add(node.as<SdpaBackwardAttrs>().score_mod_bprop);
  }
  return out;
}

std::vector<const ScoreMod *> score_mods(const Node &node) {
  std::vector<const ScoreMod *> out;
  for (ScoreMod *m : score_mods(const_cast<Node &>(node))) out.push_back(m);
  return out;
}

const char *score_mod_option(const Node &node, const ScoreMod &mod) {
  if (node.kind == OpKind::kSdpaBackward && &mod == &node.as<SdpaBackwardAttrs>().score_mod_bprop)
    return "score_mod_bprop";
  return "score_mod";
}

bool is_score_mod_tensor(const Graph &graph, int64_t uid) {
  const Tensor &t = graph.tensor(uid);
  return t.is_virtual && t.producer < 0;
}

std::vector<int64_t> score_mod_inputs(const Graph &graph, const Node &node) {
  std::vector<int64_t> out;
  for (const ScoreMod *m : score_mods(node))
    for (const Node &sub : m->nodes)
      for (int64_t uid : sub.inputs)
        if (uid != 0 && !is_score_mod_tensor(graph, uid) &&
            std::find(out.begin(), out.end(), uid) == out.end())
          out.push_back(uid);
  return out;
}

int64_t Graph::begin_score_mod(const std::string &tensor_name, const std::vector<int64_t> &dims) {
  require_mutable();
  if (open_score_mod_ != 0)
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", name, "\": the score modifier of \"",
         tensor(open_score_mod_).name, "\" is still open; close it before opening another");
  const std::string what = cat("score modifier \"", tensor_name, "\"");
  check_dims(what, dims);
  if (dims.size() != 4)
    fail_argument(what, ": the scores have 4 dims [b,h_q,s_q,s_kv], not ", dims_string(dims));
  Tensor &t = new_tensor(tensor_name);
  t.dtype = CUDNNFE_DTYPE_FLOAT;
  t.dims = dims;
  t.strides = packed_strides(dims);
  t.is_virtual = true;
  open_score_mod_ = t.uid;
  open_score_mod_first_ = nodes_.size();
  return t.uid;
}

void Graph::check_open_score_mod(const Node &node) const {
  if (open_score_mod_ != 0 && node.kind != OpKind::kPointwise)
    fail_graph(label(node),
               ": only pointwise ops (GEN_INDEX included) may be added while the "
               "score modifier of \"",
               tensor(open_score_mod_).name, "\" is open (docs/attention.md)");
  if (open_score_mod_ != 0) return;
  for (size_t port = 0; port < node.inputs.size(); ++port)
    if (node.inputs[port] != 0 && has_tensor(node.inputs[port]) &&
        is_score_mod_tensor(*this, node.inputs[port]))
      fail_graph(label(node), ": ", input_port(node, port), " \"", tensor(node.inputs[port]).name,
                 "\" is a tensor of a score modifier; only the modifier's own nodes read it");
}

namespace {

// Refuses an input of a modifier's node that is neither the placeholder, an
// earlier node's output, a graph input, a scalar nor another modifier's
// tensor (checked when an attention node takes both).
void check_scope_input(const Graph &graph, const Node &sub, size_t port,
                       const std::unordered_set<int64_t> &inside) {
  const int64_t uid = sub.inputs[port];
  if (uid == 0 || inside.count(uid)) return;
  const Tensor &t = graph.tensor(uid);
  if (t.is_scalar || (t.producer < 0 && !t.is_virtual) || is_score_mod_tensor(graph, uid)) return;
  fail_graph(Graph::label(sub), ": ", Graph::input_port(sub, port), " \"", t.name,
             "\" is written by ", Graph::label(graph.nodes()[static_cast<size_t>(t.producer)]),
             " outside the score modifier; a modifier reads only its score tensor, graph inputs "
             "and scalars");
}

// Whether `result` depends on `score` through `nodes`.
bool derives_from(const std::vector<Node> &nodes, int64_t score, int64_t result) {
  std::unordered_set<int64_t> derived = {score};
  for (const Node &n : nodes)
    for (int64_t in : n.inputs)
      if (in != 0 && derived.count(in)) derived.insert(n.outputs.begin(), n.outputs.end());
  return derived.count(result) != 0;
}

}  // namespace

void Graph::end_score_mod(int64_t score, int64_t result) {
  require_mutable();
  if (open_score_mod_ == 0 || open_score_mod_ != score)
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", name, "\": UID ", score,
         " is not the placeholder of the open score modifier",
         open_score_mod_ ? cat(" (\"", tensor(open_score_mod_).name, "\" is)") : " (none is open)");
  const std::string what = cat("score modifier \"", tensor(score).name, "\"");
  std::unordered_set<int64_t> inside = {score};
  for (size_t i = open_score_mod_first_; i < nodes_.size(); ++i) {
    const Node &sub = nodes_[i];
    for (size_t port = 0; port < sub.inputs.size(); ++port)
      check_scope_input(*this, sub, port, inside);
    for (int64_t out : sub.outputs) {
      if (out != 0 && !tensor(out).is_virtual)
        fail_graph(label(sub), ": output \"", tensor(out).name, "\" is marked as a graph output; ",
                   "the tensors of ", what, " stay virtual");
      inside.insert(out);
    }
  }
  if (!has_tensor(result) || !inside.count(result))
    fail_graph(what, ": result UID ", result, " is not the score tensor or an output of the ",
               "modifier's nodes");
  std::vector<Node> nodes(nodes_.begin() + static_cast<std::ptrdiff_t>(open_score_mod_first_),
                          nodes_.end());
  if (!derives_from(nodes, score, result))
    fail_graph(what, ": result \"", tensor(result).name,
               "\" does not depend on the score tensor; a modifier maps the scores");
  // The nodes leave the graph's list (their names stay taken).
  for (size_t i = open_score_mod_first_; i < nodes_.size(); ++i) {
    for (int64_t in : nodes_[i].inputs) {
      auto it = readers_.find(in);
      if (it == readers_.end()) continue;
      auto &list = it->second;
      list.erase(std::remove(list.begin(), list.end(), i), list.end());
      if (list.empty()) readers_.erase(it);
    }
    for (int64_t out : nodes_[i].outputs)
      if (out != 0) tensor(out).producer = -1;
  }
  nodes_.resize(open_score_mod_first_);
  pending_score_mods_[score] = ScoreMod{score, result, std::move(nodes)};
  open_score_mod_ = 0;
}

void Graph::attach_score_mods(Node &node) {
  try {
    take_score_mods(node);
  } catch (...) {
    detach_score_mods(node);
    throw;
  }
  for (int64_t uid : score_mod_inputs(*this, node)) node.inputs.push_back(uid);
}

void Graph::take_score_mods(Node &node) {
  for (ScoreMod *m : score_mods(node)) {
    const char *option = score_mod_option(node, *m);
    if (m->score == open_score_mod_)
      fail_graph(label(node), ": ", option, " \"", tensor(m->score).name,
                 "\" is still open; close it (end) first");
    auto it = pending_score_mods_.find(m->score);
    if (it == pending_score_mods_.end())
      fail_graph(label(node), ": ", option, " is UID ", m->score,
                 ", which is not the placeholder of a closed score modifier that no other node "
                 "has taken");
    *m = std::move(it->second);
    pending_score_mods_.erase(it);
  }
  // A backward modifier may read the forward one's tensors (softcap's tanh).
  std::unordered_set<int64_t> earlier;
  for (ScoreMod *m : score_mods(node)) {
    std::unordered_set<int64_t> own = {m->score};
    for (const Node &sub : m->nodes) own.insert(sub.outputs.begin(), sub.outputs.end());
    for (const Node &sub : m->nodes)
      for (size_t port = 0; port < sub.inputs.size(); ++port) {
        const int64_t uid = sub.inputs[port];
        if (uid == 0 || own.count(uid) || earlier.count(uid) || !is_score_mod_tensor(*this, uid))
          continue;
        fail_graph(label(node), ": ", score_mod_option(node, *m), " node ", label(sub), " reads \"",
                   tensor(uid).name, "\" of another score modifier; only score_mod_bprop may read ",
                   "the tensors of the same node's score_mod");
      }
    earlier.insert(own.begin(), own.end());
  }
}

void Graph::detach_score_mods(Node &node) {
  for (ScoreMod *m : score_mods(node))
    if (m->result != 0) pending_score_mods_[m->score] = std::move(*m);
}

void Graph::rename_in_score_mods(int64_t uid, int64_t new_uid) {
  auto rename = [&](ScoreMod &m) {
    if (m.score == uid) m.score = new_uid;
    if (m.result == uid) m.result = new_uid;
    for (Node &sub : m.nodes) {
      std::replace(sub.inputs.begin(), sub.inputs.end(), uid, new_uid);
      std::replace(sub.outputs.begin(), sub.outputs.end(), uid, new_uid);
    }
  };
  for (size_t n : score_mod_owners_)
    for (ScoreMod *m : score_mods(nodes_[n])) rename(*m);
  std::map<int64_t, ScoreMod> pending;
  for (auto &[score, m] : pending_score_mods_) {
    rename(m);
    pending[m.score] = std::move(m);
  }
  pending_score_mods_ = std::move(pending);
  if (open_score_mod_ == uid) open_score_mod_ = new_uid;
}

void Graph::check_score_mods_closed() const {
  if (open_score_mod_ != 0)
    fail_graph("graph \"", name, "\": the score modifier of \"", tensor(open_score_mod_).name,
               "\" is still open; close it and give it to an attention node");
  if (!pending_score_mods_.empty())
    fail_graph("graph \"", name, "\": the score modifier of \"",
               tensor(pending_score_mods_.begin()->first).name,
               "\" is closed but no attention node names it (score_mod)");
}

}  // namespace cudnnfe
