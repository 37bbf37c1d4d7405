// The layout, resampling and random-number ops of the C API: reshape,
// transpose, slice, concatenate, resample and rng.
#include "api/guard.h"
#include "graph/op_schema.h"

using namespace cudnnfe;

void cudnnfe_layout_options_init_sized(cudnnfe_layout_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_layout_options_t *) {});
}

void cudnnfe_resample_options_init_sized(cudnnfe_resample_options_t *o, size_t struct_size) {
  init_sized(o, struct_size,
             [](cudnnfe_resample_options_t *o) { write_c_defaults(OpKind::kResample, o); });
}

void cudnnfe_rng_options_init_sized(cudnnfe_rng_options_t *o, size_t struct_size) {
  init_sized(o, struct_size, [](cudnnfe_rng_options_t *o) { write_c_defaults(OpKind::kRng, o); });
}

namespace {

// `count` entries of `values` (which may be NULL only when count is 0 or
// `fallback` is given), checked against CUDNNFE_MAX_DIMS.
template <class T>
std::vector<int64_t> read_array(int32_t count, const T *values, const char *what,
                                int64_t fallback = 0, bool has_fallback = false) {
  if (count < 1 || count > CUDNNFE_MAX_DIMS)
    fail_argument(what, ": ", count, " entries; expected 1 to ", CUDNNFE_MAX_DIMS);
  std::vector<int64_t> out(static_cast<size_t>(count), fallback);
  if (!values) {
    if (!has_fallback) fail_argument(what, " is NULL");
    return out;
  }
  for (int32_t i = 0; i < count; ++i) out[static_cast<size_t>(i)] = values[i];
  return out;
}

cudnnfe_layout_options_t layout_options(const cudnnfe_layout_options_t *options) {
  return read_options(options, cudnnfe_layout_options_init_sized, "layout options");
}

}  // namespace

cudnnfe_status_t cudnnfe_graph_add_reshape(cudnnfe_graph_t *g, int64_t x, int32_t ndims,
                                           const int64_t *dims,
                                           const cudnnfe_layout_options_t *options, int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = layout_options(options);
    ReshapeAttrs a;
    a.dims = read_array(ndims, dims, "reshape dims");
    *y = graph.add_node(OpKind::kReshape, string_or_empty(opts.name), {x}, a, CUDNNFE_DTYPE_NOT_SET)
             .outputs[Reshape::kY];
  });
}

cudnnfe_status_t cudnnfe_graph_add_transpose(cudnnfe_graph_t *g, int64_t x, int32_t ndims,
                                             const int32_t *permutation,
                                             const cudnnfe_layout_options_t *options, int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = layout_options(options);
    TransposeAttrs a;
    a.permutation = read_array(ndims, permutation, "transpose permutation");
    *y =
        graph
            .add_node(OpKind::kTranspose, string_or_empty(opts.name), {x}, a, CUDNNFE_DTYPE_NOT_SET)
            .outputs[Transpose::kY];
  });
}

cudnnfe_status_t cudnnfe_graph_add_slice(cudnnfe_graph_t *g, int64_t x, int32_t ndims,
                                         const int64_t *start, const int64_t *end,
                                         const int64_t *step,
                                         const cudnnfe_layout_options_t *options, int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = layout_options(options);
    SliceAttrs a;
    a.start = read_array(ndims, start, "slice start");
    a.end = read_array(ndims, end, "slice end");
    a.step = read_array(ndims, step, "slice step", 1, true);
    *y = graph.add_node(OpKind::kSlice, string_or_empty(opts.name), {x}, a, CUDNNFE_DTYPE_NOT_SET)
             .outputs[Slice::kY];
  });
}

cudnnfe_status_t cudnnfe_graph_add_concatenate(cudnnfe_graph_t *g, int32_t num_inputs,
                                               const int64_t *inputs, int32_t axis,
                                               const cudnnfe_layout_options_t *options,
                                               int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = layout_options(options);
    if (num_inputs < 2 || num_inputs > kMaxConcatInputs)
      fail_argument("concatenate: num_inputs is ", num_inputs, "; expected 2 to ",
                    kMaxConcatInputs);
    if (!inputs) fail_argument("concatenate: inputs is NULL");
    std::vector<int64_t> uids(inputs, inputs + num_inputs);
    for (size_t i = 0; i < uids.size(); ++i)
      if (uids[i] == 0) fail_argument("concatenate: inputs[", i, "] is 0 (no tensor)");
    ConcatAttrs a;
    a.axis = axis;
    *y = graph
             .add_node(OpKind::kConcatenate, string_or_empty(opts.name), uids, a,
                       CUDNNFE_DTYPE_NOT_SET)
             .outputs[Concatenate::kY];
  });
}

cudnnfe_status_t cudnnfe_graph_add_resample(cudnnfe_graph_t *g, int64_t x,
                                            const cudnnfe_resample_options_t *options, int64_t *y,
                                            int64_t *index) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_resample_options_init_sized, "resample options");
    if (opts.generate_index) require_out(index, "index (generate_index is set)");
    if (opts.spatial_dims < 0 || opts.spatial_dims > CUDNNFE_MAX_SPATIAL_DIMS)
      fail_argument("resample options: spatial_dims is ", opts.spatial_dims, "; expected 0 to 3");
    ResampleAttrs a;
    read_c_options(OpKind::kResample, &opts, &a);
    const Node &node =
        graph.add_node(OpKind::kResample, string_or_empty(opts.name), {x}, a, opts.compute_dtype);
    *y = node.outputs[Resample::kY];
    if (index) *index = node.outputs[Resample::kIndex];
  });
}

cudnnfe_status_t cudnnfe_graph_add_rng(cudnnfe_graph_t *g, int32_t ndims, const int64_t *dims,
                                       int64_t seed, int64_t offset,
                                       const cudnnfe_rng_options_t *options, int64_t *y) {
  return guard_graph(g, [&](Graph &graph) {
    require_out(y, "y");
    auto opts = read_options(options, cudnnfe_rng_options_init_sized, "rng options");
    RngAttrs a;
    read_c_options(OpKind::kRng, &opts, &a);
    a.dims = read_array(ndims, dims, "rng dims");
    *y = graph
             .add_node(OpKind::kRng, string_or_empty(opts.name), {seed, offset}, a,
                       opts.compute_dtype)
             .outputs[Rng::kY];
  });
}
