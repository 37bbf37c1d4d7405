// Ragged (packed, THD) and paged K/V layouts of attention on the CPU
// reference (docs/attention.md): the padded BHSD forward against a naive
// attention written here, the ragged forward and backward against the
// padded ones (same numbers, and no write outside the valid rows), O padded
// or with offsets of its own, the paged forward (plain and packed tables)
// against the contiguous one, graph JSON round trips, and bad inputs
// (cudnnfe_graph_set_ragged_offset included).
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attention_ragged_support.h"
#include "harness.h"

namespace {

using namespace ragged_test;

constexpr cudnnfe_target_t kCpu = CUDNNFE_TARGET_CPU_REFERENCE;
constexpr cudnnfe_dtype_t kF32 = CUDNNFE_DTYPE_FLOAT;

// The attention with padding (and a causal mask) computed directly, dense
// BHSD; rows beyond seq_len_q are NaN (not compared).
std::vector<double> naive_o(const Case &c, const Data &d) {
  std::vector<double> o(static_cast<size_t>(c.b * c.h_q * c.s_q * c.d_v), kNaN);
  const int64_t group = c.h_q / c.h_kv;
  for (int64_t n = 0; n < c.b; ++n)
    for (int64_t h = 0; h < c.h_q; ++h)
      for (int64_t i = 0; i < c.seq_q[static_cast<size_t>(n)]; ++i) {
        const int64_t sq = c.seq_q[static_cast<size_t>(n)], skv = c.seq_kv[static_cast<size_t>(n)];
        std::vector<double> w;
        double max = -1e300;
        for (int64_t j = 0; j < skv; ++j) {
          const int64_t diag = c.causal_br ? i + skv - sq : i;
          if ((c.causal || c.causal_br) && j > diag) {
            w.push_back(-INFINITY);
            continue;
          }
          double s = 0;
          for (int64_t e = 0; e < c.d; ++e)
            s += d.q[static_cast<size_t>(((n * c.h_q + h) * c.s_q + i) * c.d + e)] *
                 d.k[static_cast<size_t>(((n * c.h_kv + h / group) * c.s_kv + j) * c.d + e)];
          w.push_back(s * c.scale);
          max = std::max(max, s * c.scale);
        }
        double sum = 0;
        for (double &x : w) sum += (x = std::exp(x - max));
        for (int64_t e = 0; e < c.d_v; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < skv; ++j)
            acc += w[static_cast<size_t>(j)] / sum *
                   d.v[static_cast<size_t>(((n * c.h_kv + h / group) * c.s_kv + j) * c.d_v + e)];
          o[static_cast<size_t>(((n * c.h_q + h) * c.s_q + i) * c.d_v + e)] = acc;
        }
      }
  return o;
}

void expect(const char *what, const std::vector<double> &got, const std::vector<double> &want,
            double tol) {
  const Compare r = compare(got, want);
  CHECK_MSG(r.max_err <= tol && r.nan_mismatch == 0,
            "%s: max error %.3g (tol %.0e), %d NaN mismatches", what, r.max_err, tol,
            r.nan_mismatch);
}

std::vector<Case> ragged_cases() {
  std::vector<Case> cases;
  Case c;
  c.name = "GQA, gaps between sequences, INT32 offsets";
  c.gap = 3;
  cases.push_back(c);
  c.name = "causal, INT64 offsets, packed tight";
  c.gap = 0;
  c.causal = true;
  c.int64_offsets = true;
  c.seq_kv = {5, 6, 3};  // causal rows need a key
  cases.push_back(c);
  c.name = "bottom-right causal, h_q = h_kv, d = d_v";
  c.causal = false;
  c.causal_br = true;
  c.h_kv = 2;
  c.d_v = 4;
  c.gap = 1;
  c.seq_q = {3, 2, 1};
  cases.push_back(c);
  return cases;
}

TEST(ragged_forward_matches_padded_and_naive) {
  for (const Case &c : ragged_cases()) {
    std::printf("  %s\n", c.name);
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult padded = forward(c, d, kF32, false, kCpu);
      const ForwardResult ragged = forward(c, d, kF32, true, kCpu);
      expect("padded O vs naive", padded.o, naive_o(c, d), 1e-5);
      expect("ragged O vs padded", ragged.o, padded.o, 1e-6);
      expect("ragged stats vs padded", ragged.stats, padded.stats, 1e-6);
      CHECK_MSG(ragged.o_gaps == 0, "%d gap elements of O were written", ragged.o_gaps);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

TEST(ragged_backward_matches_padded) {
  for (const Case &c : ragged_cases()) {
    std::printf("  %s\n", c.name);
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult f = forward(c, d, kF32, false, kCpu);
      const BackwardResult padded = backward(c, d, f.o, f.stats, kF32, false, kCpu);
      const BackwardResult ragged = backward(c, d, f.o, f.stats, kF32, true, kCpu);
      expect("ragged dQ vs padded", ragged.dq, padded.dq, 1e-6);
      expect("ragged dK vs padded", ragged.dk, padded.dk, 1e-6);
      expect("ragged dV vs padded", ragged.dv, padded.dv, 1e-6);
      CHECK_MSG(ragged.gaps == 0, "%d gap elements of dQ, dK, dV were written", ragged.gaps);
      // Not all zero: the comparison means something.
      double norm = 0;
      for (double x : padded.dk)
        if (!std::isnan(x)) norm += std::fabs(x);
      CHECK(norm > 1e-3);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

TEST(paged_forward_matches_contiguous) {
  struct Variant {
    const char *name;
    bool k, v;
    int64_t page_size, max_seq_len_kv;
  };
  const Variant variants[] = {
      {"K and V paged, s_kv = pages * page_size", true, true, 2, 0},
      {"K paged only (s_kv from V)", true, false, 4, 0},
      {"V paged only (s_kv from K)", false, true, 4, 0},
      {"K and V paged, max_seq_len_kv < pages * page_size", true, true, 4, 6}};
  for (const Variant &var : variants) {
    std::printf("  %s\n", var.name);
    Case c;
    c.page_k = var.k;
    c.page_v = var.v;
    c.page_size = var.page_size;
    c.causal = true;
    c.seq_kv = {5, 6, 3};
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult contiguous = forward(c, d, kF32, false, kCpu);
      const ForwardResult paged = paged_forward(c, d, kF32, kCpu, var.max_seq_len_kv);
      expect("paged O vs contiguous", paged.o, contiguous.o, 1e-6);
      expect("paged stats vs contiguous", paged.stats, contiguous.stats, 1e-6);
      expect("paged O vs naive", paged.o, naive_o(c, d), 1e-5);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

// O is padded unless it has offsets of its own (cudnn-frontend's sample 52
// and THD tests), whatever q's layout; the offsets are given after the op.
TEST(ragged_inputs_with_padded_or_own_o) {
  for (const Case &c : ragged_cases()) {
    std::printf("  %s\n", c.name);
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult padded_o = mixed_forward(c, d, kF32, OLayout::kPadded, kCpu);
      const ForwardResult own_o = mixed_forward(c, d, kF32, OLayout::kOwnOffsets, kCpu);
      expect("padded O vs naive", padded_o.o, naive_o(c, d), 1e-5);
      expect("own-offsets O vs naive", own_o.o, naive_o(c, d), 1e-5);
      CHECK_MSG(own_o.o_gaps == 0, "%d gap elements of O were written", own_o.o_gaps);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

// Stats with offsets of their own (cudnn-frontend's THD stats), forward and
// backward: the same numbers as padded stats, nothing written in the gaps.
TEST(ragged_stats_forward_and_backward) {
  for (const Case &c : ragged_cases()) {
    std::printf("  %s\n", c.name);
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult padded = forward(c, d, kF32, false, kCpu);
      const ForwardResult ragged = mixed_forward(c, d, kF32, OLayout::kOwnOffsets, kCpu, true);
      expect("ragged stats vs padded", ragged.stats, padded.stats, 1e-6);
      CHECK_MSG(ragged.stats_gaps == 0, "%d gap elements of stats were written", ragged.stats_gaps);
      const BackwardResult want = backward(c, d, padded.o, padded.stats, kF32, true, kCpu);
      const BackwardResult got = backward(c, d, padded.o, padded.stats, kF32, true, kCpu, true);
      expect("dQ with ragged stats", got.dq, want.dq, 1e-6);
      expect("dK with ragged stats", got.dk, want.dk, 1e-6);
      expect("dV with ragged stats", got.dv, want.dv, 1e-6);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

// The CPU reference writes 0 to a padded O's rows past seq_len_q (the GPU
// leaves them unspecified; docs/attention.md).
TEST(padded_o_of_ragged_q_zeroes_rows_past_seq_len_q) {
  Case c;
  Graph g(kF32);
  const RaggedLayouts L(c);
  const Data d = make_data(c, kF32);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  common_options(g, c, o);
  const int64_t q = g.input("q", kF32, q_dims(c), pack(L.q, d.q, c.seq_q), L.q.strides);
  const int64_t k = g.input("k", kF32, k_dims(c), d.k);
  const int64_t v = g.input("v", kF32, v_dims(c), d.v);
  o.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  g.strides(out, {c.h_q * c.s_q * c.d_v, c.s_q * c.d_v, c.d_v, 1});  // dense BHSD
  g.output(out, kF32, std::vector<double>(static_cast<size_t>(count(o_dims(c))), kNaN));
  try {
    run(g.g, kCpu, g.ios);
  } catch (const Error &e) {
    CHECK_MSG(false, "%s", e.what());
    return;
  }
  const std::vector<double> &got = g.values(out);
  int nonzero = 0;
  for (int64_t n = 0; n < c.b; ++n)
    for (int64_t h = 0; h < c.h_q; ++h)
      for (int64_t i = c.seq_q[static_cast<size_t>(n)]; i < c.s_q; ++i)
        for (int64_t e = 0; e < c.d_v; ++e)
          if (got[static_cast<size_t>(((n * c.h_q + h) * c.s_q + i) * c.d_v + e)] != 0.0) ++nonzero;
  CHECK_MSG(nonzero == 0, "%d padding elements of O are not 0", nonzero);
}

// Sample 53's packed page tables: each batch's entries start at its offset.
TEST(packed_page_tables_match_naive) {
  for (bool int64_offsets : {false, true}) {
    Case c;
    c.causal = true;
    c.seq_kv = {5, 6, 3};
    c.int64_offsets = int64_offsets;
    std::printf("  %s offsets\n", int64_offsets ? "INT64" : "INT32");
    const Data d = make_data(c, kF32);
    try {
      const ForwardResult packed = packed_paged_forward(c, d, kF32, kCpu);
      expect("packed-table O vs naive", packed.o, naive_o(c, d), 1e-5);
      const ForwardResult contiguous = forward(c, d, kF32, false, kCpu);
      expect("packed-table stats vs contiguous", packed.stats, contiguous.stats, 1e-6);
    } catch (const Error &e) {
      CHECK_MSG(false, "%s", e.what());
    }
  }
}

// ---- graph JSON ----

std::string serialize(cudnnfe_graph_t *g) {
  size_t size = 0;
  cudnnfe_graph_serialize(g, nullptr, 0, &size);
  std::string s(size, '\0');
  CHECK_OK(cudnnfe_graph_serialize(g, s.data(), s.size(), &size));
  s.resize(size);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

TEST(json_round_trip_keeps_offsets_and_page_tables) {
  Case c;
  Graph g(kF32);
  const RaggedLayouts L(c);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  common_options(g, c, o);
  const int64_t q = g.input("q", kF32, q_dims(c), {}, L.q.strides);
  const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, 4);
  const int64_t k = g.input("k_cache", kF32, pk.container_dims, {});
  const int64_t v = g.input("v", kF32, v_dims(c), {});
  o.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
  o.ragged_offset_o = offsets_input(g, c, "ragged_o", L.o);
  o.page_table_k = g.input("page_table_k", CUDNNFE_DTYPE_INT32, pk.table_dims, {});
  o.max_seq_len_kv = 6;
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  // A backward with all four offsets.
  cudnnfe_sdpa_backward_options_t b;
  cudnnfe_sdpa_backward_options_init(&b);
  b.padding_mask = 1;
  b.seq_len_q = o.seq_len_q;
  b.seq_len_kv = o.seq_len_kv;
  const int64_t kk = g.input("k", kF32, k_dims(c), {}, L.k.strides);
  const int64_t st = g.input("st", kF32, {c.b, c.h_q, c.s_q, 1}, {});
  b.ragged_offset_q = o.ragged_offset_q;
  b.ragged_offset_k = offsets_input(g, c, "ragged_k", L.k);
  b.ragged_offset_v = offsets_input(g, c, "ragged_v", L.v);
  b.ragged_offset_o = o.ragged_offset_o;
  const int64_t vv = g.input("vv", kF32, v_dims(c), {}, L.v.strides);
  int64_t dq, dk, dv;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(g.g, q, kk, vv, out, out, st, &b, &dq, &dk, &dv));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, dq, 1));
  const std::string first = serialize(g.g);
  for (const char *part :
       {"\"ragged_offset_q\": ", "\"ragged_offset_o\": ", "\"ragged_offset_k\": ",
        "\"ragged_offset_v\": ", "\"page_table_k\": ", "\"max_seq_len_kv\": 6"})
    CHECK_MSG(first.find(part) != std::string::npos, "JSON lacks %s", part);
  cudnnfe_graph_t *loaded = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&loaded));
  CHECK_OK(cudnnfe_graph_deserialize(loaded, first.data(), first.size()));
  CHECK(serialize(loaded) == first);
  cudnnfe_graph_destroy(loaded);
}

// O's own offsets given after the op, and packed page tables, survive JSON.
TEST(json_round_trip_keeps_own_o_offsets_and_packed_tables) {
  Case c;
  Graph g(kF32);
  const RaggedLayouts L(c);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  common_options(g, c, o);
  const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, 2);
  const int64_t q = g.input("q", kF32, q_dims(c), {}, L.q.strides);
  const int64_t k = g.input("k_cache", kF32, pk.container_dims, {});
  const int64_t v = g.input("v", kF32, v_dims(c), {});
  o.ragged_offset_q = offsets_input(g, c, "ragged_q", L.q);
  o.page_table_k = g.input("page_table_k", CUDNNFE_DTYPE_INT32, pk.table_dims, {});
  o.ragged_offset_page_table_k =
      g.input("table_offsets", CUDNNFE_DTYPE_INT64, {c.b + 1, 1, 1, 1}, {});
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  REQUIRE_OK(cudnnfe_graph_set_ragged_offset(g.g, out, offsets_input(g, c, "own_o", L.o)));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, out, 1));
  const std::string first = serialize(g.g);
  for (const char *part : {"\"ragged_offset_o\": ", "\"ragged_offset_page_table_k\": "})
    CHECK_MSG(first.find(part) != std::string::npos, "JSON lacks %s", part);
  cudnnfe_graph_t *loaded = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&loaded));
  CHECK_OK(cudnnfe_graph_deserialize(loaded, first.data(), first.size()));
  CHECK(serialize(loaded) == first);
  CHECK_OK(cudnnfe_graph_validate(loaded));
  cudnnfe_graph_destroy(loaded);
}

// ---- bad inputs ----

constexpr cudnnfe_status_t GRAPH = CUDNNFE_STATUS_INVALID_GRAPH;

struct Bad {
  Case c;
  Graph g{kF32};
  RaggedLayouts L{c};
  int64_t q, k, v;
  cudnnfe_sdpa_options_t o;
  Bad() {
    cudnnfe_sdpa_options_init(&o);
    q = g.input("q", kF32, q_dims(c), {}, L.q.strides);
    k = g.input("k", kF32, k_dims(c), {}, L.k.strides);
    v = g.input("v", kF32, v_dims(c), {}, L.v.strides);
  }
  cudnnfe_status_t add() {
    int64_t out = 0, stats = 0;
    return cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats);
  }
};

TEST(bad_ragged_options) {
  {
    Bad b;
    b.o.ragged_offset_q = offsets_input(b.g, b.c, "ragged_q", b.L.q);
    CHECK_FAILS(b.add(), CUDNNFE_STATUS_NOT_SUPPORTED, "ragged_offset_q", "padding_mask");
  }
  {
    Bad b;
    common_options(b.g, b.c, b.o);
    b.o.ragged_offset_k = b.g.input("ragged_k", CUDNNFE_DTYPE_INT32, {b.c.b, 1, 1, 1}, {});
    CHECK_FAILS(b.add(), GRAPH, "ragged_offset_k", "\"ragged_k\"", "[b+1,1,1,1]", "[4,1,1,1]");
  }
  {
    Bad b;
    common_options(b.g, b.c, b.o);
    b.o.ragged_offset_v = b.g.input("ragged_v", CUDNNFE_DTYPE_FLOAT, {b.c.b + 1, 1, 1, 1}, {});
    CHECK_OK(b.add());
    CHECK_FAILS(cudnnfe_graph_validate(b.g.g), GRAPH, "ragged_offset_v", "INT32 or INT64");
  }
  {
    // Backward: o's offsets also describe dO; wrong dims are named so.
    Case c;
    Graph g(kF32);
    cudnnfe_sdpa_backward_options_t opts;
    cudnnfe_sdpa_backward_options_init(&opts);
    common_options(g, c, opts);
    const int64_t q = g.input("q", kF32, q_dims(c), {});
    const int64_t k = g.input("k", kF32, k_dims(c), {});
    const int64_t v = g.input("v", kF32, v_dims(c), {});
    const int64_t o = g.input("o", kF32, o_dims(c), {});
    const int64_t st = g.input("st", kF32, {c.b, c.h_q, c.s_q, 1}, {});
    opts.ragged_offset_o = g.input("ro", CUDNNFE_DTYPE_INT32, {c.b + 2, 1, 1, 1}, {});
    int64_t dq, dk, dv;
    CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(g.g, q, k, v, o, o, st, &opts, &dq, &dk, &dv),
                GRAPH, "ragged_offset_o (o and dO)", "\"ro\"");
  }
}

// Issue 13: s_kv of a paged cache is pages times the page size, and the page
// count is ceil(s_kv / page_size); both wrapped for huge dims or options.
TEST(paged_sizes_that_overflow_are_refused) {
  Case c;
  const int64_t page_size = int64_t{1} << 30, pages = int64_t{1} << 40;
  int64_t out, stats;
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    common_options(g, c, o);
    const int64_t q = g.input("q", kF32, q_dims(c), {});
    const int64_t k = g.input("k_cache", kF32, {1, c.h_kv, page_size, c.d}, {});
    const int64_t v = g.input("v_cache", kF32, {1, c.h_kv, page_size, c.d_v}, {});
    o.page_table_k = g.input("table_k", CUDNNFE_DTYPE_INT32, {c.b, 1, pages, 1}, {});
    o.page_table_v = g.input("table_v", CUDNNFE_DTYPE_INT32, {c.b, 1, pages, 1}, {});
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "s_kv",
                "overflows 64 bits");
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    common_options(g, c, o);
    const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, 2);
    const int64_t q = g.input("q", kF32, q_dims(c), {});
    const int64_t k = g.input("k_cache", kF32, pk.container_dims, {});
    const int64_t v = g.input("v", kF32, v_dims(c), {});
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT32, pk.table_dims, {});
    o.max_seq_len_kv = std::numeric_limits<int64_t>::max();
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "pages of k",
                "overflows 64 bits");
  }
}

TEST(bad_paged_options) {
  Case c;
  const Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, 2);
  auto setup = [&](Graph &g, cudnnfe_sdpa_options_t &o, int64_t &q, int64_t &k, int64_t &v) {
    cudnnfe_sdpa_options_init(&o);
    q = g.input("q", kF32, q_dims(c), {});
    k = g.input("k_cache", kF32, pk.container_dims, {});
    v = g.input("v", kF32, v_dims(c), {});
  };
  int64_t out, stats, q, k, v;
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    setup(g, o, q, k, v);
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT32, pk.table_dims, {});
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "paged",
                "padding_mask");
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    setup(g, o, q, k, v);
    common_options(g, c, o);
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT32, {c.b, 1, 2, 1}, {});
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "page_table_k",
                "\"table\"", "ceil(s_kv/page_size)", "[3,1,3,1]");
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    setup(g, o, q, k, v);
    common_options(g, c, o);
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT64, pk.table_dims, {});
    CHECK_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
    CHECK_FAILS(cudnnfe_graph_validate(g.g), GRAPH, "page_table_k", "INT32");
  }
  {
    // A container without its table is read as K: its batch is wrong.
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    setup(g, o, q, k, v);
    common_options(g, c, o);
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "\"k_cache\"",
                "q's batch");
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    q = g.input("q", kF32, q_dims(c), {});
    k = g.input("k", kF32, k_dims(c), {});
    v = g.input("v", kF32, v_dims(c), {});
    common_options(g, c, o);
    o.max_seq_len_kv = 6;
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats),
                CUDNNFE_STATUS_NOT_SUPPORTED, "max_seq_len_kv", "paged");
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    setup(g, o, q, k, v);
    common_options(g, c, o);
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT32, pk.table_dims, {});
    o.ragged_offset_k = g.input("rk", CUDNNFE_DTYPE_INT32, {c.b + 1, 1, 1, 1}, {});
    CHECK_FAILS(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats), GRAPH, "paged cache",
                "ragged");
  }
}

// cudnnfe_graph_set_ragged_offset: what it takes and what it refuses.
TEST(bad_set_ragged_offset) {
  Case c;
  Graph g(kF32);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  common_options(g, c, o);
  o.generate_stats = 1;
  const int64_t q = g.input("q", kF32, q_dims(c), {});
  const int64_t k = g.input("k", kF32, k_dims(c), {});
  const int64_t v = g.input("v", kF32, v_dims(c), {});
  const int64_t ro = g.input("ro", CUDNNFE_DTYPE_INT32, {c.b + 1, 1, 1, 1}, {});
  int64_t out = 0, stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.g, CUDNNFE_POINTWISE_ABS, out, 0, 0, nullptr, &y));
  CHECK_FAILS(cudnnfe_graph_set_ragged_offset(g.g, y, ro), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "no operand of an attention node");
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, stats, ro));  // stats take their own
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, stats, 0));
  CHECK_FAILS(cudnnfe_graph_set_ragged_offset(g.g, out, y), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "virtual output", "graph input");
  CHECK_FAILS(cudnnfe_graph_set_ragged_offset(g.g, out, 987654), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "987654");
  // Wrong dims and type are the node's rules, checked at validation.
  const int64_t short_offsets = g.input("short", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1}, {});
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, out, short_offsets));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, out, 1));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, y, 1));
  CHECK_FAILS(cudnnfe_graph_validate(g.g), GRAPH, "ragged_offset_o", "\"short\"", "[b+1,1,1,1]");
  const int64_t float_offsets = g.input("f", kF32, {c.b + 1, 1, 1, 1}, {});
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, out, float_offsets));
  CHECK_FAILS(cudnnfe_graph_validate(g.g), GRAPH, "ragged_offset_o", "INT32 or INT64");
  // Offsets 0 make O padded again; the replaced tensors are then read by
  // nobody, which is no refusal (they take no buffer).
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, out, 0));
  CHECK_OK(cudnnfe_graph_validate(g.g));
}

TEST(bad_set_ragged_offset_backward_and_tables) {
  Case c;
  Graph g(kF32);
  cudnnfe_sdpa_backward_options_t opts;
  cudnnfe_sdpa_backward_options_init(&opts);
  common_options(g, c, opts);
  const RaggedLayouts L(c);
  const int64_t q = g.input("q", kF32, q_dims(c), {}, L.q.strides);
  const int64_t k = g.input("k", kF32, k_dims(c), {});
  const int64_t v = g.input("v", kF32, v_dims(c), {});
  const int64_t o = g.input("o", kF32, o_dims(c), {});
  const int64_t d_o = g.input("dO", kF32, o_dims(c), {});
  const int64_t st = g.input("st", kF32, {c.b, c.h_q, c.s_q, 1}, {});
  opts.ragged_offset_q = offsets_input(g, c, "rq", L.q);
  int64_t dq, dk, dv;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(g.g, q, k, v, o, d_o, st, &opts, &dq, &dk, &dv));
  const int64_t other = offsets_input(g, c, "other", L.q);
  CHECK_FAILS(cudnnfe_graph_set_ragged_offset(g.g, dq, other), CUDNNFE_STATUS_NOT_SUPPORTED, "dQ",
              "layout of q", "ragged_offset_q");
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, dq, opts.ragged_offset_q));  // q's: accepted
  CHECK_FAILS(cudnnfe_graph_set_ragged_offset(g.g, d_o, other), CUDNNFE_STATUS_NOT_SUPPORTED, "dO",
              "layout of o");
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, o, other));  // o and dO together
  CHECK_OK(cudnnfe_graph_set_ragged_offset(g.g, d_o, other));

  // A page table's offsets need the table.
  Graph f(kF32);
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  common_options(f, c, so);
  const int64_t fq = f.input("q", kF32, q_dims(c), {});
  const int64_t fk = f.input("k", kF32, k_dims(c), {});
  const int64_t fv = f.input("v", kF32, v_dims(c), {});
  so.ragged_offset_page_table_v = f.input("tv", CUDNNFE_DTYPE_INT32, {c.b + 1, 1, 1, 1}, {});
  int64_t out, stats;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, fq, fk, fv, &so, &out, &stats), GRAPH,
              "ragged_offset_page_table_v", "page_table_v", "is not");
  // Stats' offsets need the stats.
  so.ragged_offset_page_table_v = 0;
  so.ragged_offset_stats = f.input("rs", CUDNNFE_DTYPE_INT32, {c.b + 1, 1, 1, 1}, {});
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, fq, fk, fv, &so, &out, &stats), GRAPH,
              "ragged_offset_stats", "generate_stats is 0");
}

// Offsets and page numbers are data: checked when the CPU reference runs.
TEST(bad_offsets_and_pages_at_execute) {
  Case c;
  const Data d = make_data(c, kF32);
  {
    Graph g(kF32);
    const RaggedLayouts L(c);
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    common_options(g, c, o);
    const int64_t q = g.input("q", kF32, q_dims(c), pack(L.q, d.q, c.seq_q), L.q.strides);
    const int64_t k = g.input("k", kF32, k_dims(c), d.k);
    const int64_t v = g.input("v", kF32, v_dims(c), d.v);
    std::vector<double> bad(L.q.offsets.begin(), L.q.offsets.end());
    bad[1] = -8;
    o.ragged_offset_q = g.input("ragged_q", CUDNNFE_DTYPE_INT32, {c.b + 1, 1, 1, 1}, bad);
    int64_t out, stats;
    REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
    g.output(out, kF32, std::vector<double>(static_cast<size_t>(count(o_dims(c))), 0.0));
    try {
      run(g.g, kCpu, g.ios);
      CHECK_MSG(false, "a negative ragged offset was accepted");
    } catch (const Error &e) {
      const std::string m = e.what();
      CHECK_MSG(m.find("ragged_offset_q[1] = -8") != std::string::npos, "message: %s", m.c_str());
    }
  }
  {
    Graph g(kF32);
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    common_options(g, c, o);
    Paged pk = paged_layout(c.b, c.h_kv, c.s_kv, c.d, 2);
    const std::vector<double> container = to_pages(pk, d.k, c.b, c.s_kv);
    pk.table[4] = 99;  // batch 1, slot 1: batch 1 reads all 6 keys
    const int64_t q = g.input("q", kF32, q_dims(c), d.q);
    const int64_t k = g.input("k", kF32, pk.container_dims, container);
    const int64_t v = g.input("v", kF32, v_dims(c), d.v);
    o.page_table_k = g.input("table", CUDNNFE_DTYPE_INT32, pk.table_dims, pk.table);
    int64_t out, stats;
    REQUIRE_OK(cudnnfe_graph_add_sdpa(g.g, q, k, v, &o, &out, &stats));
    g.output(out, kF32, std::vector<double>(static_cast<size_t>(count(o_dims(c))), 0.0));
    try {
      run(g.g, kCpu, g.ios);
      CHECK_MSG(false, "a page number beyond the container was accepted");
    } catch (const Error &e) {
      const std::string m = e.what();
      CHECK_MSG(m.find("page_table_k[1][1] = 99 is not a page") != std::string::npos, "message: %s",
                m.c_str());
    }
  }
}

// The appended fields default to 0 for a caller built against the older
// struct (its struct_size ends before them).
TEST(older_struct_size_leaves_layouts_off) {
  cudnnfe_sdpa_options_t o;
  std::memset(&o, 0x7f, sizeof(o));
  cudnnfe_sdpa_options_init_sized(&o, offsetof(cudnnfe_sdpa_options_t, ragged_offset_q));
  CHECK(o.ragged_offset_q == 0x7f7f7f7f7f7f7f7f);  // beyond the caller's struct: untouched
  cudnnfe_sdpa_options_t full;
  cudnnfe_sdpa_options_init(&full);
  CHECK(full.ragged_offset_q == 0 && full.ragged_offset_o == 0 && full.page_table_k == 0 &&
        full.page_table_v == 0 && full.max_seq_len_kv == 0);
  CHECK(full.ragged_offset_page_table_k == 0 && full.ragged_offset_page_table_v == 0);
  cudnnfe_sdpa_backward_options_t b;
  cudnnfe_sdpa_backward_options_init(&b);
  CHECK(b.ragged_offset_q == 0 && b.ragged_offset_k == 0 && b.ragged_offset_v == 0 &&
        b.ragged_offset_o == 0);
}

}  // namespace
