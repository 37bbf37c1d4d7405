// Shapes, strides, padding and UIDs at the edges of int64 are refused when
// declared, naming the tensor and the rule, never wrapped or overrun; output
// strides that alias are refused; every accepted graph round-trips.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness.h"

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
const cudnnfe_status_t ARG = CUDNNFE_STATUS_INVALID_ARGUMENT;
const cudnnfe_status_t GRAPH = CUDNNFE_STATUS_INVALID_GRAPH;

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  Graph() { cudnnfe_graph_create(&g); }
  ~Graph() { cudnnfe_graph_destroy(g); }
  cudnnfe_status_t add(const char *name, std::vector<int64_t> dims, std::vector<int64_t> strides,
                       int64_t *uid) {
    return cudnnfe_graph_add_tensor(g, name, CUDNNFE_DTYPE_FLOAT, static_cast<int32_t>(dims.size()),
                                    dims.data(), strides.empty() ? nullptr : strides.data(), uid);
  }
  int64_t relu(int64_t x) {
    int64_t y = 0;
    CHECK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &y) ==
          CUDNNFE_STATUS_OK);
    return y;
  }
  cudnnfe_status_t build_cpu() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    return cudnnfe_graph_build(g, nullptr, &o);
  }
};

std::string serialize(const cudnnfe_graph_t *g) {
  size_t size = 0;
  CHECK(cudnnfe_graph_serialize(g, nullptr, 0, &size) == CUDNNFE_STATUS_OK);
  std::string text(size, '\0');
  CHECK(cudnnfe_graph_serialize(g, &text[0], text.size(), &size) == CUDNNFE_STATUS_OK);
  return text;
}

std::string serialize_plan(const cudnnfe_graph_t *g) {
  size_t size = 0;
  CHECK(cudnnfe_graph_serialize_plan(g, nullptr, 0, &size) == CUDNNFE_STATUS_OK);
  std::string blob(size, '\0');
  CHECK(cudnnfe_graph_serialize_plan(g, &blob[0], blob.size(), &size) == CUDNNFE_STATUS_OK);
  return blob;
}

}  // namespace

// Issue 13, defect 1: [2^31, 2^31] with strides {0, 0} is a 4-byte buffer
// whose relu intermediate would need 2^64 bytes; it wrapped and was overrun.
TEST(element_count_beyond_limit_is_refused_at_declaration) {
  Graph f;
  int64_t x = 0;
  const int64_t big = int64_t{1} << 31;
  CHECK_FAILS(f.add("x", {big, big}, {0, 0}, &x), ARG, "\"x\"", "2^60 - 1", "elements");
}

// The CPU arena sums every intermediate: eight 2^60-byte ones overflow it.
TEST(cpu_arena_that_overflows_is_out_of_memory_at_build) {
  Graph f;
  int64_t x = 0;
  const int64_t d = int64_t{1} << 29;
  REQUIRE_OK(f.add("x", {d, d}, {0, 0}, &x));
  int64_t t = x;
  for (int i = 0; i < 9; ++i) t = f.relu(t);
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, t, 1));
  CHECK_FAILS(f.build_cpu(), CUDNNFE_STATUS_OUT_OF_MEMORY, "2^63 bytes");
}

// Defect 2: element counts that overflow int64, by any route.
TEST(overflowing_dims_are_refused_everywhere) {
  Graph f;
  int64_t x = 0;
  CHECK_FAILS(f.add("huge", {kMax, 2}, {}, &x), ARG, "\"huge\"", "elements");
  CHECK_FAILS(f.add("square", {int64_t{1} << 32, int64_t{1} << 32}, {}, &x), ARG, "\"square\"");
  CHECK_FAILS(f.add("line", {kMax}, {}, &x), ARG, "\"line\"", "2^60 - 1");
  CHECK_FAILS(f.add("quarter", {int64_t{1} << 62}, {}, &x), ARG, "\"quarter\"");
  CHECK_FAILS(f.add("far", {2}, {kMax}, &x), ARG, "\"far\"", "strides", "offset");
  REQUIRE_OK(f.add("x", {2, 2}, {}, &x));
  const int64_t huge[] = {kMax, 2};
  CHECK_FAILS(cudnnfe_tensor_set_dims(f.g, x, 2, huge), ARG, "\"x\"", "elements");
  const int64_t far[] = {kMax, 1};
  CHECK_FAILS(cudnnfe_tensor_set_strides(f.g, x, 2, far), ARG, "\"x\"", "offset");
  int32_t ndims = 0;
  int64_t dims[2] = {0, 0};
  REQUIRE_OK(cudnnfe_tensor_get_shape(f.g, x, dims, nullptr, 2, &ndims));
  CHECK(dims[0] == 2 && dims[1] == 2);  // a refused setter changes nothing
}

TEST(overflowing_dims_in_graph_json_are_refused) {
  Graph f;
  int64_t x = 0;
  REQUIRE_OK(f.add("x", {4, 3}, {}, &x));
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, f.relu(x), 1));
  std::string text = serialize(f.g);
  // x (UID 1) is the first tensor with dims in the document: [4, 3].
  size_t at = text.find('4', text.find("\"dims\""));
  REQUIRE(at != std::string::npos);
  text.replace(at, 1, "9223372036854775807");
  Graph loaded;
  cudnnfe_status_t s = cudnnfe_graph_deserialize(loaded.g, text.data(), text.size());
  CHECK(s != CUDNNFE_STATUS_OK);
  CHECK(std::strstr(cudnnfe_last_error(), "\"x\""));
  CHECK(std::strstr(cudnnfe_last_error(), "elements"));
}

// Defect 3: padding near INT64_MAX/2 wrapped the output size.
TEST(conv_padding_that_overflows_is_refused) {
  Graph f;
  int64_t x = 0, w = 0, y = 0;
  REQUIRE_OK(f.add("image", {1, 1, 4, 4}, {}, &x));
  REQUIRE_OK(f.add("filter", {1, 1, 3, 3}, {}, &w));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.pre_padding[0] = o.post_padding[0] = kMax / 2;
  CHECK_FAILS(cudnnfe_graph_add_conv_fprop(f.g, x, w, &o, &y), GRAPH, "spatial dim 0",
              "overflows 64 bits");
  std::string message = cudnnfe_last_error();
  CHECK(message.find("-") == std::string::npos);  // no wrapped negative numbers
}

// Defect 5: outputs whose strides make elements share memory.
TEST(aliasing_output_strides_are_refused_inputs_may_broadcast) {
  for (std::vector<int64_t> strides : {std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 1}}) {
    Graph f;
    int64_t x = 0;
    REQUIRE_OK(f.add("x", {3, 4}, {0, 1}, &x));  // broadcast input: legal
    int64_t y = f.relu(x);
    REQUIRE_OK(cudnnfe_tensor_set_output(f.g, y, 1));
    REQUIRE_OK(cudnnfe_tensor_set_strides(f.g, y, 2, strides.data()));
    CHECK_FAILS(cudnnfe_graph_validate(f.g), GRAPH, "share memory", "pointwise");
  }
  Graph ok;
  int64_t x = 0;
  REQUIRE_OK(ok.add("x", {3, 4}, {0, 1}, &x));
  int64_t y = ok.relu(x);
  REQUIRE_OK(cudnnfe_tensor_set_output(ok.g, y, 1));
  const int64_t column_major[] = {1, 3};
  REQUIRE_OK(cudnnfe_tensor_set_strides(ok.g, y, 2, column_major));
  REQUIRE_OK(ok.build_cpu());
}

// Defect 5: UIDs have one range, enforced when set; the top one round-trips.
TEST(uid_range_is_enforced_when_set_and_round_trips) {
  Graph f;
  int64_t x = 0;
  REQUIRE_OK(f.add("x", {2}, {}, &x));
  CHECK_FAILS(cudnnfe_tensor_set_uid(f.g, x, kMax), ARG, "\"x\"", "2^62");
  const int64_t top = int64_t{1} << 62;
  REQUIRE_OK(cudnnfe_tensor_set_uid(f.g, x, top));
  int64_t y = f.relu(top);
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, y, 1));
  REQUIRE_OK(f.build_cpu());
  const std::string blob = serialize_plan(f.g);
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded.g, nullptr, blob.data(), blob.size(), nullptr));
  float in[2] = {-1.0f, 2.0f}, out[2] = {7.0f, 7.0f};
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  const cudnnfe_binding_t bindings[] = {{top, in}, {y, out}};
  REQUIRE_OK(cudnnfe_graph_execute(loaded.g, h, bindings, 2, nullptr, 0, nullptr));
  CHECK(out[0] == 0.0f && out[1] == 2.0f);
  cudnnfe_handle_destroy(h);
}

// Defect 5: a scalar's strides were settable, and the library then refused
// its own plan blob.
TEST(scalar_strides_are_fixed_and_plans_round_trip) {
  Graph f;
  int64_t x = 0, s = 0, y = 0;
  REQUIRE_OK(f.add("x", {2}, {}, &x));
  REQUIRE_OK(cudnnfe_graph_add_scalar(f.g, "unused", CUDNNFE_DTYPE_FLOAT, 1.0, &s));
  const int64_t strides[] = {5};
  CHECK_FAILS(cudnnfe_tensor_set_strides(f.g, s, 1, strides), ARG, "\"unused\"", "fixed shape");
  y = f.relu(x);
  REQUIRE_OK(cudnnfe_tensor_set_output(f.g, y, 1));
  REQUIRE_OK(f.build_cpu());
  const std::string blob = serialize_plan(f.g);
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded.g, nullptr, blob.data(), blob.size(), nullptr));
}

// Defect 5: NULL and "" both ask for an automatic name (documented; Go passes
// "" for "no name"); it is reported, and never collides with a caller's.
TEST(empty_name_is_an_automatic_name_that_never_collides) {
  Graph f;
  int64_t taken = 0, x = 0, y = 0;
  REQUIRE_OK(f.add("tensor2", {2}, {}, &taken));  // the name UID 2 would get
  REQUIRE_OK(f.add("", {2}, {}, &x));
  REQUIRE_OK(f.add(nullptr, {2}, {}, &y));
  const char *name_x = nullptr, *name_y = nullptr;
  REQUIRE_OK(cudnnfe_tensor_get_name(f.g, x, &name_x));
  REQUIRE_OK(cudnnfe_tensor_get_name(f.g, y, &name_y));
  CHECK(std::string(name_x) == "tensor2_1");
  CHECK(std::string(name_y) == "tensor3");
  CHECK_FAILS(cudnnfe_tensor_set_name(f.g, x, ""), ARG, "empty name");
}
