// The backend's rows (backend/lowering_table.h): each names its op's
// lowering (backend/lower_<op>.cpp) and what its description adds.
#include "backend/lowering_table.h"

#include <iterator>

#include "backend/lower_sdpa_fp8.h"
#include "core/dtype.h"
#include "core/error.h"
#include "graph/op_schema.h"
#include "ops/attention.h"

namespace cudnnfe::backend {
namespace {

// Masks, windows and option tensors of sdpa and sdpa_backward (and the
// masks and windows of FP8 attention).
void describe_attention(const Node &node, std::string &detail) {
  const AttentionSpec a = attention_spec(node);
  if (a.causal_mask) detail += "causal, ";
  if (a.causal_mask_bottom_right) detail += "causal bottom-right, ";
  if (!a.causal_mask && !a.causal_mask_bottom_right && a.has_band())
    detail += cat("window ", a.left_bound(), "/", a.right_bound(),
                  a.bottom_right() ? " bottom-right, " : ", ");
  else if (a.left_bound() >= 1)
    detail += cat("window_left ", a.left_bound(), ", ");
  if (a.bias != 0) detail += "bias, ";
  if (a.attn_scale_tensor != 0) detail += "scale tensor, ";
  if (a.options.padding_mask) detail += "padding, ";
  if (a.options.alibi_mask) detail += "alibi, ";
  if (a.seeded_dropout()) detail += cat("dropout ", a.options.dropout_probability, ", ");
  if (a.mask_dropout()) detail += "dropout mask, ";
}

void describe_sdpa(const Node &node, std::string &detail) {
  describe_attention(node, detail);
  if (node.as<SdpaAttrs>().generate_stats) detail += "stats, ";
  const AttentionSpec a = attention_spec(node);
  if (a.sink_token != 0) detail += "sink token, ";
  if (a.block_mask != 0) detail += "block mask, ";
  const cudnnfe_attention_implementation_t impl = node.as<SdpaAttrs>().implementation;
  if (impl == CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE) detail += "composite, ";
  if (impl == CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED) detail += "unified, ";
}

void describe_sdpa_backward(const Node &node, std::string &detail) {
  describe_attention(node, detail);
  if (node.as<SdpaBackwardAttrs>().generate_dbias) detail += "dbias, ";
  if (node.as<SdpaBackwardAttrs>().generate_dsink) detail += "dsink, ";
}

void describe_sdpa_fp8(const Node &node, std::string &detail) {
  describe_attention(node, detail);
  if (node.as<SdpaFp8Attrs>().generate_stats) detail += "stats, ";
}

using K = OpKind;

// One row per OpKind, in enum order (checked at compile time).
constexpr LoweringOp kRows[] = {
    {K::kConvFprop, lower_conv, nullptr},
    {K::kConvDgrad, lower_conv, nullptr},
    {K::kConvWgrad, lower_conv, nullptr},
    {K::kMatmul, lower_matmul, nullptr},
    {K::kPointwise, lower_pointwise, nullptr},
    {K::kReduction, lower_reduction, nullptr},
    {K::kSdpa, lower_sdpa, describe_sdpa},
    {K::kSdpaBackward, lower_sdpa_backward, describe_sdpa_backward},
    {K::kLayerNorm, lower_norm, nullptr},
    {K::kRmsNorm, lower_norm, nullptr},
    {K::kLayerNormBackward, lower_norm, nullptr},
    {K::kRmsNormBackward, lower_norm, nullptr},
    {K::kSoftmax, lower_softmax, nullptr},
    {K::kReshape, lower_layout, nullptr},
    {K::kTranspose, lower_layout, nullptr},
    {K::kSlice, lower_layout, nullptr},
    {K::kConcatenate, lower_layout, nullptr},
    {K::kResample, lower_resample, nullptr},
    {K::kRng, lower_rng, nullptr},
    {K::kBatchNorm, lower_grouped_norm, nullptr},
    {K::kBatchNormInference, lower_grouped_norm, nullptr},
    {K::kBatchNormBackward, lower_grouped_norm, nullptr},
    {K::kInstanceNorm, lower_grouped_norm, nullptr},
    {K::kInstanceNormBackward, lower_grouped_norm, nullptr},
    {K::kAdaLayerNorm, lower_grouped_norm, nullptr},
    {K::kAdaLayerNormBackward, lower_grouped_norm, nullptr},
    {K::kSdpaFp8, lower_sdpa_fp8, describe_sdpa_fp8},
    {K::kSdpaFp8Backward, lower_sdpa_fp8_backward, describe_attention},
    {K::kBlockScaleQuantize, lower_block_scale, nullptr},
    {K::kBlockScaleDequantize, lower_block_scale, nullptr},
    {K::kGenStats, lower_genstats, nullptr},
    {K::kBnFinalize, lower_bn_finalize, nullptr},
    {K::kDbnWeight, lower_dbn_weight, nullptr},
    {K::kMoeGroupedMatmul, lower_moe_grouped_matmul, nullptr},
    {K::kMoeGroupedMatmulBackward, lower_moe_grouped_matmul, nullptr},
    {K::kPagedCacheLoad, lower_paged_cache_load, nullptr},
};
static_assert(std::size(kRows) == kOpKindCount, "every OpKind needs a lowering row");
static_assert(rows_in_enum_order(kRows), "rows must follow the OpKind order");

}  // namespace

const LoweringOp &lowering_op(OpKind kind) {
  return kRows[static_cast<size_t>(kind)];
}

void lower_node(Lowering &lowering, const Node &node) {
  const LoweringOp &op = lowering_op(node.kind);
  if (!op.lower)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, op_kind_name(node.kind),
         " has no cuDNN lowering yet (it runs on the CPU reference)");
  op.lower(lowering, node);
}

std::string describe_node(const Graph &graph, const Node &node) {
  std::string detail;
  const void *attrs = attrs_address(node.attrs);
  for (const AttrField &f : op_schema(node.kind).fields)
    if (f.describe && f.codec)
      detail += cat(f.codec->name(static_cast<int32_t>(f.get_int(attrs))), ", ");
  if (auto describe = lowering_op(node.kind).describe) describe(node, detail);
  const int64_t first = node.inputs.empty() ? 0 : node.inputs.front();
  // rng: its output's type (its inputs are integer seeds, or none).
  const int64_t typed = node.kind == OpKind::kRng ? node.outputs[Rng::kY] : first;
  const char *dtype = typed ? dtype_name(graph.tensor(typed).dtype) : "?";
  return cat(Graph::label(node), " (", detail, dtype, ")");
}

}  // namespace cudnnfe::backend
