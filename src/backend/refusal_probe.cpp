#include "backend/refusal_probe.h"

#include <cstdlib>
#include <map>

#include "core/error.h"
#include "ops/optional_features.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

// Each probe is one build (lowering, heuristics, one plan): bounded so that
// explaining a refusal stays well under a second or two.
constexpr int kMaxProbes = 12;

// A graph holding only a copy of `node` (after `drop`), its inputs as graph
// inputs and its outputs as graph outputs, with the original's types and
// layouts.
Graph isolate(const Graph &graph, const Node &node, const std::function<void(Node &)> &drop) {
  Node copy = node;
  if (drop) drop(copy);
  Graph probe;
  probe.name = cat(graph.name, "/probe");
  probe.io_dtype = graph.io_dtype;
  probe.intermediate_dtype = graph.intermediate_dtype;
  probe.compute_dtype = graph.compute_dtype;
  std::map<int64_t, int64_t> copied;
  std::vector<int64_t> inputs;
  for (int64_t uid : copy.inputs) {
    if (uid == 0) {
      inputs.push_back(0);
      continue;
    }
    auto it = copied.find(uid);
    if (it == copied.end()) {
      const Tensor &t = graph.tensor(uid);
      const int64_t fresh = t.is_scalar ? probe.add_scalar(t.name, t.dtype, t.scalar_value)
                                        : probe.add_tensor(t.name, t.dtype, t.dims, t.strides);
      it = copied.emplace(uid, fresh).first;
    }
    inputs.push_back(it->second);
  }
  const Node &added = probe.add_node(copy.kind, copy.name, inputs, copy.attrs, copy.compute_dtype);
  for (size_t port = 0; port < added.outputs.size(); ++port) {
    if (added.outputs[port] == 0) continue;
    Tensor &out = probe.tensor(added.outputs[port]);
    out.is_virtual = false;
    if (port < node.outputs.size() && node.outputs[port] != 0) {
      const Tensor &original = graph.tensor(node.outputs[port]);
      if (original.dtype != CUDNNFE_DTYPE_NOT_SET) out.dtype = original.dtype;
    }
  }
  probe.validate();
  return probe;
}

class Prober {
 public:
  // Probes ask whether the backend has any engine: without the caller's
  // filters (their refusals have their own message) and for one plan.
  explicit Prober(const BuildTarget &target) : target_(target) {
    options_.target = CUDNNFE_TARGET_GPU;
    options_.use_plan_cache = false;
  }

  // 1: builds, 0: refused, -1: not asked (probe budget spent, or the probe
  // graph could not be made).
  int builds(const Graph &graph, const Node &node, const std::function<void(Node &)> &drop) {
    if (probes_ >= kMaxProbes) return -1;
    Graph probe;
    try {
      probe = isolate(graph, node, drop);
    } catch (const Error &) {
      return -1;
    }
    ++probes_;
    try {
      BuildRecord record;
      build_plan_set(probe, target_, options_, record);
      return 1;
    } catch (const Error &e) {
      return e.status() == CUDNNFE_STATUS_NOT_SUPPORTED ? 0 : -1;
    }
  }

 private:
  BuildTarget target_;
  BuildOptions options_;
  int probes_ = 0;
};

std::string where(const BuildTarget &target) {
  return cat("cuDNN ", plan::cudnn_version_string(target.cudnn_version), " on ", target.device_name,
             " (sm_", target.sm, ")");
}

// What dropping each feature of a refused node tells.
std::string explain_node(Prober &prober, const Graph &graph, const Node &node,
                         const BuildTarget &target) {
  const std::vector<OptionalFeature> features = optional_features(node);
  std::string tried;
  for (const OptionalFeature &f : features) {
    const int result = prober.builds(graph, node, f.drop);
    if (result == 1)
      return cat(Graph::label(node), " builds without its ", f.name, ": ", where(target),
                 " has no engine for the ", f.name, " of this ", op_kind_name(node.kind),
                 " (its shapes and types included); a newer cuDNN or another GPU may have one");
    if (result == 0) tried += cat(tried.empty() ? "" : ", ", f.name);
  }
  if (!tried.empty())
    return cat(Graph::label(node), " is refused even without each of its options (tried: ", tried,
               "): ", where(target), " has no engine for its shapes, layouts or data types");
  return cat(Graph::label(node), " is refused on its own: ", where(target),
             " has no engine for its shapes, layouts or data types");
}

}  // namespace

std::string probe_refusal(const Graph &graph, const BuildTarget &target,
                          const BuildOptions &options) {
  const char *enabled = std::getenv("CUDNNFE_REFUSAL_PROBES");
  if (enabled && std::string(enabled) == "0") return "";
  try {
    (void)options;
    Prober prober(target);
    const std::vector<Node> &nodes = graph.nodes();
    if (nodes.size() == 1) {
      // Building without the caller's filters tells a filter refusal (whose
      // message says what each filter removed) from the backend's.
      if (optional_features(nodes[0]).empty() || prober.builds(graph, nodes[0], nullptr) != 0)
        return "";
      return cat("Probing the backend: ", explain_node(prober, graph, nodes[0], target));
    }
    std::string built_alone;
    for (const Node &node : nodes) {
      const int result = prober.builds(graph, node, nullptr);
      if (result == 0)
        return cat("Probing the backend: ", explain_node(prober, graph, node, target));
      if (result == 1) built_alone += cat(built_alone.empty() ? "" : ", ", Graph::label(node));
      if (result == -1) return "";
    }
    // Every node builds alone: the fusion is refused, or the filters removed
    // what there was; the graph as a whole without filters tells which.
    BuildRecord record;
    BuildOptions unfiltered;
    unfiltered.target = CUDNNFE_TARGET_GPU;
    try {
      build_plan_set(graph, target, unfiltered, record);
      return "";
    } catch (const Error &) {
    }
    return cat("Probing the backend: every node builds alone (", built_alone, "); ", where(target),
               " has no engine fusing them as this graph does: try splitting the graph");
  } catch (...) {
    return "";
  }
}

}  // namespace cudnnfe::backend
