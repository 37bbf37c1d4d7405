// Layer norm and RMS norm, forward and backward, through cuDNN's
// NORM_FORWARD / NORM_BACKWARD operations.
//
// Statistics are per index of dim 0 over all other dims. cuDNN's norm
// engines want the LLM form [N, M, 1, 1] (M features per row) with scale
// and bias [1, M, 1, 1] and statistics [N, 1, 1, 1], so every operand is
// seen through such a view: x's feature dims (all but the first) must form
// one contiguous block per row, and the other operands must order them as
// x does. Epsilon is a pass-by-value FLOAT tensor. Zero-centred gamma
// feeds the norm scale + 1 (a pointwise ADD, cuDNN >= 9.7 fuses it).
//
// A TRAINING forward whose statistics are neither graph outputs nor read by
// another node is lowered as INFERENCE: the same y, and no virtual
// statistics the engines would have to keep.
#include <algorithm>

#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/norm_scalars.h"

namespace cudnnfe::backend {
namespace {

// Zero-centred gamma needs the pointwise prologue that cuDNN fuses into the
// norm engines from 9.7 on.
constexpr size_t kZeroCenteredGammaSince = 90700;

std::string strides_text(const std::vector<int64_t> &strides) {
  return dims_string(strides);
}

// x's feature dims in memory order (outermost first), dims of extent 1
// left out, and M, their product.
struct FeatureLayout {
  std::vector<size_t> order;
  int64_t features = 1;
};

FeatureLayout feature_layout(const Tensor &x) {
  FeatureLayout f;
  for (size_t i = 1; i < x.dims.size(); ++i) f.features *= x.dims[i];
  for (size_t i : dimension_order(x).outer_to_inner)
    if (i > 0 && x.dims[i] != 1) f.order.push_back(i);
  return f;
}

class NormLowering {
 public:
  NormLowering(Lowering &lowering, const Node &node)
      : lowering_(lowering),
        graph_(lowering.graph()),
        node_(node),
        attrs_(node.as<NormAttrs>()),
        layer_(node.kind == OpKind::kLayerNorm || node.kind == OpKind::kLayerNormBackward),
        layout_(feature_layout(graph_.tensor(
            node.kind == OpKind::kLayerNorm || node.kind == OpKind::kRmsNorm ? node.inputs[0]
                                                                             : node.inputs[1]))) {}

  void forward() {
    const int64_t x = node_.inputs[0];
    cudnnBackendDescriptor_t x_desc = rows(x);
    cudnnBackendDescriptor_t y_desc = rows(node_.outputs[0]);
    cudnnBackendDescriptor_t scale = gamma(node_.inputs[1]);
    cudnnBackendDescriptor_t bias = node_.inputs[2] ? params(node_.inputs[2]) : nullptr;
    // epsilon: the tensor read at execute (pass-by-value), else the number.
    const size_t eps_port = norm_scalar_ports(node_.kind).epsilon;
    cudnnBackendDescriptor_t epsilon =
        node_.inputs[eps_port] ? lowering_.operand(node_.inputs[eps_port], 4)
                               : lowering_.scalar(attrs_.epsilon, CUDNNFE_DTYPE_FLOAT, 4);

    // Statistics ports: layernorm (mean, inv_variance), rmsnorm (inv_rms).
    const int64_t mean = layer_ ? node_.outputs[1] : 0;
    const int64_t inv = layer_ ? node_.outputs[2] : node_.outputs[1];
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
        cudnnBackendDescriptor_t m = stats(mean);
        op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, &m, 1);
      }
      if (inv) {
        cudnnBackendDescriptor_t v = stats(inv);
        op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, &v, 1);
      }
    }
    add_operation_named(lowering_, std::move(op),
                        cat("NORM_FORWARD (", layer_ ? "LAYER_NORM" : "RMS_NORM", ", ",
                            training ? "TRAINING" : "INFERENCE", bias ? ", bias" : "",
                            attrs_.zero_centered_gamma ? ", zero-centred gamma" : "", ")"));
  }

  void backward() {
    // Ports: dy, x, scale, [mean,] inv; outputs dx, dscale, dbias.
    cudnnBackendDescriptor_t dy = rows(node_.inputs[0]);
    cudnnBackendDescriptor_t x = rows(node_.inputs[1]);
    cudnnBackendDescriptor_t scale = gamma(node_.inputs[2]);
    cudnnBackendDescriptor_t dx = rows(node_.outputs[0]);
    cudnnBackendDescriptor_t dscale = params(node_.outputs[1]);
    cudnnBackendDescriptor_t dbias = node_.outputs[2] ? params(node_.outputs[2]) : nullptr;
    // cuDNN writes the parameter gradients in the type of the weight it
    // reads: scale's, or FLOAT for zero-centred gamma's scale + 1.
    const Tensor &scale_tensor = graph_.tensor(node_.inputs[2]);
    const cudnnfe_dtype_t weight =
        attrs_.zero_centered_gamma ? CUDNNFE_DTYPE_FLOAT : scale_tensor.dtype;
    for (size_t port = 1; port < 3; ++port) {
      if (!node_.outputs[port]) continue;
      const Tensor &t = graph_.tensor(node_.outputs[port]);
      if (t.dtype != weight)
        fail(CUDNNFE_STATUS_NOT_SUPPORTED, port == 1 ? "dscale" : "dbias", " \"", t.name, "\" is ",
             dtype_name(t.dtype), " but cuDNN's norm backward writes the parameter gradients in ",
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
      cudnnBackendDescriptor_t mean = stats(node_.inputs[3]);
      cudnnBackendDescriptor_t inv = stats(node_.inputs[4]);
      op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, &mean, 1);
      op.set_descriptors(CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, &inv, 1);
    } else {
      cudnnBackendDescriptor_t inv = stats(node_.inputs[3]);
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

  // Views `uid` ([N or 1, features...]) as [lead, M, 1, 1].
  cudnnBackendDescriptor_t flat(int64_t uid, const char *role) {
    const Tensor &t = graph_.tensor(uid);
    const int64_t m = layout_.features;
    const int64_t inner = layout_.order.empty() ? 1 : t.strides[layout_.order.back()];
    int64_t expected = inner;
    bool contiguous = t.dims.size() == graph_.tensor(x_uid()).dims.size();
    for (auto it = layout_.order.rbegin(); contiguous && it != layout_.order.rend(); ++it) {
      if (t.strides[*it] != expected) contiguous = false;
      expected *= t.dims[*it];
    }
    if (!contiguous) {
      const Tensor &x = graph_.tensor(x_uid());
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, uid == x.uid ? "x" : role, " \"", t.name, "\" ",
           dims_string(t.dims), " with strides ", strides_text(t.strides),
           ": cuDNN's norm engines take each row's features (every dim but the first) as one "
           "contiguous block",
           uid == x.uid
               ? ""
               : cat(", ordered as in x \"", x.name, "\" (strides ", strides_text(x.strides), ")"));
    }
    return lowering_.tensor_view(uid, {t.dims[0], m, 1, 1},
                                 {t.strides[0], inner, m * inner, m * inner});
  }

  cudnnBackendDescriptor_t rows(int64_t uid) { return flat(uid, "tensor"); }
  cudnnBackendDescriptor_t params(int64_t uid) { return flat(uid, "parameter"); }

  // [N, 1, ...] statistics as [N, 1, 1, 1].
  cudnnBackendDescriptor_t stats(int64_t uid) {
    const Tensor &t = graph_.tensor(uid);
    return lowering_.tensor_view(uid, {t.dims[0], 1, 1, 1}, {t.strides[0], 1, 1, 1});
  }

  // The scale, or scale + 1 with zero-centred gamma (a FLOAT virtual).
  cudnnBackendDescriptor_t gamma(int64_t uid) {
    cudnnBackendDescriptor_t scale = params(uid);
    if (!attrs_.zero_centered_gamma) return scale;
    if (lowering_.cudnn_version() < kZeroCenteredGammaSince)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED,
           "zero-centred gamma (scale + 1 fused before the norm) needs cuDNN 9.7 or newer");
    PointwiseAttrs add;
    add.mode = CUDNNFE_POINTWISE_ADD;
    cudnnBackendDescriptor_t shifted =
        lowering_.virtual_tensor({1, layout_.features, 1, 1}, CUDNN_DATA_FLOAT);
    try {
      add_pointwise(lowering_, add, to_cudnn(node_.compute_dtype), scale,
                    lowering_.scalar(1.0, CUDNNFE_DTYPE_FLOAT, 4), nullptr, shifted);
    } catch (const Error &e) {
      throw Error(e.status(), cat("zero-centred gamma (scale + 1): ", e.message()));
    }
    return shifted;
  }

  int64_t x_uid() const {
    return node_.kind == OpKind::kLayerNorm || node_.kind == OpKind::kRmsNorm ? node_.inputs[0]
                                                                              : node_.inputs[1];
  }

  Lowering &lowering_;
  const Graph &graph_;
  const Node &node_;
  const NormAttrs &attrs_;
  const bool layer_;
  const FeatureLayout layout_;
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
