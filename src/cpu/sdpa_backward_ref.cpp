// Scaled dot-product attention backward, in double, from the forward's O and
// stats as given (like cuDNN; they are not recomputed). Per query row i, for
// the columns j the masks leave (cpu/attention_mask.h), with the dropout
// mask M, its scale S and scale_inv (cpu/attention_dropout.h; M = S = 1
// without dropout):
//   P_ij  = exp(s_ij - stats_i),  s_ij as in the forward (cpu/attention_scores.h)
//   D_i   = (dO_i . O_i) * scale_inv
//   dS_ij = (dO_i . v_j * M_ij - D_i) * P_ij * S      (the biased score's gradient)
//   dS~_ij = score_mod_bprop(dS_ij)   (dS_ij without one; cpu/score_mod_eval.h)
//   dV_j += P_ij M_ij S dO_i,  dQ_i += scale dS~_ij k_j,  dK_j += scale dS~_ij q_i,
//   dBias_hij += dS_ij (summed over the batch: dBias is [1, h_q, s_q, s_kv])
// This is cuDNN's own arrangement (softmax_sum scaled by 1 - p, dP masked,
// dS scaled by 1 / (1 - p)); with consistent scales it is the exact gradient.
// GQA: the q heads sharing a kv head add into its dK and dV. Masked scores,
// padding rows and rows with stats = -inf (fully masked in the forward)
// contribute 0.
// The sink (cpu/sdpa_ref.cpp) is already in the stats, so P and dS above do
// not change with it. Its own gradient, since O_i moves by -P_sink_i O_i
// when sink_h grows by one (every P_ij shrinks by the factor 1 - P_sink_i):
//   dSink_h = -sum_{b, valid i} exp(sink_h - stats_bhi) (dO_bhi . O_bhi)
// (the dropout scales are inside O, so D is not scaled here).
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "cpu/attention_layout.h"
#include "cpu/attention_mask.h"
#include "cpu/attention_scores.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

// dSink_h (above) over the valid rows of each batch (`rows`); od, dod and
// lse are the loaded O, dO and stats.
std::vector<double> sink_gradient(const StridedTensor &sink, const std::vector<int64_t> &rows,
                                  int64_t h_q, int64_t s_q, int64_t d_v,
                                  const std::vector<double> &od, const std::vector<double> &dod,
                                  const std::vector<double> &lse) {
  std::vector<double> dsink(static_cast<size_t>(h_q), 0.0);
  for (int64_t b = 0; b < static_cast<int64_t>(rows.size()); ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const double logit = sink.load(h * sink.strides[1]);
      for (int64_t i = 0; i < rows[static_cast<size_t>(b)]; ++i) {
        const size_t row = static_cast<size_t>((b * h_q + h) * s_q + i);
        if (lse[row] == -std::numeric_limits<double>::infinity()) continue;  // as below
        double big_d = 0.0;
        for (int64_t c = 0; c < d_v; ++c) big_d += dod[row * d_v + c] * od[row * d_v + c];
        dsink[static_cast<size_t>(h)] -= std::exp(logit - lse[row]) * big_d;
      }
    }
  }
  return dsink;
}

}  // namespace

void run_sdpa_backward(const Node &node, double scale, const SdpaBackwardTensors &t) {
  const StridedTensor &q = *t.q, &k = *t.k, &v = *t.v;
  if (q.rank != 4 || k.rank != 4 || v.rank != 4)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": the CPU reference needs 4-D q, k and v");
  const cudnnfe_dtype_t compute = node.compute_dtype;
  if (compute == CUDNNFE_DTYPE_INT32)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": attention needs a floating compute type on the CPU reference, not INT32");
  const AttentionSpec spec = attention_spec(node);
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  // k and v may have different head counts, each dividing h_q.
  const int64_t h_kv = k.dims[1], h_v = v.dims[1], s_kv = k.dims[2], d_v = v.dims[3];
  const int64_t k_group = h_q / h_kv, v_group = h_q / h_v;
  if (t.options.attn_scale) scale = t.options.attn_scale->load(0);
  scale = round_to_compute(scale, compute);

  const std::string label = Graph::label(node);
  const AttentionInputs &in = t.options;
  const AttentionMask mask(spec, label, batch, s_q, s_kv, in.seq_len_q, in.seq_len_kv);
  std::vector<int64_t> rows, cols;  // valid query rows and keys per batch
  for (int64_t n = 0; n < batch; ++n) {
    rows.push_back(mask.rows(n));
    cols.push_back(mask.cols(n));
  }
  auto load = [&](const StridedTensor &x, const StridedTensor *offsets,
                  const std::vector<int64_t> &valid, const char *what) {
    return load_attention_tensor(x, offsets, valid, compute, label, what);
  };
  const std::vector<double> qd = load(q, in.ragged_q, rows, "ragged_offset_q");
  const std::vector<double> kd = load(k, in.ragged_k, cols, "ragged_offset_k");
  const std::vector<double> vd = load(v, in.ragged_v, cols, "ragged_offset_v");
  const std::vector<double> od = load(*t.o, in.ragged_o, rows, "ragged_offset_o");
  const std::vector<double> dod = load(*t.d_o, in.ragged_o, rows, "ragged_offset_o");
  const std::vector<double> lse = load_stats(*t.stats, in.ragged_stats, rows, label);
  const Index score_dims = {batch, h_q, s_q, s_kv};
  const AttentionScores score(spec, scale, compute, qd, kd, t.options.bias, score_dims, h_kv, d,
                              t.score_mod);
  const AttentionDropout dropout(spec, t.options, score_dims);

  std::vector<double> dq(qd.size(), 0.0), dk(kd.size(), 0.0), dv(vd.size(), 0.0);
  std::vector<double> dbias(t.dbias ? static_cast<size_t>(h_q * s_q * s_kv) : 0, 0.0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const size_t k_head_index = static_cast<size_t>(b * h_kv + h / k_group);
      const size_t v_head_index = static_cast<size_t>(b * h_v + h / v_group);
      const double *k_head = &kd[k_head_index * s_kv * d];
      const double *v_head = &vd[v_head_index * s_kv * d_v];
      double *dk_head = &dk[k_head_index * s_kv * d];
      double *dv_head = &dv[v_head_index * s_kv * d_v];
      for (int64_t i = 0; i < s_q; ++i) {
        const size_t row = static_cast<size_t>((b * h_q + h) * s_q + i);
        const double stats = lse[row];
        const ColumnRange cols = mask.columns(b, i);
        if (cols.empty() || stats == -std::numeric_limits<double>::infinity()) continue;
        const double *q_row = &qd[row * d];
        const double *o_row = &od[row * d_v];
        const double *do_row = &dod[row * d_v];
        double *dq_row = &dq[row * d];
        double big_d = 0.0;
        for (int64_t c = 0; c < d_v; ++c) big_d += do_row[c] * o_row[c];
        big_d *= dropout.scale_inv();
        for (int64_t j = cols.first; j <= cols.last; ++j) {
          const double s = score(b, h, i, j);
          if (s == -std::numeric_limits<double>::infinity()) continue;
          const double p = std::exp(s - stats);
          const double m = dropout.mask(b, h, i, j);
          const double kept = p * m * dropout.scale();
          double dp = 0.0;
          for (int64_t c = 0; c < d_v; ++c) {
            dp += do_row[c] * v_head[j * d_v + c];
            dv_head[j * d_v + c] += kept * do_row[c];
          }
          const double ds = (dp * m - big_d) * p * dropout.scale();
          if (!dbias.empty()) dbias[static_cast<size_t>((h * s_q + i) * s_kv + j)] += ds;
          // Through score_mod_bprop (dS' -> dS) on the way to the scale.
          const double ds_in = score.modifier_gradient(b, h, i, j, ds);
          for (int64_t c = 0; c < d; ++c) {
            dq_row[c] += scale * ds_in * k_head[j * d + c];
            dk_head[j * d + c] += scale * ds_in * q_row[c];
          }
        }
      }
    }
  }
  store_attention_tensor(*t.dq, in.ragged_q, rows, dq, compute, label, "ragged_offset_q");
  store_attention_tensor(*t.dk, in.ragged_k, cols, dk, compute, label, "ragged_offset_k");
  store_attention_tensor(*t.dv, in.ragged_v, cols, dv, compute, label, "ragged_offset_v");
  if (t.dbias) store_dense(*t.dbias, std::move(dbias), compute);
  if (t.dsink)
    store_dense(*t.dsink, sink_gradient(*in.sink_token, rows, h_q, s_q, d_v, od, dod, lse),
                compute);
}

}  // namespace cpu
}  // namespace cudnnfe
