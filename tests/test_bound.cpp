// Bound execution (cudnnfe_graph_bind, cudnnfe_bound_*) on the CPU
// reference: a bound run gives what execute gives, reads new contents of its
// buffers and pass-by-value values at each run, and every bad input (count,
// NULL pointers, options, CUDA graph requests the CPU cannot honour, stale
// objects) fails with a message naming what is wrong. The
// GPU side is tests/test_gpu_bound.cpp; the variant-pack reuse and the CUDA
// graph paths run against a stub cuDNN in tests/stub.
#include <cstring>
#include <vector>

#include "harness.h"

namespace {

// c = (a @ b) * scale: a [1, 4, 3], b [1, 3, 5], FLOAT, scale pass-by-value
// when `by_value` (else an ordinary [1, 1, 1] input).
struct Mm {
  cudnnfe_graph_t *g = nullptr;
  int64_t a = 0, b = 0, scale = 0, c = 0;
  std::vector<int64_t> order;
  Mm(bool by_value, cudnnfe_target_t target = CUDNNFE_TARGET_CPU_REFERENCE) {
    cudnnfe_graph_create(&g);
    cudnnfe_graph_set_name(g, "bound_mm");
    const int64_t ad[3] = {1, 4, 3}, bd[3] = {1, 3, 5}, sd[3] = {1, 1, 1};
    cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &a);
    cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 3, bd, nullptr, &b);
    cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FLOAT, 3, sd, nullptr, &scale);
    if (by_value) cudnnfe_tensor_set_pass_by_value(g, scale, 1);
    int64_t ab = 0;
    cudnnfe_graph_add_matmul(g, a, b, nullptr, &ab);
    cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, ab, scale, 0, nullptr, &c);
    cudnnfe_tensor_set_output(g, c, 1);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = target;
    build_status = cudnnfe_graph_build(g, nullptr, &o);
    size_t n = 0;
    cudnnfe_graph_get_bound_uids(g, nullptr, 0, &n);
    order.resize(n);
    cudnnfe_graph_get_bound_uids(g, order.data(), n, &n);
  }
  ~Mm() { cudnnfe_graph_destroy(g); }
  // The buffers in bound-UID order.
  std::vector<void *> ordered(float *pa, float *pb, float *ps, float *pc) const {
    std::vector<void *> data;
    for (int64_t uid : order)
      data.push_back(uid == a ? pa : uid == b ? pb : uid == scale ? static_cast<void *>(ps) : pc);
    return data;
  }
  cudnnfe_status_t build_status = CUDNNFE_STATUS_OK;
};

struct Buffers {
  std::vector<float> a = std::vector<float>(12), b = std::vector<float>(15);
  std::vector<float> c = std::vector<float>(20, -1.0f);
  float scale = 2.0f;
  Buffers() {
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f * static_cast<float>(i % 7) - 1.0f;
  }
};

struct Handle {
  cudnnfe_handle_t *h = nullptr;
  Handle() { cudnnfe_handle_create(&h, -1); }
  ~Handle() { cudnnfe_handle_destroy(h); }
};

cudnnfe_bind_options_t mode_options(cudnnfe_cuda_graph_mode_t mode) {
  cudnnfe_bind_options_t o;
  cudnnfe_bind_options_init(&o);
  o.cuda_graph = mode;
  return o;
}

}  // namespace

TEST(bind_options_default_off) {
  cudnnfe_bind_options_t o;
  std::memset(&o, 0x7f, sizeof(o));
  cudnnfe_bind_options_init(&o);
  CHECK(o.struct_size == sizeof(o));
  CHECK(o.cuda_graph == CUDNNFE_CUDA_GRAPH_OFF);
}

TEST(bound_run_equals_execute_on_the_cpu_reference) {
  Mm mm(false);
  REQUIRE_OK(mm.build_status);
  Handle h;
  Buffers x, y;
  const std::vector<void *> ex = mm.ordered(x.a.data(), x.b.data(), &x.scale, x.c.data());
  REQUIRE_OK(cudnnfe_graph_execute_ordered(mm.g, h.h, ex.data(), ex.size(), nullptr, 0, nullptr));
  const std::vector<void *> by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, nullptr));
  cudnnfe_cuda_graph_mode_t mode = -1;
  CHECK_OK(cudnnfe_bound_get_cuda_graph_mode(bound, &mode));
  CHECK(mode == CUDNNFE_CUDA_GRAPH_OFF);
  CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  CHECK(x.c == y.c);
  CHECK(x.c[0] != -1.0f);
  // New contents of the bound buffers are read at the next run.
  for (float &v : y.a) v += 1.0f;
  for (float &v : x.a) v += 1.0f;
  CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  CHECK_OK(cudnnfe_graph_execute_ordered(mm.g, h.h, ex.data(), ex.size(), nullptr, 0, nullptr));
  CHECK(x.c == y.c);
  CHECK_OK(cudnnfe_bound_destroy(bound));
}

TEST(bound_run_reads_pass_by_value_at_each_run) {
  Mm mm(true);
  REQUIRE_OK(mm.build_status);
  Handle h;
  Buffers y;
  const std::vector<void *> by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, nullptr));
  CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  const std::vector<float> twice = y.c;
  y.scale = 4.0f;
  CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  for (size_t i = 0; i < y.c.size(); ++i) CHECK(y.c[i] == 2.0f * twice[i]);
  cudnnfe_bound_destroy(bound);
}

TEST(bind_bad_inputs) {
  Mm mm(true);
  REQUIRE_OK(mm.build_status);
  Handle h;
  Buffers y;
  std::vector<void *> by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
  cudnnfe_bound_t *bound = nullptr;
  CHECK_FAILS(cudnnfe_graph_bind(nullptr, mm.g, h.h, by.data(), by.size(), nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "bound (output pointer) is NULL");
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size() - 1, nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "3 pointers given for 4 bound tensors");
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, nullptr, by.size(), nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "data is NULL");
  by[1] = nullptr;
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "data[1]", "is NULL");
  by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
  CHECK_FAILS(cudnnfe_graph_bind(&bound, nullptr, h.h, by.data(), by.size(), nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "graph is NULL");
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, nullptr, by.data(), by.size(), nullptr, 0, nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "handle is NULL");
  cudnnfe_bind_options_t bad = mode_options(7);
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, &bad),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "cuda_graph is 7");
  bad = mode_options(CUDNNFE_CUDA_GRAPH_OFF);
  bad.struct_size = sizeof(bad) + 8;
  CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, &bad),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "bind options: struct_size");
  for (cudnnfe_cuda_graph_mode_t m :
       {CUDNNFE_CUDA_GRAPH_NATIVE, CUDNNFE_CUDA_GRAPH_CAPTURE, CUDNNFE_CUDA_GRAPH_AUTO}) {
    const cudnnfe_bind_options_t o = mode_options(m);
    CHECK_FAILS(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, &o),
                CUDNNFE_STATUS_NOT_SUPPORTED, "graph \"bound_mm\"", "CPU reference",
                "CUDNNFE_CUDA_GRAPH_OFF");
  }
  CHECK(bound == nullptr);  // no output on failure
  // The message is on the handle too.
  CHECK(std::strstr(cudnnfe_handle_last_error(h.h), "CPU reference") != nullptr);
}

TEST(bind_before_build_is_wrong_state) {
  cudnnfe_graph_t *g = nullptr;
  REQUIRE_OK(cudnnfe_graph_create(&g));
  const int64_t d[1] = {4};
  int64_t x = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FLOAT, 1, d, nullptr, &x));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &y));
  Handle h;
  cudnnfe_bound_t *bound = nullptr;
  CHECK_FAILS(cudnnfe_graph_bind(&bound, g, h.h, nullptr, 0, nullptr, 0, nullptr),
              CUDNNFE_STATUS_WRONG_STATE, "not built");
  cudnnfe_graph_destroy(g);
}

TEST(bound_execution_lifetimes) {
  Handle h;
  Buffers y;
  cudnnfe_bound_t *bound = nullptr;
  {
    Mm mm(false);
    REQUIRE_OK(mm.build_status);
    const std::vector<void *> by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
    REQUIRE_OK(cudnnfe_graph_bind(&bound, mm.g, h.h, by.data(), by.size(), nullptr, 0, nullptr));
    // A built graph cannot be built again (its plan stays for the bound
    // execution's life): the WRONG_STATE check of a replaced plan is in
    // tests/stub/test_stub_execute.cpp.
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    CHECK_FAILS(cudnnfe_graph_build(mm.g, nullptr, &o), CUDNNFE_STATUS_WRONG_STATE,
                "already built");
    CHECK_OK(cudnnfe_bound_execute(bound, nullptr));
  }  // the graph is destroyed before its bound execution
  CHECK_FAILS(cudnnfe_bound_execute(bound, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "its graph was destroyed");
  CHECK_OK(cudnnfe_bound_destroy(bound));  // still allowed
  CHECK_FAILS(cudnnfe_bound_execute(bound, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live cudnnfe bound execution");
  CHECK_FAILS(cudnnfe_bound_destroy(bound), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live cudnnfe bound execution");
  cudnnfe_cuda_graph_mode_t mode = 0;
  CHECK_FAILS(cudnnfe_bound_get_cuda_graph_mode(bound, &mode), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live");
  CHECK_FAILS(cudnnfe_bound_execute(nullptr, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "bound execution is NULL");
  CHECK_OK(cudnnfe_bound_destroy(nullptr));
}

TEST(bound_execution_after_its_handle_is_destroyed) {
  Mm mm(false);
  REQUIRE_OK(mm.build_status);
  Buffers y;
  const std::vector<void *> by = mm.ordered(y.a.data(), y.b.data(), &y.scale, y.c.data());
  cudnnfe_handle_t *h = nullptr;
  REQUIRE_OK(cudnnfe_handle_create(&h, -1));
  cudnnfe_bound_t *bound = nullptr;
  REQUIRE_OK(cudnnfe_graph_bind(&bound, mm.g, h, by.data(), by.size(), nullptr, 0, nullptr));
  cudnnfe_handle_destroy(h);
  CHECK_FAILS(cudnnfe_bound_execute(bound, nullptr), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "not a live cudnnfe handle");
  CHECK_OK(cudnnfe_bound_destroy(bound));
}
