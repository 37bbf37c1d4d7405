// Graph lifetime, graph-wide settings and enumeration.
#include <cstring>

#include "api/guard.h"
#include "core/dtype.h"

using namespace cudnnfe;

namespace {

void check_dtype(cudnnfe_dtype_t dtype, const char *what) {
  if (dtype != CUDNNFE_DTYPE_NOT_SET && !dtype_is_valid(dtype))
    fail_argument(what, ": unknown data type ", dtype);
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_create(cudnnfe_graph_t **out) {
  return guard([&] {
    require_out(out, "out");
    auto graph = std::make_unique<Graph>();
    *out = register_graph(graph.get());
    graph.release();  // owned by the registered record now
  });
}

cudnnfe_status_t cudnnfe_graph_destroy(cudnnfe_graph_t *g) {
  if (!g) return CUDNNFE_STATUS_OK;
  return guard([&] {
    std::unique_ptr<cudnnfe_graph> record = unregister_graph(g);
    delete record->impl;
  });
}

const char *cudnnfe_graph_last_error(const cudnnfe_graph_t *g) {
  const cudnnfe_graph *record = find_graph(g);
  if (!record) return "graph is NULL, destroyed or not from cudnnfe_graph_create";
  std::lock_guard<std::mutex> lock(record->error_mutex);
  return record->last_error.c_str();
}

cudnnfe_status_t cudnnfe_graph_copy_last_error(const cudnnfe_graph_t *g, char *buffer,
                                               size_t capacity, size_t *size) {
  return guard([&] {
    require_out(size, "size");
    const cudnnfe_graph &record = graph_record(g);
    std::lock_guard<std::mutex> lock(record.error_mutex);
    const std::string &message = record.last_error;
    if (buffer) {
      if (capacity <= message.size())
        fail_argument("capacity ", capacity, " is too small for a message of ", message.size(),
                      " bytes plus NUL");
      std::memcpy(buffer, message.c_str(), message.size() + 1);
    }
    *size = message.size();
  });
}

cudnnfe_status_t cudnnfe_graph_set_name(cudnnfe_graph_t *g, const char *name) {
  return guard_graph(g, [&](Graph &graph) {
    if (!name) fail_argument("graph name is NULL");
    graph.require_mutable();
    graph.name = name;
  });
}

cudnnfe_status_t cudnnfe_graph_get_name(const cudnnfe_graph_t *g, const char **name) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(name, "name");
    *name = graph.name.c_str();
  });
}

cudnnfe_status_t cudnnfe_graph_set_io_dtype(cudnnfe_graph_t *g, cudnnfe_dtype_t dtype) {
  return guard_graph(g, [&](Graph &graph) {
    check_dtype(dtype, "io data type");
    graph.require_mutable();
    graph.io_dtype = dtype;
  });
}

cudnnfe_status_t cudnnfe_graph_set_intermediate_dtype(cudnnfe_graph_t *g, cudnnfe_dtype_t dtype) {
  return guard_graph(g, [&](Graph &graph) {
    check_dtype(dtype, "intermediate data type");
    graph.require_mutable();
    graph.intermediate_dtype = dtype;
  });
}

cudnnfe_status_t cudnnfe_graph_set_compute_dtype(cudnnfe_graph_t *g, cudnnfe_dtype_t dtype) {
  return guard_graph(g, [&](Graph &graph) {
    check_dtype(dtype, "compute data type");
    graph.require_mutable();
    graph.compute_dtype = dtype;
  });
}

cudnnfe_status_t cudnnfe_graph_get_tensor_count(const cudnnfe_graph_t *g, size_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    *count = graph.tensors().size();
  });
}

cudnnfe_status_t cudnnfe_graph_get_node_count(const cudnnfe_graph_t *g, size_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    *count = graph.nodes().size();
  });
}

cudnnfe_status_t cudnnfe_graph_get_tensor_uids(const cudnnfe_graph_t *g, int64_t *uids,
                                               size_t capacity, size_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    const auto &tensors = graph.tensors();
    if (uids) {
      if (capacity < tensors.size())
        fail_argument("capacity ", capacity, " is too small for ", tensors.size(), " UIDs");
      for (size_t i = 0; i < tensors.size(); ++i) uids[i] = tensors[i].uid;
    }
    *count = tensors.size();
  });
}

cudnnfe_status_t cudnnfe_graph_set_prune_unread_inputs(cudnnfe_graph_t *g, int32_t prune) {
  return guard_graph(g, [&](Graph &graph) {
    if (prune != 0 && prune != 1)
      fail_argument("graph \"", graph.name, "\": prune_unread_inputs is ", prune,
                    "; expected 0 or 1");
    graph.require_mutable();
    graph.prune_unread_inputs = prune == 1;
  });
}

cudnnfe_status_t cudnnfe_graph_get_pruned_uids(const cudnnfe_graph_t *g, int64_t *uids,
                                               size_t capacity, size_t *count) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(count, "count");
    const auto &pruned = graph.pruned();
    if (uids) {
      if (capacity < pruned.size())
        fail_argument("capacity ", capacity, " is too small for ", pruned.size(), " UIDs");
      size_t i = 0;
      for (const auto &entry : pruned) uids[i++] = entry.first;
    }
    *count = pruned.size();
  });
}

cudnnfe_status_t cudnnfe_graph_find_tensor(const cudnnfe_graph_t *g, const char *name,
                                           int64_t *uid) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(uid, "uid");
    if (!name) fail_argument("name is NULL");
    int64_t found = graph.find_tensor(name);
    if (!found) fail_argument("graph \"", graph.name, "\" has no tensor named \"", name, "\"");
    *uid = found;
  });
}
