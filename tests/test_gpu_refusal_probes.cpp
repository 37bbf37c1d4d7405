// When cuDNN refuses a graph, the message says what the loaded backend on
// this GPU lacks, learned by building smaller graphs (refusal_probe.cpp):
// the refused node, and whether dropping one of its options lets it build.
#include <cstdio>
#include <string>

#include "gpu_test_support.h"

using gpu_test::GraphPtr;
using gpu_test::new_graph;
using gpu_test::test_handle;

namespace {

int64_t add(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype,
            std::initializer_list<int64_t> dims) {
  int64_t uid = 0;
  const std::vector<int64_t> d(dims);
  gpu_test::ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(d.size()), d.data(),
                                        nullptr, &uid),
               "cudnnfe_graph_add_tensor");
  return uid;
}

cudnnfe_build_options_t gpu_build() {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_GPU;
  o.disable_plan_cache = 1;
  o.plan_cache_dir = "";
  return o;
}

// FLOAT attention: no flash-attention engine takes it, with or without its
// causal mask (the CPU reference runs it).
int64_t add_fp32_attention(cudnnfe_graph_t *g, const char *prefix) {
  const std::string p = prefix;
  const int64_t q = add(g, (p + "q").c_str(), CUDNNFE_DTYPE_FLOAT, {1, 2, 64, 64});
  const int64_t k = add(g, (p + "k").c_str(), CUDNNFE_DTYPE_FLOAT, {1, 2, 64, 64});
  const int64_t v = add(g, (p + "v").c_str(), CUDNNFE_DTYPE_FLOAT, {1, 2, 64, 64});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attn";
  o.causal_mask = 1;
  int64_t out = 0;
  gpu_test::ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, nullptr), "cudnnfe_graph_add_sdpa");
  return out;
}

std::string version_and_gpu_prefix() {
  int64_t v = 0;
  cudnnfe_cudnn_version(&v);
  return "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100) + " on ";
}

}  // namespace

TEST(gpu_probe_names_the_refused_node_and_tried_options) {
  REQUIRE_GPU();
  GraphPtr g = new_graph("fp32_attention", CUDNNFE_DTYPE_FLOAT);
  const int64_t o = add_fp32_attention(g.get(), "");
  cudnnfe_tensor_set_output(g.get(), o, 1);
  const cudnnfe_build_options_t opts = gpu_build();
  const std::string where = version_and_gpu_prefix();
  CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &opts), CUDNNFE_STATUS_NOT_SUPPORTED,
              "Probing the backend: sdpa \"attn\" is refused even without each of its options",
              "tried: causal mask (top-left)", where.c_str(), "(sm_");
  std::printf("  message: %s\n", cudnnfe_graph_last_error(g.get()));
}

TEST(gpu_probe_finds_the_refused_node_of_a_fused_graph) {
  REQUIRE_GPU();
  GraphPtr g = new_graph("fp32_attention_then_relu", CUDNNFE_DTYPE_FLOAT);
  const int64_t o = add_fp32_attention(g.get(), "");
  cudnnfe_pointwise_options_t po;
  cudnnfe_pointwise_options_init(&po);
  po.name = "act";
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_RELU_FWD, o, 0, 0, &po, &y));
  cudnnfe_tensor_set_output(g.get(), y, 1);
  const cudnnfe_build_options_t opts = gpu_build();
  CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &opts), CUDNNFE_STATUS_NOT_SUPPORTED,
              "Probing the backend: sdpa \"attn\" is refused even without");
  const std::string message = cudnnfe_graph_last_error(g.get());
  CHECK_MSG(message.find("pointwise \"act\" is refused") == std::string::npos,
            "the ReLU builds alone: %s", message.c_str());
}

TEST(gpu_filter_refusals_are_not_blamed_on_the_backend) {
  REQUIRE_GPU();
  GraphPtr g = new_graph("filtered_matmul", CUDNNFE_DTYPE_HALF);
  const int64_t a = add(g.get(), "a", CUDNNFE_DTYPE_HALF, {1, 64, 64});
  const int64_t b = add(g.get(), "b", CUDNNFE_DTYPE_HALF, {1, 64, 64});
  int64_t c = 0;
  REQUIRE_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  cudnnfe_tensor_set_output(g.get(), c, 1);
  // Only INT8x32 convolution engines need a reordered filter: the filter
  // removes every matmul engine.
  cudnnfe_build_options_t opts = gpu_build();
  opts.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_REQUIRES_FILTER_INT8X32_REORDER;
  const cudnnfe_status_t status = cudnnfe_graph_build(g.get(), test_handle(), &opts);
  const std::string message = cudnnfe_graph_last_error(g.get());
  CHECK(status == CUDNNFE_STATUS_NOT_SUPPORTED);
  CHECK_MSG(message.find("removed") != std::string::npos, "%s", message.c_str());
  CHECK_MSG(message.find("Probing the backend") == std::string::npos, "%s", message.c_str());
}
