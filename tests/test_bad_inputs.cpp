// Bad input never crashes: each case gets the right status and a message
// naming the node, the tensor and the rule (ABI.md section 4).
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
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
  // A caller's tensor is never virtual: marking it an output keeps it for an
  // op that takes it as its output later (cudnn-frontend allows both).
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, a, 1));
  CHECK_FAILS(cudnnfe_tensor_set_output(f.g, a, 0), ARG, "\"a\"", "graph input",
              "cannot be made virtual");
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
              "weight \"w_bad_c\" dim 1 (C) is 5 but image \"x\" has 3 channels",
              "multiple of the weight's");
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

TEST(genstats_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {2, 3, 4, 4}), v = f.tensor("v", {5}), s, q;
  cudnnfe_genstats_options_t o;
  cudnnfe_genstats_options_init(&o);
  o.name = "gs";
  CHECK_FAILS(cudnnfe_graph_add_genstats(f.g, x, &o, nullptr, &q), ARG, "sum");
  CHECK_FAILS(cudnnfe_graph_add_genstats(f.g, v, &o, &s, &q), GRAPH, "genstats \"gs\"",
              "x \"v\" has 1 dims", "[N, C, ...]");
  CHECK_FAILS(cudnnfe_graph_add_genstats(f.g, 0, &o, &s, &q), GRAPH, "x is missing");
  CHECK_OK(cudnnfe_graph_add_genstats(f.g, x, &o, &s, &q));
  const int64_t wrong[] = {1, 4, 1, 1};
  CHECK_OK(cudnnfe_tensor_set_dims(f.g, q, 4, wrong));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "genstats \"gs\"", "sq_sum \"gs::sq_sum\"",
              "[1,4,1,1]", "one value per channel of x \"x\"");
}

TEST(bn_finalize_rules) {
  Fixture f;
  int64_t sum = f.tensor("sum", {1, 4, 1, 1}), sq = f.tensor("sq", {1, 4, 1, 1});
  int64_t scale = f.tensor("scale", {1, 4, 1, 1}), bias = f.tensor("bias", {1, 4, 1, 1});
  int64_t bias3 = f.tensor("bias3", {1, 3, 1, 1}), eps2 = f.tensor("eps2", {2});
  int64_t eps = 0, count = 0, momentum = 0, o[6];
  cudnnfe_graph_add_scalar(f.g, "eps", CUDNNFE_DTYPE_FLOAT, 1e-5, &eps);
  cudnnfe_graph_add_scalar(f.g, "count", CUDNNFE_DTYPE_INT64, 8, &count);
  cudnnfe_graph_add_scalar(f.g, "momentum", CUDNNFE_DTYPE_FLOAT, 0.1, &momentum);
  cudnnfe_bn_finalize_options_t opt;
  cudnnfe_bn_finalize_options_init(&opt);
  opt.name = "fin";
  CHECK_FAILS(cudnnfe_graph_add_bn_finalize(f.g, sum, sq, scale, bias3, eps, count, 0, 0, 0, &opt,
                                            &o[0], &o[1], &o[2], &o[3], nullptr, nullptr),
              GRAPH, "bn_finalize \"fin\"", "bias \"bias3\" is [1,3,1,1]; expected [1,4,1,1]");
  CHECK_FAILS(cudnnfe_graph_add_bn_finalize(f.g, sum, sq, scale, bias, eps2, count, 0, 0, 0, &opt,
                                            &o[0], &o[1], &o[2], &o[3], nullptr, nullptr),
              GRAPH, "epsilon \"eps2\" is [2]; expected one element");
  CHECK_FAILS(cudnnfe_graph_add_bn_finalize(f.g, sum, sq, scale, bias, eps, count, sum, 0, momentum,
                                            &opt, &o[0], &o[1], &o[2], &o[3], &o[4], &o[5]),
              GRAPH, "given together or not at all (2 of 3 given)");
  CHECK_FAILS(
      cudnnfe_graph_add_bn_finalize(f.g, sum, sq, scale, bias, eps, count, sum, sq, momentum, &opt,
                                    &o[0], &o[1], &o[2], &o[3], nullptr, &o[5]),
      ARG, "next_running_mean");
  CHECK_FAILS(cudnnfe_graph_add_bn_finalize(f.g, sum, sq, scale, bias, eps, 0, 0, 0, 0, &opt, &o[0],
                                            &o[1], &o[2], &o[3], nullptr, nullptr),
              GRAPH, "accum_count is missing");
}

TEST(dbn_weight_rules) {
  Fixture f;
  int64_t dy = f.tensor("dy", {2, 4, 3, 3}), x = f.tensor("x", {2, 4, 3, 2});
  int64_t x_ok = f.tensor("x_ok", {2, 4, 3, 3}), c = f.tensor("c", {1, 4, 1, 1});
  int64_t c5 = f.tensor("c5", {1, 5, 1, 1}), o[5];
  cudnnfe_dbn_weight_options_t opt;
  cudnnfe_dbn_weight_options_init(&opt);
  opt.name = "dbnw";
  CHECK_FAILS(
      cudnnfe_graph_add_dbn_weight(f.g, dy, x, c, c, c, &opt, &o[0], &o[1], &o[2], &o[3], &o[4]),
      GRAPH, "dbn_weight \"dbnw\"", "x \"x\" is [2,4,3,2]; expected [2,4,3,3]");
  CHECK_FAILS(cudnnfe_graph_add_dbn_weight(f.g, dy, x_ok, c, c, c5, &opt, &o[0], &o[1], &o[2],
                                           &o[3], &o[4]),
              GRAPH, "scale \"c5\" is [1,5,1,1]; expected [1,4,1,1]");
  CHECK_FAILS(cudnnfe_graph_add_dbn_weight(f.g, dy, x_ok, c, c, c, &opt, &o[0], &o[1], nullptr,
                                           &o[3], &o[4]),
              ARG, "eq_scale_dy");
}

// Grouped convolutions: image C = groups * weight C, and K divisible by groups.
TEST(conv_group_rules) {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.name = "gconv";
  {
    Fixture f;
    int64_t x = f.tensor("x", {1, 8, 6, 6}), w_c3 = f.tensor("w_c3", {8, 3, 3, 3});
    int64_t w_k6 = f.tensor("w_k6", {6, 2, 3, 3}), y;
    CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w_c3, &o, &y), GRAPH, "conv_fprop \"gconv\"",
                "weight \"w_c3\" dim 1 (C) is 3 but image \"x\" has 8");
    CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w_k6, &o, &y), GRAPH,
                "weight \"w_k6\" dim 0 (K) is 6, not divisible by the 4 groups");
  }
  {  // dgrad: the caller's dx fixes the group count.
    Fixture f;
    int64_t dy = f.tensor("dy", {1, 8, 4, 4}), w = f.tensor("w", {8, 2, 3, 3}), dx;
    CHECK_OK(cudnnfe_graph_add_conv_dgrad(f.g, dy, w, &o, &dx));
    const int64_t dx_bad[] = {1, 7, 6, 6};
    CHECK_OK(cudnnfe_tensor_set_dims(f.g, dx, 4, dx_bad));
    CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "conv_dgrad \"gconv\"",
                "weight \"w\" dim 1 (C) is 2 but dx \"", "has 7 channels");
  }
  {  // wgrad: the caller's dw fixes it.
    Fixture f;
    int64_t x = f.tensor("x", {1, 8, 6, 6}), dy = f.tensor("dy", {1, 6, 4, 4}), dw;
    CHECK_OK(cudnnfe_graph_add_conv_wgrad(f.g, x, dy, &o, &dw));
    const int64_t dw_bad[] = {6, 3, 3, 3};
    CHECK_OK(cudnnfe_tensor_set_dims(f.g, dw, 4, dw_bad));
    CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "conv_wgrad \"gconv\"", "dw \"",
                "dim 1 (C) is 3 but image \"x\" has 8 channels");
    const int64_t dw_k[] = {6, 2, 3, 3};  // 4 groups, but K = 6
    CHECK_OK(cudnnfe_tensor_set_dims(f.g, dw, 4, dw_k));
    CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "dim 0 (K) is 6, not divisible by the 4");
  }
}

// dy 1 wide, stride 3, filter 5, padding 4 + 1: the smallest dx is empty, but
// dx 2 wide maps to dy (difftest conv seed 499; cudnn-frontend runs it). The
// add succeeds; validation refuses it only while dx's dims stay unset.
TEST(dgrad_whose_smallest_dx_is_empty_waits_for_set_dims) {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.name = "dgrad";
  o.spatial_dims = 2;
  o.pre_padding[0] = 4;
  o.post_padding[0] = 1;
  o.stride[0] = 3;
  Fixture f;
  int64_t dy = f.tensor("dy", {2, 4, 1, 6}), w = f.tensor("w", {4, 3, 5, 1}), dx;
  CHECK_OK(cudnnfe_graph_add_conv_dgrad(f.g, dy, w, &o, &dx));
  CHECK_OK(cudnnfe_tensor_set_output(f.g, dx, 1));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "conv_dgrad \"dgrad\"",
              "padding of spatial dim 0 leaves no input positions for loss \"dy\"",
              "set dx's dims");
  const int64_t dx_dims[] = {2, 3, 2, 6};
  CHECK_OK(cudnnfe_tensor_set_dims(f.g, dx, 4, dx_dims));
  CHECK_OK(cudnnfe_graph_validate(f.g));
  const int64_t dx_wrong[] = {2, 3, 5, 6};  // its forward convolution is 2 wide, not 1
  CHECK_OK(cudnnfe_tensor_set_dims(f.g, dx, 4, dx_wrong));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "loss \"dy\" spatial dim 0",
              "the forward convolution of dx's size");
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
  // cudnn-frontend's class for head counts that do not divide h_q.
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, k, k, &so, &o, &stats), CUDNNFE_STATUS_NOT_SUPPORTED,
              "8 heads", "must each divide q's");
  // Issue 13, defect 7: the message names the tensors, not just the ports.
  CHECK_FAILS(cudnnfe_graph_add_sdpa(f.g, q, k, k, &so, &o, &stats), CUDNNFE_STATUS_NOT_SUPPORTED,
              "q \"q\" [2,8,1024,64] has 8 heads", "k \"k\" [2,3,1024,64] has 3");
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
  REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, nullptr, &y));
  // An input that no operation reads is no refusal (cudnn-frontend's graph
  // holds only the tensors its nodes use): it takes no buffer, and a binding
  // for it is accepted and ignored.
  cudnnfe_tensor_set_output(f.g, y, 1);
  CHECK_OK(cudnnfe_graph_validate(f.g));
  cudnnfe_build_options_t cpu;
  cudnnfe_build_options_init(&cpu);
  cpu.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(f.g, nullptr, &cpu));
  int64_t bound[4] = {};
  size_t count = 0;
  CHECK_OK(cudnnfe_graph_get_bound_uids(f.g, bound, 4, &count));
  CHECK(count == 2 && bound[0] == a && bound[1] == y);
  float av[3] = {1, 2, 3}, yv[3] = {}, uv[3] = {};
  cudnnfe_binding_t bind[3] = {{a, av}, {y, yv}, {unused, uv}};
  cudnnfe_handle_t *h = nullptr;
  cudnnfe_handle_create(&h, -1);
  CHECK_OK(cudnnfe_graph_execute(f.g, h, bind, 3, nullptr, 0, nullptr));
  CHECK_OK(cudnnfe_graph_execute(f.g, h, bind, 2, nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  CHECK(yv[0] == -1 && yv[2] == -3);
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

// Issue 13, defect 7: "not built" says whether a build failed or never ran.
TEST(not_built_tells_a_failed_build_from_none) {
  Fixture f;
  int64_t a = f.tensor("a", {3}), y;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, nullptr, &y));
  int64_t ws;
  CHECK_FAILS(cudnnfe_graph_get_workspace_size(f.g, &ws), CUDNNFE_STATUS_WRONG_STATE, "not built",
              "no build has run");
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &o), GRAPH, "no outputs");
  CHECK_FAILS(cudnnfe_graph_get_workspace_size(f.g, &ws), CUDNNFE_STATUS_WRONG_STATE, "not built",
              "last build failed", "no outputs");
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, y, 1));
  REQUIRE_OK(cudnnfe_graph_build(f.g, nullptr, &o));
  REQUIRE_OK(cudnnfe_graph_get_workspace_size(f.g, &ws));
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

// Issue 13, defect 4: a destroyed pointer stays refused after its memory
// could have been reused, and never reaches the object created after it.
TEST(destroyed_pointers_stay_refused_after_reuse) {
  cudnnfe_graph_t *g1, *g2;
  REQUIRE_OK(cudnnfe_graph_create(&g1));
  REQUIRE_OK(cudnnfe_graph_destroy(g1));
  REQUIRE_OK(cudnnfe_graph_create(&g2));
  CHECK(g1 != g2);
  int64_t uid;
  const int64_t d[] = {2};
  REQUIRE_OK(cudnnfe_graph_add_tensor(g2, "live", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &uid));
  size_t count = 99;
  CHECK_FAILS(cudnnfe_graph_get_tensor_count(g1, &count), ARG, "not a live cudnnfe graph");
  CHECK(count == 99);
  CHECK_FAILS(cudnnfe_graph_destroy(g1), ARG, "not a live cudnnfe graph");
  REQUIRE_OK(cudnnfe_graph_get_tensor_count(g2, &count));  // g2 survived
  CHECK(count == 1);
  REQUIRE_OK(cudnnfe_graph_destroy(g2));

  cudnnfe_handle_t *h1, *h2;
  REQUIRE_OK(cudnnfe_handle_create(&h1, -1));
  REQUIRE_OK(cudnnfe_handle_destroy(h1));
  REQUIRE_OK(cudnnfe_handle_create(&h2, -1));
  CHECK(h1 != h2);
  CHECK_FAILS(cudnnfe_handle_destroy(h1), ARG, "not a live cudnnfe handle");
  CHECK(std::strstr(cudnnfe_handle_last_error(h2), "destroyed") == nullptr);
  REQUIRE_OK(cudnnfe_handle_destroy(h2));
  // A graph pointer is not a handle, nor the other way round.
  REQUIRE_OK(cudnnfe_graph_create(&g1));
  REQUIRE_OK(cudnnfe_handle_create(&h1, -1));
  CHECK_FAILS(cudnnfe_handle_destroy(reinterpret_cast<cudnnfe_handle_t *>(g1)), ARG);
  CHECK_FAILS(cudnnfe_graph_destroy(reinterpret_cast<cudnnfe_graph_t *>(h1)), ARG);
  REQUIRE_OK(cudnnfe_handle_destroy(h1));
  REQUIRE_OK(cudnnfe_graph_destroy(g1));
}

TEST(many_create_destroy_cycles_never_revive_a_pointer) {
  std::vector<cudnnfe_graph_t *> dead;
  for (int i = 0; i < 1000; ++i) {
    cudnnfe_graph_t *g;
    REQUIRE_OK(cudnnfe_graph_create(&g));
    REQUIRE_OK(cudnnfe_graph_destroy(g));
    dead.push_back(g);
  }
  cudnnfe_graph_t *live;
  REQUIRE_OK(cudnnfe_graph_create(&live));
  size_t refused = 0, count = 0;
  for (cudnnfe_graph_t *g : dead)
    refused += cudnnfe_graph_get_tensor_count(g, &count) == CUDNNFE_STATUS_INVALID_ARGUMENT;
  CHECK(refused == dead.size());
  REQUIRE_OK(cudnnfe_graph_destroy(live));
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
  int64_t x = f.tensor("x", {4, 16}), s = f.tensor("s", {1, 16}), s_bad = f.tensor("s_bad", {1, 8}),
          s_rank = f.tensor("s_rank", {16});
  int64_t st = f.tensor("st", {4, 1}), st_bad = f.tensor("st_bad", {1, 1});
  int64_t y, m, iv, dx, ds, db;
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "ln";
  // Scale and bias broadcast (each dim x's or 1); other shapes are malformed.
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s_bad, s, &o, &y, &m, &iv), GRAPH,
              "layernorm \"ln\"", "scale \"s_bad\" is [1,8] for x \"x\" [4,16]",
              "each of its dims must be x's or 1");
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s, s_rank, &o, &y, &m, &iv), GRAPH,
              "bias \"s_rank\" is [16]", "x's or 1");
  CHECK_FAILS(cudnnfe_graph_add_layernorm(f.g, x, s, 0, &o, &y, &m, &iv), GRAPH, "bias is missing");
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

TEST(batch_instance_adaptive_norm_rules) {
  Fixture f;
  int64_t x = f.tensor("x", {4, 8, 3, 3}), s = f.tensor("s", {1, 8, 1, 1});
  int64_t s_bad = f.tensor("s_bad", {1, 8, 3, 3}), st = f.tensor("st", {4, 8, 1, 1});
  int64_t v = f.tensor("v", {8}), x2 = f.tensor("x2", {4, 8}), one = f.tensor("one", {1, 8, 1, 1});
  int64_t y, m, iv, nm, nv, dx, ds, db;
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "bn";
  // batchnorm
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s_bad, s, 0, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "batchnorm \"bn\"", "scale \"s_bad\" is [1,8,3,3]; expected [1,8,1,1]",
              "one value per channel");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, 0, 0, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "bias is missing");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, v, s, s, 0, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "x \"v\" has 1 dim [8]", "needs at least 2", "[N, C, spatial...]");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, s, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "prev_running_mean is given but prev_running_var is missing");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, s, s, &o, &y, &m, &iv, nullptr, &nv), ARG,
              "next_running_mean", "running statistics are given");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, st, s, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "prev_running_mean \"st\" is [4,8,1,1]; expected [1,8,1,1]");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, 0, 0, &o, &y, nullptr, &iv, &nm, &nv), ARG,
              "mean");
  int64_t lone = f.tensor("lone", {1, 8, 1, 1});
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, lone, s, s, s, s, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "one value per channel", "unbiased");
  o.momentum = 2;
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, s, s, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "momentum is 2", "[0, 1]");
  o.momentum = 0.1;
  o.phase = CUDNNFE_NORM_PHASE_INFERENCE;
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, 0, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "phase is INFERENCE", "cudnnfe_graph_add_batchnorm_inference");
  o.phase = CUDNNFE_NORM_PHASE_TRAINING;
  o.zero_centered_gamma = 1;
  CHECK_FAILS(cudnnfe_graph_add_batchnorm(f.g, x, s, s, 0, 0, &o, &y, &m, &iv, &nm, &nv), GRAPH,
              "zero_centered_gamma is offered by layernorm, rmsnorm and adalayernorm, not by "
              "batchnorm");
  CHECK_FAILS(cudnnfe_graph_add_instancenorm(f.g, x, s, s, &o, &y, &m, &iv), GRAPH,
              "not by instancenorm");
  o.zero_centered_gamma = 0;
  o.epsilon = NAN;
  CHECK_FAILS(cudnnfe_graph_add_instancenorm(f.g, x, s, s, &o, &y, &m, &iv), GRAPH,
              "epsilon is nan");
  o.epsilon = 1e-5;
  // batchnorm inference and backward
  CHECK_FAILS(cudnnfe_graph_add_batchnorm_inference(f.g, x, s, s, 0, s, &o, &y), GRAPH,
              "input mean is missing");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm_inference(f.g, x, s, s, s, st, &o, &y), GRAPH,
              "inv_variance \"st\" is [4,8,1,1]; expected [1,8,1,1]");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm_backward(f.g, x, x, s, st, s, &o, &dx, &ds, &db), GRAPH,
              "batchnorm_backward \"bn\"", "mean \"st\" is [4,8,1,1]; expected [1,8,1,1]",
              "the forward's statistics");
  CHECK_FAILS(cudnnfe_graph_add_batchnorm_backward(f.g, x, x, s, s, s, &o, &dx, &ds, nullptr), ARG,
              "dbias");
  // instancenorm
  CHECK_FAILS(cudnnfe_graph_add_instancenorm(f.g, x2, one, one, &o, &y, &m, &iv), GRAPH,
              "instancenorm", "scale \"one\" is [1,8,1,1]; expected [1,8]");
  CHECK_FAILS(cudnnfe_graph_add_instancenorm(f.g, v, one, one, &o, &y, &m, &iv), GRAPH,
              "instancenorm", "x \"v\" has 1 dim [8]", "needs at least 2");
  CHECK_FAILS(cudnnfe_graph_add_instancenorm(f.g, x, s, s, &o, &y, nullptr, &iv), ARG,
              "mean (phase is TRAINING)");
  CHECK_FAILS(cudnnfe_graph_add_instancenorm_backward(f.g, x, x, s, s, st, &o, &dx, &ds, &db),
              GRAPH, "mean \"s\" is [1,8,1,1]; expected [4,8,1,1]", "one per (n, c)");
  // adalayernorm: x [B=2, S=5, D=16], scale per sample [2, 1, 16] (or
  // shared, [1, 1, 16]: each dim x's or 1)
  int64_t ax = f.tensor("ax", {2, 5, 16}), as = f.tensor("as", {2, 1, 16});
  int64_t as_bad = f.tensor("as_bad", {2, 1, 8}), ast = f.tensor("ast", {2, 5, 1});
  o.name = "ada";
  CHECK_FAILS(cudnnfe_graph_add_adalayernorm(f.g, ax, as_bad, as, &o, &y, &m, &iv), GRAPH,
              "adalayernorm \"ada\"", "scale \"as_bad\" is [2,1,8]", "x's or 1");
  CHECK_FAILS(cudnnfe_graph_add_adalayernorm_backward(f.g, as, ax, as, ast, ast, &o, &dx, &ds, &db),
              GRAPH, "dy \"as\" is [2,1,16]; expected [2,5,16]");
  CHECK_FAILS(cudnnfe_graph_add_adalayernorm_backward(f.g, ax, ax, as, as, ast, &o, &dx, &ds, &db),
              GRAPH, "mean \"as\" is [2,1,16]; expected [2,5,1]", "the forward's statistics");
  // None of the rejected ops left anything behind.
  REQUIRE_OK(cudnnfe_graph_add_adalayernorm(f.g, ax, as, as, &o, &y, &m, &iv));
  const char *name = nullptr;
  CHECK_OK(cudnnfe_tensor_get_name(f.g, y, &name));
  CHECK(name && std::strcmp(name, "ada::y") == 0);
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

TEST(layout_op_rules) {
  Fixture f;
  const int64_t x = f.tensor("x", {2, 3, 4});
  int64_t y;
  const int64_t five[] = {5, 5};
  CHECK_FAILS(cudnnfe_graph_add_reshape(f.g, x, 2, five, nullptr, &y), GRAPH, "reshape", "\"x\"",
              "25 elements", "24", "keeps the element count");
  const int64_t zero[] = {0, 24};
  CHECK_FAILS(cudnnfe_graph_add_reshape(f.g, x, 2, zero, nullptr, &y), GRAPH, "dim 0",
              "must be positive");
  CHECK_FAILS(cudnnfe_graph_add_reshape(f.g, x, 0, five, nullptr, &y), ARG, "reshape dims",
              "0 entries");
  CHECK_FAILS(cudnnfe_graph_add_reshape(f.g, x, 2, nullptr, nullptr, &y), ARG, "NULL");
  const int32_t dup[] = {0, 0, 1}, short_perm[] = {1, 0};
  CHECK_FAILS(cudnnfe_graph_add_transpose(f.g, x, 3, dup, nullptr, &y), GRAPH, "transpose",
              "not a permutation");
  CHECK_FAILS(cudnnfe_graph_add_transpose(f.g, x, 2, short_perm, nullptr, &y), GRAPH,
              "permutation has 2 entries", "\"x\" has 3 dims");
  const int64_t s0[] = {0, 0, 0}, e_big[] = {2, 4, 4}, e_ok[] = {2, 3, 4}, e_empty[] = {2, 3, 0};
  const int64_t bad_step[] = {1, 0, 1};
  CHECK_FAILS(cudnnfe_graph_add_slice(f.g, x, 3, s0, e_big, nullptr, nullptr, &y), GRAPH, "slice",
              "dim 1 range [0, 4)", "\"x\"", "dim of 3");
  CHECK_FAILS(cudnnfe_graph_add_slice(f.g, x, 3, s0, e_empty, nullptr, nullptr, &y), GRAPH,
              "dim 2 range [0, 0)");
  CHECK_FAILS(cudnnfe_graph_add_slice(f.g, x, 3, s0, e_ok, bad_step, nullptr, &y), GRAPH,
              "step of dim 1 is 0");
  const int64_t neg[] = {-1, 0, 0};
  CHECK_FAILS(cudnnfe_graph_add_slice(f.g, x, 3, neg, e_ok, nullptr, nullptr, &y), GRAPH,
              "no negative indices");
  // A slice cannot be a graph output: it is a view (cudnnfe has no slice
  // operation; cudnn-frontend's needs cuDNN 9.22), so NOT_SUPPORTED.
  int64_t s;
  REQUIRE_OK(cudnnfe_graph_add_slice(f.g, x, 3, s0, e_ok, nullptr, nullptr, &s));
  CHECK_OK(cudnnfe_tensor_set_output(f.g, s, 1));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), CUDNNFE_STATUS_NOT_SUPPORTED, "slice", "graph output",
              "view", "IDENTITY");
  CHECK_OK(cudnnfe_tensor_set_output(f.g, s, 0));
  const int64_t strides[] = {12, 4, 2};
  CHECK_OK(cudnnfe_tensor_set_strides(f.g, s, 3, strides));
  int64_t id;
  CHECK_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_IDENTITY, s, 0, 0, nullptr, &id));
  CHECK_OK(cudnnfe_tensor_set_output(f.g, id, 1));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), CUDNNFE_STATUS_NOT_SUPPORTED,
              "strides were set to [12,4,2]", "view");
  // Layout ops do not convert types.
  Fixture t;
  const int64_t h = t.tensor("h", {4, 2}, CUDNNFE_DTYPE_HALF);
  const int64_t eight[] = {8};
  int64_t r;
  CHECK_OK(cudnnfe_graph_add_reshape(t.g, h, 1, eight, nullptr, &r));
  CHECK_OK(cudnnfe_tensor_set_output(t.g, r, 1));
  CHECK_OK(cudnnfe_tensor_set_dtype(t.g, r, CUDNNFE_DTYPE_FLOAT));
  CHECK_FAILS(cudnnfe_graph_validate(t.g), GRAPH, "reshape", "FLOAT", "\"h\" has HALF",
              "does not convert types");
  // Concatenate.
  Fixture c;
  const int64_t a = c.tensor("a", {2, 3}), b = c.tensor("b", {3, 4}), d = c.tensor("d", {2, 3, 1});
  const int64_t ab[] = {a, b}, ad[] = {a, d}, aa[] = {a, a}, a0[] = {a, 0};
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 2, ab, 1, nullptr, &y), GRAPH, "concatenate",
              "\"b\"", "at dim 0", "only the axis (1)");
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 2, ad, 0, nullptr, &y), GRAPH, "equal ranks");
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 2, aa, 2, nullptr, &y), GRAPH, "axis 2",
              "outside");
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 1, aa, 0, nullptr, &y), ARG, "num_inputs is 1");
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 2, a0, 0, nullptr, &y), ARG, "inputs[1] is 0");
  CHECK_FAILS(cudnnfe_graph_add_concatenate(c.g, 2, nullptr, 0, nullptr, &y), ARG, "NULL");
  int64_t sc;
  CHECK_OK(cudnnfe_graph_add_scalar(c.g, "sc", CUDNNFE_DTYPE_FLOAT, 1.0, &sc));
  CHECK_FAILS(cudnnfe_graph_add_reshape(c.g, sc, 1, eight, nullptr, &y), GRAPH, "scalar");
}

TEST(resample_rules) {
  Fixture f;
  const int64_t x = f.tensor("x", {1, 2, 5, 5});
  cudnnfe_resample_options_t o;
  int64_t y, index;
  cudnnfe_resample_options_init(&o);
  o.window[1] = 0;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH, "resample",
              "window of spatial dim 1 is 0");
  cudnnfe_resample_options_init(&o);
  o.pre_padding[0] = 2;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH,
              "padding of spatial dim 0", "smaller than the window");
  cudnnfe_resample_options_init(&o);
  o.window[0] = 6;
  o.pre_padding[0] = 0;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH, "window 6",
              "larger than the padded image \"x\"");
  cudnnfe_resample_options_init(&o);
  o.mode = CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING;
  o.padding_mode = CUDNNFE_PADDING_NEG_INF;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH, "NEG_INF",
              "MAXPOOL only");
  cudnnfe_resample_options_init(&o);
  o.mode = CUDNNFE_RESAMPLE_BILINEAR;
  o.generate_index = 1;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, &index), GRAPH, "generate_index",
              "only MAXPOOL");
  cudnnfe_resample_options_init(&o);
  o.generate_index = 1;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), ARG, "index", "NULL");
  cudnnfe_resample_options_init(&o);
  o.mode = CUDNNFE_RESAMPLE_NEAREST;
  o.scale[1] = 0;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH, "scale of spatial dim 1");
  cudnnfe_resample_options_init(&o);
  o.mode = 42;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH,
              "unknown resample mode 42");
  cudnnfe_resample_options_init(&o);
  o.spatial_dims = 3;
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, x, &o, &y, nullptr), GRAPH, "spatial_dims is 3",
              "2 spatial dims");
  const int64_t flat = f.tensor("flat", {4, 4});
  cudnnfe_resample_options_init(&o);
  CHECK_FAILS(cudnnfe_graph_add_resample(f.g, flat, &o, &y, nullptr), GRAPH, "2 dims", "3 to 5");
  // A window of 144 positions does not fit an INT8 index.
  cudnnfe_resample_options_init(&o);
  const int64_t big = f.tensor("big", {1, 1, 12, 12});
  o.window[0] = o.window[1] = 12;
  o.generate_index = 1;
  REQUIRE_OK(cudnnfe_graph_add_resample(f.g, big, &o, &y, &index));
  CHECK_OK(cudnnfe_tensor_set_output(f.g, y, 1));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "144 positions", "INT8", "INT32");
}

TEST(rng_rules) {
  Fixture f;
  const int64_t seed = f.tensor("seed", {1}, CUDNNFE_DTYPE_INT64);
  const int64_t offset = f.tensor("offset", {1}, CUDNNFE_DTYPE_INT64);
  const int64_t fseed = f.tensor("fseed", {1}, CUDNNFE_DTYPE_FLOAT);
  const int64_t two = f.tensor("two", {2}, CUDNNFE_DTYPE_INT64);
  const int64_t dims[] = {4, 4};
  cudnnfe_rng_options_t o;
  int64_t y;
  cudnnfe_rng_options_init(&o);
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, seed, 0, &o, &y), GRAPH, "rng",
              "seed is given without offset");
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, two, offset, &o, &y), GRAPH, "seed \"two\"",
              "2 elements", "exactly one");
  o.bernoulli_probability = 1.5;
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, 0, 0, &o, &y), GRAPH,
              "bernoulli_probability is 1.5");
  cudnnfe_rng_options_init(&o);
  o.distribution = CUDNNFE_RNG_UNIFORM;
  o.uniform_min = 2;
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, 0, 0, &o, &y), GRAPH, "uniform range",
              "min < max");
  cudnnfe_rng_options_init(&o);
  o.distribution = CUDNNFE_RNG_NORMAL;
  o.normal_stddev = -1;
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, 0, 0, &o, &y), GRAPH, "stddev");
  cudnnfe_rng_options_init(&o);
  o.distribution = 9;
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, dims, 0, 0, &o, &y), GRAPH, "unknown distribution 9");
  cudnnfe_rng_options_init(&o);
  const int64_t zero_dim[] = {4, 0};
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 2, zero_dim, 0, 0, &o, &y), GRAPH, "dim 1", "positive");
  CHECK_FAILS(cudnnfe_graph_add_rng(f.g, 9, dims, 0, 0, &o, &y), ARG, "rng dims", "9 entries");
  // Seed types are checked at validation.
  REQUIRE_OK(cudnnfe_graph_add_rng(f.g, 2, dims, fseed, offset, &o, &y));
  CHECK_OK(cudnnfe_tensor_set_output(f.g, y, 1));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "seed \"fseed\"", "FLOAT", "INT64");
  // No rule on the output's type (removed with issue 23: no evidence): the
  // CPU reference stores uniform numbers in an integer output rounded, and
  // cuDNN decides on the GPU. A seed computed by the graph is read when the
  // graph runs.
  Fixture g;
  cudnnfe_rng_options_init(&o);
  o.distribution = CUDNNFE_RNG_UNIFORM;
  o.uniform_min = 10;
  o.uniform_max = 20;
  const int64_t s_in = g.tensor("s_in", {1}, CUDNNFE_DTYPE_INT64);
  const int64_t o_in = g.tensor("o_in", {1}, CUDNNFE_DTYPE_INT64);
  int64_t s_twice = 0;
  REQUIRE_OK(
      cudnnfe_graph_add_pointwise(g.g, CUDNNFE_POINTWISE_ADD, s_in, s_in, 0, nullptr, &s_twice));
  CHECK_OK(cudnnfe_tensor_set_dtype(g.g, s_twice, CUDNNFE_DTYPE_INT64));
  REQUIRE_OK(cudnnfe_graph_add_rng(g.g, 2, dims, s_twice, o_in, &o, &y));
  CHECK_OK(cudnnfe_tensor_set_output(g.g, y, 1));
  CHECK_OK(cudnnfe_tensor_set_dtype(g.g, y, CUDNNFE_DTYPE_INT32));
  CHECK_OK(cudnnfe_graph_validate(g.g));
  cudnnfe_build_options_t cpu;
  cudnnfe_build_options_init(&cpu);
  cpu.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(g.g, nullptr, &cpu));
  int64_t seed_value = 21, offset_value = 0;
  int32_t numbers[16] = {};
  cudnnfe_binding_t bind[3] = {{s_in, &seed_value}, {o_in, &offset_value}, {y, numbers}};
  cudnnfe_handle_t *h = nullptr;
  cudnnfe_handle_create(&h, -1);
  CHECK_OK(cudnnfe_graph_execute(g.g, h, bind, 3, nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  for (int32_t n : numbers) CHECK_MSG(n >= 10 && n <= 20, "uniform number %d outside [10, 20]", n);
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

  // ALiBi without a causal mask is a GPU support rule, checked at validation
  // for a GPU target (tests/test_attention_support.cpp), not a shape rule.

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

// moe_grouped_matmul: the messages name the node, the port, the tensor and
// the rule (tests/test_cpu_moe.cpp has the full set).
TEST(moe_grouped_matmul_rules) {
  Fixture f;
  const int64_t token = f.tensor("token", {1, 6, 4}), weight = f.tensor("weight", {3, 4, 2});
  const int64_t offsets = f.tensor("offsets", {3, 1, 1}, CUDNNFE_DTYPE_INT32);
  const int64_t bad_offsets = f.tensor("bad_offsets", {2, 1, 1}, CUDNNFE_DTYPE_INT32);
  const int64_t index = f.tensor("index", {1, 6, 1}, CUDNNFE_DTYPE_INT32);
  cudnnfe_moe_grouped_matmul_options_t o;
  cudnnfe_moe_grouped_matmul_options_init(&o);
  o.name = "moe";
  int64_t out = 0;
  CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(f.g, token, weight, offsets, 0, 0, &o, nullptr),
              ARG, "output");
  CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(f.g, token, weight, bad_offsets, 0, 0, &o, &out),
              GRAPH, "moe_grouped_matmul \"moe\"", "first_token_offset \"bad_offsets\"",
              "for 3 experts");
  CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(f.g, token, weight, offsets, index, 0, &o, &out),
              GRAPH, "moe_grouped_matmul \"moe\"", "token_index \"index\" is given",
              "mode NONE does not read it");
  o.mode = CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER;
  CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(f.g, token, weight, offsets, index, 0, &o, &out),
              GRAPH, "mode SCATTER reads input token_ks, which is missing");
  o.mode = 9;
  CHECK_FAILS(cudnnfe_graph_add_moe_grouped_matmul(f.g, token, weight, offsets, 0, 0, &o, &out),
              ARG, "mode is 9");
  // Offsets count rows: FLOAT offsets are malformed, INT64 ones are not (the
  // matrices' types are cuDNN's to decide).
  Fixture t;
  const int64_t tk = t.tensor("token", {1, 6, 4}, CUDNNFE_DTYPE_INT8);
  const int64_t tw = t.tensor("weight", {3, 4, 2}, CUDNNFE_DTYPE_INT8);
  const int64_t f_offsets = t.tensor("f_offsets", {3, 1, 1});
  cudnnfe_moe_grouped_matmul_options_init(&o);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(t.g, tk, tw, f_offsets, 0, 0, &o, &out));
  cudnnfe_tensor_set_output(t.g, out, 1);
  cudnnfe_tensor_set_dtype(t.g, out, CUDNNFE_DTYPE_INT32);
  CHECK_FAILS(cudnnfe_graph_validate(t.g), GRAPH, "first_token_offset \"f_offsets\"", "FLOAT",
              "an integer type");
  Fixture u;
  const int64_t uk = u.tensor("token", {1, 6, 4}, CUDNNFE_DTYPE_INT8);
  const int64_t uw = u.tensor("weight", {3, 4, 2}, CUDNNFE_DTYPE_INT8);
  const int64_t u_offsets = u.tensor("offsets", {3, 1, 1}, CUDNNFE_DTYPE_INT64);
  REQUIRE_OK(cudnnfe_graph_add_moe_grouped_matmul(u.g, uk, uw, u_offsets, 0, 0, &o, &out));
  cudnnfe_tensor_set_output(u.g, out, 1);
  cudnnfe_tensor_set_dtype(u.g, out, CUDNNFE_DTYPE_INT32);
  CHECK_OK(cudnnfe_graph_validate(u.g));
}

// paged_cache_load: each message names the node, the port, the tensor and
// the rule (tests/test_cpu_paged_cache.cpp has the numbers).
TEST(paged_cache_load_rules) {
  Fixture f;
  const int64_t cache = f.tensor("cache", {6, 2, 4, 8}), flat = f.tensor("flat", {6, 2, 32});
  const int64_t table = f.tensor("table", {2, 1, 3, 1}, CUDNNFE_DTYPE_INT32);
  const int64_t wide = f.tensor("wide", {2, 1, 3, 2}, CUDNNFE_DTYPE_INT32);
  const int64_t lengths = f.tensor("lengths", {2, 1, 1, 1}, CUDNNFE_DTYPE_INT32);
  const int64_t three = f.tensor("three", {3, 1, 1, 1}, CUDNNFE_DTYPE_INT32);
  cudnnfe_paged_cache_load_options_t o;
  cudnnfe_paged_cache_load_options_init(&o);
  o.name = "pc";
  int64_t y = 0;
  CHECK_FAILS(cudnnfe_graph_add_paged_cache_load(f.g, cache, lengths, table, &o, nullptr), ARG,
              "y");
  CHECK_FAILS(cudnnfe_graph_add_paged_cache_load(f.g, 0, lengths, table, &o, &y), GRAPH,
              "paged_cache_load \"pc\"", "container is missing");
  CHECK_FAILS(cudnnfe_graph_add_paged_cache_load(f.g, flat, lengths, table, &o, &y), GRAPH,
              "paged_cache_load \"pc\"", "container \"flat\" has 3 dims",
              "[num_pages, h, page_size, d]");
  CHECK_FAILS(cudnnfe_graph_add_paged_cache_load(f.g, cache, lengths, wide, &o, &y), GRAPH,
              "page_table \"wide\" is [2,1,3,2]; expected [2,1,3,1]",
              "one page number per page of each sequence");
  CHECK_FAILS(cudnnfe_graph_add_paged_cache_load(f.g, cache, three, table, &o, &y), GRAPH,
              "seq_len \"three\" is [3,1,1,1]; expected [2,1,1,1]", "b from page_table");
  REQUIRE_OK(cudnnfe_graph_add_paged_cache_load(f.g, cache, lengths, table, &o, &y));
  cudnnfe_tensor_set_output(f.g, y, 1);
  int64_t dims[4], strides[4];
  int32_t rank = 0;
  REQUIRE_OK(cudnnfe_tensor_get_shape(f.g, y, dims, strides, 4, &rank));
  CHECK(rank == 4 && dims[0] == 2 && dims[1] == 2 && dims[2] == 12 && dims[3] == 8);
  // s = 9..12 keeps three pages of 4 rows per sequence; 8 needs two.
  const int64_t nine[] = {2, 2, 9, 8}, eight[] = {2, 2, 8, 8};
  REQUIRE_OK(cudnnfe_tensor_set_dims(f.g, y, 4, nine));
  CHECK_OK(cudnnfe_graph_validate(f.g));
  REQUIRE_OK(cudnnfe_tensor_set_dims(f.g, y, 4, eight));
  CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "paged_cache_load \"pc\"",
              "y \"pc::y\" was set to [2,2,8,8]", "ceil(s / page_size) = 3", "page_size = 4");
  // Page numbers and lengths count rows: FLOAT is malformed, INT64 is not
  // (cuDNN decides which integer types it runs).
  Fixture t;
  const int64_t tc = t.tensor("cache", {6, 2, 4, 8});
  const int64_t float_table = t.tensor("float_table", {2, 1, 3, 1});
  const int64_t tl = t.tensor("lengths", {2, 1, 1, 1}, CUDNNFE_DTYPE_INT64);
  REQUIRE_OK(cudnnfe_graph_add_paged_cache_load(t.g, tc, tl, float_table, &o, &y));
  cudnnfe_tensor_set_output(t.g, y, 1);
  CHECK_FAILS(cudnnfe_graph_validate(t.g), GRAPH, "paged_cache_load \"pc\"",
              "page_table \"float_table\" is FLOAT; expected an integer type");
  Fixture u;
  const int64_t uc = u.tensor("cache", {6, 2, 4, 8});
  const int64_t ut = u.tensor("table", {2, 1, 3, 1}, CUDNNFE_DTYPE_INT64);
  const int64_t ul = u.tensor("lengths", {2, 1, 1, 1}, CUDNNFE_DTYPE_INT64);
  REQUIRE_OK(cudnnfe_graph_add_paged_cache_load(u.g, uc, ul, ut, &o, &y));
  cudnnfe_tensor_set_output(u.g, y, 1);
  CHECK_OK(cudnnfe_graph_validate(u.g));
}

// The rules issue 23's inventory (docs/refusals.md) changed: cuDNN-side
// limits are NOT_SUPPORTED, not INVALID_GRAPH, and rules with no evidence
// are gone (the CPU reference refuses what it cannot compute, at build).
TEST(refusal_inventory_status_and_removed_rules) {
  cudnnfe_build_options_t cpu;
  cudnnfe_build_options_init(&cpu);
  cpu.target = CUDNNFE_TARGET_CPU_REFERENCE;
  {
    // Any compute type validates; the CPU reference says what it computes in.
    Fixture f;
    int64_t a = f.tensor("a", {4}), y = 0;
    cudnnfe_pointwise_options_t po;
    cudnnfe_pointwise_options_init(&po);
    po.compute_dtype = CUDNNFE_DTYPE_BFLOAT16;
    REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, a, 0, 0, &po, &y));
    cudnnfe_tensor_set_output(f.g, y, 1);
    CHECK_OK(cudnnfe_graph_validate(f.g));
    CHECK_FAILS(cudnnfe_graph_build(f.g, nullptr, &cpu), CUDNNFE_STATUS_NOT_SUPPORTED,
                "compute data type BFLOAT16", "CPU reference");
  }
  {
    // A matmul of INT32 inputs (no input-type rule: cuDNN decides; the CPU
    // reference reads every type).
    Fixture f;
    int64_t a = f.tensor("a", {1, 2, 3}, CUDNNFE_DTYPE_INT32);
    int64_t b = f.tensor("b", {1, 3, 2}, CUDNNFE_DTYPE_INT32), c = 0;
    REQUIRE_OK(cudnnfe_graph_add_matmul(f.g, a, b, nullptr, &c));
    cudnnfe_tensor_set_output(f.g, c, 1);
    cudnnfe_tensor_set_dtype(f.g, c, CUDNNFE_DTYPE_FLOAT);
    REQUIRE_OK(cudnnfe_graph_build(f.g, nullptr, &cpu));
    int32_t av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {1, 0, 0, 1, 1, 1};
    float cv[4] = {};
    cudnnfe_binding_t bind[3] = {{a, av}, {b, bv}, {c, cv}};
    cudnnfe_handle_t *h = nullptr;
    cudnnfe_handle_create(&h, -1);
    CHECK_OK(cudnnfe_graph_execute(f.g, h, bind, 3, nullptr, 0, nullptr));
    cudnnfe_handle_destroy(h);
    CHECK(cv[0] == 4 && cv[1] == 5 && cv[2] == 10 && cv[3] == 11);
  }
  {
    // cuDNN reads a norm's epsilon by value: one computed by the graph is
    // NOT_SUPPORTED (not a malformed graph).
    Fixture f;
    int64_t x = f.tensor("x", {2, 4}), s = f.tensor("s", {1, 4}), e = f.tensor("e", {1});
    int64_t twice = 0, y = 0, iv = 0;
    REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_ADD, e, e, 0, nullptr, &twice));
    cudnnfe_norm_options_t o;
    cudnnfe_norm_options_init(&o);
    o.epsilon_tensor = twice;
    CHECK_FAILS(cudnnfe_graph_add_rmsnorm(f.g, x, s, 0, &o, &y, &iv), CUDNNFE_STATUS_NOT_SUPPORTED,
                "epsilon", "computed by the graph", "by value");
  }
  {
    // More bound tensors than cudnnfe's executors take: a limit of cudnnfe
    // (NOT_SUPPORTED), not a malformed graph.
    Fixture f;
    for (int i = 0; i < 65; ++i) {
      const std::string name = "in" + std::to_string(i);
      int64_t in = f.tensor(name.c_str(), {2}), out = 0;
      REQUIRE_OK(cudnnfe_graph_add_pointwise(f.g, CUDNNFE_POINTWISE_NEG, in, 0, 0, nullptr, &out));
      cudnnfe_tensor_set_output(f.g, out, 1);
    }
    CHECK_FAILS(cudnnfe_graph_validate(f.g), CUDNNFE_STATUS_NOT_SUPPORTED, "130 bound tensors",
                "at most 128");
  }
}
