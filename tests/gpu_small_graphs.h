// Small one-output graphs that GPU tests run several ways (execute, bound,
// replayed) and compare with the CPU reference: an FP16 batched matmul, an
// FP16 NHWC 3x3 conv and a BF16 causal SDPA, and the helpers to build them
// for either target. Used by tests/test_gpu_bound.cpp and
// tests/test_gpu_execute_replay.cpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "gpu_tensor_data.h"
#include "gpu_test_support.h"

namespace gpu_test {

// Adds a graph's inputs and ops to `g` and returns its output.
using Builder = std::function<int64_t(cudnnfe_graph_t *g, cudnnfe_dtype_t dt)>;

inline int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dt, const Dims &dims,
                     const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

// `add`'s graph built for `target`, FLOAT compute; *out is its output.
inline GraphPtr built(const char *name, cudnnfe_dtype_t dt, const Builder &add,
                      cudnnfe_target_t target, int64_t *out) {
  GraphPtr g = new_graph(name, dt);
  ok(cudnnfe_graph_set_compute_dtype(g.get(), CUDNNFE_DTYPE_FLOAT), "set_compute_dtype");
  *out = add(g.get(), dt);
  ok(cudnnfe_tensor_set_output(g.get(), *out, 1), "cudnnfe_tensor_set_output");
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = target;
  ok(cudnnfe_graph_build(g.get(), test_handle(), &o), "cudnnfe_graph_build");
  return g;
}

inline std::vector<int64_t> bound_uids(cudnnfe_graph_t *g) {
  size_t n = 0;
  ok(cudnnfe_graph_get_bound_uids(g, nullptr, 0, &n), "get_bound_uids");
  std::vector<int64_t> uids(n);
  ok(cudnnfe_graph_get_bound_uids(g, uids.data(), n, &n), "get_bound_uids");
  return uids;
}

// Throws Failure naming `what` for a CUDA runtime error.
inline void cuda(int error, const char *what) {
  const std::string text = gpu::cuda_check(error, what);
  if (!text.empty()) throw Failure(text);
}

inline int64_t add_small_matmul(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t a = input(g, "a", dt, {2, 64, 96}), b = input(g, "b", dt, {2, 96, 48});
  int64_t c = 0;
  ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "add_matmul");
  return c;
}

// NHWC storage: N, C, H, W dims with C innermost; padding 1.
inline int64_t add_small_conv(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t n = 2, c = 32, hw = 16, k = 32;
  const int64_t x = input(g, "x", dt, {n, c, hw, hw}, {c * hw * hw, 1, hw * c, c});
  const int64_t w = input(g, "w", dt, {k, c, 3, 3}, {c * 9, 1, 3 * c, c});
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
  int64_t y = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
  return y;
}

inline int64_t add_small_causal_sdpa(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t b = 1, h = 4, s = 128, d = 64;
  const int64_t q = input(g, "q", dt, {b, h, s, d}), k = input(g, "k", dt, {b, h, s, d});
  const int64_t v = input(g, "v", dt, {b, h, s, d});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.causal_mask = 1;
  int64_t out = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, nullptr), "add_sdpa");
  return out;
}

}  // namespace gpu_test
