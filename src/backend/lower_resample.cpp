// Resampling forward: a resample descriptor (mode, math type, padding mode,
// window, strides, paddings) and the operation reading x and writing y and,
// for max pooling with generate_index, the index tensor.
//
// Window, strides and paddings go to cuDNN as fractions (cudnnFraction_t),
// integers as n/1, as cudnn-frontend passes them. Upsampling by an integer
// scale s is described as a window of 1 with the fractional stride 1/s;
// cuDNN documents no more than that, and the GPU tests record whether the
// loaded library offers an engine for it (docs/layout-ops.md).
#include "backend/attribute_util.h"
#include "backend/loader.h"
#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

cudnnResampleMode_t to_cudnn_mode(cudnnfe_resample_mode_t mode) {
  switch (mode) {
    case CUDNNFE_RESAMPLE_MAXPOOL: return CUDNN_RESAMPLE_MAXPOOL;
    case CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING: return CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING;
    case CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING: return CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
    case CUDNNFE_RESAMPLE_NEAREST: return CUDNN_RESAMPLE_NEAREST;
    case CUDNNFE_RESAMPLE_BILINEAR: return CUDNN_RESAMPLE_BILINEAR;
    default: fail(CUDNNFE_STATUS_NOT_SUPPORTED, "resample mode ", mode, " has no cuDNN equivalent");
  }
}

cudnnPaddingMode_t to_cudnn_padding(cudnnfe_padding_mode_t mode) {
  switch (mode) {
    case CUDNNFE_PADDING_NEG_INF: return CUDNN_NEG_INF_PAD;
    case CUDNNFE_PADDING_EDGE: return CUDNN_EDGE_VAL_PAD;
    default: return CUDNN_ZERO_PAD;
  }
}

// Sets an optional attribute whose type or name newer headers deprecate;
// a refusal leaves cuDNN's default.
void set_optional(Descriptor &d, int attribute, int type, const void *value) {
  cudnn().BackendSetAttribute(d.get(), static_cast<cudnnBackendAttributeName_t>(attribute),
                              static_cast<cudnnBackendAttributeType_t>(type), 1, value);
}

}  // namespace

void lower_resample(Lowering &lowering, const Node &node) {
  const ResampleAttrs &a = node.as<ResampleAttrs>();
  const int n = a.spatial_dims;
  const bool upsample = a.mode == CUDNNFE_RESAMPLE_NEAREST || a.mode == CUDNNFE_RESAMPLE_BILINEAR;

  Descriptor desc(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR);
  set_attribute(desc, CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, to_cudnn_mode(a.mode),
                "the resample mode");
  desc.set_data_type(CUDNN_ATTR_RESAMPLE_COMP_TYPE, to_cudnn(node.compute_dtype));
  // NaN propagates (the CPU reference's max pooling does the same). The
  // attribute's type is CUDNN_TYPE_NAN_PROPOGATION (10), deprecated in the
  // headers but still what cuDNN reads.
  const int32_t propagate = 1;  // CUDNN_PROPAGATE_NAN
  set_optional(desc, CUDNN_ATTR_RESAMPLE_NAN_PROPAGATION, 10, &propagate);
  set_attribute(desc, CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE,
                to_cudnn_padding(a.padding_mode), "the padding mode");
  desc.set_int64(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, n);
  // Every geometry attribute as fractions (what cuDNN reads; integers are
  // n/1).
  std::vector<cudnnFraction_t> window(n), stride(n), pre(n), post(n);
  for (int i = 0; i < n; ++i) {
    if (upsample) {
      window[i] = {1, 1};
      stride[i] = {1, a.scale[i]};
      pre[i] = post[i] = {0, 1};
    } else {
      window[i] = {a.window[i], 1};
      stride[i] = {a.stride[i], 1};
      pre[i] = {a.pre_padding[i], 1};
      post[i] = {a.post_padding[i], 1};
    }
  }
  auto set_fractions = [&](cudnnBackendAttributeName_t name, std::vector<cudnnFraction_t> &v) {
    cudnnStatus_t s =
        cudnn().BackendSetAttribute(desc.get(), name, CUDNN_TYPE_FRACTION, n, v.data());
    if (s != CUDNN_STATUS_SUCCESS)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "cuDNN refused ", attribute_name(name), ": ",
           status_text(s), ": ", last_error());
  };
  set_fractions(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, window);
  set_fractions(CUDNN_ATTR_RESAMPLE_STRIDES, stride);
  set_fractions(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, pre);
  set_fractions(CUDNN_ATTR_RESAMPLE_POST_PADDINGS, post);
  lowering.finalize(desc);
  const Descriptor &kept = lowering.keep(std::move(desc));

  cudnnBackendDescriptor_t x = lowering.tensor(node.inputs[Resample::kX]);
  cudnnBackendDescriptor_t y = lowering.tensor(node.outputs[Resample::kY]);
  Descriptor op(CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, &x, 1);
  op.set_descriptors(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, &y, 1);
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, kept);
  // Alpha 1 and beta 0 (attributes 1713 and 1714, deprecated in the
  // headers; older libraries read them).
  const double alpha = 1.0, beta = 0.0;
  set_optional(op, 1713, CUDNN_TYPE_DOUBLE, &alpha);
  set_optional(op, 1714, CUDNN_TYPE_DOUBLE, &beta);
  if (node.outputs[Resample::kIndex] != 0) {
    cudnnBackendDescriptor_t index = lowering.tensor(node.outputs[Resample::kIndex]);
    op.set_descriptors(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_IDXDESC, &index, 1);
  }
  add_operation_named(lowering, std::move(op), "cuDNN's resample operation");
}

}  // namespace cudnnfe::backend
