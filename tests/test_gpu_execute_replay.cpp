// Execute replay on the GPU (backend/execute_replay.h): executes on the same
// buffers run from a CUDA graph from the second call on (the log says when):
// cuDNN's native one where the plan supports it, else a stream capture;
// graphs known wrong under capture (instance norm backward) only natively.
// The results are the same either way. Each case
// executes several times, with new input values between calls (a replay
// must read the buffers' current contents), then on other buffers, and
// compares every result with the CPU reference on the same inputs. Graphs
// with a pass-by-value input and executes inside the caller's own stream
// capture must not replay, and are checked the same way. The last case
// keeps the evidence for backend::known_wrong_under_capture. Skips without a
// GPU.
#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "api/objects.h"
#include "gpu_small_graphs.h"
#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;

// The CUDA runtime's stream capture, for the case where the caller records
// execute into a graph of its own.
struct CaptureApi {
  int (*BeginCapture)(void *, int) = nullptr;
  int (*EndCapture)(void *, void **) = nullptr;
  int (*Instantiate)(void **, void *, unsigned long long) = nullptr;
  int (*Launch)(void *, void *) = nullptr;
  int (*GraphDestroy)(void *) = nullptr;
  int (*ExecDestroy)(void *) = nullptr;
  bool ok = false;
};

const CaptureApi &capture_api() {
  static const CaptureApi api = [] {
    CaptureApi a;
    void *lib = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) lib = dlopen("libcudart.so.12", RTLD_NOW | RTLD_NOLOAD);
    if (!lib) return a;
    auto sym = [&](const char *name, auto *slot) {
      *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(lib, name));
    };
    sym("cudaStreamBeginCapture", &a.BeginCapture);
    sym("cudaStreamEndCapture", &a.EndCapture);
    sym("cudaGraphInstantiateWithFlags", &a.Instantiate);
    sym("cudaGraphLaunch", &a.Launch);
    sym("cudaGraphDestroy", &a.GraphDestroy);
    sym("cudaGraphExecDestroy", &a.ExecDestroy);
    a.ok = a.BeginCapture && a.EndCapture && a.Instantiate && a.Launch && a.GraphDestroy &&
           a.ExecDestroy;
    return a;
  }();
  return api;
}

// One graph's buffers on the GPU and their host copies.
struct Buffers {
  std::vector<Bytes> host;
  std::vector<gpu::DeviceBuffer> dev;
  std::vector<void *> ptrs;
  std::vector<bool> by_value;  // a host pointer, read at each execute
  size_t out = 0;
};

Buffers allocate(cudnnfe_graph_t *g, const std::vector<int64_t> &order, int64_t out) {
  Buffers b;
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorInfo t = describe(g, order[i]);
    int32_t by_value = 0;
    ok(cudnnfe_tensor_get_pass_by_value(g, order[i], &by_value), "get_pass_by_value");
    b.host.emplace_back(t.bytes);
    b.dev.emplace_back(by_value ? 0 : t.bytes);
    if (!by_value && !b.dev.back().ok()) throw Failure("cudaMalloc failed");
    b.by_value.push_back(by_value != 0);
    if (order[i] == out) b.out = i;
  }
  // Host storage is never reallocated after this: by-value pointers stay.
  for (size_t i = 0; i < order.size(); ++i)
    b.ptrs.push_back(b.by_value[i] ? static_cast<void *>(b.host[i].data()) : b.dev[i].get());
  return b;
}

// New random inputs on the host and the GPU; the output poisoned with NaN.
void refill(cudnnfe_graph_t *g, const std::vector<int64_t> &order, Buffers &b, std::mt19937 &rng) {
  for (size_t i = 0; i < order.size(); ++i) {
    const TensorInfo t = describe(g, order[i]);
    if (i == b.out) {
      cuda(gpu::runtime().Memset(b.ptrs[i], 0xff, t.bytes), "cudaMemset");
      continue;
    }
    const Bytes values = random_bytes(t, Fill{}, rng);
    std::copy(values.begin(), values.end(), b.host[i].begin());
    if (!b.by_value[i])
      cuda(gpu::runtime().Memcpy(b.ptrs[i], b.host[i].data(), t.bytes, gpu::kHostToDevice),
           "cudaMemcpy");
  }
}

// The GPU output against the CPU reference run on the same host inputs.
void check_output(const char *label, cudnnfe_graph_t *cpu, const TensorInfo &t, Buffers &b,
                  double rtol) {
  cuda(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
  Bytes got(t.bytes);
  cuda(gpu::runtime().Memcpy(got.data(), b.ptrs[b.out], t.bytes, gpu::kDeviceToHost), "cudaMemcpy");
  std::vector<void *> cpu_ptrs;
  for (Bytes &h : b.host) cpu_ptrs.push_back(h.data());
  // The CPU reference writes its output over the host copy of the output.
  ok(cudnnfe_graph_execute_ordered(cpu, test_handle(), cpu_ptrs.data(), cpu_ptrs.size(), nullptr, 0,
                                   nullptr),
     "CPU reference execute");
  const Errors e = compare(t, got, b.host[b.out], rtol, NonFinite::kAlwaysBad);
  std::printf("    %-34s max abs %.3g, max rel %.3g\n", label, e.max_abs, e.max_rel);
  CHECK_MSG(e.bad == 0, "%s: %lld of %lld elements off; first %s", label,
            static_cast<long long>(e.bad), static_cast<long long>(e.compared), e.first_bad.c_str());
}

// Log lines that say a plan now runs from a CUDA graph.
int g_replay_lines = 0;
void count_replay_lines(cudnnfe_log_level_t, const char *message, void *) {
  if (std::strstr(message, "execute replay: plan ") &&
      std::strstr(message, "runs from a CUDA graph"))
    ++g_replay_lines;
}

void check_replay_case(const char *name, cudnnfe_dtype_t dt, double rtol, const Builder &add,
                       bool known_wrong_under_capture = false) {
  std::printf("  %s (%s)\n", name, short_name(dt));
  ok(cudnnfe_set_log_callback(count_replay_lines, nullptr, CUDNNFE_LOG_LEVEL_INFO), "log callback");
  struct LogReset {
    ~LogReset() { cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF); }
  } reset;
  g_replay_lines = 0;
  try {
    int64_t out = 0, cpu_out = 0;
    GraphPtr g = built(name, dt, add, CUDNNFE_TARGET_GPU, &out);
    cudnnfe_plan_info_t plan;
    cudnnfe_plan_info_init(&plan);
    int64_t selected = 0, plans = 0;
    ok(cudnnfe_graph_get_plan_count(g.get(), &plans), "get_plan_count");
    for (int64_t i = 0; i < plans; ++i) {
      ok(cudnnfe_graph_get_plan_info(g.get(), i, &plan), "get_plan_info");
      if (plan.selected) {
        selected = i;
        break;
      }
    }
    ok(cudnnfe_graph_get_plan_info(g.get(), selected, &plan), "get_plan_info");
    const bool native =
        (plan.behavior_notes & CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API) != 0;
    int32_t by_value = 0;
    for (int64_t uid : bound_uids(g.get())) {
      int32_t v = 0;
      ok(cudnnfe_tensor_get_pass_by_value(g.get(), uid, &v), "get_pass_by_value");
      by_value |= v;
    }
    const bool replays = !by_value && (native || !known_wrong_under_capture);
    std::printf("    plan %s: %s\n", plan.name,
                by_value ? "a pass-by-value input: not replayed"
                : native ? "native CUDA graph support: replayed from cuDNN's graph"
                : replays
                    ? "no native CUDA graph support: replayed by stream capture"
                    : "no native CUDA graph support, known wrong under capture: not replayed");
    GraphPtr cpu = built(name, dt, add, CUDNNFE_TARGET_CPU_REFERENCE, &cpu_out);
    const std::vector<int64_t> order = bound_uids(g.get());
    const TensorInfo t = describe(g.get(), out);
    std::mt19937 rng(seed_of(name));
    int64_t ws_size = 0;
    ok(cudnnfe_graph_get_workspace_size(g.get(), &ws_size), "workspace size");
    gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
    cudnnfe_handle_t *h = test_handle();
    auto execute = [&](Buffers &b, void *stream) {
      ok(cudnnfe_graph_execute_ordered(g.get(), h, b.ptrs.data(), b.ptrs.size(), ws.get(),
                                       ws.size(), stream),
         "execute_ordered");
    };
    // Calls 1 (cudnnBackendExecute), 2 (recorded, launched), 3 and 4
    // (launched), each on new input values.
    Buffers first = allocate(g.get(), order, out);
    for (int call = 1; call <= 4; ++call) {
      refill(g.get(), order, first, rng);
      execute(first, nullptr);
      check_output(("execute " + std::to_string(call) + " on the same buffers").c_str(), cpu.get(),
                   t, first, rtol);
    }
    // One graph made for these buffers (on the second call), none otherwise.
    CHECK_MSG(g_replay_lines == (replays ? 1 : 0), "%s: %d replay log line(s), expected %d", name,
              g_replay_lines, replays ? 1 : 0);
    // Other buffers, then the first ones again (two graphs in turn).
    Buffers second = allocate(g.get(), order, out);
    for (int call = 1; call <= 3; ++call) {
      refill(g.get(), order, second, rng);
      execute(second, nullptr);
      check_output(("execute " + std::to_string(call) + " on other buffers").c_str(), cpu.get(), t,
                   second, rtol);
      refill(g.get(), order, first, rng);
      execute(first, nullptr);
      check_output("  then the first buffers again", cpu.get(), t, first, rtol);
    }
    CHECK_MSG(g_replay_lines == (replays ? 2 : 0), "%s: %d replay log line(s), expected %d", name,
              g_replay_lines, replays ? 2 : 0);
    // Inside the caller's stream capture: cuDNN's work goes into the
    // caller's graph, which then runs on the current input values (not for
    // a pass-by-value input, whose value any CUDA graph keeps).
    if (std::find(first.by_value.begin(), first.by_value.end(), true) != first.by_value.end())
      return;
    const CaptureApi &api = capture_api();
    CHECK_MSG(api.ok, "the CUDA runtime lacks the stream capture API");
    if (!api.ok) return;
    void *stream = nullptr;
    cuda(gpu::runtime().StreamCreate(&stream), "cudaStreamCreate");
    void *graph = nullptr, *exec = nullptr;
    cuda(api.BeginCapture(stream, /*cudaStreamCaptureModeThreadLocal*/ 1),
         "cudaStreamBeginCapture");
    const cudnnfe_status_t captured = cudnnfe_graph_execute_ordered(
        g.get(), h, first.ptrs.data(), first.ptrs.size(), ws.get(), ws.size(), stream);
    cuda(api.EndCapture(stream, &graph), "cudaStreamEndCapture");
    ok(captured, "execute_ordered under the caller's stream capture");
    cuda(api.Instantiate(&exec, graph, 0), "cudaGraphInstantiateWithFlags");
    for (int launch = 1; launch <= 2; ++launch) {
      refill(g.get(), order, first, rng);
      cuda(api.Launch(exec, stream), "cudaGraphLaunch");
      cuda(gpu::runtime().StreamSynchronize(stream), "cudaStreamSynchronize");
      check_output(("caller's CUDA graph, launch " + std::to_string(launch)).c_str(), cpu.get(), t,
                   first, rtol);
    }
    api.ExecDestroy(exec);
    api.GraphDestroy(graph);
    gpu::runtime().StreamDestroy(stream);
  } catch (const Failure &f) {
    std::printf("  %s: %s\n", name, f.what());
    ++testing::state().failures;
  }
}

// Instance norm backward of a [4, 32, 8, 8] input, every output marked as
// one; writes the three outputs' UIDs.
void add_instancenorm_backward(cudnnfe_graph_t *g, cudnnfe_dtype_t dt, int64_t *dx, int64_t *dscale,
                               int64_t *dbias) {
  const int64_t dy = input(g, "dy", dt, {4, 32, 8, 8}), x = input(g, "x", dt, {4, 32, 8, 8});
  const int64_t scale = input(g, "scale", dt, {1, 32, 1, 1});
  const int64_t mean = input(g, "mean", dt, {4, 32, 1, 1});
  const int64_t inv = input(g, "inv_variance", dt, {4, 32, 1, 1});
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  ok(cudnnfe_graph_add_instancenorm_backward(g, dy, x, scale, mean, inv, &o, dx, dscale, dbias),
     "add_instancenorm_backward");
  for (int64_t uid : {*dx, *dscale, *dbias}) ok(cudnnfe_tensor_set_output(g, uid, 1), "set_output");
}

}  // namespace

TEST(gpu_execute_replay_matmul) {
  REQUIRE_GPU();
  check_replay_case("replay_matmul", CUDNNFE_DTYPE_HALF, 1e-2, add_small_matmul);
}

TEST(gpu_execute_replay_conv) {
  REQUIRE_GPU();
  check_replay_case("replay_conv", CUDNNFE_DTYPE_HALF, 1e-2, add_small_conv);
}

TEST(gpu_execute_replay_sdpa) {
  REQUIRE_GPU();
  check_replay_case("replay_sdpa", CUDNNFE_DTYPE_BFLOAT16, 2e-2, add_small_causal_sdpa);
}

// A pass-by-value scalar is read from host memory at each execute: the same
// pointers with a new value must give the new result (no replay).
TEST(gpu_execute_replay_pass_by_value) {
  REQUIRE_GPU();
  check_replay_case(
      "replay_scale_by_value", CUDNNFE_DTYPE_FLOAT, 1e-5, [](cudnnfe_graph_t *g, auto dt) {
        const int64_t x = input(g, "x", dt, {4, 256});
        const int64_t s = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 1});
        ok(cudnnfe_tensor_set_pass_by_value(g, s, 1), "set_pass_by_value");
        int64_t y = 0;
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, x, s, 0, nullptr, &y),
           "add_pointwise");
        return y;
      });
}

// Instance norm backward: backend::known_wrong_under_capture keeps execute
// replay to cuDNN's native graph (none for its engine on 9.19), so four
// executes on the same buffers all match the CPU reference.
TEST(gpu_execute_replay_instancenorm_backward) {
  REQUIRE_GPU();
  check_replay_case(
      "replay_instancenorm_backward", CUDNNFE_DTYPE_FLOAT, 1e-3,
      [](cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
        int64_t dx = 0, dscale = 0, dbias = 0;
        add_instancenorm_backward(g, dt, &dx, &dscale, &dbias);
        return dscale;
      },
      true);
}

// known_wrong_under_capture at the API: instance norm backward refuses an
// explicit CAPTURE, and AUTO runs it without a CUDA graph, matching the CPU
// reference. The wrong values behind the rule come from
// tests/test_gpu_norms.cpp's second run (bound CAPTURE after the first
// execute, outputs and inputs rewritten between): dscale and dbias came back
// 0 on cuDNN 9.14 and 9.19 (H200), for FLOAT, HALF and BFLOAT16. This
// smaller case (one bind, then a launch) does not reproduce it; its capture,
// made past the API's refusal, is printed for the record, not asserted.
TEST(gpu_capture_known_wrong_instancenorm_backward) {
  REQUIRE_GPU();
  try {
    const cudnnfe_dtype_t dt = CUDNNFE_DTYPE_FLOAT;
    int64_t dx = 0, dscale = 0, dbias = 0;
    auto add = [&](cudnnfe_graph_t *g, cudnnfe_dtype_t) {
      add_instancenorm_backward(g, dt, &dx, &dscale, &dbias);
      return dx;
    };
    int64_t out = 0;
    GraphPtr g = built("in_backward_capture", dt, add, CUDNNFE_TARGET_GPU, &out);
    const int64_t gpu_dscale = dscale;
    GraphPtr cpu = built("in_backward_capture", dt, add, CUDNNFE_TARGET_CPU_REFERENCE, &out);
    const std::vector<int64_t> order = bound_uids(g.get());
    Buffers b = allocate(g.get(), order, gpu_dscale);
    std::mt19937 rng(seed_of("in_backward_capture"));
    refill(g.get(), order, b, rng);
    int64_t ws_size = 0;
    ok(cudnnfe_graph_get_workspace_size(g.get(), &ws_size), "workspace size");
    gpu::DeviceBuffer ws(static_cast<size_t>(ws_size));
    // A workspace that held other bytes before (as tests/test_gpu_norms.cpp's
    // does, and any workspace shared with other work).
    if (ws_size > 0) cuda(gpu::runtime().Memset(ws.get(), 0xff, ws.size()), "cudaMemset");
    cudnnfe_handle_t *h = test_handle();
    const TensorInfo t = describe(g.get(), gpu_dscale);
    // The API: an explicit CAPTURE is refused, naming the rule.
    cudnnfe_bind_options_t o;
    cudnnfe_bind_options_init(&o);
    o.cuda_graph = CUDNNFE_CUDA_GRAPH_CAPTURE;
    cudnnfe_bound_t *bound = nullptr;
    CHECK_FAILS(cudnnfe_graph_bind(&bound, g.get(), h, b.ptrs.data(), b.ptrs.size(), ws.get(),
                                   ws.size(), &o),
                CUDNNFE_STATUS_NOT_SUPPORTED, "stream capture", "CUDNNFE_CUDA_GRAPH_OFF");
    // AUTO: no CUDA graph where the plan has no native population; right.
    o.cuda_graph = CUDNNFE_CUDA_GRAPH_AUTO;
    ok(cudnnfe_graph_bind(&bound, g.get(), h, b.ptrs.data(), b.ptrs.size(), ws.get(), ws.size(),
                          &o),
       "bind (AUTO)");
    cudnnfe_cuda_graph_mode_t mode = -1;
    ok(cudnnfe_bound_get_cuda_graph_mode(bound, &mode), "get_cuda_graph_mode");
    CHECK(mode == CUDNNFE_CUDA_GRAPH_OFF || mode == CUDNNFE_CUDA_GRAPH_NATIVE);
    refill(g.get(), order, b, rng);
    ok(cudnnfe_bound_execute(bound, nullptr), "bound execute (AUTO)");
    cudnnfe_bound_destroy(bound);
    check_output("bound AUTO: dscale", cpu.get(), t, b, 1e-3);
    if (mode == CUDNNFE_CUDA_GRAPH_NATIVE) return;  // no capture to show
    // The library's capture itself, past the API's refusal.
    cudnnfe::Handle &handle = cudnnfe::handle_of(h);
    const cudnnfe::Plan &plan = cudnnfe::graph_of(g.get()).plan();
    std::unique_ptr<cudnnfe::BoundRun> captured =
        plan.bind(handle, b.ptrs.data(), b.ptrs.size(), ws.get(), CUDNNFE_CUDA_GRAPH_CAPTURE);
    refill(g.get(), order, b, rng);
    captured->run(handle, nullptr);
    cuda(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
    Bytes got(t.bytes);
    cuda(gpu::runtime().Memcpy(got.data(), b.ptrs[b.out], t.bytes, gpu::kDeviceToHost),
         "cudaMemcpy");
    std::vector<void *> cpu_ptrs;
    for (Bytes &hb : b.host) cpu_ptrs.push_back(hb.data());
    ok(cudnnfe_graph_execute_ordered(cpu.get(), h, cpu_ptrs.data(), cpu_ptrs.size(), nullptr, 0,
                                     nullptr),
       "CPU reference execute");
    const Errors e = compare(t, got, b.host[b.out], 1e-3, NonFinite::kAlwaysBad);
    std::printf(
        "    captured past the refusal (for the record): dscale %lld of %lld elements "
        "off (max abs %.3g)\n",
        static_cast<long long>(e.bad), static_cast<long long>(e.compared), e.max_abs);
  } catch (const Failure &f) {
    std::printf("  gpu_capture_known_wrong_instancenorm_backward: %s\n", f.what());
    ++testing::state().failures;
  }
}
