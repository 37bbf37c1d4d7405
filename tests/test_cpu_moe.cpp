// The CPU reference of moe_grouped_matmul (modes NONE, GATHER, SCATTER) and
// its backward against loops written here, through the public C API: group
// starts and boundaries, batches of groups, empty groups, BF16 inputs,
// the backward's column-major dweight, bad inputs (at validation and at
// execute) and the graph JSON round trip (docs/moe.md).
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;
using Ints = std::vector<int32_t>;

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
  void output(int64_t uid, cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_FLOAT) {
    CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1));
    CHECK_OK(cudnnfe_tensor_set_dtype(g_, uid, dtype));
  }
  bool build() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_status_t s = cudnnfe_graph_build(g_, nullptr, &o);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  build failed: %s: %s\n", cudnnfe_status_name(s), cudnnfe_graph_last_error(g_));
    return s == CUDNNFE_STATUS_OK;
  }
  // The status of one execute; `message` gets the handle's last error.
  cudnnfe_status_t run(const std::vector<cudnnfe_binding_t> &bindings,
                       std::string *message = nullptr) const {
    cudnnfe_handle_t *h = nullptr;
    cudnnfe_handle_create(&h, -1);
    cudnnfe_status_t s =
        cudnnfe_graph_execute(g_, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (message) *message = cudnnfe_handle_last_error(h);
    if (s != CUDNNFE_STATUS_OK && !message)
      std::printf("  execute failed: %s: %s\n", cudnnfe_status_name(s),
                  cudnnfe_handle_last_error(h));
    cudnnfe_handle_destroy(h);
    return s;
  }
  Dims dims(int64_t uid) const { return shape(uid, true); }
  Dims strides(int64_t uid) const { return shape(uid, false); }

 private:
  Dims shape(int64_t uid, bool want_dims) const {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, d, s, CUDNNFE_MAX_DIMS, &rank));
    const int64_t *src = want_dims ? d : s;
    return Dims(src, src + rank);
  }
  cudnnfe_graph_t *g_ = nullptr;
};

// A binding of a host buffer the reference only reads (or writes, for outputs).
cudnnfe_binding_t B(int64_t uid, const void *data) {
  return {uid, const_cast<void *>(data)};
}

cudnnfe_moe_grouped_matmul_options_t options(cudnnfe_moe_grouped_matmul_mode_t mode,
                                             int32_t top_k = 1) {
  cudnnfe_moe_grouped_matmul_options_t o;
  cudnnfe_moe_grouped_matmul_options_init(&o);
  o.mode = mode;
  o.top_k = top_k;
  return o;
}

// Small integers: every product and sum is exact in float, so the
// reference must match the loops here exactly.
std::vector<float> small_ints(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float &x : v) x = static_cast<float>(static_cast<int>(rng() % 7) - 3);
  return v;
}

// The problem: token[1, T, K] row-major, weight[E, K, N] column-major in
// K and N (cudnn-frontend's layout), routed rows split by `bounds`
// (G + 1 boundaries, the form the loops here read), expert g % E.
struct Problem {
  int64_t experts, tokens, k, n;
  Ints bounds;
  std::vector<float> token, weight;
  Problem(int64_t e, int64_t t, int64_t k_, int64_t n_, Ints b)
      : experts(e),
        tokens(t),
        k(k_),
        n(n_),
        bounds(std::move(b)),
        token(small_ints(static_cast<size_t>(t * k_), 1)),
        weight(small_ints(static_cast<size_t>(e * k_ * n_), 2)) {}
  float w(int64_t e, int64_t kk, int64_t j) const {
    return weight[static_cast<size_t>(e * k * n + j * k + kk)];
  }
  // The expert of routed row r, or -1 when no group holds it.
  int64_t expert_of(int64_t r) const {
    for (size_t g = 0; g + 1 < bounds.size(); ++g)
      if (bounds[g] <= r && r < bounds[g + 1]) return static_cast<int64_t>(g) % experts;
    return -1;
  }
  // token[src] @ weight[e], element j.
  float product(int64_t src, int64_t e, int64_t j) const {
    float acc = 0;
    for (int64_t kk = 0; kk < k; ++kk)
      acc += token[static_cast<size_t>(src * k + kk)] * w(e, kk, j);
    return acc;
  }
};

struct Ports {
  int64_t token, weight, offsets, index = 0, ks = 0, out = 0;
};

Ports add_forward(G &g, const Problem &p, int64_t offset_count,
                  cudnnfe_dtype_t io = CUDNNFE_DTYPE_FLOAT) {
  Ports t;
  t.token = g.input("token", io, {1, p.tokens, p.k});
  t.weight = g.input("weight", io, {p.experts, p.k, p.n}, {p.k * p.n, 1, p.k});
  t.offsets = g.input("first_token_offset", CUDNNFE_DTYPE_INT32, {offset_count, 1, 1});
  return t;
}

void check_rows(const std::vector<float> &got, const std::vector<float> &want, const char *what) {
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i)
    if (got[i] != want[i] && bad++ < 5)
      std::printf("  %s[%zu] = %g, expected %g\n", what, i, got[i], want[i]);
  CHECK_MSG(bad == 0, "%d mismatches in %s", bad, what);
}

// NONE with `offsets` (starts or boundaries) against the loops.
void check_none(const Problem &p, const Ints &offsets) {
  G g;
  Ports t = add_forward(g, p, static_cast<int64_t>(offsets.size()));
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0, &o,
                                                  &t.out));
  g.output(t.out);
  REQUIRE(g.build());
  CHECK((g.dims(t.out) == Dims{1, p.tokens, p.n}));
  CHECK((g.strides(t.out) == Dims{p.tokens * p.n, p.n, 1}));
  std::vector<float> out(static_cast<size_t>(p.tokens * p.n), 99.0f), want(out.size(), 0.0f);
  for (int64_t r = 0; r < p.tokens; ++r)
    if (p.expert_of(r) >= 0)
      for (int64_t j = 0; j < p.n; ++j)
        want[static_cast<size_t>(r * p.n + j)] = p.product(r, p.expert_of(r), j);
  REQUIRE(g.run({B(t.token, p.token.data()), B(t.weight, p.weight.data()),
                 B(t.offsets, offsets.data()), B(t.out, out.data())}) == CUDNNFE_STATUS_OK);
  check_rows(out, want, "output");
}

}  // namespace

TEST(none_group_starts) {
  // Starts [0, 2, 2]: an empty second group, the last ends at T.
  Problem p(3, 10, 5, 4, {0, 2, 2, 10});
  check_none(p, {0, 2, 2});
}

TEST(none_group_boundaries_leave_rows_unwritten) {
  // G + 1 boundaries ending before T: rows 8 and 9 belong to no group (0).
  Problem p(3, 10, 5, 4, {0, 3, 5, 8});
  check_none(p, {0, 3, 5, 8});
}

TEST(none_batches_of_groups) {
  // G = 4 groups for E = 2 experts (two batches): group g uses g % 2.
  Problem p(2, 9, 3, 5, {0, 2, 5, 6, 9});
  check_none(p, {0, 2, 5, 6});
}

TEST(none_single_expert_boundaries) {
  Problem p(1, 6, 4, 3, {0, 6});
  check_none(p, {0, 6});
}

TEST(bf16_inputs_float_compute) {
  Problem p(2, 8, 16, 8, {0, 5, 8});
  G g;
  Ports t = add_forward(g, p, 2, CUDNNFE_DTYPE_BFLOAT16);
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0, &o,
                                                  &t.out));
  g.output(t.out);
  REQUIRE(g.build());
  // Small integers are exact in BF16: x's top half is its BF16 encoding.
  auto bf16 = [](const std::vector<float> &v) {
    std::vector<uint16_t> b(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      uint32_t bits;
      std::memcpy(&bits, &v[i], 4);
      b[i] = static_cast<uint16_t>(bits >> 16);
    }
    return b;
  };
  const std::vector<uint16_t> tb = bf16(p.token), wb = bf16(p.weight);
  const Ints offsets = {0, 5};
  std::vector<float> out(static_cast<size_t>(8 * 8)), want(out.size());
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t j = 0; j < 8; ++j) want[r * 8 + j] = p.product(r, p.expert_of(r), j);
  REQUIRE(g.run({B(t.token, tb.data()), B(t.weight, wb.data()), B(t.offsets, offsets.data()),
                 B(t.out, out.data())}) == CUDNNFE_STATUS_OK);
  check_rows(out, want, "output");
}

TEST(gather_reads_token_index_rows) {
  // S = 4 tokens, R = 6 routed rows: output[r] = token[index[r]] @ W[e(r)].
  Problem p(2, 4, 5, 3, {0, 2, 6});
  const Ints index = {3, 0, 1, 3, 2, 0}, offsets = {0, 2};
  G g;
  Ports t = add_forward(g, p, 2);
  t.index = g.input("token_index", CUDNNFE_DTYPE_INT32, {1, 6, 1});
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, t.index, 0,
                                                  &o, &t.out));
  g.output(t.out);
  REQUIRE(g.build());
  CHECK((g.dims(t.out) == Dims{1, 6, 3}));
  std::vector<float> out(18, 99.0f), want(18);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t j = 0; j < 3; ++j) want[r * 3 + j] = p.product(index[r], p.expert_of(r), j);
  REQUIRE(g.run({B(t.token, p.token.data()), B(t.weight, p.weight.data()),
                 B(t.offsets, offsets.data()), B(t.index, index.data()), B(t.out, out.data())}) ==
          CUDNNFE_STATUS_OK);
  check_rows(out, want, "output");
}

TEST(scatter_writes_token_slots) {
  // top_k = 2, S = 3 tokens: routed row r goes to slot index[r] * 2 + ks[r].
  Problem p(3, 6, 4, 3, {0, 1, 4, 6});
  const Ints index = {2, 0, 1, 2, 0, 1}, ks = {1, 0, 1, 0, 1, 0}, offsets = {0, 1, 4};
  G g;
  Ports t = add_forward(g, p, 3);
  t.index = g.input("token_index", CUDNNFE_DTYPE_INT32, {1, 6, 1});
  t.ks = g.input("token_ks", CUDNNFE_DTYPE_INT32, {1, 6, 1});
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, 2);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, t.index,
                                                  t.ks, &o, &t.out));
  g.output(t.out);
  REQUIRE(g.build());
  std::vector<float> out(18, 99.0f), want(18);
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t j = 0; j < 3; ++j)
      want[(index[r] * 2 + ks[r]) * 3 + j] = p.product(r, p.expert_of(r), j);
  REQUIRE(g.run({B(t.token, p.token.data()), B(t.weight, p.weight.data()),
                 B(t.offsets, offsets.data()), B(t.index, index.data()), B(t.ks, ks.data()),
                 B(t.out, out.data())}) == CUDNNFE_STATUS_OK);
  check_rows(out, want, "output");
}

TEST(backward_weight_gradient) {
  // dweight[e] = sum over e's groups of token[rows]^T @ doutput[rows]; two
  // batches of E = 2 experts (starts [0, 3, 3, 5], dweight's dims set).
  const int64_t e = 2, t_rows = 8, k = 3, n = 4;
  const Ints offsets = {0, 3, 3, 5}, bounds = {0, 3, 3, 5, 8};
  const std::vector<float> token = small_ints(t_rows * k, 3), dout = small_ints(t_rows * n, 4);
  G g;
  const int64_t d = g.input("doutput", CUDNNFE_DTYPE_FLOAT, {1, t_rows, n});
  const int64_t tk = g.input("token", CUDNNFE_DTYPE_FLOAT, {1, t_rows, k});
  const int64_t off = g.input("first_token_offset", CUDNNFE_DTYPE_INT32, {4, 1, 1});
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
  int64_t dw = 0;
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul_backward(g.get(), d, tk, off, &o, &dw));
  const Dims dw_dims = {e, k, n};
  CHECK_OK(cudnnfe_tensor_set_dims(g.get(), dw, 3, dw_dims.data()));
  g.output(dw);
  REQUIRE(g.build());
  CHECK((g.dims(dw) == Dims{e, k, n}));
  CHECK((g.strides(dw) == Dims{k * n, 1, k}));
  std::vector<float> got(static_cast<size_t>(e * k * n), 99.0f), want(got.size(), 0.0f);
  for (size_t grp = 0; grp + 1 < bounds.size(); ++grp)
    for (int64_t r = bounds[grp]; r < bounds[grp + 1]; ++r)
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j)  // column-major: element (kk, j) at j * k + kk
          want[(grp % e) * k * n + j * k + kk] += token[r * k + kk] * dout[r * n + j];
  REQUIRE(g.run({B(d, dout.data()), B(tk, token.data()), B(off, offsets.data()),
                 B(dw, got.data())}) == CUDNNFE_STATUS_OK);
  check_rows(got, want, "dweight");
}

TEST(backward_infers_experts_from_offsets) {
  G g;
  const int64_t d = g.input("doutput", CUDNNFE_DTYPE_FLOAT, {1, 7, 2});
  const int64_t tk = g.input("token", CUDNNFE_DTYPE_FLOAT, {1, 7, 5});
  const int64_t off = g.input("first_token_offset", CUDNNFE_DTYPE_INT32, {3, 1, 1});
  int64_t dw = 0;
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul_backward(g.get(), d, tk, off, nullptr, &dw));
  g.output(dw);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  CHECK((g.dims(dw) == Dims{3, 5, 2}));
  CHECK((g.strides(dw) == Dims{10, 1, 5}));
}

TEST(options_defaults) {
  cudnnfe_moe_grouped_matmul_options_t o;
  std::memset(&o, 0x5a, sizeof(o));
  cudnnfe_moe_grouped_matmul_options_init(&o);
  CHECK(o.struct_size == sizeof(o));
  CHECK(o.name == nullptr);
  CHECK(o.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
  CHECK(o.top_k == 1);
  CHECK(o.compute_dtype == CUDNNFE_DTYPE_NOT_SET);
}

TEST(bad_options_and_shapes) {
  Problem p(2, 6, 4, 3, {0, 3, 6});
  const auto none = CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE;
  {  // options refused at the call
    G g;
    Ports t = add_forward(g, p, 2);
    auto o = options(7);
    CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0,
                                                     &o, &t.out),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "moe_grouped_matmul", "mode is 7");
    o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, 0);
    CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0,
                                                     &o, &t.out),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "top_k is 0");
    o = options(none);
    CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0,
                                                     &o, nullptr),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "output");
    int64_t dw = 0;
    o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER);
    CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul_backward(g.get(), t.token, t.token, t.offsets,
                                                              &o, &dw),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "moe_grouped_matmul_backward", "mode is GATHER",
                "NONE only");
  }
  auto refused = [&](const Dims &token, const Dims &weight, const Dims &offsets,
                     cudnnfe_moe_grouped_matmul_mode_t mode, const Dims &index, const Dims &ks,
                     std::initializer_list<const char *> parts) {
    G g;
    const int64_t tk = g.input("token", CUDNNFE_DTYPE_FLOAT, token);
    const int64_t w = g.input("weight", CUDNNFE_DTYPE_FLOAT, weight);
    const int64_t off = g.input("first_token_offset", CUDNNFE_DTYPE_INT32, offsets);
    const int64_t ix = index.empty() ? 0 : g.input("token_index", CUDNNFE_DTYPE_INT32, index);
    const int64_t k = ks.empty() ? 0 : g.input("token_ks", CUDNNFE_DTYPE_INT32, ks);
    auto o = options(mode, 2);
    int64_t out = 0;
    const cudnnfe_status_t s =
        cudnnfe_graph_add_moe_grouped_matmul(g.get(), tk, w, off, ix, k, &o, &out);
    const std::string msg = cudnnfe_last_error();
    CHECK_MSG(s == CUDNNFE_STATUS_INVALID_GRAPH, "status %s: %s", cudnnfe_status_name(s),
              msg.c_str());
    for (const char *part : parts)
      CHECK_MSG(msg.find(part) != std::string::npos, "message lacks \"%s\": %s", part, msg.c_str());
  };
  refused({6, 4}, {2, 4, 3}, {2, 1, 1}, none, {}, {}, {"token \"token\" has 2 dims"});
  refused({2, 6, 4}, {2, 4, 3}, {2, 1, 1}, none, {}, {}, {"dim 0 must be 1"});
  refused({1, 6, 5}, {2, 4, 3}, {2, 1, 1}, none, {}, {}, {"has K = 5", "has K = 4"});
  // 3 experts: 5 offsets are neither starts (a multiple of 3) nor boundaries (one more).
  refused({1, 6, 4}, {3, 4, 3}, {5, 1, 1}, none, {}, {},
          {"first_token_offset \"first_token_offset\" has dims [5,1,1] for 3 experts"});
  refused({1, 6, 4}, {1, 4, 3}, {1, 1, 1}, none, {}, {}, {"[G + 1, 1, 1] boundaries"});
  refused({1, 6, 4}, {2, 4, 3}, {2, 1, 1}, CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER, {}, {},
          {"mode GATHER reads input token_index, which is missing"});
  refused({1, 6, 4}, {2, 4, 3}, {2, 1, 1}, none, {1, 6, 1}, {},
          {"input token_index \"token_index\" is given but mode NONE does not read it"});
  refused({1, 6, 4}, {2, 4, 3}, {2, 1, 1}, CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, {1, 6, 1},
          {1, 5, 1}, {"token_ks \"token_ks\" has dims [1,5,1]; expected [1,6,1]"});
  refused({1, 6, 4}, {2, 4, 3}, {2, 1, 1}, CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER, {6, 1, 1}, {},
          {"token_index \"token_index\" has dims [6,1,1]"});
  {  // a floating offset tensor, at validation
    G g;
    Ports t = add_forward(g, p, 2);
    const int64_t bad = g.input("offsets_f", CUDNNFE_DTYPE_FLOAT, {2, 1, 1});
    auto o = options(none);
    REQUIRE_OK(
        cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, bad, 0, 0, &o, &t.out));
    g.output(t.out);
    CHECK_FAILS(cudnnfe_graph_validate(g.get()), CUDNNFE_STATUS_INVALID_GRAPH,
                "first_token_offset \"offsets_f\" has data type FLOAT", "INT32");
  }
  {  // the backward: rows differ
    G g;
    const int64_t d = g.input("doutput", CUDNNFE_DTYPE_FLOAT, {1, 5, 3});
    const int64_t tk = g.input("token", CUDNNFE_DTYPE_FLOAT, {1, 6, 4});
    const int64_t off = g.input("first_token_offset", CUDNNFE_DTYPE_INT32, {2, 1, 1});
    int64_t dw = 0;
    CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul_backward(g.get(), d, tk, off, nullptr, &dw),
                CUDNNFE_STATUS_INVALID_GRAPH, "moe_grouped_matmul_backward",
                "must have the same rows");
  }
}

// Offsets and indices are data: the reference refuses bad ones at execute.
TEST(bad_offsets_and_indices_at_execute) {
  Problem p(2, 6, 4, 3, {0, 3, 6});
  std::vector<float> out(18);
  {
    G g;
    Ports t = add_forward(g, p, 2);
    auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
    REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, 0, 0, &o,
                                                    &t.out));
    g.output(t.out);
    REQUIRE(g.build());
    const Ints decreasing = {4, 2};
    std::string msg;
    CHECK(g.run({B(t.token, p.token.data()), B(t.weight, p.weight.data()),
                 B(t.offsets, decreasing.data()), B(t.out, out.data())},
                &msg) == CUDNNFE_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(msg.find("first_token_offset[1] = 2 is outside 4..6") != std::string::npos, "%s",
              msg.c_str());
  }
  {
    G g;
    Ports t = add_forward(g, p, 2);
    t.index = g.input("token_index", CUDNNFE_DTYPE_INT32, {1, 6, 1});
    t.ks = g.input("token_ks", CUDNNFE_DTYPE_INT32, {1, 6, 1});
    auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, 2);
    REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, t.index,
                                                    t.ks, &o, &t.out));
    g.output(t.out);
    REQUIRE(g.build());
    const Ints offsets = {0, 3}, index = {0, 1, 2, 0, 1, 3}, ks = {0, 0, 0, 1, 1, 1};
    std::string msg;
    CHECK(g.run({B(t.token, p.token.data()), B(t.weight, p.weight.data()),
                 B(t.offsets, offsets.data()), B(t.index, index.data()), B(t.ks, ks.data()),
                 B(t.out, out.data())},
                &msg) == CUDNNFE_STATUS_INVALID_ARGUMENT);
    CHECK_MSG(
        msg.find("token_index * top_k + token_ks[5] = 7 is outside 0..5") != std::string::npos,
        "%s", msg.c_str());
  }
}

TEST(graph_json_round_trip) {
  Problem p(2, 6, 4, 3, {0, 3, 6});
  G g;
  Ports t = add_forward(g, p, 2);
  t.index = g.input("token_index", CUDNNFE_DTYPE_INT32, {1, 6, 1});
  t.ks = g.input("token_ks", CUDNNFE_DTYPE_INT32, {1, 6, 1});
  auto o = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER, 3);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(g.get(), t.token, t.weight, t.offsets, t.index,
                                                  t.ks, &o, &t.out));
  int64_t dw = 0;
  auto b = options(CUDNNFE_MOE_GROUPED_MATMUL_MODE_NONE);
  REQUIRE_OK(
      cudnnfe_graph_add_moe_grouped_matmul_backward(g.get(), t.out, t.token, t.offsets, &b, &dw));
  g.output(t.out);
  g.output(dw);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), &json[0], size, &size));
  for (const char *part :
       {"\"moe_grouped_matmul\"", "\"moe_grouped_matmul_backward\"", "\"SCATTER\"", "\"top_k\": 3"})
    CHECK_MSG(json.find(part) != std::string::npos, "JSON lacks %s", part);
  G h;
  REQUIRE_OK(cudnnfe_graph_deserialize(h.get(), json.data(), json.size()));
  CHECK_OK(cudnnfe_graph_validate(h.get()));
  size_t size2 = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(h.get(), nullptr, 0, &size2));
  std::string again(size2, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(h.get(), &again[0], size2, &size2));
  CHECK(again == json);
  CHECK(h.strides(dw) == g.strides(dw));
  std::string broken = json;
  const size_t at = broken.find("\"SCATTER\"");
  REQUIRE(at != std::string::npos);
  broken.replace(at, 9, "\"SCATTERX\"");
  G k;
  CHECK_FAILS(cudnnfe_graph_deserialize(k.get(), broken.data(), broken.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "SCATTERX");
}
