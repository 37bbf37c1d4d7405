// Scaled dot-product attention backward, in double, from the forward's O and
// stats as given (like cuDNN; they are not recomputed). Per query row i:
//   P_ij  = exp(scale * q_i . k_j + bias_ij - stats_i)   for visible j
//   D_i   = dO_i . O_i
//   dS_ij = P_ij * (dO_i . v_j - D_i)
//   dV_j += P_ij dO_i,  dQ_i += scale dS_ij k_j,  dK_j += scale dS_ij q_i
// GQA: the q heads sharing a kv head add into its dK and dV. Masked scores
// and rows with stats = -inf (fully masked in the forward) contribute 0.
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/attention_mask.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

void run_sdpa_backward(const Node &node, double scale, const SdpaBackwardTensors &t) {
  const SdpaBackwardAttrs &attrs = node.as<SdpaBackwardAttrs>();
  const StridedTensor &q = *t.q, &k = *t.k, &v = *t.v;
  if (q.rank != 4 || k.rank != 4 || v.rank != 4)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs 4-D q, k and v");
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (compute == CUDNNFE_DTYPE_INT32)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": attention needs a floating compute type on the CPU reference, not INT32");
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t h_kv = k.dims[1], s_kv = k.dims[2], d_v = v.dims[3];
  const int64_t group = h_q / h_kv;
  scale = round_to_compute(scale, compute);

  const std::vector<double> qd = load_dense(q, compute), kd = load_dense(k, compute);
  const std::vector<double> vd = load_dense(v, compute), od = load_dense(*t.o, compute);
  const std::vector<double> dod = load_dense(*t.d_o, compute);
  const std::vector<double> lse = load_dense(*t.stats);  // FLOAT, as stored
  const Index score_dims = {batch, h_q, s_q, s_kv};
  const Index bias_strides = t.bias ? broadcast_strides(*t.bias, 4, score_dims) : Index{};

  std::vector<double> dq(qd.size(), 0.0), dk(kd.size(), 0.0), dv(vd.size(), 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const size_t kv_head = static_cast<size_t>(b * h_kv + h / group);
      const double *k_head = &kd[kv_head * s_kv * d];
      const double *v_head = &vd[kv_head * s_kv * d_v];
      double *dk_head = &dk[kv_head * s_kv * d];
      double *dv_head = &dv[kv_head * s_kv * d_v];
      for (int64_t i = 0; i < s_q; ++i) {
        const size_t row = static_cast<size_t>((b * h_q + h) * s_q + i);
        const double stats = lse[row];
        if (stats == -std::numeric_limits<double>::infinity()) continue;
        const double *q_row = &qd[row * d];
        const double *o_row = &od[row * d_v];
        const double *do_row = &dod[row * d_v];
        double *dq_row = &dq[row * d];
        double big_d = 0.0;
        for (int64_t c = 0; c < d_v; ++c) big_d += do_row[c] * o_row[c];
        const int64_t last =
            last_visible_column(attrs.causal_mask, attrs.causal_mask_bottom_right, i, s_q, s_kv);
        for (int64_t j = 0; j <= last; ++j) {
          double s = 0.0;
          for (int64_t c = 0; c < d; ++c) s += q_row[c] * k_head[j * d + c];
          s *= scale;
          if (t.bias) {
            const int64_t off = b * bias_strides[0] + h * bias_strides[1] + i * bias_strides[2] +
                                j * bias_strides[3];
            s += round_to_compute(t.bias->load(off), compute);
          }
          if (s == -std::numeric_limits<double>::infinity()) continue;
          const double p = std::exp(s - stats);
          double dp = 0.0;
          for (int64_t c = 0; c < d_v; ++c) {
            dp += do_row[c] * v_head[j * d_v + c];
            dv_head[j * d_v + c] += p * do_row[c];
          }
          const double ds = p * (dp - big_d) * scale;
          for (int64_t c = 0; c < d; ++c) {
            dq_row[c] += ds * k_head[j * d + c];
            dk_head[j * d + c] += ds * q_row[c];
          }
        }
      }
    }
  }
  store_dense(*t.dq, std::move(dq), compute);
  store_dense(*t.dk, std::move(dk), compute);
  store_dense(*t.dv, std::move(dv), compute);
}

}  // namespace cpu
}  // namespace cudnnfe
