// The op kinds' rules, one row each (ops/op_rules.h). The functions live in
// each op's file (ops/<op>.cpp); this table only names them.
#include "ops/op_rules.h"

#include <iterator>

#include "ops/attention.h"
#include "ops/attention_support.h"
#include "ops/ops.h"
#include "ops/sdpa_fp8.h"

namespace cudnnfe {
namespace {

// Attention's option tensors (lengths, seeds, masks) have their own rules.
void types_attention(Graph &graph, Node &node) {
  check_numeric_inputs(graph, node, attention_ports(node.kind).attn_scale);
  check_types_sdpa(graph, node);
}

// FP8 attention's option tensors (lengths, dropout's, page tables, sink) follow
// the descales and scales and have attention's rules.
void types_sdpa_fp8(Graph &graph, Node &node) {
  check_numeric_inputs(graph, node, attention_ports(node.kind).seq_len_q);
  check_types_sdpa_fp8(graph, node);
}

// Optional outputs.
bool sdpa_outputs(const Node &node, size_t port) {
  const SdpaAttrs &a = node.as<SdpaAttrs>();
  switch (port) {
    case Sdpa::kStats: return a.generate_stats;
    case Sdpa::kScoreMax: return a.generate_score_max;
    case Sdpa::kScoreSumExp: return a.generate_score_sum_exp;
    case Sdpa::kRngDump: return a.generate_rng_dump;
    default: return true;
  }
}
bool sdpa_backward_outputs(const Node &node, size_t port) {
  const SdpaBackwardAttrs &a = node.as<SdpaBackwardAttrs>();
  if (port == SdpaBackward::kDSinkToken) return a.generate_dsink;
  return port != SdpaBackward::kDBias || a.generate_dbias;
}
bool softmax_outputs(const Node &node, size_t port) {
  return port != Softmax::kStats || node.as<SoftmaxAttrs>().generate_stats;
}
// Statistics only in training (y is port 0 of every forward norm).
bool norm_outputs(const Node &node, size_t port) {
  static_assert(same_port(LayerNorm::kY, RmsNorm::kY, InstanceNorm::kY, AdaLayerNorm::kY));
  return port == LayerNorm::kY || node.as<NormAttrs>().phase == CUDNNFE_NORM_PHASE_TRAINING;
}
bool rmsnorm_backward_outputs(const Node &node, size_t port) {
  return port != RmsNormBackward::kDbias || node.as<NormAttrs>().has_dbias;
}
bool resample_outputs(const Node &node, size_t port) {
  return port != Resample::kIndex || node.as<ResampleAttrs>().generate_index;
}
// Next running statistics only when the previous are given.
bool batchnorm_outputs(const Node &node, size_t port) {
  using namespace BatchNorm;
  return (port != kNextRunningMean && port != kNextRunningVar) ||
         node.inputs[kPrevRunningMean] != 0 || node.inputs[kPrevRunningVar] != 0;
}
bool sdpa_fp8_outputs(const Node &node, size_t port) {
  return port != SdpaFp8::kStats || node.as<SdpaFp8Attrs>().generate_stats;
}

bool bn_finalize_outputs(const Node &node, size_t port) {
  using namespace BnFinalize;
  return (port != kNextRunningMean && port != kNextRunningVar) ||
         node.inputs[kPrevRunningMean] != 0;
}

using K = OpKind;

// One row per OpKind, in enum order (checked at compile time). The input
// types of the non-attention ops have no rule of their own: cuDNN decides
// what it takes (cudnn-frontend checks none), and the CPU reference reads
// every type (docs/refusals.md).
constexpr OpRules kRows[] = {
    {K::kConvFprop, infer_conv, nullptr, nullptr, nullptr, nullptr},
    {K::kConvDgrad, infer_conv, nullptr, nullptr, nullptr, nullptr},
    {K::kConvWgrad, infer_conv, nullptr, nullptr, nullptr, nullptr},
    {K::kMatmul, infer_matmul, nullptr, nullptr, nullptr, nullptr},
    {K::kPointwise, infer_pointwise, nullptr, nullptr, nullptr, nullptr},
    {K::kReduction, infer_reduction, nullptr, nullptr, nullptr, nullptr},
    {K::kSdpa, infer_sdpa, types_attention, sdpa_outputs, offer_sdpa_features,
     check_attention_support},
    {K::kSdpaBackward, infer_sdpa_backward, types_attention, sdpa_backward_outputs,
     offer_sdpa_backward_features, check_attention_support},
    {K::kLayerNorm, infer_norm, nullptr, norm_outputs, offer_norm_features, nullptr},
    {K::kRmsNorm, infer_norm, nullptr, norm_outputs, offer_norm_features, nullptr},
    {K::kLayerNormBackward, infer_norm, nullptr, nullptr, nullptr, nullptr},
    {K::kRmsNormBackward, infer_norm, nullptr, rmsnorm_backward_outputs, nullptr, nullptr},
    {K::kSoftmax, infer_softmax, nullptr, softmax_outputs, offer_softmax_features, nullptr},
    {K::kReshape, infer_layout, check_types_layout, nullptr, nullptr, nullptr},
    {K::kTranspose, infer_layout, check_types_layout, nullptr, nullptr, nullptr},
    {K::kSlice, infer_layout, check_types_layout, nullptr, nullptr, nullptr},
    {K::kConcatenate, infer_layout, check_types_layout, nullptr, nullptr, nullptr},
    {K::kResample, infer_resample, check_types_resample, resample_outputs, nullptr, nullptr},
    {K::kRng, infer_rng, check_types_rng, nullptr, nullptr, nullptr},
    {K::kBatchNorm, infer_grouped_norm, nullptr, batchnorm_outputs, offer_batchnorm_features,
     nullptr},
    {K::kBatchNormInference, infer_grouped_norm, nullptr, nullptr, nullptr, nullptr},
    {K::kBatchNormBackward, infer_grouped_norm, nullptr, nullptr, nullptr, nullptr},
    {K::kInstanceNorm, infer_grouped_norm, nullptr, norm_outputs, nullptr, nullptr},
    {K::kInstanceNormBackward, infer_grouped_norm, nullptr, nullptr, nullptr, nullptr},
    {K::kAdaLayerNorm, infer_grouped_norm, nullptr, norm_outputs, offer_adalayernorm_features,
     nullptr},
    {K::kAdaLayerNormBackward, infer_grouped_norm, nullptr, nullptr, nullptr, nullptr},
    {K::kSdpaFp8, infer_sdpa_fp8, types_sdpa_fp8, sdpa_fp8_outputs, nullptr,
     check_attention_support},
    {K::kSdpaFp8Backward, infer_sdpa_fp8_backward, types_sdpa_fp8, nullptr, nullptr,
     check_attention_support},
    {K::kBlockScaleQuantize, infer_block_scale, nullptr, nullptr, nullptr, nullptr},
    {K::kBlockScaleDequantize, infer_block_scale, nullptr, nullptr, nullptr, nullptr},
    {K::kGenStats, infer_genstats, nullptr, nullptr, nullptr, nullptr},
    {K::kBnFinalize, infer_bn_finalize, nullptr, bn_finalize_outputs, nullptr, nullptr},
    {K::kDbnWeight, infer_dbn_weight, nullptr, nullptr, nullptr, nullptr},
    {K::kMoeGroupedMatmul, infer_moe_grouped_matmul, check_types_moe_grouped_matmul, nullptr,
     nullptr, nullptr},
    {K::kMoeGroupedMatmulBackward, infer_moe_grouped_matmul, check_types_moe_grouped_matmul,
     nullptr, nullptr, nullptr},
    {K::kPagedCacheLoad, infer_paged_cache_load, check_types_paged_cache_load, nullptr, nullptr,
     nullptr},
};
static_assert(std::size(kRows) == kOpKindCount, "every OpKind needs a row of rules");
static_assert(rows_in_enum_order(kRows), "rows must follow the OpKind order");

}  // namespace

const OpRules &op_rules(OpKind kind) {
  return kRows[static_cast<size_t>(kind)];
}

}  // namespace cudnnfe
