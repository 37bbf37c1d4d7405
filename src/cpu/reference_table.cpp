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
  static_assert(same_port(BlockScaleQuantize::kX, BlockScaleDequantize::kX) &&
                same_port(BlockScaleQuantize::kY, BlockScaleDequantize::kY));
  const Tensor &x = graph.tensor(node.inputs[BlockScaleQuantize::kX]);
  const Tensor &y = graph.tensor(node.outputs[BlockScaleQuantize::kY]);
  const Tensor &scale = graph.tensor(quantize ? node.outputs[BlockScaleQuantize::kScale]
                                              : node.inputs[BlockScaleDequantize::kScale]);
  require(x, "input x", quantize ? wide(x.dtype) : fp8(x.dtype),
          quantize ? "FLOAT, HALF or BFLOAT16" : "FP8_E4M3 or FP8_E5M2");
  require(scale, quantize ? "output scale" : "input scale", scale.dtype == CUDNNFE_DTYPE_FP8_E8M0,
          "FP8_E8M0");
  require(y, "output y", quantize ? fp8(y.dtype) : wide(y.dtype),
          quantize ? "FP8_E4M3 or FP8_E5M2" : "FLOAT, HALF or BFLOAT16");
}

// The three convolutions' operands and result, in port order (conv_ref.cpp
// reads them by kind).
void conv(const StepTensors &t) {
  static_assert(same_port(ConvFprop::kInputCount, ConvDgrad::kInputCount, ConvWgrad::kInputCount) &&
                same_port(ConvFprop::kY, ConvDgrad::kDx, ConvWgrad::kDw));
  run_conv(t.node, *t.in(ConvFprop::kImage), *t.in(ConvFprop::kWeight), *t.out(ConvFprop::kY),
           t.wanted(ConvFprop::kY));
}
void matmul(const StepTensors &t) {
  run_matmul(t.node, *t.in(Matmul::kA), *t.in(Matmul::kB), *t.out(Matmul::kC),
             t.wanted(Matmul::kC));
}
void pointwise(const StepTensors &t) {
  using P = Pointwise::Input;
  const StridedTensor *inputs[Pointwise::kInputCount] = {t.in(P::kIn0), t.in(P::kIn1),
                                                         t.in(P::kIn2)};
  run_pointwise(t.node, inputs, *t.out(Pointwise::kOut), t.wanted(Pointwise::kOut));
}
void reduction(const StepTensors &t) {
  run_reduction(t.node, *t.in(Reduction::kX), *t.out(Reduction::kY), t.wanted(Reduction::kY));
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
  using namespace Sdpa;
  if (!t.want.empty()) rows = sdpa_rows(*t.out(kO), t.wanted(kO), t.wanted(kStats));
  run_sdpa(
      t.node, t.attn_scale,
      {t.in(kQ), t.in(kK), t.in(kV), attention_inputs(t), t.out(kO), t.out(kStats), mod.get(),
       t.out(kScoreMax), t.out(kScoreSumExp), t.out(kRngDump), t.want.empty() ? nullptr : &rows});
}
void sdpa_backward(const StepTensors &t) {
  const auto mod = score_mod_run(t);
  using namespace SdpaBackward;
  run_sdpa_backward(
      t.node, t.attn_scale,
      {t.in(kQ), t.in(kK), t.in(kV), t.in(kO), t.in(kDO), t.in(kStats), attention_inputs(t),
       t.out(kDQ), t.out(kDK), t.out(kDV), t.out(kDBias), mod.get(), t.out(kDSinkToken)});
}
void softmax(const StepTensors &t) {
  run_softmax(t.node, *t.in(Softmax::kX), *t.out(Softmax::kY), t.out(Softmax::kStats));
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

// layernorm and rmsnorm (whose one statistic, inv_rms, is in mean's port).
void norm(const StepTensors &t) {
  using namespace LayerNorm;
  static_assert(same_port(RmsNorm::kBias, kBias) && same_port(RmsNorm::kInvRms, kMean));
  const Node node = with_scalar_tensors(t);
  // Verify mode: the rows whose y or statistics are wanted.
  ElementMask rows;
  if (!t.want.empty()) rows = norm_rows(*t.out(kY), t.want);
  run_norm_forward(node, *t.in(kX), *t.in(kScale), t.in(kBias), *t.out(kY), t.out(kMean),
                   t.out(kInvVariance), t.want.empty() ? nullptr : &rows);
}
// The backward norms but rmsnorm's, which reads no mean: layernorm's ports.
void norm_backward(const StepTensors &t) {
  using namespace LayerNormBackward;
  static_assert(same_port(BatchNormBackward::kInvVariance, kInvVariance) &&
                same_port(InstanceNormBackward::kInvVariance, kInvVariance) &&
                same_port(AdaLayerNormBackward::kInvVariance, kInvVariance) &&
                same_port(BatchNormBackward::kDbias, kDbias) &&
                same_port(InstanceNormBackward::kDbias, kDbias) &&
                same_port(AdaLayerNormBackward::kDbias, kDbias));
  run_norm_backward(t.node, *t.in(kDy), *t.in(kX), *t.in(kScale), t.in(kMean), *t.in(kInvVariance),
                    *t.out(kDx), t.out(kDscale), t.out(kDbias));
}
void rmsnorm_backward(const StepTensors &t) {
  using namespace RmsNormBackward;
  run_norm_backward(t.node, *t.in(kDy), *t.in(kX), *t.in(kScale), nullptr, *t.in(kInvRms),
                    *t.out(kDx), t.out(kDscale), t.out(kDbias));
}
void reshape(const StepTensors &t) {
  run_reshape(t.node, *t.in(Reshape::kX), *t.out(Reshape::kY));
}
void transpose(const StepTensors &t) {
  run_transpose(t.node, *t.in(Transpose::kX), *t.out(Transpose::kY));
}
void concatenate(const StepTensors &t) {
  size_t count = 0;
  while (count < t.inputs.size() && t.in(count)) ++count;
  run_concatenate(t.node, t.inputs.data(), count, *t.out(Concatenate::kY));
}
void resample(const StepTensors &t) {
  run_resample(t.node, *t.in(Resample::kX), *t.out(Resample::kY), t.out(Resample::kIndex));
}
void rng(const StepTensors &t) {
  run_rng(t.node, t.in(Rng::kSeed), t.in(Rng::kOffset), *t.out(Rng::kY));
}
// batchnorm, instancenorm, adalayernorm (running statistics: batchnorm's;
// the others' epsilon port is where batchnorm's prev_running_mean is, and
// they have no such outputs: their `t.in` is epsilon, read only as a scalar).
void grouped_norm(const StepTensors &t) {
  using namespace BatchNorm;
  static_assert(same_port(InstanceNorm::kInvVariance, kInvVariance) &&
                same_port(AdaLayerNorm::kInvVariance, kInvVariance) &&
                same_port(InstanceNorm::kBias, kBias) && same_port(AdaLayerNorm::kBias, kBias));
  const Node node = with_scalar_tensors(t);
  const bool running = t.node.kind == OpKind::kBatchNorm;
  run_grouped_norm_forward(
      node,
      {t.in(kX), t.in(kScale), t.in(kBias), t.out(kY), t.out(kMean), t.out(kInvVariance), nullptr,
       nullptr, running ? t.in(kPrevRunningMean) : nullptr,
       running ? t.in(kPrevRunningVar) : nullptr, t.out(kNextRunningMean), t.out(kNextRunningVar)});
}
void batchnorm_inference(const StepTensors &t) {
  using namespace BatchNormInference;
  run_grouped_norm_forward(
      t.node, {t.in(kX), t.in(kScale), t.in(kBias), t.out(kY), nullptr, nullptr, t.in(kMean),
               t.in(kInvVariance), nullptr, nullptr, nullptr, nullptr});
}
void sdpa_fp8(const StepTensors &t) {
  run_sdpa_fp8(t.node, t.inputs.data(), attention_inputs(t), t.outputs.data());
}
void sdpa_fp8_backward(const StepTensors &t) {
  run_sdpa_fp8_backward(t.node, t.inputs.data(), attention_inputs(t), t.outputs.data());
}
void quantize(const StepTensors &t) {
  using namespace BlockScaleQuantize;
  run_block_scale_quantize(t.node, *t.in(kX), *t.out(kY), *t.out(kScale));
}
void dequantize(const StepTensors &t) {
  using namespace BlockScaleDequantize;
  run_block_scale_dequantize(t.node, *t.in(kX), *t.in(kScale), *t.out(kY));
}
void genstats(const StepTensors &t) {
  run_genstats(t.node, *t.in(GenStats::kX), *t.out(GenStats::kSum), *t.out(GenStats::kSqSum));
}
// Every port, absent ones as nullptr (the node may list fewer).
void bn_finalize(const StepTensors &t) {
  const StridedTensor *in[BnFinalize::kInputCount], *out[BnFinalize::kOutputCount];
  for (size_t i = 0; i < BnFinalize::kInputCount; ++i) in[i] = t.in(i);
  for (size_t i = 0; i < BnFinalize::kOutputCount; ++i) out[i] = t.out(i);
  run_bn_finalize(t.node, in, out);
}
void dbn_weight(const StepTensors &t) {
  run_dbn_weight(t.node, t.inputs.data(), t.outputs.data());
}
void moe_grouped_matmul(const StepTensors &t) {
  using namespace MoeGroupedMatmul;
  run_moe_grouped_matmul(t.node, *t.in(kToken), *t.in(kWeight), *t.in(kFirstTokenOffset),
                         t.in(kTokenIndex), t.in(kTokenKs), *t.out(kOutput));
}
void moe_grouped_matmul_backward(const StepTensors &t) {
  using namespace MoeGroupedMatmulBackward;
  run_moe_grouped_matmul_backward(t.node, *t.in(kDoutput), *t.in(kToken), *t.in(kFirstTokenOffset),
                                  *t.out(kDweight));
}
void paged_cache_load(const StepTensors &t) {
  using namespace PagedCacheLoad;
  run_paged_cache_load(t.node, *t.in(kContainer), *t.in(kSeqLen), *t.in(kPageTable), *t.out(kY));
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
    {K::kLayerNormBackward, nullptr, norm_backward, nullptr},
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
    {K::kBatchNormBackward, nullptr, norm_backward, nullptr},
    {K::kInstanceNorm, nullptr, grouped_norm, nullptr},
    {K::kInstanceNormBackward, nullptr, norm_backward, nullptr},
    {K::kAdaLayerNorm, nullptr, grouped_norm, nullptr},
    {K::kAdaLayerNormBackward, nullptr, norm_backward, nullptr},
    {K::kSdpaFp8, nullptr, sdpa_fp8, nullptr},
    {K::kSdpaFp8Backward, nullptr, sdpa_fp8_backward, nullptr},
    {K::kBlockScaleQuantize, check_block_scale, quantize, nullptr},
    {K::kBlockScaleDequantize, check_block_scale, dequantize, nullptr},
    {K::kGenStats, nullptr, genstats, nullptr},
    {K::kBnFinalize, nullptr, bn_finalize, nullptr},
    {K::kDbnWeight, nullptr, dbn_weight, nullptr},
    {K::kMoeGroupedMatmul, nullptr, moe_grouped_matmul, nullptr},
    {K::kMoeGroupedMatmulBackward, nullptr, moe_grouped_matmul_backward, nullptr},
    {K::kPagedCacheLoad, nullptr, paged_cache_load, nullptr},
};
static_assert(std::size(kRows) == kOpKindCount, "every OpKind needs a CPU reference row");
static_assert(rows_in_enum_order(kRows), "rows must follow the OpKind order");

}  // namespace

const ReferenceOp &reference_op(OpKind kind) {
  return kRows[static_cast<size_t>(kind)];
}

}  // namespace cudnnfe::cpu
