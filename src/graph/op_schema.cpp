// The op kinds' rows: name, ports and attribute fields (graph/op_schema.h),
// expanded from graph/op_list.def. Adding an op adds its entry there and,
// with attributes, its field list here; its rules, CPU reference and
// lowering get one row each in their own layer's table.
#include "graph/op_schema.h"

#include <cstring>

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
      CUDNNFE_ATTR_C(PointwiseAttrs, relu_lower_clip, "relu_lower_clip",
                     cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, relu_upper_clip, "relu_upper_clip",
                     cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, relu_lower_clip_slope, "relu_lower_clip_slope",
                     cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, elu_alpha, "elu_alpha", cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, softplus_beta, "softplus_beta", cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, swish_beta, "swish_beta", cudnnfe_pointwise_options_t),
      CUDNNFE_ATTR_C(PointwiseAttrs, axis, "axis", cudnnfe_pointwise_options_t),
  };
}

std::vector<AttrField> reduction_fields() {
  return {
      CUDNNFE_ATTR(ReductionAttrs, mode, "mode").with_codec(kReductionModeCodec).described(),
      CUDNNFE_ATTR_C(ReductionAttrs, axes_mask, "axes_mask", cudnnfe_reduction_options_t),
      CUDNNFE_ATTR_C(ReductionAttrs, deterministic, "deterministic", cudnnfe_reduction_options_t),
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
  f.push_back(CUDNNFE_ATTR(SdpaAttrs, implementation, "implementation")
                  .with_codec(kAttentionImplementationCodec)
                  .as_optional());
  f.push_back(CUDNNFE_ATTR(SdpaAttrs, unfuse_fma, "unfuse_fma").as_optional());
  f.push_back(CUDNNFE_ATTR(SdpaAttrs, generate_score_max, "generate_score_max").as_optional());
  f.push_back(
      CUDNNFE_ATTR(SdpaAttrs, generate_score_sum_exp, "generate_score_sum_exp").as_optional());
  f.push_back(CUDNNFE_ATTR(SdpaAttrs, generate_rng_dump, "generate_rng_dump").as_optional());
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
  f.push_back(CUDNNFE_ATTR(SdpaBackwardAttrs, generate_dsink, "generate_dsink").as_optional());
  f.push_back(
      CUDNNFE_ATTR(SdpaBackwardAttrs, max_total_seq_len_q, "max_total_seq_len_q").as_optional());
  f.push_back(
      CUDNNFE_ATTR(SdpaBackwardAttrs, max_total_seq_len_kv, "max_total_seq_len_kv").as_optional());
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
  return {
      CUDNNFE_ATTR_C(SoftmaxAttrs, generate_stats, "generate_stats", cudnnfe_softmax_options_t)};
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
      CUDNNFE_ATTR_C(ResampleAttrs, mode, "mode", cudnnfe_resample_options_t)
          .with_codec(kResampleModeCodec)
          .described(),
      CUDNNFE_ATTR_C(ResampleAttrs, padding_mode, "padding_mode", cudnnfe_resample_options_t)
          .with_codec(kPaddingModeCodec),
      CUDNNFE_ATTR_C(ResampleAttrs, spatial_dims, "spatial_dims", cudnnfe_resample_options_t)
          .in_range(0, CUDNNFE_MAX_SPATIAL_DIMS),
      CUDNNFE_ATTR_C(ResampleAttrs, window, "window", cudnnfe_resample_options_t)
          .with_count(resample_spatial_count),
      CUDNNFE_ATTR_C(ResampleAttrs, stride, "stride", cudnnfe_resample_options_t)
          .with_count(resample_spatial_count),
      CUDNNFE_ATTR_C(ResampleAttrs, pre_padding, "pre_padding", cudnnfe_resample_options_t)
          .with_count(resample_spatial_count),
      CUDNNFE_ATTR_C(ResampleAttrs, post_padding, "post_padding", cudnnfe_resample_options_t)
          .with_count(resample_spatial_count),
      CUDNNFE_ATTR_C(ResampleAttrs, scale, "scale", cudnnfe_resample_options_t)
          .with_count(resample_spatial_count),
      CUDNNFE_ATTR_C(ResampleAttrs, generate_index, "generate_index", cudnnfe_resample_options_t),
  };
}

std::vector<AttrField> rng_fields() {
  return {
      CUDNNFE_ATTR_C(RngAttrs, distribution, "distribution", cudnnfe_rng_options_t)
          .with_codec(kRngDistributionCodec)
          .described(),
      CUDNNFE_ATTR_C(RngAttrs, bernoulli_probability, "bernoulli_probability",
                     cudnnfe_rng_options_t),
      CUDNNFE_ATTR_C(RngAttrs, uniform_min, "uniform_min", cudnnfe_rng_options_t),
      CUDNNFE_ATTR_C(RngAttrs, uniform_max, "uniform_max", cudnnfe_rng_options_t),
      CUDNNFE_ATTR_C(RngAttrs, normal_mean, "normal_mean", cudnnfe_rng_options_t),
      CUDNNFE_ATTR_C(RngAttrs, normal_stddev, "normal_stddev", cudnnfe_rng_options_t),
      CUDNNFE_ATTR_C(RngAttrs, seed, "seed", cudnnfe_rng_options_t),
      CUDNNFE_ATTR(RngAttrs, dims, "dims"),
  };
}

// FP8 attention's diagonal band: sdpa's JSON keys, and the same-named
// fields of the C options struct C (appended after the first release).
template <class S, class C>
void add_fp8_band_options(std::vector<AttrField> &f) {
  f.push_back(CUDNNFE_ATTR(S, options.window_left, "window_left")
                  .as_optional()
                  .from_c(offsetof(C, window_left), c_type<decltype(C::window_left)>()));
  f.push_back(CUDNNFE_ATTR(S, options.window_right, "window_right")
                  .as_optional()
                  .from_c(offsetof(C, window_right), c_type<decltype(C::window_right)>()));
  f.push_back(
      CUDNNFE_ATTR(S, options.diagonal_alignment, "diagonal_alignment")
          .with_codec(kDiagonalAlignmentCodec)
          .as_optional()
          .from_c(offsetof(C, diagonal_alignment), c_type<decltype(C::diagonal_alignment)>()));
}

// FP8 attention's padding flag and dropout probability (both kinds), from
// the same-named fields of C.
template <class S, class C>
void add_fp8_padding_dropout_options(std::vector<AttrField> &f) {
  f.push_back(CUDNNFE_ATTR(S, options.padding_mask, "padding_mask")
                  .as_optional()
                  .from_c(offsetof(C, padding_mask), c_type<decltype(C::padding_mask)>()));
  f.push_back(
      CUDNNFE_ATTR(S, options.dropout_probability, "dropout_probability")
          .as_optional()
          .from_c(offsetof(C, dropout_probability), c_type<decltype(C::dropout_probability)>()));
}

std::vector<AttrField> sdpa_fp8_fields() {
  std::vector<AttrField> f = {
      CUDNNFE_ATTR_C(SdpaFp8Attrs, attn_scale, "attn_scale", cudnnfe_sdpa_fp8_options_t),
      CUDNNFE_ATTR_C(SdpaFp8Attrs, generate_stats, "generate_stats", cudnnfe_sdpa_fp8_options_t),
      CUDNNFE_ATTR_C(SdpaFp8Attrs, causal_mask, "causal_mask", cudnnfe_sdpa_fp8_options_t),
  };
  add_fp8_band_options<SdpaFp8Attrs, cudnnfe_sdpa_fp8_options_t>(f);
  using C = cudnnfe_sdpa_fp8_options_t;
  add_fp8_padding_dropout_options<SdpaFp8Attrs, C>(f);
  f.push_back(CUDNNFE_ATTR(SdpaFp8Attrs, options.alibi_mask, "alibi_mask")
                  .as_optional()
                  .from_c(offsetof(C, alibi_mask), c_type<decltype(C::alibi_mask)>()));
  f.push_back(CUDNNFE_ATTR(SdpaFp8Attrs, options.max_seq_len_kv, "max_seq_len_kv")
                  .as_optional()
                  .from_c(offsetof(C, max_seq_len_kv), c_type<decltype(C::max_seq_len_kv)>()));
  return f;
}

std::vector<AttrField> sdpa_fp8_backward_fields() {
  std::vector<AttrField> f = {
      CUDNNFE_ATTR_C(SdpaFp8BackwardAttrs, attn_scale, "attn_scale",
                     cudnnfe_sdpa_fp8_backward_options_t),
      CUDNNFE_ATTR_C(SdpaFp8BackwardAttrs, causal_mask, "causal_mask",
                     cudnnfe_sdpa_fp8_backward_options_t),
  };
  add_fp8_band_options<SdpaFp8BackwardAttrs, cudnnfe_sdpa_fp8_backward_options_t>(f);
  add_fp8_padding_dropout_options<SdpaFp8BackwardAttrs, cudnnfe_sdpa_fp8_backward_options_t>(f);
  return f;
}

std::vector<AttrField> block_scale_dequantize_fields() {
  return {
      CUDNNFE_ATTR_C(BlockScaleAttrs, block_size, "block_size", cudnnfe_block_scale_options_t)
          .in_range(1, INT32_MAX),
      CUDNNFE_ATTR_C(BlockScaleAttrs, axis, "axis", cudnnfe_block_scale_options_t)
          .in_range(-CUDNNFE_MAX_DIMS, CUDNNFE_MAX_DIMS - 1),
  };
}

// Quantize alone has the transpose and y's type.
std::vector<AttrField> block_scale_quantize_fields() {
  std::vector<AttrField> f = block_scale_dequantize_fields();
  f.push_back(
      CUDNNFE_ATTR_C(BlockScaleAttrs, transpose, "transpose", cudnnfe_block_scale_options_t));
  f.push_back(CUDNNFE_ATTR_C(BlockScaleAttrs, y_dtype, "y_data_type", cudnnfe_block_scale_options_t)
                  .with_codec(kDtypeCodec)
                  .satisfying(is_fp8_dtype, "is not FP8_E4M3 or FP8_E5M2"));
  return f;
}

std::vector<AttrField> moe_grouped_matmul_fields() {
  return {
      CUDNNFE_ATTR_C(MoeGroupedMatmulAttrs, mode, "mode", cudnnfe_moe_grouped_matmul_options_t)
          .with_codec(kMoeGroupedMatmulModeCodec)
          .described(),
      CUDNNFE_ATTR_C(MoeGroupedMatmulAttrs, top_k, "top_k", cudnnfe_moe_grouped_matmul_options_t)
          .in_range(1, INT32_MAX),
  };
}

std::vector<AttrField> no_fields() {
  return {};
}

// One row per OpKind, in enum order: graph/op_list.def's entries.
std::vector<OpSchema> rows() {
#define IN(port, name) name,
#define OPT_IN(port, name) name,
#define OUT(port, name) name,
#define OPT_OUT(port, name) name,
#define CUDNNFE_OP(id, name, attrs, fields, family, inputs, outputs) \
  {OpKind::k##id, name, {inputs}, {outputs}, make<attrs>, fields()},
  return {
#include "graph/op_list.def"
  };
#undef CUDNNFE_OP
#undef IN
#undef OPT_IN
#undef OUT
#undef OPT_OUT
}

// A spatial field knows its JSON count; a C member holds a double exactly
// for a double field and three int64_t exactly for a spatial one; any other
// field takes an integer.
bool field_is_whole(const AttrField &f) {
  if (f.type == FieldType::kSpatial && !f.count) return false;
  if (f.c_type == CType::kNone) return true;
  if ((f.c_type == CType::kDouble) != (f.type == FieldType::kDouble)) return false;
  if ((f.c_type == CType::kInt64x3) != (f.type == FieldType::kSpatial)) return false;
  return f.type != FieldType::kIntList;
}

const std::vector<OpSchema> &table() {
  static const std::vector<OpSchema> t = [] {
    std::vector<OpSchema> r = rows();
    if (r.size() != kOpKindCount) fail(CUDNNFE_STATUS_INTERNAL, "op schema: rows are missing");
    for (size_t i = 0; i < r.size(); ++i) {
      if (static_cast<size_t>(r[i].kind) != i)
        fail(CUDNNFE_STATUS_INTERNAL, "op schema: row ", i, " is out of order");
      for (const AttrField &f : r[i].fields)
        if (!field_is_whole(f))
          fail(CUDNNFE_STATUS_INTERNAL, "op schema: ", r[i].name, ".", f.name,
               " lacks its spatial count or does not fit its C member");
    }
    return r;
  }();
  return t;
}

template <class T>
T load(const void *p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

template <class T>
void store(void *p, T value) {
  std::memcpy(p, &value, sizeof(T));
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

void read_c_options(OpKind kind, const void *c_options, void *attrs) {
  for (const AttrField &f : op_schema(kind).fields) {
    const char *c = static_cast<const char *>(c_options) + f.c_offset;
    switch (f.c_type) {
      case CType::kNone: break;
      case CType::kInt32: f.set_int(attrs, load<int32_t>(c)); break;
      case CType::kUint32: f.set_int(attrs, load<uint32_t>(c)); break;
      case CType::kInt64: f.set_int(attrs, load<int64_t>(c)); break;
      case CType::kDouble: *static_cast<double *>(f.get(attrs)) = load<double>(c); break;
      case CType::kInt64x3: std::memcpy(f.get(attrs), c, 3 * sizeof(int64_t)); break;
    }
  }
}

void write_c_defaults(OpKind kind, void *c_options) {
  OpAttrs defaults = op_schema(kind).make_attrs();
  void *attrs = attrs_address(defaults);
  for (const AttrField &f : op_schema(kind).fields) {
    char *c = static_cast<char *>(c_options) + f.c_offset;
    switch (f.c_type) {
      case CType::kNone: break;
      case CType::kInt32: store(c, static_cast<int32_t>(f.get_int(attrs))); break;
      case CType::kUint32: store(c, static_cast<uint32_t>(f.get_int(attrs))); break;
      case CType::kInt64: store(c, f.get_int(attrs)); break;
      case CType::kDouble: store(c, *static_cast<const double *>(f.get(attrs))); break;
      case CType::kInt64x3: std::memcpy(c, f.get(attrs), 3 * sizeof(int64_t)); break;
    }
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
