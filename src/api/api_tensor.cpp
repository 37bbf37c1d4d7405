// Graph inputs, scalars, and per-tensor setters and getters.
#include "api/guard.h"
#include "graph/score_mod.h"

using namespace cudnnfe;

namespace {

std::vector<int64_t> copy_dims(int32_t ndims, const int64_t *values, const char *what) {
  if (ndims < 1 || ndims > CUDNNFE_MAX_DIMS)
    fail_argument(what, ": ndims is ", ndims, "; expected 1 to ", CUDNNFE_MAX_DIMS);
  if (!values) fail_argument(what, " is NULL");
  return std::vector<int64_t>(values, values + ndims);
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_tensor(cudnnfe_graph_t *g, const char *name,
                                          cudnnfe_dtype_t dtype, int32_t ndims, const int64_t *dims,
                                          const int64_t *strides, int64_t *uid) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(uid, "uid");
    std::string label = name ? name : "(unnamed)";
    std::vector<int64_t> d = copy_dims(ndims, dims, ("dims of tensor \"" + label + "\"").c_str());
    std::vector<int64_t> s;
    if (strides) s.assign(strides, strides + ndims);
    *uid = graph.add_tensor(string_or_empty(name), dtype, d, s);
  });
}

cudnnfe_status_t cudnnfe_graph_add_scalar(cudnnfe_graph_t *g, const char *name,
                                          cudnnfe_dtype_t dtype, double value, int64_t *uid) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(uid, "uid");
    *uid = graph.add_scalar(string_or_empty(name), dtype, value);
  });
}

cudnnfe_status_t cudnnfe_graph_set_next_output(cudnnfe_graph_t *g, const char *port, int64_t uid) {
  return guard_graph(g, [&](Graph &graph) {
    if (!port) fail_argument("port is NULL");
    graph.set_next_output(port, uid);
  });
}

cudnnfe_status_t cudnnfe_tensor_set_output(cudnnfe_graph_t *g, int64_t uid, int32_t is_output) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    Tensor &t = graph.tensor(uid);
    if (is_score_mod_tensor(graph, uid))
      fail_argument("tensor \"", t.name, "\" (UID ", uid,
                    ") belongs to a score modifier; a modifier's tensors stay virtual");
    if (t.producer < 0) {
      // A tensor the caller made is never virtual; marking it an output is
      // kept for an op that takes it as its output later (cudnn-frontend's
      // score_max.set_output(True) before sdpa).
      if (is_output == 0)
        fail_argument("tensor \"", t.name, "\" (UID ", uid,
                      ") is a graph input, which cannot be made virtual");
      return;
    }
    t.is_virtual = is_output == 0;
  });
}

cudnnfe_status_t cudnnfe_tensor_set_pass_by_value(cudnnfe_graph_t *g, int64_t uid,
                                                  int32_t pass_by_value) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    Tensor &t = graph.tensor(uid);
    if (pass_by_value && is_score_mod_tensor(graph, uid))
      fail_argument("tensor \"", t.name, "\" (UID ", uid,
                    ") belongs to a score modifier; only graph inputs are passed by value");
    if (pass_by_value && (t.producer >= 0 || t.is_scalar))
      fail_argument("tensor \"", t.name, "\" (UID ", uid, ") is ",
                    t.is_scalar ? "a scalar, already passed by value"
                                : "an operation output; only graph inputs are passed by value");
    if (pass_by_value && t.element_count() != 1)
      fail_argument("tensor \"", t.name, "\" has ", t.element_count(), " elements ",
                    dims_string(t.dims), "; a pass-by-value input holds one");
    t.pass_by_value = pass_by_value != 0;
  });
}

cudnnfe_status_t cudnnfe_tensor_get_pass_by_value(const cudnnfe_graph_t *g, int64_t uid,
                                                  int32_t *pass_by_value) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(pass_by_value, "pass_by_value");
    *pass_by_value = graph.tensor(uid).pass_by_value ? 1 : 0;
  });
}

cudnnfe_status_t cudnnfe_tensor_get_scalar_value(const cudnnfe_graph_t *g, int64_t uid,
                                                 double *value) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(value, "value");
    const Tensor &t = graph.tensor(uid);
    if (!t.is_scalar)
      fail_argument("tensor \"", t.name, "\" (UID ", uid,
                    ") is not a scalar made with cudnnfe_graph_add_scalar");
    *value = t.scalar_value;
  });
}

cudnnfe_status_t cudnnfe_tensor_set_dtype(cudnnfe_graph_t *g, int64_t uid, cudnnfe_dtype_t dtype) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    Tensor &t = graph.tensor(uid);
    if (dtype != CUDNNFE_DTYPE_NOT_SET && cudnnfe_dtype_size(dtype) == 0)
      fail_argument("tensor \"", t.name, "\": unknown data type ", dtype);
    if (t.is_scalar && dtype == CUDNNFE_DTYPE_NOT_SET)
      fail_argument("scalar \"", t.name, "\" needs a concrete data type");
    t.dtype = dtype;
  });
}

cudnnfe_status_t cudnnfe_tensor_set_dims(cudnnfe_graph_t *g, int64_t uid, int32_t ndims,
                                         const int64_t *dims) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    Tensor &t = graph.tensor(uid);
    std::vector<int64_t> d = copy_dims(ndims, dims, ("dims of tensor \"" + t.name + "\"").c_str());
    const std::string what = cat("tensor \"", t.name, "\"");
    check_dims(what, d);
    if (t.is_scalar) fail_argument("scalar \"", t.name, "\" has a fixed shape");
    // Keep the caller's strides only if they still fit the new dims.
    const bool keep_strides = t.strides_set_by_user && t.strides.size() == d.size();
    std::vector<int64_t> strides = keep_strides ? t.strides : strides_like(d, t.dims, t.strides);
    check_strides(what, d, strides);
    t.dims = d;
    t.strides = strides;
    t.strides_set_by_user = keep_strides;
    if (t.producer >= 0) t.dims_set_by_user = true;
  });
}

cudnnfe_status_t cudnnfe_tensor_set_strides(cudnnfe_graph_t *g, int64_t uid, int32_t ndims,
                                            const int64_t *strides) {
  return guard_graph(g, [&](Graph &graph) {
    graph.require_mutable();
    Tensor &t = graph.tensor(uid);
    std::vector<int64_t> s =
        copy_dims(ndims, strides, ("strides of tensor \"" + t.name + "\"").c_str());
    if (t.is_scalar) fail_argument("scalar \"", t.name, "\" has a fixed shape");
    if (s.size() != t.dims.size())
      fail_argument("tensor \"", t.name, "\": ", s.size(), " strides for a tensor of ",
                    t.dims.size(), " dims ", dims_string(t.dims));
    check_strides(cat("tensor \"", t.name, "\""), t.dims, s);
    t.strides = s;
    t.strides_set_by_user = true;
  });
}

cudnnfe_status_t cudnnfe_tensor_set_name(cudnnfe_graph_t *g, int64_t uid, const char *name) {
  return guard_graph(g, [&](Graph &graph) {
    if (!name) fail_argument("name is NULL");
    graph.set_tensor_name(uid, name);
  });
}

cudnnfe_status_t cudnnfe_tensor_set_uid(cudnnfe_graph_t *g, int64_t uid, int64_t new_uid) {
  return guard_graph(g, [&](Graph &graph) { graph.set_uid(uid, new_uid); });
}

cudnnfe_status_t cudnnfe_tensor_get_shape(const cudnnfe_graph_t *g, int64_t uid, int64_t *dims,
                                          int64_t *strides, int32_t capacity, int32_t *ndims) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(ndims, "ndims");
    const Tensor &t = graph.tensor(uid);
    const int32_t rank = static_cast<int32_t>(t.dims.size());
    if ((dims || strides) && capacity < rank)
      fail_argument("tensor \"", t.name, "\" has ", rank, " dims; capacity ", capacity,
                    " is too small");
    if (dims) std::copy(t.dims.begin(), t.dims.end(), dims);
    if (strides) std::copy(t.strides.begin(), t.strides.end(), strides);
    *ndims = rank;
  });
}

cudnnfe_status_t cudnnfe_tensor_get_dtype(const cudnnfe_graph_t *g, int64_t uid,
                                          cudnnfe_dtype_t *dtype) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(dtype, "dtype");
    *dtype = graph.tensor(uid).dtype;
  });
}

cudnnfe_status_t cudnnfe_tensor_get_name(const cudnnfe_graph_t *g, int64_t uid, const char **name) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(name, "name");
    *name = graph.tensor(uid).name.c_str();
  });
}

cudnnfe_status_t cudnnfe_tensor_get_kind(const cudnnfe_graph_t *g, int64_t uid,
                                         cudnnfe_tensor_kind_t *kind) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(kind, "kind");
    const Tensor &t = graph.tensor(uid);
    *kind = t.is_scalar      ? CUDNNFE_TENSOR_KIND_SCALAR
            : t.producer < 0 ? CUDNNFE_TENSOR_KIND_INPUT
            : t.is_virtual   ? CUDNNFE_TENSOR_KIND_VIRTUAL
                             : CUDNNFE_TENSOR_KIND_OUTPUT;
  });
}

cudnnfe_status_t cudnnfe_tensor_is_bound(const cudnnfe_graph_t *g, int64_t uid, int32_t *is_bound) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(is_bound, "is_bound");
    *is_bound = graph.tensor(uid).is_bound() ? 1 : 0;
  });
}
