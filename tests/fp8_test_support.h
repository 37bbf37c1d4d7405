// Test-only helpers for the FP8 tests (test_cpu_fp8.cpp, test_gpu_fp8.cpp):
// an FP8 codec written from the format definitions (independent of the
// library's), dense host tensors, and straightforward reference loops for
// FP8 attention written from cudnn-frontend's graph definition, which the
// library's CPU reference must match.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cudnnfe/cudnnfe.h"

namespace fp8t {

// ---- FP8 codec ----

// Value of FP8 code `c`: E4M3 (bias 7, no infinity, S.1111.111 is NaN) or
// E5M2 (bias 15, IEEE-like infinities and NaNs).
inline double decode(cudnnfe_dtype_t type, uint8_t c) {
  const bool e4m3 = type == CUDNNFE_DTYPE_FP8_E4M3;
  const int mant_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int max_exp = e4m3 ? 15 : 31;
  const int e = (c & 0x7f) >> mant_bits, m = c & ((1 << mant_bits) - 1);
  const double sign = (c & 0x80) ? -1.0 : 1.0;
  if (e4m3 && e == max_exp && m == (1 << mant_bits) - 1) return std::nan("");
  if (!e4m3 && e == max_exp) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mant_bits);
  return sign * std::ldexp((1 << mant_bits) + m, e - bias - mant_bits);
}

// The code nearest to `x` among finite codes of x's sign (ties to the even
// code, i.e. even mantissa); out of range and infinity saturate to the
// largest finite value; NaN is 0x7f.
inline uint8_t encode(cudnnfe_dtype_t type, double x) {
  if (std::isnan(x)) return 0x7f;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const double a = std::fabs(x);
  int best = -1;
  double best_err = INFINITY;
  for (int c = 0; c < 128; ++c) {
    const double v = decode(type, static_cast<uint8_t>(c));
    if (!std::isfinite(v)) continue;
    const double err = std::isinf(a) ? -v : std::fabs(v - a);
    if (err < best_err || (err == best_err && (c & 1) == 0)) {
      best = c;
      best_err = err;
    }
  }
  return static_cast<uint8_t>(sign | best);
}

inline double round_fp8(cudnnfe_dtype_t type, double x) {
  return decode(type, encode(type, x));
}

inline bool is_fp8(cudnnfe_dtype_t t) {
  return t == CUDNNFE_DTYPE_FP8_E4M3 || t == CUDNNFE_DTYPE_FP8_E5M2;
}

// Relative step of an FP8 type within a binade: 2^-mantissa_bits.
inline double ulp_fraction(cudnnfe_dtype_t t) {
  return t == CUDNNFE_DTYPE_FP8_E5M2 ? 0.25 : 0.125;
}

// ---- dense tensors ----

using Dims = std::vector<int64_t>;

inline Dims packed(const Dims &dims) {
  Dims s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// Strides of a [b, h, s, d] tensor stored as [b, s, h, d] (BSHD).
inline Dims bshd(const Dims &d) {
  return {d[2] * d[1] * d[3], d[3], d[1] * d[3], 1};
}

inline int64_t count(const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

inline int64_t span(const Dims &dims, const Dims &strides) {
  int64_t s = 1;
  for (size_t i = 0; i < dims.size(); ++i) s += (dims[i] - 1) * strides[i];
  return s;
}

// Offset of the flat-th logical (row-major) element under `strides`.
inline int64_t offset_of(int64_t flat, const Dims &dims, const Dims &strides) {
  int64_t off = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    off += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return off;
}

// A host tensor holding FP8 codes or floats, with its logical values.
struct Fp8Host {
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_FP8_E4M3;
  Dims dims, strides;
  std::vector<uint8_t> codes;  // storage (span elements)
  // Dense row-major logical values (decoded).
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(count(dims)));
    for (int64_t i = 0; i < count(dims); ++i)
      v[static_cast<size_t>(i)] = decode(dtype, codes[offset_of(i, dims, strides)]);
    return v;
  }
  void *data() { return codes.data(); }
};

// Random values uniform in [-range, range], times `scale`, stored as FP8.
inline Fp8Host random_fp8(cudnnfe_dtype_t dtype, const Dims &dims, const Dims &strides,
                          double range, double scale, std::mt19937 &rng) {
  Fp8Host t;
  t.dtype = dtype;
  t.dims = dims;
  t.strides = strides.empty() ? packed(dims) : strides;
  t.codes.assign(static_cast<size_t>(span(t.dims, t.strides)), 0);
  std::uniform_real_distribution<double> u(-range, range);
  for (int64_t i = 0; i < count(dims); ++i)
    t.codes[offset_of(i, t.dims, t.strides)] = encode(dtype, u(rng) * scale);
  return t;
}

// ---- the attention graph, straightforwardly ----

struct AttnShape {
  int64_t b = 1, h_q = 1, h_kv = 1, s_q = 1, s_kv = 1, d = 1, d_v = 1;
};

// Which scores the diagonal band keeps, from the header's definition:
// d(i) = i (top-left) or i + s_kv - s_q (bottom-right); column j is kept
// when j > d(i) - left (left >= 1) and j <= d(i) + right (right >= 0); -1
// leaves that side open. A causal mask is right = 0, top-left.
struct Band {
  int64_t left = -1, right = -1;
  bool bottom_right = false;
  static Band causal(bool on) {
    Band b;
    if (on) b.right = 0;
    return b;
  }
  bool keeps(const AttnShape &a, int64_t i, int64_t j) const {
    const int64_t diagonal = bottom_right ? i + a.s_kv - a.s_q : i;
    if (left >= 1 && !(j > diagonal - left)) return false;
    if (right >= 0 && !(j <= diagonal + right)) return false;
    return true;
  }
};

// Options beyond the band for the loops below (the defaults: none).
struct Extras {
  // Padding: valid query rows and keys per batch (empty: all).
  std::vector<int64_t> seq_q, seq_kv;
  // Given dropout: a dense [b, h_q, s_q, s_kv] mask (empty: none), its
  // scale and (backward) scale_inv.
  std::vector<double> drop_mask;
  double drop_scale = 1, drop_scale_inv = 1;
  // ALiBi: slope(h) * (j - i) added to the scaled scores.
  bool alibi = false;
  // Forward: a sink logit per query head (empty: none), in each row's
  // softmax denominator.
  std::vector<double> sink;

  int64_t rows(const AttnShape &a, int64_t b) const {
    return seq_q.empty() ? a.s_q : seq_q[static_cast<size_t>(b)];
  }
  int64_t cols(const AttnShape &a, int64_t b) const {
    return seq_kv.empty() ? a.s_kv : seq_kv[static_cast<size_t>(b)];
  }
  // Whether row i of batch b sees column j: padding and the band (whose
  // bottom-right diagonal follows the valid lengths).
  bool keeps(const AttnShape &a, const Band &band, int64_t b, int64_t i, int64_t j) const {
    if (i >= rows(a, b) || j >= cols(a, b)) return false;
    AttnShape valid = a;
    valid.s_q = rows(a, b);
    valid.s_kv = cols(a, b);
    return band.keeps(valid, i, j);
  }
  double mask(const AttnShape &a, int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (drop_mask.empty()) return 1;
    return drop_mask[static_cast<size_t>(((b * a.h_q + h) * a.s_q + i) * a.s_kv + j)];
  }
  // cudnn-frontend's slopes: n the largest power of two <= h_q;
  // 2^(-8 (h + 1) / n) below n, then 2^(-4 (2 (h - n) + 1) / n); in float.
  double slope(const AttnShape &a, int64_t h) const {
    if (!alibi) return 0;
    int64_t n = 1;
    while (n * 2 <= a.h_q) n *= 2;
    const float e = h < n ? -8.0f * static_cast<float>(h + 1) / static_cast<float>(n)
                          : -4.0f * static_cast<float>(2 * (h - n) + 1) / static_cast<float>(n);
    return std::pow(2.0f, e);
  }
};

struct FwdScales {
  double descale_q = 1, descale_k = 1, descale_v = 1, descale_s = 1, scale_s = 1, scale_o = 1;
};

struct FwdResult {
  std::vector<double> o_unscaled;  // O' before scale_o (dense BHSD)
  std::vector<double> stats;       // [b, h_q, s_q]
  double amax_s = 0, amax_o = 0;
};

// q, k, v: decoded values, dense BHSD. P is cast to `p_type` after scale_s.
// A row the band leaves empty has O' = 0 and stats = -inf.
inline FwdResult attention_forward(const AttnShape &a, const std::vector<double> &q,
                                   const std::vector<double> &k, const std::vector<double> &v,
                                   const FwdScales &sc, double attn_scale, const Band &band,
                                   cudnnfe_dtype_t p_type, bool cast_p = true,
                                   const Extras &x = {}) {
  FwdResult r;
  r.o_unscaled.assign(static_cast<size_t>(a.b * a.h_q * a.s_q * a.d_v), 0.0);
  r.stats.assign(static_cast<size_t>(a.b * a.h_q * a.s_q), 0.0);
  const double scale = static_cast<float>(attn_scale);
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.h_q; ++h) {
      const int64_t g = h / (a.h_q / a.h_kv);
      // The whole score matrix of this head, masked entries -inf.
      std::vector<std::vector<double>> s(a.s_q, std::vector<double>(a.s_kv));
      for (int64_t i = 0; i < a.s_q; ++i)
        for (int64_t j = 0; j < a.s_kv; ++j) {
          if (!x.keeps(a, band, b, i, j)) {
            s[i][j] = -INFINITY;
            continue;
          }
          double acc = 0;
          for (int64_t c = 0; c < a.d; ++c)
            acc += q[((b * a.h_q + h) * a.s_q + i) * a.d + c] *
                   k[((b * a.h_kv + g) * a.s_kv + j) * a.d + c];
          s[i][j] = acc * scale * sc.descale_q * sc.descale_k +
                    x.slope(a, h) * static_cast<double>(j - i);
        }
      const double sink = x.sink.empty() ? -INFINITY : x.sink[static_cast<size_t>(h)];
      for (int64_t i = 0; i < a.s_q; ++i) {
        const double m = std::max(*std::max_element(s[i].begin(), s[i].end()), sink);
        if (m == -INFINITY) {  // nothing visible: O' stays 0
          r.stats[(b * a.h_q + h) * a.s_q + i] = -INFINITY;
          continue;
        }
        double sum = x.sink.empty() ? 0.0 : std::exp(sink - m);
        for (double e : s[i]) sum += std::exp(e - m);
        r.stats[(b * a.h_q + h) * a.s_q + i] = m + std::log(sum);
        for (int64_t c = 0; c < a.d_v; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < a.s_kv; ++j) {
            const double p = std::exp(s[i][j] - m) / sum * x.mask(a, b, h, i, j) * x.drop_scale;
            r.amax_s = std::max(r.amax_s, p);
            const double p8 = cast_p ? round_fp8(p_type, p * sc.scale_s) : p * sc.scale_s;
            acc += p8 * v[((b * a.h_kv + g) * a.s_kv + j) * a.d_v + c];
          }
          const double o = acc * sc.descale_s * sc.descale_v;
          r.o_unscaled[((b * a.h_q + h) * a.s_q + i) * a.d_v + c] = o;
          r.amax_o = std::max(r.amax_o, std::fabs(o));
        }
      }
    }
  return r;
}

inline FwdResult attention_forward(const AttnShape &a, const std::vector<double> &q,
                                   const std::vector<double> &k, const std::vector<double> &v,
                                   const FwdScales &sc, double attn_scale, bool causal,
                                   cudnnfe_dtype_t p_type, bool cast_p = true) {
  return attention_forward(a, q, k, v, sc, attn_scale, Band::causal(causal), p_type, cast_p);
}

struct BwdScales {
  double descale_q = 1, descale_k = 1, descale_v = 1, descale_o = 1, descale_do = 1, descale_s = 1,
         descale_dp = 1, scale_s = 1, scale_dq = 1, scale_dk = 1, scale_dv = 1, scale_dp = 1;
};

struct BwdResult {
  std::vector<double> dq, dk, dv;  // before their scales (dense BHSD)
  double amax_dq = 0, amax_dk = 0, amax_dv = 0, amax_dp = 0;
};

// All dense BHSD decoded values; stats [b, h_q, s_q].
inline BwdResult attention_backward(const AttnShape &a, const std::vector<double> &q,
                                    const std::vector<double> &k, const std::vector<double> &v,
                                    const std::vector<double> &o, const std::vector<double> &d_o,
                                    const std::vector<double> &stats, const BwdScales &sc,
                                    double attn_scale, const Band &band, cudnnfe_dtype_t p_type,
                                    cudnnfe_dtype_t ds_type, const Extras &x = {}) {
  BwdResult r;
  r.dq.assign(static_cast<size_t>(a.b * a.h_q * a.s_q * a.d), 0.0);
  r.dk.assign(static_cast<size_t>(a.b * a.h_kv * a.s_kv * a.d), 0.0);
  r.dv.assign(static_cast<size_t>(a.b * a.h_kv * a.s_kv * a.d_v), 0.0);
  const double scale = static_cast<float>(attn_scale);
  auto Q = [&](int64_t b, int64_t h, int64_t i, int64_t c) {
    return q[((b * a.h_q + h) * a.s_q + i) * a.d + c];
  };
  auto K = [&](int64_t b, int64_t g, int64_t j, int64_t c) {
    return k[((b * a.h_kv + g) * a.s_kv + j) * a.d + c];
  };
  auto V = [&](int64_t b, int64_t g, int64_t j, int64_t c) {
    return v[((b * a.h_kv + g) * a.s_kv + j) * a.d_v + c];
  };
  auto row = [&](const std::vector<double> &t, int64_t b, int64_t h, int64_t i, int64_t c) {
    return t[((b * a.h_q + h) * a.s_q + i) * a.d_v + c];
  };
  for (int64_t b = 0; b < a.b; ++b)
    for (int64_t h = 0; h < a.h_q; ++h) {
      const int64_t g = h / (a.h_q / a.h_kv);
      std::vector<std::vector<double>> p8(a.s_q, std::vector<double>(a.s_kv, 0.0));
      std::vector<std::vector<double>> ds8 = p8;
      for (int64_t i = 0; i < a.s_q; ++i) {
        double delta = 0;
        for (int64_t c = 0; c < a.d_v; ++c) delta += row(d_o, b, h, i, c) * row(o, b, h, i, c);
        delta *= sc.descale_do * sc.descale_o * x.drop_scale_inv;
        for (int64_t j = 0; j < a.s_kv; ++j) {
          if (!x.keeps(a, band, b, i, j)) continue;
          double s = 0, dp = 0;
          for (int64_t c = 0; c < a.d; ++c) s += Q(b, h, i, c) * K(b, g, j, c);
          for (int64_t c = 0; c < a.d_v; ++c) dp += row(d_o, b, h, i, c) * V(b, g, j, c);
          s = s * scale * sc.descale_q * sc.descale_k;
          const double p = std::exp(s - stats[(b * a.h_q + h) * a.s_q + i]);
          const double m = x.mask(a, b, h, i, j);
          dp = dp * sc.descale_do * sc.descale_v * m;
          const double ds = (dp - delta) * p * x.drop_scale * scale;
          r.amax_dp = std::max(r.amax_dp, std::fabs(ds));
          p8[i][j] = round_fp8(p_type, p * m * x.drop_scale * sc.scale_s);
          ds8[i][j] = round_fp8(ds_type, ds * sc.scale_dp);
        }
      }
      for (int64_t i = 0; i < a.s_q; ++i)
        for (int64_t c = 0; c < a.d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < a.s_kv; ++j) acc += ds8[i][j] * K(b, g, j, c);
          r.dq[((b * a.h_q + h) * a.s_q + i) * a.d + c] = acc;
        }
      for (int64_t j = 0; j < a.s_kv; ++j) {
        for (int64_t c = 0; c < a.d; ++c) {
          double acc = 0;
          for (int64_t i = 0; i < a.s_q; ++i) acc += ds8[i][j] * Q(b, h, i, c);
          r.dk[((b * a.h_kv + g) * a.s_kv + j) * a.d + c] += acc;
        }
        for (int64_t c = 0; c < a.d_v; ++c) {
          double acc = 0;
          for (int64_t i = 0; i < a.s_q; ++i) acc += p8[i][j] * row(d_o, b, h, i, c);
          r.dv[((b * a.h_kv + g) * a.s_kv + j) * a.d_v + c] += acc;
        }
      }
    }
  auto finish = [](std::vector<double> &x, double f) {
    double amax = 0;
    for (double &e : x) {
      e *= f;
      amax = std::max(amax, std::fabs(e));
    }
    return amax;
  };
  r.amax_dq = finish(r.dq, sc.descale_dp * sc.descale_k);
  r.amax_dk = finish(r.dk, sc.descale_dp * sc.descale_q);
  r.amax_dv = finish(r.dv, sc.descale_s * sc.descale_do);
  return r;
}

inline BwdResult attention_backward(const AttnShape &a, const std::vector<double> &q,
                                    const std::vector<double> &k, const std::vector<double> &v,
                                    const std::vector<double> &o, const std::vector<double> &d_o,
                                    const std::vector<double> &stats, const BwdScales &sc,
                                    double attn_scale, bool causal, cudnnfe_dtype_t p_type,
                                    cudnnfe_dtype_t ds_type) {
  return attention_backward(a, q, k, v, o, d_o, stats, sc, attn_scale, Band::causal(causal), p_type,
                            ds_type);
}

// Largest power of two p with amax * p <= target (a delayed-scaling style
// scale factor); 1 when amax is 0.
inline double pow2_scale(double amax, double target) {
  if (!(amax > 0)) return 1.0;
  return std::ldexp(1.0, static_cast<int>(std::floor(std::log2(target / amax))));
}

}  // namespace fp8t
