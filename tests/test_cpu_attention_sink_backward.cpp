// The attention backward's sink (sink_token in, dSink_token out) on the CPU
// reference, through the public C API: every gradient (dQ, dK, dV, dSink)
// against central finite differences, in double, of the loss sum(O * dO)
// over the valid rows of a forward with the sink written here from
// docs/attention.md; padded rows left out; dQ, dK and dV unchanged by the
// sink's ports; the options' defaults, JSON round trip and bad inputs. It
// does not test the forward (test_cpu_attention_sink.cpp) nor the GPU
// (test_gpu_attention_options.cpp).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr double kScale = 0.5;

// b = 2 batches, h = 2 heads, s_q = 3 rows, s_kv = 4 keys, d = 3.
struct Shape {
  int64_t b = 2, h = 2, s_q = 3, s_kv = 4, d = 3;
  size_t q_size() const { return static_cast<size_t>(b * h * s_q * d); }
  size_t kv_size() const { return static_cast<size_t>(b * h * s_kv * d); }
  size_t rows() const { return static_cast<size_t>(b * h * s_q); }
};

// Values exactly representable in float, so that the library's FLOAT
// inputs and the finite differences see the same numbers.
std::vector<double> pattern(size_t n, int seed) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(std::sin(0.73 * static_cast<double>(i + 1) * seed + seed));
  return v;
}

struct Inputs {
  std::vector<double> q, k, v, sink, d_o;
  std::vector<int64_t> valid_rows;  // per batch
};

// The forward with a sink (docs/attention.md): m = max(max_j s_j, sink_h),
// Z = sum_j exp(s_j - m) + exp(sink_h - m), O = sum_j exp(s_j - m) / Z v_j,
// stats = m + log Z. `o` and `stats` may be null.
void forward(const Shape &a, const Inputs &in, std::vector<double> *o, std::vector<double> *stats) {
  if (o) o->assign(a.q_size(), 0.0);
  if (stats) stats->assign(a.rows(), 0.0);
  for (int64_t n = 0; n < a.b; ++n)
    for (int64_t h = 0; h < a.h; ++h)
      for (int64_t i = 0; i < a.s_q; ++i) {
        const size_t row = static_cast<size_t>((n * a.h + h) * a.s_q + i);
        const size_t head = static_cast<size_t>(n * a.h + h);
        std::vector<double> s(static_cast<size_t>(a.s_kv));
        double m = in.sink[static_cast<size_t>(h)];
        for (int64_t j = 0; j < a.s_kv; ++j) {
          double dot = 0.0;
          for (int64_t c = 0; c < a.d; ++c)
            dot += in.q[row * a.d + c] * in.k[(head * a.s_kv + j) * a.d + c];
          s[static_cast<size_t>(j)] = kScale * dot;
          m = std::max(m, s[static_cast<size_t>(j)]);
        }
        double z = std::exp(in.sink[static_cast<size_t>(h)] - m);
        for (double sj : s) z += std::exp(sj - m);
        if (stats) (*stats)[row] = m + std::log(z);
        if (!o) continue;
        for (int64_t j = 0; j < a.s_kv; ++j)
          for (int64_t c = 0; c < a.d; ++c)
            (*o)[row * a.d + c] +=
                std::exp(s[static_cast<size_t>(j)] - m) / z * in.v[(head * a.s_kv + j) * a.d + c];
      }
}

// sum(O * dO) over the valid rows: the loss whose gradients the backward gives.
double loss(const Shape &a, const Inputs &in) {
  std::vector<double> o;
  forward(a, in, &o, nullptr);
  double sum = 0.0;
  for (int64_t n = 0; n < a.b; ++n)
    for (int64_t h = 0; h < a.h; ++h)
      for (int64_t i = 0; i < in.valid_rows[static_cast<size_t>(n)]; ++i)
        for (int64_t c = 0; c < a.d; ++c) {
          const size_t at = static_cast<size_t>(((n * a.h + h) * a.s_q + i) * a.d + c);
          sum += o[at] * in.d_o[at];
        }
  return sum;
}

// d loss / d x[i] by central differences.
double numeric_gradient(const Shape &a, Inputs in, std::vector<double> Inputs::*x, size_t i) {
  const double step = 1e-5;
  (in.*x)[i] += step;
  const double up = loss(a, in);
  (in.*x)[i] -= 2 * step;
  return (up - loss(a, in)) / (2 * step);
}

double max_gradient_error(const Shape &a, const Inputs &in, std::vector<double> Inputs::*x,
                          const float *got) {
  double err = 0.0;
  for (size_t i = 0; i < (in.*x).size(); ++i)
    err = std::max(err, std::fabs(got[i] - numeric_gradient(a, in, x, i)));
  return err;
}

struct Run {
  cudnnfe_graph_t *g = nullptr;
  std::vector<std::vector<float>> floats;
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
  int64_t bound(int64_t uid, const std::vector<double> &values) {
    floats.emplace_back(values.begin(), values.end());
    bindings.push_back({uid, floats.back().data()});
    return uid;
  }
  int64_t float_input(const char *name, const std::vector<int64_t> &dims,
                      const std::vector<double> &values) {
    return bound(input(name, CUDNNFE_DTYPE_FLOAT, dims), values);
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

struct Gradients {
  std::vector<float> dq, dk, dv, dsink;
};

// Runs sdpa_backward on the forward's O and stats into `g` (left empty on
// failure); `with_sink` gives it
// sink_token and a dSink_token tensor. Padded rows (i >= valid_rows[n],
// with padding_mask) get O = 7, dO as given and stats = 0: garbage that
// must not count.
void backward(const Shape &a, const Inputs &in, bool with_sink, bool padded, Gradients &g) {
  std::vector<double> o, stats;
  forward(a, in, &o, &stats);
  for (size_t r = 0; r < a.rows(); ++r) {
    const int64_t n = static_cast<int64_t>(r) / (a.h * a.s_q);
    if (static_cast<int64_t>(r) % a.s_q < in.valid_rows[static_cast<size_t>(n)]) continue;
    stats[r] = 0.0;
    for (int64_t c = 0; c < a.d; ++c) o[r * a.d + c] = 7.0;
  }
  Run r;
  const std::vector<int64_t> qd = {a.b, a.h, a.s_q, a.d}, kd = {a.b, a.h, a.s_kv, a.d};
  cudnnfe_sdpa_backward_options_t opts;
  cudnnfe_sdpa_backward_options_init(&opts);
  opts.name = "bwd";
  opts.attn_scale = kScale;
  int64_t dsink = 0;
  if (with_sink) {
    opts.sink_token = r.float_input("sink", {1, a.h, 1, 1}, in.sink);
    dsink = opts.dsink_token = r.input("dsink", CUDNNFE_DTYPE_FLOAT, {1, a.h, 1, 1});
  }
  std::vector<int32_t> q_lengths(in.valid_rows.begin(), in.valid_rows.end());
  std::vector<int32_t> kv_lengths(static_cast<size_t>(a.b), static_cast<int32_t>(a.s_kv));
  if (padded) {
    opts.padding_mask = 1;
    opts.seq_len_q = r.input("seq_len_q", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
    opts.seq_len_kv = r.input("seq_len_kv", CUDNNFE_DTYPE_INT32, {a.b, 1, 1, 1});
    r.bindings.push_back({opts.seq_len_q, q_lengths.data()});
    r.bindings.push_back({opts.seq_len_kv, kv_lengths.data()});
  }
  int64_t dq = 0, dk = 0, dv = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(
      r.g, r.float_input("q", qd, in.q), r.float_input("k", kd, in.k), r.float_input("v", kd, in.v),
      r.float_input("o", qd, o), r.float_input("dO", qd, in.d_o),
      r.float_input("stats", {a.b, a.h, a.s_q, 1}, stats), &opts, &dq, &dk, &dv));
  const float *pq = r.output(dq, a.q_size());
  const float *pk = r.output(dk, a.kv_size());
  const float *pv = r.output(dv, a.kv_size());
  const float *ps = with_sink ? r.output(dsink, static_cast<size_t>(a.h)) : nullptr;
  if (!r.execute()) return;
  g.dq.assign(pq, pq + a.q_size());
  g.dk.assign(pk, pk + a.kv_size());
  g.dv.assign(pv, pv + a.kv_size());
  if (ps) g.dsink.assign(ps, ps + a.h);
}

Inputs inputs(const Shape &a, std::vector<int64_t> valid_rows) {
  Inputs in;
  in.q = pattern(a.q_size(), 1);
  in.k = pattern(a.kv_size(), 2);
  in.v = pattern(a.kv_size(), 3);
  in.d_o = pattern(a.q_size(), 4);
  in.sink = {0.75, -0.5};  // about as large as the scores, so that it matters
  in.valid_rows = std::move(valid_rows);
  return in;
}

// Every gradient against the finite differences of the same loss.
void check_gradients(const Shape &a, const Inputs &in, bool padded) {
  Gradients g;
  backward(a, in, true, padded, g);
  REQUIRE(g.dsink.size() == static_cast<size_t>(a.h));
  const double tol = 1e-4;
  const double e_sink = max_gradient_error(a, in, &Inputs::sink, g.dsink.data());
  const double e_q = max_gradient_error(a, in, &Inputs::q, g.dq.data());
  const double e_k = max_gradient_error(a, in, &Inputs::k, g.dk.data());
  const double e_v = max_gradient_error(a, in, &Inputs::v, g.dv.data());
  CHECK_MSG(e_sink < tol && e_q < tol && e_k < tol && e_v < tol,
            "max |analytic - numeric|: dSink %g, dQ %g, dK %g, dV %g", e_sink, e_q, e_k, e_v);
  // The sink really moves the loss: a sign error would not pass above.
  CHECK(std::fabs(g.dsink[0]) > 1e-2 && std::fabs(g.dsink[1]) > 1e-2);
}

}  // namespace

TEST(cpu_sdpa_backward_dsink_matches_finite_differences) {
  const Shape a;
  check_gradients(a, inputs(a, {a.s_q, a.s_q}), false);
}

TEST(cpu_sdpa_backward_dsink_leaves_out_padded_rows) {
  // Batch 1 has one valid row of three; its padded rows hold garbage O, dO
  // and stats, which must not reach dSink (nor dQ, dK, dV).
  const Shape a;
  check_gradients(a, inputs(a, {3, 1}), true);
}

TEST(cpu_sdpa_backward_sink_ports_leave_dq_dk_dv_unchanged) {
  // The stats already hold the sink: dQ, dK and dV are the same numbers
  // with and without sink_token / dSink_token.
  const Shape a;
  const Inputs in = inputs(a, {a.s_q, a.s_q});
  Gradients with, without;
  backward(a, in, true, false, with);
  backward(a, in, false, false, without);
  REQUIRE(with.dq.size() == a.q_size() && without.dq.size() == a.q_size());
  CHECK(with.dq == without.dq && with.dk == without.dk && with.dv == without.dv);
}

TEST(cpu_sdpa_backward_sink_options_default_and_round_trip_json) {
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  CHECK(o.sink_token == 0 && o.dsink_token == 0);
  // An older caller's struct, ending before the sink fields, keeps them 0.
  cudnnfe_sdpa_backward_options_t old;
  cudnnfe_sdpa_backward_options_init_sized(&old,
                                           offsetof(cudnnfe_sdpa_backward_options_t, sink_token));
  Run r;
  const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
  const int64_t stats = r.input("stats", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 1});
  int64_t dq = 0, dk = 0, dv = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa_backward(r.g, q, q, q, q, q, stats, &old, &dq, &dk, &dv));
  o.sink_token = r.input("sink", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  o.dsink_token = r.input("dsink", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(r.g, q, q, q, q, q, stats, &o, &dq, &dk, &dv));
  // dSink_token keeps the caller's UID and becomes a graph output.
  cudnnfe_tensor_kind_t kind = 0;
  CHECK_OK(cudnnfe_tensor_get_kind(r.g, o.dsink_token, &kind));
  CHECK(kind == CUDNNFE_TENSOR_KIND_OUTPUT);
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(r.g, nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(r.g, json.data(), size, &size));
  CHECK_MSG(json.find("\"dSink_token\"") != std::string::npos &&
                json.find("generate_dsink") != std::string::npos,
            "json: %s", json.c_str());
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

// Shapes, the missing sink and the output tensor are checked when the node
// is added (a refused add changes nothing); types when the graph is validated.
TEST(cpu_sdpa_backward_sink_bad_inputs) {
  Run r;
  const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
  const int64_t stats = r.input("stats", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 1});
  const int64_t sink = r.input("sink", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  const int64_t dsink = r.input("dsink", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 1});
  int64_t dq = 0, dk = 0, dv = 0;
  cudnnfe_sdpa_backward_options_t o;
  auto add = [&]() {
    return cudnnfe_graph_add_sdpa_backward(r.g, q, q, q, q, q, stats, &o, &dq, &dk, &dv);
  };
  auto fresh = [&]() {
    cudnnfe_sdpa_backward_options_init(&o);
    o.name = "bwd";
  };
  fresh();
  o.dsink_token = dsink;
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_GRAPH, "sdpa_backward \"bwd\"", "dSink_token \"dsink\"",
              "sink_token is not given");
  fresh();
  o.sink_token = r.input("sink3", CUDNNFE_DTYPE_FLOAT, {1, 3, 1, 1});
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_GRAPH, "sdpa_backward \"bwd\"", "sink_token \"sink3\"",
              "one sink logit per query head");
  fresh();
  o.sink_token = sink;
  o.dsink_token = r.input("dsink_wide", CUDNNFE_DTYPE_FLOAT, {1, 2, 1, 2});
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_GRAPH, "dSink_token \"dsink_wide\"", "[1,2,1,1]",
              "one gradient per sink logit");
  o.dsink_token = q;  // read by this very node
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_ARGUMENT, "dSink_token \"q\"",
              "no operation reads yet");
  o.dsink_token = 987654;
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_ARGUMENT, "dSink_token has UID 987654");
  // The refused adds left dsink an input: it can still become the output.
  fresh();
  o.sink_token = sink;
  o.dsink_token = dsink;
  REQUIRE_OK(add());
  o.name = "bwd2";
  CHECK_FAILS(add(), CUDNNFE_STATUS_INVALID_ARGUMENT, "dSink_token \"dsink\"",
              "is already written by sdpa_backward \"bwd\"");
}

TEST(cpu_sdpa_backward_sink_bad_types) {
  for (bool bad_sink : {true, false}) {
    Run r;
    const int64_t q = r.input("q", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 4});
    const int64_t stats = r.input("stats", CUDNNFE_DTYPE_FLOAT, {1, 2, 3, 1});
    const cudnnfe_dtype_t half = CUDNNFE_DTYPE_HALF, flt = CUDNNFE_DTYPE_FLOAT;
    cudnnfe_sdpa_backward_options_t o;
    cudnnfe_sdpa_backward_options_init(&o);
    o.name = "bwd";
    o.sink_token = r.input("sink", bad_sink ? half : flt, {1, 2, 1, 1});
    o.dsink_token = r.input("dsink", bad_sink ? flt : half, {1, 2, 1, 1});
    int64_t dq = 0, dk = 0, dv = 0;
    REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(r.g, q, q, q, q, q, stats, &o, &dq, &dk, &dv));
    cudnnfe_tensor_set_output(r.g, dq, 1);
    if (bad_sink)
      CHECK_FAILS(cudnnfe_graph_validate(r.g), CUDNNFE_STATUS_INVALID_GRAPH,
                  "sdpa_backward \"bwd\"", "sink_token \"sink\"", "must be FLOAT");
    else
      CHECK_FAILS(cudnnfe_graph_validate(r.g), CUDNNFE_STATUS_INVALID_GRAPH,
                  "sdpa_backward \"bwd\"", "dSink_token \"dsink\"", "must be FLOAT");
  }
}
