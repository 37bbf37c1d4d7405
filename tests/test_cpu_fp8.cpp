// FP8 on the CPU reference, through the public C API: FP8 attention forward
// and backward (cudnnfe_graph_add_sdpa_fp8[_backward]) against the
// straightforward loops of fp8_test_support.h and against the FLOAT
// attention ops; FP8 matmul built from existing ops; graph JSON round trips;
// and the rules (bad input gives a status and a message naming node,
// tensor and rule).
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fp8_test_support.h"
#include "harness.h"

namespace {

using fp8t::Dims;
using fp8t::Fp8Host;

constexpr cudnnfe_dtype_t E4M3 = CUDNNFE_DTYPE_FP8_E4M3;
constexpr cudnnfe_dtype_t E5M2 = CUDNNFE_DTYPE_FP8_E5M2;
constexpr cudnnfe_dtype_t F32 = CUDNNFE_DTYPE_FLOAT;

// ---- graph helpers ----

class G {
 public:
  G() { cudnnfe_graph_create(&g_); }
  ~G() { cudnnfe_graph_destroy(g_); }
  G(const G &) = delete;
  G &operator=(const G &) = delete;
  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
                const Dims &strides = {}) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, dtype, static_cast<int32_t>(dims.size()),
                                      dims.data(), strides.empty() ? nullptr : strides.data(),
                                      &uid));
    return uid;
  }
  int64_t one(const char *name) { return input(name, F32, {1, 1, 1, 1}); }
  void output(int64_t uid) { CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1)); }
  bool build() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_status_t s = cudnnfe_graph_build(g_, nullptr, &o);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  build failed: %s: %s\n", cudnnfe_status_name(s), cudnnfe_graph_last_error(g_));
    return s == CUDNNFE_STATUS_OK;
  }
  bool execute(const std::vector<cudnnfe_binding_t> &bindings) const {
    cudnnfe_handle_t *h = nullptr;
    if (cudnnfe_handle_create(&h, -1) != CUDNNFE_STATUS_OK) return false;
    cudnnfe_status_t s =
        cudnnfe_graph_execute(g_, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  execute failed: %s: %s\n", cudnnfe_status_name(s),
                  cudnnfe_handle_last_error(h));
    cudnnfe_handle_destroy(h);
    return s == CUDNNFE_STATUS_OK;
  }
  Dims strides(int64_t uid) const {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, d, s, CUDNNFE_MAX_DIMS, &rank));
    return Dims(s, s + rank);
  }

 private:
  cudnnfe_graph_t *g_ = nullptr;
};

// The test loops' band for the C options (causal_mask is window_right 0).
fp8t::Band band_of(bool causal, int64_t left, int64_t right,
                   cudnnfe_diagonal_alignment_t alignment) {
  fp8t::Band b;
  b.left = left;
  b.right = causal ? 0 : right;
  b.bottom_right = alignment == CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  return b;
}

// The option tensors of an FP8 attention node: padding (x.seq_q,
// x.seq_kv), a given dropout mask (x.drop_mask, x.drop_scale and, backward,
// x.drop_scale_inv) and the forward's ALiBi (x.alibi); x also gives the
// test loops their values.
struct OptionTensors {
  fp8t::Extras x;
  int64_t seq_q = 0, seq_kv = 0, drop_mask = 0, drop_scale = 0, drop_scale_inv = 0, sink = 0;

  template <class Options>
  void add(G &g, const fp8t::AttnShape &a, Options &opt) {
    if (!x.seq_q.empty()) {
      opt.padding_mask = 1;
      opt.seq_len_q = seq_q = g.input("seq_len_q", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
      opt.seq_len_kv = seq_kv = g.input("seq_len_kv", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
    }
    if (!x.drop_mask.empty()) {
      opt.dropout_mask = drop_mask = g.input("dropout_mask", F32, {a.b, a.h_q, a.s_q, a.s_kv});
      opt.dropout_scale = drop_scale = g.one("dropout_scale");
    }
  }
  void add_sink(G &g, const fp8t::AttnShape &a, cudnnfe_sdpa_fp8_options_t &opt) {
    if (!x.sink.empty()) opt.sink_token = sink = g.input("sink", F32, {1, a.h_q, 1, 1});
  }
  void add_scale_inv(G &g, cudnnfe_sdpa_fp8_backward_options_t &opt) {
    if (!x.drop_mask.empty()) opt.dropout_scale_inv = drop_scale_inv = g.one("dropout_scale_inv");
  }
  // Their bindings, to buffers in `keep` (alive until the execute).
  void bind(std::vector<cudnnfe_binding_t> &b, std::vector<std::vector<float>> &keep,
            std::vector<std::vector<int32_t>> &lengths) const {
    keep.reserve(4);
    lengths.reserve(2);
    if (seq_q) {
      lengths.emplace_back(x.seq_q.begin(), x.seq_q.end());
      b.push_back({seq_q, lengths.back().data()});
      lengths.emplace_back(x.seq_kv.begin(), x.seq_kv.end());
      b.push_back({seq_kv, lengths.back().data()});
    }
    if (drop_mask) {
      keep.emplace_back(x.drop_mask.begin(), x.drop_mask.end());
      b.push_back({drop_mask, keep.back().data()});
      keep.emplace_back(1, static_cast<float>(x.drop_scale));
      b.push_back({drop_scale, keep.back().data()});
    }
    if (drop_scale_inv) {
      keep.emplace_back(1, static_cast<float>(x.drop_scale_inv));
      b.push_back({drop_scale_inv, keep.back().data()});
    }
    if (sink) {
      keep.emplace_back(x.sink.begin(), x.sink.end());
      b.push_back({sink, keep.back().data()});
    }
  }
};

// A forward FP8 attention graph and the UIDs of its tensors.
struct Fwd {
  fp8t::AttnShape a;
  cudnnfe_dtype_t type = E4M3;
  cudnnfe_dtype_t o_type = CUDNNFE_DTYPE_NOT_SET;  // NOT_SET: q's
  bool causal = false, stats = true, bshd = false;
  // The diagonal band (sliding window), the C options' defaults.
  int64_t window_left = -1, window_right = -1;
  cudnnfe_diagonal_alignment_t alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  double attn_scale = 0;
  // Padding, a given dropout mask and ALiBi (their values in x).
  OptionTensors opts;
  const fp8t::Extras &x() const { return opts.x; }
  int64_t q = 0, k = 0, v = 0, dq = 0, dk = 0, dv = 0, ds = 0, ss = 0, so = 0;
  int64_t o = 0, st = 0, amax_s = 0, amax_o = 0;

  Dims q_dims() const { return {a.b, a.h_q, a.s_q, a.d}; }
  Dims k_dims() const { return {a.b, a.h_kv, a.s_kv, a.d}; }
  Dims v_dims() const { return {a.b, a.h_kv, a.s_kv, a.d_v}; }
  Dims layout(const Dims &d) const { return bshd ? fp8t::bshd(d) : fp8t::packed(d); }
  fp8t::Band band() const { return band_of(causal, window_left, window_right, alignment); }

  cudnnfe_status_t add(G &g) {
    q = g.input("q", type, q_dims(), layout(q_dims()));
    k = g.input("k", type, k_dims(), layout(k_dims()));
    v = g.input("v", type, v_dims(), layout(v_dims()));
    dq = g.one("descale_q");
    dk = g.one("descale_k");
    dv = g.one("descale_v");
    ds = g.one("descale_s");
    ss = g.one("scale_s");
    so = g.one("scale_o");
    cudnnfe_sdpa_fp8_options_t opt;
    cudnnfe_sdpa_fp8_options_init(&opt);
    opt.name = "attn";
    opt.causal_mask = causal;
    opt.generate_stats = stats;
    opt.attn_scale = attn_scale;
    opt.window_left = window_left;
    opt.window_right = window_right;
    opt.diagonal_alignment = alignment;
    opts.add(g, a, opt);
    opts.add_sink(g, a, opt);
    opt.alibi_mask = opts.x.alibi;
    cudnnfe_status_t s = cudnnfe_graph_add_sdpa_fp8(g.get(), q, k, v, dq, dk, dv, ds, ss, so, &opt,
                                                    &o, &st, &amax_s, &amax_o);
    if (s != CUDNNFE_STATUS_OK) return s;
    g.output(o);
    if (o_type != CUDNNFE_DTYPE_NOT_SET) CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), o, o_type));
    if (stats) g.output(st);
    g.output(amax_s);
    g.output(amax_o);
    return s;
  }
};

// Host buffers of a forward run.
struct FwdData {
  Fp8Host q, k, v;
  float descale[6];  // descale_q, descale_k, descale_v, descale_s, scale_s, scale_o
  std::vector<unsigned char> o;
  std::vector<float> stats;
  float amax_s = NAN, amax_o = NAN;
  cudnnfe_dtype_t o_type = E4M3;
  Dims o_strides;
};

FwdData make_fwd_data(const Fwd &f, G &g, uint32_t seed, const fp8t::FwdScales &sc) {
  std::mt19937 rng(seed);
  FwdData d;
  // Values of magnitude up to 2 stored at scale 1/descale.
  d.q = fp8t::random_fp8(f.type, f.q_dims(), f.layout(f.q_dims()), 2.0, 1 / sc.descale_q, rng);
  d.k = fp8t::random_fp8(f.type, f.k_dims(), f.layout(f.k_dims()), 2.0, 1 / sc.descale_k, rng);
  d.v = fp8t::random_fp8(f.type, f.v_dims(), f.layout(f.v_dims()), 2.0, 1 / sc.descale_v, rng);
  const double values[6] = {sc.descale_q, sc.descale_k, sc.descale_v,
                            sc.descale_s, sc.scale_s,   sc.scale_o};
  for (int i = 0; i < 6; ++i) d.descale[i] = static_cast<float>(values[i]);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), f.o, &d.o_type));
  d.o_strides = g.strides(f.o);
  const Dims o_dims = {f.a.b, f.a.h_q, f.a.s_q, f.a.d_v};
  d.o.assign(static_cast<size_t>(fp8t::count(o_dims)) * cudnnfe_dtype_size(d.o_type), 0xff);
  d.stats.assign(static_cast<size_t>(f.a.b * f.a.h_q * f.a.s_q), NAN);
  return d;
}

bool run_fwd(const Fwd &f, G &g, FwdData &d) {
  std::vector<cudnnfe_binding_t> b = {
      {f.q, d.q.data()},     {f.k, d.k.data()},     {f.v, d.v.data()},     {f.dq, &d.descale[0]},
      {f.dk, &d.descale[1]}, {f.dv, &d.descale[2]}, {f.ds, &d.descale[3]}, {f.ss, &d.descale[4]},
      {f.so, &d.descale[5]}, {f.o, d.o.data()},     {f.amax_s, &d.amax_s}, {f.amax_o, &d.amax_o}};
  if (f.stats) b.push_back({f.st, d.stats.data()});
  std::vector<std::vector<float>> keep;
  std::vector<std::vector<int32_t>> lengths;
  f.opts.bind(b, keep, lengths);
  return g.execute(b);
}

// Decoded O in dense BHSD order.
std::vector<double> o_values(const Fwd &f, const FwdData &d) {
  const Dims dims = {f.a.b, f.a.h_q, f.a.s_q, f.a.d_v};
  std::vector<double> out;
  for (int64_t i = 0; i < fp8t::count(dims); ++i) {
    const int64_t off = fp8t::offset_of(i, dims, d.o_strides);
    if (fp8t::is_fp8(d.o_type)) {
      out.push_back(fp8t::decode(d.o_type, d.o[static_cast<size_t>(off)]));
    } else {  // HALF or BFLOAT16
      uint16_t bits;
      std::memcpy(&bits, &d.o[static_cast<size_t>(off) * 2], 2);
      if (d.o_type == CUDNNFE_DTYPE_BFLOAT16) {
        uint32_t x = static_cast<uint32_t>(bits) << 16;
        float v;
        std::memcpy(&v, &x, 4);
        out.push_back(v);
      } else {
        const int e = (bits >> 10) & 0x1f, m = bits & 0x3ff;
        double v = e == 0 ? std::ldexp(m, -24) : std::ldexp(m | 0x400, e - 25);
        out.push_back((bits & 0x8000) ? -v : v);
      }
    }
  }
  return out;
}

bool close(double got, double want, double rel) {
  if (got == want) return true;  // -inf stats of a row the band leaves empty
  return std::fabs(got - want) <= rel * std::fabs(want) + 1e-30;
}

// Runs a forward case and compares with the straightforward loops: FP8 O
// bit for bit (FP8 products and their sums are exact in double, so both
// sides round the same values), stats and amaxes to float precision.
void check_forward(Fwd f, uint32_t seed, const fp8t::FwdScales &sc) {
  G g;
  REQUIRE_OK(f.add(g));
  FwdData d = make_fwd_data(f, g, seed, sc);
  REQUIRE(g.build());
  REQUIRE(run_fwd(f, g, d));
  const double attn =
      f.attn_scale != 0 ? f.attn_scale : 1.0 / std::sqrt(static_cast<double>(f.a.d));
  fp8t::FwdResult want = fp8t::attention_forward(f.a, d.q.values(), d.k.values(), d.v.values(), sc,
                                                 attn, f.band(), f.type, true, f.x());
  const std::vector<double> got = o_values(f, d);
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double scaled = want.o_unscaled[i] * sc.scale_o;
    const double expected = fp8t::is_fp8(d.o_type) ? fp8t::round_fp8(d.o_type, scaled) : scaled;
    const double tol = fp8t::is_fp8(d.o_type) ? 0.0 : 4e-3 * std::fabs(scaled) + 1e-6;
    if (!(std::fabs(got[i] - expected) <= tol) && bad++ < 3)
      std::printf("  O[%zu] = %.9g, expected %.9g\n", i, got[i], expected);
  }
  CHECK_MSG(bad == 0, "%lld of %zu O elements differ", static_cast<long long>(bad), got.size());
  CHECK_MSG(close(d.amax_s, want.amax_s, 1e-6), "amax_s %.9g, expected %.9g", d.amax_s,
            want.amax_s);
  CHECK_MSG(close(d.amax_o, want.amax_o, 1e-6), "amax_o %.9g, expected %.9g", d.amax_o,
            want.amax_o);
  CHECK(want.amax_s > 0 && want.amax_o > 0);
  if (f.stats)
    for (size_t i = 0; i < d.stats.size(); ++i)
      if (!close(d.stats[i], want.stats[i], 1e-6)) {
        CHECK_MSG(false, "stats[%zu] %.9g, expected %.9g", i, d.stats[i], want.stats[i]);
        break;
      }
}

fp8t::FwdScales typical_fwd_scales() {
  fp8t::FwdScales sc;
  sc.descale_q = 1.0 / 64;
  sc.descale_k = 1.0 / 32;
  sc.descale_v = 1.0 / 128;
  sc.scale_s = 256;  // P <= 1
  sc.descale_s = 1.0 / 256;
  sc.scale_o = 64;
  return sc;
}

}  // namespace

// ---------------------------------------------------------------------------
// Forward numerics

TEST(cpu_sdpa_fp8_forward_matches_the_graph_definition) {
  Fwd f;
  f.a = {2, 2, 2, 5, 7, 8, 4};
  f.attn_scale = 0.3;
  check_forward(f, 1, typical_fwd_scales());
}

TEST(cpu_sdpa_fp8_forward_causal_gqa_bshd) {
  Fwd f;
  f.a = {1, 4, 2, 6, 6, 8, 8};
  f.causal = true;
  f.bshd = true;  // O follows q's BSHD order
  check_forward(f, 2, typical_fwd_scales());
}

TEST(cpu_sdpa_fp8_forward_e5m2_inference_half_output) {
  Fwd f;
  f.a = {1, 2, 1, 4, 9, 16, 8};
  f.type = E5M2;
  f.stats = false;
  f.o_type = CUDNNFE_DTYPE_HALF;
  check_forward(f, 3, typical_fwd_scales());
  Fwd e5;
  e5.a = f.a;
  e5.type = E5M2;
  e5.causal = true;
  check_forward(e5, 4, typical_fwd_scales());
}

// The diagonal band (issue 15): cudnn-frontend's causal-with-left-bound
// sliding window (right 0, top-left) with MQA and its d_qk = 192, d_v =
// 128 head dims; a two-sided bottom-right band; a left bound alone with
// s_q > s_kv, which leaves the last rows empty (O = 0, stats = -inf).
TEST(cpu_sdpa_fp8_forward_sliding_window) {
  Fwd f;
  f.a = {1, 7, 1, 40, 40, 192, 128};
  f.window_left = 9;
  f.window_right = 0;
  check_forward(f, 6, typical_fwd_scales());
  Fwd causal = f;
  causal.window_right = -1;
  causal.causal = true;  // the same band through the causal flag
  check_forward(causal, 6, typical_fwd_scales());

  Fwd two_sided;
  two_sided.a = {2, 4, 2, 6, 11, 8, 8};
  two_sided.window_left = 3;
  two_sided.window_right = 2;
  two_sided.alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  two_sided.bshd = true;
  check_forward(two_sided, 7, typical_fwd_scales());

  Fwd empty_rows;
  empty_rows.a = {1, 2, 2, 9, 4, 8, 8};
  empty_rows.window_left = 2;  // row i >= 5 sees no column j < 4
  check_forward(empty_rows, 8, typical_fwd_scales());
}

// The band changes the result: a window of 1 (each row sees its diagonal
// only) gives O = fp8(scale_s) * v_i, not the full softmax.
TEST(cpu_sdpa_fp8_forward_window_of_one) {
  Fwd f;
  f.a = {1, 1, 1, 5, 5, 8, 8};
  f.window_left = 1;
  f.window_right = 0;
  const fp8t::FwdScales sc = typical_fwd_scales();
  check_forward(f, 9, sc);
  G g;
  REQUIRE_OK(f.add(g));
  FwdData d = make_fwd_data(f, g, 9, sc);
  REQUIRE(g.build());
  REQUIRE(run_fwd(f, g, d));
  const std::vector<double> got = o_values(f, d), v = d.v.values();
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = fp8t::round_fp8(E4M3, v[i] * sc.descale_v * sc.scale_o);
    if (got[i] != want) ++bad;
  }
  CHECK_MSG(bad == 0, "%lld O elements are not v's row", static_cast<long long>(bad));
  CHECK(d.amax_s == 1.0f);
}

// The cast of P to FP8 before P·V is simulated: with scale_s = 2^-8 every
// probability is an E4M3 subnormal (step 2^-9) or zero, and O follows the
// quantized values, not the exact ones.
TEST(cpu_sdpa_fp8_forward_casts_p_before_pv) {
  Fwd f;
  f.a = {1, 1, 1, 4, 32, 8, 8};
  fp8t::FwdScales sc = typical_fwd_scales();
  sc.scale_s = 1.0 / 256;
  sc.descale_s = 256;
  check_forward(f, 5, sc);
  G g;
  REQUIRE_OK(f.add(g));
  FwdData d = make_fwd_data(f, g, 5, sc);
  REQUIRE(g.build());
  REQUIRE(run_fwd(f, g, d));
  const double attn = 1.0 / std::sqrt(8.0);
  fp8t::FwdResult exact = fp8t::attention_forward(f.a, d.q.values(), d.k.values(), d.v.values(), sc,
                                                  attn, false, f.type, /*cast_p=*/false);
  const std::vector<double> got = o_values(f, d);
  double diff = 0;
  for (size_t i = 0; i < got.size(); ++i)
    diff = std::max(diff, std::fabs(got[i] / sc.scale_o - exact.o_unscaled[i]));
  CHECK_MSG(diff > 0.05 * exact.amax_o, "O matches unquantized P (max diff %.3g of amax %.3g)",
            diff, exact.amax_o);
}

// Against the FLOAT attention op on the same (decoded) inputs: stats agree
// closely (they do not depend on FP8 casts) and dequantized O agrees within
// FP8 precision.
TEST(cpu_sdpa_fp8_forward_agrees_with_float_sdpa) {
  Fwd f;
  f.a = {2, 4, 2, 8, 8, 16, 16};
  f.causal = true;
  const fp8t::FwdScales sc = typical_fwd_scales();
  G g;
  REQUIRE_OK(f.add(g));
  FwdData d = make_fwd_data(f, g, 6, sc);
  REQUIRE(g.build());
  REQUIRE(run_fwd(f, g, d));

  // Dequantized inputs as FLOAT tensors.
  auto dequant = [](const Fp8Host &t, double descale) {
    std::vector<float> out;
    for (double x : t.values()) out.push_back(static_cast<float>(x * descale));
    return out;
  };
  std::vector<float> qf = dequant(d.q, sc.descale_q), kf = dequant(d.k, sc.descale_k),
                     vf = dequant(d.v, sc.descale_v);
  G fg;
  const int64_t q = fg.input("q", F32, f.q_dims()), k = fg.input("k", F32, f.k_dims()),
                v = fg.input("v", F32, f.v_dims());
  cudnnfe_sdpa_options_t opt;
  cudnnfe_sdpa_options_init(&opt);
  opt.causal_mask = 1;
  opt.generate_stats = 1;
  int64_t o = 0, st = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(fg.get(), q, k, v, &opt, &o, &st));
  fg.output(o);
  fg.output(st);
  REQUIRE(fg.build());
  std::vector<float> of(qf.size() / f.a.d * f.a.d_v), stf(d.stats.size());
  REQUIRE(fg.execute(
      {{q, qf.data()}, {k, kf.data()}, {v, vf.data()}, {o, of.data()}, {st, stf.data()}}));
  const std::vector<double> got = o_values(f, d);
  double amax = 0, worst = 0;
  for (float x : of) amax = std::max(amax, std::fabs(static_cast<double>(x)));
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::fabs(got[i] / sc.scale_o - of[i]));
  // P and O are each cast to E4M3 (relative step 1/8): well within 1/4 of
  // max|O| in the worst element.
  CHECK_MSG(worst <= 0.25 * amax, "max |O_fp8 - O_float| = %.3g, max|O| = %.3g", worst, amax);
  CHECK_MSG(std::fabs(d.amax_o - amax) <= 0.1 * amax, "amax_o %.4g vs max|O_float| %.4g", d.amax_o,
            amax);
  for (size_t i = 0; i < stf.size(); ++i)
    if (!close(d.stats[i], stf[i], 1e-5)) {
      CHECK_MSG(false, "stats[%zu]: fp8 %.8g, float %.8g", i, d.stats[i], stf[i]);
      break;
    }
}

// ---------------------------------------------------------------------------
// Backward numerics

namespace {

struct Bwd {
  fp8t::AttnShape a;
  cudnnfe_dtype_t type = E4M3, do_type = E4M3, o_type = E4M3;
  bool causal = false;
  int64_t window_left = -1, window_right = -1;
  cudnnfe_diagonal_alignment_t alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  double attn_scale = 0;
  OptionTensors opts;  // padding and dropout, as the forward's
  int64_t q = 0, k = 0, v = 0, o = 0, d_o = 0, stats = 0;
  int64_t scales[12] = {};
  int64_t dq = 0, dk = 0, dv = 0, amax[4] = {};

  cudnnfe_status_t add(G &g) {
    const Dims qd = {a.b, a.h_q, a.s_q, a.d}, kd = {a.b, a.h_kv, a.s_kv, a.d},
               vd = {a.b, a.h_kv, a.s_kv, a.d_v}, od = {a.b, a.h_q, a.s_q, a.d_v};
    q = g.input("q", type, qd);
    k = g.input("k", type, kd);
    v = g.input("v", type, vd);
    o = g.input("o", o_type, od);
    d_o = g.input("dO", do_type, od);
    stats = g.input("stats", F32, {a.b, a.h_q, a.s_q, 1});
    const char *names[12] = {"descale_q",  "descale_k", "descale_v",  "descale_o",
                             "descale_dO", "descale_s", "descale_dP", "scale_s",
                             "scale_dQ",   "scale_dK",  "scale_dV",   "scale_dP"};
    for (int i = 0; i < 12; ++i) scales[i] = g.one(names[i]);
    cudnnfe_sdpa_fp8_backward_options_t opt;
    cudnnfe_sdpa_fp8_backward_options_init(&opt);
    opt.name = "attn_bwd";
    opt.causal_mask = causal;
    opt.attn_scale = attn_scale;
    opt.window_left = window_left;
    opt.window_right = window_right;
    opt.diagonal_alignment = alignment;
    opts.add(g, a, opt);
    opts.add_scale_inv(g, opt);
    cudnnfe_status_t s = cudnnfe_graph_add_sdpa_fp8_backward(
        g.get(), q, k, v, o, d_o, stats, scales[0], scales[1], scales[2], scales[3], scales[4],
        scales[5], scales[6], scales[7], scales[8], scales[9], scales[10], scales[11], &opt, &dq,
        &dk, &dv, &amax[0], &amax[1], &amax[2], &amax[3]);
    if (s != CUDNNFE_STATUS_OK) return s;
    for (int64_t out : {dq, dk, dv, amax[0], amax[1], amax[2], amax[3]}) g.output(out);
    return s;
  }
};

float as_float(double x) {
  return static_cast<float>(x);
}

}  // namespace

namespace {

// Forward (library) -> backward (library) against the loops; the backward
// takes the forward's options (f.opts). `what` names the case.
void check_backward(Fwd f, cudnnfe_dtype_t do_type, uint32_t seed, const char *what) {
  const int variant = static_cast<int>(seed);
  const fp8t::FwdScales fs = typical_fwd_scales();
  G fg;
  REQUIRE_OK(f.add(fg));
  FwdData fd = make_fwd_data(f, fg, seed, fs);
  REQUIRE(fg.build());
  REQUIRE(run_fwd(f, fg, fd));

  Bwd b;
  b.a = f.a;
  b.opts.x = f.x();
  b.causal = f.causal;
  b.window_left = f.window_left;
  b.window_right = f.window_right;
  b.alignment = f.alignment;
  b.attn_scale = f.attn_scale;
  b.do_type = do_type;
  G g;
  REQUIRE_OK(b.add(g));
  REQUIRE(g.build());
  std::mt19937 rng(seed + 10);
  const Dims od = {f.a.b, f.a.h_q, f.a.s_q, f.a.d_v};
  Fp8Host d_o = fp8t::random_fp8(b.do_type, od, {}, 1.0, 16, rng);
  fp8t::BwdScales sc;
  sc.descale_q = fs.descale_q;
  sc.descale_k = fs.descale_k;
  sc.descale_v = fs.descale_v;
  sc.descale_o = 1 / fs.scale_o;
  sc.descale_do = 1.0 / 16;
  sc.scale_s = 256;
  sc.descale_s = 1.0 / 256;
  sc.scale_dp = 512;
  sc.descale_dp = 1.0 / 512;
  sc.scale_dq = 64;
  sc.scale_dk = 32;
  sc.scale_dv = 16;
  float sv[12] = {as_float(sc.descale_q),  as_float(sc.descale_k),  as_float(sc.descale_v),
                  as_float(sc.descale_o),  as_float(sc.descale_do), as_float(sc.descale_s),
                  as_float(sc.descale_dp), as_float(sc.scale_s),    as_float(sc.scale_dq),
                  as_float(sc.scale_dk),   as_float(sc.scale_dv),   as_float(sc.scale_dp)};
  const size_t nq = static_cast<size_t>(fp8t::count({f.a.b, f.a.h_q, f.a.s_q, f.a.d}));
  const size_t nk = static_cast<size_t>(fp8t::count({f.a.b, f.a.h_kv, f.a.s_kv, f.a.d}));
  const size_t nv = static_cast<size_t>(fp8t::count({f.a.b, f.a.h_kv, f.a.s_kv, f.a.d_v}));
  std::vector<uint8_t> dq(nq, 0xff), dk(nk, 0xff), dv(nv, 0xff);
  float amax[4] = {NAN, NAN, NAN, NAN};
  std::vector<cudnnfe_binding_t> bind = {
      {b.q, fd.q.data()},    {b.k, fd.k.data()},    {b.v, fd.v.data()},
      {b.o, fd.o.data()},    {b.d_o, d_o.data()},   {b.stats, fd.stats.data()},
      {b.dq, dq.data()},     {b.dk, dk.data()},     {b.dv, dv.data()},
      {b.amax[0], &amax[0]}, {b.amax[1], &amax[1]}, {b.amax[2], &amax[2]},
      {b.amax[3], &amax[3]}};
  for (int i = 0; i < 12; ++i) bind.push_back({b.scales[i], &sv[i]});
  std::vector<std::vector<float>> keep;
  std::vector<std::vector<int32_t>> lengths;
  b.opts.bind(bind, keep, lengths);
  REQUIRE(g.execute(bind));

  Fp8Host o_host;
  o_host.dtype = E4M3;
  o_host.dims = od;
  o_host.strides = fp8t::packed(od);
  o_host.codes.assign(fd.o.begin(), fd.o.end());
  std::vector<double> stats(fd.stats.begin(), fd.stats.end());
  const double attn = f.attn_scale != 0 ? f.attn_scale : 1.0 / std::sqrt(8.0);
  fp8t::BwdResult want =
      fp8t::attention_backward(f.a, fd.q.values(), fd.k.values(), fd.v.values(), o_host.values(),
                               d_o.values(), stats, sc, attn, f.band(), E4M3, b.do_type, f.x());
  auto compare = [&](const char *what, const std::vector<uint8_t> &got,
                     const std::vector<double> &unscaled, double scale) {
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const uint8_t expected = fp8t::encode(E4M3, unscaled[i] * scale);
      if (got[i] != expected && bad++ < 3)
        std::printf("  %s[%zu] = %g, expected %g\n", what, i, fp8t::decode(E4M3, got[i]),
                    fp8t::decode(E4M3, expected));
    }
    CHECK_MSG(bad == 0, "%s (%d): %lld %s elements differ", what, variant,
              static_cast<long long>(bad), what);
  };
  compare("dQ", dq, want.dq, sc.scale_dq);
  compare("dK", dk, want.dk, sc.scale_dk);
  compare("dV", dv, want.dv, sc.scale_dv);
  const double want_amax[4] = {want.amax_dq, want.amax_dk, want.amax_dv, want.amax_dp};
  const char *names[4] = {"amax_dQ", "amax_dK", "amax_dV", "amax_dP"};
  for (int i = 0; i < 4; ++i) {
    CHECK_MSG(close(amax[i], want_amax[i], 1e-6), "%s (%d): %s %.9g, expected %.9g", what, variant,
              names[i], amax[i], want_amax[i]);
    CHECK(want_amax[i] > 0);
  }
}

}  // namespace

// Forward (library) -> backward (library) against the loops, with GQA,
// the causal mask and dO in E5M2 (the "hybrid" FP8 recipe); variant 2 a
// bottom-right band of both bounds (sliding window).
TEST(cpu_sdpa_fp8_backward_matches_the_graph_definition) {
  for (int variant = 0; variant < 3; ++variant) {
    Fwd f;
    const fp8t::AttnShape shapes[3] = {
        {1, 4, 2, 6, 5, 8, 8}, {2, 2, 2, 5, 7, 8, 4}, {1, 4, 2, 6, 9, 8, 8}};
    f.a = shapes[variant];
    f.causal = variant == 0;
    f.attn_scale = variant == 0 ? 0.0 : 0.25;
    if (variant == 2) {
      f.window_left = 3;
      f.window_right = 1;
      f.alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
    }
    check_backward(f, variant == 0 ? E5M2 : E4M3, static_cast<uint32_t>(10 + variant), "band");
  }
}

// Against the FLOAT attention backward (itself checked by finite
// differences in test_cpu_reference) on the dequantized inputs: the FP8
// gradients agree within FP8 precision.
TEST(cpu_sdpa_fp8_backward_agrees_with_float_backward) {
  Fwd f;
  f.a = {1, 2, 2, 16, 16, 16, 16};
  f.causal = true;
  const fp8t::FwdScales fs = typical_fwd_scales();
  G fg;
  REQUIRE_OK(f.add(fg));
  FwdData fd = make_fwd_data(f, fg, 30, fs);
  REQUIRE(fg.build());
  REQUIRE(run_fwd(f, fg, fd));

  Bwd b;
  b.a = f.a;
  b.causal = true;
  G g;
  REQUIRE_OK(b.add(g));
  REQUIRE(g.build());
  std::mt19937 rng(31);
  const Dims od = {1, 2, 16, 16};
  Fp8Host d_o = fp8t::random_fp8(E4M3, od, {}, 1.0, 64, rng);
  // Scales: the library's own amaxes (two passes) pick dS's and the
  // gradients' scales, as delayed scaling would.
  float sv[12] = {static_cast<float>(fs.descale_q),
                  static_cast<float>(fs.descale_k),
                  static_cast<float>(fs.descale_v),
                  static_cast<float>(1 / fs.scale_o),
                  1.0f / 64,
                  1.0f / 256,
                  1.0f,
                  256.0f,
                  1.0f,
                  1.0f,
                  1.0f,
                  1.0f};
  std::vector<uint8_t> dq(512), dk(512), dv(512);
  float amax[4] = {};
  std::vector<cudnnfe_binding_t> bind = {
      {b.q, fd.q.data()},    {b.k, fd.k.data()},    {b.v, fd.v.data()},
      {b.o, fd.o.data()},    {b.d_o, d_o.data()},   {b.stats, fd.stats.data()},
      {b.dq, dq.data()},     {b.dk, dk.data()},     {b.dv, dv.data()},
      {b.amax[0], &amax[0]}, {b.amax[1], &amax[1]}, {b.amax[2], &amax[2]},
      {b.amax[3], &amax[3]}};
  for (int i = 0; i < 12; ++i) bind.push_back({b.scales[i], &sv[i]});
  REQUIRE(g.execute(bind));
  sv[11] = static_cast<float>(fp8t::pow2_scale(amax[3], 256));  // scale_dP
  sv[6] = 1.0f / sv[11];                                        // descale_dP
  REQUIRE(g.execute(bind));
  for (int i = 0; i < 3; ++i) sv[8 + i] = static_cast<float>(fp8t::pow2_scale(amax[i], 256));
  REQUIRE(g.execute(bind));

  // FLOAT backward on dequantized q, k, v, o, dO and the FP8 forward's stats.
  auto dequant = [](const Fp8Host &t, double descale) {
    std::vector<float> out;
    for (double x : t.values()) out.push_back(static_cast<float>(x * descale));
    return out;
  };
  Fp8Host o_host;
  o_host.dtype = E4M3;
  o_host.dims = od;
  o_host.strides = fp8t::packed(od);
  o_host.codes.assign(fd.o.begin(), fd.o.end());
  std::vector<float> qf = dequant(fd.q, fs.descale_q), kf = dequant(fd.k, fs.descale_k),
                     vf = dequant(fd.v, fs.descale_v), of = dequant(o_host, 1 / fs.scale_o),
                     dof = dequant(d_o, 1.0 / 64);
  G rg;
  const int64_t q = rg.input("q", F32, od), k = rg.input("k", F32, od), v = rg.input("v", F32, od),
                o = rg.input("o", F32, od), dO = rg.input("dO", F32, od),
                st = rg.input("stats", F32, {1, 2, 16, 1});
  cudnnfe_sdpa_backward_options_t opt;
  cudnnfe_sdpa_backward_options_init(&opt);
  opt.causal_mask = 1;
  int64_t rdq = 0, rdk = 0, rdv = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(rg.get(), q, k, v, o, dO, st, &opt, &rdq, &rdk, &rdv));
  rg.output(rdq);
  rg.output(rdk);
  rg.output(rdv);
  REQUIRE(rg.build());
  std::vector<float> fdq(512), fdk(512), fdv(512);
  REQUIRE(rg.execute({{q, qf.data()},
                      {k, kf.data()},
                      {v, vf.data()},
                      {o, of.data()},
                      {dO, dof.data()},
                      {st, fd.stats.data()},
                      {rdq, fdq.data()},
                      {rdk, fdk.data()},
                      {rdv, fdv.data()}}));
  auto check = [&](const char *what, const std::vector<uint8_t> &got, float scale,
                   const std::vector<float> &ref, float amax_got) {
    double amax_ref = 0, worst = 0;
    for (float x : ref) amax_ref = std::max(amax_ref, std::fabs(static_cast<double>(x)));
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::fabs(fp8t::decode(E4M3, got[i]) / scale - ref[i]));
    CHECK_MSG(amax_ref > 0 && worst <= 0.2 * amax_ref,
              "%s: max |fp8 - float| %.3g, max|float| %.3g", what, worst, amax_ref);
    CHECK_MSG(std::fabs(amax_got - amax_ref) <= 0.1 * amax_ref, "%s: amax %.4g vs float %.4g", what,
              amax_got, amax_ref);
  };
  check("dQ", dq, sv[8], fdq, amax[0]);
  check("dK", dk, sv[9], fdk, amax[1]);
  check("dV", dv, sv[10], fdv, amax[2]);
}

// ---------------------------------------------------------------------------
// FP8 matmul from existing ops: c' = (A·B in FLOAT) * descale_a * descale_b,
// amax = AMAX(c'), C = c' * scale_c cast to FP8 (cudnn-frontend's FP8 matmul
// block), checked against the loops bit for bit.

TEST(cpu_fp8_matmul_from_existing_ops) {
  const int64_t batch = 2, m = 4, k = 16, n = 3;
  G g;
  // B column-major in its last two dims (K contiguous), as FP8 GEMMs want.
  const int64_t a = g.input("a", E4M3, {batch, m, k});
  const int64_t b = g.input("b", E5M2, {batch, k, n}, {k * n, 1, k});
  const int64_t da = g.input("descale_a", F32, {1, 1, 1});
  const int64_t db = g.input("descale_b", F32, {1, 1, 1});
  int64_t sc = 0;
  REQUIRE_OK(cudnnfe_graph_add_scalar(g.get(), "scale_c", F32, 8.0, &sc));
  int64_t c = 0, c1 = 0, c2 = 0, amax = 0, out = 0;
  REQUIRE_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, c, da, 0, nullptr, &c1));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, c1, db, 0, nullptr, &c2));
  REQUIRE_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_AMAX, c2, nullptr, &amax));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, c2, sc, 0, nullptr, &out));
  g.output(amax);
  g.output(out);
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), out, E4M3));
  REQUIRE(g.build());
  cudnnfe_dtype_t t = CUDNNFE_DTYPE_NOT_SET;
  CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), c, &t));
  CHECK(t == F32);  // the matmul's result is a FLOAT intermediate
  CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), amax, &t));
  CHECK(t == E4M3 || t == F32);

  std::mt19937 rng(40);
  Fp8Host ha = fp8t::random_fp8(E4M3, {batch, m, k}, {}, 1.0, 128, rng);
  Fp8Host hb = fp8t::random_fp8(E5M2, {batch, k, n}, {k * n, 1, k}, 1.0, 1024, rng);
  float descale_a = 1.0f / 128, descale_b = 1.0f / 1024;
  std::vector<uint8_t> hc(static_cast<size_t>(batch * m * n), 0xff);
  float hamax[4] = {NAN, NAN, NAN, NAN};  // room for any amax dtype
  REQUIRE(g.execute({{a, ha.data()},
                     {b, hb.data()},
                     {da, &descale_a},
                     {db, &descale_b},
                     {amax, hamax},
                     {out, hc.data()}}));
  const std::vector<double> av = ha.values(), bv = hb.values();
  double want_amax = 0;
  int64_t bad = 0;
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double acc = 0;
        for (int64_t x = 0; x < k; ++x) acc += av[(i * m + r) * k + x] * bv[(i * k + x) * n + col];
        acc *= (1.0 / 128) * (1.0 / 1024);
        want_amax = std::max(want_amax, std::fabs(acc));
        const size_t idx = static_cast<size_t>((i * m + r) * n + col);
        if (hc[idx] != fp8t::encode(E4M3, acc * 8.0)) ++bad;
      }
  CHECK_MSG(bad == 0, "%lld FP8 C elements differ", static_cast<long long>(bad));
  // amax's type: set it FLOAT to read a float (an output with no io type
  // takes its producer's first bound input's type).
  (void)want_amax;
}

TEST(cpu_fp8_matmul_amax_as_float) {
  G g;
  const int64_t a = g.input("a", E4M3, {1, 2, 4});
  const int64_t b = g.input("b", E4M3, {1, 4, 2}, {8, 1, 4});
  const int64_t da = g.input("descale_a", F32, {1, 1, 1});
  int64_t c = 0, c1 = 0, amax = 0, out = 0, sc = 0;
  REQUIRE_OK(cudnnfe_graph_add_scalar(g.get(), "scale_c", F32, 0.5, &sc));
  REQUIRE_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, c, da, 0, nullptr, &c1));
  REQUIRE_OK(cudnnfe_graph_add_reduction(g.get(), CUDNNFE_REDUCTION_AMAX, c1, nullptr, &amax));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, c1, sc, 0, nullptr, &out));
  g.output(amax);
  g.output(out);
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), amax, F32));
  CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), out, E4M3));
  REQUIRE(g.build());
  // a = [[1,2,3,4],[-1,-2,-3,-4]] * 2, b = identity-ish columns.
  std::vector<uint8_t> ha, hb(8);
  for (double x : {1, 2, 3, 4, -1, -2, -3, -4}) ha.push_back(fp8t::encode(E4M3, 2 * x));
  // b column 0 = [1,0,0,1], column 1 = [0,1,1,0] (column-major storage).
  const double bcols[8] = {1, 0, 0, 1, 0, 1, 1, 0};
  for (int i = 0; i < 8; ++i) hb[i] = fp8t::encode(E4M3, bcols[i]);
  float descale = 0.25f, amax_v = NAN;
  uint8_t hc[4];
  REQUIRE(g.execute({{a, ha.data()}, {b, hb.data()}, {da, &descale}, {amax, &amax_v}, {out, hc}}));
  // c' = 0.25 * 2 * [[1+4, 2+3], [-5, -5]] = [[2.5, 2.5], [-2.5, -2.5]].
  CHECK(amax_v == 2.5f);
  for (int i = 0; i < 4; ++i)
    CHECK_MSG(fp8t::decode(E4M3, hc[i]) == (i < 2 ? 1.25 : -1.25), "C[%d] = %g", i,
              fp8t::decode(E4M3, hc[i]));
}

// ---------------------------------------------------------------------------
// Graph JSON

namespace {

std::string serialize(cudnnfe_graph_t *g) {
  size_t size = 0;
  if (cudnnfe_graph_serialize(g, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string s(size, '\0');
  if (cudnnfe_graph_serialize(g, &s[0], size, &size) != CUDNNFE_STATUS_OK) return "";
  return s;
}

}  // namespace

TEST(cpu_sdpa_fp8_graph_json_round_trip) {
  // Forward and backward in one graph: O and stats feed the backward; the
  // band is a causal mask with a left bound (sliding window).
  G g;
  Fwd f;
  f.a = {1, 2, 1, 4, 4, 8, 8};
  f.causal = true;
  f.window_left = 2;
  f.attn_scale = 0.375;
  REQUIRE_OK(f.add(g));
  const Dims od = {1, 2, 4, 8};
  const int64_t d_o = g.input("dO", E5M2, od);
  int64_t sc[12];
  const char *names[12] = {"b_descale_q",  "b_descale_k", "b_descale_v",  "b_descale_o",
                           "b_descale_dO", "b_descale_s", "b_descale_dP", "b_scale_s",
                           "b_scale_dQ",   "b_scale_dK",  "b_scale_dV",   "b_scale_dP"};
  for (int i = 0; i < 12; ++i) sc[i] = g.one(names[i]);
  cudnnfe_sdpa_fp8_backward_options_t bo;
  cudnnfe_sdpa_fp8_backward_options_init(&bo);
  bo.name = "attn_bwd";
  bo.causal_mask = 1;
  bo.window_left = 2;
  bo.attn_scale = 0.375;
  int64_t dq, dk, dv, a0, a1, a2, a3;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_fp8_backward(
      g.get(), f.q, f.k, f.v, f.o, d_o, f.st, sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6],
      sc[7], sc[8], sc[9], sc[10], sc[11], &bo, &dq, &dk, &dv, &a0, &a1, &a2, &a3));
  for (int64_t out : {dq, dk, dv, a0, a1, a2, a3}) g.output(out);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  const std::string json = serialize(g.get());
  REQUIRE(!json.empty());
  CHECK(json.find("\"sdpa_fp8\"") != std::string::npos);
  CHECK(json.find("\"sdpa_fp8_backward\"") != std::string::npos);
  CHECK(json.find("\"descale_dP\"") != std::string::npos);
  CHECK(json.find("\"amax_dQ\"") != std::string::npos);
  CHECK(json.find("\"window_left\": 2") != std::string::npos);

  G loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded.get(), json.data(), json.size()));
  CHECK(serialize(loaded.get()) == json);
  size_t nodes = 0;
  CHECK_OK(cudnnfe_graph_get_node_count(loaded.get(), &nodes));
  CHECK(nodes == 2);

  // Both graphs run on the CPU reference and agree bit for bit.
  REQUIRE(g.build());
  REQUIRE(loaded.build());
  std::mt19937 rng(50);
  Fp8Host q = fp8t::random_fp8(E4M3, f.q_dims(), {}, 2, 64, rng);
  Fp8Host k = fp8t::random_fp8(E4M3, f.k_dims(), {}, 2, 32, rng);
  Fp8Host v = fp8t::random_fp8(E4M3, f.v_dims(), {}, 2, 128, rng);
  Fp8Host dO = fp8t::random_fp8(E5M2, od, {}, 1, 16, rng);
  float fwd_sc[6] = {1.0f / 64, 1.0f / 32, 1.0f / 128, 1.0f / 256, 256, 64};
  float bwd_sc[12] = {1.0f / 64,  1.0f / 32, 1.0f / 128, 1.0f / 64, 1.0f / 16, 1.0f / 256,
                      1.0f / 512, 256,       64,         32,        16,        512};
  auto run = [&](G &graph, std::vector<uint8_t> &bytes) {
    std::vector<uint8_t> o(64), grads(3 * 64);
    std::vector<float> stats(8), amaxes(6);
    std::vector<cudnnfe_binding_t> b = {
        {f.q, q.data()},  {f.k, k.data()},      {f.v, v.data()},        {d_o, dO.data()},
        {f.o, o.data()},  {f.st, stats.data()}, {f.amax_s, &amaxes[0]}, {f.amax_o, &amaxes[1]},
        {dq, &grads[0]},  {dk, &grads[64]},     {dv, &grads[128]},      {a0, &amaxes[2]},
        {a1, &amaxes[3]}, {a2, &amaxes[4]},     {a3, &amaxes[5]}};
    const int64_t fwd_uids[6] = {f.dq, f.dk, f.dv, f.ds, f.ss, f.so};
    for (int i = 0; i < 6; ++i) b.push_back({fwd_uids[i], &fwd_sc[i]});
    for (int i = 0; i < 12; ++i) b.push_back({sc[i], &bwd_sc[i]});
    bool ok = graph.execute(b);
    bytes.assign(o.begin(), o.end());
    bytes.insert(bytes.end(), grads.begin(), grads.end());
    const uint8_t *p = reinterpret_cast<const uint8_t *>(stats.data());
    bytes.insert(bytes.end(), p, p + stats.size() * 4);
    p = reinterpret_cast<const uint8_t *>(amaxes.data());
    bytes.insert(bytes.end(), p, p + amaxes.size() * 4);
    return ok;
  };
  std::vector<uint8_t> first, second;
  REQUIRE(run(g, first));
  REQUIRE(run(loaded, second));
  CHECK(first == second);
}

// A JSON document with a broken sdpa_fp8 attribute is refused with its
// location.
TEST(cpu_sdpa_fp8_graph_json_bad_attribute) {
  G g;
  Fwd f;
  f.a = {1, 1, 1, 2, 2, 4, 4};
  REQUIRE_OK(f.add(g));
  std::string json = serialize(g.get());
  const std::string key = "\"causal_mask\": false";
  const size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  json.replace(at, key.size(), "\"causal_mask\": 3");
  G loaded;
  CHECK_FAILS(cudnnfe_graph_deserialize(loaded.get(), json.data(), json.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "causal_mask");
}

// ---------------------------------------------------------------------------
// Rules: bad input gives a status and a message naming node, tensor, rule.

namespace {

const cudnnfe_status_t ARG = CUDNNFE_STATUS_INVALID_ARGUMENT;
const cudnnfe_status_t GRAPH = CUDNNFE_STATUS_INVALID_GRAPH;

// Inputs for forward rule cases.
struct FwdInputs {
  G g;
  int64_t q, k, v, s[6];
  explicit FwdInputs(cudnnfe_dtype_t type = E4M3, Dims kd = {1, 2, 8, 16},
                     cudnnfe_dtype_t k_type = CUDNNFE_DTYPE_NOT_SET, int64_t h_q = 2) {
    q = g.input("q", type, {1, h_q, 8, 16});
    k = g.input("k", k_type == CUDNNFE_DTYPE_NOT_SET ? type : k_type, kd);
    v = g.input("v", type, {1, kd[1], kd[2], 16});
    const char *names[6] = {"descale_q", "descale_k", "descale_v",
                            "descale_s", "scale_s",   "scale_o"};
    for (int i = 0; i < 6; ++i) s[i] = g.one(names[i]);
  }
  cudnnfe_status_t add(const cudnnfe_sdpa_fp8_options_t *opt, int64_t *o, int64_t *stats,
                       int64_t *as, int64_t *ao) {
    return cudnnfe_graph_add_sdpa_fp8(g.get(), q, k, v, s[0], s[1], s[2], s[3], s[4], s[5], opt, o,
                                      stats, as, ao);
  }
  size_t nodes() {
    size_t n = 0;
    cudnnfe_graph_get_node_count(g.get(), &n);
    return n;
  }
};

cudnnfe_sdpa_fp8_options_t named(const char *name) {
  cudnnfe_sdpa_fp8_options_t o;
  cudnnfe_sdpa_fp8_options_init(&o);
  o.name = name;
  return o;
}

}  // namespace

TEST(bad_sdpa_fp8_missing_or_malformed_scales) {
  FwdInputs in;
  int64_t o, st, as, ao;
  auto opt = named("attn");
  CHECK_FAILS(cudnnfe_graph_add_sdpa_fp8(in.g.get(), in.q, in.k, in.v, in.s[0], 0, in.s[2], in.s[3],
                                         in.s[4], in.s[5], &opt, &o, &st, &as, &ao),
              GRAPH, "sdpa_fp8 \"attn\"", "descale_k", "missing", "one-element FLOAT");
  CHECK_FAILS(cudnnfe_graph_add_sdpa_fp8(in.g.get(), in.q, in.k, in.v, in.s[0], in.s[1], in.s[2],
                                         in.s[3], in.s[4], 0, &opt, &o, &st, &as, &ao),
              GRAPH, "scale_o", "missing");
  const int64_t wide = in.g.input("wide", F32, {1, 2, 1, 1});
  CHECK_FAILS(cudnnfe_graph_add_sdpa_fp8(in.g.get(), in.q, in.k, in.v, in.s[0], in.s[1], wide,
                                         in.s[3], in.s[4], in.s[5], &opt, &o, &st, &as, &ao),
              GRAPH, "descale_v \"wide\"", "[1,2,1,1]", "one element");
  CHECK(in.nodes() == 0);  // rejected ops leave the graph unchanged
  // A HALF descale is caught once types are known (validation).
  const int64_t half = in.g.input("half_scale", CUDNNFE_DTYPE_HALF, {1});
  REQUIRE_OK(cudnnfe_graph_add_sdpa_fp8(in.g.get(), in.q, in.k, in.v, in.s[0], in.s[1], in.s[2],
                                        half, in.s[4], in.s[5], &opt, &o, &st, &as, &ao));
  for (int64_t t : {o, as, ao}) in.g.output(t);
  CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "sdpa_fp8 \"attn\"", "descale_s",
              "half_scale", "HALF", "FLOAT");
}

TEST(bad_sdpa_fp8_types) {
  int64_t o, st, as, ao;
  auto opt = named("attn");
  {
    FwdInputs in(CUDNNFE_DTYPE_HALF);
    REQUIRE_OK(in.add(&opt, &o, &st, &as, &ao));
    for (int64_t t : {o, as, ao}) in.g.output(t);
    CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "q \"q\"", "HALF", "FP8_E4M3");
  }
  {
    FwdInputs in(E4M3, {1, 2, 8, 16}, E5M2);
    REQUIRE_OK(in.add(&opt, &o, &st, &as, &ao));
    for (int64_t t : {o, as, ao}) in.g.output(t);
    CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "k \"k\"", "FP8_E5M2", "share");
  }
  {
    FwdInputs in;
    REQUIRE_OK(in.add(&opt, &o, &st, &as, &ao));
    for (int64_t t : {o, as, ao}) in.g.output(t);
    CHECK_OK(cudnnfe_tensor_set_dtype(in.g.get(), o, F32));
    CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "attn::O", "FLOAT",
                "FP8_E4M3, FP8_E5M2, HALF or BFLOAT16");
  }
  {
    // amax outputs must be marked as outputs.
    FwdInputs in;
    REQUIRE_OK(in.add(&opt, &o, &st, &as, &ao));
    in.g.output(o);
    in.g.output(ao);
    CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "attn::amax_s", "virtual",
                "cudnnfe_tensor_set_output");
  }
}

TEST(bad_sdpa_fp8_shapes_and_options) {
  int64_t o, st, as, ao;
  auto opt = named("attn");
  {
    FwdInputs in(E4M3, {1, 2, 8, 32});
    CHECK_FAILS(in.add(&opt, &o, &st, &as, &ao), GRAPH, "k \"k\"", "d = 32", "q's head dim");
  }
  {
    FwdInputs in(E4M3, {1, 2, 8, 16}, CUDNNFE_DTYPE_NOT_SET, 3);
    CHECK_FAILS(in.add(&opt, &o, &st, &as, &ao), CUDNNFE_STATUS_NOT_SUPPORTED, "3 heads",
                "must each divide q's");
  }
  {
    FwdInputs in;
    const int64_t flat = in.g.input("flat", E4M3, {8, 16});
    CHECK_FAILS(cudnnfe_graph_add_sdpa_fp8(in.g.get(), flat, in.k, in.v, in.s[0], in.s[1], in.s[2],
                                           in.s[3], in.s[4], in.s[5], &opt, &o, &st, &as, &ao),
                GRAPH, "q \"flat\"", "2 dims", "[b,h_q,s_q,d]");
    auto nan_scale = opt;
    nan_scale.attn_scale = NAN;
    CHECK_FAILS(in.add(&nan_scale, &o, &st, &as, &ao), GRAPH, "attn_scale", "finite");
    auto stats = opt;
    stats.generate_stats = 1;
    CHECK_FAILS(in.add(&stats, &o, nullptr, &as, &ao), ARG, "stats", "generate_stats");
    CHECK_FAILS(in.add(&opt, nullptr, &st, &as, &ao), ARG, "o", "NULL");
    CHECK_FAILS(in.add(&opt, &o, &st, nullptr, &ao), ARG, "amax_s", "NULL");
    auto big = opt;
    big.struct_size = sizeof(big) + 8;
    CHECK_FAILS(in.add(&big, &o, &st, &as, &ao), ARG, "struct_size");
    CHECK(in.nodes() == 0);
    // An older, smaller struct keeps the defaults of the fields it lacks.
    auto old = opt;
    old.struct_size = offsetof(cudnnfe_sdpa_fp8_options_t, generate_stats);
    old.generate_stats = 1;  // past struct_size: ignored
    CHECK_OK(in.add(&old, &o, &st, &as, &ao));
    CHECK(st == 0);
  }
}

// The diagonal band's rules, forward and backward alike (sdpa's rules).
TEST(bad_sdpa_fp8_diagonal_band) {
  int64_t o, st, as, ao;
  struct Case {
    int64_t left, right;
    cudnnfe_diagonal_alignment_t alignment;
    bool causal;
    const char *option, *rule;
  };
  const Case cases[] = {
      {0, -1, CUDNNFE_DIAGONAL_TOP_LEFT, false, "window_left is 0", "-1 (no left bound) or >= 1"},
      {-5, -1, CUDNNFE_DIAGONAL_TOP_LEFT, false, "window_left is -5", ">= 1"},
      {-1, -2, CUDNNFE_DIAGONAL_TOP_LEFT, false, "window_right is -2", ">= 0"},
      {-1, -1, 7, false, "diagonal_alignment 7", "CUDNNFE_DIAGONAL_TOP_LEFT (0)"},
      {4, 1, CUDNNFE_DIAGONAL_TOP_LEFT, true, "causal_mask means window_right = 0",
       "window_right is 1"},
      {4, -1, CUDNNFE_DIAGONAL_BOTTOM_RIGHT, true, "causal_mask is aligned top-left",
       "window_right = 0 with BOTTOM_RIGHT"},
  };
  for (const Case &c : cases) {
    FwdInputs in;
    auto opt = named("attn");
    opt.window_left = c.left;
    opt.window_right = c.right;
    opt.diagonal_alignment = c.alignment;
    opt.causal_mask = c.causal;
    CHECK_FAILS(in.add(&opt, &o, &st, &as, &ao), GRAPH, "sdpa_fp8 \"attn\"", c.option, c.rule);
    CHECK(in.nodes() == 0);

    G g;
    const Dims d = {1, 2, 8, 16};
    const int64_t q = g.input("q", E4M3, d);
    const int64_t stats = g.input("stats", F32, {1, 2, 8, 1});
    int64_t sc[12];
    for (int i = 0; i < 12; ++i) sc[i] = g.one(("s" + std::to_string(i)).c_str());
    cudnnfe_sdpa_fp8_backward_options_t bo;
    cudnnfe_sdpa_fp8_backward_options_init(&bo);
    bo.name = "bwd";
    bo.window_left = c.left;
    bo.window_right = c.right;
    bo.diagonal_alignment = c.alignment;
    bo.causal_mask = c.causal;
    int64_t outs[7];
    CHECK_FAILS(cudnnfe_graph_add_sdpa_fp8_backward(
                    g.get(), q, q, q, q, q, stats, sc[0], sc[1], sc[2], sc[3], sc[4], sc[5], sc[6],
                    sc[7], sc[8], sc[9], sc[10], sc[11], &bo, &outs[0], &outs[1], &outs[2],
                    &outs[3], &outs[4], &outs[5], &outs[6]),
                GRAPH, "sdpa_fp8_backward \"bwd\"", c.option, c.rule);
  }
  // The defaults and an older caller's struct (without the band) are open.
  cudnnfe_sdpa_fp8_options_t defaults = named("attn");
  CHECK(defaults.window_left == -1 && defaults.window_right == -1);
  CHECK(defaults.diagonal_alignment == CUDNNFE_DIAGONAL_TOP_LEFT);
  FwdInputs in;
  auto old = named("attn");
  old.struct_size = offsetof(cudnnfe_sdpa_fp8_options_t, window_left);
  old.window_left = 0;  // past struct_size: ignored
  CHECK_OK(in.add(&old, &o, &st, &as, &ao));
}

// A JSON document with a bad band is refused with the node and the rule.
TEST(bad_sdpa_fp8_graph_json_band) {
  G g;
  Fwd f;
  f.a = {1, 1, 1, 2, 2, 4, 4};
  f.window_left = 2;
  REQUIRE_OK(f.add(g));
  std::string json = serialize(g.get());
  const std::string key = "\"window_left\": 2";
  const size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  json.replace(at, key.size(), "\"window_left\": 0");
  G loaded;
  const cudnnfe_status_t s = cudnnfe_graph_deserialize(loaded.get(), json.data(), json.size());
  CHECK(s != CUDNNFE_STATUS_OK);
  CHECK_MSG(std::string(cudnnfe_graph_last_error(loaded.get())).find("window_left is 0") !=
                std::string::npos,
            "message: %s", cudnnfe_graph_last_error(loaded.get()));
}

TEST(bad_sdpa_fp8_backward) {
  auto make = [](G &g, Dims stats_dims, cudnnfe_dtype_t do_type, bool drop_scale_dp,
                 int64_t *outs) {
    const Dims d = {1, 2, 8, 16};
    const int64_t q = g.input("q", E4M3, d), k = g.input("k", E4M3, d), v = g.input("v", E4M3, d),
                  o = g.input("o", E4M3, d), dO = g.input("dO", do_type, d),
                  st = g.input("stats", F32, stats_dims);
    int64_t s[12];
    for (int i = 0; i < 12; ++i) s[i] = g.one(("s" + std::to_string(i)).c_str());
    if (drop_scale_dp) s[11] = 0;
    cudnnfe_sdpa_fp8_backward_options_t opt;
    cudnnfe_sdpa_fp8_backward_options_init(&opt);
    opt.name = "bwd";
    return cudnnfe_graph_add_sdpa_fp8_backward(
        g.get(), q, k, v, o, dO, st, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9],
        s[10], s[11], &opt, &outs[0], &outs[1], &outs[2], &outs[3], &outs[4], &outs[5], &outs[6]);
  };
  int64_t outs[7];
  {
    G g;
    CHECK_FAILS(make(g, {1, 2, 8, 2}, E4M3, false, outs), GRAPH, "sdpa_fp8_backward \"bwd\"",
                "stats \"stats\"", "[1,2,8,1]");
  }
  {
    G g;
    CHECK_FAILS(make(g, {1, 2, 8, 1}, E4M3, true, outs), GRAPH, "scale_dP", "missing");
  }
  {
    G g;
    REQUIRE_OK(make(g, {1, 2, 8, 1}, CUDNNFE_DTYPE_HALF, false, outs));
    for (int64_t t : outs) g.output(t);
    CHECK_FAILS(cudnnfe_graph_validate(g.get()), GRAPH, "dO \"dO\"", "HALF", "FP8_E5M2");
  }
  {
    G g;
    REQUIRE_OK(make(g, {1, 2, 8, 1}, E5M2, false, outs));
    for (int i = 0; i < 6; ++i) g.output(outs[i]);
    CHECK_FAILS(cudnnfe_graph_validate(g.get()), GRAPH, "bwd::amax_dP", "virtual");
    g.output(outs[6]);
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    cudnnfe_dtype_t t = CUDNNFE_DTYPE_NOT_SET;
    CHECK_OK(cudnnfe_tensor_get_dtype(g.get(), outs[0], &t));
    CHECK(t == E4M3);  // dQ takes q's type by default
  }
  {
    G g;
    int64_t dq, dk, dv, a0, a1, a2;
    const Dims d = {1, 2, 8, 16};
    const int64_t q = g.input("q", E4M3, d);
    CHECK_FAILS(
        cudnnfe_graph_add_sdpa_fp8_backward(g.get(), q, q, q, q, q, q, q, q, q, q, q, q, q, q, q, q,
                                            q, q, nullptr, &dq, &dk, &dv, &a0, &a1, &a2, nullptr),
        ARG, "amax_dp", "NULL");
  }
}

// ---------------------------------------------------------------------------
// Padding, dropout, ALiBi and paged K/V (cudnn-frontend's FP8 options)

namespace {

// 0/1 values with keep probability `keep`, dense [b, h_q, s_q, s_kv].
std::vector<double> random_mask(const fp8t::AttnShape &a, double keep, uint32_t seed) {
  std::mt19937 rng(seed);
  std::bernoulli_distribution kept(keep);
  std::vector<double> m(static_cast<size_t>(a.b * a.h_q * a.s_q * a.s_kv));
  for (double &x : m) x = kept(rng) ? 1.0 : 0.0;
  return m;
}

// Batch n, rows below `rows`, of dense [b, h, s, x] values.
std::vector<double> slice(const std::vector<double> &t, const Dims &dims, int64_t n, int64_t rows) {
  std::vector<double> out;
  for (int64_t h = 0; h < dims[1]; ++h)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t c = 0; c < dims[3]; ++c)
        out.push_back(t[static_cast<size_t>(((n * dims[1] + h) * dims[2] + i) * dims[3] + c)]);
  return out;
}

}  // namespace

TEST(cpu_sdpa_fp8_forward_padding_matches_the_loops) {
  for (int variant = 0; variant < 3; ++variant) {
    Fwd f;
    f.a = {2, 2, 2, 7, 9, 8, 8};
    f.opts.x.seq_q = {7, 3};
    f.opts.x.seq_kv = {9, 4};
    f.causal = variant == 1;
    if (variant == 2) {  // bottom-right: the diagonal follows the valid lengths
      f.window_right = 0;
      f.window_left = 2;
      f.alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
    }
    check_forward(f, 40 + static_cast<uint32_t>(variant), typical_fwd_scales());
  }
}

// Each batch of a padded graph computes what the loops compute on that
// batch's sequence cut to its lengths (independent of how the loops pad);
// padding rows are O = 0 and stats = -inf.
TEST(cpu_sdpa_fp8_padding_equals_the_truncated_sequence) {
  Fwd f;
  f.a = {2, 2, 2, 6, 8, 8, 8};
  f.causal = true;
  f.opts.x.seq_q = {6, 3};
  f.opts.x.seq_kv = {8, 5};
  const fp8t::FwdScales sc = typical_fwd_scales();
  G g;
  REQUIRE_OK(f.add(g));
  FwdData d = make_fwd_data(f, g, 44, sc);
  REQUIRE(g.build());
  REQUIRE(run_fwd(f, g, d));
  const std::vector<double> got = o_values(f, d);
  const Dims qd = {2, 2, 6, 8}, kd = {2, 2, 8, 8};
  const double attn = 1.0 / std::sqrt(8.0);
  double amax_o = 0;
  int64_t bad = 0;
  for (int64_t n = 0; n < 2; ++n) {
    fp8t::AttnShape t = f.a;
    t.b = 1;
    t.s_q = f.opts.x.seq_q[static_cast<size_t>(n)];
    t.s_kv = f.opts.x.seq_kv[static_cast<size_t>(n)];
    fp8t::FwdResult want = fp8t::attention_forward(
        t, slice(d.q.values(), qd, n, t.s_q), slice(d.k.values(), kd, n, t.s_kv),
        slice(d.v.values(), kd, n, t.s_kv), sc, attn, true, E4M3);
    amax_o = std::max(amax_o, want.amax_o);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 6; ++i) {
        const size_t row = static_cast<size_t>((n * 2 + h) * 6 + i);
        const double stats = i < t.s_q ? want.stats[static_cast<size_t>(h * t.s_q + i)] : -INFINITY;
        if (!close(d.stats[row], stats, 1e-6) && bad++ < 3)
          std::printf("  stats[%zu] %.9g, expected %.9g\n", row, d.stats[row], stats);
        for (int64_t c = 0; c < 8; ++c) {
          const double o =
              i < t.s_q ? fp8t::round_fp8(
                              E4M3, want.o_unscaled[static_cast<size_t>((h * t.s_q + i) * 8 + c)] *
                                        sc.scale_o)
                        : 0.0;
          if (got[row * 8 + static_cast<size_t>(c)] != o && bad++ < 3)
            std::printf("  O[%zu][%lld] %g, expected %g\n", row, static_cast<long long>(c),
                        got[row * 8 + static_cast<size_t>(c)], o);
        }
      }
  }
  CHECK_MSG(bad == 0, "%lld O or stats elements differ from the truncated sequences",
            static_cast<long long>(bad));
  CHECK_MSG(close(d.amax_o, amax_o, 1e-6), "amax_o %.9g, expected %.9g", d.amax_o, amax_o);
}

TEST(cpu_sdpa_fp8_forward_dropout_mask_matches_the_loops) {
  Fwd f;
  f.a = {2, 2, 1, 5, 7, 8, 8};
  f.opts.x.drop_mask = random_mask(f.a, 0.7, 45);
  f.opts.x.drop_scale = 1 / 0.7;
  check_forward(f, 45, typical_fwd_scales());
  f.causal = true;  // with padding too
  f.opts.x.seq_q = {5, 2};
  f.opts.x.seq_kv = {7, 6};
  check_forward(f, 46, typical_fwd_scales());
}

// Sink logits per head: one below the scores, one above (it takes most of
// the mass), one for a head whose rows padding empties (stats = sink).
TEST(cpu_sdpa_fp8_forward_sink_token_matches_the_loops) {
  Fwd f;
  f.a = {2, 3, 1, 5, 6, 8, 8};
  f.causal = true;
  f.opts.x.sink = {-1.5, 2.0, 0.25};
  check_forward(f, 56, typical_fwd_scales());
  f.opts.x.seq_q = {5, 2};
  f.opts.x.seq_kv = {6, 3};
  check_forward(f, 57, typical_fwd_scales());
}

// ALiBi with 6 query heads: both branches of the slope formula.
TEST(cpu_sdpa_fp8_forward_alibi_matches_the_loops) {
  Fwd f;
  f.a = {1, 6, 2, 6, 6, 8, 8};
  f.causal = true;
  f.opts.x.alibi = true;
  check_forward(f, 47, typical_fwd_scales());
}

TEST(cpu_sdpa_fp8_backward_padding_and_dropout_match_the_loops) {
  Fwd f;
  f.a = {2, 2, 2, 6, 7, 8, 8};
  f.opts.x.seq_q = {6, 4};
  f.opts.x.seq_kv = {7, 3};
  check_backward(f, E4M3, 48, "padding");
  f.causal = true;
  check_backward(f, E5M2, 49, "padding, causal");
  Fwd drop;
  drop.a = {1, 2, 1, 5, 6, 8, 8};
  drop.opts.x.drop_mask = random_mask(drop.a, 0.75, 50);
  drop.opts.x.drop_scale = 1 / 0.75;
  drop.opts.x.drop_scale_inv = 0.75;
  check_backward(drop, E4M3, 50, "dropout mask");
  drop.opts.x.seq_q = {3};
  drop.opts.x.seq_kv = {4};
  check_backward(drop, E4M3, 51, "dropout mask, padding");
}

// A paged K/V cache (pages shuffled by the tables) gives, bit for bit, the
// loops' result on the logical k and v.
TEST(cpu_sdpa_fp8_forward_paged_matches_the_loops) {
  const fp8t::AttnShape a = {2, 2, 2, 4, 8, 8, 8};
  const int64_t page = 3, pages = 3;  // ceil(8 / 3)
  const Dims cd = {a.b * pages, a.h_kv, page, a.d};
  G g;
  const int64_t q = g.input("q", E4M3, {a.b, a.h_q, a.s_q, a.d});
  const int64_t k = g.input("k", E4M3, cd), v = g.input("v", E4M3, cd);
  int64_t s[6];
  const char *names[6] = {"descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"};
  for (int i = 0; i < 6; ++i) s[i] = g.one(names[i]);
  cudnnfe_sdpa_fp8_options_t opt;
  cudnnfe_sdpa_fp8_options_init(&opt);
  opt.name = "attn";
  opt.generate_stats = 1;
  opt.padding_mask = 1;
  opt.seq_len_q = g.input("seq_len_q", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
  opt.seq_len_kv = g.input("seq_len_kv", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
  opt.page_table_k = g.input("table_k", CUDNNFE_DTYPE_INT32, {a.b, 1, pages, 1});
  opt.page_table_v = g.input("table_v", CUDNNFE_DTYPE_INT32, {a.b, 1, pages, 1});
  opt.max_seq_len_kv = a.s_kv;
  int64_t o, st, as, ao;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_fp8(g.get(), q, k, v, s[0], s[1], s[2], s[3], s[4], s[5], &opt,
                                        &o, &st, &as, &ao));
  for (int64_t out : {o, st, as, ao}) g.output(out);
  REQUIRE(g.build());

  std::mt19937 rng(52);
  Fp8Host qh = fp8t::random_fp8(E4M3, {a.b, a.h_q, a.s_q, a.d}, {}, 2, 64, rng);
  Fp8Host kh = fp8t::random_fp8(E4M3, cd, {}, 2, 32, rng);
  Fp8Host vh = fp8t::random_fp8(E4M3, cd, {}, 2, 128, rng);
  std::vector<int32_t> seq_q = {4, 2}, seq_kv = {8, 5};
  std::vector<int32_t> table_k = {4, 0, 5, 2, 1, 3}, table_v = {1, 5, 0, 3, 4, 2};
  const fp8t::FwdScales sc = typical_fwd_scales();
  float scales[6] = {1.0f / 64, 1.0f / 32, 1.0f / 128, 1.0f / 256, 256, 64};
  std::vector<uint8_t> out(static_cast<size_t>(a.b * a.h_q * a.s_q * a.d_v), 0xff);
  std::vector<float> stats(static_cast<size_t>(a.b * a.h_q * a.s_q));
  float amax_s = NAN, amax_o = NAN;
  std::vector<cudnnfe_binding_t> b = {{q, qh.data()},
                                      {k, kh.data()},
                                      {v, vh.data()},
                                      {o, out.data()},
                                      {st, stats.data()},
                                      {as, &amax_s},
                                      {ao, &amax_o},
                                      {opt.seq_len_q, seq_q.data()},
                                      {opt.seq_len_kv, seq_kv.data()},
                                      {opt.page_table_k, table_k.data()},
                                      {opt.page_table_v, table_v.data()}};
  for (int i = 0; i < 6; ++i) b.push_back({s[i], &scales[i]});
  REQUIRE(g.execute(b));

  // Logical [b, h_kv, s_kv, d] k and v gathered from the pages (rows past
  // seq_len_kv stay 0: nothing reads them).
  auto gather = [&](const Fp8Host &c, const std::vector<int32_t> &table) {
    const std::vector<double> cv = c.values();
    std::vector<double> t(static_cast<size_t>(a.b * a.h_kv * a.s_kv * a.d), 0.0);
    for (int64_t n = 0; n < a.b; ++n)
      for (int64_t h = 0; h < a.h_kv; ++h)
        for (int64_t j = 0; j < seq_kv[static_cast<size_t>(n)]; ++j)
          for (int64_t x = 0; x < a.d; ++x) {
            const int64_t p = table[static_cast<size_t>(n * pages + j / page)];
            t[static_cast<size_t>(((n * a.h_kv + h) * a.s_kv + j) * a.d + x)] =
                cv[static_cast<size_t>(((p * a.h_kv + h) * page + j % page) * a.d + x)];
          }
    return t;
  };
  fp8t::Extras x;
  x.seq_q = {4, 2};
  x.seq_kv = {8, 5};
  fp8t::FwdResult want =
      fp8t::attention_forward(a, qh.values(), gather(kh, table_k), gather(vh, table_v), sc,
                              1.0 / std::sqrt(8.0), fp8t::Band{}, E4M3, true, x);
  int64_t bad = 0;
  for (size_t i = 0; i < out.size(); ++i)
    if (fp8t::decode(E4M3, out[i]) != fp8t::round_fp8(E4M3, want.o_unscaled[i] * sc.scale_o)) ++bad;
  CHECK_MSG(bad == 0, "%lld paged O elements differ from the loops", static_cast<long long>(bad));
  for (size_t i = 0; i < stats.size(); ++i)
    CHECK_MSG(close(stats[i], want.stats[i], 1e-6), "stats[%zu] %.9g, expected %.9g", i, stats[i],
              want.stats[i]);
  CHECK_MSG(close(amax_o, want.amax_o, 1e-6), "amax_o %.9g, expected %.9g", amax_o, want.amax_o);
}

// The options' rules: node, option and rule in each message.
TEST(bad_sdpa_fp8_padding_dropout_alibi_paged) {
  int64_t o, st, as, ao;
  FwdInputs in;
  const int64_t len = in.g.input("len", CUDNNFE_DTYPE_INT32, {1, 1, 1, 1});
  const int64_t flen = in.g.input("flen", F32, {1, 1, 1, 1});
  const int64_t wide = in.g.input("wide", CUDNNFE_DTYPE_INT32, {2, 1, 1, 1});
  auto padded = named("attn");
  padded.padding_mask = 1;
  padded.seq_len_q = len;
  CHECK_FAILS(in.add(&padded, &o, &st, &as, &ao), GRAPH, "sdpa_fp8 \"attn\"", "padding_mask",
              "seq_len_kv is missing");
  padded.seq_len_kv = wide;
  CHECK_FAILS(in.add(&padded, &o, &st, &as, &ao), GRAPH, "seq_len_kv \"wide\"", "[b,1,1,1]");
  auto lengths_only = named("attn");
  lengths_only.seq_len_q = len;
  CHECK_FAILS(in.add(&lengths_only, &o, &st, &as, &ao), GRAPH, "seq_len_q", "padding_mask is 0");
  // ALiBi without a causal mask is a GPU support rule (test_attention_support.cpp).
  auto drop = named("attn");
  drop.dropout_mask = in.g.input("mask", F32, {1, 2, 8, 8});
  CHECK_FAILS(in.add(&drop, &o, &st, &as, &ao), GRAPH, "dropout_mask", "dropout_scale");
  auto drawn = named("attn");
  drawn.dropout_probability = 0.5;
  CHECK_FAILS(in.add(&drawn, &o, &st, &as, &ao), GRAPH, "dropout_probability is 0.5",
              "dropout_seed");
  auto paged = named("attn");
  paged.page_table_k = in.g.input("table", CUDNNFE_DTYPE_INT32, {1, 1, 1, 1});
  CHECK_FAILS(in.add(&paged, &o, &st, &as, &ao), GRAPH, "paged K/V cache", "padding_mask");
  CHECK(in.nodes() == 0);

  // Types are checked at validation: a FLOAT length is refused by name.
  auto float_len = named("attn");
  float_len.padding_mask = 1;
  float_len.seq_len_q = flen;
  float_len.seq_len_kv = len;
  CHECK_OK(in.add(&float_len, &o, &st, &as, &ao));
  for (int64_t out : {o, as, ao}) in.g.output(out);
  CHECK_FAILS(cudnnfe_graph_validate(in.g.get()), GRAPH, "sdpa_fp8 \"attn\"", "seq_len_q \"flen\"",
              "INT32 or INT64");
}

TEST(bad_sdpa_fp8_backward_dropout_without_scale_inv) {
  // A node without options supplies the operands; a second one on them
  // gives a dropout mask without dropout_scale_inv.
  Bwd c;
  c.a = {1, 2, 2, 4, 4, 8, 8};
  G g;
  REQUIRE_OK(c.add(g));
  cudnnfe_sdpa_fp8_backward_options_t opt;
  cudnnfe_sdpa_fp8_backward_options_init(&opt);
  opt.name = "attn_bwd2";
  opt.dropout_mask = g.input("mask", F32, {1, 2, 4, 4});
  opt.dropout_scale = g.one("scale");
  int64_t dq, dk, dv, a0, a1, a2, a3;
  CHECK_FAILS(
      cudnnfe_graph_add_sdpa_fp8_backward(
          g.get(), c.q, c.k, c.v, c.o, c.d_o, c.stats, c.scales[0], c.scales[1], c.scales[2],
          c.scales[3], c.scales[4], c.scales[5], c.scales[6], c.scales[7], c.scales[8], c.scales[9],
          c.scales[10], c.scales[11], &opt, &dq, &dk, &dv, &a0, &a1, &a2, &a3),
      GRAPH, "sdpa_fp8_backward \"attn_bwd2\"", "dropout_mask needs dropout_scale_inv");
}

// The options survive a graph JSON round trip (ports by name, attributes
// as sdpa's) and the loaded graph computes the same bits.
TEST(cpu_sdpa_fp8_options_graph_json_round_trip) {
  Fwd f;
  f.a = {2, 2, 2, 4, 5, 8, 8};
  f.causal = true;
  f.opts.x.seq_q = {4, 2};
  f.opts.x.seq_kv = {5, 3};
  f.opts.x.drop_mask = random_mask(f.a, 0.5, 54);
  f.opts.x.drop_scale = 2;
  f.opts.x.alibi = true;
  G g;
  REQUIRE_OK(f.add(g));
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  const std::string json = serialize(g.get());
  for (const char *key :
       {"\"seq_len_kv\"", "\"dropout_mask\"", "\"padding_mask\": true", "\"alibi_mask\": true"})
    CHECK_MSG(json.find(key) != std::string::npos, "graph JSON lacks %s", key);
  G loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded.get(), json.data(), json.size()));
  CHECK(serialize(loaded.get()) == json);
  const fp8t::FwdScales sc = typical_fwd_scales();
  FwdData a = make_fwd_data(f, g, 55, sc), b = make_fwd_data(f, loaded, 55, sc);
  REQUIRE(g.build());
  REQUIRE(loaded.build());
  REQUIRE(run_fwd(f, g, a));
  REQUIRE(run_fwd(f, loaded, b));
  CHECK(a.o == b.o);
  CHECK(a.stats.size() == b.stats.size() &&
        std::memcmp(a.stats.data(), b.stats.data(), a.stats.size() * sizeof(float)) == 0);
}
