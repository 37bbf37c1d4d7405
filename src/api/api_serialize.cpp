// Graph description to and from JSON.
#include <cstring>

#include "api/guard.h"
#include "plan/plan_blob.h"
#include "serialize/graph_json.h"

using namespace cudnnfe;

cudnnfe_status_t cudnnfe_graph_serialize(const cudnnfe_graph_t *g, char *buffer, size_t capacity,
                                         size_t *size) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(size, "size");
    const std::string json = serialize_graph(graph);
    if (buffer) {
      if (capacity < json.size())
        fail_argument("capacity ", capacity, " is too small; the JSON has ", json.size(), " bytes");
      std::memcpy(buffer, json.data(), json.size());
    }
    *size = json.size();
  });
}

cudnnfe_status_t cudnnfe_graph_deserialize(cudnnfe_graph_t *g, const char *data, size_t size) {
  return guard_graph(g, [&](Graph &graph) {
    if (!data && size) fail_argument("data is NULL");
    graph.require_mutable();
    if (!graph.tensors().empty() || !graph.nodes().empty())
      fail_argument("graph \"", graph.name,
                    "\" is not empty; deserialize into a freshly created graph");
    Graph loaded;
    // A plan blob holds the description too: load that, unbuilt.
    const size_t magic = std::strlen(plan::kBlobMagic);
    if (size > magic && std::memcmp(data, plan::kBlobMagic, magic) == 0) {
      const plan::PlanRecord record = plan::decode_plan_blob(data, size);
      deserialize_graph(record.graph_json.data(), record.graph_json.size(), loaded);
    } else {
      deserialize_graph(data, size, loaded);
    }
    // Swap in only after the whole description loaded and validated.
    graph = std::move(loaded);
  });
}
