// The attention forward's options of issue 16 on the CPU reference, through
// the public C API: the sink token and the block mask against a naive
// attention written here from docs/attention.md (every score, the sink in
// the denominator, the mask's bit per 128x128 tile), the implementation
// choice (same numbers for each, JSON round trip) and their bad inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Shape {
  int64_t b = 1, h = 2, s_q = 3, s_kv = 5, d = 4;
};

std::vector<double> pattern(size_t n, int seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(0.61 * static_cast<double>(i + 1) * seed + seed);
  return v;
}

struct Run {
  cudnnfe_graph_t *g = nullptr;
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<cudnnfe_binding_t> bindings;
  Run() {
    cudnnfe_graph_create(&g);
    cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  }
  ~Run() { cudnnfe_graph_destroy(g); }
  Run(const Run &) = delete;
  Run &operator=(const Run &) = delete;
  int64_t input(const char *name, cudnnfe_dtype_t dt, const std::vector<int64_t> &dims) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                                      nullptr, &uid));
    return uid;
  }
  int64_t float_input(const char *name, const std::vector<int64_t> &dims,
                      const std::vector<double> &values) {
    const int64_t uid = input(name, CUDNNFE_DTYPE_FLOAT, dims);
    floats.emplace_back(values.begin(), values.end());
    bindings.push_back({uid, floats.back().data()});
    return uid;
  }
  int64_t byte_input(const char *name, const std::vector<int64_t> &dims,
                     const std::vector<uint8_t> &values) {
    const int64_t uid = input(name, CUDNNFE_DTYPE_UINT8, dims);
    bytes.push_back(values);
    bindings.push_back({uid, bytes.back().data()});
    return uid;
  }
  float *output(int64_t uid, size_t n) {
    cudnnfe_tensor_set_output(g, uid, 1);
    floats.emplace_back(n, 0.0f);
    bindings.push_back({uid, floats.back().data()});
    return floats.back().data();
  }
  bool execute() {
    cudnnfe_build_options_t options;
    cudnnfe_build_options_init(&options);
    options.target = CUDNNFE_TARGET_CPU_REFERENCE;
    if (cudnnfe_graph_build(g, nullptr, &options) != CUDNNFE_STATUS_OK) {
      std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g));
      return false;
    }
    cudnnfe_handle_t *handle = nullptr;
    cudnnfe_handle_create(&handle, -1);
    const cudnnfe_status_t s =
        cudnnfe_graph_execute(g, handle, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  execute failed: %s\n", cudnnfe_handle_last_error(handle));
    cudnnfe_handle_destroy(handle);
    return s == CUDNNFE_STATUS_OK;
  }
};

// The naive forward: scores s_ij = scale q_i . k_j, -inf where the block
// mask's tile bit is clear; m = max(max_j s_ij, sink_h); Z = sum_j exp(s_ij
// - m) + exp(sink_h - m); O_i = sum_j exp(s_ij - m) / Z v_j; stats = m +
// log Z. Returns O followed by stats.
std::vector<double> naive(const Shape &a, double scale, const std::vector<double> &q,
                          const std::vector<double> &k, const std::vector<double> &v,
                          const std::vector<double> *sink, const std::vector<uint8_t> *mask,
                          int64_t mask_cols, int64_t mask_rows) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> o(static_cast<size_t>(a.b * a.h * a.s_q * a.d)), stats;
  for (int64_t n = 0; n < a.b; ++n)
    for (int64_t h = 0; h < a.h; ++h)
      for (int64_t i = 0; i < a.s_q; ++i) {
        std::vector<double> s(static_cast<size_t>(a.s_kv));
        double m = sink ? (*sink)[static_cast<size_t>(h)] : -inf;
        for (int64_t j = 0; j < a.s_kv; ++j) {
          double dot = 0;
          for (int64_t c = 0; c < a.d; ++c)
            dot += q[static_cast<size_t>(((n * a.h + h) * a.s_q + i) * a.d + c)] *
                   k[static_cast<size_t>(((n * a.h + h) * a.s_kv + j) * a.d + c)];
          bool kept = true;
          if (mask) {
            const int64_t tile = j / 128;
            const size_t at =
                static_cast<size_t>(((n * a.h + h) * mask_rows + i / 128) * mask_cols + tile / 8);
            kept = ((*mask)[at] >> (tile % 8)) & 1;
          }
          s[static_cast<size_t>(j)] = kept ? scale * dot : -inf;
          m = std::max(m, s[static_cast<size_t>(j)]);
        }
        if (m == -inf) {  // every tile cleared, no sink: O = 0, stats = -inf
          stats.push_back(-inf);
          continue;
        }
        double z = sink ? std::exp((*sink)[static_cast<size_t>(h)] - m) : 0.0;
        for (double x : s) z += std::exp(x - m);
        for (int64_t j = 0; j < a.s_kv; ++j)
          for (int64_t c = 0; c < a.d; ++c)
            o[static_cast<size_t>(((n * a.h + h) * a.s_q + i) * a.d + c)] +=
                std::exp(s[static_cast<size_t>(j)] - m) / z *
                v[static_cast<size_t>(((n * a.h + h) * a.s_kv + j) * a.d + c)];
        stats.push_back(m + std::log(z));
      }
  o.insert(o.end(), stats.begin(), stats.end());
  return o;
}

double max_error(const float *got, const std::vector<double> &want, size_t from, size_t n) {
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double w = want[from + i];
    const double e = std::isinf(w) ? (got[i] == w ? 0.0 : 1e30) : std::fabs(got[i] - w);
    worst = std::max(worst, e);
  }
  return worst;
}

// Runs sdpa with an optional sink and block mask; checks O and stats.
void check_forward(const Shape &a, bool with_sink, bool with_mask,
                   cudnnfe_attention_implementation_t impl) {
  const std::vector<int64_t> qd = {a.b, a.h, a.s_q, a.d}, kd = {a.b, a.h, a.s_kv, a.d};
  const size_t nq = static_cast<size_t>(a.b * a.h * a.s_q * a.d);
  const size_t nk = static_cast<size_t>(a.b * a.h * a.s_kv * a.d);
  const std::vector<double> q = pattern(nq, 1), k = pattern(nk, 2), v = pattern(nk, 3);
  const std::vector<double> sink = {0.8, -1.5};  // a.h == 2
  const int64_t rows = (a.s_q + 127) / 128, cols = ((a.s_kv + 127) / 128 + 7) / 8;
  std::vector<uint8_t> mask(static_cast<size_t>(a.b * a.h * rows * cols));
  for (size_t i = 0; i < mask.size(); ++i) mask[i] = static_cast<uint8_t>(0xA5 ^ (i * 37));
  Run r;
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.attn_scale = 0.5;
  o.generate_stats = 1;
  o.implementation = impl;
  if (with_sink) o.sink_token = r.float_input("sink", {1, a.h, 1, 1}, sink);
  if (with_mask) o.block_mask = r.byte_input("block_mask", {a.b, a.h, rows, cols}, mask);
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(r.g, r.float_input("q", qd, q), r.float_input("k", kd, k),
                                    r.float_input("v", kd, v), &o, &out, &stats));
  const size_t n_stats = static_cast<size_t>(a.b * a.h * a.s_q);
  float *o_data = r.output(out, nq);
  float *stats_data = r.output(stats, n_stats);
  REQUIRE(r.execute());
  const std::vector<double> want =
      naive(a, 0.5, q, k, v, with_sink ? &sink : nullptr, with_mask ? &mask : nullptr, cols, rows);
  const double err_o = max_error(o_data, want, 0, nq);
  const double err_s = max_error(stats_data, want, nq, n_stats);
  CHECK_MSG(err_o < 1e-5 && err_s < 1e-5, "O error %g, stats error %g", err_o, err_s);
}

}  // namespace

TEST(cpu_sdpa_sink_token_joins_the_denominator) {
  check_forward(Shape{}, true, false, CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO);
}

TEST(cpu_sdpa_sink_token_dominating_shrinks_the_output) {
  // A sink far above every score takes almost all of the probability mass:
  // stats tend to the sink and O to 0, which the plain softmax never does.
  Shape a;
  Run r;
  const size_t n = static_cast<size_t>(a.b * a.h * a.s_q * a.d);
  const size_t nk = static_cast<size_t>(a.b * a.h * a.s_kv * a.d);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.generate_stats = 1;
  o.sink_token = r.float_input("sink", {1, a.h, 1, 1}, {30.0, 30.0});
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(r.g, r.float_input("q", {a.b, a.h, a.s_q, a.d}, pattern(n, 1)),
                                    r.float_input("k", {a.b, a.h, a.s_kv, a.d}, pattern(nk, 2)),
                                    r.float_input("v", {a.b, a.h, a.s_kv, a.d}, pattern(nk, 3)), &o,
                                    &out, &stats));
  float *o_data = r.output(out, n);
  float *s_data = r.output(stats, static_cast<size_t>(a.b * a.h * a.s_q));
  REQUIRE(r.execute());
  for (size_t i = 0; i < n; ++i) CHECK(std::fabs(o_data[i]) < 1e-9);
  CHECK(std::fabs(s_data[0] - 30.0f) < 1e-4);
}

TEST(cpu_sdpa_block_mask_clears_whole_tiles) {
  // s_kv = 300: three key tiles (bits 0-2 of each byte); s_q = 130: two
  // query tile rows. A row whose tiles are all cleared has O = 0 and stats
  // -inf without a sink.
  Shape a;
  a.s_q = 130;
  a.s_kv = 300;
  a.d = 2;
  check_forward(a, false, true, CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO);
  check_forward(a, true, true, CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED);
}

TEST(cpu_sdpa_implementation_does_not_change_the_numbers) {
  for (cudnnfe_attention_implementation_t impl :
       {CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO, CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE,
        CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED})
    check_forward(Shape{}, true, false, impl);
}

TEST(cpu_sdpa_new_options_default_and_round_trip_json) {
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  CHECK(o.implementation == CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO);
  CHECK(o.sink_token == 0 && o.block_mask == 0);
  Run r;
  o.implementation = CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED;
  o.sink_token = r.input("sink", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  o.block_mask = r.input("bm", CUDNNFE_DTYPE_UINT8, {1, 2, 1, 1});
  const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
  int64_t out = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr));
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(r.g, nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(r.g, json.data(), size, &size));
  CHECK_MSG(json.find("\"implementation\": \"UNIFIED\"") != std::string::npos ||
                json.find("\"implementation\":\"UNIFIED\"") != std::string::npos,
            "json: %s", json.c_str());
  CHECK(json.find("sink_token") != std::string::npos &&
        json.find("block_mask") != std::string::npos);
  cudnnfe_graph_t *back = nullptr;
  cudnnfe_graph_create(&back);
  CHECK_OK(cudnnfe_graph_deserialize(back, json.data(), json.size()));
  size_t size2 = 0;
  CHECK_OK(cudnnfe_graph_serialize(back, nullptr, 0, &size2));
  std::string json2(size2, '\0');
  CHECK_OK(cudnnfe_graph_serialize(back, json2.data(), size2, &size2));
  CHECK(json == json2);
  cudnnfe_graph_destroy(back);
}

// Shapes and the implementation are checked when the node is added; types
// when the graph is validated.
TEST(cpu_sdpa_new_options_bad_inputs) {
  Run r;
  const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
  int64_t out = 0;
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attn";
  o.implementation = 7;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "sdpa \"attn\"", "implementation 7 is unknown");
  cudnnfe_sdpa_options_init(&o);
  o.name = "attn";
  o.sink_token = r.input("sink", CUDNNFE_DTYPE_FLOAT, {1, 3, 1, 1});
  CHECK_FAILS(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "sink_token \"sink\"", "one sink logit per query head");
  cudnnfe_sdpa_options_init(&o);
  o.name = "attn";
  o.block_mask = r.input("bm", CUDNNFE_DTYPE_UINT8, {1, 2, 1, 2});
  CHECK_FAILS(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "block_mask \"bm\"", "[1,2,1,1]");
  o.block_mask = r.input("bm_ok", CUDNNFE_DTYPE_UINT8, {1, 2, 1, 1});
  o.implementation = CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "block_mask needs the UNIFIED implementation");
}

TEST(cpu_sdpa_new_options_bad_types) {
  struct BadType {
    const char *tensor;
    cudnnfe_dtype_t dtype;
    const char *rule;
  };
  for (const BadType &bad : {BadType{"sink_token", CUDNNFE_DTYPE_HALF, "must be FLOAT"},
                             BadType{"block_mask", CUDNNFE_DTYPE_INT8, "must be UINT8"}}) {
    Run r;
    const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    o.name = "attn";
    const bool sink = bad.tensor[0] == 's';
    const int64_t t = r.input(bad.tensor, bad.dtype, {1, 2, 1, 1});
    (sink ? o.sink_token : o.block_mask) = t;
    int64_t out = 0;
    REQUIRE_OK(cudnnfe_graph_add_sdpa(r.g, q, q, q, &o, &out, nullptr));
    cudnnfe_tensor_set_output(r.g, out, 1);
    CHECK_FAILS(cudnnfe_graph_validate(r.g), CUDNNFE_STATUS_INVALID_GRAPH, "sdpa \"attn\"",
                bad.tensor, bad.rule);
  }
}
