// Attention's support rules (docs/refusals.md): a graph for a GPU meets the
// rules of cudnn-frontend and cuDNN at validation, with NOT_SUPPORTED (the
// status cudnn-frontend's users skip on), while the same graph for the CPU
// reference validates. Without a GPU the rules are reached through
// cudnnfe_graph_validate_for_build with target GPU and sm_version: the
// graph-semantic rules apply, the version-gated ones wait for a build.
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

const cudnnfe_status_t kNotSupported = CUDNNFE_STATUS_NOT_SUPPORTED;

struct Attention {
  cudnnfe_graph_t *g = nullptr;
  Attention() { cudnnfe_graph_create(&g); }
  ~Attention() { cudnnfe_graph_destroy(g); }
  Attention(const Attention &) = delete;
  Attention &operator=(const Attention &) = delete;

  int64_t tensor(const char *name, std::vector<int64_t> dims,
                 cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_HALF) {
    int64_t uid = 0;
    if (cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                                 nullptr, &uid) != CUDNNFE_STATUS_OK)
      std::printf("  setup failed: %s\n", cudnnfe_last_error());
    return uid;
  }
  // Validation for a GPU of architecture `sm` (no GPU needed) or for the
  // CPU reference.
  cudnnfe_status_t validate_for(cudnnfe_target_t target, int32_t sm = 90) {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = target;
    o.sm_version = sm;
    return cudnnfe_graph_validate_for_build(g, nullptr, &o);
  }
  cudnnfe_status_t gpu() { return validate_for(CUDNNFE_TARGET_GPU); }
  cudnnfe_status_t cpu() { return validate_for(CUDNNFE_TARGET_CPU_REFERENCE); }
};

// q [b, h_q, s_q, d], k [b, h_k, s_kv, d], v [b, h_v, s_kv, d_v].
struct Shape {
  int64_t b = 2, h_q = 4, h_k = 2, h_v = 2, s_q = 16, s_kv = 32, d = 64, d_v = 64;
};

// A forward node on `shape` with options `o`; returns its status.
cudnnfe_status_t add_forward(Attention &a, const Shape &s, cudnnfe_sdpa_options_t &o) {
  const int64_t q = a.tensor("q", {s.b, s.h_q, s.s_q, s.d});
  const int64_t k = a.tensor("k", {s.b, s.h_k, s.s_kv, s.d});
  const int64_t v = a.tensor("v", {s.b, s.h_v, s.s_kv, s.d_v});
  int64_t out = 0, stats = 0;
  o.name = "attn";
  const cudnnfe_status_t status = cudnnfe_graph_add_sdpa(a.g, q, k, v, &o, &out, &stats);
  if (status == CUDNNFE_STATUS_OK) cudnnfe_tensor_set_output(a.g, out, 1);
  return status;
}

cudnnfe_sdpa_options_t options() {
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  return o;
}

// A graph that is well formed, refused for a GPU with `parts` in the
// message and accepted by the CPU reference.
#define CHECK_GPU_ONLY_REFUSAL(attention, ...)                                   \
  do {                                                                           \
    CHECK_FAILS((attention).gpu(), kNotSupported, "sdpa \"attn\"", __VA_ARGS__); \
    CHECK_OK((attention).cpu());                                                 \
  } while (0)

}  // namespace

TEST(alibi_needs_a_causal_mask_on_a_gpu_only) {
  {
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.alibi_mask = 1;
    REQUIRE_OK(add_forward(a, Shape{}, o));
    CHECK_GPU_ONLY_REFUSAL(a, "alibi_mask needs a right bound of 0", "cudnn-frontend refuses it");
  }
  {
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.alibi_mask = 1;
    o.causal_mask = 1;
    REQUIRE_OK(add_forward(a, Shape{}, o));
    CHECK_OK(a.gpu());
  }
  {  // bottom-right alignment does not combine with ALiBi
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.alibi_mask = 1;
    o.causal_mask_bottom_right = 1;
    REQUIRE_OK(add_forward(a, Shape{}, o));
    CHECK_GPU_ONLY_REFUSAL(a, "bottom-right diagonal", "alibi_mask");
  }
}

TEST(k_and_v_head_counts_may_differ) {
  Attention a;
  cudnnfe_sdpa_options_t o = options();
  Shape s;
  s.h_k = 4;
  s.h_v = 1;  // both divide h_q = 4, as cudnn-frontend allows
  REQUIRE_OK(add_forward(a, s, o));
  CHECK_OK(a.gpu());
  CHECK_OK(a.cpu());
  Attention bad;
  s.h_v = 3;
  CHECK_FAILS(add_forward(bad, s, o), kNotSupported, "v \"v\"", "has 3", "must each divide q's");
}

TEST(band_rules) {
  {  // a left bound needs s_q <= s_kv without padding
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.window_left = 8;
    Shape s;
    s.s_q = 64;
    s.s_kv = 32;
    REQUIRE_OK(add_forward(a, s, o));
    CHECK_GPU_ONLY_REFUSAL(a, "left bound", "s_q = 64, s_kv = 32");
  }
  {  // a bottom-right diagonal with a right bound, the same
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.window_right = 4;
    o.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
    Shape s;
    s.s_q = 64;
    s.s_kv = 32;
    REQUIRE_OK(add_forward(a, s, o));
    CHECK_GPU_ONLY_REFUSAL(a, "bottom-right diagonal with a right bound needs s_q <= s_kv");
  }
  {  // a bottom-right band with s_q <= s_kv is cuDNN's to decide
    Attention a;
    cudnnfe_sdpa_options_t o = options();
    o.window_right = 4;
    o.window_left = 8;
    o.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
    REQUIRE_OK(add_forward(a, Shape{}, o));
    CHECK_OK(a.gpu());
  }
}

TEST(head_dims_must_be_multiples_of_8_on_a_gpu) {
  Attention a;
  cudnnfe_sdpa_options_t o = options();
  Shape s;
  s.d = 60;
  s.d_v = 60;
  REQUIRE_OK(add_forward(a, s, o));
  CHECK_GPU_ONLY_REFUSAL(a, "multiples of 8", "d_qk = 60");
}

TEST(backward_rules) {
  Attention a;
  const int64_t q = a.tensor("q", {1, 2, 1, 64}), k = a.tensor("k", {1, 2, 1, 64});
  const int64_t stats = a.tensor("stats", {1, 2, 1, 1}, CUDNNFE_DTYPE_FLOAT);
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "attn";
  int64_t dq = 0, dk = 0, dv = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(a.g, q, k, k, q, q, stats, &o, &dq, &dk, &dv));
  for (int64_t t : {dq, dk, dv}) cudnnfe_tensor_set_output(a.g, t, 1);
  CHECK_FAILS(a.gpu(), kNotSupported, "sdpa_backward \"attn\"", "s_q = s_kv = 1");
  CHECK_OK(a.cpu());
}

TEST(total_length_bounds_need_ragged_offsets) {
  Attention a;
  const int64_t q = a.tensor("q", {1, 2, 8, 64});
  const int64_t stats = a.tensor("stats", {1, 2, 8, 1}, CUDNNFE_DTYPE_FLOAT);
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "attn";
  o.max_total_seq_len_q = -1;
  int64_t dq = 0, dk = 0, dv = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(a.g, q, q, q, q, q, stats, &o, &dq, &dk, &dv),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "max_total_seq_len_q is -1");
  o.max_total_seq_len_q = 64;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(a.g, q, q, q, q, q, stats, &o, &dq, &dk, &dv));
  for (int64_t t : {dq, dk, dv}) cudnnfe_tensor_set_output(a.g, t, 1);
  CHECK_FAILS(a.gpu(), kNotSupported, "max_total_seq_len_q", "ragged");
  CHECK_OK(a.cpu());
}

TEST(caller_made_softmax_outputs) {
  {  // rng_dump dumps a drawn mask: without dropout there is none
    Attention a;
    const int64_t q = a.tensor("q", {2, 4, 16, 64});
    const int64_t dump = a.tensor("dump", {2, 4, 16, 16}, CUDNNFE_DTYPE_FLOAT);
    cudnnfe_sdpa_options_t o = options();
    o.name = "attn";
    o.rng_dump = dump;
    int64_t out = 0, stats = 0;
    CHECK_FAILS(cudnnfe_graph_add_sdpa(a.g, q, q, q, &o, &out, &stats),
                CUDNNFE_STATUS_INVALID_GRAPH, "rng_dump \"dump\"", "draws none");
  }
  Attention a;
  const int64_t q = a.tensor("q", {2, 4, 16, 64});
  // cudnn-frontend marks them outputs before the op takes them.
  const int64_t max = a.tensor("max", {2, 4, 16, 1}, CUDNNFE_DTYPE_FLOAT);
  const int64_t sum = a.tensor("sum", {2, 4, 16, 1}, CUDNNFE_DTYPE_FLOAT);
  const int64_t wrong = a.tensor("wrong", {2, 4, 16, 2}, CUDNNFE_DTYPE_FLOAT);
  REQUIRE_OK(cudnnfe_tensor_set_output(a.g, max, 1));
  cudnnfe_sdpa_options_t o = options();
  o.name = "attn";
  o.score_max = max;
  o.score_sum_exp = wrong;
  int64_t out = 0, stats = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(a.g, q, q, q, &o, &out, &stats), CUDNNFE_STATUS_INVALID_GRAPH,
              "score_sum_exp \"wrong\" is [2,4,16,2]; expected [2,4,16,1]");
  o.score_sum_exp = sum;
  o.unfuse_fma = 2;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(a.g, q, q, q, &o, &out, &stats),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "unfuse_fma is 2");
  o.unfuse_fma = 1;  // accepted: the composite graph and the CPU reference ignore it
  REQUIRE_OK(cudnnfe_graph_add_sdpa(a.g, q, q, q, &o, &out, &stats));
  cudnnfe_tensor_set_output(a.g, out, 1);
  // The node wrote them: a second op cannot take them again.
  int64_t out2 = 0, stats2 = 0;
  o.name = "again";
  o.score_sum_exp = wrong;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(a.g, q, q, q, &o, &out2, &stats2),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "already written by sdpa \"attn\"");
  // "wrong" is read by nothing: give it a reader so that validation passes.
  int64_t y = 0;
  REQUIRE_OK(
      cudnnfe_graph_add_pointwise(a.g, CUDNNFE_POINTWISE_RELU_FWD, wrong, 0, 0, nullptr, &y));
  cudnnfe_tensor_set_output(a.g, y, 1);
  CHECK_OK(a.cpu());
}

TEST(sm_targets_are_checked) {
  Attention a;
  cudnnfe_sdpa_options_t o = options();
  REQUIRE_OK(add_forward(a, Shape{}, o));
  cudnnfe_build_options_t b;
  cudnnfe_build_options_init(&b);
  b.sm_count = -2;
  CHECK_FAILS(cudnnfe_graph_validate_for_build(a.g, nullptr, &b), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "sm_count is -2");
  b.sm_count = 0;
  b.sm_version = -1;
  CHECK_FAILS(cudnnfe_graph_validate_for_build(a.g, nullptr, &b), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "sm_version is -1");
}
