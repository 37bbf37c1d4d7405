// Graph construction through the C API: UIDs, names, shape inference,
// overrides, graph-wide types, version checks, options compatibility.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <vector>

#include "harness.h"

namespace {

struct GraphGuard {
  cudnnfe_graph_t *g = nullptr;
  GraphGuard() { cudnnfe_graph_create(&g); }
  ~GraphGuard() { cudnnfe_graph_destroy(g); }
};

std::vector<int64_t> shape_of(cudnnfe_graph_t *g, int64_t uid, std::vector<int64_t> *strides) {
  int32_t n = 0;
  cudnnfe_tensor_get_shape(g, uid, nullptr, nullptr, 0, &n);
  std::vector<int64_t> dims(n), s(n);
  cudnnfe_tensor_get_shape(g, uid, dims.data(), s.data(), n, &n);
  if (strides) *strides = s;
  return dims;
}

}  // namespace

TEST(versions) {
  CHECK(cudnnfe_version() == CUDNNFE_VERSION);
  CHECK_OK(cudnnfe_check_version(CUDNNFE_VERSION, CUDNNFE_ABI_VERSION));
  CHECK_FAILS(cudnnfe_check_version(CUDNNFE_VERSION + 1, CUDNNFE_ABI_VERSION),
              CUDNNFE_STATUS_NOT_SUPPORTED, "older");
  CHECK_FAILS(cudnnfe_check_version(CUDNNFE_VERSION, CUDNNFE_ABI_VERSION + 1),
              CUDNNFE_STATUS_NOT_SUPPORTED, "ABI");
  CHECK(std::string(cudnnfe_status_name(CUDNNFE_STATUS_INVALID_GRAPH)) ==
        "CUDNNFE_STATUS_INVALID_GRAPH");
  CHECK(std::string(cudnnfe_dtype_name(CUDNNFE_DTYPE_BFLOAT16)) == "BFLOAT16");
  CHECK(cudnnfe_dtype_size(CUDNNFE_DTYPE_HALF) == 2);
  CHECK(cudnnfe_dtype_size(CUDNNFE_DTYPE_INT64) == 8);
  CHECK(cudnnfe_dtype_size(12345) == 0);
}

TEST(device_count_never_fails) {
  int32_t count = -1;
  CHECK_OK(cudnnfe_device_count(&count));
  CHECK(count >= 0);
}

TEST(conv_fprop_infers_nhwc_output) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  const int64_t xd[] = {8, 64, 56, 56}, xs[] = {64 * 56 * 56, 1, 56 * 64, 64};
  const int64_t wd[] = {32, 64, 3, 3}, ws[] = {64 * 9, 1, 3 * 64, 64};
  int64_t x, w, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "image", CUDNNFE_DTYPE_HALF, 4, xd, xs, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "filter", CUDNNFE_DTYPE_HALF, 4, wd, ws, &w));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
  o.name = "conv";
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y));
  std::vector<int64_t> strides;
  CHECK((shape_of(g, y, &strides) == std::vector<int64_t>{8, 32, 56, 56}));
  // Channels-last input gives a channels-last output.
  CHECK((strides == std::vector<int64_t>{32 * 56 * 56, 1, 56 * 32, 32}));
  const char *name = nullptr;
  CHECK_OK(cudnnfe_tensor_get_name(g, y, &name));
  CHECK(std::string(name) == "conv::y");
  int64_t found = 0;
  CHECK_OK(cudnnfe_graph_find_tensor(g, "conv::y", &found));
  CHECK(found == y);
}

TEST(conv_stride_dilation_3d) {
  GraphGuard gg;
  const int64_t xd[] = {2, 4, 9, 10, 11}, wd[] = {6, 4, 3, 3, 3};
  int64_t x, w, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 5, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "w", CUDNNFE_DTYPE_FLOAT, 5, wd, nullptr, &w));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.stride[0] = 2;
  o.dilation[1] = 2;
  o.pre_padding[2] = 1;
  REQUIRE_OK(cudnnfe_graph_add_conv_fprop(gg.g, x, w, &o, &y));
  // D: (9-3)/2+1 = 4; H: 10 - 2*2 = 6; W: 11+1-3+1 = 10.
  CHECK((shape_of(gg.g, y, nullptr) == std::vector<int64_t>{2, 6, 4, 6, 10}));
}

TEST(conv_dgrad_wgrad_shapes) {
  GraphGuard gg;
  const int64_t dyd[] = {2, 8, 5, 5}, wd[] = {8, 3, 3, 3}, xd[] = {2, 3, 7, 7};
  int64_t dy, w, x, dx, dw;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "dy", CUDNNFE_DTYPE_FLOAT, 4, dyd, nullptr, &dy));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "w", CUDNNFE_DTYPE_FLOAT, 4, wd, nullptr, &w));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 4, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_conv_dgrad(gg.g, dy, w, nullptr, &dx));
  CHECK((shape_of(gg.g, dx, nullptr) == std::vector<int64_t>{2, 3, 7, 7}));
  REQUIRE_OK(cudnnfe_graph_add_conv_wgrad(gg.g, x, dy, nullptr, &dw));
  CHECK((shape_of(gg.g, dw, nullptr) == std::vector<int64_t>{8, 3, 3, 3}));
}

TEST(matmul_broadcast_and_pointwise_broadcast) {
  GraphGuard gg;
  const int64_t ad[] = {16, 128, 512}, bd[] = {1, 512, 64}, biasd[] = {1, 1, 64};
  int64_t a, b, bias, c, out;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "a", CUDNNFE_DTYPE_BFLOAT16, 3, ad, nullptr, &a));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "b", CUDNNFE_DTYPE_BFLOAT16, 3, bd, nullptr, &b));
  REQUIRE_OK(
      cudnnfe_graph_add_tensor(gg.g, "bias", CUDNNFE_DTYPE_BFLOAT16, 3, biasd, nullptr, &bias));
  REQUIRE_OK(cudnnfe_graph_add_matmul(gg.g, a, b, nullptr, &c));
  CHECK((shape_of(gg.g, c, nullptr) == std::vector<int64_t>{16, 128, 64}));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_ADD, c, bias, 0, nullptr, &out));
  CHECK((shape_of(gg.g, out, nullptr) == std::vector<int64_t>{16, 128, 64}));
  // Reversed operand order broadcasts the same way.
  int64_t out2;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_ADD, bias, c, 0, nullptr, &out2));
  CHECK((shape_of(gg.g, out2, nullptr) == std::vector<int64_t>{16, 128, 64}));
}

TEST(reduction_axes_and_override) {
  GraphGuard gg;
  const int64_t xd[] = {4, 5, 6};
  int64_t x, y, z;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 3, xd, nullptr, &x));
  cudnnfe_reduction_options_t o;
  cudnnfe_reduction_options_init(&o);
  o.axes_mask = 0x4;  // reduce the last dim
  REQUIRE_OK(cudnnfe_graph_add_reduction(gg.g, CUDNNFE_REDUCTION_MAX, x, &o, &y));
  CHECK((shape_of(gg.g, y, nullptr) == std::vector<int64_t>{4, 5, 1}));
  REQUIRE_OK(cudnnfe_graph_add_reduction(gg.g, CUDNNFE_REDUCTION_ADD, x, nullptr, &z));
  CHECK((shape_of(gg.g, z, nullptr) == std::vector<int64_t>{1, 1, 1}));
  const int64_t keep_first[] = {4, 1, 1};
  CHECK_OK(cudnnfe_tensor_set_dims(gg.g, z, 3, keep_first));
  CHECK_OK(cudnnfe_tensor_set_output(gg.g, z, 1));
  CHECK_OK(cudnnfe_tensor_set_output(gg.g, y, 1));
  CHECK_OK(cudnnfe_graph_validate(gg.g));
  CHECK((shape_of(gg.g, z, nullptr) == std::vector<int64_t>{4, 1, 1}));
}

TEST(sdpa_shapes_gqa_and_stats) {
  GraphGuard gg;
  const int64_t qd[] = {2, 8, 128, 64}, kd[] = {2, 2, 256, 64}, vd[] = {2, 2, 256, 32};
  // q stored as BSHD: strides of [b, s, h, d] storage seen through BHSD dims.
  const int64_t qs[] = {128 * 8 * 64, 64, 8 * 64, 1};
  int64_t q, k, v, o, stats;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "q", CUDNNFE_DTYPE_BFLOAT16, 4, qd, qs, &q));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "k", CUDNNFE_DTYPE_BFLOAT16, 4, kd, nullptr, &k));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "v", CUDNNFE_DTYPE_BFLOAT16, 4, vd, nullptr, &v));
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.generate_stats = 1;
  so.causal_mask = 1;
  so.name = "attn";
  REQUIRE_OK(cudnnfe_graph_add_sdpa(gg.g, q, k, v, &so, &o, &stats));
  std::vector<int64_t> strides;
  CHECK((shape_of(gg.g, o, &strides) == std::vector<int64_t>{2, 8, 128, 32}));
  CHECK((strides == std::vector<int64_t>{128 * 8 * 32, 32, 8 * 32, 1}));  // BSHD like q
  CHECK((shape_of(gg.g, stats, nullptr) == std::vector<int64_t>{2, 8, 128, 1}));
  cudnnfe_dtype_t dtype;
  CHECK_OK(cudnnfe_tensor_get_dtype(gg.g, stats, &dtype));
  CHECK(dtype == CUDNNFE_DTYPE_FLOAT);
  const char *name;
  CHECK_OK(cudnnfe_tensor_get_name(gg.g, o, &name));
  CHECK(std::string(name) == "attn::O");
  // Without stats, no stats tensor exists.
  int64_t o2, stats2 = 99;
  so.generate_stats = 0;
  so.name = "attn2";
  REQUIRE_OK(cudnnfe_graph_add_sdpa(gg.g, q, k, v, &so, &o2, &stats2));
  CHECK(stats2 == 0);
}

TEST(uids_names_and_enumeration) {
  GraphGuard gg;
  const int64_t d[] = {4};
  int64_t a, b, c;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, nullptr, CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &a));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "b", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &b));
  CHECK(a > 0 && b > 0 && a != b);
  CHECK_OK(cudnnfe_tensor_set_uid(gg.g, a, 1000));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_ADD, 1000, b, 0, nullptr, &c));
  CHECK_OK(cudnnfe_tensor_set_uid(gg.g, c, 2000));
  CHECK_OK(cudnnfe_tensor_set_name(gg.g, 2000, "sum"));
  int64_t found;
  CHECK_OK(cudnnfe_graph_find_tensor(gg.g, "sum", &found));
  CHECK(found == 2000);
  size_t count = 0, nodes = 0;
  CHECK_OK(cudnnfe_graph_get_tensor_uids(gg.g, nullptr, 0, &count));
  CHECK(count == 3);
  std::vector<int64_t> uids(count);
  CHECK_OK(cudnnfe_graph_get_tensor_uids(gg.g, uids.data(), uids.size(), &count));
  CHECK((uids == std::vector<int64_t>{1000, b, 2000}));
  CHECK_OK(cudnnfe_graph_get_node_count(gg.g, &nodes));
  CHECK(nodes == 1);
  int32_t bound = -1;
  CHECK_OK(cudnnfe_tensor_is_bound(gg.g, 2000, &bound));
  CHECK(bound == 0);  // virtual until marked
  CHECK_OK(cudnnfe_tensor_set_output(gg.g, 2000, 1));
  CHECK_OK(cudnnfe_tensor_is_bound(gg.g, 2000, &bound));
  CHECK(bound == 1);
}

TEST(graph_default_types_resolve_at_validation) {
  GraphGuard gg;
  CHECK_OK(cudnnfe_graph_set_io_dtype(gg.g, CUDNNFE_DTYPE_HALF));
  CHECK_OK(cudnnfe_graph_set_intermediate_dtype(gg.g, CUDNNFE_DTYPE_FLOAT));
  const int64_t d[] = {2, 3};
  int64_t a, b, t, out;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "a", CUDNNFE_DTYPE_NOT_SET, 2, d, nullptr, &a));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "b", CUDNNFE_DTYPE_NOT_SET, 2, d, nullptr, &b));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, a, b, 0, nullptr, &t));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_RELU_FWD, t, 0, 0, nullptr, &out));
  REQUIRE_OK(cudnnfe_tensor_set_output(gg.g, out, 1));
  REQUIRE_OK(cudnnfe_graph_validate(gg.g));
  cudnnfe_dtype_t da, dt, dout;
  cudnnfe_tensor_get_dtype(gg.g, a, &da);
  cudnnfe_tensor_get_dtype(gg.g, t, &dt);
  cudnnfe_tensor_get_dtype(gg.g, out, &dout);
  CHECK(da == CUDNNFE_DTYPE_HALF);
  CHECK(dt == CUDNNFE_DTYPE_FLOAT);
  CHECK(dout == CUDNNFE_DTYPE_HALF);
}

// ABI.md section 5: an options struct from an older header (smaller
// struct_size) is accepted, and the fields it lacks keep their defaults.
TEST(old_sized_options_struct_is_accepted) {
  GraphGuard gg;
  const int64_t qd[] = {1, 2, 16, 8};
  int64_t q, k, v, bias, o, stats;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "q", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &q));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "k", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &k));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "v", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &v));
  const int64_t bd[] = {1, 1, 16, 16};
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "bias", CUDNNFE_DTYPE_HALF, 4, bd, nullptr, &bias));
  cudnnfe_sdpa_options_t so;
  cudnnfe_sdpa_options_init(&so);
  so.causal_mask = 1;
  so.bias = bias;  // past the "old" size: must be ignored, not read
  so.struct_size = offsetof(cudnnfe_sdpa_options_t, bias);
  REQUIRE_OK(cudnnfe_graph_add_sdpa(gg.g, q, k, v, &so, &o, &stats));
  size_t tensors = 0;
  cudnnfe_graph_get_tensor_count(gg.g, &tensors);
  CHECK(tensors == 5);  // q, k, v, bias, O
  // The bias was not wired in: the graph's only op reads 3 tensors, and
  // the unread bias input takes no buffer (it is no bound tensor).
  cudnnfe_tensor_set_output(gg.g, o, 1);
  CHECK_OK(cudnnfe_graph_validate(gg.g));
  cudnnfe_build_options_t cpu;
  cudnnfe_build_options_init(&cpu);
  cpu.target = CUDNNFE_TARGET_CPU_REFERENCE;
  CHECK_OK(cudnnfe_graph_build(gg.g, nullptr, &cpu));
  int64_t bound[8] = {};
  size_t count = 0;
  CHECK_OK(cudnnfe_graph_get_bound_uids(gg.g, bound, 8, &count));
  CHECK(count == 4 && std::count(bound, bound + count, bias) == 0);
}

// An init function writes only the struct its caller's header declares: an
// older caller's smaller struct is not overrun, and a newer caller's larger
// struct keeps its size, so that passing it is refused clearly.
TEST(init_functions_write_only_the_callers_struct) {
  unsigned char buffer[sizeof(cudnnfe_conv_options_t) + 64];
  std::memset(buffer, 0xAB, sizeof(buffer));
  const size_t old_size = offsetof(cudnnfe_conv_options_t, dilation);
  cudnnfe_conv_options_init_sized(reinterpret_cast<cudnnfe_conv_options_t *>(buffer), old_size);
  cudnnfe_conv_options_t seen;
  std::memcpy(&seen, buffer, old_size);
  CHECK(seen.struct_size == old_size);
  CHECK(seen.stride[0] == 1 && seen.stride[2] == 1);
  bool untouched = true;
  for (size_t i = old_size; i < sizeof(buffer); ++i) untouched = untouched && buffer[i] == 0xAB;
  CHECK_MSG(untouched, "the init function wrote past the caller's %zu bytes", old_size);

  // A caller whose struct is larger than this library's (a newer header).
  const size_t newer = sizeof(cudnnfe_conv_options_t) + 16;
  std::memset(buffer, 0xAB, sizeof(buffer));
  cudnnfe_conv_options_init_sized(reinterpret_cast<cudnnfe_conv_options_t *>(buffer), newer);
  std::memcpy(&seen, buffer, sizeof(seen));
  CHECK(seen.struct_size == newer);
  CHECK(buffer[sizeof(cudnnfe_conv_options_t) + 8] == 0);      // tail zeroed
  CHECK(buffer[sizeof(cudnnfe_conv_options_t) + 16] == 0xAB);  // and no further
  GraphGuard gg;
  const int64_t xd[] = {1, 4, 8, 8}, wd[] = {4, 4, 3, 3};
  int64_t x, w, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 4, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "w", CUDNNFE_DTYPE_FLOAT, 4, wd, nullptr, &w));
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(gg.g, x, w,
                                           reinterpret_cast<cudnnfe_conv_options_t *>(buffer), &y),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "struct_size is", "this library accepts");
  // The C macro passes sizeof for the caller.
  cudnnfe_conv_options_t o;
  o.struct_size = 0;
  cudnnfe_conv_options_init(&o);
  CHECK(o.struct_size == sizeof(o));
}

TEST(scalar_needs_no_binding) {
  GraphGuard gg;
  const int64_t d[] = {3};
  int64_t x, s, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_scalar(gg.g, "two", CUDNNFE_DTYPE_FLOAT, 2.0, &s));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, x, s, 0, nullptr, &y));
  int32_t bound = -1;
  CHECK_OK(cudnnfe_tensor_is_bound(gg.g, s, &bound));
  CHECK(bound == 0);
}

TEST(destroy_null_is_noop) {
  CHECK_OK(cudnnfe_graph_destroy(nullptr));
  CHECK_OK(cudnnfe_handle_destroy(nullptr));
}

TEST(norm_shapes_and_phases) {
  GraphGuard gg;
  const int64_t xd[] = {32, 4096, 1, 1}, pd[] = {1, 4096, 1, 1};
  int64_t x, scale, bias, y, mean, inv_var, y2, inv_rms, y3, none = 77;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_BFLOAT16, 4, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "scale", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &scale));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "bias", CUDNNFE_DTYPE_FLOAT, 4, pd, nullptr, &bias));
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  CHECK(o.epsilon == 1e-5 && o.phase == CUDNNFE_NORM_PHASE_TRAINING);
  REQUIRE_OK(cudnnfe_graph_add_layernorm(gg.g, x, scale, bias, &o, &y, &mean, &inv_var));
  CHECK((shape_of(gg.g, y, nullptr) == std::vector<int64_t>{32, 4096, 1, 1}));
  CHECK((shape_of(gg.g, mean, nullptr) == std::vector<int64_t>{32, 1, 1, 1}));
  cudnnfe_dtype_t dt;
  cudnnfe_tensor_get_dtype(gg.g, inv_var, &dt);
  CHECK(dt == CUDNNFE_DTYPE_FLOAT);
  REQUIRE_OK(cudnnfe_graph_add_rmsnorm(gg.g, x, scale, 0, &o, &y2, &inv_rms));
  CHECK((shape_of(gg.g, inv_rms, nullptr) == std::vector<int64_t>{32, 1, 1, 1}));
  o.phase = CUDNNFE_NORM_PHASE_INFERENCE;
  REQUIRE_OK(cudnnfe_graph_add_rmsnorm(gg.g, x, scale, bias, &o, &y3, &none));
  CHECK(none == 0);  // no statistics in inference
}

TEST(norm_backward_and_softmax_shapes) {
  GraphGuard gg;
  const int64_t xd[] = {8, 64}, pd[] = {1, 64}, sd[] = {8, 1};
  int64_t dy, x, scale, mean, inv_var, dx, dscale, dbias, rdx, rds, rdb = 5;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "dy", CUDNNFE_DTYPE_FLOAT, 2, xd, nullptr, &dy));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 2, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "scale", CUDNNFE_DTYPE_FLOAT, 2, pd, nullptr, &scale));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "mean", CUDNNFE_DTYPE_FLOAT, 2, sd, nullptr, &mean));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "iv", CUDNNFE_DTYPE_FLOAT, 2, sd, nullptr, &inv_var));
  REQUIRE_OK(cudnnfe_graph_add_layernorm_backward(gg.g, dy, x, scale, mean, inv_var, nullptr, &dx,
                                                  &dscale, &dbias));
  CHECK((shape_of(gg.g, dx, nullptr) == std::vector<int64_t>{8, 64}));
  CHECK((shape_of(gg.g, dscale, nullptr) == std::vector<int64_t>{1, 64}));
  CHECK((shape_of(gg.g, dbias, nullptr) == std::vector<int64_t>{1, 64}));
  REQUIRE_OK(cudnnfe_graph_add_rmsnorm_backward(gg.g, dy, x, scale, inv_var, nullptr, &rdx, &rds,
                                                nullptr));
  (void)rdb;
  int64_t y, stats;
  cudnnfe_softmax_options_t so;
  cudnnfe_softmax_options_init(&so);
  so.generate_stats = 1;
  REQUIRE_OK(cudnnfe_graph_add_softmax(gg.g, x, &so, &y, &stats));
  CHECK((shape_of(gg.g, stats, nullptr) == std::vector<int64_t>{8, 1}));
}

TEST(sdpa_backward_shapes) {
  GraphGuard gg;
  const int64_t qd[] = {1, 8, 64, 32}, kd[] = {1, 2, 96, 32}, sd[] = {1, 8, 64, 1};
  const int64_t ks[] = {96 * 2 * 32, 32, 2 * 32, 1};  // BSHD storage
  int64_t q, k, v, o, d_o, stats, dq, dk, dv;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "q", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &q));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "k", CUDNNFE_DTYPE_HALF, 4, kd, ks, &k));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "v", CUDNNFE_DTYPE_HALF, 4, kd, nullptr, &v));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "o", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &o));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "dO", CUDNNFE_DTYPE_HALF, 4, qd, nullptr, &d_o));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "stats", CUDNNFE_DTYPE_FLOAT, 4, sd, nullptr, &stats));
  cudnnfe_sdpa_backward_options_t bo;
  cudnnfe_sdpa_backward_options_init(&bo);
  bo.causal_mask = 1;
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(gg.g, q, k, v, o, d_o, stats, &bo, &dq, &dk, &dv));
  std::vector<int64_t> strides;
  CHECK((shape_of(gg.g, dk, &strides) == std::vector<int64_t>{1, 2, 96, 32}));
  CHECK((strides == std::vector<int64_t>{96 * 2 * 32, 32, 2 * 32, 1}));
  CHECK((shape_of(gg.g, dq, nullptr) == std::vector<int64_t>{1, 8, 64, 32}));
  cudnnfe_tensor_set_output(gg.g, dq, 1);
  cudnnfe_tensor_set_output(gg.g, dk, 1);
  cudnnfe_tensor_set_output(gg.g, dv, 1);
  CHECK_OK(cudnnfe_graph_validate(gg.g));
}

TEST(scalar_takes_operand_rank) {
  GraphGuard gg;
  CHECK_OK(cudnnfe_graph_set_name(gg.g, "scaled"));
  const char *name = nullptr;
  CHECK_OK(cudnnfe_graph_get_name(gg.g, &name));
  CHECK(std::string(name) == "scaled");
  const int64_t d[] = {2, 3, 4}, d2[] = {5, 6};
  int64_t x, x2, s, y, y2;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 3, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_scalar(gg.g, "half", CUDNNFE_DTYPE_FLOAT, 0.5, &s));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, x, s, 0, nullptr, &y));
  CHECK((shape_of(gg.g, s, nullptr) == std::vector<int64_t>{1, 1, 1}));
  CHECK((shape_of(gg.g, y, nullptr) == std::vector<int64_t>{2, 3, 4}));
  cudnnfe_tensor_set_output(gg.g, y, 1);
  CHECK_OK(cudnnfe_graph_validate(gg.g));
  // The same scalar in an op of another rank is refused at validation.
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x2", CUDNNFE_DTYPE_FLOAT, 2, d2, nullptr, &x2));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, x2, s, 0, nullptr, &y2));
  cudnnfe_tensor_set_output(gg.g, y2, 1);
  CHECK_FAILS(cudnnfe_graph_validate(gg.g), CUDNNFE_STATUS_INVALID_GRAPH, "scalar \"half\"",
              "different ranks");
}

TEST(tensor_kinds_and_copied_messages) {
  GraphGuard gg;
  const int64_t d[] = {3};
  int64_t x, s, t, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_scalar(gg.g, "s", CUDNNFE_DTYPE_FLOAT, 2.0, &s));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, x, s, 0, nullptr, &t));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_EXP, t, 0, 0, nullptr, &y));
  REQUIRE_OK(cudnnfe_tensor_set_output(gg.g, y, 1));
  cudnnfe_tensor_kind_t kinds[4];
  const int64_t uids[4] = {x, s, t, y};
  for (int i = 0; i < 4; ++i) CHECK_OK(cudnnfe_tensor_get_kind(gg.g, uids[i], &kinds[i]));
  CHECK(kinds[0] == CUDNNFE_TENSOR_KIND_INPUT && kinds[1] == CUDNNFE_TENSOR_KIND_SCALAR);
  CHECK(kinds[2] == CUDNNFE_TENSOR_KIND_VIRTUAL && kinds[3] == CUDNNFE_TENSOR_KIND_OUTPUT);
  size_t size = 99;
  CHECK_OK(cudnnfe_graph_copy_last_error(gg.g, nullptr, 0, &size));
  CHECK(size == 0);
  CHECK(cudnnfe_tensor_set_output(gg.g, 4242, 1) == CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK_OK(cudnnfe_graph_copy_last_error(gg.g, nullptr, 0, &size));
  std::string message(size + 1, '\0');
  CHECK_FAILS(cudnnfe_graph_copy_last_error(gg.g, message.data(), size, &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "too small");
  CHECK_OK(cudnnfe_graph_copy_last_error(gg.g, message.data(), message.size(), &size));
  CHECK(message.find("UID 4242") != std::string::npos);
}

TEST(pass_by_value_inputs) {
  GraphGuard gg;
  const int64_t one[] = {1, 1}, many[] = {2, 3};
  int64_t s, x, y;
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "s", CUDNNFE_DTYPE_FLOAT, 2, one, nullptr, &s));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "x", CUDNNFE_DTYPE_FLOAT, 2, many, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(gg.g, CUDNNFE_POINTWISE_MUL, x, s, 0, nullptr, &y));
  int32_t flag = -1;
  CHECK_OK(cudnnfe_tensor_get_pass_by_value(gg.g, s, &flag));
  CHECK(flag == 0);
  CHECK_OK(cudnnfe_tensor_set_pass_by_value(gg.g, s, 1));
  CHECK_OK(cudnnfe_tensor_get_pass_by_value(gg.g, s, &flag));
  CHECK(flag == 1);
  // It stays a bound graph input: its host pointer is bound at execute.
  cudnnfe_tensor_kind_t kind = 0;
  int32_t bound = 0;
  CHECK_OK(cudnnfe_tensor_get_kind(gg.g, s, &kind));
  CHECK_OK(cudnnfe_tensor_is_bound(gg.g, s, &bound));
  CHECK(kind == CUDNNFE_TENSOR_KIND_INPUT && bound == 1);
  CHECK_FAILS(cudnnfe_tensor_set_pass_by_value(gg.g, x, 1), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "6 elements");
  CHECK_FAILS(cudnnfe_tensor_set_pass_by_value(gg.g, y, 1), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "only graph inputs");
  CHECK_OK(cudnnfe_tensor_set_pass_by_value(gg.g, y, 0));
  CHECK_FAILS(cudnnfe_tensor_get_pass_by_value(gg.g, s, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "pass_by_value");
  // Graph JSON keeps the flag.
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(gg.g, nullptr, 0, &size));
  std::vector<char> json(size);
  REQUIRE_OK(cudnnfe_graph_serialize(gg.g, json.data(), json.size(), &size));
  CHECK(std::string(json.data(), size).find("\"pass_by_value\": true") != std::string::npos);
  GraphGuard loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize(loaded.g, json.data(), size));
  int64_t s2 = 0;
  REQUIRE_OK(cudnnfe_graph_find_tensor(loaded.g, "s", &s2));
  CHECK_OK(cudnnfe_tensor_get_pass_by_value(loaded.g, s2, &flag));
  CHECK(flag == 1);
}

// The init functions write the defaults the header documents (they come
// from the op schema's field lists, src/graph/op_schema.cpp).
TEST(options_init_writes_documented_defaults) {
  cudnnfe_pointwise_options_t p;
  cudnnfe_pointwise_options_init(&p);
  CHECK(p.struct_size == sizeof(p) && p.name == nullptr);
  CHECK(p.relu_lower_clip == 0 && p.relu_upper_clip == 3.4e38 && p.relu_lower_clip_slope == 0);
  CHECK(p.elu_alpha == 1 && p.softplus_beta == 1 && p.swish_beta == 1 && p.axis == 0);
  cudnnfe_reduction_options_t r;
  cudnnfe_reduction_options_init(&r);
  CHECK(r.axes_mask == 0 && r.deterministic == 0);
  cudnnfe_resample_options_t rs;
  cudnnfe_resample_options_init(&rs);
  CHECK(rs.mode == CUDNNFE_RESAMPLE_MAXPOOL && rs.padding_mode == CUDNNFE_PADDING_AUTO);
  CHECK(rs.spatial_dims == 0 && rs.generate_index == 0);
  for (int i = 0; i < 3; ++i) {
    CHECK(rs.window[i] == 2 && rs.stride[i] == 2 && rs.scale[i] == 2);
    CHECK(rs.pre_padding[i] == 0 && rs.post_padding[i] == 0);
  }
  cudnnfe_rng_options_t rng;
  cudnnfe_rng_options_init(&rng);
  CHECK(rng.distribution == CUDNNFE_RNG_BERNOULLI && rng.bernoulli_probability == 0.5);
  CHECK(rng.uniform_min == 0 && rng.uniform_max == 1);
  CHECK(rng.normal_mean == 0 && rng.normal_stddev == 1 && rng.seed == 0);
  cudnnfe_softmax_options_t sm;
  cudnnfe_softmax_options_init(&sm);
  CHECK(sm.generate_stats == 0);
  cudnnfe_block_scale_options_t b;
  cudnnfe_block_scale_options_init(&b);
  CHECK(b.block_size == 32 && b.axis == -1 && b.transpose == 0);
  CHECK(b.y_dtype == CUDNNFE_DTYPE_FP8_E4M3);
  cudnnfe_sdpa_fp8_options_t f;
  cudnnfe_sdpa_fp8_options_init(&f);
  CHECK(f.attn_scale == 0 && f.generate_stats == 0 && f.causal_mask == 0);
  cudnnfe_sdpa_fp8_backward_options_t fb;
  cudnnfe_sdpa_fp8_backward_options_init(&fb);
  CHECK(fb.attn_scale == 0 && fb.causal_mask == 0);
}

// An older caller's smaller struct: init writes only its bytes.
TEST(options_init_stops_at_the_callers_size) {
  cudnnfe_resample_options_t rs;
  std::memset(&rs, 0x5a, sizeof(rs));
  cudnnfe_resample_options_init_sized(&rs, offsetof(cudnnfe_resample_options_t, window));
  CHECK(rs.mode == CUDNNFE_RESAMPLE_MAXPOOL && rs.spatial_dims == 0);
  unsigned char untouched;
  std::memcpy(&untouched, &rs.window, 1);
  CHECK(untouched == 0x5a);
}

// cudnnfe_graph_set_next_output: the next op writes a named output into a
// tensor the caller made, which keeps its UID, name, dims and strides and
// holds the result; a port the op lacks, or does not make, is refused naming
// the op and its outputs; a request is consumed by the next add either way.
TEST(next_output_goes_into_a_tensor_the_caller_made) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  REQUIRE_OK(cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT));
  const int64_t d[2] = {2, 3}, s[2] = {1, 2};  // column-major: the caller's layout
  int64_t a = 0, b = 0, out = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 2, d, nullptr, &a));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 2, d, nullptr, &b));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "sum", CUDNNFE_DTYPE_FLOAT, 2, d, s, &out));

  // A port the op does not have: refused, naming it and the op's outputs.
  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "y", out));
  int64_t y = 0;
  CHECK_FAILS(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, a, b, 0, nullptr, &y),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "has no output \"y\"", "its outputs: out");
  CHECK_FAILS(cudnnfe_graph_set_next_output(g, "out", 987654), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "987654");
  CHECK_FAILS(cudnnfe_graph_set_next_output(g, nullptr, out), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "port");

  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "out", out));
  CHECK_FAILS(cudnnfe_graph_set_next_output(g, "out", a), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "already set");
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, a, b, 0, nullptr, &y));
  CHECK(y == out);
  const char *name = nullptr;
  REQUIRE_OK(cudnnfe_tensor_get_name(g, y, &name));
  CHECK(std::strcmp(name, "sum") == 0);
  std::vector<int64_t> strides;
  CHECK(shape_of(g, y, &strides) == std::vector<int64_t>({2, 3}));
  CHECK(strides == std::vector<int64_t>({1, 2}));

  // Consumed: the next op makes its own output again.
  int64_t twice = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, y, y, 0, nullptr, &twice));
  CHECK(twice != out);
  REQUIRE_OK(cudnnfe_tensor_set_output(g, twice, 1));
  // A tensor an op already reads cannot become an output.
  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "out", a));
  int64_t z = 0;
  CHECK_FAILS(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, b, b, 0, nullptr, &z),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "\"a\" is read by");

  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  float av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {10, 20, 30, 40, 50, 60}, sum[6] = {}, tw[6] = {};
  const cudnnfe_binding_t bind[4] = {{a, av}, {b, bv}, {out, sum}, {twice, tw}};
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  const cudnnfe_status_t ran = cudnnfe_graph_execute(g, h, bind, 4, nullptr, 0, nullptr);
  cudnnfe_handle_destroy(h);
  REQUIRE_OK(ran);
  // sum (and twice, which takes its first operand's layout) is column-major:
  // element (i, j) at j * 2 + i; a and b are row-major, at i * 3 + j.
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      CHECK(sum[j * 2 + i] == av[i * 3 + j] + bv[i * 3 + j]);
      CHECK(tw[j * 2 + i] == 2 * (av[i * 3 + j] + bv[i * 3 + j]));
    }
}

TEST(scalar_value_reads_back) {
  GraphGuard gg;
  int64_t s = 0, t = 0;
  const int64_t d[1] = {2};
  REQUIRE_OK(cudnnfe_graph_add_scalar(gg.g, "half", CUDNNFE_DTYPE_FLOAT, 0.5, &s));
  REQUIRE_OK(cudnnfe_graph_add_tensor(gg.g, "t", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &t));
  double v = 0;
  REQUIRE_OK(cudnnfe_tensor_get_scalar_value(gg.g, s, &v));
  CHECK(v == 0.5);
  CHECK_FAILS(cudnnfe_tensor_get_scalar_value(gg.g, t, &v), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "\"t\"", "not a scalar");
  CHECK_FAILS(cudnnfe_tensor_get_scalar_value(gg.g, s, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "value");
}

namespace {

// Runs graph `g` on the CPU reference with `bindings`.
cudnnfe_status_t run_on_cpu(cudnnfe_graph_t *g, const std::vector<cudnnfe_binding_t> &bindings) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_status_t s = cudnnfe_graph_build(g, nullptr, &o);
  if (s != CUDNNFE_STATUS_OK) return s;
  cudnnfe_handle_t *h = nullptr;
  s = cudnnfe_handle_create(&h, -1);
  if (s != CUDNNFE_STATUS_OK) return s;
  s = cudnnfe_graph_execute(g, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
  cudnnfe_handle_destroy(h);
  return s;
}

}  // namespace

// cudnnfe_graph_set_prune_unread_inputs: inputs no op reads leave the graph
// at validation (cudnn-frontend's graph holds only the tensors its ops use);
// their bindings are ignored, their UIDs are not reused, and a call naming
// one says that it left the graph.
TEST(unread_inputs_leave_a_pruning_graph_at_validation) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  const int64_t d[2] = {2, 3}, one[1] = {1}, ones[2] = {1, 1};
  int64_t x = 0, unused = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 2, d, nullptr, &x));
  REQUIRE_OK(
      cudnnfe_graph_add_tensor(g, "epsilon_bwd", CUDNNFE_DTYPE_FLOAT, 1, one, nullptr, &unused));
  REQUIRE_OK(cudnnfe_tensor_set_pass_by_value(g, unused, 1));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &y));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
  CHECK_FAILS(cudnnfe_graph_set_prune_unread_inputs(g, 2), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "prune_unread_inputs is 2", "expected 0 or 1");
  CHECK_FAILS(cudnnfe_graph_set_prune_unread_inputs(nullptr, 1), CUDNNFE_STATUS_INVALID_ARGUMENT);
  REQUIRE_OK(cudnnfe_graph_set_prune_unread_inputs(g, 1));
  size_t count = 99;
  REQUIRE_OK(cudnnfe_graph_get_pruned_uids(g, nullptr, 0, &count));
  CHECK(count == 0);  // nothing leaves before validation
  REQUIRE_OK(cudnnfe_graph_get_tensor_count(g, &count));
  CHECK(count == 3);

  REQUIRE_OK(cudnnfe_graph_validate(g));
  REQUIRE_OK(cudnnfe_graph_get_tensor_count(g, &count));
  CHECK(count == 2);
  int64_t pruned[2] = {0, 0};
  CHECK_FAILS(cudnnfe_graph_get_pruned_uids(g, pruned, 0, &count), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "capacity 0 is too small for 1");
  REQUIRE_OK(cudnnfe_graph_get_pruned_uids(g, pruned, 2, &count));
  CHECK(count == 1 && pruned[0] == unused);
  // A call naming it says that it left, naming it, the node and the rule.
  cudnnfe_tensor_kind_t kind = 0;
  CHECK_FAILS(cudnnfe_tensor_get_kind(g, unused, &kind), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "\"epsilon_bwd\" left the graph at validation", "no op read it");
  int64_t z = 0;
  CHECK_FAILS(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, y, unused, 0, nullptr, &z),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "pointwise \"", "input in1", "\"epsilon_bwd\"",
              "cudnnfe_graph_set_prune_unread_inputs");
  // Its UID is not given to a new tensor.
  int64_t fresh = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "fresh", CUDNNFE_DTYPE_FLOAT, 2, ones, nullptr, &fresh));
  CHECK(fresh != unused && fresh != x && fresh != y);
  REQUIRE_OK(cudnnfe_tensor_set_name(g, fresh, "epsilon_bwd"));  // its name is free again
  int64_t twice = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, y, fresh, 0, nullptr, &twice));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, twice, 1));

  // Its binding is accepted and ignored at execute.
  float xv[6] = {-1, 2, -3, 4, -5, 6}, ev = 7, fv = 1, yv[6] = {}, tv[6] = {};
  REQUIRE_OK(run_on_cpu(g, {{x, xv}, {unused, &ev}, {fresh, &fv}, {y, yv}, {twice, tv}}));
  for (int i = 0; i < 6; ++i) {
    CHECK(yv[i] == std::max(xv[i], 0.0f));
    CHECK(tv[i] == yv[i] + 1);
  }
  CHECK_FAILS(cudnnfe_graph_set_prune_unread_inputs(g, 0), CUDNNFE_STATUS_WRONG_STATE);
}

// Without the setting (the default), an unread input stays and takes no buffer.
TEST(unread_inputs_stay_by_default) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  const int64_t d[1] = {4};
  int64_t x = 0, unused = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "unused", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &unused));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_NEG, x, 0, 0, nullptr, &y));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
  REQUIRE_OK(cudnnfe_graph_validate(g));
  size_t count = 0;
  REQUIRE_OK(cudnnfe_graph_get_tensor_count(g, &count));
  CHECK(count == 3);
  REQUIRE_OK(cudnnfe_graph_get_pruned_uids(g, nullptr, 0, &count));
  CHECK(count == 0);
}

// A scalar given as a norm's epsilon_tensor is folded into the epsilon the
// op takes when the graph is validated: the op reads no tensor for it.
TEST(a_scalar_epsilon_is_folded_at_validation) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  REQUIRE_OK(cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT));
  const int64_t xd[2] = {2, 4}, pd[2] = {1, 4};
  int64_t x = 0, scale = 0, bias = 0, eps = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 2, xd, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 2, pd, nullptr, &scale));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_FLOAT, 2, pd, nullptr, &bias));
  REQUIRE_OK(cudnnfe_graph_add_scalar(g, "eps", CUDNNFE_DTYPE_FLOAT, 0.5, &eps));
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.phase = CUDNNFE_NORM_PHASE_INFERENCE;
  o.epsilon_tensor = eps;
  REQUIRE_OK(cudnnfe_graph_add_layernorm(g, x, scale, bias, &o, &y, nullptr, nullptr));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
  size_t before = 0, after = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g, nullptr, 0, &before));
  REQUIRE_OK(cudnnfe_graph_validate(g));
  REQUIRE_OK(cudnnfe_graph_serialize(g, nullptr, 0, &after));
  std::vector<char> json(after);
  REQUIRE_OK(cudnnfe_graph_serialize(g, json.data(), after, &after));
  const std::string text(json.begin(), json.end());
  CHECK(text.find("\"epsilon\": 0.5") != std::string::npos ||
        text.find("\"epsilon\":0.5") != std::string::npos);
  float xv[8] = {1, 2, 3, 4, -2, 0, 2, 4}, sv[4] = {1, 1, 1, 1}, bv[4] = {}, yv[8] = {};
  REQUIRE_OK(run_on_cpu(g, {{x, xv}, {scale, sv}, {bias, bv}, {y, yv}}));
  for (int r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < 4; ++c) mean += xv[r * 4 + c] / 4.0;
    for (int c = 0; c < 4; ++c) var += (xv[r * 4 + c] - mean) * (xv[r * 4 + c] - mean) / 4.0;
    for (int c = 0; c < 4; ++c)
      CHECK(std::fabs(yv[r * 4 + c] - (xv[r * 4 + c] - mean) / std::sqrt(var + 0.5)) < 1e-5);
  }
}

// Dims and strides may change until the graph is built, also on a tensor an
// op already reads: validation infers the op's output again.
TEST(dims_set_after_an_op_read_the_tensor_are_used_at_validation) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  REQUIRE_OK(cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT));
  const int64_t d[2] = {2, 3}, bigger[3] = {4, 5, 6}, s[3] = {1, 4, 20};
  int64_t x = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 2, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ABS, x, 0, 0, nullptr, &y));
  REQUIRE_OK(cudnnfe_tensor_set_output(g, y, 1));
  REQUIRE_OK(cudnnfe_tensor_set_dims(g, x, 3, bigger));
  REQUIRE_OK(cudnnfe_tensor_set_strides(g, x, 3, s));
  REQUIRE_OK(cudnnfe_graph_validate(g));
  std::vector<int64_t> strides;
  CHECK(shape_of(g, x, &strides) == std::vector<int64_t>({4, 5, 6}));
  CHECK(strides == std::vector<int64_t>({1, 4, 20}));
  CHECK(shape_of(g, y, nullptr) == std::vector<int64_t>({4, 5, 6}));
  // Bad shapes are refused naming the tensor and the rule.
  const int64_t zero[2] = {2, 0};
  CHECK_FAILS(cudnnfe_tensor_set_dims(g, x, 2, zero), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "tensor \"x\"", "dims must be positive");
  CHECK_FAILS(cudnnfe_tensor_set_strides(g, x, 2, d), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "tensor \"x\"", "2 strides for a tensor of 3 dims");
}

// The options that name a caller's tensor as an output are set_next_output
// requests: one given twice (an option and a request) is refused naming the
// port, and the failed add consumes every request.
TEST(option_outputs_are_next_output_requests) {
  GraphGuard gg;
  cudnnfe_graph_t *g = gg.g;
  REQUIRE_OK(cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_FLOAT));
  const int64_t qd[4] = {1, 2, 4, 8}, sd[4] = {1, 2, 4, 1}, hd[4] = {1, 2, 1, 1};
  int64_t q = 0, stats = 0, sink = 0, ds1 = 0, ds2 = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "q", CUDNNFE_DTYPE_FLOAT, 4, qd, nullptr, &q));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "stats", CUDNNFE_DTYPE_FLOAT, 4, sd, nullptr, &stats));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "sink", CUDNNFE_DTYPE_FLOAT, 4, hd, nullptr, &sink));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "dsink1", CUDNNFE_DTYPE_FLOAT, 4, hd, nullptr, &ds1));
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "dsink2", CUDNNFE_DTYPE_FLOAT, 4, hd, nullptr, &ds2));
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.sink_token = sink;
  o.dsink_token = ds2;
  int64_t dq = 0, dk = 0, dv = 0;
  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "dSink_token", ds1));
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(g, q, q, q, q, q, stats, &o, &dq, &dk, &dv),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "dSink_token", "already set");
  // Consumed: the same call with the option alone adds the node, writing
  // the sink's gradient into dsink2.
  REQUIRE_OK(cudnnfe_graph_add_sdpa_backward(g, q, q, q, q, q, stats, &o, &dq, &dk, &dv));
  cudnnfe_tensor_kind_t kind = 0;
  REQUIRE_OK(cudnnfe_tensor_get_kind(g, ds2, &kind));
  CHECK(kind == CUDNNFE_TENSOR_KIND_OUTPUT);
  REQUIRE_OK(cudnnfe_tensor_get_kind(g, ds1, &kind));
  CHECK(kind == CUDNNFE_TENSOR_KIND_INPUT);
  // A request for an output the op does not make as configured: dBias needs
  // a bias, named with the op and the rule.
  int64_t db = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "db", CUDNNFE_DTYPE_FLOAT, 4, sd, nullptr, &db));
  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "dBias", db));
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "bwd2";
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(g, q, q, q, q, q, stats, &o, &dq, &dk, &dv),
              CUDNNFE_STATUS_INVALID_GRAPH, "sdpa_backward \"bwd2\"");
  // An early failure (a NULL output pointer) consumes requests too.
  REQUIRE_OK(cudnnfe_graph_set_next_output(g, "dBias", db));
  CHECK_FAILS(cudnnfe_graph_add_sdpa_backward(g, q, q, q, q, q, stats, &o, nullptr, &dk, &dv),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "dq");
  int64_t neg = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_NEG, q, 0, 0, nullptr, &neg));
  CHECK(neg != db);
}

// cudnnfe_attention_common_t: one struct of the shared attention options,
// copied into each option set; the sets keep their other fields.
TEST(attention_common_options_copy_into_each_set) {
  cudnnfe_attention_common_t c;
  cudnnfe_attention_common_init(&c);
  CHECK(c.struct_size == sizeof(c));
  CHECK(c.window_left == -1 && c.window_right == -1);
  CHECK(c.diagonal_alignment == CUDNNFE_DIAGONAL_TOP_LEFT);
  c.attn_scale = 0.25;
  c.causal_mask = 1;
  c.window_left = 8;
  c.padding_mask = 1;
  c.seq_len_q = 11;
  c.seq_len_kv = 12;
  c.dropout_probability = 0.1;
  c.dropout_seed = 13;
  c.dropout_offset = 14;

  cudnnfe_sdpa_options_t f;
  cudnnfe_sdpa_options_init(&f);
  f.generate_stats = 1;
  REQUIRE_OK(cudnnfe_sdpa_options_set_common(&f, &c));
  CHECK(f.attn_scale == 0.25 && f.causal_mask == 1 && f.window_left == 8);
  CHECK(f.window_right == -1 && f.padding_mask == 1 && f.seq_len_q == 11 && f.seq_len_kv == 12);
  CHECK(f.dropout_probability == 0.1 && f.dropout_seed == 13 && f.dropout_offset == 14);
  CHECK(f.generate_stats == 1);  // not a shared field: left as it was

  cudnnfe_sdpa_backward_options_t b;
  cudnnfe_sdpa_backward_options_init(&b);
  REQUIRE_OK(cudnnfe_sdpa_backward_options_set_common(&b, &c));
  CHECK(b.attn_scale == 0.25 && b.causal_mask == 1 && b.window_left == 8 && b.seq_len_kv == 12);
  CHECK(b.dropout_seed == 13 && b.dropout_offset == 14);

  cudnnfe_sdpa_fp8_options_t f8;
  cudnnfe_sdpa_fp8_options_init(&f8);
  REQUIRE_OK(cudnnfe_sdpa_fp8_options_set_common(&f8, &c));
  CHECK(f8.attn_scale == 0.25 && f8.window_left == 8 && f8.dropout_seed == 13);

  // The FP8 backward has no ALiBi: refused, and nothing is written.
  cudnnfe_sdpa_fp8_backward_options_t b8;
  cudnnfe_sdpa_fp8_backward_options_init(&b8);
  c.alibi_mask = 1;
  CHECK_FAILS(cudnnfe_sdpa_fp8_backward_options_set_common(&b8, &c),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "sdpa_fp8_backward options", "alibi_mask");
  CHECK(b8.attn_scale == 0.0 && b8.window_left == -1);
  c.alibi_mask = 0;
  REQUIRE_OK(cudnnfe_sdpa_fp8_backward_options_set_common(&b8, &c));
  CHECK(b8.attn_scale == 0.25 && b8.padding_mask == 1 && b8.seq_len_q == 11);

  // NULL common: its defaults.
  REQUIRE_OK(cudnnfe_sdpa_options_set_common(&f, nullptr));
  CHECK(f.attn_scale == 0.0 && f.causal_mask == 0 && f.window_left == -1);
  // Bad arguments are refused naming the struct and the rule.
  CHECK_FAILS(cudnnfe_sdpa_options_set_common(nullptr, &c), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "sdpa options is NULL");
  f.struct_size = offsetof(cudnnfe_sdpa_options_t, attn_scale_tensor);  // a first-release struct
  CHECK_FAILS(cudnnfe_sdpa_options_set_common(&f, &c), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "sdpa options: struct_size is", "call its init function first");
  c.struct_size = 3;
  CHECK_FAILS(cudnnfe_sdpa_backward_options_set_common(&b, &c), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "attention common options: struct_size is 3");
}
