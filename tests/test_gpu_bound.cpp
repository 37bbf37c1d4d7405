// Bound execution on the GPU (cudnnfe_graph_bind): for matmul, conv and
// SDPA, the bound run (variant pack made at bind) and the CUDA graph replay
// (AUTO: native population or stream capture) each give the CPU reference's
// result within the op's tolerance, as execute does on the same buffers.
// Skips without a GPU; the CPU side is tests/test_bound.cpp.
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_small_graphs.h"
#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;

// The GPU graph's output after one run of `run` (output prefilled with NaN).
Bytes output_after(const std::function<void()> &run, const gpu::DeviceBuffer &out,
                   const TensorInfo &t) {
  cuda(gpu::runtime().Memset(out.get(), 0xff, t.bytes), "cudaMemset");
  run();
  cuda(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
  Bytes host(t.bytes);
  cuda(gpu::runtime().Memcpy(host.data(), out.get(), t.bytes, gpu::kDeviceToHost), "cudaMemcpy");
  return host;
}

void check_bound_case(const char *name, cudnnfe_dtype_t dt, double rtol, const Builder &add) {
  std::printf("  %s (%s)\n", name, short_name(dt));
  try {
    int64_t out = 0, cpu_out = 0;
    GraphPtr g = built(name, dt, add, CUDNNFE_TARGET_GPU, &out);
    GraphPtr cpu = built(name, dt, add, CUDNNFE_TARGET_CPU_REFERENCE, &cpu_out);
    const std::vector<int64_t> order = bound_uids(g.get());
    std::mt19937 rng(seed_of(name));
    std::vector<Bytes> host;
    std::vector<gpu::DeviceBuffer> dev;
    std::vector<void *> ptrs, cpu_ptrs;
    size_t out_index = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const TensorInfo t = describe(g.get(), order[i]);
      host.push_back(order[i] == out ? Bytes(t.bytes) : random_bytes(t, Fill{}, rng));
      dev.emplace_back(t.bytes);
      if (!dev.back().ok()) throw Failure("cudaMalloc failed");
      cuda(gpu::runtime().Memcpy(dev.back().get(), host.back().data(), t.bytes, gpu::kHostToDevice),
           "cudaMemcpy");
      if (order[i] == out) out_index = i;
    }
    for (size_t i = 0; i < order.size(); ++i) ptrs.push_back(dev[i].get());
    for (Bytes &b : host) cpu_ptrs.push_back(b.data());
    int64_t ws_size = 0;
    ok(cudnnfe_graph_get_workspace_size(g.get(), &ws_size), "workspace size");
    gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
    const TensorInfo t = describe(g.get(), out);
    cudnnfe_handle_t *h = test_handle();

    const Bytes executed = output_after(
        [&] {
          ok(cudnnfe_graph_execute_ordered(g.get(), h, ptrs.data(), ptrs.size(), ws.get(),
                                           ws.size(), nullptr),
             "execute_ordered");
        },
        dev[out_index], t);
    cudnnfe_bind_options_t o;
    cudnnfe_bind_options_init(&o);
    cudnnfe_bound_t *plain = nullptr, *replay = nullptr;
    ok(cudnnfe_graph_bind(&plain, g.get(), h, ptrs.data(), ptrs.size(), ws.get(), ws.size(), &o),
       "cudnnfe_graph_bind");
    o.cuda_graph = CUDNNFE_CUDA_GRAPH_AUTO;
    ok(cudnnfe_graph_bind(&replay, g.get(), h, ptrs.data(), ptrs.size(), ws.get(), ws.size(), &o),
       "cudnnfe_graph_bind (CUDA graph)");
    cudnnfe_cuda_graph_mode_t mode = 0;
    ok(cudnnfe_bound_get_cuda_graph_mode(replay, &mode), "get_cuda_graph_mode");
    CHECK(mode == CUDNNFE_CUDA_GRAPH_NATIVE || mode == CUDNNFE_CUDA_GRAPH_CAPTURE);
    const Bytes bound =
        output_after([&] { ok(cudnnfe_bound_execute(plain, nullptr), "cudnnfe_bound_execute"); },
                     dev[out_index], t);
    // Twice: a replay after a replay runs the same work again.
    output_after([&] { ok(cudnnfe_bound_execute(replay, nullptr), "bound replay"); },
                 dev[out_index], t);
    const Bytes replayed = output_after(
        [&] { ok(cudnnfe_bound_execute(replay, nullptr), "bound replay"); }, dev[out_index], t);
    cudnnfe_bound_destroy(plain);
    cudnnfe_bound_destroy(replay);

    ok(cudnnfe_graph_execute_ordered(cpu.get(), h, cpu_ptrs.data(), cpu_ptrs.size(), nullptr, 0,
                                     nullptr),
       "CPU reference execute");
    const Bytes &want = host[out_index];
    const char *labels[3] = {"execute", "bound", "bound CUDA graph"};
    const Bytes *got[3] = {&executed, &bound, &replayed};
    for (int i = 0; i < 3; ++i) {
      const Errors e = compare(t, *got[i], want, rtol, NonFinite::kAlwaysBad);
      std::printf("    %-16s max abs %.3g, max rel %.3g%s%s\n", labels[i], e.max_abs, e.max_rel,
                  *got[i] == executed ? " (bitwise as execute)" : "",
                  i == 2 ? (mode == CUDNNFE_CUDA_GRAPH_NATIVE ? " [native]" : " [capture]") : "");
      CHECK_MSG(e.bad == 0, "%s %s: %lld of %lld elements off; first %s", name, labels[i],
                static_cast<long long>(e.bad), static_cast<long long>(e.compared),
                e.first_bad.c_str());
    }
  } catch (const Failure &f) {
    std::printf("  %s: %s\n", name, f.what());
    ++testing::state().failures;
  }
}

}  // namespace

TEST(gpu_bound_matmul) {
  REQUIRE_GPU();
  check_bound_case("bound_matmul", CUDNNFE_DTYPE_HALF, 1e-2, add_small_matmul);
}

TEST(gpu_bound_conv) {
  REQUIRE_GPU();
  check_bound_case("bound_conv", CUDNNFE_DTYPE_HALF, 1e-2, add_small_conv);
}

TEST(gpu_bound_sdpa) {
  REQUIRE_GPU();
  check_bound_case("bound_sdpa", CUDNNFE_DTYPE_BFLOAT16, 2e-2, add_small_causal_sdpa);
}
