// FP8 attention on the CPU: the graph cudnn-frontend builds for per-tensor
// scaled FP8 attention, evaluated in double with the FP8 casts it makes.
//
// Forward, per query row i, over the columns j that padding and the
// diagonal band leave (cpu/attention_mask.h, as sdpa's reference; a row
// left none writes O = 0 and stats = -inf, or sink_h with a sink), with
// dropout's mask M and scale r (cpu/attention_dropout.h; 1 without):
//   S_ij  = (q_i . k_j) * attn_scale * descale_q * descale_k [+ alibi_h (j - i)]
//   m_i   = max(max_j S_ij, sink_h),  Z_i = sum_j exp(S_ij - m_i) + exp(sink_h - m_i)
//   P_ij  = exp(S_ij - m_i) / Z_i,  stats_i = m_i + log(Z_i)  (no sink: sink_h = -inf)
//   P'_ij = P_ij * M_ij * r,  amax_s = max |P'|   (before scale_s)
//   P8_ij = fp8(P'_ij * scale_s)              (q's FP8 type: cast before P·V)
//   O_i   = (sum_j P8_ij v_j) * descale_s * descale_v
//   amax_o = max |O|,  written O = O * scale_o in O's type
// Backward (P recomputed from stats; scale_inv is dropout's, 1 without):
//   D_i   = (dO_i . o_i) * descale_dO * descale_o * scale_inv
//   P_ij  = exp(S_ij - stats_i),  P8_ij = fp8(P_ij * M_ij * r * scale_s)  (q's type)
//   dV    = (P8ᵀ dO) * descale_s * descale_dO
//   dP_ij = (dO_i . v_j) * descale_dO * descale_v * M_ij
//   dS_ij = (dP_ij - D_i) * P_ij * r * attn_scale,  amax_dP = max |dS|
//   dS8   = fp8(dS * scale_dP)                (dO's FP8 type)
//   dQ    = (dS8 K) * descale_dP * descale_k
//   dK    = (dS8ᵀ Q) * descale_dP * descale_q
// each gradient written times its scale in its type, its amax taken before.
// GQA: dK and dV sum the query heads of each key/value head before the
// descales, as the backend's reduction does. Dropout's arrangement is
// sdpa_backward's (cpu/sdpa_backward_ref.cpp): with consistent scales the
// exact gradient. Padding rows of dQ and padding keys of dK and dV are 0.
//
// The intermediates the backend holds in FLOAT are kept in double here, so
// results differ from cuDNN's where float rounding moves a value across an
// FP8 rounding boundary; and cuDNN's fused forward kernel casts the
// unnormalised probabilities of each key tile (online softmax) where this
// graph casts normalised P. Both move individual FP8 results by about one
// FP8 step: GPU comparisons need FP8 tolerances (tests/test_gpu_fp8.cpp).
#include "cpu/sdpa_fp8_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/error.h"
#include "cpu/attention_layout.h"
#include "cpu/attention_mask.h"
#include "cpu/dtype_convert.h"
#include "graph/graph.h"
#include "ops/sdpa_fp8.h"

namespace cudnnfe {
namespace cpu {
namespace {

// The one element of a descale or scale tensor (every dim is 1).
double one_value(const StridedTensor *t) {
  return t->load(0);
}

void require_rank4(const Node &node, std::initializer_list<const StridedTensor *> tensors) {
  for (const StridedTensor *t : tensors)
    if (t->rank != 4)
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
           ": the CPU reference needs 4-D attention tensors");
}

void store_amax(const StridedTensor *t, double amax) {
  t->store(0, amax);
}

double dot(const double *a, const double *b, int64_t n) {
  double s = 0.0;
  for (int64_t c = 0; c < n; ++c) s += a[c] * b[c];
  return s;
}

// Multiplies `values` by `factor`, returns their largest magnitude, then
// writes them times `scale` to `t` (rounded to t's type).
double finish(const StridedTensor &t, std::vector<double> &values, double factor, double scale) {
  double amax = 0.0;
  for (double &x : values) {
    x *= factor;
    amax = std::fmax(amax, std::fabs(x));
  }
  std::vector<double> scaled(values.size());
  for (size_t i = 0; i < values.size(); ++i) scaled[i] = values[i] * scale;
  store_dense(t, scaled);
  return amax;
}

// k or v as packed [b, h_kv, s_kv, x] values: dense, or gathered from its
// page container (keys j < cols[n] of batch n; cpu/attention_layout.h).
std::vector<double> load_kv(const StridedTensor &t, const StridedTensor *table, const char *what,
                            int64_t batch, int64_t s_kv, const AttentionMask &mask,
                            const std::string &label) {
  if (!table) return load_dense(t);
  std::vector<int64_t> cols;
  for (int64_t n = 0; n < batch; ++n) cols.push_back(mask.cols(n));
  return load_paged_tensor(t, {*table, nullptr, what, "ragged offsets"}, batch, s_kv, cols,
                           CUDNNFE_DTYPE_FLOAT, label);
}

}  // namespace

void run_sdpa_fp8(const Node &node, const StridedTensor *const *in, const AttentionInputs &opt,
                  const StridedTensor *const *out) {
  using namespace SdpaFp8;
  const SdpaFp8Attrs &attrs = node.as<SdpaFp8Attrs>();
  const StridedTensor &q = *in[kQ], &k = *in[kK], &v = *in[kV], &o = *out[kO];
  require_rank4(node, {&q, &k, &v, &o});
  const std::string label = Graph::label(node);
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t s_kv =
      paged_kv_length(k, v, opt.page_table_k, opt.page_table_v, attrs.options.max_seq_len_kv);
  // k and v may have different head counts, each dividing h_q.
  const int64_t h_kv = k.dims[1], h_v = v.dims[1], d_v = v.dims[3];
  const int64_t k_group = h_q / h_kv, v_group = h_q / h_v;
  // The backend multiplies by attn_scale as a FLOAT scalar.
  const double attn_scale = static_cast<float>(sdpa_fp8_attn_scale(attrs.attn_scale, d));
  const double descale_q = one_value(in[kDescaleQ]), descale_k = one_value(in[kDescaleK]);
  const double descale_v = one_value(in[kDescaleV]), descale_s = one_value(in[kDescaleS]);
  const double scale_s = one_value(in[kScaleS]), scale_o = one_value(in[kScaleO]);
  const cudnnfe_dtype_t p_type = q.dtype;

  const AttentionSpec spec = attention_spec(node);
  const AttentionMask mask(spec, label, batch, s_q, s_kv, opt.seq_len_q, opt.seq_len_kv);
  const AttentionDropout dropout(spec, opt, {batch, h_q, s_q, s_kv});
  const std::vector<float> alibi = spec.options.alibi_mask
                                       ? alibi_slopes(h_q)
                                       : std::vector<float>(static_cast<size_t>(h_q), 0.0f);
  const std::vector<double> qd = load_dense(q);
  const std::vector<double> kd =
      load_kv(k, opt.page_table_k, "page_table_k", batch, s_kv, mask, label);
  const std::vector<double> vd =
      load_kv(v, opt.page_table_v, "page_table_v", batch, s_kv, mask, label);
  std::vector<double> o_values(static_cast<size_t>(batch * h_q * s_q * d_v), 0.0);
  std::vector<double> scores(static_cast<size_t>(s_kv)), p8(static_cast<size_t>(s_kv));
  double amax_s = 0.0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      // Consecutive query heads share a key (value) head.
      const double *k_head = &kd[static_cast<size_t>((b * h_kv + h / k_group) * s_kv * d)];
      const double *v_head = &vd[static_cast<size_t>((b * h_v + h / v_group) * s_kv * d_v)];
      const double slope = alibi[static_cast<size_t>(h)];
      const double sink = opt.sink_token ? opt.sink_token->load(h * opt.sink_token->strides[1])
                                         : -std::numeric_limits<double>::infinity();
      for (int64_t i = 0; i < s_q; ++i) {
        const double *q_row = &qd[static_cast<size_t>(((b * h_q + h) * s_q + i) * d)];
        const ColumnRange cols = mask.columns(b, i);
        double max = sink;
        for (int64_t j = cols.first; j <= cols.last; ++j) {
          const double s = dot(q_row, k_head + j * d, d) * attn_scale * descale_q * descale_k +
                           slope * static_cast<double>(j - i);
          scores[static_cast<size_t>(j)] = s;
          max = std::fmax(max, s);
        }
        double sum = opt.sink_token ? std::exp(sink - max) : 0.0;
        for (int64_t j = cols.first; j <= cols.last; ++j)
          sum += std::exp(scores[static_cast<size_t>(j)] - max);
        for (int64_t j = cols.first; j <= cols.last; ++j) {
          double p = std::exp(scores[static_cast<size_t>(j)] - max) / sum;
          if (dropout.active()) p *= dropout.mask(b, h, i, j) * dropout.scale();
          amax_s = std::fmax(amax_s, std::fabs(p));
          p8[static_cast<size_t>(j)] = round_to_dtype(p * scale_s, p_type);
        }
        double *o_row = &o_values[static_cast<size_t>(((b * h_q + h) * s_q + i) * d_v)];
        for (int64_t c = 0; c < d_v; ++c) {
          double acc = 0.0;
          for (int64_t j = cols.first; j <= cols.last; ++j)
            acc += p8[static_cast<size_t>(j)] * v_head[j * d_v + c];
          o_row[c] = acc;
        }
        // A row the masks leave empty: O = 0 and stats = -inf, or sink_h
        // with a sink (as sdpa's).
        const double lse =
            max == -std::numeric_limits<double>::infinity() ? max : max + std::log(sum);
        if (out[kStats])
          out[kStats]->store(b * out[kStats]->strides[0] + h * out[kStats]->strides[1] +
                                 i * out[kStats]->strides[2],
                             lse);
      }
    }
  }
  const double amax_o = finish(o, o_values, descale_s * descale_v, scale_o);
  store_amax(out[kAmaxS], amax_s);
  store_amax(out[kAmaxO], amax_o);
}

void run_sdpa_fp8_backward(const Node &node, const StridedTensor *const *in,
                           const AttentionInputs &opt, const StridedTensor *const *out) {
  using namespace SdpaFp8Backward;
  const SdpaFp8BackwardAttrs &attrs = node.as<SdpaFp8BackwardAttrs>();
  const StridedTensor &q = *in[kQ], &k = *in[kK], &v = *in[kV], &o = *in[kO], &d_o = *in[kDO];
  const StridedTensor &stats = *in[kStats];
  require_rank4(node, {&q, &k, &v, &o, &d_o, &stats, out[kDQ], out[kDK], out[kDV]});
  const int64_t batch = q.dims[0], h_q = q.dims[1], s_q = q.dims[2], d = q.dims[3];
  const int64_t h_kv = k.dims[1], h_v = v.dims[1], s_kv = k.dims[2], d_v = v.dims[3];
  const int64_t k_group = h_q / h_kv, v_group = h_q / h_v;
  const double attn_scale = static_cast<float>(sdpa_fp8_attn_scale(attrs.attn_scale, d));
  const double descale_q = one_value(in[kDescaleQ]), descale_k = one_value(in[kDescaleK]);
  const double descale_v = one_value(in[kDescaleV]), descale_o = one_value(in[kDescaleO]);
  const double descale_do = one_value(in[kDescaleDO]), descale_s = one_value(in[kDescaleS]);
  const double descale_dp = one_value(in[kDescaleDP]), scale_s = one_value(in[kScaleS]);
  const double scale_dq = one_value(in[kScaleDQ]), scale_dk = one_value(in[kScaleDK]);
  const double scale_dv = one_value(in[kScaleDV]), scale_dp = one_value(in[kScaleDP]);
  const cudnnfe_dtype_t p_type = q.dtype, ds_type = d_o.dtype;

  const AttentionSpec spec = attention_spec(node);
  const AttentionMask mask(spec, Graph::label(node), batch, s_q, s_kv, opt.seq_len_q,
                           opt.seq_len_kv);
  const AttentionDropout dropout(spec, opt, {batch, h_q, s_q, s_kv});
  const std::vector<double> qd = load_dense(q), kd = load_dense(k), vd = load_dense(v);
  const std::vector<double> od = load_dense(o), dod = load_dense(d_o), lse = load_dense(stats);
  // Unscaled products (the matmuls' FLOAT results), GQA heads summed.
  std::vector<double> dq(static_cast<size_t>(batch * h_q * s_q * d), 0.0);
  std::vector<double> dk(static_cast<size_t>(batch * h_kv * s_kv * d), 0.0);
  std::vector<double> dv(static_cast<size_t>(batch * h_v * s_kv * d_v), 0.0);
  const size_t tile = static_cast<size_t>(s_q * s_kv);
  std::vector<double> p8(tile), ds8(tile);
  double amax_dp = 0.0;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t h = 0; h < h_q; ++h) {
      const size_t q_head = static_cast<size_t>((b * h_q + h) * s_q);
      const size_t k_head_row = static_cast<size_t>((b * h_kv + h / k_group) * s_kv);
      const size_t v_head_row = static_cast<size_t>((b * h_v + h / v_group) * s_kv);
      const double *k_head = &kd[k_head_row * d];
      const double *v_head = &vd[v_head_row * d_v];
      std::fill(p8.begin(), p8.end(), 0.0);
      std::fill(ds8.begin(), ds8.end(), 0.0);
      for (int64_t i = 0; i < s_q; ++i) {
        const double *q_row = &qd[(q_head + i) * d];
        const double *do_row = &dod[(q_head + i) * d_v];
        const double delta = dot(do_row, &od[(q_head + i) * d_v], d_v) * descale_do * descale_o *
                             dropout.scale_inv();
        const double row_lse = lse[q_head + i];
        const ColumnRange cols = mask.columns(b, i);
        for (int64_t j = cols.first; j <= cols.last; ++j) {
          const double s = dot(q_row, k_head + j * d, d) * attn_scale * descale_q * descale_k;
          const double p = std::exp(s - row_lse);
          const double m = dropout.mask(b, h, i, j);
          const double dp = dot(do_row, v_head + j * d_v, d_v) * descale_do * descale_v * m;
          const double ds = (dp - delta) * p * dropout.scale() * attn_scale;
          amax_dp = std::fmax(amax_dp, std::fabs(ds));
          const size_t ij = static_cast<size_t>(i * s_kv + j);
          p8[ij] = round_to_dtype(p * m * dropout.scale() * scale_s, p_type);
          ds8[ij] = round_to_dtype(ds * scale_dp, ds_type);
        }
      }
      // dV += P8ᵀ dO, dK += dS8ᵀ Q (summed over the group), dQ = dS8 K.
      for (int64_t i = 0; i < s_q; ++i) {
        const double *q_row = &qd[(q_head + i) * d];
        const double *do_row = &dod[(q_head + i) * d_v];
        double *dq_row = &dq[(q_head + i) * d];
        for (int64_t j = 0; j < s_kv; ++j) {
          const size_t ij = static_cast<size_t>(i * s_kv + j);
          const double p = p8[ij], g = ds8[ij];
          if (p != 0.0) {
            double *dv_row = &dv[(v_head_row + j) * d_v];
            for (int64_t c = 0; c < d_v; ++c) dv_row[c] += p * do_row[c];
          }
          if (g != 0.0) {
            double *dk_row = &dk[(k_head_row + j) * d];
            const double *k_row = k_head + j * d;
            for (int64_t c = 0; c < d; ++c) {
              dk_row[c] += g * q_row[c];
              dq_row[c] += g * k_row[c];
            }
          }
        }
      }
    }
  }
  store_amax(out[kAmaxDQ], finish(*out[kDQ], dq, descale_dp * descale_k, scale_dq));
  store_amax(out[kAmaxDK], finish(*out[kDK], dk, descale_dp * descale_q, scale_dk));
  store_amax(out[kAmaxDV], finish(*out[kDV], dv, descale_s * descale_do, scale_dv));
  store_amax(out[kAmaxDP], amax_dp);
}

}  // namespace cpu
}  // namespace cudnnfe
