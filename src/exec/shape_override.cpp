// Execute-time shapes: checks and the CPU reference (exec/shape_override.h).
#include "exec/shape_override.h"

#include <algorithm>

#include "core/error.h"
#include "cpu/cpu_plan.h"

namespace cudnnfe {
namespace {

// Bound tensors a call may override; the same limit as the bindings.
constexpr size_t kMaxOverrides = kMaxBoundTensors;

ShapeOverride read_one(const Graph &graph, const cudnnfe_shape_override_t &o, size_t i) {
  const std::string where = cat("overrides[", i, "]");
  if (!graph.has_tensor(o.uid))
    fail_argument(where, ": UID ", o.uid, " is not a tensor of graph \"", graph.name, "\"");
  const Tensor &t = graph.tensor(o.uid);
  const std::string what = cat(where, ": tensor \"", t.name, "\" (UID ", o.uid, ")");
  if (!t.is_bound())
    fail_argument(what, " is ", t.is_scalar ? "a scalar" : "virtual",
                  "; only bound tensors (graph inputs and outputs) take execute-time shapes");
  if (o.num_dims != static_cast<int32_t>(t.dims.size()))
    fail_argument(what, " has ", t.dims.size(), " dims; the override gives ", o.num_dims,
                  " (an override cannot change a tensor's rank)");
  if (!o.dims || !o.strides) fail_argument(what, ": dims or strides is NULL");
  ShapeOverride s{o.uid, std::vector<int64_t>(o.dims, o.dims + o.num_dims),
                  std::vector<int64_t>(o.strides, o.strides + o.num_dims)};
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (s.dims[d] <= 0)
      fail_argument(what, ": override dim ", d, " is ", s.dims[d], " in ", dims_string(s.dims),
                    "; dims must be positive");
    if (s.strides[d] < 0)
      fail_argument(what, ": override stride ", d, " is ", s.strides[d], " in ",
                    dims_string(s.strides), "; strides must be >= 0");
  }
  return s;
}

const ShapeOverride *find_override(const std::vector<ShapeOverride> &overrides, int64_t uid) {
  for (const ShapeOverride &o : overrides)
    if (o.uid == uid) return &o;
  return nullptr;
}

// Gives the copy's bound tensors their overrides; outputs get the
// override's strides and have their dims inferred again (checked after).
void apply(Graph &copy, const std::vector<ShapeOverride> &overrides) {
  for (const ShapeOverride &o : overrides) {
    Tensor &t = copy.tensor(o.uid);
    t.strides = o.strides;
    t.strides_set_by_user = true;
    if (t.producer < 0) {
      t.dims = o.dims;
    } else {
      t.dims_set_by_user = false;
    }
  }
}

// Every bound tensor of `copy` has the shape its override says, or else
// the one it was built with (strides of size-1 dims aside: they address the
// same memory whatever they are).
void check_shapes(const Graph &graph, const Graph &copy,
                  const std::vector<ShapeOverride> &overrides) {
  for (int64_t uid : graph.bound_uids()) {
    const Tensor &built = graph.tensor(uid);
    const Tensor &now = copy.tensor(uid);
    if (const ShapeOverride *o = find_override(overrides, uid)) {
      if (now.dims != o->dims)
        fail_argument("tensor \"", built.name, "\" (UID ", uid, "): the override gives dims ",
                      dims_string(o->dims), " but with the other overrides its op makes ",
                      dims_string(now.dims));
    } else if (now.dims != built.dims || !same_layout(now.dims, now.strides, built.strides)) {
      fail_argument("tensor \"", built.name, "\" (UID ", uid, ") was built with dims ",
                    dims_string(built.dims), " and with these overrides has dims ",
                    dims_string(now.dims), " strides ", dims_string(now.strides),
                    "; give it an override too");
    }
  }
}

}  // namespace

void Plan::execute_overridden(Handle &, void *const *, const std::vector<ShapeOverride> &, void *,
                              void *) const {
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "plan ", name(), " does not take execute-time shapes");
}

std::vector<ShapeOverride> read_shape_overrides(const Graph &graph,
                                                const cudnnfe_shape_override_t *overrides,
                                                size_t count) {
  if (!graph.override_shape_enabled)
    fail(CUDNNFE_STATUS_WRONG_STATE, "graph \"", graph.name,
         "\" was built without override_shape_enabled; build it with "
         "cudnnfe_build_options_t.override_shape_enabled = 1 to give shapes at execute");
  if (count > kMaxOverrides)
    fail_argument(count, " overrides given; a graph has at most ", kMaxOverrides, " bound tensors");
  if (count && !overrides) fail_argument("overrides is NULL but num_overrides is ", count);
  std::vector<ShapeOverride> out;
  for (size_t i = 0; i < count; ++i) {
    ShapeOverride s = read_one(graph, overrides[i], i);
    if (find_override(out, s.uid))
      fail_argument("overrides[", i, "]: tensor \"", graph.tensor(s.uid).name, "\" (UID ", s.uid,
                    ") is overridden twice");
    out.push_back(std::move(s));
  }
  return out;
}

void execute_cpu_overridden(const Graph &graph, Handle &handle, void *const *data,
                            const std::vector<ShapeOverride> &overrides) {
  Graph copy = graph.copy_unbuilt();
  apply(copy, overrides);
  try {
    copy.validate();
  } catch (const Error &e) {
    fail(e.status() == CUDNNFE_STATUS_INVALID_GRAPH ? CUDNNFE_STATUS_INVALID_ARGUMENT : e.status(),
         "graph \"", graph.name, "\" with the execute-time shapes: ", e.message());
  }
  check_shapes(graph, copy, overrides);
  if (copy.bound_uids() != graph.bound_uids())
    fail(CUDNNFE_STATUS_INTERNAL, "the overridden copy of graph \"", graph.name,
         "\" has other bound tensors");
  build_cpu_plan(copy)->execute(handle, data, nullptr, nullptr);
}

}  // namespace cudnnfe
