// Convolution forward, data gradient and weight gradient: shape rules.
// All three share one geometry: out = (in + pre + post - dil*(k-1) - 1)/s + 1.
// Grouped and depthwise convolutions have no attribute: as in cuDNN, the
// group count is the image's channels over the weight's (image C = groups *
// weight C, K divisible by groups).
//
// An output whose strides the caller did not set is channels-last (NHWC,
// NDHWC), whatever the operands' layouts: cudnn-frontend's default for all
// three (conv_fprop.h, conv_dgrad.h, conv_wgrad.h), which its callers
// allocate for. Taking x's order instead read C = 1 as a layout of its own
// (docs/design.md "Output layouts").
#include "core/error.h"
#include "ops/ops.h"

namespace cudnnfe {
namespace {

int64_t conv_out_size(const Node &node, int dim, int64_t in, int64_t k, int64_t pre, int64_t post,
                      int64_t stride, int64_t dilation) {
  const std::string what = cat("spatial dim ", dim, " (in ", in, " + padding ", pre, " + ", post,
                               ", filter ", k, " dilated by ", dilation, ")");
  int64_t span = checked_size(node, CheckedInt(dilation) * (CheckedInt(k) - 1) + 1, what);
  int64_t padded = checked_size(node, CheckedInt(in) + pre + post, what);
  if (padded < span) return 0;
  return (padded - span) / stride + 1;
}

// Checks the attributes against the tensors' spatial rank.
void check_attrs(const Node &node, ConvAttrs &attrs, size_t rank) {
  int spatial = static_cast<int>(rank) - 2;
  if (spatial < 1 || spatial > CUDNNFE_MAX_SPATIAL_DIMS)
    fail_graph(Graph::label(node), ": tensors have ", rank,
               " dims; convolutions need 3 to 5 [N,C,(D,)(H,)W]");
  if (attrs.spatial_dims != 0 && attrs.spatial_dims != spatial)
    fail_graph(Graph::label(node), ": spatial_dims is ", attrs.spatial_dims,
               " but the tensors have ", spatial, " spatial dims");
  attrs.spatial_dims = spatial;
  for (int i = 0; i < spatial; ++i) {
    if (attrs.pre_padding[i] < 0 || attrs.post_padding[i] < 0)
      fail_graph(Graph::label(node), ": padding of spatial dim ", i, " is negative (pre ",
                 attrs.pre_padding[i], ", post ", attrs.post_padding[i], ")");
    if (attrs.stride[i] < 1)
      fail_graph(Graph::label(node), ": stride of spatial dim ", i, " is ", attrs.stride[i],
                 "; strides must be >= 1");
    if (attrs.dilation[i] < 1)
      fail_graph(Graph::label(node), ": dilation of spatial dim ", i, " is ", attrs.dilation[i],
                 "; dilations must be >= 1");
  }
  if (attrs.mode != CUDNNFE_CONV_MODE_CROSS_CORRELATION &&
      attrs.mode != CUDNNFE_CONV_MODE_CONVOLUTION)
    fail_graph(Graph::label(node), ": unknown convolution mode ", attrs.mode);
}

void require_same_rank(const Node &node, const Tensor &a, const std::string &a_port,
                       const Tensor &b, const std::string &b_port) {
  if (a.dims.size() != b.dims.size())
    fail_graph(Graph::label(node), ": ", a_port, " \"", a.name, "\" has ", a.dims.size(), " dims ",
               dims_string(a.dims), " but ", b_port, " \"", b.name, "\" has ", b.dims.size(),
               " dims ", dims_string(b.dims), "; they must match");
}

void require_dim(const Node &node, const std::string &what, int64_t got, int64_t expected,
                 const std::string &rule) {
  if (got != expected)
    fail_graph(Graph::label(node), ": ", what, " is ", got, "; expected ", expected, " (", rule,
               ")");
}

// The group count of image channels `c` against weight channels `wc` and
// output channels `k`: c must be a multiple of wc, and k of c / wc.
int64_t require_groups(const Node &node, const std::string &image, int64_t c,
                       const std::string &weight, int64_t wc, int64_t k) {
  if (wc < 1 || c % wc != 0)
    fail_graph(Graph::label(node), ": ", weight, " dim 1 (C) is ", wc, " but ", image, " has ", c,
               " channels; the image's channels must be a multiple of the weight's (image C = "
               "groups * weight C)");
  const int64_t groups = c / wc;
  if (k % groups != 0)
    fail_graph(Graph::label(node), ": ", weight, " dim 0 (K) is ", k, ", not divisible by the ",
               groups, " groups that ", image, " (", c, " channels) and the weight (", wc,
               " per group) imply; each group needs K / groups output channels");
  return groups;
}

void infer_fprop(Graph &graph, Node &node, ConvAttrs &attrs) {
  const Tensor &x = required_input(graph, node, ConvFprop::kImage);
  const Tensor &w = required_input(graph, node, ConvFprop::kWeight);
  require_same_rank(node, x, "image", w, "weight");
  check_attrs(node, attrs, x.dims.size());
  require_groups(node, cat("image \"", x.name, "\""), x.dims[1], cat("weight \"", w.name, "\""),
                 w.dims[1], w.dims[0]);
  std::vector<int64_t> y = {x.dims[0], w.dims[0]};
  for (int i = 0; i < attrs.spatial_dims; ++i) {
    int64_t out = conv_out_size(node, i, x.dims[2 + i], w.dims[2 + i], attrs.pre_padding[i],
                                attrs.post_padding[i], attrs.stride[i], attrs.dilation[i]);
    if (out < 1)
      fail_graph(Graph::label(node), ": filter \"", w.name, "\" spatial dim ", i, " (",
                 w.dims[2 + i], ", dilation ", attrs.dilation[i],
                 ") is larger than the padded image \"", x.name, "\" (", x.dims[2 + i], " + ",
                 attrs.pre_padding[i], " + ", attrs.post_padding[i], ")");
    y.push_back(out);
  }
  Tensor &out = set_output_shape(graph, node, ConvFprop::kY, y, channels_last_order(y.size()));
  if (out.dims != y)
    fail_graph(Graph::label(node), ": output \"", out.name, "\" was set to ", dims_string(out.dims),
               " but the convolution produces ", dims_string(y));
}

void infer_dgrad(Graph &graph, Node &node, ConvAttrs &attrs) {
  const Tensor &dy = required_input(graph, node, ConvDgrad::kLoss);
  const Tensor &w = required_input(graph, node, ConvDgrad::kWeight);
  require_same_rank(node, dy, "loss", w, "weight");
  check_attrs(node, attrs, dy.dims.size());
  require_dim(node, cat("weight \"", w.name, "\" dim 0 (K)"), w.dims[0], dy.dims[1],
              cat("the channel count of loss \"", dy.name, "\" ", dims_string(dy.dims)));
  std::vector<int64_t> dx = {dy.dims[0], w.dims[1]};
  const Tensor &given = graph.tensor(node.outputs[ConvDgrad::kDx]);
  bool provisional = false;
  for (int i = 0; i < attrs.spatial_dims; ++i) {
    int64_t in = checked_size(
        node,
        (CheckedInt(dy.dims[2 + i]) - 1) * attrs.stride[i] - attrs.pre_padding[i] -
            attrs.post_padding[i] +
            CheckedInt(attrs.dilation[i]) * (CheckedInt(w.dims[2 + i]) - 1) + 1,
        cat("dx spatial dim ", i, " = (dy - 1)*stride - pre - post + dilation*(k-1) + 1"));
    if (in < 1) {
      // The smallest dx is empty, but with stride > 1 a larger one may map
      // to dy: dims the caller set decide (checked below), and the caller
      // may still set them until validation.
      if (!given.dims_set_by_user && !graph.adding_node())
        fail_graph(Graph::label(node), ": padding of spatial dim ", i,
                   " leaves no input positions for loss \"", dy.name, "\"; set dx's dims");
      provisional = provisional || !given.dims_set_by_user;
      in = 1;  // a placeholder either way
    }
    dx.push_back(in);
  }
  Tensor &out = set_output_shape(graph, node, ConvDgrad::kDx, dx, channels_last_order(dx.size()));
  if (provisional) return;  // checked again at validation
  // A user-set dx (needed when stride > 1 hides the size) must map back to dy.
  require_same_rank(node, out, "dx", dy, "loss");
  require_dim(node, cat("dx \"", out.name, "\" dim 0 (N)"), out.dims[0], dy.dims[0],
              cat("the batch of loss \"", dy.name, "\""));
  require_groups(node, cat("dx \"", out.name, "\""), out.dims[1], cat("weight \"", w.name, "\""),
                 w.dims[1], w.dims[0]);
  for (int i = 0; i < attrs.spatial_dims; ++i)
    require_dim(node, cat("loss \"", dy.name, "\" spatial dim ", i), dy.dims[2 + i],
                conv_out_size(node, i, out.dims[2 + i], w.dims[2 + i], attrs.pre_padding[i],
                              attrs.post_padding[i], attrs.stride[i], attrs.dilation[i]),
                "the forward convolution of dx's size");
}

void infer_wgrad(Graph &graph, Node &node, ConvAttrs &attrs) {
  const Tensor &x = required_input(graph, node, ConvWgrad::kImage);
  const Tensor &dy = required_input(graph, node, ConvWgrad::kLoss);
  require_same_rank(node, x, "image", dy, "loss");
  check_attrs(node, attrs, x.dims.size());
  require_dim(node, cat("loss \"", dy.name, "\" dim 0 (N)"), dy.dims[0], x.dims[0],
              cat("the batch of image \"", x.name, "\""));
  std::vector<int64_t> dw = {dy.dims[1], x.dims[1]};
  for (int i = 0; i < attrs.spatial_dims; ++i) {
    int64_t k = checked_size(
        node,
        (CheckedInt(x.dims[2 + i]) + attrs.pre_padding[i] + attrs.post_padding[i] - 1 -
         (CheckedInt(dy.dims[2 + i]) - 1) * attrs.stride[i]) /
                attrs.dilation[i] +
            1,
        cat("dw spatial dim ", i, " = (x + pre + post - 1 - (dy - 1)*stride)/dilation + 1"));
    if (k < 1)
      fail_graph(Graph::label(node), ": loss \"", dy.name, "\" spatial dim ", i, " (",
                 dy.dims[2 + i], ") is larger than the image \"", x.name, "\" allows");
    dw.push_back(k);
  }
  Tensor &out = set_output_shape(graph, node, ConvWgrad::kDw, dw, channels_last_order(dw.size()));
  require_same_rank(node, out, "dw", x, "image");
  require_dim(node, cat("dw \"", out.name, "\" dim 0 (K)"), out.dims[0], dy.dims[1],
              cat("the channels of loss \"", dy.name, "\""));
  require_groups(node, cat("image \"", x.name, "\""), x.dims[1], cat("dw \"", out.name, "\""),
                 out.dims[1], out.dims[0]);
  for (int i = 0; i < attrs.spatial_dims; ++i)
    require_dim(node, cat("loss \"", dy.name, "\" spatial dim ", i), dy.dims[2 + i],
                conv_out_size(node, i, x.dims[2 + i], out.dims[2 + i], attrs.pre_padding[i],
                              attrs.post_padding[i], attrs.stride[i], attrs.dilation[i]),
                "the forward convolution with dw's filter size");
}

}  // namespace

void infer_conv(Graph &graph, Node &node) {
  ConvAttrs &attrs = node.as<ConvAttrs>();
  switch (node.kind) {
    case OpKind::kConvFprop: return infer_fprop(graph, node, attrs);
    case OpKind::kConvDgrad: return infer_dgrad(graph, node, attrs);
    default: return infer_wgrad(graph, node, attrs);
  }
}

}  // namespace cudnnfe
