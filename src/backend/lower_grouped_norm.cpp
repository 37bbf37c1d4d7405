// Batch norm, instance norm and adaptive layer norm through cuDNN's
// NORM_FORWARD / NORM_BACKWARD operations (modes BATCH_NORM, INSTANCE_NORM,
// ADA_LAYER_NORM).
//
// What each mode takes (learned from cuDNN's backend attributes):
//   forward training   x, scale, bias, epsilon (a by-value FLOAT), y, and
//                      the statistics outputs mean and inv_variance;
//                      batch norm's running statistics add the exponential
//                      average factor (momentum, by value) and the input
//                      and output running mean and variance
//   forward inference  instance and adaptive layer norm: as training
//                      without statistics; batch norm: no epsilon, and
//                      mean and inv_variance are inputs
//   backward           x, dy, scale, mean, inv_variance, dx, dscale, dbias
//                      (no epsilon since cuDNN 8.9.6)
//
// Shapes. Batch and instance norm pass tensors in their own dims, padded
// to at least 4 with trailing dims of 1 ([N, C] is seen as [N, C, 1, 1]).
// Adaptive layer norm collapses its dims into three (backend/norm_view.h),
// the form cuDNN's samples use: x [B, S, M], scale and bias [B or 1, 1, M],
// statistics [B, S, 1], where M is the dims its scale normalizes (those after
// the first where the scale is not 1, ops/norm_shapes.h) and S the others
// after the first. When some operand does not collapse (features that are
// no contiguous block), every operand is described in its own dims, as
// cudnn-frontend describes them, and cuDNN decides. Dims of
// extent 1 get strides that continue x's dimension order (channels-last or
// channels-first; the per-channel [1, C, 1, 1] of an NHWC x is strided [C,
// 1, C, C]): the memory is the same, and the engines see one layout.
//
// A TRAINING instance or adaptive layer norm whose statistics are neither
// graph outputs nor read by another node is lowered as INFERENCE (same y).
//
// Adaptive layer norm needs a cuDNN whose backend knows the ADA_LAYER_NORM
// mode; the lowering finds out by asking the loaded library (setting the
// mode), not from a version table, and an older library's refusal becomes
// NOT_SUPPORTED naming the feature and both versions.
//
// What cuDNN 9.14 and 9.19 do with these operations on an H100
// (tests/test_gpu_norms.cpp): every layout, rank (2 to 5) and type (fp16,
// bf16, fp32) tried builds, except a standalone batch norm inference (no
// engine; it builds inside the BN inference + ReLU backward + BN backward
// pattern in FLOAT) and the zero-centred adaptive layer norm forward (the
// operation graph with the fused scale + 1 is refused; its backward builds).
#include <algorithm>
#include <memory>
#include <numeric>

#include "backend/attribute_util.h"
#include "backend/lowering.h"
#include "backend/norm_view.h"
#include "core/dtype.h"
#include "core/error.h"
#include "ops/norm_scalars.h"
#include "ops/norm_shapes.h"
#include "ops/ops.h"
#include "plan/notes.h"

namespace cudnnfe::backend {
namespace {

bool is_forward(OpKind kind) {
  return kind == OpKind::kBatchNorm || kind == OpKind::kInstanceNorm ||
         kind == OpKind::kAdaLayerNorm;
}

bool is_backward(OpKind kind) {
  return kind == OpKind::kBatchNormBackward || kind == OpKind::kInstanceNormBackward ||
         kind == OpKind::kAdaLayerNormBackward;
}

bool is_ada(OpKind kind) {
  return kind == OpKind::kAdaLayerNorm || kind == OpKind::kAdaLayerNormBackward;
}

cudnnBackendNormMode_t mode_of(OpKind kind) {
  switch (kind) {
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward: return CUDNN_INSTANCE_NORM;
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return CUDNN_ADA_LAYER_NORM;
    default: return CUDNN_BATCH_NORM;
  }
}

const char *mode_name(OpKind kind) {
  switch (mode_of(kind)) {
    case CUDNN_INSTANCE_NORM: return "INSTANCE_NORM";
    case CUDNN_ADA_LAYER_NORM: return "ADA_LAYER_NORM";
    default: return "BATCH_NORM";
  }
}

class GroupedNormLowering {
 public:
  GroupedNormLowering(Lowering &lowering, const Node &node)
      : lowering_(lowering),
        graph_(lowering.graph()),
        node_(node),
        attrs_(node.as<NormAttrs>()),
        x_(graph_.tensor(is_backward(node.kind) ? node.inputs[BatchNormBackward::kX]
                                                : node.inputs[BatchNorm::kX])) {
    if (is_ada(node.kind))
      plan_ada();
    else
      plan_channels();
  }

  void forward() {
    // batchnorm's ports; instancenorm and adalayernorm share the first ones.
    using namespace BatchNorm;
    static_assert(same_port(InstanceNorm::kInvVariance, kInvVariance) &&
                  same_port(AdaLayerNorm::kInvVariance, kInvVariance));
    const bool batch = node_.kind == OpKind::kBatchNorm;
    const int64_t mean = node_.outputs[kMean], inv = node_.outputs[kInvVariance];
    const bool training =
        batch || (attrs_.phase == CUDNNFE_NORM_PHASE_TRAINING && (needed(mean) || needed(inv)));
    Descriptor op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
    set_mode(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE);
    const cudnnBackendNormFwdPhase_t phase =
        training ? CUDNN_NORM_FWD_TRAINING : CUDNN_NORM_FWD_INFERENCE;
    set_attribute(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, phase,
                  "norm phase");
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, view(node_.inputs[kX]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, gamma(node_.inputs[kScale]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, view(node_.inputs[kBias]));
    const NormScalarPorts ports = norm_scalar_ports(node_.kind);
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC,
        scalar_input(ports.epsilon, attrs_.epsilon));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, view(node_.outputs[kY]));
    if (training) {
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, view(mean));
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, view(inv));
    }
    const bool running = batch && node_.inputs[kPrevRunningMean] != 0;
    if (running) {
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_EXP_AVG_FACTOR_DESC,
          scalar_input(ports.momentum, attrs_.momentum));
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_MEAN_DESC,
          view(node_.inputs[kPrevRunningMean]));
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_INPUT_RUNNING_VAR_DESC,
          view(node_.inputs[kPrevRunningVar]));
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_MEAN_DESC,
          view(node_.outputs[kNextRunningMean]));
      set(op, CUDNN_ATTR_OPERATION_NORM_FWD_OUTPUT_RUNNING_VAR_DESC,
          view(node_.outputs[kNextRunningVar]));
    }
    add(std::move(op),
        cat("NORM_FORWARD (", mode_name(node_.kind), ", ", training ? "TRAINING" : "INFERENCE",
            running ? ", running statistics" : "",
            attrs_.zero_centered_gamma ? ", zero-centred gamma" : "", ")"));
  }

  void inference() {
    using namespace BatchNormInference;
    Descriptor op(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR);
    set_mode(op, CUDNN_ATTR_OPERATION_NORM_FWD_MODE);
    const cudnnBackendNormFwdPhase_t phase = CUDNN_NORM_FWD_INFERENCE;
    set_attribute(op, CUDNN_ATTR_OPERATION_NORM_FWD_PHASE, CUDNN_TYPE_NORM_FWD_PHASE, phase,
                  "norm phase");
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, view(node_.inputs[kX]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, view(node_.inputs[kScale]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, view(node_.inputs[kBias]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, view(node_.inputs[kMean]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC, view(node_.inputs[kInvVariance]));
    set(op, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, view(node_.outputs[kY]));
    add(std::move(op), "NORM_FORWARD (BATCH_NORM, INFERENCE)");
  }

  void backward() {
    // The three backward kinds' ports are batchnorm_backward's.
    using namespace BatchNormBackward;
    static_assert(same_port(InstanceNormBackward::kDbias, kDbias) &&
                  same_port(AdaLayerNormBackward::kDbias, kDbias) &&
                  same_port(InstanceNormBackward::kInvVariance, kInvVariance) &&
                  same_port(AdaLayerNormBackward::kInvVariance, kInvVariance));
    // cuDNN writes the parameter gradients in the type of the weight it
    // reads: scale's, or FLOAT for zero-centred gamma's scale + 1.
    const Tensor &scale = graph_.tensor(node_.inputs[kScale]);
    const cudnnfe_dtype_t weight = attrs_.zero_centered_gamma ? CUDNNFE_DTYPE_FLOAT : scale.dtype;
    for (size_t port : {kDscale, kDbias}) {
      const Tensor &t = graph_.tensor(node_.outputs[port]);
      if (t.dtype != weight)
        fail(CUDNNFE_STATUS_NOT_SUPPORTED, port == kDscale ? "dscale" : "dbias", " \"", t.name,
             "\" is ", dtype_name(t.dtype),
             " but cuDNN's norm backward writes the parameter gradients in ",
             attrs_.zero_centered_gamma
                 ? "FLOAT (the weight is scale + 1 in FLOAT)"
                 : cat("scale \"", scale.name, "\"'s type, ", dtype_name(weight)),
             "; set it with cudnnfe_tensor_set_dtype");
    }
    Descriptor op(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR);
    set_mode(op, CUDNN_ATTR_OPERATION_NORM_BWD_MODE);
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, view(node_.inputs[kX]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, view(node_.inputs[kDy]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, gamma(node_.inputs[kScale]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, view(node_.inputs[kMean]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC, view(node_.inputs[kInvVariance]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, view(node_.outputs[kDscale]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, view(node_.outputs[kDbias]));
    set(op, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, view(node_.outputs[kDx]));
    add(std::move(op), cat("NORM_BACKWARD (", mode_name(node_.kind),
                           attrs_.zero_centered_gamma ? ", zero-centred gamma" : "", ")"));
  }

 private:
  // ---- layouts ----

  // Batch and instance norm: x's dims padded to 4; the dimension order is
  // channels-last when C is x's innermost dim of extent > 1 (or the only
  // one), else channels-first.
  void plan_channels() {
    rank_ = std::max<size_t>(x_.dims.size(), 4);
    int64_t inner_spatial = INT64_MAX;
    for (size_t i = 2; i < x_.dims.size(); ++i)
      if (x_.dims[i] != 1) inner_spatial = std::min(inner_spatial, x_.strides[i]);
    const bool channels_last = x_.dims[1] == 1 || x_.strides[1] < inner_spatial;
    order_.push_back(0);
    if (!channels_last) order_.push_back(1);
    for (size_t i = 2; i < rank_; ++i) order_.push_back(i);
    if (channels_last) order_.push_back(1);
  }

  // Adaptive layer norm: x's dims as [dim 0, the others not normalized,
  // the normalized ones] (ops/norm_shapes.h); the collapsed dims' order is
  // x's. Falls back to every operand's own dims when one does not collapse.
  void plan_ada() {
    const Tensor &scale = graph_.tensor(node_.inputs[is_backward(node_.kind) ? 2 : 1]);
    const uint32_t reduced = norm_groups(node_.kind, x_.dims, scale.dims).reduced;
    std::vector<std::vector<size_t>> groups(3);
    for (size_t i = 0; i < x_.dims.size(); ++i)
      groups[i == 0 ? 0 : (i < 32 && (reduced & (1u << i))) ? 2 : 1].push_back(i);
    ada_view_ = std::make_unique<NormView>(x_, groups);
    const NormScalarPorts scalars = norm_scalar_ports(node_.kind);
    for (const auto *ports : {&node_.inputs, &node_.outputs})
      for (size_t i = 0; i < ports->size(); ++i) {
        const int64_t uid = (*ports)[i];
        const bool scalar_port =
            ports == &node_.inputs && (i == scalars.epsilon || i == scalars.momentum);
        NormView::Collapsed c;
        if (uid && !scalar_port && !ada_view_->collapse(graph_.tensor(uid), &c)) flat_ = false;
      }
    if (!flat_) {
      rank_ = std::max<size_t>(x_.dims.size(), 3);
      return;
    }
    rank_ = 3;
    NormView::Collapsed x;
    ada_view_->collapse(x_, &x);
    // Order by x's strides; a group of extent 1 sorts by its first dim's.
    std::vector<int64_t> key(3, 0);
    for (size_t g = 0; g < 3; ++g)
      key[g] = x.dims[g] > 1 ? x.strides[g] : groups[g].empty() ? 0 : x_.strides[groups[g][0]];
    order_ = {0, 1, 2};
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) {
      return key[a] > key[b] || (key[a] == key[b] && a < b);
    });
  }

  // The backend view of graph tensor `uid`.
  cudnnBackendDescriptor_t view(int64_t uid) {
    const Tensor &t = graph_.tensor(uid);
    std::vector<int64_t> dims, strides;
    if (is_ada(node_.kind)) {
      NormView::Collapsed c;
      if (!flat_ || !ada_view_->collapse(t, &c)) return lowering_.tensor(uid);
      dims = c.dims;
      strides = c.strides;
    } else {
      dims = t.dims;
      strides = t.strides;
      while (dims.size() < rank_) {
        dims.push_back(1);
        strides.push_back(1);
      }
    }
    return lowering_.tensor_view(uid, dims, canonical_strides(dims, strides, order_));
  }

  // The scale, or scale + 1 with zero-centred gamma (a FLOAT virtual).
  cudnnBackendDescriptor_t gamma(int64_t uid) {
    cudnnBackendDescriptor_t scale = view(uid);
    if (!attrs_.zero_centered_gamma) return scale;
    const Tensor &t = graph_.tensor(uid);
    NormView::Collapsed c;
    const bool collapsed = flat_ && ada_view_ && ada_view_->collapse(t, &c);
    const std::vector<int64_t> dims = collapsed ? c.dims : t.dims;
    PointwiseAttrs add;
    add.mode = CUDNNFE_POINTWISE_ADD;
    cudnnBackendDescriptor_t shifted =
        lowering_.virtual_tensor(dims,
                                 collapsed ? canonical_strides(dims, packed_strides(dims), order_)
                                           : strides_like(dims, x_.dims, x_.strides),
                                 CUDNN_DATA_FLOAT);
    try {
      add_pointwise(lowering_, add, to_cudnn(node_.compute_dtype), scale, scalar(1.0), nullptr,
                    shifted);
    } catch (const Error &e) {
      throw Error(e.status(), cat("zero-centred gamma (scale + 1): ", e.message()));
    }
    return shifted;
  }

  cudnnBackendDescriptor_t scalar(double value) {
    return lowering_.scalar(value, CUDNNFE_DTYPE_FLOAT, rank_);
  }

  // epsilon or momentum: the tensor at `port` (read at execute) when given,
  // else the number from the attributes.
  cudnnBackendDescriptor_t scalar_input(size_t port, double value) {
    if (port != NormScalarPorts::kNone && port < node_.inputs.size() && node_.inputs[port])
      return lowering_.operand(node_.inputs[port], rank_);
    return scalar(value);
  }

  // A statistic is computed when it is a graph output or another node reads it.
  bool needed(int64_t uid) const {
    if (!uid) return false;
    if (!graph_.tensor(uid).is_virtual) return true;
    for (const Node &n : graph_.nodes())
      if (&n != &node_ && std::count(n.inputs.begin(), n.inputs.end(), uid)) return true;
    return false;
  }

  // ---- the operation ----

  // Sets the norm mode. For ADA_LAYER_NORM this is where a cuDNN that
  // predates the mode says so.
  void set_mode(Descriptor &op, cudnnBackendAttributeName_t attribute) {
    const cudnnBackendNormMode_t mode = mode_of(node_.kind);
    const cudnnStatus_t status =
        cudnn().BackendSetAttribute(op.get(), attribute, CUDNN_TYPE_NORM_MODE, 1, &mode);
    if (status == CUDNN_STATUS_SUCCESS) return;
    const std::string reason = last_error();
    if (is_ada(node_.kind))
      fail(CUDNNFE_STATUS_NOT_SUPPORTED,
           "adaptive layer norm (cuDNN's CUDNN_ADA_LAYER_NORM norm mode) is not known to the "
           "loaded cuDNN ",
           plan::cudnn_version_string(static_cast<int64_t>(lowering_.cudnn_version())),
           ": it refused the mode (", status_text(status), reason.empty() ? "" : ": ", reason,
           "); a newer cuDNN whose backend accepts this mode is needed (cudnnfe's declarations "
           "follow "
           "cuDNN ",
           plan::cudnn_version_string(CUDNNFE_DECLARED_CUDNN_VERSION), "'s API, which has it)");
    fail(CUDNNFE_STATUS_CUDNN_ERROR, "cuDNN refused to set the norm mode ", mode_name(node_.kind),
         " (", attribute_name(attribute), "): ", status_text(status),
         reason.empty() ? "" : cat(": ", reason));
  }

  static void set(Descriptor &op, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t d) {
    op.set_descriptors(name, &d, 1);
  }

  void add(Descriptor op, const std::string &what) {
    add_operation_named(lowering_, std::move(op), what);
  }

  Lowering &lowering_;
  const Graph &graph_;
  const Node &node_;
  const NormAttrs &attrs_;
  const Tensor &x_;
  size_t rank_ = 4;
  std::vector<size_t> order_;           // view dims, outermost first
  std::unique_ptr<NormView> ada_view_;  // adaptive layer norm's three groups
  bool flat_ = true;                    // adaptive layer norm: every operand collapses
};

}  // namespace

void lower_grouped_norm(Lowering &lowering, const Node &node) {
  GroupedNormLowering norm(lowering, node);
  if (is_forward(node.kind))
    norm.forward();
  else if (is_backward(node.kind))
    norm.backward();
  else
    norm.inference();
}

}  // namespace cudnnfe::backend
