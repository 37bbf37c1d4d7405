// Execute-time shapes on the GPU (override_shape_enabled,
// cudnnfe_graph_execute_with_overrides): where the loaded cuDNN takes them,
// results at overridden shapes against the CPU reference at the same shapes;
// where it does not, a NOT_SUPPORTED refusal naming the feature, the cuDNN
// attribute and the version (never a crash or a CUDNN_ERROR). Skips without
// a GPU.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test_support.h"

using gpu_test::ok;

namespace {

struct Uids {
  int64_t a = 0, b = 0, c = 0;
};

// c = a @ b, HALF in and out, FLOAT compute: a [1, m, k], b [1, k, n].
Uids add_matmul(cudnnfe_graph_t *g, int64_t m, int64_t k, int64_t n) {
  Uids u;
  const int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n};
  ok(cudnnfe_graph_add_tensor(g, "a", CUDNNFE_DTYPE_HALF, 3, ad, nullptr, &u.a), "add a");
  ok(cudnnfe_graph_add_tensor(g, "b", CUDNNFE_DTYPE_HALF, 3, bd, nullptr, &u.b), "add b");
  cudnnfe_matmul_options_t mo;
  cudnnfe_matmul_options_init(&mo);
  mo.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  ok(cudnnfe_graph_add_matmul(g, u.a, u.b, &mo, &u.c), "add matmul");
  ok(cudnnfe_tensor_set_output(g, u.c, 1), "set output");
  return u;
}

cudnnfe_build_options_t options(cudnnfe_target_t target) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = target;
  o.override_shape_enabled = 1;
  return o;
}

std::vector<uint16_t> halves(size_t n, float scale) {
  std::vector<uint16_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = gpu::float_to_half(scale * static_cast<float>((i * 5) % 9) - 1.0f);
  return v;
}

}  // namespace

TEST(gpu_overridden_shapes_match_the_cpu_reference_or_are_refused) {
  REQUIRE_GPU();
  try {
    auto gpu_graph = gpu_test::new_graph("dyn_gpu", CUDNNFE_DTYPE_HALF);
    Uids u = add_matmul(gpu_graph.get(), 64, 128, 64);
    cudnnfe_build_options_t o = options(CUDNNFE_TARGET_GPU);
    cudnnfe_status_t st = cudnnfe_graph_build(gpu_graph.get(), nullptr, &o);
    if (st == CUDNNFE_STATUS_NOT_SUPPORTED) {
      const std::string msg = cudnnfe_last_error();
      std::printf("  refused (expected where cuDNN lacks it): %s\n", msg.c_str());
      CHECK(msg.find("override_shape_enabled") != std::string::npos);
      CHECK(msg.find("IS_OVERRIDE_SHAPE_ENABLED") != std::string::npos);
      CHECK(msg.find("cuDNN") != std::string::npos);
      return;
    }
    ok(st, "cudnnfe_graph_build (GPU, override_shape_enabled)");
    const int64_t m = 32, k = 64, n = 48;
    const int64_t ad[3] = {1, m, k}, as[3] = {m * k, k, 1}, bd[3] = {1, k, n},
                  bs[3] = {k * n, n, 1}, cd[3] = {1, m, n}, cs[3] = {m * n, n, 1};
    const cudnnfe_shape_override_t ov[3] = {{u.a, 3, ad, as}, {u.b, 3, bd, bs}, {u.c, 3, cd, cs}};
    std::vector<uint16_t> a = halves(m * k, 0.25f), b = halves(k * n, 0.125f);
    std::vector<uint16_t> c_gpu(m * n), c_cpu(m * n);
    gpu::DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc(c_gpu.size() * 2);
    REQUIRE(da.ok() && db.ok() && dc.ok());
    ok(gpu::runtime().Memcpy(da.get(), a.data(), a.size() * 2, gpu::kHostToDevice)
           ? CUDNNFE_STATUS_CUDA_ERROR
           : CUDNNFE_STATUS_OK,
       "cudaMemcpy a");
    ok(gpu::runtime().Memcpy(db.get(), b.data(), b.size() * 2, gpu::kHostToDevice)
           ? CUDNNFE_STATUS_CUDA_ERROR
           : CUDNNFE_STATUS_OK,
       "cudaMemcpy b");
    int64_t ws_size = 0;
    ok(cudnnfe_graph_get_workspace_size(gpu_graph.get(), &ws_size), "workspace size");
    gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
    cudnnfe_binding_t gb[3] = {{u.a, da.get()}, {u.b, db.get()}, {u.c, dc.get()}};
    st = cudnnfe_graph_execute_with_overrides(gpu_graph.get(), gpu_test::test_handle(), gb, 3, ov,
                                              3, ws.get(), ws.size(), nullptr);
    if (st == CUDNNFE_STATUS_NOT_SUPPORTED) {
      const std::string msg = cudnnfe_last_error();
      std::printf("  execute refused: %s\n", msg.c_str());
      CHECK(msg.find("execute-time shapes") != std::string::npos);
      return;
    }
    ok(st, "cudnnfe_graph_execute_with_overrides (GPU)");
    ok(gpu::runtime().DeviceSynchronize() ? CUDNNFE_STATUS_CUDA_ERROR : CUDNNFE_STATUS_OK,
       "cudaDeviceSynchronize");
    ok(gpu::runtime().Memcpy(c_gpu.data(), dc.get(), c_gpu.size() * 2, gpu::kDeviceToHost)
           ? CUDNNFE_STATUS_CUDA_ERROR
           : CUDNNFE_STATUS_OK,
       "cudaMemcpy c");

    auto cpu_graph = gpu_test::new_graph("dyn_cpu", CUDNNFE_DTYPE_HALF);
    Uids cu = add_matmul(cpu_graph.get(), 64, 128, 64);
    cudnnfe_build_options_t co = options(CUDNNFE_TARGET_CPU_REFERENCE);
    ok(cudnnfe_graph_build(cpu_graph.get(), nullptr, &co), "CPU build");
    const cudnnfe_shape_override_t cov[3] = {
        {cu.a, 3, ad, as}, {cu.b, 3, bd, bs}, {cu.c, 3, cd, cs}};
    cudnnfe_binding_t cb[3] = {{cu.a, a.data()}, {cu.b, b.data()}, {cu.c, c_cpu.data()}};
    ok(cudnnfe_graph_execute_with_overrides(cpu_graph.get(), gpu_test::test_handle(), cb, 3, cov, 3,
                                            nullptr, 0, nullptr),
       "CPU execute with overrides");
    double worst = 0;
    for (size_t i = 0; i < c_cpu.size(); ++i)
      worst =
          std::fmax(worst, std::fabs(gpu::half_to_float(c_gpu[i]) - gpu::half_to_float(c_cpu[i])));
    CHECK_MSG(worst < 5e-2, "max |GPU - CPU| = %g at [1, %lld, %lld]", worst,
              static_cast<long long>(m), static_cast<long long>(n));
  } catch (const gpu_test::Failure &e) {
    std::printf("  %s\n", e.what());
    ++testing::state().failures;
  }
}

namespace {

// Builds c = a @ b at [1, m, k] x [1, k, n] on the GPU with `cache`, runs it
// and compares with the CPU reference. Returns false (printed) when cuDNN
// refuses dynamic shapes or the kernel cache with NOT_SUPPORTED.
bool run_with_cache(cudnnfe_kernel_cache_t *cache, int64_t m, int64_t k, int64_t n) {
  auto g = gpu_test::new_graph("kc_gpu", CUDNNFE_DTYPE_HALF);
  Uids u = add_matmul(g.get(), m, k, n);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_GPU;
  o.kernel_cache = cache;
  cudnnfe_status_t st = cudnnfe_graph_build(g.get(), nullptr, &o);
  if (st == CUDNNFE_STATUS_NOT_SUPPORTED) {
    const std::string msg = cudnnfe_last_error();
    std::printf("  refused: %s\n", msg.c_str());
    CHECK(msg.find("dynamic shapes") != std::string::npos ||
          msg.find("kernel cache") != std::string::npos);
    return false;
  }
  ok(st, "cudnnfe_graph_build (GPU, kernel cache)");
  std::vector<uint16_t> a = halves(m * k, 0.25f), b = halves(k * n, 0.125f), c(m * n), want(m * n);
  gpu::DeviceBuffer da(a.size() * 2), db(b.size() * 2), dc(c.size() * 2);
  auto cuda = [](int e, const char *what) {
    ok(e ? CUDNNFE_STATUS_CUDA_ERROR : CUDNNFE_STATUS_OK, what);
  };
  cuda(gpu::runtime().Memcpy(da.get(), a.data(), a.size() * 2, gpu::kHostToDevice), "copy a");
  cuda(gpu::runtime().Memcpy(db.get(), b.data(), b.size() * 2, gpu::kHostToDevice), "copy b");
  int64_t ws_size = 0;
  ok(cudnnfe_graph_get_workspace_size(g.get(), &ws_size), "workspace size");
  gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
  cudnnfe_binding_t gb[3] = {{u.a, da.get()}, {u.b, db.get()}, {u.c, dc.get()}};
  ok(cudnnfe_graph_execute(g.get(), gpu_test::test_handle(), gb, 3, ws.get(), ws.size(), nullptr),
     "execute");
  cuda(gpu::runtime().DeviceSynchronize(), "synchronize");
  cuda(gpu::runtime().Memcpy(c.data(), dc.get(), c.size() * 2, gpu::kDeviceToHost), "copy c");
  auto cpu = gpu_test::new_graph("kc_cpu", CUDNNFE_DTYPE_HALF);
  Uids cu = add_matmul(cpu.get(), m, k, n);
  cudnnfe_build_options_t co;
  cudnnfe_build_options_init(&co);
  co.target = CUDNNFE_TARGET_CPU_REFERENCE;
  ok(cudnnfe_graph_build(cpu.get(), nullptr, &co), "CPU build");
  cudnnfe_binding_t cb[3] = {{cu.a, a.data()}, {cu.b, b.data()}, {cu.c, want.data()}};
  ok(cudnnfe_graph_execute(cpu.get(), gpu_test::test_handle(), cb, 3, nullptr, 0, nullptr),
     "CPU execute");
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i)
    worst = std::fmax(worst, std::fabs(gpu::half_to_float(c[i]) - gpu::half_to_float(want[i])));
  CHECK_MSG(worst < 5e-2, "max |GPU - CPU| = %g at m=%lld", worst, static_cast<long long>(m));
  return true;
}

}  // namespace

TEST(gpu_kernel_cache_shares_kernels_between_shapes) {
  REQUIRE_GPU();
  cudnnfe_kernel_cache_t *cache = nullptr;
  try {
    ok(cudnnfe_kernel_cache_create(&cache), "cudnnfe_kernel_cache_create");
    // test_kernel_cache.py's shapes (b = 1 here): one cache, several sizes.
    const int64_t shapes[][3] = {{32, 128, 32}, {64, 128, 64}, {80, 128, 80}, {128, 256, 128}};
    for (const auto &s : shapes)
      if (!run_with_cache(cache, s[0], s[1], s[2])) break;
    size_t size = 0;
    cudnnfe_status_t st = cudnnfe_kernel_cache_serialize(cache, nullptr, 0, &size);
    if (st == CUDNNFE_STATUS_OK) {
      std::string json(size, '\0');
      ok(cudnnfe_kernel_cache_serialize(cache, &json[0], size, &size), "serialize");
      cudnnfe_kernel_cache_t *loaded = nullptr;
      ok(cudnnfe_kernel_cache_create(&loaded), "create");
      ok(cudnnfe_kernel_cache_deserialize(loaded, json.data(), json.size()), "deserialize");
      run_with_cache(loaded, 96, 128, 96);  // a shape not built yet: no plan cache hit
      cudnnfe_kernel_cache_destroy(loaded);
    } else {
      std::printf("  serialize: %s: %s\n", cudnnfe_status_name(st), cudnnfe_last_error());
      CHECK(st == CUDNNFE_STATUS_WRONG_STATE || st == CUDNNFE_STATUS_CUDNN_ERROR ||
            st == CUDNNFE_STATUS_NOT_SUPPORTED);
    }
  } catch (const gpu_test::Failure &e) {
    std::printf("  %s\n", e.what());
    ++testing::state().failures;
  }
  cudnnfe_kernel_cache_destroy(cache);
}
