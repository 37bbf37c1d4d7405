// The scores of attention on the CPU reference, shared by the forward and
// backward loops: s = mod(scale * q_i . k_j) + bias_ij + alibi_h * (j - i),
// in double from inputs rounded to the compute type; mod is the node's score
// modifier (cpu/score_mod_eval.h), if any.
#pragma once

#include <cstdint>
#include <vector>

#include "cpu/score_mod_eval.h"
#include "cpu/strided_tensor.h"
#include "ops/attention.h"

namespace cudnnfe {
namespace cpu {

class AttentionScores {
 public:
  // q [b, h_q, s_q, d] and k [b, h_kv, s_kv, d] as loaded (dense,
  // compute-rounded); `bias` may be nullptr.
  AttentionScores(const AttentionSpec &spec, double scale, cudnnfe_dtype_t compute,
                  const std::vector<double> &q, const std::vector<double> &k,
                  const StridedTensor *bias, const Index &dims, int64_t h_kv, int64_t d,
                  const ScoreModProgram::Run *mod = nullptr)
      : scale_(scale),
        compute_(compute),
        q_(q),
        k_(k),
        bias_(bias),
        dims_(dims),
        h_kv_(h_kv),
        d_(d),
        mod_(mod) {
    if (mod_) slots_.resize(static_cast<size_t>(mod_->slot_count()));
    if (bias) bias_strides_ = broadcast_strides(*bias, 4, dims);
    if (spec.options.alibi_mask)
      for (float s : alibi_slopes(dims[1])) slopes_.push_back(s);
  }

  double scale() const { return scale_; }

  // Query row i of head h in batch n against key column j.
  double operator()(int64_t n, int64_t h, int64_t i, int64_t j) const {
    const int64_t hk = h / (dims_[1] / h_kv_);  // GQA: consecutive q heads share a kv head
    const double *q_row = &q_[static_cast<size_t>(((n * dims_[1] + h) * dims_[2] + i) * d_)];
    const double *k_row = &k_[static_cast<size_t>(((n * h_kv_ + hk) * dims_[3] + j) * d_)];
    double s = 0.0;
    for (int64_t c = 0; c < d_; ++c) s += q_row[c] * k_row[c];
    s *= scale_;
    if (mod_ && mod_->has_forward()) s = mod_->forward(n, h, i, j, s, slots_.data());
    if (bias_)
      s += round_to_compute(bias_->load(n * bias_strides_[0] + h * bias_strides_[1] +
                                        i * bias_strides_[2] + j * bias_strides_[3]),
                            compute_);
    if (!slopes_.empty()) s += slopes_[static_cast<size_t>(h)] * static_cast<double>(j - i);
    return s;
  }

  // dS from dS' at the element last scored: score_mod_bprop's (dS' itself
  // without one).
  double modifier_gradient(int64_t n, int64_t h, int64_t i, int64_t j, double ds) const {
    if (!mod_ || !mod_->has_backward()) return ds;
    return mod_->backward(n, h, i, j, ds, slots_.data());
  }

 private:
  double scale_;
  cudnnfe_dtype_t compute_;
  const std::vector<double> &q_, &k_;
  const StridedTensor *bias_;
  Index bias_strides_{};
  Index dims_;
  int64_t h_kv_, d_;
  std::vector<double> slopes_;
  const ScoreModProgram::Run *mod_;
  // The modifier's values of the last element scored (backward reads them).
  mutable std::vector<double> slots_;
};

}  // namespace cpu
}  // namespace cudnnfe
