// The parts of attention's composite lowering that the forward
// (lower_sdpa.cpp), the backward (lower_sdpa_backward.cpp) and FP8
// attention (lower_sdpa_fp8.cpp, lower_sdpa_fp8_backward.cpp) share, built
// the way cudnn-frontend's composite SDPA node builds them, which is the
// pattern cuDNN recognizes and fuses into its flash-attention engines:
//
//  - the softmax scale: a pass-by-value scalar, or the node's scale tensor
//    seen as [1,1,1,1];
//  - per-batch sequence lengths (padding): the INT32 [b,1,1,1] tensors,
//    given to the matmuls as GEMM M/N/K overrides and to the padding mask;
//  - score modifiers on S = [b, h_q, s_q, s_kv] FLOAT, in cudnn-frontend's
//    order: + bias, + ALiBi (slope[h] * (col - row), the slopes a [1,h_q,1,1]
//    FLOAT constant tensor owned by the plan), the padding mask (row <
//    seq_len_q AND col < seq_len_kv), then the diagonal band: its right
//    bound (row [+ s_kv - s_q] [+ right] >= col) and its left bound
//    (col + left [- s_kv + s_q] > row). Each mask is GEN_INDEX -> ADD/SUB
//    -> CMP -> [LOGICAL_AND] -> BINARY_SELECT(S, -inf, keep); -inf is the
//    lowest float before cuDNN 9.10, as in cudnn-frontend;
//  - dropout's mask, [b, h_q, s_q, s_kv]: the Bernoulli output of an RNG
//    operation (Philox, keep probability 1 - p, seed and offset tensors) or
//    the caller's mask, with its scales (1 / (1 - p) and 1 - p, or the
//    caller's dropout_scale and dropout_scale_inv);
//  - a paged K/V cache's PAGED_CACHE_LOAD.
//
// Before cuDNN 9.15.1 the backward engines mishandle s_kv % 128 != 0 unless
// sequence lengths are given; like cudnn-frontend, the backward then uses
// padding with constant lengths (s_q, s_kv) uploaded by the plan.
#pragma once

#include <vector>

#include "backend/lowering.h"
#include "ops/attention.h"

namespace cudnnfe::backend {

class AttentionLowering {
 public:
  AttentionLowering(Lowering &lowering, const Node &node);

  const AttentionSpec &spec() const { return spec_; }
  cudnnDataType_t compute() const { return compute_; }
  // S's dims: [b, h_q, s_q, s_kv].
  const std::vector<int64_t> &scores() const { return scores_; }

  // The softmax scale, [1,1,1,1] FLOAT (made once).
  cudnnBackendDescriptor_t attn_scale();

  // The sequence-length tensors (null without padding or a score modifier
  // that reads them); padded(): the padding mask applies.
  bool padded() const { return seq_len_q_ != nullptr && !lengths_only_; }
  cudnnBackendDescriptor_t seq_len_q() const { return seq_len_q_; }
  cudnnBackendDescriptor_t seq_len_kv() const { return seq_len_kv_; }

  // Score modifiers; each returns the modified S (S itself when off).
  cudnnBackendDescriptor_t add_bias_and_alibi(cudnnBackendDescriptor_t s);
  cudnnBackendDescriptor_t padding_mask(cudnnBackendDescriptor_t s);
  cudnnBackendDescriptor_t band_mask(cudnnBackendDescriptor_t s);

  // Dropout (drawn or given) and its pieces (each made once).
  bool dropout() const { return spec_.seeded_dropout() || spec_.mask_dropout(); }
  cudnnBackendDescriptor_t dropout_mask();
  cudnnBackendDescriptor_t dropout_scale();
  cudnnBackendDescriptor_t dropout_scale_inv();

  // The forward's K as Kᵀ [b, h_kv, d, s_kv] (K's descriptor with its last
  // two dims and strides swapped) and its V, each of type `io` when loaded
  // from a paged cache (a virtual tensor packed along d) instead.
  cudnnBackendDescriptor_t keys_transposed(cudnnDataType_t io);
  cudnnBackendDescriptor_t values(cudnnDataType_t io);

  // The per-row results of the softmax the caller keeps; nullptr: virtual.
  struct SoftmaxResults {
    cudnnBackendDescriptor_t stats = nullptr, max = nullptr, sum_exp = nullptr;
  };
  // P = softmax(S) over the last dim into a new tensor of `p_type`, with
  // stats = max + log(sum exp) (cudnn-frontend's softmax): a sink logit
  // (the forward's sink_token) raises the max to max(max, sink) and adds
  // exp(sink - max) to the sum. The stats are left out when `out` keeps the
  // max or the sum but not them, as cudnn-frontend does.
  cudnnBackendDescriptor_t softmax(cudnnBackendDescriptor_t s, const SoftmaxResults &out,
                                   cudnnDataType_t p_type);

  // P after dropout in cudnn-frontend's orders (drawn: P * mask * 1/(1-p);
  // given: P * dropout_scale * dropout_mask), the last product of type
  // `out_type`; P itself without dropout.
  cudnnBackendDescriptor_t apply_dropout(cudnnBackendDescriptor_t p, cudnnDataType_t out_type);

  // out = a op b as a pointwise op in the node's compute type.
  cudnnBackendDescriptor_t binary(cudnnfe_pointwise_mode_t mode, cudnnBackendDescriptor_t a,
                                  cudnnBackendDescriptor_t b, cudnnDataType_t out_type);

 private:
  // A paged cache's keys or values as the virtual [b, h_kv, ...] tensor
  // `dims`/`strides` of type `io`: PAGED_CACHE_LOAD gathers rows j <
  // seq_len_kv[n] from page table[n][j / page_size] of the container
  // (cuDNN 9.5+).
  cudnnBackendDescriptor_t paged_load(int64_t container, int64_t table,
                                      const std::vector<int64_t> &dims,
                                      const std::vector<int64_t> &strides, cudnnDataType_t io);
  cudnnBackendDescriptor_t one_element(int64_t uid);
  cudnnBackendDescriptor_t index(int axis, cudnnDataType_t math, cudnnBackendDescriptor_t s);
  cudnnBackendDescriptor_t select(cudnnBackendDescriptor_t s, cudnnBackendDescriptor_t keep);

  Lowering &lowering_;
  const Node &node_;
  AttentionSpec spec_;
  cudnnDataType_t compute_;
  std::vector<int64_t> scores_;
  cudnnBackendDescriptor_t seq_len_q_ = nullptr, seq_len_kv_ = nullptr;
  bool lengths_only_ = false;  // lengths given for a score modifier, no padding mask
  cudnnBackendDescriptor_t attn_scale_ = nullptr, dropout_mask_ = nullptr, dropout_scale_ = nullptr,
                           dropout_scale_inv_ = nullptr;
};

}  // namespace cudnnfe::backend
