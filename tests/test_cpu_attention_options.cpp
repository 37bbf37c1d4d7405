// The CPU reference's attention options (scale tensor, padding, diagonal
// band, ALiBi, dropout drawn and given, dBias) through the public C API,
// against a naive attention written here from docs/attention.md: every
// score computed, every mask a per-element predicate, ALiBi's slopes from
// their closed form, and gradients by central differences of
// sum(dO * O) through that naive forward.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

enum class Dropout { kNone, kGiven, kDrawn };

// One attention configuration.
struct Case {
  const char *name = "case";
  int64_t b = 2, h_q = 2, h_kv = 1, s_q = 4, s_kv = 5, d = 3, d_v = 2;
  double scale = 0.45;
  bool scale_tensor = false;  // the scale from a graph input
  bool scale_scalar = false;  // the scale from a cudnnfe scalar
  bool causal = false, causal_br = false;
  int64_t left = -1, right = -1;
  cudnnfe_diagonal_alignment_t align = CUDNNFE_DIAGONAL_TOP_LEFT;
  bool padding = false;
  std::vector<int32_t> seq_q, seq_kv;
  bool alibi = false;
  bool bias = false;  // [1, h_q, s_q, s_kv]
  Dropout dropout = Dropout::kNone;
  double p = 0.0;                    // drawn
  int64_t seed = 1234, offset = 99;  // drawn
  double dropout_scale = 1.0 / 0.7;  // given
};

struct Data {
  std::vector<double> q, k, v, bias, mask, d_o;
};

int64_t count(const std::vector<int64_t> &dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> q_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, c.d};
}
std::vector<int64_t> k_dims(const Case &c) {
  return {c.b, c.h_kv, c.s_kv, c.d};
}
std::vector<int64_t> v_dims(const Case &c) {
  return {c.b, c.h_kv, c.s_kv, c.d_v};
}
std::vector<int64_t> o_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, c.d_v};
}
std::vector<int64_t> stats_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, 1};
}
std::vector<int64_t> bias_dims(const Case &c) {
  return {1, c.h_q, c.s_q, c.s_kv};
}
std::vector<int64_t> mask_dims(const Case &c) {
  return {c.b, c.h_q, c.s_q, c.s_kv};
}

// Deterministic values in about [-1, 1].
std::vector<double> pattern(int64_t n, int seed) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = std::sin(0.7 * static_cast<double>(i + 1) * (seed + 1) + seed);
  return v;
}

Data make_data(const Case &c) {
  Data d;
  d.q = pattern(count(q_dims(c)), 1);
  d.k = pattern(count(k_dims(c)), 2);
  d.v = pattern(count(v_dims(c)), 3);
  d.bias = pattern(count(bias_dims(c)), 4);
  d.d_o = pattern(count(o_dims(c)), 5);
  d.mask.resize(static_cast<size_t>(count(mask_dims(c))));
  for (size_t i = 0; i < d.mask.size(); ++i) d.mask[i] = (i * 7 + 3) % 5 < 3 ? 1.0 : 0.0;
  return d;
}

// ---- the naive attention (docs/attention.md) ----

// ALiBi's slopes from the closed form: m0^(1..n), then m1^(1,3,5,...).
std::vector<double> naive_slopes(int64_t heads) {
  const int64_t n =
      int64_t{1} << static_cast<int>(std::floor(std::log2(static_cast<double>(heads))));
  std::vector<double> s;
  for (int64_t i = 1; i <= n; ++i) s.push_back(std::pow(std::pow(2.0, -8.0 / n), i));
  for (int64_t i = 1; static_cast<int64_t>(s.size()) < heads; i += 2)
    s.push_back(std::pow(std::pow(2.0, -4.0 / n), i));
  return s;
}

// The documented drawn-dropout generator.
uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}
bool drawn_keep(uint64_t seed, uint64_t offset, uint64_t linear, double p) {
  const uint64_t x = mix(mix(mix(linear) ^ offset) ^ seed);
  return static_cast<double>(x >> 11) * std::ldexp(1.0, -53) >= p;
}

bool visible(const Case &c, int64_t n, int64_t i, int64_t j) {
  const int64_t sq = c.padding ? c.seq_q[static_cast<size_t>(n)] : c.s_q;
  const int64_t skv = c.padding ? c.seq_kv[static_cast<size_t>(n)] : c.s_kv;
  if (i >= sq || j >= skv) return false;
  const bool br = c.causal_br || (!c.causal && c.align == CUDNNFE_DIAGONAL_BOTTOM_RIGHT);
  const int64_t diag = br ? i + skv - sq : i;
  const int64_t right = c.causal || c.causal_br ? 0 : c.right;
  if (right >= 0 && j > diag + right) return false;
  if (c.left >= 1 && j <= diag - c.left) return false;
  return true;
}

// What P is multiplied by at (n, h, i, j).
double dropout_factor(const Case &c, const Data &d, int64_t n, int64_t h, int64_t i, int64_t j) {
  const size_t at = static_cast<size_t>(((n * c.h_q + h) * c.s_q + i) * c.s_kv + j);
  switch (c.dropout) {
    case Dropout::kNone: return 1.0;
    case Dropout::kGiven: return d.mask[at] * c.dropout_scale;
    case Dropout::kDrawn:
      return drawn_keep(static_cast<uint64_t>(c.seed), static_cast<uint64_t>(c.offset), at, c.p)
                 ? 1.0 / (1.0 - c.p)
                 : 0.0;
  }
  return 1.0;
}

// O and stats in double; padding rows and rows seeing nothing give O = 0
// and stats = -inf.
void naive_forward(const Case &c, const Data &d, std::vector<double> &o,
                   std::vector<double> &stats) {
  o.assign(static_cast<size_t>(count(o_dims(c))), 0.0);
  stats.assign(static_cast<size_t>(count(stats_dims(c))), -kInf);
  const std::vector<double> slopes = naive_slopes(c.h_q);
  const int64_t group = c.h_q / c.h_kv;
  for (int64_t n = 0; n < c.b; ++n)
    for (int64_t h = 0; h < c.h_q; ++h)
      for (int64_t i = 0; i < c.s_q; ++i) {
        std::vector<double> s(static_cast<size_t>(c.s_kv), -kInf);
        double max = -kInf;
        for (int64_t j = 0; j < c.s_kv; ++j) {
          if (!visible(c, n, i, j)) continue;
          double x = 0;
          for (int64_t e = 0; e < c.d; ++e)
            x += d.q[static_cast<size_t>(((n * c.h_q + h) * c.s_q + i) * c.d + e)] *
                 d.k[static_cast<size_t>(((n * c.h_kv + h / group) * c.s_kv + j) * c.d + e)];
          x *= c.scale;
          if (c.bias) x += d.bias[static_cast<size_t>((h * c.s_q + i) * c.s_kv + j)];
          if (c.alibi) x += slopes[static_cast<size_t>(h)] * static_cast<double>(j - i);
          s[static_cast<size_t>(j)] = x;
          max = std::max(max, x);
        }
        if (max == -kInf) continue;
        double sum = 0;
        for (double x : s) sum += std::exp(x - max);
        const size_t row = static_cast<size_t>((n * c.h_q + h) * c.s_q + i);
        stats[row] = max + std::log(sum);
        for (int64_t j = 0; j < c.s_kv; ++j) {
          const double p = std::exp(s[static_cast<size_t>(j)] - max) / sum;
          const double kept = p * dropout_factor(c, d, n, h, i, j);
          for (int64_t e = 0; e < c.d_v; ++e)
            o[row * static_cast<size_t>(c.d_v) + static_cast<size_t>(e)] +=
                kept *
                d.v[static_cast<size_t>(((n * c.h_kv + h / group) * c.s_kv + j) * c.d_v + e)];
        }
      }
}

// d sum(dO * O) / d x by central differences, x being one of d's vectors.
std::vector<double> numeric_gradient(const Case &c, Data d, std::vector<double> Data::*x) {
  std::vector<double> grad((d.*x).size());
  const double h = 1e-4;
  std::vector<double> o, st;
  for (size_t i = 0; i < grad.size(); ++i) {
    const double keep = (d.*x)[i];
    double f[2];
    for (int side = 0; side < 2; ++side) {
      (d.*x)[i] = keep + (side ? -h : h);
      naive_forward(c, d, o, st);
      f[side] = 0;
      for (size_t e = 0; e < o.size(); ++e) f[side] += o[e] * d.d_o[e];
    }
    (d.*x)[i] = keep;
    grad[i] = (f[0] - f[1]) / (2 * h);
  }
  return grad;
}

// ---- cudnnfe graphs ----

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  Graph() {
    cudnnfe_graph_create(&g);
    cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  }
  ~Graph() { cudnnfe_graph_destroy(g); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  int64_t input(const char *name, cudnnfe_dtype_t dt, const std::vector<int64_t> &dims) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                                      nullptr, &uid));
    return uid;
  }
};

// Host buffers by UID, of each tensor's own type.
struct Buffers {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<cudnnfe_binding_t> bindings;
  void *add(int64_t uid, size_t bytes) {
    storage.emplace_back(bytes, 0);
    bindings.push_back({uid, storage.back().data()});
    return storage.back().data();
  }
  void floats(int64_t uid, const std::vector<double> &values) {
    float *p = static_cast<float *>(add(uid, values.size() * sizeof(float)));
    for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  }
  void int32s(int64_t uid, const std::vector<int32_t> &values) {
    std::memcpy(add(uid, values.size() * 4), values.data(), values.size() * 4);
  }
  void int64s(int64_t uid, int64_t value) { std::memcpy(add(uid, 8), &value, 8); }
  std::vector<double> read(int64_t uid) const {
    for (size_t i = 0; i < bindings.size(); ++i)
      if (bindings[i].uid == uid) {
        const float *p = static_cast<const float *>(bindings[i].data);
        return std::vector<double>(p, p + storage[i].size() / sizeof(float));
      }
    return {};
  }
};

// The options and their tensors, for either options struct.
template <class Options>
void set_options(Graph &g, Buffers &buf, const Case &c, const Data &d, Options &o) {
  o.attn_scale = c.scale;
  if (c.scale_tensor) {
    o.attn_scale = 0;
    o.attn_scale_tensor = g.input("scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
    buf.floats(o.attn_scale_tensor, {c.scale});
  } else if (c.scale_scalar) {
    o.attn_scale = 0;
    CHECK_OK(
        cudnnfe_graph_add_scalar(g.g, "scale", CUDNNFE_DTYPE_FLOAT, c.scale, &o.attn_scale_tensor));
  }
  o.causal_mask = c.causal;
  o.causal_mask_bottom_right = c.causal_br;
  o.window_left = c.left;
  o.window_right = c.right;
  o.diagonal_alignment = c.align;
  o.alibi_mask = c.alibi;
  if (c.bias) {
    o.bias = g.input("bias", CUDNNFE_DTYPE_FLOAT, bias_dims(c));
    buf.floats(o.bias, d.bias);
  }
  if (c.padding) {
    o.padding_mask = 1;
    o.seq_len_q = g.input("seq_len_q", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1});
    o.seq_len_kv = g.input("seq_len_kv", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1});
    buf.int32s(o.seq_len_q, c.seq_q);
    buf.int32s(o.seq_len_kv, c.seq_kv);
  }
  if (c.dropout == Dropout::kDrawn) {
    o.dropout_probability = c.p;
    o.dropout_seed = g.input("seed", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
    o.dropout_offset = g.input("offset", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
    buf.int64s(o.dropout_seed, c.seed);
    buf.int64s(o.dropout_offset, c.offset);
  } else if (c.dropout == Dropout::kGiven) {
    o.dropout_mask = g.input("mask", CUDNNFE_DTYPE_FLOAT, mask_dims(c));
    o.dropout_scale = g.input("dropout_scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
    buf.floats(o.dropout_mask, d.mask);
    buf.floats(o.dropout_scale, {c.dropout_scale});
  }
}

bool build_and_run(Graph &g, Buffers &buf) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  if (cudnnfe_graph_build(g.g, nullptr, &options) != CUDNNFE_STATUS_OK) {
    std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g.g));
    return false;
  }
  cudnnfe_handle_t *handle = nullptr;
  cudnnfe_handle_create(&handle, -1);
  cudnnfe_status_t s = cudnnfe_graph_execute(g.g, handle, buf.bindings.data(), buf.bindings.size(),
                                             nullptr, 0, nullptr);
  if (s != CUDNNFE_STATUS_OK)
    std::printf("  execute failed: %s\n", cudnnfe_handle_last_error(handle));
  cudnnfe_handle_destroy(handle);
  return s == CUDNNFE_STATUS_OK;
}

struct Forward {
  std::vector<double> o, stats;
};

Forward cudnnfe_forward(const Case &c, const Data &d) {
  Graph g;
  Buffers buf;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, q_dims(c));
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, k_dims(c));
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, v_dims(c));
  buf.floats(q, d.q);
  buf.floats(k, d.k);
  buf.floats(v, d.v);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  set_options(g, buf, c, d, o);
  int64_t out = 0, stats = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  cudnnfe_tensor_set_output(g.g, out, 1);
  cudnnfe_tensor_set_output(g.g, stats, 1);
  buf.add(out, static_cast<size_t>(count(o_dims(c))) * 4);
  buf.add(stats, static_cast<size_t>(count(stats_dims(c))) * 4);
  Forward f;
  if (!build_and_run(g, buf)) return f;
  f.o = buf.read(out);
  f.stats = buf.read(stats);
  return f;
}

struct Backward {
  std::vector<double> dq, dk, dv, dbias;
};

// dropout_scale_inv is 1 / dropout_scale for the given form. With
// `into_caller`, dBias goes into a tensor made here, through
// cudnnfe_graph_set_next_output and the plain cudnnfe_graph_add_sdpa_backward.
Backward cudnnfe_backward(const Case &c, const Data &d, const Forward &f, bool dbias,
                          bool into_caller = false) {
  Graph g;
  Buffers buf;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, q_dims(c));
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, k_dims(c));
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, v_dims(c));
  int64_t o = g.input("o", CUDNNFE_DTYPE_FLOAT, o_dims(c));
  int64_t d_o = g.input("dO", CUDNNFE_DTYPE_FLOAT, o_dims(c));
  int64_t stats = g.input("stats", CUDNNFE_DTYPE_FLOAT, stats_dims(c));
  buf.floats(q, d.q);
  buf.floats(k, d.k);
  buf.floats(v, d.v);
  buf.floats(o, f.o);
  buf.floats(d_o, d.d_o);
  buf.floats(stats, f.stats);
  cudnnfe_sdpa_backward_options_t opts;
  cudnnfe_sdpa_backward_options_init(&opts);
  set_options(g, buf, c, d, opts);
  if (c.dropout == Dropout::kGiven) {
    opts.dropout_scale_inv = g.input("dropout_scale_inv", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
    buf.floats(opts.dropout_scale_inv, {1.0 / c.dropout_scale});
  }
  int64_t dq = 0, dk = 0, dv = 0, db = 0;
  if (dbias && into_caller) {
    db = g.input("dbias_of_caller", CUDNNFE_DTYPE_FLOAT, bias_dims(c));
    CHECK_OK(cudnnfe_graph_set_next_output(g.g, "dBias", db));
    CHECK_OK(cudnnfe_graph_add_sdpa_backward(g.g, q, k, v, o, d_o, stats, &opts, &dq, &dk, &dv));
    cudnnfe_tensor_kind_t kind = 0;
    CHECK_OK(cudnnfe_tensor_get_kind(g.g, db, &kind));
    CHECK(kind == CUDNNFE_TENSOR_KIND_OUTPUT);
  } else {
    CHECK_OK(cudnnfe_graph_add_sdpa_backward_ex(g.g, q, k, v, o, d_o, stats, &opts, &dq, &dk, &dv,
                                                dbias ? &db : nullptr));
  }
  for (int64_t uid : {dq, dk, dv, db})
    if (uid) cudnnfe_tensor_set_output(g.g, uid, 1);
  buf.add(dq, static_cast<size_t>(count(q_dims(c))) * 4);
  buf.add(dk, static_cast<size_t>(count(k_dims(c))) * 4);
  buf.add(dv, static_cast<size_t>(count(v_dims(c))) * 4);
  if (db) buf.add(db, static_cast<size_t>(count(bias_dims(c))) * 4);
  Backward b;
  if (!build_and_run(g, buf)) return b;
  b.dq = buf.read(dq);
  b.dk = buf.read(dk);
  b.dv = buf.read(dv);
  if (db) b.dbias = buf.read(db);
  return b;
}

// |got - want| <= tol * (|want| + 0.1 * max|want|) everywhere; infinities
// must match.
void expect_close(const std::string &what, const std::vector<double> &got,
                  const std::vector<double> &want, double tol) {
  CHECK_MSG(got.size() == want.size(), "%s: %zu values, expected %zu", what.c_str(), got.size(),
            want.size());
  if (got.size() != want.size()) return;
  double scale = 0;
  for (double w : want)
    if (std::isfinite(w)) scale = std::max(scale, std::fabs(w));
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const bool ok = std::isinf(want[i]) ? got[i] == want[i]
                                        : std::fabs(got[i] - want[i]) <=
                                              tol * (std::fabs(want[i]) + 0.1 * scale) + 1e-12;
    if (!ok && bad++ < 3)
      std::printf("  %s[%zu]: got %.9g, expected %.9g\n", what.c_str(), i, got[i], want[i]);
  }
  CHECK_MSG(bad == 0, "%s: %d values out of tolerance %.0e", what.c_str(), bad, tol);
}

// Forward against the naive attention, then the backward (from the
// forward's O and stats) against central differences.
void check_case(const Case &c, bool gradients = true, bool dbias = false) {
  std::printf("  %s\n", c.name);
  const Data d = make_data(c);
  std::vector<double> o, stats;
  naive_forward(c, d, o, stats);
  const Forward f = cudnnfe_forward(c, d);
  expect_close(std::string(c.name) + " O", f.o, o, 2e-6);
  expect_close(std::string(c.name) + " stats", f.stats, stats, 2e-6);
  if (!gradients) return;
  const Backward b = cudnnfe_backward(c, d, f, dbias);
  expect_close(std::string(c.name) + " dQ", b.dq, numeric_gradient(c, d, &Data::q), 1e-4);
  expect_close(std::string(c.name) + " dK", b.dk, numeric_gradient(c, d, &Data::k), 1e-4);
  expect_close(std::string(c.name) + " dV", b.dv, numeric_gradient(c, d, &Data::v), 1e-4);
  if (dbias)
    expect_close(std::string(c.name) + " dBias", b.dbias, numeric_gradient(c, d, &Data::bias),
                 1e-4);
}

// ---- tests ----

TEST(cpu_attention_scale_tensor_equals_the_value) {
  Case c;
  c.name = "scale value";
  const Data d = make_data(c);
  const Forward by_value = cudnnfe_forward(c, d);
  const Backward grads = cudnnfe_backward(c, d, by_value, false);
  for (int form = 0; form < 2; ++form) {
    Case t = c;
    t.scale_tensor = form == 0;
    t.scale_scalar = form == 1;
    const Forward f = cudnnfe_forward(t, d);
    CHECK_MSG(f.o == by_value.o && f.stats == by_value.stats, "forward, scale %s differs",
              form ? "scalar" : "tensor");
    const Backward b = cudnnfe_backward(t, d, by_value, false);
    CHECK_MSG(b.dq == grads.dq && b.dk == grads.dk && b.dv == grads.dv,
              "backward, scale %s differs", form ? "scalar" : "tensor");
  }
  Case t = c;
  t.name = "scale tensor";
  t.scale_tensor = true;
  check_case(t);
}

TEST(cpu_attention_padding) {
  Case c;
  c.name = "padding";
  c.b = 3;
  c.padding = true;
  c.seq_q = {4, 2, 0};
  c.seq_kv = {3, 5, 2};
  check_case(c);
  // Padding rows: O = 0, stats = -inf; dQ rows beyond seq_len_q and dK, dV
  // rows beyond seq_len_kv are 0.
  const Data d = make_data(c);
  const Forward f = cudnnfe_forward(c, d);
  const Backward b = cudnnfe_backward(c, d, f, false);
  REQUIRE(!f.o.empty() && !b.dq.empty());
  for (int64_t n = 0; n < c.b; ++n)
    for (int64_t h = 0; h < c.h_q; ++h) {
      for (int64_t i = c.seq_q[static_cast<size_t>(n)]; i < c.s_q; ++i) {
        const size_t row = static_cast<size_t>((n * c.h_q + h) * c.s_q + i);
        CHECK(f.stats[row] == -kInf);
        for (int64_t e = 0; e < c.d_v; ++e) CHECK(f.o[row * c.d_v + e] == 0.0);
        for (int64_t e = 0; e < c.d; ++e) CHECK(b.dq[row * c.d + e] == 0.0);
      }
    }
  for (int64_t n = 0; n < c.b; ++n)
    for (int64_t j = c.seq_kv[static_cast<size_t>(n)]; j < c.s_kv; ++j) {
      for (int64_t e = 0; e < c.d; ++e)
        CHECK(b.dk[static_cast<size_t>((n * c.s_kv + j) * c.d + e)] == 0.0);
      for (int64_t e = 0; e < c.d_v; ++e)
        CHECK(b.dv[static_cast<size_t>((n * c.s_kv + j) * c.d_v + e)] == 0.0);
    }
  // With causal bottom-right and a left bound, the diagonal follows each
  // batch's lengths.
  Case br = c;
  br.name = "padding, causal bottom-right, window_left 2";
  br.causal_br = true;
  br.left = 2;
  check_case(br);
  Case causal = c;
  causal.name = "padding, causal top-left, bias";
  causal.causal = true;
  causal.bias = true;
  check_case(causal);
}

TEST(cpu_attention_diagonal_band) {
  Case c;
  c.s_q = 5;
  c.s_kv = 7;
  Case a = c;
  a.name = "top-left window_left 2, causal";
  a.causal = true;
  a.left = 2;
  check_case(a);
  Case b = c;
  b.name = "top-left band (2, 1)";
  b.left = 2;
  b.right = 1;
  check_case(b);
  Case r = c;
  r.name = "top-left window_right 0 is causal";
  r.right = 0;
  Case causal = c;
  causal.causal = true;
  {
    const Data d = make_data(c);
    CHECK(cudnnfe_forward(r, d).o == cudnnfe_forward(causal, d).o);
  }
  check_case(r);
  Case br = c;
  br.name = "bottom-right band (3, 1)";
  br.align = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  br.left = 3;
  br.right = 1;
  check_case(br);
  Case brc = c;
  brc.name = "causal bottom-right, window_left 1 (the diagonal only)";
  brc.causal_br = true;
  brc.left = 1;
  check_case(brc);
  Case left_only = c;
  left_only.name = "bottom-right window_left 2 only";
  left_only.align = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  left_only.left = 2;
  check_case(left_only);
}

TEST(cpu_attention_alibi) {
  // cudnn-frontend's slopes for 6 heads: n = 4, 2^-2, 2^-4, 2^-6, 2^-8, then
  // 2^-1, 2^-3.
  const std::vector<double> want = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
  const std::vector<double> got = naive_slopes(6);
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::fabs(got[i] - want[i]) < 1e-15);
  Case c;
  c.name = "alibi, 6 heads, GQA 3, causal";
  c.h_q = 6;
  c.h_kv = 2;
  c.alibi = true;
  c.causal = true;
  check_case(c);
  Case w = c;
  w.name = "alibi, window_right 0, bias";
  w.causal = false;
  w.right = 0;
  w.bias = true;
  check_case(w);
}

TEST(cpu_attention_dropout_given) {
  Case c;
  c.name = "dropout mask";
  c.dropout = Dropout::kGiven;
  check_case(c);
  Case m = c;
  m.name = "dropout mask, causal, bias";
  m.causal = true;
  m.bias = true;
  check_case(m);
}

TEST(cpu_attention_dropout_drawn) {
  Case c;
  c.name = "dropout drawn p = 0.3";
  c.dropout = Dropout::kDrawn;
  c.p = 0.3;
  check_case(c);  // the naive forward uses the documented generator

  // With s_kv = d_v and V = identity, O = P * keep / (1 - p) shows every
  // decision: the dropped fraction is near p, the same seed repeats it and
  // another seed or offset does not.
  Case id;
  id.name = "identity";
  id.b = 2;
  id.h_q = id.h_kv = 2;
  id.s_q = 32;
  id.s_kv = id.d_v = 32;
  id.d = 8;
  id.dropout = Dropout::kDrawn;
  id.p = 0.25;
  Data d = make_data(id);
  for (int64_t n = 0; n < id.b * id.h_kv; ++n)
    for (int64_t j = 0; j < id.s_kv; ++j)
      for (int64_t e = 0; e < id.d_v; ++e)
        d.v[static_cast<size_t>((n * id.s_kv + j) * id.d_v + e)] = j == e ? 1.0 : 0.0;
  const Forward f = cudnnfe_forward(id, d);
  REQUIRE(!f.o.empty());
  size_t dropped = 0;
  for (double x : f.o) dropped += x == 0.0;
  const double fraction = static_cast<double>(dropped) / static_cast<double>(f.o.size());
  CHECK_MSG(std::fabs(fraction - id.p) < 0.03, "dropped fraction %.4f, p %.2f", fraction, id.p);
  CHECK(cudnnfe_forward(id, d).o == f.o);
  Case other = id;
  other.seed = id.seed + 1;
  Case shifted = id;
  shifted.offset = id.offset + 1;
  CHECK(cudnnfe_forward(other, d).o != f.o);
  CHECK(cudnnfe_forward(shifted, d).o != f.o);

  // The backward with the drawn form equals the backward given the mask
  // recovered from O.
  Case given = id;
  given.dropout = Dropout::kGiven;
  given.dropout_scale = static_cast<float>(1.0f / (1.0f - 0.25f));
  Data dg = d;
  dg.v = make_data(id).v;  // any V for the backward
  for (size_t i = 0; i < f.o.size(); ++i) dg.mask[i] = f.o[i] != 0.0 ? 1.0 : 0.0;
  const Forward fg = cudnnfe_forward(given, dg);
  const Backward drawn_grads = cudnnfe_backward(id, dg, fg, false);
  const Backward given_grads = cudnnfe_backward(given, dg, fg, false);
  expect_close("drawn vs given dQ", drawn_grads.dq, given_grads.dq, 1e-6);
  expect_close("drawn vs given dK", drawn_grads.dk, given_grads.dk, 1e-6);
  expect_close("drawn vs given dV", drawn_grads.dv, given_grads.dv, 1e-6);

  // p = 0 with a seed is no dropout.
  Case zero = c;
  zero.p = 0.0;
  Case none = c;
  none.dropout = Dropout::kNone;
  const Data dz = make_data(c);
  CHECK(cudnnfe_forward(zero, dz).o == cudnnfe_forward(none, dz).o);
}

TEST(cpu_attention_dbias) {
  Case c;
  c.name = "dbias";
  c.bias = true;
  check_case(c, true, true);
  Case m = c;
  m.name = "dbias, causal, dropout mask, GQA";
  m.h_q = 4;
  m.h_kv = 2;
  m.causal = true;
  m.dropout = Dropout::kGiven;
  check_case(m, true, true);
}

// dBias asked for with cudnnfe_graph_set_next_output on the plain
// cudnnfe_graph_add_sdpa_backward (one mechanism for every caller-made
// output) is the _ex variant's dBias, written into the caller's tensor.
TEST(cpu_attention_dbias_into_a_caller_tensor) {
  Case c;
  c.name = "dbias into the caller's tensor";
  c.bias = true;
  c.h_q = 4;
  c.h_kv = 2;
  c.causal = true;
  const Data d = make_data(c);
  const Forward f = cudnnfe_forward(c, d);
  const Backward by_ex = cudnnfe_backward(c, d, f, true);
  const Backward into = cudnnfe_backward(c, d, f, true, true);
  CHECK(!by_ex.dbias.empty());
  CHECK(into.dbias == by_ex.dbias);
  CHECK(into.dq == by_ex.dq);
}

TEST(cpu_attention_everything_at_once) {
  Case c;
  c.name = "padding, bottom-right band, bias, dropout mask, scale tensor";
  c.b = 2;
  c.h_q = 4;
  c.h_kv = 2;
  c.s_q = 5;
  c.s_kv = 6;
  c.padding = true;
  c.seq_q = {5, 3};
  c.seq_kv = {4, 6};
  c.align = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  c.left = 3;
  c.right = 1;
  c.bias = true;
  c.dropout = Dropout::kGiven;
  c.scale_tensor = true;
  check_case(c, true, true);
}

TEST(cpu_attention_seq_len_out_of_range_is_refused_at_execute) {
  Case c;
  c.padding = true;
  c.seq_q = {4, 5};  // s_q is 4
  c.seq_kv = {5, 5};
  const Data d = make_data(c);
  Graph g;
  Buffers buf;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, q_dims(c));
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, k_dims(c));
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, v_dims(c));
  buf.floats(q, d.q);
  buf.floats(k, d.k);
  buf.floats(v, d.v);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "padded";
  set_options(g, buf, c, d, o);
  int64_t out = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr));
  cudnnfe_tensor_set_output(g.g, out, 1);
  buf.add(out, static_cast<size_t>(count(o_dims(c))) * 4);
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(g.g, nullptr, &options));
  cudnnfe_handle_t *handle = nullptr;
  cudnnfe_handle_create(&handle, -1);
  CHECK(cudnnfe_graph_execute(g.g, handle, buf.bindings.data(), buf.bindings.size(), nullptr, 0,
                              nullptr) == CUDNNFE_STATUS_INVALID_ARGUMENT);
  const std::string message = cudnnfe_handle_last_error(handle);
  CHECK_MSG(message.find("sdpa \"padded\"") != std::string::npos &&
                message.find("seq_len_q[1] = 5 is outside 0..4") != std::string::npos,
            "message: %s", message.c_str());
  cudnnfe_handle_destroy(handle);
}

TEST(cpu_attention_options_defaults_and_old_struct_size) {
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  CHECK(o.window_left == -1 && o.window_right == -1);
  CHECK(o.diagonal_alignment == CUDNNFE_DIAGONAL_TOP_LEFT);
  CHECK(o.attn_scale_tensor == 0 && o.padding_mask == 0 && o.alibi_mask == 0);
  CHECK(o.dropout_probability == 0.0 && o.dropout_seed == 0 && o.dropout_mask == 0);
  cudnnfe_sdpa_backward_options_t b;
  cudnnfe_sdpa_backward_options_init(&b);
  CHECK(b.window_left == -1 && b.window_right == -1 && b.dropout_scale_inv == 0);
  // A caller compiled before the options existed passes a smaller struct
  // (garbage after it must not be read): the new fields keep defaults.
  Case c;
  const Data d = make_data(c);
  Graph g;
  int64_t q = g.input("q", CUDNNFE_DTYPE_FLOAT, q_dims(c));
  int64_t k = g.input("k", CUDNNFE_DTYPE_FLOAT, k_dims(c));
  int64_t v = g.input("v", CUDNNFE_DTYPE_FLOAT, v_dims(c));
  std::memset(&o, 0x7f, sizeof(o));
  o.struct_size = offsetof(cudnnfe_sdpa_options_t, attn_scale_tensor);
  o.name = nullptr;
  o.attn_scale = 0;
  o.generate_stats = o.causal_mask = o.causal_mask_bottom_right = 0;
  o.bias = 0;
  o.compute_dtype = CUDNNFE_DTYPE_NOT_SET;
  int64_t out = 0, stats = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  std::memset(&b, 0x7f, sizeof(b));
  b.struct_size = offsetof(cudnnfe_sdpa_backward_options_t, attn_scale_tensor);
  b.name = nullptr;
  b.attn_scale = 0;
  b.causal_mask = b.causal_mask_bottom_right = b.deterministic = 0;
  b.bias = 0;
  b.compute_dtype = CUDNNFE_DTYPE_NOT_SET;
  int64_t st = g.input("st", CUDNNFE_DTYPE_FLOAT, stats_dims(c));
  int64_t dq, dk, dv;
  CHECK_OK(cudnnfe_graph_add_sdpa_backward(g.g, q, k, v, out, out, st, &b, &dq, &dk, &dv));
  (void)d;
}

}  // namespace
