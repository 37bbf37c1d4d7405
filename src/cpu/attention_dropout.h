// Dropout of attention's softmax output on the CPU reference, forward and
// backward alike. Two forms (docs/attention.md):
//   - drawn: cuDNN draws its mask with Philox, which the CPU reference does
//     not reproduce; it draws its own, deterministically from (seed,
//     offset) and the element's position: element (n, h, i, j) at linear
//     index L = ((n * h_q + h) * s_q + i) * s_kv + j is kept iff
//     u >= p, where u = (x >> 11) * 2^-53 and
//     x = mix(mix(mix(L) ^ offset) ^ seed), mix being SplitMix64's
//     finalizer. Kept values are scaled by 1 / (1 - p).
//   - given: the caller's mask element times dropout_scale.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/strided_tensor.h"
#include "ops/attention.h"

namespace cudnnfe {
namespace cpu {

// The optional tensors of an attention node (nullptr: not given).
struct AttentionInputs {
  const StridedTensor *bias = nullptr, *attn_scale = nullptr, *seq_len_q = nullptr,
                      *seq_len_kv = nullptr, *dropout_seed = nullptr, *dropout_offset = nullptr,
                      *dropout_mask = nullptr, *dropout_scale = nullptr,
                      *dropout_scale_inv = nullptr;
  // Ragged offsets and page tables (cpu/attention_layout.h).
  const StridedTensor *ragged_q = nullptr, *ragged_k = nullptr, *ragged_v = nullptr,
                      *ragged_o = nullptr, *page_table_k = nullptr, *page_table_v = nullptr;
  // The forward's sink logits and block mask (cpu/sdpa_ref.cpp).
  const StridedTensor *sink_token = nullptr, *block_mask = nullptr;
  // The ragged offsets of packed page tables (cpu/attention_layout.h).
  const StridedTensor *ragged_page_table_k = nullptr, *ragged_page_table_v = nullptr;
  // The ragged offsets of stats (cpu/sdpa_ref.cpp, cpu/sdpa_backward_ref.cpp).
  const StridedTensor *ragged_stats = nullptr;
  const StridedTensor *ragged_score_max = nullptr, *ragged_score_sum_exp = nullptr;
};

class AttentionDropout {
 public:
  // Reads the seed, offset and scales; `dims` are the scores' [b, h_q, s_q,
  // s_kv].
  AttentionDropout(const AttentionSpec &spec, const AttentionInputs &in, const Index &dims);

  bool active() const { return kind_ != Kind::kNone; }
  // The mask at (n, h, i, j): 0 or 1 drawn, the caller's element given, 1
  // without dropout.
  double mask(int64_t n, int64_t h, int64_t i, int64_t j) const;
  // What kept values are multiplied by: 1 / (1 - p), dropout_scale, or 1.
  double scale() const { return scale_; }
  // The backward's factor on sum(dO * O): 1 - p, dropout_scale_inv, or 1.
  double scale_inv() const { return scale_inv_; }

  // The drawn form's keep decision (exposed for tests and docs).
  static bool keep(uint64_t seed, uint64_t offset, uint64_t linear, double p);

 private:
  enum class Kind { kNone, kDrawn, kGiven };
  Kind kind_ = Kind::kNone;
  uint64_t seed_ = 0, offset_ = 0;
  double p_ = 0.0, scale_ = 1.0, scale_inv_ = 1.0;
  Index dims_{};
  const StridedTensor *given_ = nullptr;
  Index given_strides_{};
};

}  // namespace cpu
}  // namespace cudnnfe
