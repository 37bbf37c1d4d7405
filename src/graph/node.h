// An operation of a graph: its kind, attributes and tensors (by UID, in
// fixed port order per kind: graph/op_list.def, e.g. inputs[Sdpa::kQ]).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/c_api.h"
#include "graph/op_list.h"

namespace cudnnfe {

// Whether row i of a per-layer op table is OpKind i, for every row: the
// tables static_assert it (and that they have kOpKindCount rows).
template <class Row, size_t N>
constexpr bool rows_in_enum_order(const Row (&rows)[N]) {
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(rows[i].kind) != i) return false;
  return true;
}

// Most inputs of one concatenate node (ports x0 .. x15).
constexpr int kMaxConcatInputs = Concatenate::kInputCount;

struct ConvAttrs {
  int spatial_dims = 0;
  std::array<int64_t, 3> pre_padding{0, 0, 0};
  std::array<int64_t, 3> post_padding{0, 0, 0};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> dilation{1, 1, 1};
  cudnnfe_conv_mode_t mode = CUDNNFE_CONV_MODE_CROSS_CORRELATION;
};

struct MatmulAttrs {};

struct PointwiseAttrs {
  cudnnfe_pointwise_mode_t mode = CUDNNFE_POINTWISE_IDENTITY;
  double relu_lower_clip = 0.0;
  double relu_upper_clip = 3.4e38;
  double relu_lower_clip_slope = 0.0;
  double elu_alpha = 1.0;
  double softplus_beta = 1.0;
  double swish_beta = 1.0;
  int axis = 0;
};

struct ReductionAttrs {
  cudnnfe_reduction_mode_t mode = CUDNNFE_REDUCTION_ADD;
  uint32_t axes_mask = 0;
  bool deterministic = false;
};

// The attention options that forward and backward share beyond the causal
// flags (their tensors are input ports; ops/attention.h has the rules).
struct AttentionOptions {
  bool padding_mask = false;
  int64_t window_left = -1;   // -1: no left bound, else >= 1
  int64_t window_right = -1;  // -1: no right bound, else >= 0
  cudnnfe_diagonal_alignment_t diagonal_alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  bool alibi_mask = false;
  double dropout_probability = 0.0;
  // Paged K/V cache (forward only): the logical s_kv; 0 infers it
  // (ops/attention.h, attention_kv_length).
  int64_t max_seq_len_kv = 0;
};

struct Node;

// A score modifier (docs/attention.md, "Score modifiers"): pointwise nodes
// that an attention node applies to each element of its scores. `score` is
// the UID of the placeholder tensor the nodes read (the scores after
// attn_scale, or dS' for a backward modifier); `result` is the UID the
// attention reads instead (may be `score`). The nodes' tensors live in the
// graph's tensor table; the nodes themselves only here, in the order they
// were added. Graph inputs and scalars they read are also inputs of the
// attention node, after its fixed ports (graph/score_mod.h).
struct ScoreMod {
  int64_t score = 0;  // 0: no modifier
  int64_t result = 0;
  std::vector<Node> nodes;
  bool empty() const { return score == 0; }
};

struct SdpaAttrs {
  double attn_scale = 0.0;  // 0: 1/sqrt(d) (resolved at validation)
  bool generate_stats = false;
  bool causal_mask = false;
  bool causal_mask_bottom_right = false;
  AttentionOptions options;
  // COMPOSITE or UNIFIED lowering; AUTO picks at build (backend/lower_sdpa.cpp).
  cudnnfe_attention_implementation_t implementation = CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO;
  ScoreMod score_mod;
  // The unified operation's softmax with unfused multiply-adds (cuDNN 9.21);
  // the composite graph ignores it, as cudnn-frontend does.
  bool unfuse_fma = false;
  // Outputs the caller gave (Sdpa::kScoreMax, ...).
  bool generate_score_max = false;
  bool generate_score_sum_exp = false;
  bool generate_rng_dump = false;
};

struct SdpaBackwardAttrs {
  double attn_scale = 0.0;  // 0: 1/sqrt(d)
  bool causal_mask = false;
  bool causal_mask_bottom_right = false;
  bool deterministic = false;
  AttentionOptions options;
  bool generate_dbias = false;  // output dBias exists
  bool generate_dsink = false;  // output dSink_token exists (needs sink_token)
  // cudnn-frontend's bounds on a ragged layout's total tokens (0: none);
  // only checked (ops/attention_support.cpp): cudnnfe sizes no workspace by them.
  int64_t max_total_seq_len_q = 0;
  int64_t max_total_seq_len_kv = 0;
  // The forward's modifier (recomputing the scores) and the gradient's:
  // dS' (at the modifier's output) -> dS.
  ScoreMod score_mod;
  ScoreMod score_mod_bprop;
};

// Shared by every normalization (layernorm, rmsnorm, batchnorm,
// instancenorm, adalayernorm) and their backward ops.
struct NormAttrs {
  cudnnfe_norm_phase_t phase = CUDNNFE_NORM_PHASE_TRAINING;
  double epsilon = 1e-5;
  bool zero_centered_gamma = false;
  // rmsnorm_backward: whether the forward had a bias (dbias is produced).
  bool has_dbias = false;
  // batchnorm: weight of the batch statistics in the running update.
  double momentum = 0.1;
};

struct SoftmaxAttrs {
  bool generate_stats = false;
};

// reshape: y's dims (same element count, row-major order kept).
struct ReshapeAttrs {
  std::vector<int64_t> dims;
};

// transpose: y dim i is x dim permutation[i].
struct TransposeAttrs {
  std::vector<int64_t> permutation;
};

// slice: per dim, elements start, start + step, ... below end.
struct SliceAttrs {
  std::vector<int64_t> start;
  std::vector<int64_t> end;
  std::vector<int64_t> step;
};

struct ConcatAttrs {
  int axis = 0;
};

struct ResampleAttrs {
  cudnnfe_resample_mode_t mode = CUDNNFE_RESAMPLE_MAXPOOL;
  cudnnfe_padding_mode_t padding_mode = CUDNNFE_PADDING_AUTO;  // resolved at inference
  int spatial_dims = 0;                                        // 0: rank - 2
  std::array<int64_t, 3> window{2, 2, 2};
  std::array<int64_t, 3> stride{2, 2, 2};
  std::array<int64_t, 3> pre_padding{0, 0, 0};
  std::array<int64_t, 3> post_padding{0, 0, 0};
  std::array<int64_t, 3> scale{2, 2, 2};  // NEAREST and BILINEAR
  bool generate_index = false;            // MAXPOOL: the index output exists
};

struct RngAttrs {
  cudnnfe_rng_distribution_t distribution = CUDNNFE_RNG_BERNOULLI;
  double bernoulli_probability = 0.5;
  double uniform_min = 0.0;
  double uniform_max = 1.0;
  double normal_mean = 0.0;
  double normal_stddev = 1.0;
  int64_t seed = 0;  // used when the node has no seed tensor
  std::vector<int64_t> dims;
};

// FP8 attention (ops/sdpa_fp8.cpp): per-tensor descales and scales, the
// sequence lengths, dropout's tensors, the page tables and the sink logits
// are tensors (ports), so only these options are attributes. Of `options`
// the forward offers the diagonal band, padding_mask, alibi_mask,
// dropout_probability and max_seq_len_kv, the backward the band,
// padding_mask and dropout_probability, with sdpa's meaning; the rest keep
// their defaults.
struct SdpaFp8Attrs {
  double attn_scale = 0.0;  // 0: 1/sqrt(d)
  bool generate_stats = false;
  bool causal_mask = false;  // top-left
  AttentionOptions options;
};

struct SdpaFp8BackwardAttrs {
  double attn_scale = 0.0;   // 0: 1/sqrt(d)
  bool causal_mask = false;  // top-left
  AttentionOptions options;
};

// block_scale_quantize / block_scale_dequantize: blocks of `block_size`
// elements along `axis` (as given: negative counts from the end).
struct BlockScaleAttrs {
  int64_t block_size = 32;
  int axis = -1;
  bool transpose = false;                            // quantize only
  cudnnfe_dtype_t y_dtype = CUDNNFE_DTYPE_FP8_E4M3;  // quantize only: y's unset type
};

// genstats (per-channel sum and sum of squares), bn_finalize (their
// batch-norm statistics) and dbn_weight (batch-norm backward's parameter
// gradients): no attributes; bn_finalize's epsilon, momentum and count are
// tensors, as in cuDNN.
struct GenStatsAttrs {};

// moe_grouped_matmul: how token rows reach the experts (NONE, GATHER,
// SCATTER) and, for SCATTER, the experts per token. The backward has no
// attributes beyond its compute type (MatmulAttrs).
struct MoeGroupedMatmulAttrs {
  cudnnfe_moe_grouped_matmul_mode_t mode = CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE;
  int32_t top_k = 1;
};

using OpAttrs =
    std::variant<ConvAttrs, MatmulAttrs, PointwiseAttrs, ReductionAttrs, SdpaAttrs,
                 SdpaBackwardAttrs, NormAttrs, SoftmaxAttrs, ReshapeAttrs, TransposeAttrs,
                 SliceAttrs, ConcatAttrs, ResampleAttrs, RngAttrs, SdpaFp8Attrs,
                 SdpaFp8BackwardAttrs, BlockScaleAttrs, GenStatsAttrs, MoeGroupedMatmulAttrs>;

struct Node {
  OpKind kind;
  std::string name;
  // Input UIDs by port (0 = port unused) and output UIDs by port.
  std::vector<int64_t> inputs;
  std::vector<int64_t> outputs;
  cudnnfe_dtype_t compute_dtype = CUDNNFE_DTYPE_NOT_SET;
  OpAttrs attrs;

  template <class T>
  const T &as() const {
    return std::get<T>(attrs);
  }
  template <class T>
  T &as() {
    return std::get<T>(attrs);
  }
};

// "conv_fprop", "matmul", ...: used for default node names and in JSON.
const char *op_kind_name(OpKind kind);
bool op_kind_from_name(const std::string &name, OpKind *kind);
// Port names of each kind, e.g. conv_fprop: inputs {"image","weight"},
// outputs {"y"}. Output tensors are named "<node>::<port>".
const std::vector<std::string> &input_port_names(OpKind kind);
const std::vector<std::string> &output_port_names(OpKind kind);

const char *pointwise_mode_name(cudnnfe_pointwise_mode_t mode);
bool pointwise_mode_from_name(const std::string &name, cudnnfe_pointwise_mode_t *mode);
// Number of inputs a pointwise mode reads (1, 2 or 3); 0 for unknown modes.
int pointwise_arity(cudnnfe_pointwise_mode_t mode);

const char *reduction_mode_name(cudnnfe_reduction_mode_t mode);
bool reduction_mode_from_name(const std::string &name, cudnnfe_reduction_mode_t *mode);

// "MAXPOOL", "ZERO", "BERNOULLI"...; "UNKNOWN" for other values.
const char *resample_mode_name(cudnnfe_resample_mode_t mode);
bool resample_mode_from_name(const std::string &name, cudnnfe_resample_mode_t *mode);
const char *padding_mode_name(cudnnfe_padding_mode_t mode);
bool padding_mode_from_name(const std::string &name, cudnnfe_padding_mode_t *mode);
const char *rng_distribution_name(cudnnfe_rng_distribution_t distribution);
bool rng_distribution_from_name(const std::string &name, cudnnfe_rng_distribution_t *distribution);
const char *moe_grouped_matmul_mode_name(cudnnfe_moe_grouped_matmul_mode_t mode);
bool moe_grouped_matmul_mode_from_name(const std::string &name,
                                       cudnnfe_moe_grouped_matmul_mode_t *mode);
bool moe_grouped_matmul_mode_is_valid(cudnnfe_moe_grouped_matmul_mode_t mode);
// True for the ops that move or view data without arithmetic (reshape,
// transpose, slice, concatenate): their outputs take their input's type.
bool is_layout_op(OpKind kind);

}  // namespace cudnnfe
