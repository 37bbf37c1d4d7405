#include "graph/node.h"

namespace cudnnfe {
namespace {

struct KindInfo {
  OpKind kind;
  const char *name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

const std::vector<KindInfo> &kinds() {
  static const std::vector<KindInfo> table = {
      {OpKind::kConvFprop, "conv_fprop", {"image", "weight"}, {"y"}},
      {OpKind::kConvDgrad, "conv_dgrad", {"loss", "weight"}, {"dx"}},
      {OpKind::kConvWgrad, "conv_wgrad", {"image", "loss"}, {"dw"}},
      {OpKind::kMatmul, "matmul", {"a", "b"}, {"c"}},
      {OpKind::kPointwise, "pointwise", {"in0", "in1", "in2"}, {"out"}},
      {OpKind::kReduction, "reduction", {"x"}, {"y"}},
      // Attention ports after bias: ops/attention.h (AttentionPorts).
      {OpKind::kSdpa,
       "sdpa",
       {"q", "k", "v", "bias", "attn_scale", "seq_len_q", "seq_len_kv", "dropout_seed",
        "dropout_offset", "dropout_mask", "dropout_scale", "ragged_offset_q", "ragged_offset_k",
        "ragged_offset_v", "ragged_offset_o", "page_table_k", "page_table_v"},
       {"O", "stats"}},
      {OpKind::kSdpaBackward,
       "sdpa_backward",
       {"q", "k", "v", "o", "dO", "stats", "bias", "attn_scale", "seq_len_q", "seq_len_kv",
        "dropout_seed", "dropout_offset", "dropout_mask", "dropout_scale", "dropout_scale_inv",
        "ragged_offset_q", "ragged_offset_k", "ragged_offset_v", "ragged_offset_o"},
       {"dQ", "dK", "dV", "dBias"}},
      {OpKind::kLayerNorm, "layernorm", {"x", "scale", "bias"}, {"y", "mean", "inv_variance"}},
      {OpKind::kRmsNorm, "rmsnorm", {"x", "scale", "bias"}, {"y", "inv_rms"}},
      {OpKind::kLayerNormBackward,
       "layernorm_backward",
       {"dy", "x", "scale", "mean", "inv_variance"},
       {"dx", "dscale", "dbias"}},
      {OpKind::kRmsNormBackward,
       "rmsnorm_backward",
       {"dy", "x", "scale", "inv_rms"},
       {"dx", "dscale", "dbias"}},
      {OpKind::kSoftmax, "softmax", {"x"}, {"y", "stats"}},
      {OpKind::kReshape, "reshape", {"x"}, {"y"}},
      {OpKind::kTranspose, "transpose", {"x"}, {"y"}},
      {OpKind::kSlice, "slice", {"x"}, {"y"}},
      {OpKind::kConcatenate,
       "concatenate",
       {"x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12", "x13",
        "x14", "x15"},
       {"y"}},
      {OpKind::kResample, "resample", {"x"}, {"y", "index"}},
      {OpKind::kRng, "rng", {"seed", "offset"}, {"y"}},
      {OpKind::kBlockScaleQuantize, "block_scale_quantize", {"x"}, {"y", "scale"}},
      {OpKind::kBlockScaleDequantize, "block_scale_dequantize", {"x", "scale"}, {"y"}},
      {OpKind::kBatchNorm,
       "batchnorm",
       {"x", "scale", "bias", "prev_running_mean", "prev_running_var"},
       {"y", "mean", "inv_variance", "next_running_mean", "next_running_var"}},
      {OpKind::kBatchNormInference,
       "batchnorm_inference",
       {"x", "scale", "bias", "mean", "inv_variance"},
       {"y"}},
      {OpKind::kBatchNormBackward,
       "batchnorm_backward",
       {"dy", "x", "scale", "mean", "inv_variance"},
       {"dx", "dscale", "dbias"}},
      {OpKind::kInstanceNorm,
       "instancenorm",
       {"x", "scale", "bias"},
       {"y", "mean", "inv_variance"}},
      {OpKind::kInstanceNormBackward,
       "instancenorm_backward",
       {"dy", "x", "scale", "mean", "inv_variance"},
       {"dx", "dscale", "dbias"}},
      {OpKind::kAdaLayerNorm,
       "adalayernorm",
       {"x", "scale", "bias"},
       {"y", "mean", "inv_variance"}},
      {OpKind::kAdaLayerNormBackward,
       "adalayernorm_backward",
       {"dy", "x", "scale", "mean", "inv_variance"},
       {"dx", "dscale", "dbias"}},
      {OpKind::kSdpaFp8,
       "sdpa_fp8",
       {"q", "k", "v", "descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"},
       {"O", "stats", "amax_s", "amax_o"}},
      {OpKind::kSdpaFp8Backward,
       "sdpa_fp8_backward",
       {"q", "k", "v", "o", "dO", "stats", "descale_q", "descale_k", "descale_v", "descale_o",
        "descale_dO", "descale_s", "descale_dP", "scale_s", "scale_dQ", "scale_dK", "scale_dV",
        "scale_dP"},
       {"dQ", "dK", "dV", "amax_dQ", "amax_dK", "amax_dV", "amax_dP"}},
  };
  return table;
}

const KindInfo &info(OpKind kind) {
  for (const KindInfo &k : kinds())
    if (k.kind == kind) return k;
  return kinds().front();
}

struct PointwiseInfo {
  cudnnfe_pointwise_mode_t mode;
  const char *name;
  int arity;
};

constexpr PointwiseInfo kPointwise[] = {
    {CUDNNFE_POINTWISE_ADD, "ADD", 2},
    {CUDNNFE_POINTWISE_ADD_SQUARE, "ADD_SQUARE", 2},
    {CUDNNFE_POINTWISE_SUB, "SUB", 2},
    {CUDNNFE_POINTWISE_MUL, "MUL", 2},
    {CUDNNFE_POINTWISE_DIV, "DIV", 2},
    {CUDNNFE_POINTWISE_MAX, "MAX", 2},
    {CUDNNFE_POINTWISE_MIN, "MIN", 2},
    {CUDNNFE_POINTWISE_MOD, "MOD", 2},
    {CUDNNFE_POINTWISE_POW, "POW", 2},
    {CUDNNFE_POINTWISE_ATAN2, "ATAN2", 2},
    {CUDNNFE_POINTWISE_NEG, "NEG", 1},
    {CUDNNFE_POINTWISE_ABS, "ABS", 1},
    {CUDNNFE_POINTWISE_CEIL, "CEIL", 1},
    {CUDNNFE_POINTWISE_FLOOR, "FLOOR", 1},
    {CUDNNFE_POINTWISE_RECIPROCAL, "RECIPROCAL", 1},
    {CUDNNFE_POINTWISE_SQRT, "SQRT", 1},
    {CUDNNFE_POINTWISE_RSQRT, "RSQRT", 1},
    {CUDNNFE_POINTWISE_EXP, "EXP", 1},
    {CUDNNFE_POINTWISE_LOG, "LOG", 1},
    {CUDNNFE_POINTWISE_SIN, "SIN", 1},
    {CUDNNFE_POINTWISE_COS, "COS", 1},
    {CUDNNFE_POINTWISE_TAN, "TAN", 1},
    {CUDNNFE_POINTWISE_ERF, "ERF", 1},
    {CUDNNFE_POINTWISE_IDENTITY, "IDENTITY", 1},
    {CUDNNFE_POINTWISE_RELU_FWD, "RELU_FWD", 1},
    {CUDNNFE_POINTWISE_TANH_FWD, "TANH_FWD", 1},
    {CUDNNFE_POINTWISE_SIGMOID_FWD, "SIGMOID_FWD", 1},
    {CUDNNFE_POINTWISE_ELU_FWD, "ELU_FWD", 1},
    {CUDNNFE_POINTWISE_GELU_FWD, "GELU_FWD", 1},
    {CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD, "GELU_APPROX_TANH_FWD", 1},
    {CUDNNFE_POINTWISE_SOFTPLUS_FWD, "SOFTPLUS_FWD", 1},
    {CUDNNFE_POINTWISE_SWISH_FWD, "SWISH_FWD", 1},
    {CUDNNFE_POINTWISE_RELU_BWD, "RELU_BWD", 2},
    {CUDNNFE_POINTWISE_TANH_BWD, "TANH_BWD", 2},
    {CUDNNFE_POINTWISE_SIGMOID_BWD, "SIGMOID_BWD", 2},
    {CUDNNFE_POINTWISE_ELU_BWD, "ELU_BWD", 2},
    {CUDNNFE_POINTWISE_GELU_BWD, "GELU_BWD", 2},
    {CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD, "GELU_APPROX_TANH_BWD", 2},
    {CUDNNFE_POINTWISE_SOFTPLUS_BWD, "SOFTPLUS_BWD", 2},
    {CUDNNFE_POINTWISE_SWISH_BWD, "SWISH_BWD", 2},
    {CUDNNFE_POINTWISE_CMP_EQ, "CMP_EQ", 2},
    {CUDNNFE_POINTWISE_CMP_NEQ, "CMP_NEQ", 2},
    {CUDNNFE_POINTWISE_CMP_GT, "CMP_GT", 2},
    {CUDNNFE_POINTWISE_CMP_GE, "CMP_GE", 2},
    {CUDNNFE_POINTWISE_CMP_LT, "CMP_LT", 2},
    {CUDNNFE_POINTWISE_CMP_LE, "CMP_LE", 2},
    {CUDNNFE_POINTWISE_LOGICAL_AND, "LOGICAL_AND", 2},
    {CUDNNFE_POINTWISE_LOGICAL_OR, "LOGICAL_OR", 2},
    {CUDNNFE_POINTWISE_LOGICAL_NOT, "LOGICAL_NOT", 1},
    {CUDNNFE_POINTWISE_BINARY_SELECT, "BINARY_SELECT", 3},
    {CUDNNFE_POINTWISE_GEN_INDEX, "GEN_INDEX", 1},
};

constexpr struct {
  cudnnfe_reduction_mode_t mode;
  const char *name;
} kReductions[] = {
    {CUDNNFE_REDUCTION_ADD, "ADD"},
    {CUDNNFE_REDUCTION_MUL, "MUL"},
    {CUDNNFE_REDUCTION_MIN, "MIN"},
    {CUDNNFE_REDUCTION_MAX, "MAX"},
    {CUDNNFE_REDUCTION_AMAX, "AMAX"},
    {CUDNNFE_REDUCTION_AVG, "AVG"},
    {CUDNNFE_REDUCTION_NORM1, "NORM1"},
    {CUDNNFE_REDUCTION_NORM2, "NORM2"},
    {CUDNNFE_REDUCTION_MUL_NO_ZEROS, "MUL_NO_ZEROS"},
};

struct EnumName {
  int32_t value;
  const char *name;
};

constexpr EnumName kResampleModes[] = {
    {CUDNNFE_RESAMPLE_MAXPOOL, "MAXPOOL"},
    {CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING, "AVGPOOL_INCLUDE_PADDING"},
    {CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING, "AVGPOOL_EXCLUDE_PADDING"},
    {CUDNNFE_RESAMPLE_NEAREST, "NEAREST"},
    {CUDNNFE_RESAMPLE_BILINEAR, "BILINEAR"},
};

constexpr EnumName kPaddingModes[] = {
    {CUDNNFE_PADDING_AUTO, "AUTO"},
    {CUDNNFE_PADDING_ZERO, "ZERO"},
    {CUDNNFE_PADDING_NEG_INF, "NEG_INF"},
    {CUDNNFE_PADDING_EDGE, "EDGE"},
};

constexpr EnumName kRngDistributions[] = {
    {CUDNNFE_RNG_BERNOULLI, "BERNOULLI"},
    {CUDNNFE_RNG_UNIFORM, "UNIFORM"},
    {CUDNNFE_RNG_NORMAL, "NORMAL"},
};

template <size_t N>
const char *enum_name(const EnumName (&table)[N], int32_t value) {
  for (const EnumName &e : table)
    if (e.value == value) return e.name;
  return "UNKNOWN";
}

template <size_t N, class T>
bool enum_from_name(const EnumName (&table)[N], const std::string &name, T *value) {
  for (const EnumName &e : table) {
    if (name == e.name) {
      *value = e.value;
      return true;
    }
  }
  return false;
}

}  // namespace

const char *resample_mode_name(cudnnfe_resample_mode_t mode) {
  return enum_name(kResampleModes, mode);
}
bool resample_mode_from_name(const std::string &name, cudnnfe_resample_mode_t *mode) {
  return enum_from_name(kResampleModes, name, mode);
}
const char *padding_mode_name(cudnnfe_padding_mode_t mode) {
  return enum_name(kPaddingModes, mode);
}
bool padding_mode_from_name(const std::string &name, cudnnfe_padding_mode_t *mode) {
  return enum_from_name(kPaddingModes, name, mode);
}
const char *rng_distribution_name(cudnnfe_rng_distribution_t distribution) {
  return enum_name(kRngDistributions, distribution);
}
bool rng_distribution_from_name(const std::string &name, cudnnfe_rng_distribution_t *distribution) {
  return enum_from_name(kRngDistributions, name, distribution);
}

bool is_layout_op(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kTranspose || kind == OpKind::kSlice ||
         kind == OpKind::kConcatenate;
}

const char *op_kind_name(OpKind kind) {
  return info(kind).name;
}

bool op_kind_from_name(const std::string &name, OpKind *kind) {
  for (const KindInfo &k : kinds()) {
    if (name == k.name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

const std::vector<std::string> &input_port_names(OpKind kind) {
  return info(kind).inputs;
}
const std::vector<std::string> &output_port_names(OpKind kind) {
  return info(kind).outputs;
}

const char *pointwise_mode_name(cudnnfe_pointwise_mode_t mode) {
  for (const PointwiseInfo &p : kPointwise)
    if (p.mode == mode) return p.name;
  return "UNKNOWN";
}

bool pointwise_mode_from_name(const std::string &name, cudnnfe_pointwise_mode_t *mode) {
  for (const PointwiseInfo &p : kPointwise) {
    if (name == p.name) {
      *mode = p.mode;
      return true;
    }
  }
  return false;
}

int pointwise_arity(cudnnfe_pointwise_mode_t mode) {
  for (const PointwiseInfo &p : kPointwise)
    if (p.mode == mode) return p.arity;
  return 0;
}

const char *reduction_mode_name(cudnnfe_reduction_mode_t mode) {
  for (const auto &r : kReductions)
    if (r.mode == mode) return r.name;
  return "UNKNOWN";
}

bool reduction_mode_from_name(const std::string &name, cudnnfe_reduction_mode_t *mode) {
  for (const auto &r : kReductions) {
    if (name == r.name) {
      *mode = r.mode;
      return true;
    }
  }
  return false;
}

}  // namespace cudnnfe
