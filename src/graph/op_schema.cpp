// The op kinds' rows: name, ports and attribute fields (graph/op_schema.h).
// Adding an op adds one row here; its rules, CPU reference and lowering get
// one row each in their own layer's table.
#include "graph/op_schema.h"

#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe {
namespace {

template <class T>
OpAttrs make() {
  return T{};
}

// How many spatial entries JSON holds: conv's spatial_dims; resample's,
// or all three before validation has set it (so that nothing is lost).
int conv_spatial_count(const void *a) {
  return static_cast<const ConvAttrs *>(a)->spatial_dims;
}
int resample_spatial_count(const void *a) {
  const int n = static_cast<const ResampleAttrs *>(a)->spatial_dims;
  return n > 0 ? n : 3;
}

bool is_fp8_dtype(int64_t d) {
  return d == CUDNNFE_DTYPE_FP8_E4M3 || d == CUDNNFE_DTYPE_FP8_E5M2;
}

std::vector<AttrField> conv_fields() {
  return {
      CUDNNFE_ATTR(ConvAttrs, spatial_dims, "spatial_dims"),
      CUDNNFE_ATTR(ConvAttrs, pre_padding, "pre_padding").with_count(conv_spatial_count),
      CUDNNFE_ATTR(ConvAttrs, post_padding, "post_padding").with_count(conv_spatial_count),
      CUDNNFE_ATTR(ConvAttrs, stride, "stride").with_count(conv_spatial_count),
      CUDNNFE_ATTR(ConvAttrs, dilation, "dilation").with_count(conv_spatial_count),
      CUDNNFE_ATTR(ConvAttrs, mode, "mode").with_codec(kConvModeCodec),
  };
}

std::vector<AttrField> pointwise_fields() {
  return {
      CUDNNFE_ATTR(PointwiseAttrs, mode, "mode").with_codec(kPointwiseModeCodec).described(),
      CUDNNFE_ATTR(PointwiseAttrs, relu_lower_clip, "relu_lower_clip"),
      CUDNNFE_ATTR(PointwiseAttrs, relu_upper_clip, "relu_upper_clip"),
      CUDNNFE_ATTR(PointwiseAttrs, relu_lower_clip_slope, "relu_lower_clip_slope"),
      CUDNNFE_ATTR(PointwiseAttrs, elu_alpha, "elu_alpha"),
      CUDNNFE_ATTR(PointwiseAttrs, softplus_beta, "softplus_beta"),
      CUDNNFE_ATTR(PointwiseAttrs, swish_beta, "swish_beta"),
      CUDNNFE_ATTR(PointwiseAttrs, axis, "axis"),
  };
}

std::vector<AttrField> reduction_fields() {
  return {
      CUDNNFE_ATTR(ReductionAttrs, mode, "mode").with_codec(kReductionModeCodec).described(),
      CUDNNFE_ATTR(ReductionAttrs, axes_mask, "axes_mask"),
      CUDNNFE_ATTR(ReductionAttrs, deterministic, "deterministic"),
  };
}

// Attention's options beyond the causal flags; all optional keys (added
// after the first format).
template <class S>
void add_attention_options(std::vector<AttrField> &f) {
  f.push_back(CUDNNFE_ATTR(S, options.padding_mask, "padding_mask").as_optional());
  f.push_back(CUDNNFE_ATTR(S, options.window_left, "window_left").as_optional());
  f.push_back(CUDNNFE_ATTR(S, options.window_right, "window_right").as_optional());
  f.push_back(CUDNNFE_ATTR(S, options.diagonal_alignment, "diagonal_alignment")
                  .with_codec(kDiagonalAlignmentCodec)
                  .as_optional());
  f.push_back(CUDNNFE_ATTR(S, options.alibi_mask, "alibi_mask").as_optional());
  f.push_back(CUDNNFE_ATTR(S, options.dropout_probability, "dropout_probability").as_optional());
}

std::vector<AttrField> sdpa_fields() {
  std::vector<AttrField> f = {
      CUDNNFE_ATTR(SdpaAttrs, attn_scale, "attn_scale"),
      CUDNNFE_ATTR(SdpaAttrs, generate_stats, "generate_stats"),
      CUDNNFE_ATTR(SdpaAttrs, causal_mask, "causal_mask"),
      CUDNNFE_ATTR(SdpaAttrs, causal_mask_bottom_right, "causal_mask_bottom_right"),
  };
  add_attention_options<SdpaAttrs>(f);
  f.push_back(CUDNNFE_ATTR(SdpaAttrs, options.max_seq_len_kv, "max_seq_len_kv").as_optional());
  return f;
}

std::vector<AttrField> sdpa_backward_fields() {
  std::vector<AttrField> f = {
      CUDNNFE_ATTR(SdpaBackwardAttrs, attn_scale, "attn_scale"),
      CUDNNFE_ATTR(SdpaBackwardAttrs, causal_mask, "causal_mask"),
      CUDNNFE_ATTR(SdpaBackwardAttrs, causal_mask_bottom_right, "causal_mask_bottom_right"),
      CUDNNFE_ATTR(SdpaBackwardAttrs, deterministic, "deterministic"),
  };
  add_attention_options<SdpaBackwardAttrs>(f);
  f.push_back(CUDNNFE_ATTR(SdpaBackwardAttrs, generate_dbias, "generate_dbias").as_optional());
  return f;
}

std::vector<AttrField> norm_fields() {
  return {
      CUDNNFE_ATTR(NormAttrs, phase, "phase").with_codec(kNormPhaseCodec),
      CUDNNFE_ATTR(NormAttrs, epsilon, "epsilon"),
      CUDNNFE_ATTR(NormAttrs, zero_centered_gamma, "zero_centered_gamma"),
      CUDNNFE_ATTR(NormAttrs, has_dbias, "has_dbias"),
  };
}

// batchnorm alone keeps a running average.
std::vector<AttrField> batchnorm_fields() {
  std::vector<AttrField> f = norm_fields();
  f.push_back(CUDNNFE_ATTR(NormAttrs, momentum, "momentum"));
  return f;
}

std::vector<AttrField> softmax_fields() {
  return {CUDNNFE_ATTR(SoftmaxAttrs, generate_stats, "generate_stats")};
}

std::vector<AttrField> reshape_fields() {
  return {CUDNNFE_ATTR(ReshapeAttrs, dims, "dims")};
}

std::vector<AttrField> transpose_fields() {
  return {CUDNNFE_ATTR(TransposeAttrs, permutation, "permutation")};
}

std::vector<AttrField> slice_fields() {
  return {
      CUDNNFE_ATTR(SliceAttrs, start, "start"),
      CUDNNFE_ATTR(SliceAttrs, end, "end"),
      CUDNNFE_ATTR(SliceAttrs, step, "step"),
  };
}

std::vector<AttrField> concat_fields() {
  return {CUDNNFE_ATTR(ConcatAttrs, axis, "axis").in_range(0, CUDNNFE_MAX_DIMS - 1)};
}

std::vector<AttrField> resample_fields() {
  return {
      CUDNNFE_ATTR(ResampleAttrs, mode, "mode").with_codec(kResampleModeCodec).described(),
      CUDNNFE_ATTR(ResampleAttrs, padding_mode, "padding_mode").with_codec(kPaddingModeCodec),
      CUDNNFE_ATTR(ResampleAttrs, spatial_dims, "spatial_dims")
          .in_range(0, CUDNNFE_MAX_SPATIAL_DIMS),
      CUDNNFE_ATTR(ResampleAttrs, window, "window").with_count(resample_spatial_count),
      CUDNNFE_ATTR(ResampleAttrs, stride, "stride").with_count(resample_spatial_count),
      CUDNNFE_ATTR(ResampleAttrs, pre_padding, "pre_padding").with_count(resample_spatial_count),
      CUDNNFE_ATTR(ResampleAttrs, post_padding, "post_padding").with_count(resample_spatial_count),
      CUDNNFE_ATTR(ResampleAttrs, scale, "scale").with_count(resample_spatial_count),
      CUDNNFE_ATTR(ResampleAttrs, generate_index, "generate_index"),
  };
}

std::vector<AttrField> rng_fields() {
  return {
      CUDNNFE_ATTR(RngAttrs, distribution, "distribution")
          .with_codec(kRngDistributionCodec)
          .described(),
      CUDNNFE_ATTR(RngAttrs, bernoulli_probability, "bernoulli_probability"),
      CUDNNFE_ATTR(RngAttrs, uniform_min, "uniform_min"),
      CUDNNFE_ATTR(RngAttrs, uniform_max, "uniform_max"),
      CUDNNFE_ATTR(RngAttrs, normal_mean, "normal_mean"),
      CUDNNFE_ATTR(RngAttrs, normal_stddev, "normal_stddev"),
      CUDNNFE_ATTR(RngAttrs, seed, "seed"),
      CUDNNFE_ATTR(RngAttrs, dims, "dims"),
  };
}

std::vector<AttrField> sdpa_fp8_fields() {
  return {
      CUDNNFE_ATTR(SdpaFp8Attrs, attn_scale, "attn_scale"),
      CUDNNFE_ATTR(SdpaFp8Attrs, generate_stats, "generate_stats"),
      CUDNNFE_ATTR(SdpaFp8Attrs, causal_mask, "causal_mask"),
  };
}

std::vector<AttrField> sdpa_fp8_backward_fields() {
  return {
      CUDNNFE_ATTR(SdpaFp8BackwardAttrs, attn_scale, "attn_scale"),
      CUDNNFE_ATTR(SdpaFp8BackwardAttrs, causal_mask, "causal_mask"),
  };
}

std::vector<AttrField> block_scale_dequantize_fields() {
  return {
      CUDNNFE_ATTR(BlockScaleAttrs, block_size, "block_size").in_range(1, INT32_MAX),
      CUDNNFE_ATTR(BlockScaleAttrs, axis, "axis").in_range(-CUDNNFE_MAX_DIMS, CUDNNFE_MAX_DIMS - 1),
  };
}

// Quantize alone has the transpose and y's type.
std::vector<AttrField> block_scale_quantize_fields() {
  std::vector<AttrField> f = block_scale_dequantize_fields();
  f.push_back(CUDNNFE_ATTR(BlockScaleAttrs, transpose, "transpose"));
  f.push_back(CUDNNFE_ATTR(BlockScaleAttrs, y_dtype, "y_data_type")
                  .with_codec(kDtypeCodec)
                  .satisfying(is_fp8_dtype, "is not FP8_E4M3 or FP8_E5M2"));
  return f;
}

const std::vector<std::string> kNormBackwardInputs = {"dy", "x", "scale", "mean", "inv_variance"};
const std::vector<std::string> kNormGradients = {"dx", "dscale", "dbias"};
const std::vector<std::string> kNormStatistics = {"y", "mean", "inv_variance"};

// One row per OpKind, in enum order (checked by op_schema()).
std::vector<OpSchema> rows() {
  return {
      {OpKind::kConvFprop,
       "conv_fprop",
       {"image", "weight"},
       {"y"},
       make<ConvAttrs>,
       conv_fields()},
      {OpKind::kConvDgrad,
       "conv_dgrad",
       {"loss", "weight"},
       {"dx"},
       make<ConvAttrs>,
       conv_fields()},
      {OpKind::kConvWgrad, "conv_wgrad", {"image", "loss"}, {"dw"}, make<ConvAttrs>, conv_fields()},
      {OpKind::kMatmul, "matmul", {"a", "b"}, {"c"}, make<MatmulAttrs>, {}},
      {OpKind::kPointwise,
       "pointwise",
       {"in0", "in1", "in2"},
       {"out"},
       make<PointwiseAttrs>,
       pointwise_fields()},
      {OpKind::kReduction, "reduction", {"x"}, {"y"}, make<ReductionAttrs>, reduction_fields()},
      // Attention ports after bias: ops/attention.h (AttentionPorts).
      {OpKind::kSdpa,
       "sdpa",
       {"q", "k", "v", "bias", "attn_scale", "seq_len_q", "seq_len_kv", "dropout_seed",
        "dropout_offset", "dropout_mask", "dropout_scale", "ragged_offset_q", "ragged_offset_k",
        "ragged_offset_v", "ragged_offset_o", "page_table_k", "page_table_v"},
       {"O", "stats"},
       make<SdpaAttrs>,
       sdpa_fields()},
      {OpKind::kSdpaBackward,
       "sdpa_backward",
       {"q", "k", "v", "o", "dO", "stats", "bias", "attn_scale", "seq_len_q", "seq_len_kv",
        "dropout_seed", "dropout_offset", "dropout_mask", "dropout_scale", "dropout_scale_inv",
        "ragged_offset_q", "ragged_offset_k", "ragged_offset_v", "ragged_offset_o"},
       {"dQ", "dK", "dV", "dBias"},
       make<SdpaBackwardAttrs>,
       sdpa_backward_fields()},
      {OpKind::kLayerNorm,
       "layernorm",
       {"x", "scale", "bias"},
       kNormStatistics,
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kRmsNorm,
       "rmsnorm",
       {"x", "scale", "bias"},
       {"y", "inv_rms"},
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kLayerNormBackward, "layernorm_backward", kNormBackwardInputs, kNormGradients,
       make<NormAttrs>, norm_fields()},
      {OpKind::kRmsNormBackward,
       "rmsnorm_backward",
       {"dy", "x", "scale", "inv_rms"},
       kNormGradients,
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kSoftmax, "softmax", {"x"}, {"y", "stats"}, make<SoftmaxAttrs>, softmax_fields()},
      {OpKind::kReshape, "reshape", {"x"}, {"y"}, make<ReshapeAttrs>, reshape_fields()},
      {OpKind::kTranspose, "transpose", {"x"}, {"y"}, make<TransposeAttrs>, transpose_fields()},
      {OpKind::kSlice, "slice", {"x"}, {"y"}, make<SliceAttrs>, slice_fields()},
      {OpKind::kConcatenate,
       "concatenate",
       {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13",
        "x14", "x15"},
       {"y"},
       make<ConcatAttrs>,
       concat_fields()},
      {OpKind::kResample,
       "resample",
       {"x"},
       {"y", "index"},
       make<ResampleAttrs>,
       resample_fields()},
      {OpKind::kRng, "rng", {"seed", "offset"}, {"y"}, make<RngAttrs>, rng_fields()},
      {OpKind::kBatchNorm,
       "batchnorm",
       {"x", "scale", "bias", "prev_running_mean", "prev_running_var"},
       {"y", "mean", "inv_variance", "next_running_mean", "next_running_var"},
       make<NormAttrs>,
       batchnorm_fields()},
      {OpKind::kBatchNormInference,
       "batchnorm_inference",
       {"x", "scale", "bias", "mean", "inv_variance"},
       {"y"},
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kBatchNormBackward, "batchnorm_backward", kNormBackwardInputs, kNormGradients,
       make<NormAttrs>, norm_fields()},
      {OpKind::kInstanceNorm,
       "instancenorm",
       {"x", "scale", "bias"},
       kNormStatistics,
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kInstanceNormBackward, "instancenorm_backward", kNormBackwardInputs, kNormGradients,
       make<NormAttrs>, norm_fields()},
      {OpKind::kAdaLayerNorm,
       "adalayernorm",
       {"x", "scale", "bias"},
       kNormStatistics,
       make<NormAttrs>,
       norm_fields()},
      {OpKind::kAdaLayerNormBackward, "adalayernorm_backward", kNormBackwardInputs, kNormGradients,
       make<NormAttrs>, norm_fields()},
      {OpKind::kSdpaFp8,
       "sdpa_fp8",
       {"q", "k", "v", "descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"},
       {"O", "stats", "amax_s", "amax_o"},
       make<SdpaFp8Attrs>,
       sdpa_fp8_fields()},
      {OpKind::kSdpaFp8Backward,
       "sdpa_fp8_backward",
       {"q", "k", "v", "o", "dO", "stats", "descale_q", "descale_k", "descale_v", "descale_o",
        "descale_dO", "descale_s", "descale_dP", "scale_s", "scale_dQ", "scale_dK", "scale_dV",
        "scale_dP"},
       {"dQ", "dK", "dV", "amax_dQ", "amax_dK", "amax_dV", "amax_dP"},
       make<SdpaFp8BackwardAttrs>,
       sdpa_fp8_backward_fields()},
      {OpKind::kBlockScaleQuantize,
       "block_scale_quantize",
       {"x"},
       {"y", "scale"},
       make<BlockScaleAttrs>,
       block_scale_quantize_fields()},
      {OpKind::kBlockScaleDequantize,
       "block_scale_dequantize",
       {"x", "scale"},
       {"y"},
       make<BlockScaleAttrs>,
       block_scale_dequantize_fields()},
  };
}

const std::vector<OpSchema> &table() {
  static const std::vector<OpSchema> t = [] {
    std::vector<OpSchema> r = rows();
    if (r.size() != kOpKindCount) fail(CUDNNFE_STATUS_INTERNAL, "op schema: rows are missing");
    for (size_t i = 0; i < r.size(); ++i)
      if (static_cast<size_t>(r[i].kind) != i)
        fail(CUDNNFE_STATUS_INTERNAL, "op schema: row ", i, " is out of order");
    return r;
  }();
  return t;
}

}  // namespace

const OpSchema &op_schema(OpKind kind) {
  return table().at(static_cast<size_t>(kind));
}

void *attrs_address(OpAttrs &attrs) {
  return std::visit([](auto &a) -> void * { return &a; }, attrs);
}

const void *attrs_address(const OpAttrs &attrs) {
  return std::visit([](const auto &a) -> const void * { return &a; }, attrs);
}

int64_t AttrField::get_int(const void *attrs) const {
  const void *p = get(const_cast<void *>(attrs));
  switch (type) {
    case FieldType::kBool: return *static_cast<const bool *>(p);
    case FieldType::kInt32: return *static_cast<const int32_t *>(p);
    case FieldType::kInt64: return *static_cast<const int64_t *>(p);
    case FieldType::kUint32: return *static_cast<const uint32_t *>(p);
    default: fail(CUDNNFE_STATUS_INTERNAL, "attribute ", name, " is not an integer");
  }
}

void AttrField::set_int(void *attrs, int64_t value) const {
  void *p = get(attrs);
  switch (type) {
    case FieldType::kBool: *static_cast<bool *>(p) = value != 0; return;
    case FieldType::kInt32: *static_cast<int32_t *>(p) = static_cast<int32_t>(value); return;
    case FieldType::kInt64: *static_cast<int64_t *>(p) = value; return;
    case FieldType::kUint32: *static_cast<uint32_t *>(p) = static_cast<uint32_t>(value); return;
    default: fail(CUDNNFE_STATUS_INTERNAL, "attribute ", name, " is not an integer");
  }
}

const char *op_kind_name(OpKind kind) {
  return op_schema(kind).name;
}

bool op_kind_from_name(const std::string &name, OpKind *kind) {
  for (const OpSchema &s : table()) {
    if (name == s.name) {
      *kind = s.kind;
      return true;
    }
  }
  return false;
}

const std::vector<std::string> &input_port_names(OpKind kind) {
  return op_schema(kind).inputs;
}

const std::vector<std::string> &output_port_names(OpKind kind) {
  return op_schema(kind).outputs;
}

}  // namespace cudnnfe
