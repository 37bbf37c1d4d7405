// Attention score modifiers (issue 16) through the public C API on the CPU
// reference: a softcap and an index mask against a naive attention written
// here from docs/attention.md, the JSON round trip (same document, same
// numbers), a renamed placeholder, the size-versioned option field, and the
// scope rules' errors (docs/attention.md, "Score modifiers").
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr int64_t kB = 1, kH = 2, kSq = 3, kSkv = 5, kD = 4;
constexpr double kCap = 0.7;

std::vector<float> pattern(size_t n, int seed) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(std::sin(0.61 * static_cast<double>(i + 1) * seed + seed));
  return v;
}

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype,
              std::vector<int64_t> dims) {
  int64_t uid = 0;
  CHECK_OK(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                                    nullptr, &uid));
  return uid;
}

int64_t pointwise(cudnnfe_graph_t *g, cudnnfe_pointwise_mode_t mode, int64_t a, int64_t b = 0,
                  int64_t c = 0, int axis = 0) {
  cudnnfe_pointwise_options_t o;
  cudnnfe_pointwise_options_init(&o);
  o.axis = axis;
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_pointwise(g, mode, a, b, c, &o, &out));
  return out;
}

const std::vector<int64_t> kScores = {kB, kH, kSq, kSkv};

// A graph q, k, v -> sdpa whose modifier is softcap (tanh(s / c) * c, c a
// scalar) followed by a mask keeping j <= i + 1 (-1e9 elsewhere, from a
// pass-by-value input). Writes the UIDs the test binds.
struct Built {
  int64_t q = 0, k = 0, v = 0, neg = 0, o = 0, score = 0;
};

Built build(cudnnfe_graph_t *g) {
  Built b;
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  b.q = input(g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  b.k = input(g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  b.v = input(g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  b.neg = input(g, "neg_inf", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
  CHECK_OK(cudnnfe_tensor_set_pass_by_value(g, b.neg, 1));
  int64_t cap = 0, one = 0;
  CHECK_OK(cudnnfe_graph_add_scalar(g, "cap", CUDNNFE_DTYPE_FLOAT, kCap, &cap));
  CHECK_OK(cudnnfe_graph_add_scalar(g, "one", CUDNNFE_DTYPE_INT32, 1, &one));
  CHECK_OK(cudnnfe_graph_begin_score_mod(g, "score", 4, kScores.data(), &b.score));
  const int64_t t =
      pointwise(g, CUDNNFE_POINTWISE_TANH_FWD, pointwise(g, CUDNNFE_POINTWISE_DIV, b.score, cap));
  const int64_t capped = pointwise(g, CUDNNFE_POINTWISE_MUL, t, cap);
  const int64_t row = pointwise(g, CUDNNFE_POINTWISE_GEN_INDEX, capped, 0, 0, 2);
  const int64_t col = pointwise(g, CUDNNFE_POINTWISE_GEN_INDEX, capped, 0, 0, 3);
  const int64_t keep =
      pointwise(g, CUDNNFE_POINTWISE_CMP_LE, col, pointwise(g, CUDNNFE_POINTWISE_ADD, row, one));
  const int64_t result = pointwise(g, CUDNNFE_POINTWISE_BINARY_SELECT, capped, b.neg, keep);
  CHECK_OK(cudnnfe_graph_end_score_mod(g, b.score, result));
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.score_mod = b.score;
  CHECK_OK(cudnnfe_graph_add_sdpa(g, b.q, b.k, b.v, &o, &b.o, nullptr));
  CHECK_OK(cudnnfe_tensor_set_output(g, b.o, 1));
  return b;
}

struct Data {
  std::vector<float> q = pattern(kB * kH * kSq * kD, 1), k = pattern(kB * kH * kSkv * kD, 2),
                     v = pattern(kB * kH * kSkv * kD, 3), neg = {-1e9f},
                     o = std::vector<float>(kB * kH * kSq * kD, NAN);
};

bool execute(cudnnfe_graph_t *g, const Built &b, Data &d) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  if (cudnnfe_graph_build(g, nullptr, &options) != CUDNNFE_STATUS_OK) {
    std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g));
    return false;
  }
  cudnnfe_binding_t bindings[] = {{b.q, d.q.data()},
                                  {b.k, d.k.data()},
                                  {b.v, d.v.data()},
                                  {b.neg, d.neg.data()},
                                  {b.o, d.o.data()}};
  cudnnfe_handle_t *handle = nullptr;
  cudnnfe_handle_create(&handle, -1);
  const cudnnfe_status_t s = cudnnfe_graph_execute(g, handle, bindings, 5, nullptr, 0, nullptr);
  if (s != CUDNNFE_STATUS_OK) std::printf("  execute: %s\n", cudnnfe_handle_last_error(handle));
  cudnnfe_handle_destroy(handle);
  return s == CUDNNFE_STATUS_OK;
}

// docs/attention.md: s = mod(q.k / sqrt(d)), P = softmax(s), O = P v.
std::vector<double> naive(const Data &d) {
  std::vector<double> o(d.o.size(), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(kD));
  for (int64_t h = 0; h < kH; ++h)
    for (int64_t i = 0; i < kSq; ++i) {
      std::vector<double> s(kSkv);
      double m = -INFINITY, z = 0.0;
      for (int64_t j = 0; j < kSkv; ++j) {
        double dot = 0.0;
        for (int64_t c = 0; c < kD; ++c)
          dot += d.q[(h * kSq + i) * kD + c] * d.k[(h * kSkv + j) * kD + c];
        s[j] = j <= i + 1 ? std::tanh(scale * dot / kCap) * kCap : -1e9;
        m = std::fmax(m, s[j]);
      }
      for (double x : s) z += std::exp(x - m);
      for (int64_t j = 0; j < kSkv; ++j)
        for (int64_t c = 0; c < kD; ++c)
          o[(h * kSq + i) * kD + c] += std::exp(s[j] - m) / z * d.v[(h * kSkv + j) * kD + c];
    }
  return o;
}

bool near(const std::vector<float> &got, const std::vector<double> &want) {
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= 1e-5 + 1e-4 * std::fabs(want[i]))) {
      std::printf("  element %zu: %g, expected %g\n", i, got[i], want[i]);
      return false;
    }
  return true;
}

std::string serialize(cudnnfe_graph_t *g) {
  size_t n = 0;
  CHECK_OK(cudnnfe_graph_serialize(g, nullptr, 0, &n));
  std::string s(n, '\0');
  CHECK_OK(cudnnfe_graph_serialize(g, s.data(), n, &n));
  return s;
}

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  Graph() { cudnnfe_graph_create(&g); }
  ~Graph() { cudnnfe_graph_destroy(g); }
};

}  // namespace

TEST(softcap_and_index_mask_match_a_naive_attention) {
  Graph g;
  const Built b = build(g.g);
  Data d;
  REQUIRE(execute(g.g, b, d));
  CHECK(near(d.o, naive(d)));
}

TEST(json_round_trip_keeps_the_modifier_and_the_numbers) {
  Graph g;
  const Built b = build(g.g);
  const std::string doc = serialize(g.g);
  CHECK(doc.find("\"score_mod\"") != std::string::npos);
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded.g, doc.data(), doc.size()));
  CHECK(serialize(loaded.g) == doc);
  Data d1, d2;
  REQUIRE(execute(g.g, b, d1));
  REQUIRE(execute(loaded.g, b, d2));  // the loaded graph keeps every UID
  CHECK(d1.o == d2.o);
  CHECK(near(d2.o, naive(d2)));
}

TEST(renamed_placeholder_and_external_input_still_run) {
  Graph g;
  Built b = build(g.g);
  CHECK_OK(cudnnfe_tensor_set_uid(g.g, b.score, 9001));
  CHECK_OK(cudnnfe_tensor_set_uid(g.g, b.neg, 9002));
  b.neg = 9002;
  const std::string doc = serialize(g.g);
  CHECK(doc.find("\"score\": 9001") != std::string::npos);
  Data d;
  REQUIRE(execute(g.g, b, d));
  CHECK(near(d.o, naive(d)));
}

TEST(an_older_options_struct_has_no_modifier) {
  // A caller compiled before score_mod existed passes a smaller struct: the
  // field keeps its default (0, none) and the graph is plain attention.
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t q = input(g.g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  const int64_t k = input(g.g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t v = input(g.g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  cudnnfe_sdpa_options_t o;
  std::memset(&o, 0xff, sizeof o);  // the bytes past the old size must not be read
  cudnnfe_sdpa_options_init_sized(&o, offsetof(cudnnfe_sdpa_options_t, score_mod));
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr));
  const std::string doc = serialize(g.g);
  CHECK(doc.find("score_mod") == std::string::npos);
}

TEST(scope_rules_name_the_node_the_tensor_and_the_rule) {
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t q = input(g.g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  const int64_t k = input(g.g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t v = input(g.g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t x = input(g.g, "x", CUDNNFE_DTYPE_FLOAT, kScores);
  const int64_t outside = pointwise(g.g, CUDNNFE_POINTWISE_TANH_FWD, x);
  int64_t score = 0, other = 0;
  const int64_t three[] = {1, 2, 3};
  CHECK_FAILS(cudnnfe_graph_begin_score_mod(g.g, "s", 3, three, &score),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "4 dims");
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "score", 4, kScores.data(), &score));
  CHECK_FAILS(cudnnfe_graph_begin_score_mod(g.g, "again", 4, kScores.data(), &other),
              CUDNNFE_STATUS_WRONG_STATE, "\"score\" is still open");
  cudnnfe_reduction_options_t ro;
  cudnnfe_reduction_options_init(&ro);
  int64_t reduced = 0;
  CHECK_FAILS(cudnnfe_graph_add_reduction(g.g, CUDNNFE_REDUCTION_MAX, score, &ro, &reduced),
              CUDNNFE_STATUS_INVALID_GRAPH, "reduction", "only pointwise ops");
  // An input written by a node outside the scope.
  const int64_t bad = pointwise(g.g, CUDNNFE_POINTWISE_ADD, score, outside);
  CHECK_FAILS(cudnnfe_graph_end_score_mod(g.g, score, bad), CUDNNFE_STATUS_INVALID_GRAPH,
              "in1 \"pointwise_0::out\" is written by pointwise \"pointwise_0\"",
              "outside the score modifier");
  CHECK_FAILS(cudnnfe_graph_end_score_mod(g.g, q, bad), CUDNNFE_STATUS_WRONG_STATE,
              "not the placeholder of the open score modifier");
  // The scope stays open after a refused end; a sdpa cannot be added inside.
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.score_mod = score;
  int64_t out = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "only pointwise ops");
}

TEST(a_result_not_derived_from_the_score_is_refused) {
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t x = input(g.g, "x", CUDNNFE_DTYPE_FLOAT, kScores);
  int64_t score = 0;
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "score", 4, kScores.data(), &score));
  const int64_t t = pointwise(g.g, CUDNNFE_POINTWISE_TANH_FWD, x);
  CHECK_FAILS(cudnnfe_graph_end_score_mod(g.g, score, t), CUDNNFE_STATUS_INVALID_GRAPH,
              "score modifier \"score\"", "does not depend on the score tensor");
  CHECK_FAILS(cudnnfe_graph_end_score_mod(g.g, score, x), CUDNNFE_STATUS_INVALID_GRAPH,
              "is not the score tensor or an output of the modifier's nodes");
}

TEST(a_modifier_must_be_closed_and_taken_once) {
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t q = input(g.g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  const int64_t k = input(g.g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t v = input(g.g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  int64_t score = 0;
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "score", 4, kScores.data(), &score));
  const int64_t t = pointwise(g.g, CUDNNFE_POINTWISE_TANH_FWD, score);
  CHECK_FAILS(cudnnfe_graph_validate(g.g), CUDNNFE_STATUS_INVALID_GRAPH, "is still open");
  REQUIRE_OK(cudnnfe_graph_end_score_mod(g.g, score, t));
  // Its tensors stay virtual, and a later node may not read them.
  CHECK_FAILS(cudnnfe_tensor_set_output(g.g, t, 1), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "belongs to a score modifier");
  CHECK_FAILS(cudnnfe_tensor_set_pass_by_value(g.g, score, 1), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "belongs to a score modifier");
  int64_t y = 0;
  cudnnfe_pointwise_options_t po;
  cudnnfe_pointwise_options_init(&po);
  CHECK_FAILS(cudnnfe_graph_add_pointwise(g.g, CUDNNFE_POINTWISE_EXP, t, 0, 0, &po, &y),
              CUDNNFE_STATUS_INVALID_GRAPH, "is a tensor of a score modifier");
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  int64_t out = 0;
  CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, out, 1));
  CHECK_FAILS(cudnnfe_graph_validate(g.g), CUDNNFE_STATUS_INVALID_GRAPH,
              "no attention node names it");
  o.score_mod = score;
  o.name = "second";
  CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr));
  o.name = "third";
  CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "sdpa \"third\"", "score_mod is UID", "no other node has taken");
}

TEST(score_dims_must_be_the_attention_scores) {
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t q = input(g.g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  const int64_t k = input(g.g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t v = input(g.g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const std::vector<int64_t> wrong = {kB, kH, kSq, kSkv + 1};
  int64_t score = 0;
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "score", 4, wrong.data(), &score));
  REQUIRE_OK(
      cudnnfe_graph_end_score_mod(g.g, score, pointwise(g.g, CUDNNFE_POINTWISE_TANH_FWD, score)));
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.score_mod = score;
  int64_t out = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "score_mod score tensor \"score\"",
              "expected the scores' [b,h_q,s_q,s_kv] = [1,2,3,5]");
  // A refused node gives the modifier back: a corrected graph cannot reuse
  // it (its dims are wrong), but validation still reports it unclaimed.
  CHECK_FAILS(cudnnfe_graph_validate(g.g), CUDNNFE_STATUS_INVALID_GRAPH, "no attention node");
}

namespace {

// sdpa_backward with softcap as score_mod and its gradient as
// score_mod_bprop (dS = dS' * (1 - t * t), t the forward's tanh).
struct BackwardBuilt {
  int64_t q, k, v, o, d_o, stats, dq, dk, dv;
};

BackwardBuilt build_backward(cudnnfe_graph_t *g) {
  BackwardBuilt b{};
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT);
  b.q = input(g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  b.k = input(g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  b.v = input(g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  b.o = input(g, "o", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  b.d_o = input(g, "dO", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  b.stats = input(g, "stats", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, 1});
  int64_t cap = 0, one = 0, score = 0, ds = 0;
  CHECK_OK(cudnnfe_graph_add_scalar(g, "cap", CUDNNFE_DTYPE_FLOAT, kCap, &cap));
  CHECK_OK(cudnnfe_graph_add_scalar(g, "one", CUDNNFE_DTYPE_FLOAT, 1.0, &one));
  CHECK_OK(cudnnfe_graph_begin_score_mod(g, "score", 4, kScores.data(), &score));
  const int64_t t =
      pointwise(g, CUDNNFE_POINTWISE_TANH_FWD, pointwise(g, CUDNNFE_POINTWISE_DIV, score, cap));
  CHECK_OK(cudnnfe_graph_end_score_mod(g, score, pointwise(g, CUDNNFE_POINTWISE_MUL, t, cap)));
  CHECK_OK(cudnnfe_graph_begin_score_mod(g, "dS'", 4, kScores.data(), &ds));
  const int64_t slope =
      pointwise(g, CUDNNFE_POINTWISE_SUB, one, pointwise(g, CUDNNFE_POINTWISE_MUL, t, t));
  CHECK_OK(cudnnfe_graph_end_score_mod(g, ds, pointwise(g, CUDNNFE_POINTWISE_MUL, ds, slope)));
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.score_mod = score;
  o.score_mod_bprop = ds;
  CHECK_OK(cudnnfe_graph_add_sdpa_backward(g, b.q, b.k, b.v, b.o, b.d_o, b.stats, &o, &b.dq, &b.dk,
                                           &b.dv));
  for (int64_t out : {b.dq, b.dk, b.dv}) CHECK_OK(cudnnfe_tensor_set_output(g, out, 1));
  return b;
}

// Runs the backward on fixed inputs; returns dQ, dK and dV one after another.
std::vector<float> run_backward(cudnnfe_graph_t *g, const BackwardBuilt &b) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  if (cudnnfe_graph_build(g, nullptr, &options) != CUDNNFE_STATUS_OK) {
    std::printf("  build failed: %s\n", cudnnfe_graph_last_error(g));
    return {};
  }
  const size_t nq = kB * kH * kSq * kD, nk = kB * kH * kSkv * kD;
  std::vector<float> q = pattern(nq, 1), k = pattern(nk, 2), v = pattern(nk, 3), o = pattern(nq, 4),
                     d_o = pattern(nq, 5), stats(kB * kH * kSq, 1.5f), out(2 * nq + 2 * nk, NAN);
  cudnnfe_binding_t bindings[] = {
      {b.q, q.data()},    {b.k, k.data()},         {b.v, v.data()},
      {b.o, o.data()},    {b.d_o, d_o.data()},     {b.stats, stats.data()},
      {b.dq, out.data()}, {b.dk, out.data() + nq}, {b.dv, out.data() + nq + nk}};
  cudnnfe_handle_t *handle = nullptr;
  cudnnfe_handle_create(&handle, -1);
  CHECK_OK(cudnnfe_graph_execute(g, handle, bindings, 9, nullptr, 0, nullptr));
  cudnnfe_handle_destroy(handle);
  out.resize(2 * nq + nk);
  return out;
}

}  // namespace

TEST(backward_modifiers_survive_the_json_round_trip) {
  Graph g;
  const BackwardBuilt b = build_backward(g.g);
  const std::string doc = serialize(g.g);
  CHECK(doc.find("\"score_mod_bprop\"") != std::string::npos);
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded.g, doc.data(), doc.size()));
  CHECK(serialize(loaded.g) == doc);
  const std::vector<float> first = run_backward(g.g, b), second = run_backward(loaded.g, b);
  REQUIRE(!first.empty());
  CHECK(first == second);
  bool finite = true;
  for (float x : first) finite = finite && std::isfinite(x);
  CHECK(finite);
}

TEST(a_forward_modifier_may_not_read_another_modifier) {
  // Only score_mod_bprop may read score_mod's tensors, and only the same node's.
  Graph g;
  cudnnfe_graph_set_io_dtype(g.g, CUDNNFE_DTYPE_FLOAT);
  const int64_t q = input(g.g, "q", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSq, kD});
  const int64_t k = input(g.g, "k", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  const int64_t v = input(g.g, "v", CUDNNFE_DTYPE_FLOAT, {kB, kH, kSkv, kD});
  int64_t first = 0, second = 0;
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "first", 4, kScores.data(), &first));
  const int64_t t = pointwise(g.g, CUDNNFE_POINTWISE_TANH_FWD, first);
  REQUIRE_OK(cudnnfe_graph_end_score_mod(g.g, first, t));
  REQUIRE_OK(cudnnfe_graph_begin_score_mod(g.g, "second", 4, kScores.data(), &second));
  REQUIRE_OK(
      cudnnfe_graph_end_score_mod(g.g, second, pointwise(g.g, CUDNNFE_POINTWISE_ADD, second, t)));
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.score_mod = second;
  int64_t out = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, nullptr), CUDNNFE_STATUS_INVALID_GRAPH,
              "score_mod node pointwise", "reads \"pointwise_0::out\"",
              "of another score modifier");
}
