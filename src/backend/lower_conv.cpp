// Convolution forward, data gradient and weight gradient: one convolution
// descriptor (geometry and math type) plus the operation naming its tensors.
#include "backend/lowering.h"

namespace cudnnfe::backend {
namespace {

Descriptor make_conv_descriptor(Lowering &lowering, const ConvAttrs &attrs,
                                cudnnDataType_t compute) {
  const int n = attrs.spatial_dims;
  std::vector<int64_t> pre(attrs.pre_padding.begin(), attrs.pre_padding.begin() + n);
  std::vector<int64_t> post(attrs.post_padding.begin(), attrs.post_padding.begin() + n);
  std::vector<int64_t> stride(attrs.stride.begin(), attrs.stride.begin() + n);
  std::vector<int64_t> dilation(attrs.dilation.begin(), attrs.dilation.begin() + n);
  Descriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  conv.set_data_type(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, compute);
  // Our constants follow frameworks (cross-correlation first); cuDNN's are
  // the other way round.
  conv.set_conv_mode(CUDNN_ATTR_CONVOLUTION_CONV_MODE, attrs.mode == CUDNNFE_CONV_MODE_CONVOLUTION
                                                           ? CUDNN_CONVOLUTION
                                                           : CUDNN_CROSS_CORRELATION);
  conv.set_int64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, n);
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, pre);
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, post);
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, stride);
  conv.set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, dilation);
  lowering.finalize(conv);
  return conv;
}

// Alpha and beta are FLOAT except for DOUBLE math.
void set_scaling(Descriptor &op, cudnnDataType_t compute, cudnnBackendAttributeName_t alpha,
                 cudnnBackendAttributeName_t beta) {
  if (compute == CUDNN_DATA_DOUBLE) {
    op.set_double(alpha, 1.0);
    op.set_double(beta, 0.0);
  } else {
    op.set_float(alpha, 1.0f);
    op.set_float(beta, 0.0f);
  }
}

}  // namespace

void lower_conv(Lowering &lowering, const Node &node) {
  const cudnnDataType_t compute = to_cudnn(node.compute_dtype);
  const Descriptor &conv =
      lowering.keep(make_conv_descriptor(lowering, node.as<ConvAttrs>(), compute));
  // conv_fprop's ports: conv_dgrad's (loss, weight -> dx) and conv_wgrad's
  // (image, loss -> dw) are at the same positions.
  static_assert(same_port(ConvFprop::kImage, ConvDgrad::kLoss, ConvWgrad::kImage) &&
                same_port(ConvFprop::kWeight, ConvDgrad::kWeight, ConvWgrad::kLoss) &&
                same_port(ConvFprop::kY, ConvDgrad::kDx, ConvWgrad::kDw));
  cudnnBackendDescriptor_t in0 = lowering.tensor(node.inputs[ConvFprop::kImage]);
  cudnnBackendDescriptor_t in1 = lowering.tensor(node.inputs[ConvFprop::kWeight]);
  cudnnBackendDescriptor_t out = lowering.tensor(node.outputs[ConvFprop::kY]);
  auto set = [](Descriptor &op, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t t) {
    op.set_descriptors(name, &t, 1);
  };
  switch (node.kind) {
    case OpKind::kConvFprop: {
      Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
      set_scaling(op, compute, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA);
      op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, in0);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, in1);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, out);
      lowering.add_operation(std::move(op));
      return;
    }
    case OpKind::kConvDgrad: {
      Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
      set_scaling(op, compute, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA);
      op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, conv);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, in0);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, in1);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, out);
      lowering.add_operation(std::move(op));
      return;
    }
    default: {
      Descriptor op(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
      set_scaling(op, compute, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                  CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA);
      op.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC, conv);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, in0);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, in1);
      set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW, out);
      lowering.add_operation(std::move(op));
      return;
    }
  }
}

}  // namespace cudnnfe::backend
