// Layer norm and RMS norm, forward and backward, through cuDNN's
// NORM_FORWARD / NORM_BACKWARD operations.
//
// The scale's dims choose the groups (ops/norm_shapes.h): statistics per
// index of the dims where the scale is 1 ("rows"), over the dims where it is
// not ("features"). cuDNN's norm samples use the LLM form [N, M, 1, 1] (M
// features per row) with scale and bias [1, M, 1, 1] and statistics [N, 1,
// 1, 1], so every operand is seen through such a view when each collapses
// into it (backend/norm_view.h: a [b, s, d] x with a [1, 1, d] scale is [b*s,
// d, 1, 1]); when one does not (features that are no contiguous block, a
// bias that varies along rows), every operand is described in its own dims
// and strides, as cudnn-frontend describes them, and cuDNN decides.
// Epsilon is a pass-by-value FLOAT tensor. Zero-centred gamma feeds the
// norm scale + 1 (a pointwise ADD that cuDNN fuses, or refuses).
//
// A TRAINING forward whose statistics are neither graph outputs nor read by
// another node is lowered as INFERENCE: the same y, and no virtual
// statistics the engines would have to keep.
#include <algorithm>

#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "backend/norm_view.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/norm_shapes.h"

namespace cudnnfe::backend {
namespace {

class NormLowering {
 public:
  NormLowering(Lowering &lowering, const Node &node)
      : lowering_(lowering),
        graph_(lowering.graph()),
        node_(node),
        attrs_(node.as<NormAttrs>()),
        layer_(node.kind == OpKind::kLayerNorm || node.kind == OpKind::kLayerNormBackward),
        forward_(node.kind == OpKind::kLayerNorm || node.kind == OpKind::kRmsNorm),
        x_(graph_.tensor(forward_ ? node.inputs[LayerNorm::kX]
                                  : node.inputs[LayerNormBackward::kX])),
        scale_(graph_.tensor(forward_ ? node.inputs[LayerNorm::kScale]
                                      : node.inputs[LayerNormBackward::kScale])),
        view_(x_, row_and_feature_dims()) {
    for (const auto *ports : {&node.inputs, &node.outputs})
      for (size_t i = 0; i < ports->size(); ++i) {
        const int64_t uid = (*ports)[i];
        if (!uid || (ports == &node.inputs && i == norm_scalar_ports(node.kind).epsilon)) continue;
        NormView::Collapsed c;
        if (!view_.collapse(graph_.tensor(uid), &c)) flat_ = false;
      }
  }

  void forward() {
    // layernorm's ports; rmsnorm's are the same up to its one statistic.
    using namespace LayerNorm;
    static_assert(same_port(RmsNorm::kBias, kBias) && same_port(RmsNorm::kEpsilon, kEpsilon));
    const int64_t x = node_.inputs[kX];
    cudnnBackendDescriptor_t x_desc = view(x);
    cudnnBackendDescriptor_t y_desc = view(node_.outputs[kY]);
    cudnnBackendDescriptor_t scale = gamma(node_.inputs[kScale]);
    cudnnBackendDescriptor_t bias = node_.inputs[kBias] ? view(node_.inputs[kBias]) : nullptr;
    // epsilon: the tensor read at execute (pass-by-value), else the number.
    const size_t eps_port = norm_scalar_ports(node_.kind).epsilon;
    cudnnBackendDescriptor_t epsilon =
        node_.inputs[eps_port] ? lowering_.operand(node_.inputs[eps_port], view_rank())
                               : lowering_.scalar(attrs_.epsilon, CUDNNFE_DTYPE_FLOAT, view_rank());

    // Statistics ports: layernorm (mean, inv_variance), rmsnorm (inv_rms).
    const int64_t mean = layer_ ? node_.outputs[kMean] : 0;
    const int64_t inv = layer_ ? node_.outputs[kInvVariance] : node_.outputs[RmsNorm::kInvRms];
    const bool training =
        attrs_.phase == CUDNNFE_NORM_PHASE_TRAINING && (needed(mean) || needed(inv));

    Descriptor op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
    const cudnnBackendNormMode_t mode = layer_ ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    const cudnnBackendNormFwdPhase_t phase =
        training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE;
    set_attribute(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE, CUDNN_TYPE_NORM_MODE, mode, "norm mode");
    set_attribute(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, phase,
                  "norm phase");
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, &x_desc, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, &scale, 1);
    if (bias) op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, &bias, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, &epsilon, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, &y_desc, 1);
    if (training) {
      if (mean) {
        cudnnBackendDescriptor_t m = view(mean);
        op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, &m, 1);
      }
      if (inv) {
        cudnnBackendDescriptor_t v = view(inv);
        op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, &v, 1);
      }
    }
    add_operation_named(lowering_, std::move(op),
                        cat("NORM_FORWARD (", layer_ ? "LAYER_NORM" : "RMS_NORM", ", ",
                            training ? "TRAINING" : "INFERENCE", bias ? ", bias" : "",
                            attrs_.zero_centered_gamma ? ", zero-centred gamma" : "", ")"));
  }

  void backward() {
    // layernorm_backward's ports; rmsnorm_backward's inv_rms is in mean's.
    using namespace LayerNormBackward;
    static_assert(same_port(RmsNormBackward::kScale, kScale) &&
                  same_port(RmsNormBackward::kInvRms, kMean) &&
                  same_port(RmsNormBackward::kDbias, kDbias));
    cudnnBackendDescriptor_t dy = view(node_.inputs[kDy]);
    cudnnBackendDescriptor_t x = view(node_.inputs[kX]);
    cudnnBackendDescriptor_t scale = gamma(node_.inputs[kScale]);
    cudnnBackendDescriptor_t dx = view(node_.outputs[kDx]);
    cudnnBackendDescriptor_t dscale = view(node_.outputs[kDscale]);
    cudnnBackendDescriptor_t dbias = node_.outputs[kDbias] ? view(node_.outputs[kDbias]) : nullptr;
    // cuDNN writes the parameter gradients in the type of the weight it
    // reads: scale's, or FLOAT for zero-centred gamma's scale + 1.
    const Tensor &scale_tensor = graph_.tensor(node_.inputs[kScale]);
    const cudnnfe_dtype_t weight =
        attrs_.zero_centered_gamma ? CUDNNFE_DTYPE_FLOAT : scale_tensor.dtype;
    for (size_t port : {kDscale, kDbias}) {
      if (!node_.outputs[port]) continue;
      const Tensor &t = graph_.tensor(node_.outputs[port]);
      if (t.dtype != weight)
        fail(CUDNNFE_STATUS_NOT_SUPPORTED, port == kDscale ? "dscale" : "dbias", " \"", t.name,
             "\" is ", dtype_name(t.dtype),
             " but cuDNN's norm backward writes the parameter gradients in ",
             attrs_.zero_centered_gamma
                 ? "FLOAT (the weight is scale + 1 in FLOAT)"
                 : cat("scale \"", scale_tensor.name, "\"'s type, ", dtype_name(weight)),
             "; set it with cudnnfe_tensor_set_dtype");
    }

    Descriptor op(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR);
    const cudnnBackendNormMode_t mode = layer_ ? CUDNN_LAYER_NORM : CUDNN_RMS_NORM;
    set_attribute(op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE, CUDNN_TYPE_NORM_MODE, mode, "norm mode");
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, &x, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, &dy, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, &scale, 1);
    if (layer_) {
      cudnnBackendDescriptor_t mean = view(node_.inputs[kMean]);
      cudnnBackendDescriptor_t inv = view(node_.inputs[kInvVariance]);
      op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, &mean, 1);
      op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, &inv, 1);
    } else {
      cudnnBackendDescriptor_t inv = view(node_.inputs[RmsNormBackward::kInvRms]);
      op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, &inv, 1);
    }
    // Epsilon is only read by cuDNN before 8.9.6; cudnnfe needs cuDNN 9.
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, &dscale, 1);
    if (dbias) op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, &dbias, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, &dx, 1);
    add_operation_named(
        lowering_, std::move(op),
        cat("NORM_BACKWARD (", layer_ ? "LAYER_NORM" : "RMS_NORM", dbias ? ", dbias" : "",
            attrs_.zero_centered_gamma ? ", zero-centred gamma" : "", ")"));
  }

 private:
  // A statistic is computed when it is a graph output or another node reads it.
  bool needed(int64_t uid) const {
    if (!uid) return false;
    if (!graph_.tensor(uid).is_virtual) return true;
    for (const Node &n : graph_.nodes())
      if (&n != &node_ && std::count(n.inputs.begin(), n.inputs.end(), uid)) return true;
    return false;
  }

  // x's dims by group: rows (where the scale is 1), then features.
  std::vector<std::vector<size_t>> row_and_feature_dims() const {
    const uint32_t reduced = norm_groups(node_.kind, x_.dims, scale_.dims).reduced;
    std::vector<std::vector<size_t>> groups(2);
    for (size_t i = 0; i < x_.dims.size(); ++i)
      groups[i < 32 && (reduced & (1u << i))].push_back(i);
    return groups;
  }

  // The rank of the operands' descriptors (scalars take it too).
  size_t view_rank() const { return flat_ ? 4 : std::max<size_t>(x_.dims.size(), 3); }

  // Operand `uid` as [rows, M, 1, 1] (rows or M 1 where it broadcasts),
  // or in its own dims when some operand does not collapse.
  cudnnBackendDescriptor_t view(int64_t uid) {
    NormView::Collapsed c;
    if (!flat_ || !view_.collapse(graph_.tensor(uid), &c)) return lowering_.tensor(uid);
    const int64_t features = c.dims[1], inner = features > 1 ? c.strides[1] : 1;
    const int64_t rows = c.dims[0], row_stride = rows > 1 ? c.strides[0] : features * inner;
    return lowering_.tensor_view(uid, {rows, features, 1, 1},
                                 {row_stride, inner, features * inner, features * inner});
  }

  // The scale, or scale + 1 with zero-centred gamma (a FLOAT virtual).
  cudnnBackendDescriptor_t gamma(int64_t uid) {
    cudnnBackendDescriptor_t scale = view(uid);
    if (!attrs_.zero_centered_gamma) return scale;
    PointwiseAttrs add;
    add.mode = CUDNNFE_POINTWISE_ADD;
    NormView::Collapsed c;
    cudnnBackendDescriptor_t shifted =
        flat_ && view_.collapse(scale_, &c)
            ? lowering_.virtual_tensor({1, c.dims[1], 1, 1}, CUDNN_DATA_FLOAT)
            : lowering_.virtual_tensor(scale_.dims, strides_like(scale_.dims, x_.dims, x_.strides),
                                       CUDNN_DATA_FLOAT);
    try {
      add_pointwise(lowering_, add, to_cudnn(node_.compute_dtype), scale,
                    lowering_.scalar(1.0, CUDNNFE_DTYPE_FLOAT, view_rank()), nullptr, shifted);
    } catch (const Error &e) {
      throw Error(e.status(), cat("zero-centred gamma (scale + 1): ", e.message()));
    }
    return shifted;
  }

  Lowering &lowering_;
  const Graph &graph_;
  const Node &node_;
  const NormAttrs &attrs_;
  const bool layer_;
  const bool forward_;
  const Tensor &x_;
  const Tensor &scale_;
  const NormView view_;
  bool flat_ = true;  // every operand collapses into the LLM form
};

}  // namespace

void lower_norm(Lowering &lowering, const Node &node) {
  NormLowering norm(lowering, node);
  if (node.kind == OpKind::kLayerNorm || node.kind == OpKind::kRmsNorm)
    norm.forward();
  else
    norm.backward();
}

}  // namespace cudnnfe::backend
