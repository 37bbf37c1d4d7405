#include "ops/ops.h"

#include <cmath>

#include "core/dtype.h"
#include "core/error.h"
#include "ops/attention.h"
#include "ops/sdpa_fp8.h"

namespace cudnnfe {

void infer_and_check(Graph &graph, Node &node) {
  switch (node.kind) {
    case OpKind::kConvFprop:
    case OpKind::kConvDgrad:
    case OpKind::kConvWgrad: return infer_conv(graph, node);
    case OpKind::kMatmul: return infer_matmul(graph, node);
    case OpKind::kPointwise: return infer_pointwise(graph, node);
    case OpKind::kReduction: return infer_reduction(graph, node);
    case OpKind::kSdpa: return infer_sdpa(graph, node);
    case OpKind::kSdpaBackward: return infer_sdpa_backward(graph, node);
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:
    case OpKind::kLayerNormBackward:
    case OpKind::kRmsNormBackward: return infer_norm(graph, node);
    case OpKind::kSoftmax: return infer_softmax(graph, node);
    case OpKind::kReshape:
    case OpKind::kTranspose:
    case OpKind::kSlice:
    case OpKind::kConcatenate: return infer_layout(graph, node);
    case OpKind::kResample: return infer_resample(graph, node);
    case OpKind::kRng: return infer_rng(graph, node);
    case OpKind::kBatchNorm:
    case OpKind::kBatchNormInference:
    case OpKind::kBatchNormBackward:
    case OpKind::kInstanceNorm:
    case OpKind::kInstanceNormBackward:
    case OpKind::kAdaLayerNorm:
    case OpKind::kAdaLayerNormBackward: return infer_grouped_norm(graph, node);
    case OpKind::kSdpaFp8: return infer_sdpa_fp8(graph, node);
    case OpKind::kSdpaFp8Backward: return infer_sdpa_fp8_backward(graph, node);
    case OpKind::kBlockScaleQuantize:
    case OpKind::kBlockScaleDequantize: return infer_block_scale(graph, node);
  }
}

void check_types(Graph &graph, Node &node) {
  if (node.compute_dtype == CUDNNFE_DTYPE_NOT_SET)
    node.compute_dtype =
        graph.compute_dtype != CUDNNFE_DTYPE_NOT_SET ? graph.compute_dtype : CUDNNFE_DTYPE_FLOAT;
  if (node.compute_dtype != CUDNNFE_DTYPE_FLOAT && node.compute_dtype != CUDNNFE_DTYPE_INT32 &&
      node.compute_dtype != CUDNNFE_DTYPE_HALF && node.compute_dtype != CUDNNFE_DTYPE_DOUBLE)
    fail_graph(Graph::label(node), ": compute data type ", dtype_name(node.compute_dtype),
               " is not supported; use FLOAT (or HALF, INT32)");
  // Layout ops take any type (and keep it); rng reads integer seeds.
  if (is_layout_op(node.kind)) return check_types_layout(graph, node);
  if (node.kind == OpKind::kRng) return check_types_rng(graph, node);
  if (node.kind == OpKind::kBlockScaleQuantize || node.kind == OpKind::kBlockScaleDequantize)
    return check_types_block_scale(graph, node);
  if (node.kind == OpKind::kResample) check_types_resample(graph, node);
  const bool attention = node.kind == OpKind::kSdpa || node.kind == OpKind::kSdpaBackward;
  for (size_t port = 0; port < node.inputs.size(); ++port) {
    if (node.inputs[port] == 0) continue;
    // Attention's option tensors (lengths, seeds, masks) have their own
    // type rules (check_types_sdpa).
    if (attention && port >= attention_ports(node.kind).attn_scale) continue;
    const Tensor &t = graph.tensor(node.inputs[port]);
    bool numeric_ok =
        node.kind == OpKind::kPointwise || dtype_is_float(t.dtype) || t.dtype == CUDNNFE_DTYPE_INT8;
    if (!numeric_ok)
      fail_graph(Graph::label(node), ": ", Graph::input_port(node, port), " \"", t.name,
                 "\" has data type ", dtype_name(t.dtype), ", which ", op_kind_name(node.kind),
                 " does not accept");
  }
  if (attention) check_types_sdpa(graph, node);
  if (node.kind == OpKind::kSdpaFp8 || node.kind == OpKind::kSdpaFp8Backward)
    check_types_sdpa_fp8(graph, node);
}

bool output_used(const Node &node, size_t port) {
  switch (node.kind) {
    case OpKind::kSdpa: return port != 1 || node.as<SdpaAttrs>().generate_stats;
    case OpKind::kSoftmax: return port != 1 || node.as<SoftmaxAttrs>().generate_stats;
    case OpKind::kLayerNorm:
    case OpKind::kRmsNorm:  // statistics only in training
      return port == 0 || node.as<NormAttrs>().phase == CUDNNFE_NORM_PHASE_TRAINING;
    case OpKind::kRmsNormBackward: return port != 2 || node.as<NormAttrs>().has_dbias;
    case OpKind::kResample: return port == 0 || node.as<ResampleAttrs>().generate_index;
    case OpKind::kInstanceNorm:
    case OpKind::kAdaLayerNorm:  // statistics only in training
      return port == 0 || node.as<NormAttrs>().phase == CUDNNFE_NORM_PHASE_TRAINING;
    case OpKind::kBatchNorm:  // next running statistics only when the previous are given
      return port < 3 || node.inputs[3] != 0 || node.inputs[4] != 0;
    case OpKind::kSdpaFp8: return port != 1 || node.as<SdpaFp8Attrs>().generate_stats;
    case OpKind::kSdpaBackward:
      return port != kSdpaBackwardDbiasPort || node.as<SdpaBackwardAttrs>().generate_dbias;
    default: return true;
  }
}

double effective_attn_scale(const Graph &graph, const Node &node) {
  double scale = node.kind == OpKind::kSdpa ? node.as<SdpaAttrs>().attn_scale
                                            : node.as<SdpaBackwardAttrs>().attn_scale;
  if (scale != 0.0) return scale;
  const Tensor &q = graph.tensor(node.inputs[0]);
  return 1.0 / std::sqrt(static_cast<double>(q.dims.back()));
}

const Tensor &required_input(Graph &graph, const Node &node, size_t port) {
  if (node.inputs[port] == 0)
    fail_graph(Graph::label(node), ": input ", Graph::input_port(node, port), " is missing");
  return graph.tensor(node.inputs[port]);
}

int64_t checked_size(const Node &node, CheckedInt size, const std::string &what) {
  auto value = size.get();
  if (!value) fail_graph(Graph::label(node), ": ", what, " overflows 64 bits");
  return *value;
}

Tensor &set_output_shape(Graph &graph, const Node &node, size_t port,
                         const std::vector<int64_t> &dims,
                         const std::vector<int64_t> &layout_like) {
  Tensor &out = graph.tensor(node.outputs[port]);
  const std::string what = cat(Graph::label(node), ": output \"", out.name, "\"");
  require_shape_fits(CUDNNFE_STATUS_INVALID_GRAPH, what, dims, nullptr);
  if (!out.dims_set_by_user) out.dims = dims;
  if (!out.strides_set_by_user || out.strides.size() != out.dims.size())
    out.strides = strides_like(out.dims, layout_like);
  require_shape_fits(CUDNNFE_STATUS_INVALID_GRAPH, what, out.dims, &out.strides);
  return out;
}

void require_rank(const Node &node, const std::string &port, const Tensor &t, size_t rank,
                  const char *expected) {
  if (t.dims.size() != rank)
    fail_graph(Graph::label(node), ": ", port, " \"", t.name, "\" has ", t.dims.size(), " dims ",
               dims_string(t.dims), "; expected ", rank, " ", expected);
}

}  // namespace cudnnfe
