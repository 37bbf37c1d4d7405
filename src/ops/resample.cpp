// Resampling forward (pooling and upsampling): shape rules. x is
// [N, C, spatial...] in logical order with any strides; y and the index
// output (max pooling, y's shape) are channels-last unless their strides
// are set, as cudnn-frontend's resample.h makes them.
#include "core/dtype.h"
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

bool is_pooling(cudnnfe_resample_mode_t mode) {
  return mode == CUDNNFE_RESAMPLE_MAXPOOL || mode == CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING ||
         mode == CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
}

void check_attrs(const Node &node, ResampleAttrs &attrs, size_t rank) {
  if (std::string(resample_mode_name(attrs.mode)) == "UNKNOWN")
    fail_graph(Graph::label(node), ": unknown resample mode ", attrs.mode);
  const int spatial = static_cast<int>(rank) - 2;
  if (spatial < 1 || spatial > CUDNNFE_MAX_SPATIAL_DIMS)
    fail_graph(Graph::label(node), ": x has ", rank,
               " dims; resampling needs 3 to 5 [N,C,(D,)(H,)W]");
  if (attrs.spatial_dims != 0 && attrs.spatial_dims != spatial)
    fail_graph(Graph::label(node), ": spatial_dims is ", attrs.spatial_dims, " but x has ", spatial,
               " spatial dims");
  attrs.spatial_dims = spatial;
  if (std::string(padding_mode_name(attrs.padding_mode)) == "UNKNOWN")
    fail_graph(Graph::label(node), ": unknown padding mode ", attrs.padding_mode);
  if (attrs.padding_mode == CUDNNFE_PADDING_AUTO)
    attrs.padding_mode =
        attrs.mode == CUDNNFE_RESAMPLE_MAXPOOL ? CUDNNFE_PADDING_NEG_INF : CUDNNFE_PADDING_ZERO;
  const bool pooling = is_pooling(attrs.mode);
  if (attrs.mode != CUDNNFE_RESAMPLE_MAXPOOL && attrs.padding_mode != CUDNNFE_PADDING_ZERO)
    fail_graph(Graph::label(node), ": padding mode ", padding_mode_name(attrs.padding_mode),
               " is for MAXPOOL only; ", resample_mode_name(attrs.mode), " pads with ZERO");
  if (attrs.generate_index && attrs.mode != CUDNNFE_RESAMPLE_MAXPOOL)
    fail_graph(Graph::label(node), ": generate_index is set but mode is ",
               resample_mode_name(attrs.mode), "; only MAXPOOL has an index output");
  for (int i = 0; i < spatial; ++i) {
    if (pooling) {
      if (attrs.window[i] < 1)
        fail_graph(Graph::label(node), ": window of spatial dim ", i, " is ", attrs.window[i],
                   "; windows must be >= 1");
      if (attrs.stride[i] < 1)
        fail_graph(Graph::label(node), ": stride of spatial dim ", i, " is ", attrs.stride[i],
                   "; strides must be >= 1");
      if (attrs.pre_padding[i] < 0 || attrs.post_padding[i] < 0 ||
          attrs.pre_padding[i] >= attrs.window[i] || attrs.post_padding[i] >= attrs.window[i])
        fail_graph(Graph::label(node), ": padding of spatial dim ", i, " (pre ",
                   attrs.pre_padding[i], ", post ", attrs.post_padding[i],
                   ") must be >= 0 and smaller than the window (", attrs.window[i],
                   ") so that every window sees the image");
    } else {
      if (attrs.scale[i] < 1)
        fail_graph(Graph::label(node), ": scale of spatial dim ", i, " is ", attrs.scale[i],
                   "; upsampling factors must be >= 1");
      if (attrs.pre_padding[i] != 0 || attrs.post_padding[i] != 0)
        fail_graph(Graph::label(node), ": padding of spatial dim ", i, " is set but ",
                   resample_mode_name(attrs.mode), " upsampling takes no padding");
    }
  }
}

}  // namespace

void infer_resample(Graph &graph, Node &node) {
  ResampleAttrs &attrs = node.as<ResampleAttrs>();
  const Tensor &x = required_input(graph, node, Resample::kX);
  if (x.is_scalar)
    fail_graph(Graph::label(node), ": x \"", x.name, "\" is a scalar; resample needs an image");
  check_attrs(node, attrs, x.dims.size());
  std::vector<int64_t> dims = {x.dims[0], x.dims[1]};
  for (int i = 0; i < attrs.spatial_dims; ++i) {
    const int64_t in = x.dims[2 + i];
    if (is_pooling(attrs.mode)) {
      const int64_t padded =
          checked_size(node, CheckedInt(in) + attrs.pre_padding[i] + attrs.post_padding[i],
                       cat("padded spatial dim ", i, " of x \"", x.name, "\""));
      if (padded < attrs.window[i])
        fail_graph(Graph::label(node), ": window ", attrs.window[i], " of spatial dim ", i,
                   " is larger than the padded image \"", x.name, "\" (", in, " + ",
                   attrs.pre_padding[i], " + ", attrs.post_padding[i], ")");
      dims.push_back((padded - attrs.window[i]) / attrs.stride[i] + 1);
    } else {
      dims.push_back(checked_size(node, CheckedInt(in) * attrs.scale[i],
                                  cat("spatial dim ", i, " of x \"", x.name, "\" times scale")));
    }
  }
  Tensor &y = set_output_shape(graph, node, Resample::kY, dims, channels_last_order(dims.size()));
  if (y.dims != dims)
    fail_graph(Graph::label(node), ": output \"", y.name, "\" was set to ", dims_string(y.dims),
               " but the resampling produces ", dims_string(dims));
  if (node.outputs[Resample::kIndex]) {
    Tensor &index =
        set_output_shape(graph, node, Resample::kIndex, dims, channels_last_order(dims.size()));
    if (index.dims != dims)
      fail_graph(Graph::label(node), ": index \"", index.name, "\" was set to ",
                 dims_string(index.dims), " but it has y's shape ", dims_string(dims));
    if (index.dtype == CUDNNFE_DTYPE_NOT_SET) index.dtype = CUDNNFE_DTYPE_INT8;
  }
}

void check_types_resample(Graph &graph, Node &node) {
  if (!node.outputs[Resample::kIndex]) return;
  const Tensor &index = graph.tensor(node.outputs[Resample::kIndex]);
  if (!dtype_is_integer(index.dtype))
    fail_graph(Graph::label(node), ": index \"", index.name, "\" has data type ",
               dtype_name(index.dtype), "; indices need an integer type (INT8 by default)");
  const ResampleAttrs &attrs = node.as<ResampleAttrs>();
  int64_t positions = 1;
  for (int i = 0; i < attrs.spatial_dims; ++i) positions *= attrs.window[i];
  const int64_t largest = index.dtype == CUDNNFE_DTYPE_INT8    ? 127
                          : index.dtype == CUDNNFE_DTYPE_UINT8 ? 255
                          : index.dtype == CUDNNFE_DTYPE_INT32 ? 2147483647
                                                               : INT64_MAX;
  if (positions - 1 > largest)
    fail_graph(Graph::label(node), ": the window has ", positions, " positions but index \"",
               index.name, "\" is ", dtype_name(index.dtype), " (largest index ", largest,
               "); set the index's data type to INT32");
}

}  // namespace cudnnfe
