// Bad input never crashes: each case gets the right status and a message
// naming the node, the tensor and the rule (ABI.md section 4).
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Fixture {
  cudnnfe_graph_t *g = nullptr;
  Fixture() { cudnnfe_graph_create(&g); }
  ~Fixture() { cudnnfe_graph_destroy(g); }
  int64_t tensor(const char *name, std::vector<int64_t> dims,
                 cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_FLOAT) {
    int64_t uid = 0;
    cudnnfe_status_t s = cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()),
                                                  dims.data(), nullptr, &uid);
    if (s != CUDNNFE_STATUS_OK) std::printf("  setup failed: %s\n", cudnnfe_last_error());
    return uid;
  }
};

// A built CPU graph y = relu(x) for the execute cases.
struct BuiltRelu : Fixture {
  int64_t x = 0, y = 0;
  cudnnfe_handle_t *h = nullptr;
  cudnnfe_status_t build_status = CUDNNFE_STATUS_INTERNAL;
  BuiltRelu() {
    x = tensor("x", {4});
    cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &y);
    cudnnfe_tensor_set_output(g, y, 1);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    build_status = cudnnfe_graph_build(g, nullptr, &o);
    cudnnfe_handle_create(&h, -1);
  }
  ~BuiltRelu() { cudnnfe_handle_destroy(h); }
};

const cudnnfe_status_t ARG = CUDNNFE_STATUS_INVALID_ARGUMENT;
const cudnnfe_status_t GRAPH = CUDNNFE_STATUS_INVALID_GRAPH;

}  // namespace

TEST(null_out_pointers) {
  CHECK_FAILS(cudnnfe_graph_create(nullptr), ARG, "out", "NULL");
  CHECK_FAILS(cudnnfe_handle_create(nullptr, -1), ARG, "out", "NULL");
  Fixture f;
  const int64_t d[] = {2};
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, nullptr), ARG,
              "uid", "NULL");
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 1, nullptr, nullptr, nullptr),
              ARG);
}

TEST(null_graph_and_handle) {
  int64_t uid;
  const int64_t d[] = {2};
  CHECK_FAILS(cudnnfe_graph_add_tensor(nullptr, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &uid), ARG,
              "graph is NULL");
  CHECK_FAILS(cudnnfe_graph_execute(nullptr, nullptr, nullptr, 0, nullptr, 0, nullptr), ARG,
              "handle is NULL");
  CHECK_FAILS(cudnnfe_handle_create(reinterpret_cast<cudnnfe_handle_t **>(&uid), -2), ARG,
              "device -2");
}

TEST(tensor_rank_dims_strides_dtype) {
  Fixture f;
  int64_t uid;
  const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 0, nine, nullptr, &uid), ARG,
              "\"x\"", "ndims is 0");
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 9, nine, nullptr, &uid), ARG,
              "ndims is 9");
  const int64_t neg[] = {2, -3};
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 2, neg, nullptr, &uid), ARG,
              "\"x\"", "dim 1 is -3");
  const int64_t d[] = {2, 3}, bad_strides[] = {3, -1};
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", CUDNNFE_DTYPE_FLOAT, 2, d, bad_strides, &uid), ARG,
              "stride 1 is -1");
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "x", 999, 2, d, nullptr, &uid), ARG,
              "unknown data type 999");
  CHECK_FAILS(cudnnfe_graph_add_scalar(f.g, "s", CUDNNFE_DTYPE_NOT_SET, 1.0, &uid), ARG, "\"s\"",
              "concrete type");
}

TEST(duplicate_names_and_uids) {
  Fixture f;
  int64_t a = f.tensor("a", {2}), b = f.tensor("b", {2});
  int64_t uid;
  const int64_t d[] = {2};
  CHECK_FAILS(cudnnfe_graph_add_tensor(f.g, "a", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &uid), ARG,
              "\"a\" already exists");
  CHECK_FAILS(cudnnfe_tensor_set_uid(f.g, a, b), ARG, "already used by tensor \"b\"");
  CHECK_FAILS(cudnnfe_tensor_set_uid(f.g, a, 0), ARG, "UIDs are > 0");
  CHECK_FAILS(cudnnfe_tensor_set_name(f.g, a, "b"), ARG, "already used");
  CHECK_FAILS(cudnnfe_tensor_set_output(f.g, 4242, 1), ARG, "no tensor has UID 4242");
  CHECK_FAILS(cudnnfe_tensor_set_output(f.g, a, 1), ARG, "\"a\"", "graph input");
  int32_t n;
  int64_t one[1];
  const int64_t d2[] = {2, 2};
  int64_t m = f.tensor("m", {2, 2});
  (void)d2;
  CHECK_FAILS(cudnnfe_tensor_get_shape(f.g, m, one, nullptr, 1, &n), ARG, "\"m\"",
              "capacity 1 is too small");
  size_t count;
  CHECK_FAILS(cudnnfe_graph_get_tensor_uids(f.g, one, 1, &count), ARG, "too small");
  CHECK_FAILS(cudnnfe_graph_find_tensor(f.g, "nope", &uid), ARG, "no tensor named \"nope\"");
}

TEST(conv_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {1, 3, 8, 8}), w = f.tensor("w", {4, 3, 3, 3});
  int64_t w3 = f.tensor("w3", {4, 3, 3}), w_bad_c = f.tensor("w_bad_c", {4, 5, 3, 3});
  int64_t w_big = f.tensor("w_big", {4, 3, 11, 3}), y;
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.name = "conv1";
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w3, &o, &y), GRAPH, "conv_fprop \"conv1\"",
              "\"w3\" has 3 dims", "must match");
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w_bad_c, &o, &y), GRAPH, "\"conv1\"",
              "\"w_bad_c\" dim 1 (C) is 5; expected 3");
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w_big, &o, &y), GRAPH, "\"w_big\"",
              "larger than the padded image");
  o.pre_padding[0] = -1;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), GRAPH, "negative");
  o.pre_padding[0] = 0;
  o.stride[1] = 0;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), GRAPH, "stride of spatial dim 1");
  o.stride[1] = 1;
  o.dilation[0] = 0;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), GRAPH, "dilation");
  o.dilation[0] = 1;
  o.spatial_dims = 3;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), GRAPH, "spatial_dims is 3");
  o.spatial_dims = 0;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, 0, &o, &y), GRAPH, "weight is missing");
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, 777, &o, &y), ARG, "weight", "UID 777");
  // A rejected op leaves the graph unchanged.
  size_t tensors = 0, nodes = 0;
  cudnnfe_graph_get_tensor_count(f.g, &tensors);
  cudnnfe_graph_get_node_count(f.g, &nodes);
  CHECK(tensors == 5 && nodes == 0);
  CHECK_OK(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y));
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), ARG, "\"conv1\"", "already exists");
}

TEST(matmul_rules) {
  Fixture f;
  int64_t a = f.tensor("a", {2, 4, 8}), b_k = f.tensor("b_k", {2, 7, 3});
  int64_t b_rank = f.tensor("b_rank", {8, 3}), b_batch = f.tensor("b_batch", {3, 8, 3});
  int64_t v = f.tensor("v", {8}), c;
  cudnnfe_matmul_options_t o;
  cudnnfe_matmul_options_init(&o);
  o.name = "mm";
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, a, b_k, &o, &c), GRAPH, "matmul \"mm\"", "K = 8",
              "K = 7");
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, a, b_rank, &o, &c), GRAPH, "ranks must match");
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, a, b_batch, &o, &c), GRAPH, "batch dim 0",
              "must match or one be 1");
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, v, v, &o, &c), GRAPH, "\"v\" has 1 dim", "at least 2");
}

TEST(pointwise_rules) {
  Fixture f;
  int64_t a = f.tensor("a", {2, 3}), b = f.tensor("b", {2, 4}), r = f.tensor("r", {2, 3, 1});
  int64_t out;
  cudnnfe_pointwise_options_t o;
  cudnnfe_pointwise_options_init(&o);
  o.name = "pw";
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_ADD, a, 0, 0, &o, &out), GRAPH,
              "pointwise \"pw\"", "ADD reads 2", "in1 is missing");
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_EXP, a, a, 0, &o, &out), GRAPH,
              "in1 was given");
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_ADD, a, b, 0, &o, &out), GRAPH,
              "\"b\" [2,4] does not broadcast", "dim 1");
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_ADD, a, r, 0, &o, &out), GRAPH,
              "equal ranks");
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, 12345, a, 0, 0, &o, &out), ARG,
              "unknown pointwise mode 12345");
  o.axis = 5;
  CHECK_FAILS(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_GEN_INDEX, a, 0, 0, &o, &out),
              GRAPH, "GEN_INDEX axis 5");
}

TEST(reduction_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {4, 5}), y;
  cudnnfe_reduction_options_t o;
  cudnnfe_reduction_options_init(&o);
  o.name = "red";
  o.axes_mask = 0x8;
  CHECK_FAILS(cudnnfe_graph_add_reduction(f.g, CUDNNFE_REDUCTION_ADD, x, &o, &y), GRAPH,
              "reduction \"red\"", "beyond", "2 dims");
  CHECK_FAILS(cudnnfe_graph_add_reduction(f.g, 77, x, &o, &y), ARG, "unknown reduction mode 77");
  o.axes_mask = 0x1;
  REQUIRE_OK(cudnnfe_graph_add_reduction(f.g, CUDNNFE_REDUCTION_ADD, x, &o, &y));
  const int64_t wrong[] = {1, 3};
  CHECK_OK(cudnnfe_tensor_set_dims(f.g, y, 2, wrong));
  cudnnfe_tensor_set_output(f.g, y, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "\"red\"", "dim 1 is 3", "or 1 (reduced)");
}

TEST(sdpa_rules) {
  Fixture f;
  int64_t q = f.tensor("q", {2, 8, 1024, 64}, CUDNNFE_DTYPE_HALF);
  int64_t k3 = f.tensor("k3", {2, 1024, 64}, CUDNNFE_DTYPE_HALF);
  int64_t k = f.tensor("k", {2, 3, 1024, 64}, CUDNNFE_DTYPE_HALF);
  int64_t k_d = f.tensor("k_d", {2, 8, 1024, 32}, CUDNNFE_DTYPE_HALF);
  int64_t v = f.tensor("v", {2, 8, 1024, 64}, CUDNNFE_DTYPE_HALF);
  int64_t v_s = f.tensor("v_s", {2, 8, 512, 64}, CUDNNFE_DTYPE_HALF);
  int64_t k_bf = f.tensor("k_bf", {2, 8, 1024, 64}, CUDNNFE_DTYPE_BFLOAT16);
  int64_t bias = f.tensor("bias", {1, 8, 1024, 7}, CUDNNFE_DTYPE_HALF);
  int64_t o, stats;
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.name = "attn";
  // The example message of ABI.md section 4.
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, k3, v, &so, &o, &stats), GRAPH,
              "sdpa \"attn\": k \"k3\" has 3 dims [2,1024,64]; expected 4 [b,h_kv,s_kv,d]");
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, k, k, &so, &o, &stats), GRAPH, "8 heads",
              "multiple of h_kv");
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, k_d, v, &so, &o, &stats), GRAPH, "\"k_d\"",
              "head dim");
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, v, v_s, &so, &o, &stats), GRAPH, "\"v_s\"",
              "sequence length");
  so.causal_mask = so.causal_mask_bottom_right = 1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, v, v, &so, &o, &stats), GRAPH, "exclusive");
  so.causal_mask_bottom_right = 0;
  so.bias = bias;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, v, v, &so, &o, &stats), GRAPH, "bias \"bias\"",
              "does not broadcast");
  so.bias = 0;
  so.generate_stats = 1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, v, v, &so, &o, nullptr), ARG, "stats");
  so.generate_stats = 0;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(f.g, q, k_bf, v, &so, &o, &stats));
  cudnnfe_tensor_set_output(f.g, o, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "\"k_bf\" is BFLOAT16", "share a data type");
}

TEST(sdpa_rejects_integer_types) {
  Fixture f;
  int64_t q = f.tensor("q", {1, 1, 4, 4}, CUDNNFE_DTYPE_INT32), o, stats;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(f.g, q, q, q, nullptr, &o, &stats));
  cudnnfe_tensor_set_output(f.g, o, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "sdpa", "INT32");
}

TEST(options_struct_size) {
  Fixture f;
  int64_t a = f.tensor("a", {2, 2}), c;
  cudnnfe_matmul_options_t o;
  cudnnfe_matmul_options_init(&o);
  o.struct_size = sizeof(o) + 64;  // from a newer header than this library
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, a, a, &o, &c), ARG, "struct_size");
  o.struct_size = 0;  // never initialised
  CHECK_FAILS(cudnnfe_graph_add_matmul(f.g, a, a, &o, &c), ARG, "init function");
}

TEST(graph_level_validation) {
  Fixture f;
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "no operations");
  int64_t a = f.tensor("a", {3}), unused = f.tensor("unused", {3}), y;
  (void)unused;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, nullptr, &y));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "\"unused\"", "no operation reads");
  Fixture f2;
  int64_t b = f2.tensor("b", {3}), z;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(f2.g, CUDNNFE_POINTWISE_NEG, b, 0, 0, nullptr, &z));
  CHECK_FAILS(cudnnfe_graph_validate(f2.g), GRAPH, "no outputs", "set_output");
  Fixture f3;
  int64_t c = f3.tensor("c", {3}, CUDNNFE_DTYPE_NOT_SET), w;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(f3.g, CUDNNFE_POINTWISE_NEG, c, 0, 0, nullptr, &w));
  cudnnfe_tensor_set_output(f3.g, w, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f3.g), GRAPH, "\"c\"", "no data type");
}

TEST(build_options_rules) {
  Fixture f;
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = 9;
  CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &o), ARG, "unknown target 9");
  cudnnfe_build_options_init(&o);
  o.num_heur_modes = 0;
  CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &o), ARG, "num_heur_modes is 0");
  cudnnfe_build_options_init(&o);
  o.heur_modes[1] = 42;
  CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &o), ARG, "heur_modes[1] is 42");
}

TEST(wrong_state_before_build) {
  Fixture f;
  int64_t a = f.tensor("a", {3}), y;
  cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, nullptr, &y);
  cudnnfe_handle_t *h;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  CHECK_FAILS(cudnnfe_graph_execute(f.g, h, nullptr, 0, nullptr, 0, nullptr),
              CUDNNFE_STATUS_WRONG_STATE, "not built");
  CHECK(std::strstr(cudnnfe_handle_last_error(h), "not built"));
  int64_t ws;
  CHECK_FAILS(cudnnfe_graph_get_workspace_size(f.g, &ws), CUDNNFE_STATUS_WRONG_STATE, "not built");
  size_t count;
  CHECK_FAILS(cudnnfe_graph_get_bound_uids(f.g, nullptr, 0, &count), CUDNNFE_STATUS_WRONG_STATE);
  cudnnfe_handle_destroy(h);
}

TEST(destroyed_and_foreign_pointers) {
  cudnnfe_graph_t *g;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  REQUIRE_OK(cudnnfe_graph_destroy(g));
  int64_t uid;
  const int64_t d[] = {2};
  CHECK_FAILS(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &uid), ARG,
              "not a live cudnnfe graph");
  CHECK_FAILS(cudnnfe_graph_destroy(g), ARG, "not a live cudnnfe graph");
  CHECK(std::strstr(cudnnfe_graph_last_error(g), "destroyed"));
  // A pointer that never came from cudnnfe: a zeroed block of the right size.
  alignas(64) unsigned char foreign[256] = {};
  CHECK_FAILS(cudnnfe_graph_validate(reinterpret_cast<cudnnfe_graph_t *>(foreign)), ARG,
              "not a live cudnnfe graph");
  cudnnfe_handle_t *h;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  REQUIRE_OK(cudnnfe_handle_destroy(h));
  CHECK_FAILS(cudnnfe_handle_destroy(h), ARG, "not a live cudnnfe handle");
}

TEST(messages_live_on_the_object) {
  Fixture f;
  int64_t uid;
  CHECK_FAILS(cudnnfe_tensor_set_output(f.g, 31337, 1), ARG);
  // Another failure on this thread, on no object, must not change the graph's.
  CHECK_FAILS(cudnnfe_graph_create(nullptr), ARG);
  CHECK(std::strstr(cudnnfe_graph_last_error(f.g), "UID 31337"));
  CHECK(!std::strstr(cudnnfe_last_error(), "31337"));
  (void)uid;
}

TEST(modify_after_build) {
  BuiltRelu b;
  REQUIRE(b.build_status == CUDNNFE_STATUS_OK);
  int64_t uid;
  const int64_t d[] = {2};
  CHECK_FAILS(cudnnfe_graph_add_tensor(b.g, "late", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &uid),
              CUDNNFE_STATUS_WRONG_STATE, "already built");
  CHECK_FAILS(cudnnfe_tensor_set_output(b.g, b.y, 0), CUDNNFE_STATUS_WRONG_STATE);
  CHECK_FAILS(cudnnfe_graph_build(b.g, nullptr, nullptr), CUDNNFE_STATUS_WRONG_STATE);
}

TEST(execute_binding_errors) {
  BuiltRelu b;
  REQUIRE(b.build_status == CUDNNFE_STATUS_OK);
  float x[4] = {-1, 2, -3, 4}, y[4] = {};
  cudnnfe_binding_t missing[] = {{b.x, x}};
  CHECK_FAILS(cudnnfe_graph_execute(b.g, b.h, missing, 1, nullptr, 0, nullptr), ARG,
              "\"pointwise_0::out\"", "has no binding");
  cudnnfe_binding_t unknown[] = {{b.x, x}, {b.y, y}, {999, y}};
  CHECK_FAILS(cudnnfe_graph_execute(b.g, b.h, unknown, 3, nullptr, 0, nullptr), ARG,
              "no tensor has UID 999");
  cudnnfe_binding_t twice[] = {{b.x, x}, {b.x, x}, {b.y, y}};
  CHECK_FAILS(cudnnfe_graph_execute(b.g, b.h, twice, 3, nullptr, 0, nullptr), ARG, "bound twice");
  cudnnfe_binding_t null_buffer[] = {{b.x, nullptr}, {b.y, y}};
  CHECK_FAILS(cudnnfe_graph_execute(b.g, b.h, null_buffer, 2, nullptr, 0, nullptr), ARG, "\"x\"",
              "NULL buffer");
  CHECK_FAILS(cudnnfe_graph_execute(b.g, b.h, nullptr, 2, nullptr, 0, nullptr), ARG,
              "bindings is NULL");
  void *ordered[] = {x};
  CHECK_FAILS(cudnnfe_graph_execute_ordered(b.g, b.h, ordered, 1, nullptr, 0, nullptr), ARG,
              "1 pointers given for 2");
  CHECK(std::strstr(cudnnfe_handle_last_error(b.h), "1 pointers given"));
  // The failed calls left the outputs untouched.
  CHECK(y[0] == 0 && y[3] == 0);
}

TEST(execute_binding_for_virtual_tensor) {
  Fixture f;
  int64_t x = f.tensor("x", {2}), t, y;
  cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, x, 0, 0, nullptr, &t);
  cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_ABS, t, 0, 0, nullptr, &y);
  cudnnfe_tensor_set_output(f.g, y, 1);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(f.g, nullptr, &o));
  cudnnfe_handle_t *h;
  cudnnfe_handle_create(&h, -1);
  float xs[2], ts[2], ys[2];
  cudnnfe_binding_t b[] = {{x, xs}, {t, ts}, {y, ys}};
  CHECK_FAILS(cudnnfe_graph_execute(f.g, h, b, 3, nullptr, 0, nullptr), ARG, "\"pointwise_0::out\"",
              "virtual");
  cudnnfe_handle_destroy(h);
}

TEST(deserialize_into_nonempty_graph) {
  Fixture f;
  f.tensor("a", {1});
  const char json[] = "{}";
  CHECK_FAILS(cudnnfe_graph_deserialize(f.g, json, 2), ARG, "not empty");
}

TEST(gpu_target_without_gpu_is_unavailable) {
  int32_t devices = 0;
  cudnnfe_device_count(&devices);
  if (devices > 0) SKIP("a GPU is present; tests/test_gpu_ops.cpp covers GPU builds");
  Fixture f;
  int64_t a = f.tensor("a", {3}), y;
  cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, nullptr, &y);
  cudnnfe_tensor_set_output(f.g, y, 1);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_GPU;
  CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &o), CUDNNFE_STATUS_CUDNN_UNAVAILABLE);
  int64_t version;
  cudnnfe_status_t s = cudnnfe_cudnn_version(&version);
  CHECK(s == CUDNNFE_STATUS_OK || s == CUDNNFE_STATUS_CUDNN_UNAVAILABLE);
}

TEST(norm_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {4, 16}), s = f.tensor("s", {1, 16}),
          s_bad = f.tensor("s_bad", {4, 16});
  int64_t v = f.tensor("v", {16}), st = f.tensor("st", {4, 1}), st_bad = f.tensor("st_bad", {1, 1});
  int64_t y, m, iv, dx, ds, db;
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "ln";
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s_bad, s, &o, &y, &m, &iv), GRAPH,
              "layernorm \"ln\"", "scale \"s_bad\" is [4,16]; expected [1,16]");
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s, 0, &o, &y, &m, &iv), GRAPH, "bias is missing");
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, v, s, s, &o, &y, &m, &iv), GRAPH, "\"v\" has 1 dim",
              "at least 2");
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s, s, &o, &y, nullptr, &iv), ARG,
              "phase is TRAINING");
  o.epsilon = -1;
  CHECK_FAILS(cudnnfe_graph_add_rmsnorm(f.g, x, s, 0, &o, &y, &iv), GRAPH, "rmsnorm \"ln\"",
              "epsilon is -1");
  o.epsilon = 1e-5;
  o.phase = 7;
  CHECK_FAILS(cudnnfe_graph_add_rmsnorm(f.g, x, s, 0, &o, &y, &iv), GRAPH, "unknown phase 7");
  o.phase = CUDNNFE_NORM_PHASE_TRAINING;
  CHECK_FAILS(cudnnfe_graph_add_layernorm_backward(f.g, x, x, s, st_bad, st, &o, &dx, &ds, &db),
              GRAPH, "mean \"st_bad\" is [1,1]; expected [4,1]");
  CHECK_FAILS(cudnnfe_graph_add_rmsnorm_backward(f.g, s, x, s, st, &o, &dx, &ds, nullptr), GRAPH,
              "dy \"s\"", "x's shape");
}

TEST(sdpa_backward_rules) {
  Fixture f;
  int64_t q = f.tensor("q", {1, 4, 16, 8}, CUDNNFE_DTYPE_HALF);
  int64_t o_bad = f.tensor("o_bad", {1, 4, 16, 4}, CUDNNFE_DTYPE_HALF);
  int64_t st = f.tensor("st", {1, 4, 16, 1}),
          st_h = f.tensor("st_h", {1, 4, 16, 1}, CUDNNFE_DTYPE_HALF);
  int64_t dq, dk, dv;
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "attn_bwd";
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, o_bad, q, st, &o, &dq, &dk, &dv), GRAPH,
              "sdpa_backward \"attn_bwd\"", "o \"o_bad\" is [1,4,16,4]; expected [1,4,16,8]");
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, q, q, 0, &o, &dq, &dk, &dv), GRAPH,
              "stats is missing");
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, q, q, st, &o, &dq, nullptr, &dv), ARG,
              "dk");
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, q, q, st_h, &o, &dq, &dk, &dv));
  cudnnfe_tensor_set_output(f.g, dq, 1);
  cudnnfe_tensor_set_output(f.g, dk, 1);
  cudnnfe_tensor_set_output(f.g, dv, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "stats \"st_h\" is HALF", "must be FLOAT");
}

TEST(softmax_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {2, 3}), y;
  cudnnfe_softmax_options_t o;
  cudnnfe_softmax_options_init(&o);
  o.generate_stats = 1;
  CHECK_FAILS(cudnnfe_graph_add_softmax(f.g, x, &o, &y, nullptr), ARG, "stats");
  CHECK_FAILS(cudnnfe_graph_add_softmax(f.g, 0, &o, &y, &y), GRAPH, "x is missing");
}

// Attention options (docs/attention.md): each rule names the node, the
// tensor or option and what is expected.
TEST(sdpa_option_rules) {
  Fixture f;
  int64_t q = f.tensor("q", {2, 4, 16, 8}, CUDNNFE_DTYPE_HALF);
  int64_t scale = f.tensor("scale", {1, 1, 1, 1});
  int64_t scale2 = f.tensor("scale2", {2});
  int64_t lens = f.tensor("lens", {2, 1, 1, 1}, CUDNNFE_DTYPE_INT32);
  int64_t lens_bad = f.tensor("lens_bad", {2}, CUDNNFE_DTYPE_INT32);
  int64_t seed = f.tensor("seed", {1, 1, 1, 1}, CUDNNFE_DTYPE_INT64);
  int64_t mask = f.tensor("mask", {2, 4, 16, 16}, CUDNNFE_DTYPE_HALF);
  int64_t mask_bad = f.tensor("mask_bad", {2, 4, 16, 15}, CUDNNFE_DTYPE_HALF);
  int64_t o = 0, stats = 0;
  auto fresh = [](cudnnfe_sdpa_options_t *so) {
    cudnnfe_sdpa_options_init(so);
    so->name = "attn";
  };
  cudnnfe_sdpa_options_t so;
  fresh(&so);
  so.attn_scale = 0.5;
  so.attn_scale_tensor = scale;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH, "sdpa \"attn\"",
              "attn_scale (0.5) and attn_scale_tensor are both set");
  so.attn_scale = 0;
  so.attn_scale_tensor = scale2;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "attn_scale_tensor \"scale2\" is [2]", "one element");

  fresh(&so);
  so.padding_mask = 1;
  so.seq_len_q = lens;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH, "sdpa \"attn\"",
              "padding_mask is set but seq_len_kv is missing", "INT32 [b,1,1,1]");
  so.seq_len_kv = lens_bad;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "seq_len_kv \"lens_bad\" is [2]; expected [b,1,1,1] = [2,1,1,1]");
  so.padding_mask = 0;
  so.seq_len_kv = lens;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "seq_len_q is given but padding_mask is 0");

  fresh(&so);
  so.window_left = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH, "window_left is 0",
              "would hide every column");
  so.window_left = -1;
  so.window_right = -2;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH, "window_right is -2");
  so.window_right = 3;
  so.causal_mask = 1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "causal_mask means window_right = 0, but window_right is 3");
  so.window_right = -1;
  so.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "causal_mask is aligned top-left but diagonal_alignment is BOTTOM_RIGHT");
  so.diagonal_alignment = 5;
  so.causal_mask = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "diagonal_alignment 5 is unknown");

  fresh(&so);
  so.alibi_mask = 1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "alibi_mask needs a causal top-left mask");
  so.causal_mask_bottom_right = 1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "alibi_mask needs a causal top-left mask");

  fresh(&so);
  so.dropout_probability = 1.0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "dropout_probability is 1; it must be in [0, 1)");
  so.dropout_probability = 0.1;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "dropout_probability is 0.1 but dropout_seed and dropout_offset are missing");
  so.dropout_seed = seed;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "needs both dropout_seed and dropout_offset (dropout_offset is missing)");
  so.dropout_offset = seed;
  so.dropout_mask = mask;
  so.dropout_scale = scale;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH, "exclusive");
  fresh(&so);
  so.dropout_mask = mask;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "dropout_scale is missing");
  so.dropout_scale = scale;
  so.dropout_mask = mask_bad;
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats), GRAPH,
              "dropout_mask \"mask_bad\" [2,4,16,15] does not broadcast to [b,h_q,s_q,s_kv]");

  // Types are checked at validation.
  fresh(&so);
  so.padding_mask = 1;
  so.seq_len_q = so.seq_len_kv = f.tensor("lens_f", {2, 1, 1, 1});
  REQUIRE_OK(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats));
  cudnnfe_tensor_set_output(f.g, o, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "seq_len_q \"lens_f\" is FLOAT", "must be INT32");
}

TEST(sdpa_option_types) {
  Fixture f;
  int64_t q = f.tensor("q", {1, 2, 8, 8}, CUDNNFE_DTYPE_HALF);
  int64_t seed_f = f.tensor("seed_f", {1}, CUDNNFE_DTYPE_INT32);
  int64_t o = 0, stats = 0;
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.name = "drop";
  so.dropout_probability = 0.2;
  so.dropout_seed = so.dropout_offset = seed_f;
  REQUIRE_OK(cudnnfe_graph_add_sdpa(f.g, q, q, q, &so, &o, &stats));
  cudnnfe_tensor_set_output(f.g, o, 1);
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "sdpa \"drop\"",
              "dropout_seed \"seed_f\" is INT32", "must be INT64");
}

TEST(sdpa_backward_option_rules) {
  Fixture f;
  int64_t q = f.tensor("q", {2, 4, 16, 8}, CUDNNFE_DTYPE_HALF);
  int64_t st = f.tensor("st", {2, 4, 16, 1});
  int64_t mask = f.tensor("mask", {2, 4, 16, 16}, CUDNNFE_DTYPE_HALF);
  int64_t scale = f.tensor("scale", {1, 1, 1, 1});
  int64_t bias_b = f.tensor("bias_b", {2, 4, 16, 16}, CUDNNFE_DTYPE_HALF);
  int64_t bias = f.tensor("bias", {1, 4, 16, 16}, CUDNNFE_DTYPE_HALF);
  int64_t dq, dk, dv, db;
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "attn_bwd";
  o.dropout_mask = mask;
  o.dropout_scale = scale;
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, q, q, st, &o, &dq, &dk, &dv), GRAPH,
              "sdpa_backward \"attn_bwd\"", "dropout_mask needs dropout_scale_inv");
  o.dropout_mask = o.dropout_scale = 0;
  o.dropout_scale_inv = scale;
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(f.g, q, q, q, q, q, st, &o, &dq, &dk, &dv), GRAPH,
              "dropout_scale_inv is given without dropout_mask");
  o.dropout_scale_inv = 0;
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward_ex(f.g, q, q, q, q, q, st, &o, &dq, &dk, &dv, &db),
              GRAPH, "dbias is asked for but the node has no bias");
  o.bias = bias_b;
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward_ex(f.g, q, q, q, q, q, st, &o, &dq, &dk, &dv, &db),
              GRAPH, "dbias needs bias of dims [1,h_q,s_q,s_kv] = [1,4,16,16]",
              "bias \"bias_b\" is [2,4,16,16]");
  o.bias = bias;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward_ex(f.g, q, q, q, q, q, st, &o, &dq, &dk, &dv, &db));
  int64_t dims[4], strides[4];
  int32_t rank = 0;
  REQUIRE_OK(cudnnfe_tensor_get_shape(f.g, db, dims, strides, 4, &rank));
  CHECK(rank == 4 && dims[0] == 1 && dims[1] == 4 && dims[2] == 16 && dims[3] == 16);
}
