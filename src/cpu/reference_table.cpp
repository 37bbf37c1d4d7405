// The CPU reference's rows (cpu/reference_table.h): each adapts a node's
// tensors by port to its op's loop (cpu/reference_ops.h).
#include "cpu/reference_table.h"

#include <cmath>
#include <iterator>
#include <memory>

#include "core/dtype.h"
#include "core/error.h"
#include "cpu/reference_ops.h"
#include "cpu/score_mod_eval.h"
#include "cpu/sdpa_fp8_ref.h"
#include "graph/graph.h"
#include "ops/attention.h"
#include "ops/norm_scalars.h"

namespace cudnnfe::cpu {
namespace {

// An attention node's optional tensors by port (ops/attention.h).
AttentionInputs attention_inputs(const StepTensors &t) {
  const AttentionPorts &p = attention_ports(t.node.kind);
  AttentionInputs a;
  a.bias = t.in(p.bias);
  a.attn_scale = t.in(p.attn_scale);
  a.seq_len_q = t.in(p.seq_len_q);
  a.seq_len_kv = t.in(p.seq_len_kv);
  a.dropout_seed = t.in(p.dropout_seed);
  a.dropout_offset = t.in(p.dropout_offset);
  a.dropout_mask = t.in(p.dropout_mask);
  a.dropout_scale = t.in(p.dropout_scale);
  a.dropout_scale_inv = t.in(p.dropout_scale_inv);
  a.ragged_q = t.in(p.ragged_q);
  a.ragged_k = t.in(p.ragged_k);
  a.ragged_v = t.in(p.ragged_v);
  a.ragged_o = t.in(p.ragged_o);
  a.page_table_k = t.in(p.page_table_k);
  a.page_table_v = t.in(p.page_table_v);
  a.sink_token = t.in(p.sink_token);
  a.block_mask = t.in(p.block_mask);
  a.ragged_page_table_k = t.in(p.ragged_page_table_k);
  a.ragged_page_table_v = t.in(p.ragged_page_table_v);
  a.ragged_stats = t.in(p.ragged_stats);
  a.ragged_score_max = t.in(p.ragged_score_max);
  a.ragged_score_sum_exp = t.in(p.ragged_score_sum_exp);
  return a;
}

void check_attention(const Graph &, const Node &node) {
  if (node.compute_dtype == CUDNNFE_DTYPE_INT32)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": attention needs a floating compute type on the CPU reference, not INT32");
}

void check_pointwise(const Graph &, const Node &node) {
  const cudnnfe_pointwise_mode_t mode = node.as<PointwiseAttrs>().mode;
  if (!pointwise_supported(mode))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": pointwise mode ",
         pointwise_mode_name(mode), " (", mode, ") is not supported by the CPU reference");
}

void check_reduction(const Graph &, const Node &node) {
  if (!reduction_supported(node.as<ReductionAttrs>().mode))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": reduction mode ",
         node.as<ReductionAttrs>().mode, " is not supported by the CPU reference");
}

// The CPU reference quantizes to MXFP8 only (cpu/block_scale_ref.cpp: a
// power-of-two FP8_E8M0 scale per block, FP8 values, FLOAT math) from and to
// FLOAT, HALF or BFLOAT16; cuDNN decides the other types on the GPU (NVFP4's
// FP8_E4M3 scale, for one).
void check_block_scale(const Graph &graph, const Node &node) {
  auto require = [&](const Tensor &t, const char *port, bool ok, const char *expected) {
    if (!ok)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": ", port, " \"", t.name,
           "\" has data type ", dtype_name(t.dtype), "; the CPU reference's ",
           op_kind_name(node.kind), " takes ", expected);
  };
  auto wide = [](cudnnfe_dtype_t t) {
    return t == CUDNNFE_DTYPE_FLOAT || t == CUDNNFE_DTYPE_HALF || t == CUDNNFE_DTYPE_BFLOAT16;
  };
  auto fp8 = [](cudnnfe_dtype_t t) {
    return t == CUDNNFE_DTYPE_FP8_E4M3 || t == CUDNNFE_DTYPE_FP8_E5M2;
  };
  if (node.compute_dtype != CUDNNFE_DTYPE_FLOAT)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": compute data type ",
         dtype_name(node.compute_dtype), "; the CPU reference's block scaling computes in FLOAT");
  const bool quantize = node.kind == OpKind::kBlockScaleQuantize;
  const Tensor &x = graph.tensor(node.inputs[0]);
  const Tensor &y = graph.tensor(node.outputs[0]);
  const Tensor &scale = graph.tensor(quantize ? node.outputs[1] : node.inputs[1]);
  require(x, "input x", quantize ? wide(x.dtype) : fp8(x.dtype),
          quantize ? "FLOAT, HALF or BFLOAT16" : "FP8_E4M3 or FP8_E5M2");
  require(scale, quantize ? "output scale" : "input scale", scale.dtype == CUDNNFE_DTYPE_FP8_E8M0,
          "FP8_E8M0");
  require(y, "output y", quantize ? fp8(y.dtype) : wide(y.dtype),
          quantize ? "FP8_E4M3 or FP8_E5M2" : "FLOAT, HALF or BFLOAT16");
}

void conv(const StepTensors &t) {
  run_conv(t.node, *t.in(0), *t.in(1), *t.out(0), t.wanted(0));
}
void matmul(const StepTensors &t) {
  run_matmul(t.node, *t.in(0), *t.in(1), *t.out(0), t.wanted(0));
}
void pointwise(const StepTensors &t) {
  const StridedTensor *inputs[3] = {t.in(0), t.in(1), t.in(2)};
  run_pointwise(t.node, inputs, *t.out(0), t.wanted(0));
}
void reduction(const StepTensors &t) {
  run_reduction(t.node, *t.in(0), *t.out(0), t.wanted(0));
}
// The node's score modifiers bound to its input views, when it has some.
std::unique_ptr<ScoreModProgram::Run> score_mod_run(const StepTensors &t) {
  if (!t.score_mod) return nullptr;
  return std::make_unique<ScoreModProgram::Run>(*t.score_mod, t.inputs);
}
void sdpa(const StepTensors &t) {
  const auto mod = score_mod_run(t);
  // Verify mode: the query rows whose O or stats are wanted.
  ElementMask rows;
  if (!t.want.empty()) rows = sdpa_rows(*t.out(0), t.wanted(0), t.wanted(1));
  run_sdpa(t.node, t.attn_scale,
           {t.in(0), t.in(1), t.in(2), attention_inputs(t), t.out(0), t.out(1), mod.get(),
            t.out(kSdpaScoreMaxPort), t.out(kSdpaScoreSumExpPort), t.out(kSdpaRngDumpPort),
            t.want.empty() ? nullptr : &rows});
}
void sdpa_backward(const StepTensors &t) {
  const auto mod = score_mod_run(t);
  run_sdpa_backward(t.node, t.attn_scale,
                    {t.in(0), t.in(1), t.in(2), t.in(3), t.in(4), t.in(5), attention_inputs(t),
                     t.out(0), t.out(1), t.out(2), t.out(kSdpaBackwardDbiasPort), mod.get(),
                     t.out(kSdpaBackwardDsinkPort)});
}
void softmax(const StepTensors &t) {
  run_softmax(t.node, *t.in(0), *t.out(0), t.out(1));
}
// A forward norm with its epsilon (and momentum) tensors read now, at execute.
Node with_scalar_tensors(const StepTensors &t) {
  Node node = t.node;
  NormAttrs &attrs = node.as<NormAttrs>();
  const NormScalarPorts ports = norm_scalar_ports(node.kind);
  if (const StridedTensor *e = t.in(ports.epsilon)) {
    attrs.epsilon = e->load(0);
    if (!(attrs.epsilon >= 0) || !std::isfinite(attrs.epsilon))
      fail(CUDNNFE_STATUS_INVALID_ARGUMENT, Graph::label(node), ": the epsilon tensor holds ",
           attrs.epsilon, "; it must be finite and >= 0");
  }
  if (const StridedTensor *m = t.in(ports.momentum)) {
    attrs.momentum = m->load(0);
    if (!(attrs.momentum >= 0 && attrs.momentum <= 1))
      fail(CUDNNFE_STATUS_INVALID_ARGUMENT, Graph::label(node), ": the momentum tensor holds ",
           attrs.momentum, "; it must be in [0, 1]");
  }
  return node;
}

void norm(const StepTensors &t) {
  const Node node = with_scalar_tensors(t);
  // Verify mode: the rows whose y or statistics are wanted.
  ElementMask rows;
  if (!t.want.empty()) rows = norm_rows(*t.out(0), t.want);
  run_norm_forward(node, *t.in(0), *t.in(1), t.in(2), *t.out(0), t.out(1), t.out(2),
                   t.want.empty() ? nullptr : &rows);
}
void layernorm_backward(const StepTensors &t) {
  run_norm_backward(t.node, *t.in(0), *t.in(1), *t.in(2), t.in(3), *t.in(4), *t.out(0), t.out(1),
                    t.out(2));
}
void rmsnorm_backward(const StepTensors &t) {
  run_norm_backward(t.node, *t.in(0), *t.in(1), *t.in(2), nullptr, *t.in(3), *t.out(0), t.out(1),
                    t.out(2));
}
void reshape(const StepTensors &t) {
  run_reshape(t.node, *t.in(0), *t.out(0));
}
void transpose(const StepTensors &t) {
  run_transpose(t.node, *t.in(0), *t.out(0));
}
void concatenate(const StepTensors &t) {
  size_t count = 0;
  while (count < t.inputs.size() && t.in(count)) ++count;
  run_concatenate(t.node, t.inputs.data(), count, *t.out(0));
}
void resample(const StepTensors &t) {
  run_resample(t.node, *t.in(0), *t.out(0), t.out(1));
}
void rng(const StepTensors &t) {
  run_rng(t.node, t.in(0), t.in(1), *t.out(0));
}
// batchnorm, instancenorm, adalayernorm (running statistics: batchnorm's).
void grouped_norm(const StepTensors &t) {
  const Node node = with_scalar_tensors(t);
  run_grouped_norm_forward(node, {t.in(0), t.in(1), t.in(2), t.out(0), t.out(1), t.out(2), nullptr,
                                  nullptr, t.in(3), t.in(4), t.out(3), t.out(4)});
}
void batchnorm_inference(const StepTensors &t) {
  run_grouped_norm_forward(t.node, {t.in(0), t.in(1), t.in(2), t.out(0), nullptr, nullptr, t.in(3),
                                    t.in(4), nullptr, nullptr, nullptr, nullptr});
}
void grouped_norm_backward(const StepTensors &t) {
  run_norm_backward(t.node, *t.in(0), *t.in(1), *t.in(2), t.in(3), *t.in(4), *t.out(0), t.out(1),
                    t.out(2));
}
void sdpa_fp8(const StepTensors &t) {
  run_sdpa_fp8(t.node, t.inputs.data(), attention_inputs(t), t.outputs.data());
}
void sdpa_fp8_backward(const StepTensors &t) {
  run_sdpa_fp8_backward(t.node, t.inputs.data(), attention_inputs(t), t.outputs.data());
}
void quantize(const StepTensors &t) {
  run_block_scale_quantize(t.node, *t.in(0), *t.out(0), *t.out(1));
}
void dequantize(const StepTensors &t) {
  run_block_scale_dequantize(t.node, *t.in(0), *t.in(1), *t.out(0));
}
void genstats(const StepTensors &t) {
  run_genstats(t.node, *t.in(0), *t.out(0), *t.out(1));
}
void bn_finalize(const StepTensors &t) {
  const StridedTensor *in[9], *out[6];
  for (size_t i = 0; i < 9; ++i) in[i] = t.in(i);
  for (size_t i = 0; i < 6; ++i) out[i] = t.out(i);
  run_bn_finalize(t.node, in, out);
}
void dbn_weight(const StepTensors &t) {
  run_dbn_weight(t.node, t.inputs.data(), t.outputs.data());
}
void moe_grouped_matmul(const StepTensors &t) {
  run_moe_grouped_matmul(t.node, *t.in(0), *t.in(1), *t.in(2), t.in(3), t.in(4), *t.out(0));
}
void moe_grouped_matmul_backward(const StepTensors &t) {
  run_moe_grouped_matmul_backward(t.node, *t.in(0), *t.in(1), *t.in(2), *t.out(0));
}

using K = OpKind;

// One row per OpKind, in enum order (checked at compile time).
constexpr ReferenceOp kRows[] = {
    {K::kConvFprop, nullptr, conv, demand_conv},
    {K::kConvDgrad, nullptr, conv, demand_conv},
    {K::kConvWgrad, nullptr, conv, demand_conv},
    {K::kMatmul, nullptr, matmul, demand_matmul},
    {K::kPointwise, check_pointwise, pointwise, demand_pointwise},
    {K::kReduction, check_reduction, reduction, demand_reduction},
    {K::kSdpa, check_attention, sdpa, demand_sdpa},
    {K::kSdpaBackward, check_attention, sdpa_backward, nullptr},
    {K::kLayerNorm, nullptr, norm, demand_norm_forward},
    {K::kRmsNorm, nullptr, norm, demand_norm_forward},
    {K::kLayerNormBackward, nullptr, layernorm_backward, nullptr},
    {K::kRmsNormBackward, nullptr, rmsnorm_backward, nullptr},
    {K::kSoftmax, nullptr, softmax, nullptr},
    {K::kReshape, nullptr, reshape, demand_reshape},
    {K::kTranspose, nullptr, transpose, demand_transpose},
    {K::kSlice, nullptr, nullptr, demand_slice},  // a view: its slot points into x's buffer
    {K::kConcatenate, nullptr, concatenate, nullptr},
    {K::kResample, nullptr, resample, nullptr},
    {K::kRng, nullptr, rng, nullptr},
    {K::kBatchNorm, nullptr, grouped_norm, nullptr},
    {K::kBatchNormInference, nullptr, batchnorm_inference, nullptr},
    {K::kBatchNormBackward, nullptr, grouped_norm_backward, nullptr},
    {K::kInstanceNorm, nullptr, grouped_norm, nullptr},
    {K::kInstanceNormBackward, nullptr, grouped_norm_backward, nullptr},
    {K::kAdaLayerNorm, nullptr, grouped_norm, nullptr},
    {K::kAdaLayerNormBackward, nullptr, grouped_norm_backward, nullptr},
    {K::kSdpaFp8, nullptr, sdpa_fp8, nullptr},
    {K::kSdpaFp8Backward, nullptr, sdpa_fp8_backward, nullptr},
    {K::kBlockScaleQuantize, check_block_scale, quantize, nullptr},
    {K::kBlockScaleDequantize, check_block_scale, dequantize, nullptr},
    {K::kGenStats, nullptr, genstats, nullptr},
    {K::kBnFinalize, nullptr, bn_finalize, nullptr},
    {K::kDbnWeight, nullptr, dbn_weight, nullptr},
    {K::kMoeGroupedMatmul, nullptr, moe_grouped_matmul, nullptr},
    {K::kMoeGroupedMatmulBackward, nullptr, moe_grouped_matmul_backward, nullptr},
};
static_assert(std::size(kRows) == kOpKindCount, "every OpKind needs a CPU reference row");
static_assert(rows_in_enum_order(kRows), "rows must follow the OpKind order");

}  // namespace

const ReferenceOp &reference_op(OpKind kind) {
  return kRows[static_cast<size_t>(kind)];
}

}  // namespace cudnnfe::cpu
