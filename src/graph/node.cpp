// The names of the enumerations that attributes use (pointwise and reduction
// modes, resample and padding modes, distributions, MoE routing modes) and
// their JSON codecs (graph/op_schema.h). Op kinds' names and ports are in
// graph/op_list.def.
#include "graph/node.h"

#include "core/dtype.h"
#include "graph/op_schema.h"

namespace cudnnfe {
namespace {

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

constexpr EnumName kMoeGroupedMatmulModes[] = {
    {CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE, "NONE"},
    {CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER, "GATHER"},
    {CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, "SCATTER"},
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
const char *moe_grouped_matmul_mode_name(cudnnfe_moe_grouped_matmul_mode_t mode) {
  return enum_name(kMoeGroupedMatmulModes, mode);
}
bool moe_grouped_matmul_mode_from_name(const std::string &name,
                                       cudnnfe_moe_grouped_matmul_mode_t *mode) {
  return enum_from_name(kMoeGroupedMatmulModes, name, mode);
}
bool moe_grouped_matmul_mode_is_valid(cudnnfe_moe_grouped_matmul_mode_t mode) {
  for (const EnumName &e : kMoeGroupedMatmulModes)
    if (e.value == mode) return true;
  return false;
}

bool is_layout_op(OpKind kind) {
  return kind == OpKind::kReshape || kind == OpKind::kTranspose || kind == OpKind::kSlice ||
         kind == OpKind::kConcatenate;
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

namespace {

// The two-valued enumerations: any value but the second reads as the first
// (as JSON has always written them).
const char *conv_mode_name(int32_t v) {
  return v == CUDNNFE_CONV_MODE_CONVOLUTION ? "CONVOLUTION" : "CROSS_CORRELATION";
}
bool conv_mode_from_name(const std::string &name, int32_t *v) {
  if (name == "CONVOLUTION") return *v = CUDNNFE_CONV_MODE_CONVOLUTION, true;
  if (name == "CROSS_CORRELATION") return *v = CUDNNFE_CONV_MODE_CROSS_CORRELATION, true;
  return false;
}
const char *norm_phase_name(int32_t v) {
  return v == CUDNNFE_NORM_PHASE_INFERENCE ? "INFERENCE" : "TRAINING";
}
bool norm_phase_from_name(const std::string &name, int32_t *v) {
  if (name == "TRAINING") return *v = CUDNNFE_NORM_PHASE_TRAINING, true;
  if (name == "INFERENCE") return *v = CUDNNFE_NORM_PHASE_INFERENCE, true;
  return false;
}
const char *diagonal_alignment_name(int32_t v) {
  return v == CUDNNFE_DIAGONAL_BOTTOM_RIGHT ? "BOTTOM_RIGHT" : "TOP_LEFT";
}
bool diagonal_alignment_from_name(const std::string &name, int32_t *v) {
  if (name == "TOP_LEFT") return *v = CUDNNFE_DIAGONAL_TOP_LEFT, true;
  if (name == "BOTTOM_RIGHT") return *v = CUDNNFE_DIAGONAL_BOTTOM_RIGHT, true;
  return false;
}
// cudnn-frontend's JSON names of AttentionImplementation_t.
const char *attention_implementation_name(int32_t v) {
  switch (v) {
    case CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO: return "AUTO";
    case CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE: return "COMPOSITE";
    case CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED: return "UNIFIED";
    default: return "UNKNOWN";
  }
}
bool attention_implementation_from_name(const std::string &name, int32_t *v) {
  for (int32_t i = CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO;
       i <= CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED; ++i)
    if (name == attention_implementation_name(i)) return *v = i, true;
  return false;
}

// The int32_t signatures that EnumCodec holds.
template <class T, const char *(*Name)(T)>
const char *name_of(int32_t v) {
  return Name(static_cast<T>(v));
}
template <class T, bool (*FromName)(const std::string &, T *)>
bool from_name(const std::string &name, int32_t *v) {
  T value{};
  if (!FromName(name, &value)) return false;
  *v = static_cast<int32_t>(value);
  return true;
}
bool dtype_from_string(const std::string &name, cudnnfe_dtype_t *d) {
  return dtype_from_name(name.c_str(), d);
}

}  // namespace

const EnumCodec kConvModeCodec = {"", conv_mode_name, conv_mode_from_name, ""};
const EnumCodec kPointwiseModeCodec = {
    "pointwise mode", name_of<cudnnfe_pointwise_mode_t, pointwise_mode_name>,
    from_name<cudnnfe_pointwise_mode_t, pointwise_mode_from_name>, ""};
const EnumCodec kReductionModeCodec = {
    "reduction mode", name_of<cudnnfe_reduction_mode_t, reduction_mode_name>,
    from_name<cudnnfe_reduction_mode_t, reduction_mode_from_name>, ""};
const EnumCodec kNormPhaseCodec = {"", norm_phase_name, norm_phase_from_name, ""};
const EnumCodec kDiagonalAlignmentCodec = {
    "", diagonal_alignment_name, diagonal_alignment_from_name, " (TOP_LEFT or BOTTOM_RIGHT)"};
const EnumCodec kAttentionImplementationCodec = {"", attention_implementation_name,
                                                 attention_implementation_from_name,
                                                 " (AUTO, COMPOSITE or UNIFIED)"};
const EnumCodec kResampleModeCodec = {
    "resample mode", name_of<cudnnfe_resample_mode_t, resample_mode_name>,
    from_name<cudnnfe_resample_mode_t, resample_mode_from_name>, ""};
const EnumCodec kPaddingModeCodec = {"padding mode",
                                     name_of<cudnnfe_padding_mode_t, padding_mode_name>,
                                     from_name<cudnnfe_padding_mode_t, padding_mode_from_name>, ""};
const EnumCodec kRngDistributionCodec = {
    "distribution", name_of<cudnnfe_rng_distribution_t, rng_distribution_name>,
    from_name<cudnnfe_rng_distribution_t, rng_distribution_from_name>, ""};
const EnumCodec kMoeGroupedMatmulModeCodec = {
    "moe_grouped_matmul mode",
    name_of<cudnnfe_moe_grouped_matmul_mode_t, moe_grouped_matmul_mode_name>,
    from_name<cudnnfe_moe_grouped_matmul_mode_t, moe_grouped_matmul_mode_from_name>,
    " (NONE, GATHER or SCATTER)"};
const EnumCodec kDtypeCodec = {"data type", name_of<cudnnfe_dtype_t, dtype_name>,
                               from_name<cudnnfe_dtype_t, dtype_from_string>, ""};

}  // namespace cudnnfe
