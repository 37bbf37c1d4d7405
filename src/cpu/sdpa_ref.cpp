// Scaled dot-product attention forward, one query row at a time:
//   s_j = scale * q . k_j + bias_j   for the columns j the causal mask keeps
//   O   = sum_j softmax(s)_j v_j,    stats = max + log(sum_j exp(s_j - max))
// Dot products, softmax and the weighted sum run in double. A row whose
// every column is masked (bottom-right alignment with s_q > s_kv) writes
// O = 0 and stats = -inf, the log-sum-exp of an empty set; so does a row
// whose bias is -inf on every visible column.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/attention_mask.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_sdpa(const Node &node, double scale, const StridedTensor &q, const StridedTensor &k,
              const StridedTensor &v, const StridedTensor *bias, const StridedTensor &o,
              const StridedTensor *stats) {
  const SdpaAttrs &attrs = node.as<SdpaAttrs>();
  if (q.rank != 4 || k.rank != 4 || v.rank != 4 || o.rank != 4)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs 4-D q, k, v and O");
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t h_kv = k.dims[1], s_kv = k.dims[2], d_v = v.dims[3];
  const int64_t group = h_q / h_kv;
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (compute == CUDNNFE_DTYPE_INT32)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": attention needs a floating compute type on the CPU reference, not INT32");
  scale = round_to_compute(scale, compute);

  const std::vector<double> qd = load_dense(q, compute);
  const std::vector<double> kd = load_dense(k, compute);
  const std::vector<double> vd = load_dense(v, compute);
  const Index score_dims = {batch, h_q, s_q, s_kv};
  const Index bias_strides = bias ? broadcast_strides(*bias, 4, score_dims) : Index{};

  std::vector<double> scores(static_cast<size_t>(s_kv)), out(static_cast<size_t>(d_v));
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const int64_t hk = h / group;  // GQA: consecutive q heads share a kv head
      const double *k_head = &kd[static_cast<size_t>((b * h_kv + hk) * s_kv * d)];
      const double *v_head = &vd[static_cast<size_t>((b * h_kv + hk) * s_kv * d_v)];
      for (int64_t i = 0; i < s_q; ++i) {
        const double *q_row = &qd[static_cast<size_t>(((b * h_q + h) * s_q + i) * d)];
        const int64_t last =
            last_visible_column(attrs.causal_mask, attrs.causal_mask_bottom_right, i, s_q, s_kv);

        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j <= last; ++j) {
          double s = 0.0;
          for (int64_t c = 0; c < d; ++c) s += q_row[c] * k_head[j * d + c];
          s *= scale;
          if (bias) {
            const int64_t off = b * bias_strides[0] + h * bias_strides[1] + i * bias_strides[2] +
                                j * bias_strides[3];
            s += round_to_compute(bias->load(off), compute);
          }
          scores[static_cast<size_t>(j)] = s;
          max = std::fmax(max, s);
        }
        std::fill(out.begin(), out.end(), 0.0);
        double sum = 0.0;
        for (int64_t j = 0; j <= last; ++j) {
          const double p = std::exp(scores[static_cast<size_t>(j)] - max);
          sum += p;
          for (int64_t c = 0; c < d_v; ++c) out[static_cast<size_t>(c)] += p * v_head[j * d_v + c];
        }
        // No visible column, or a bias of -inf on all of them.
        const bool empty = last < 0 || max == -std::numeric_limits<double>::infinity();
        const int64_t o_base = b * o.strides[0] + h * o.strides[1] + i * o.strides[2];
        for (int64_t c = 0; c < d_v; ++c)
          o.store(o_base + c * o.strides[3],
                  empty ? 0.0 : round_to_compute(out[static_cast<size_t>(c)] / sum, compute));
        if (stats) {
          const double lse = empty ? -std::numeric_limits<double>::infinity() : max + std::log(sum);
          stats->store(b * stats->strides[0] + h * stats->strides[1] + i * stats->strides[2],
                       round_to_compute(lse, compute));
        }
      }
    }
  }
}

}  // namespace cpu
}  // namespace cudnnfe
