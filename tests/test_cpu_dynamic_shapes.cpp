// Execute-time shapes on the CPU reference (cudnnfe_graph_execute_with_overrides,
// build option override_shape_enabled): numbers at overridden shapes against
// independent loops, the checks on overrides, the flag in graph JSON and in
// plan blobs. The GPU side is test_gpu_dynamic_shapes.cpp.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"

namespace {

struct Graph {
  cudnnfe_graph_t *g = nullptr;
  Graph() { cudnnfe_graph_create(&g); }
  ~Graph() { cudnnfe_graph_destroy(g); }
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;
  operator cudnnfe_graph_t *() const { return g; }
};

struct Handle {
  cudnnfe_handle_t *h = nullptr;
  Handle() { cudnnfe_handle_create(&h, -1); }
  ~Handle() { cudnnfe_handle_destroy(h); }
  operator cudnnfe_handle_t *() const { return h; }
};

struct Uids {
  int64_t a = 0, b = 0, c = 0, bias = 0, prod = 0;
};

// c = relu(a @ b + bias): a [1, m, k], b [1, k, n], bias [1, 1, n], FLOAT.
Uids add_graph(cudnnfe_graph_t *g, int64_t m, int64_t k, int64_t n) {
  Uids u;
  const int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n}, biasd[3] = {1, 1, n};
  cudnnfe_graph_set_name(g, "dyn");
  cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_FLOAT, 3, ad, nullptr, &u.a);
  cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_FLOAT, 3, bd, nullptr, &u.b);
  cudnnfe_graph_add_tensor(g, "bias", CUDNNFE_DTYPE_FLOAT, 3, biasd, nullptr, &u.bias);
  cudnnfe_matmul_options_t mo;
  cudnnfe_matmul_options_init(&mo);
  cudnnfe_graph_add_matmul(g, u.a, u.b, &mo, &u.prod);
  cudnnfe_pointwise_options_t po;
  cudnnfe_pointwise_options_init(&po);
  int64_t sum = 0;
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, u.prod, u.bias, 0, &po, &sum);
  cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, sum, 0, 0, &po, &u.c);
  cudnnfe_tensor_set_output(g, u.c, 1);
  return u;
}

cudnnfe_build_options_t options(int32_t override_shapes) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  o.override_shape_enabled = override_shapes;
  return o;
}

std::vector<float> fill(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>((i * 7) % 11) - 2.0f;
  return v;
}

// relu(a @ b + bias) with plain loops; a is read through its strides (row
// stride lda, column stride 1), b and c are packed.
std::vector<float> expected(const std::vector<float> &a, const std::vector<float> &b,
                            const std::vector<float> &bias, int64_t m, int64_t k, int64_t n,
                            int64_t lda) {
  std::vector<float> c(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias[j];
      for (int64_t p = 0; p < k; ++p) s += double(a[i * lda + p]) * b[p * n + j];
      c[i * n + j] = static_cast<float>(s > 0 ? s : 0);
    }
  return c;
}

struct Shapes {
  int64_t ad[3], as[3], bd[3], bs[3], cd[3], cs[3], biasd[3], biass[3];
};

// m, k, n packed, except a whose rows are lda apart.
Shapes shapes(int64_t m, int64_t k, int64_t n, int64_t lda) {
  return Shapes{{1, m, k}, {m * lda, lda, 1}, {1, k, n}, {k * n, n, 1},
                {1, m, n}, {m * n, n, 1},     {1, 1, n}, {n, n, 1}};
}

std::vector<cudnnfe_shape_override_t> all_overrides(const Uids &u, const Shapes &s) {
  return {{u.a, 3, s.ad, s.as},
          {u.b, 3, s.bd, s.bs},
          {u.c, 3, s.cd, s.cs},
          {u.bias, 3, s.biasd, s.biass}};
}

double max_diff(const std::vector<float> &x, const std::vector<float> &y) {
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i) d = std::fmax(d, std::fabs(double(x[i]) - y[i]));
  return d;
}

}  // namespace

TEST(build_option_defaults_to_off_and_is_validated) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  CHECK(o.override_shape_enabled == 0);
  Graph g;
  add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t bad = options(2);
  CHECK_FAILS(cudnnfe_graph_build(g, nullptr, &bad), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "override_shape_enabled is 2");
}

TEST(overridden_shapes_match_loops) {
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(1);
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  // Smaller than built, and a with padded rows (lda 7 for k 5).
  const int64_t m = 3, k = 5, n = 2, lda = 7;
  std::vector<float> a = fill(static_cast<size_t>(m * lda), 0.5f), b = fill(k * n, 0.25f);
  std::vector<float> bias = fill(n, 1.0f), c(m * n, -99.0f);
  const Shapes s = shapes(m, k, n, lda);
  const auto ov = all_overrides(u, s);
  cudnnfe_binding_t bind[4] = {
      {u.a, a.data()}, {u.b, b.data()}, {u.bias, bias.data()}, {u.c, c.data()}};
  REQUIRE_OK(cudnnfe_graph_execute_with_overrides(g, h, bind, 4, ov.data(), ov.size(), nullptr, 0,
                                                  nullptr));
  const double d = max_diff(c, expected(a, b, bias, m, k, n, lda));
  CHECK_MSG(d < 1e-5, "max |cudnnfe - loops| = %g", d);
}

TEST(no_overrides_runs_the_built_shapes) {
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(1);
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  std::vector<float> a = fill(32, 0.5f), b = fill(48, 0.25f), bias = fill(6, 1.0f), c(24);
  cudnnfe_binding_t bind[4] = {
      {u.a, a.data()}, {u.b, b.data()}, {u.bias, bias.data()}, {u.c, c.data()}};
  REQUIRE_OK(cudnnfe_graph_execute_with_overrides(g, h, bind, 4, nullptr, 0, nullptr, 0, nullptr));
  CHECK(max_diff(c, expected(a, b, bias, 4, 8, 6, 8)) < 1e-5);
}

TEST(overrides_are_checked) {
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(1);
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  std::vector<float> buf(256);
  cudnnfe_binding_t bind[4] = {
      {u.a, buf.data()}, {u.b, buf.data()}, {u.bias, buf.data()}, {u.c, buf.data()}};
  const Shapes s = shapes(3, 5, 2, 5);
  const int64_t two[2] = {3, 5}, neg[3] = {1, -3, 5};
  auto run = [&](std::vector<cudnnfe_shape_override_t> ov) {
    return cudnnfe_graph_execute_with_overrides(g, h, bind, 4, ov.data(), ov.size(), nullptr, 0,
                                                nullptr);
  };
  CHECK_FAILS(run({{u.a, 2, two, two}}), CUDNNFE_STATUS_INVALID_ARGUMENT, "\"a\"",
              "cannot change a tensor's rank");
  CHECK_FAILS(run({{u.a, 3, neg, s.as}}), CUDNNFE_STATUS_INVALID_ARGUMENT, "\"a\"",
              "dims must be positive");
  CHECK_FAILS(run({{u.prod, 3, s.cd, s.cs}}), CUDNNFE_STATUS_INVALID_ARGUMENT, "virtual",
              "only bound tensors");
  CHECK_FAILS(run({{999, 3, s.ad, s.as}}), CUDNNFE_STATUS_INVALID_ARGUMENT, "UID 999");
  CHECK_FAILS(run({{u.a, 3, s.ad, s.as}, {u.a, 3, s.ad, s.as}}), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "overridden twice");
  CHECK_FAILS(run({{u.a, 3, nullptr, s.as}}), CUDNNFE_STATUS_INVALID_ARGUMENT, "NULL");
  // a and b change m, k, n: the output changes shape, so it needs an override.
  CHECK_FAILS(run({{u.a, 3, s.ad, s.as}, {u.b, 3, s.bd, s.bs}, {u.bias, 3, s.biasd, s.biass}}),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "\"", "give it an override too");
  // An output override that is not what the op makes.
  const int64_t wrong[3] = {1, 4, 2}, wrong_s[3] = {8, 2, 1};
  CHECK_FAILS(run({{u.a, 3, s.ad, s.as},
                   {u.b, 3, s.bd, s.bs},
                   {u.bias, 3, s.biasd, s.biass},
                   {u.c, 3, wrong, wrong_s}}),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "the override gives dims [1,4,2]", "makes [1,3,2]");
  // Inconsistent inputs: the matmul's rule names the node and the tensors.
  const int64_t bad_b[3] = {1, 4, 2}, bad_bs[3] = {8, 2, 1};
  cudnnfe_status_t st = run({{u.a, 3, s.ad, s.as}, {u.b, 3, bad_b, bad_bs}});
  CHECK(st == CUDNNFE_STATUS_INVALID_ARGUMENT);
  CHECK(std::strstr(cudnnfe_last_error(), "execute-time shapes") != nullptr);
}

TEST(a_graph_built_without_the_option_refuses_overrides) {
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(0);
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  std::vector<float> buf(256);
  cudnnfe_binding_t bind[4] = {
      {u.a, buf.data()}, {u.b, buf.data()}, {u.bias, buf.data()}, {u.c, buf.data()}};
  const Shapes s = shapes(3, 5, 2, 5);
  cudnnfe_shape_override_t ov = {u.a, 3, s.ad, s.as};
  CHECK_FAILS(cudnnfe_graph_execute_with_overrides(g, h, bind, 4, &ov, 1, nullptr, 0, nullptr),
              CUDNNFE_STATUS_WRONG_STATE, "\"dyn\"", "override_shape_enabled");
}

TEST(the_flag_is_in_graph_json_and_plan_blobs) {
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(1);
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g, nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g, &json[0], size, &size));
  CHECK(json.find("\"override_shape_enabled\"") != std::string::npos);
  {
    Graph plain;
    add_graph(plain, 4, 8, 6);
    cudnnfe_build_options_t p = options(0);
    REQUIRE_OK(cudnnfe_graph_build(plain, nullptr, &p));
    REQUIRE_OK(cudnnfe_graph_serialize(plain, nullptr, 0, &size));
    std::string plain_json(size, '\0');
    REQUIRE_OK(cudnnfe_graph_serialize(plain, &plain_json[0], size, &size));
    CHECK(plain_json.find("override_shape_enabled") == std::string::npos);
  }
  // A plan blob keeps it: the loaded graph takes execute-time shapes.
  REQUIRE_OK(cudnnfe_graph_serialize_plan(g, nullptr, 0, &size));
  std::vector<char> blob(size);
  REQUIRE_OK(cudnnfe_graph_serialize_plan(g, blob.data(), size, &size));
  Graph loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded, nullptr, blob.data(), size, nullptr));
  const int64_t m = 2, k = 3, n = 4;
  std::vector<float> a = fill(m * k, 0.5f), b = fill(k * n, 0.25f), bias = fill(n, 1.0f);
  std::vector<float> c(m * n);
  const Shapes s = shapes(m, k, n, k);
  const auto ov = all_overrides(u, s);
  cudnnfe_binding_t bind[4] = {
      {u.a, a.data()}, {u.b, b.data()}, {u.bias, bias.data()}, {u.c, c.data()}};
  REQUIRE_OK(cudnnfe_graph_execute_with_overrides(loaded, h, bind, 4, ov.data(), ov.size(), nullptr,
                                                  0, nullptr));
  CHECK(max_diff(c, expected(a, b, bias, m, k, n, k)) < 1e-5);
}

TEST(kernel_cache_object_on_the_cpu) {
  cudnnfe_kernel_cache_t *cache = nullptr;
  REQUIRE_OK(cudnnfe_kernel_cache_create(&cache));
  size_t size = 0;
  CHECK_FAILS(cudnnfe_kernel_cache_serialize(cache, nullptr, 0, &size), CUDNNFE_STATUS_WRONG_STATE,
              "empty");
  const std::string bad = "not json";
  CHECK_FAILS(cudnnfe_kernel_cache_deserialize(cache, bad.data(), bad.size()),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "kernel cache");
  const std::string text = "{\"kernels\": []}";
  CHECK_OK(cudnnfe_kernel_cache_deserialize(cache, text.data(), text.size()));
  // Loading onto a cache that holds something is refused, as cudnn-frontend does.
  CHECK_FAILS(cudnnfe_kernel_cache_deserialize(cache, text.data(), text.size()),
              CUDNNFE_STATUS_WRONG_STATE, "freshly created");
  REQUIRE_OK(cudnnfe_kernel_cache_serialize(cache, nullptr, 0, &size));
  std::string back(size, '\0');
  CHECK_FAILS(cudnnfe_kernel_cache_serialize(cache, &back[0], size - 1, &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "too small");
  REQUIRE_OK(cudnnfe_kernel_cache_serialize(cache, &back[0], back.size(), &size));
  CHECK(back == text);
  CHECK_FAILS(cudnnfe_kernel_cache_serialize(nullptr, nullptr, 0, &size),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "kernel cache is NULL");
  CHECK_OK(cudnnfe_kernel_cache_destroy(cache));
  CHECK_OK(cudnnfe_kernel_cache_destroy(nullptr));
}

TEST(kernel_cache_builds_a_dynamic_shape_graph_on_the_cpu) {
  cudnnfe_kernel_cache_t *cache = nullptr;
  REQUIRE_OK(cudnnfe_kernel_cache_create(&cache));
  Graph g;
  Handle h;
  Uids u = add_graph(g, 4, 8, 6);
  cudnnfe_build_options_t o = options(0);
  o.kernel_cache = cache;
  REQUIRE_OK(cudnnfe_graph_build(g, nullptr, &o));
  std::vector<float> a = fill(32, 0.5f), b = fill(48, 0.25f), bias = fill(6, 1.0f), c(24);
  cudnnfe_binding_t bind[4] = {
      {u.a, a.data()}, {u.b, b.data()}, {u.bias, bias.data()}, {u.c, c.data()}};
  REQUIRE_OK(cudnnfe_graph_execute(g, h, bind, 4, nullptr, 0, nullptr));
  CHECK(max_diff(c, expected(a, b, bias, 4, 8, 6, 8)) < 1e-5);
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g, nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g, &json[0], size, &size));
  CHECK(json.find("\"dynamic_shape_enabled\"") != std::string::npos);
  // The CPU reference leaves the cache empty.
  CHECK_FAILS(cudnnfe_kernel_cache_serialize(cache, nullptr, 0, &size), CUDNNFE_STATUS_WRONG_STATE,
              "empty");
  CHECK_OK(cudnnfe_kernel_cache_destroy(cache));
  Graph bad;
  add_graph(bad, 4, 8, 6);
  cudnnfe_build_options_t d = options(0);
  d.dynamic_shape_enabled = 3;
  CHECK_FAILS(cudnnfe_graph_build(bad, nullptr, &d), CUDNNFE_STATUS_INVALID_ARGUMENT,
              "dynamic_shape_enabled is 3");
}
