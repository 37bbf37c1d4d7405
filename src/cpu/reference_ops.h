// The per-op loops of the CPU reference (one file each). Each reads its
// inputs through StridedTensor views rounded to the node's compute type,
// accumulates sums and dot products in double, runs elementwise math in the
// compute type, and writes outputs rounded to the compute type and then to
// their data types. Each throws Error naming the node for anything it does
// not support.
//
// Verify mode (docs/verify.md) runs some of them on a sample: `want` (an
// output's wanted elements) or `rows` (the wanted rows of a row-wise op)
// restrict the work to those elements, nullptr meaning all; each demand_*
// rule (reference_table.h, DemandStep) marks what those elements read.
#pragma once

#include "cpu/attention_dropout.h"
#include "cpu/element_mask.h"
#include "cpu/score_mod_eval.h"
#include "cpu/strided_tensor.h"
#include "graph/node.h"

namespace cudnnfe {
namespace cpu {

struct DemandStep;  // reference_table.h

// conv_fprop (image, weight -> y), conv_dgrad (loss, weight -> dx) and
// conv_wgrad (image, loss -> dw), 1 to 3 spatial dims.
void run_conv(const Node &node, const StridedTensor &in0, const StridedTensor &in1,
              const StridedTensor &out, const ElementMask *want = nullptr);
void demand_conv(const DemandStep &t);

// c[..., M, N] = a[..., M, K] @ b[..., K, N], batch dims of size 1 broadcast.
void run_matmul(const Node &node, const StridedTensor &a, const StridedTensor &b,
                const StridedTensor &c, const ElementMask *want = nullptr);
void demand_matmul(const DemandStep &t);

// `inputs` holds the mode's operands (unused ones are nullptr).
void run_pointwise(const Node &node, const StridedTensor *const inputs[Pointwise::kInputCount],
                   const StridedTensor &out, const ElementMask *want = nullptr);
void demand_pointwise(const DemandStep &t);

// Whether run_pointwise knows `mode` (asked at build).
bool pointwise_supported(cudnnfe_pointwise_mode_t mode);

// Reduces x over the dims where y's dim is 1 and x's is not.
void run_reduction(const Node &node, const StridedTensor &x, const StridedTensor &y,
                   const ElementMask *want = nullptr);
void demand_reduction(const DemandStep &t);

// Whether run_reduction knows `mode` (asked at build).
bool reduction_supported(cudnnfe_reduction_mode_t mode);

// The tensors of an attention forward node (stats may be nullptr).
struct SdpaTensors {
  const StridedTensor *q, *k, *v;
  AttentionInputs options;
  const StridedTensor *o, *stats;
  const ScoreModProgram::Run *score_mod;  // nullptr: none
  // The softmax's row max and sum of exponentials, and the drawn dropout
  // mask (rng_dump); nullptr where not asked for.
  const StridedTensor *score_max = nullptr, *score_sum_exp = nullptr, *rng_dump = nullptr;
  // Verify mode: the query rows (b, h, i) to compute, packed row-major over
  // [b, h_q, s_q]; nullptr: all.
  const ElementMask *rows = nullptr;
};

// Attention forward; `scale` is the node's attn_scale unless the node has
// an attn_scale tensor.
void run_sdpa(const Node &node, double scale, const SdpaTensors &tensors);
void demand_sdpa(const DemandStep &t);
// The query rows [b, h_q, s_q] whose O or stats elements `t` wants.
ElementMask sdpa_rows(const StridedTensor &o, const ElementMask *want_o,
                      const ElementMask *want_stats);

// The tensors of an attention backward node (dbias may be nullptr).
struct SdpaBackwardTensors {
  const StridedTensor *q, *k, *v, *o, *d_o, *stats;
  AttentionInputs options;
  const StridedTensor *dq, *dk, *dv, *dbias;
  const ScoreModProgram::Run *score_mod;  // nullptr: none
  const StridedTensor *dsink;             // nullptr: not asked for
};

// Attention backward from the forward's O and stats.
void run_sdpa_backward(const Node &node, double scale, const SdpaBackwardTensors &tensors);

// Softmax over the last dim; `stats` (log-sum-exp) may be nullptr.
void run_softmax(const Node &node, const StridedTensor &x, const StridedTensor &y,
                 const StridedTensor *stats);

// layernorm (stat0 = mean, stat1 = inv_variance) or rmsnorm (stat0 =
// inv_rms); `bias` and the statistics may be nullptr.
// `rows` (verify mode): the rows (indices of dim 0) to compute; nullptr: all.
void run_norm_forward(const Node &node, const StridedTensor &x, const StridedTensor &scale,
                      const StridedTensor *bias, const StridedTensor &y, const StridedTensor *stat0,
                      const StridedTensor *stat1, const ElementMask *rows = nullptr);
void demand_norm_forward(const DemandStep &t);
// The rows of x [N, ...] whose y or statistics elements `t` wants.
ElementMask norm_rows(const StridedTensor &y, const std::vector<const ElementMask *> &want);

// layernorm_backward, batchnorm_backward, instancenorm_backward and
// adalayernorm_backward (mean given) or rmsnorm_backward (mean nullptr, `inv`
// is inv_rms); `dscale` and `dbias` may be nullptr.
void run_norm_backward(const Node &node, const StridedTensor &dy, const StridedTensor &x,
                       const StridedTensor &scale, const StridedTensor *mean,
                       const StridedTensor &inv, const StridedTensor &dx,
                       const StridedTensor *dscale, const StridedTensor *dbias);

// reshape (row-major order kept), transpose and concatenate: exact element
// copies between tensors of one type (layout_ref.cpp).
void run_reshape(const Node &node, const StridedTensor &x, const StridedTensor &y);
void run_transpose(const Node &node, const StridedTensor &x, const StridedTensor &y);
void run_concatenate(const Node &node, const StridedTensor *const *inputs, size_t count,
                     const StridedTensor &y);
void demand_reshape(const DemandStep &t);
void demand_transpose(const DemandStep &t);
void demand_slice(const DemandStep &t);

// Block-scale quantize (y and scale written) and dequantize (block_scale_ref.cpp);
// block_scale_for_amax is the FP8_E8M0 scale of a block whose largest
// magnitude is `amax` when quantized to `y_dtype` (FP8_E4M3 or FP8_E5M2).
void run_block_scale_quantize(const Node &node, const StridedTensor &x, const StridedTensor &y,
                              const StridedTensor &scale);
void run_block_scale_dequantize(const Node &node, const StridedTensor &x,
                                const StridedTensor &scale, const StridedTensor &y);
double block_scale_for_amax(double amax, cudnnfe_dtype_t y_dtype);

// genstats: per-channel sum and sum of squares of x [N, C, ...]
// (batchnorm_split_ref.cpp).
void run_genstats(const Node &node, const StridedTensor &x, const StridedTensor &sum,
                  const StridedTensor &sq_sum);
// bn_finalize: inputs and outputs by port (BnFinalize::Input, ::Output);
// the running statistics (prev_running_mean, prev_running_var, momentum;
// next_running_mean, next_running_var) are nullptr when not given.
void run_bn_finalize(const Node &node, const StridedTensor *const *inputs,
                     const StridedTensor *const *outputs);
// dbn_weight: inputs and outputs by port (DbnWeight::Input, ::Output).
void run_dbn_weight(const Node &node, const StridedTensor *const *inputs,
                    const StridedTensor *const *outputs);

// Pooling or upsampling; `index` (max pooling's) may be nullptr.
void run_resample(const Node &node, const StridedTensor &x, const StridedTensor &y,
                  const StridedTensor *index);

// Random numbers from the seed and offset tensors (either may be nullptr:
// then the node's seed attribute and offset 0) -- see rng_ref.cpp.
void run_rng(const Node &node, const StridedTensor *seed, const StridedTensor *offset,
             const StridedTensor &y);
// The CPU generator's uniform number in (0, 1) for (seed, counter), and
// the value of element counter k of a distribution (for tests and docs).
double rng_uniform(uint64_t seed, uint64_t counter);
double rng_value(const RngAttrs &attrs, uint64_t seed, uint64_t k);
// The tensors of a batchnorm, batchnorm_inference, instancenorm or
// adalayernorm node; unused ones are nullptr. given_mean and given_inv are
// batchnorm_inference's inputs; prev_* / next_* batchnorm's running
// statistics.
struct GroupedNormTensors {
  const StridedTensor *x, *scale, *bias, *y;
  const StridedTensor *mean, *inv;
  const StridedTensor *given_mean, *given_inv;
  const StridedTensor *prev_mean, *prev_var, *next_mean, *next_var;
};

void run_grouped_norm_forward(const Node &node, const GroupedNormTensors &tensors);

// moe_grouped_matmul (token_index, token_ks nullptr where the mode does not
// read them) and its backward (moe_grouped_matmul_ref.cpp).
void run_moe_grouped_matmul(const Node &node, const StridedTensor &token,
                            const StridedTensor &weight, const StridedTensor &offsets,
                            const StridedTensor *token_index, const StridedTensor *token_ks,
                            const StridedTensor &output);
void run_moe_grouped_matmul_backward(const Node &node, const StridedTensor &doutput,
                                     const StridedTensor &token, const StridedTensor &offsets,
                                     const StridedTensor &dweight);
// paged_cache_load: a paged cache gathered to y (paged_cache_ref.cpp).
void run_paged_cache_load(const Node &node, const StridedTensor &container,
                          const StridedTensor &seq_len, const StridedTensor &page_table,
                          const StridedTensor &y);

}  // namespace cpu
}  // namespace cudnnfe
