// Pointwise: a pointwise descriptor (mode, math type, the mode's
// parameters) and the operation wiring its operands. Activation backward
// modes use cuDNN's dy/x/dx ports; every other mode x/b/t -> y.
#include <cfloat>

#include "backend/lowering.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

struct ModeMap {
  cudnnfe_pointwise_mode_t ours;
  cudnnPointwiseMode_t cudnn;
};

// Our constants are grouped by kind; cuDNN's numbering differs.
constexpr ModeMap kModes[] = {
    {CUDNNFE_POINTWISE_ADD, CUDNN_POINTWISE_ADD},
    {CUDNNFE_POINTWISE_ADD_SQUARE, CUDNN_POINTWISE_ADD_SQUARE},
    {CUDNNFE_POINTWISE_SUB, CUDNN_POINTWISE_SUB},
    {CUDNNFE_POINTWISE_MUL, CUDNN_POINTWISE_MUL},
    {CUDNNFE_POINTWISE_DIV, CUDNN_POINTWISE_DIV},
    {CUDNNFE_POINTWISE_MAX, CUDNN_POINTWISE_MAX},
    {CUDNNFE_POINTWISE_MIN, CUDNN_POINTWISE_MIN},
    {CUDNNFE_POINTWISE_MOD, CUDNN_POINTWISE_MOD},
    {CUDNNFE_POINTWISE_POW, CUDNN_POINTWISE_POW},
    {CUDNNFE_POINTWISE_ATAN2, CUDNN_POINTWISE_ATAN2},
    {CUDNNFE_POINTWISE_NEG, CUDNN_POINTWISE_NEG},
    {CUDNNFE_POINTWISE_ABS, CUDNN_POINTWISE_ABS},
    {CUDNNFE_POINTWISE_CEIL, CUDNN_POINTWISE_CEIL},
    {CUDNNFE_POINTWISE_FLOOR, CUDNN_POINTWISE_FLOOR},
    {CUDNNFE_POINTWISE_RECIPROCAL, CUDNN_POINTWISE_RECIPROCAL},
    {CUDNNFE_POINTWISE_SQRT, CUDNN_POINTWISE_SQRT},
    {CUDNNFE_POINTWISE_RSQRT, CUDNN_POINTWISE_RSQRT},
    {CUDNNFE_POINTWISE_EXP, CUDNN_POINTWISE_EXP},
    {CUDNNFE_POINTWISE_LOG, CUDNN_POINTWISE_LOG},
    {CUDNNFE_POINTWISE_SIN, CUDNN_POINTWISE_SIN},
    {CUDNNFE_POINTWISE_COS, CUDNN_POINTWISE_COS},
    {CUDNNFE_POINTWISE_TAN, CUDNN_POINTWISE_TAN},
    {CUDNNFE_POINTWISE_ERF, CUDNN_POINTWISE_ERF},
    {CUDNNFE_POINTWISE_IDENTITY, CUDNN_POINTWISE_IDENTITY},
    {CUDNNFE_POINTWISE_RELU_FWD, CUDNN_POINTWISE_RELU_FWD},
    {CUDNNFE_POINTWISE_TANH_FWD, CUDNN_POINTWISE_TANH_FWD},
    {CUDNNFE_POINTWISE_SIGMOID_FWD, CUDNN_POINTWISE_SIGMOID_FWD},
    {CUDNNFE_POINTWISE_ELU_FWD, CUDNN_POINTWISE_ELU_FWD},
    {CUDNNFE_POINTWISE_GELU_FWD, CUDNN_POINTWISE_GELU_FWD},
    {CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD, CUDNN_POINTWISE_GELU_APPROX_TANH_FWD},
    {CUDNNFE_POINTWISE_SOFTPLUS_FWD, CUDNN_POINTWISE_SOFTPLUS_FWD},
    {CUDNNFE_POINTWISE_SWISH_FWD, CUDNN_POINTWISE_SWISH_FWD},
    {CUDNNFE_POINTWISE_RELU_BWD, CUDNN_POINTWISE_RELU_BWD},
    {CUDNNFE_POINTWISE_TANH_BWD, CUDNN_POINTWISE_TANH_BWD},
    {CUDNNFE_POINTWISE_SIGMOID_BWD, CUDNN_POINTWISE_SIGMOID_BWD},
    {CUDNNFE_POINTWISE_ELU_BWD, CUDNN_POINTWISE_ELU_BWD},
    {CUDNNFE_POINTWISE_GELU_BWD, CUDNN_POINTWISE_GELU_BWD},
    {CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD, CUDNN_POINTWISE_GELU_APPROX_TANH_BWD},
    {CUDNNFE_POINTWISE_SOFTPLUS_BWD, CUDNN_POINTWISE_SOFTPLUS_BWD},
    {CUDNNFE_POINTWISE_SWISH_BWD, CUDNN_POINTWISE_SWISH_BWD},
    {CUDNNFE_POINTWISE_CMP_EQ, CUDNN_POINTWISE_CMP_EQ},
    {CUDNNFE_POINTWISE_CMP_NEQ, CUDNN_POINTWISE_CMP_NEQ},
    {CUDNNFE_POINTWISE_CMP_GT, CUDNN_POINTWISE_CMP_GT},
    {CUDNNFE_POINTWISE_CMP_GE, CUDNN_POINTWISE_CMP_GE},
    {CUDNNFE_POINTWISE_CMP_LT, CUDNN_POINTWISE_CMP_LT},
    {CUDNNFE_POINTWISE_CMP_LE, CUDNN_POINTWISE_CMP_LE},
    {CUDNNFE_POINTWISE_LOGICAL_AND, CUDNN_POINTWISE_LOGICAL_AND},
    {CUDNNFE_POINTWISE_LOGICAL_OR, CUDNN_POINTWISE_LOGICAL_OR},
    {CUDNNFE_POINTWISE_LOGICAL_NOT, CUDNN_POINTWISE_LOGICAL_NOT},
    {CUDNNFE_POINTWISE_BINARY_SELECT, CUDNN_POINTWISE_BINARY_SELECT},
    {CUDNNFE_POINTWISE_GEN_INDEX, CUDNN_POINTWISE_GEN_INDEX},
};

cudnnPointwiseMode_t to_cudnn_mode(cudnnfe_pointwise_mode_t mode) {
  for (const ModeMap &m : kModes)
    if (m.ours == mode) return m.cudnn;
  fail(CUDNNFE_STATUS_NOT_SUPPORTED, "pointwise mode ", mode, " has no cuDNN equivalent");
}

bool is_activation_backward(cudnnfe_pointwise_mode_t mode) {
  return mode >= CUDNNFE_POINTWISE_RELU_BWD && mode <= CUDNNFE_POINTWISE_SWISH_BWD;
}

// The mode's parameters; cuDNN takes them as DOUBLE whatever the math type.
void set_parameters(Descriptor &pw, const PointwiseAttrs &attrs, cudnnDataType_t compute) {
  switch (attrs.mode) {
    case CUDNNFE_POINTWISE_RELU_FWD:
    case CUDNNFE_POINTWISE_RELU_BWD: {
      // The default clip (3.4e38, the header's "no upper clip") is passed as
      // cudnn-frontend passes an unset one: DBL_MAX, or FLT_MAX for FLOAT math.
      // cuDNN's fused engines refuse a graph whose ReLU has a real upper clip
      // ("use_upper_clip": batchnorm + ReLU on cuDNN 9.19), and 3.4e38 is one.
      double upper = attrs.relu_upper_clip >= 3.4e38 ? DBL_MAX : attrs.relu_upper_clip;
      // A FLOAT-math clip above FLT_MAX would overflow inside the kernel.
      if (compute == CUDNN_DATA_FLOAT && upper > FLT_MAX) upper = FLT_MAX;
      pw.set_double(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, attrs.relu_lower_clip);
      pw.set_double(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, upper);
      pw.set_double(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, attrs.relu_lower_clip_slope);
      return;
    }
    case CUDNNFE_POINTWISE_ELU_FWD:
    case CUDNNFE_POINTWISE_ELU_BWD:
      pw.set_double(CUDNN_ATTR_POINTWISE_ELU_ALPHA, attrs.elu_alpha);
      return;
    case CUDNNFE_POINTWISE_SOFTPLUS_FWD:
    case CUDNNFE_POINTWISE_SOFTPLUS_BWD:
      pw.set_double(CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, attrs.softplus_beta);
      return;
    case CUDNNFE_POINTWISE_SWISH_FWD:
    case CUDNNFE_POINTWISE_SWISH_BWD:
      pw.set_double(CUDNN_ATTR_POINTWISE_SWISH_BETA, attrs.swish_beta);
      return;
    case CUDNNFE_POINTWISE_GEN_INDEX: pw.set_int64(CUDNN_ATTR_POINTWISE_AXIS, attrs.axis); return;
    default: return;
  }
}

}  // namespace

void add_pointwise(Lowering &lowering, const PointwiseAttrs &attrs, cudnnDataType_t compute,
                   cudnnBackendDescriptor_t in0, cudnnBackendDescriptor_t in1,
                   cudnnBackendDescriptor_t in2, cudnnBackendDescriptor_t out) {
  Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  pw.set_pointwise_mode(CUDNN_ATTR_POINTWISE_MODE, to_cudnn_mode(attrs.mode));
  pw.set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, compute);
  set_parameters(pw, attrs, compute);
  lowering.finalize(pw);
  const Descriptor &kept = lowering.keep(std::move(pw));

  Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, kept);
  if (is_activation_backward(attrs.mode)) {
    op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, &in0, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &in1, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, &out, 1);
  } else {
    op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &in0, 1);
    if (in1) op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, &in1, 1);
    if (in2) op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, &in2, 1);
    op.set_descriptors(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &out, 1);
  }
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0f);
  op.set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0f);
  lowering.add_operation(std::move(op));
}

namespace {

// Evidence for both rules below: cuDNN 9.19 on an H200 (and 9.14 on an H100
// for the first) computes these pointwise-only graphs wrong with every engine
// configuration it offers, through cudnn-frontend as through cudnnfe:
// tests/differential/probe_pointwise.py's table, the differential tester's
// seeds named in docs/refusals.md, and the GPU cases in tests/test_gpu_ops.cpp
// (pointwise_*_refused). Graphs that also hold a conv, matmul or norm fuse
// pointwise ops as epilogues, where the same patterns are right, so only graphs
// of pointwise ops alone are refused.
bool pointwise_only(const Graph &graph) {
  for (const Node &n : graph.nodes())
    if (n.kind != OpKind::kPointwise) return false;
  return true;
}

// The dim with the smallest stride among those larger than 1 (-1: none).
int innermost_dim(const Tensor &t) {
  int best = -1;
  for (size_t i = 0; i < t.dims.size(); ++i)
    if (t.dims[i] > 1 && (best < 0 || t.strides[i] < t.strides[best])) best = static_cast<int>(i);
  return best;
}

// An output whose first dim is its innermost one (e.g. [8,9,12] stored with
// strides [1,96,8]): cuDNN left most elements unwritten, unary ops included.
// The graph is scanned (pointwise_only) only once the layout matches.
void refuse_first_dim_innermost(const Graph &graph, const Tensor &out) {
  int larger = 0;
  for (int64_t d : out.dims) larger += d > 1;
  if (out.dims.size() >= 3 && larger >= 2 && innermost_dim(out) == 0 && pointwise_only(graph))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, "output \"", out.name, "\" ", dims_string(out.dims),
         " with strides ", dims_string(out.strides),
         " has its first dim innermost; cuDNN computes pointwise-only graphs with this layout "
         "wrongly on the GPU, so cudnnfe refuses it. Use a row-major or channels-last layout, "
         "or the CPU reference");
}

// An input that broadcasts along two or more dims of a row-major output, but
// not along all of them (e.g. [1,16,1] + [4,16,32]): wrong values, alone or
// after other pointwise ops. One-dim and whole-tensor broadcasts are right.
cudnnBackendDescriptor_t operand(Lowering &lowering, int64_t uid, const Tensor &out) {
  const Tensor &t = lowering.graph().tensor(uid);
  // Scalars and pass-by-value tensors reach cuDNN by value, not as a
  // broadcast device tensor.
  if (!t.is_virtual && !t.is_scalar && !t.pass_by_value && t.dims.size() == out.dims.size() &&
      out.dims.size() >= 3) {
    int broadcast_dims = 0, ones = 0;
    for (size_t i = 0; i < t.dims.size(); ++i) {
      if (t.dims[i] == 1 && out.dims[i] > 1) ++broadcast_dims;
      ones += t.dims[i] == 1;
    }
    const bool whole = ones == static_cast<int>(t.dims.size());
    const bool row_major = out.strides.back() == 1 && out.dims.back() > 1;
    if (broadcast_dims >= 2 && !whole && row_major && pointwise_only(lowering.graph()))
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "input \"", t.name, "\" ", dims_string(t.dims),
           " broadcasts along ", broadcast_dims, " dims of a row-major output ",
           dims_string(out.dims),
           "; cuDNN computes this pattern wrongly on the GPU, so cudnnfe refuses it. Use a "
           "channels-last layout, broadcast along one dim per op, or the CPU reference");
  }
  return lowering.operand(uid, out.dims.size());
}

}  // namespace

void lower_pointwise(Lowering &lowering, const Node &node) {
  const PointwiseAttrs &attrs = node.as<PointwiseAttrs>();
  const Tensor &out = lowering.graph().tensor(node.outputs[Pointwise::kOut]);
  refuse_first_dim_innermost(lowering.graph(), out);
  using namespace Pointwise;
  cudnnBackendDescriptor_t in[kInputCount] = {};
  for (size_t port = 0; port < kInputCount; ++port)
    if (node.inputs[port] != 0) in[port] = operand(lowering, node.inputs[port], out);
  add_pointwise(lowering, attrs, to_cudnn(node.compute_dtype), in[kIn0], in[kIn1], in[kIn2],
                lowering.tensor(out.uid));
}

}  // namespace cudnnfe::backend
