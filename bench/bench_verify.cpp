// bench_verify: what verify mode (docs/verify.md) adds to the first execute
// of a plan, per family, at realistic sizes:
//   sdpa       b2 h16 s2048 d128 BFLOAT16, BSHD, with stats
//   conv       x 32x64x56x56, w 64x64x3x3, padding 1, HALF, NHWC
//   matmul     4096 x 4096 x 4096 BFLOAT16
//   layernorm  x 8192x4096 BFLOAT16 (FLOAT scale, bias, statistics)
//
// GPU mode (default): each graph is built twice for the GPU, once with
// verify off and once with it on (the second build reuses the first's plan
// from the in-process cache). The verify-off graph runs once to warm up,
// then `--iters` times; the verify-on graph's first execute (which runs
// the check) and second execute (which does not) are timed the same way,
// each synchronized. The table gives the median execute, the first execute
// with verify, the overhead (their difference), the second execute, and
// the check's own line from the library log (bytes read back, its time).
//
// Stub mode (--stub): the same graphs built for the CPU reference and
// given a stub GPU plan (tests/stub): the "GPU" runs nothing and its
// buffers are host memory, so the table shows the check's host cost alone
// (sampling, the sampled CPU reference, copies as memcpy) on any machine.
//
// usage:
//   bench_verify [--cases sdpa,conv,matmul,layernorm] [--iters N] [--samples N]
//   (stub mode, one command line:
//    CUDNNFE_CUDNN_LIBRARY=<build>/tests/stub/lib/libcudnn.so.9
//    CUDNNFE_CUDART_LIBRARY=<build>/tests/stub/lib/libcudart.so.12 bench_verify --stub)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "api/objects.h"
#include "backend/loader.h"
#include "cpu/dtype_convert.h"
#include "cudnnfe/cudnnfe.h"
#include "exec/verify.h"
#include "stub_plan.h"

using namespace cudnnfe;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_verify: %s\n", what.c_str());
  std::exit(1);
}

void ok(cudnnfe_status_t status, const char *what, const char *message = nullptr) {
  if (status == CUDNNFE_STATUS_OK) return;
  die(std::string(what) + ": " + cudnnfe_status_name(status) + ": " +
      (message ? message : cudnnfe_last_error()));
}

struct Options {
  bool stub = false;
  int iters = 5;
  int samples = 0;  // 0: the library's default
  std::vector<std::string> cases = {"sdpa", "conv", "matmul", "layernorm"};
};

// ---------------------------------------------------------------------------
// Graphs

using Dims = std::vector<int64_t>;

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dt, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "add_tensor");
  return uid;
}

void output(cudnnfe_graph_t *g, int64_t uid) {
  ok(cudnnfe_tensor_set_output(g, uid, 1), "set_output");
}

void sdpa(cudnnfe_graph_t *g) {
  const int64_t b = 2, h = 16, s = 2048, d = 128;
  const Dims dims = {b, h, s, d}, bshd = {s * h * d, d, h * d, 1};
  const cudnnfe_dtype_t bf16 = CUDNNFE_DTYPE_BFLOAT16;
  const int64_t q = input(g, "q", bf16, dims, bshd), k = input(g, "k", bf16, dims, bshd),
                v = input(g, "v", bf16, dims, bshd);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "sdpa";
  o.generate_stats = 1;
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, &stats), "add_sdpa");
  ok(cudnnfe_tensor_set_strides(g, out, 4, bshd.data()), "set_strides");
  output(g, out);
  output(g, stats);
}

void conv(cudnnfe_graph_t *g) {
  const Dims xd = {32, 64, 56, 56}, wd = {64, 64, 3, 3};
  auto nhwc = [](const Dims &d) { return Dims{d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]}; };
  const int64_t x = input(g, "x", CUDNNFE_DTYPE_HALF, xd, nhwc(xd));
  const int64_t w = input(g, "w", CUDNNFE_DTYPE_HALF, wd, nhwc(wd));
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.name = "conv";
  o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
  int64_t y = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
  output(g, y);
}

void matmul(cudnnfe_graph_t *g) {
  const int64_t n = 4096;
  const int64_t a = input(g, "a", CUDNNFE_DTYPE_BFLOAT16, {1, n, n});
  const int64_t b = input(g, "b", CUDNNFE_DTYPE_BFLOAT16, {1, n, n});
  cudnnfe_matmul_options_t o;
  cudnnfe_matmul_options_init(&o);
  o.name = "matmul";
  int64_t c = 0;
  ok(cudnnfe_graph_add_matmul(g, a, b, &o, &c), "add_matmul");
  output(g, c);
}

void layernorm(cudnnfe_graph_t *g) {
  const int64_t x = input(g, "x", CUDNNFE_DTYPE_BFLOAT16, {8192, 4096});
  const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 4096});
  const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, {1, 4096});
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "layernorm";
  int64_t y = 0, mean = 0, inv = 0;
  ok(cudnnfe_graph_add_layernorm(g, x, scale, bias, &o, &y, &mean, &inv), "add_layernorm");
  ok(cudnnfe_tensor_set_dtype(g, y, CUDNNFE_DTYPE_BFLOAT16), "set_dtype");
  output(g, y);
  output(g, mean);
  output(g, inv);
}

struct Case {
  const char *name;
  const char *shape;
  void (*build)(cudnnfe_graph_t *);
};

const Case kCases[] = {
    {"sdpa", "b2 h16 s2048 d128 bf16 BSHD", sdpa},
    {"conv", "32x64x56x56 3x3 64->64 fp16 NHWC", conv},
    {"matmul", "4096^3 bf16", matmul},
    {"layernorm", "8192x4096 bf16", layernorm},
};

// ---------------------------------------------------------------------------
// Buffers (device memory, or host memory for the stub) and timing

struct Buffers {
  std::vector<void *> pointers;  // bound UID order
  void *workspace = nullptr;
  size_t workspace_size = 0;
  bool on_device = false;
  ~Buffers() {
    for (void *p : pointers) release(p);
    release(workspace);
  }
  void release(void *p) const {
    if (!p) return;
    if (on_device)
      backend::cudart().Free(p);
    else
      std::free(p);
  }
};

void *allocate(size_t bytes, bool on_device) {
  void *p = nullptr;
  bytes = std::max<size_t>(bytes, 256);
  if (on_device) {
    if (backend::cudart().Malloc(&p, bytes) != cudaSuccess)
      die("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  } else if (!(p = std::calloc(bytes, 1))) {
    die("malloc of " + std::to_string(bytes) + " bytes failed");
  }
  return p;
}

// Inputs get values in [-1, 1) (xorshift), outputs zeros.
void fill(cudnnfe_graph_t *g, int64_t uid, void *buffer, size_t bytes, bool on_device) {
  cudnnfe_tensor_kind_t kind = 0;
  ok(cudnnfe_tensor_get_kind(g, uid, &kind), "get_kind");
  cudnnfe_dtype_t dt = 0;
  ok(cudnnfe_tensor_get_dtype(g, uid, &dt), "get_dtype");
  std::vector<unsigned char> host(bytes, 0);
  if (kind == CUDNNFE_TENSOR_KIND_INPUT) {
    const size_t size = cudnnfe_dtype_size(dt);
    uint64_t state = static_cast<uint64_t>(uid) * 0x9e3779b97f4a7c15ull | 1;
    for (size_t i = 0; i + size <= bytes; i += size) {
      state ^= state << 13, state ^= state >> 7, state ^= state << 17;
      cpu::store_element(&host[i], dt, static_cast<double>(state >> 11) * 0x1p-52 - 1.0);
    }
  }
  if (on_device)
    backend::cudart().Memcpy(buffer, host.data(), bytes, cudaMemcpyHostToDevice);
  else
    std::memcpy(buffer, host.data(), bytes);
}

void make_buffers(cudnnfe_graph_t *g, Buffers &b) {
  size_t count = 0;
  ok(cudnnfe_graph_get_bound_uids(g, nullptr, 0, &count), "get_bound_uids");
  std::vector<int64_t> uids(count);
  ok(cudnnfe_graph_get_bound_uids(g, uids.data(), count, &count), "get_bound_uids");
  for (int64_t uid : uids) {
    int64_t dims[CUDNNFE_MAX_DIMS], strides[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    ok(cudnnfe_tensor_get_shape(g, uid, dims, strides, CUDNNFE_MAX_DIMS, &rank), "get_shape");
    cudnnfe_dtype_t dt = 0;
    ok(cudnnfe_tensor_get_dtype(g, uid, &dt), "get_dtype");
    size_t span = 1;
    for (int32_t i = 0; i < rank; ++i) span += static_cast<size_t>((dims[i] - 1) * strides[i]);
    const size_t bytes = span * cudnnfe_dtype_size(dt);
    b.pointers.push_back(allocate(bytes, b.on_device));
    fill(g, uid, b.pointers.back(), bytes, b.on_device);
  }
  int64_t ws = 0;
  ok(cudnnfe_graph_get_workspace_size(g, &ws), "get_workspace_size");
  b.workspace_size = static_cast<size_t>(ws);
  if (ws > 0) b.workspace = allocate(b.workspace_size, b.on_device);
}

// Milliseconds of one execute, synchronized.
double execute_ms(cudnnfe_graph_t *g, cudnnfe_handle_t *h, const Buffers &b, bool on_device,
                  cudnnfe_status_t *status = nullptr) {
  if (on_device) backend::cudart().DeviceSynchronize();
  const Clock::time_point start = Clock::now();
  const cudnnfe_status_t s = cudnnfe_graph_execute_ordered(
      g, h, b.pointers.data(), b.pointers.size(), b.workspace, b.workspace_size, nullptr);
  if (on_device) backend::cudart().DeviceSynchronize();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (status)
    *status = s;
  else
    ok(s, "execute", cudnnfe_handle_last_error(h));
  return ms;
}

// The check's log line ("verify ... passed: ..." or "not verified: ...").
std::mutex log_mutex;
std::string verify_line;
void collect(cudnnfe_log_level_t, const char *message, void *) {
  std::lock_guard<std::mutex> lock(log_mutex);
  if (std::strstr(message, "passed:") || std::strstr(message, "not verified") ||
      std::strstr(message, "): failed;") || std::strstr(message, "sample and demand"))
    verify_line += std::string(verify_line.empty() ? "" : "\n    ") + message;
}

cudnnfe_graph_t *make_graph(const Case &c, const Options &o, bool verify, cudnnfe_handle_t *h) {
  cudnnfe_graph_t *g = nullptr;
  ok(cudnnfe_graph_create(&g), "graph_create");
  ok(cudnnfe_graph_set_name(g, (std::string(c.name) + (verify ? "_verify" : "")).c_str()),
     "set_name");
  ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "set_intermediate_dtype");
  ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "set_compute_dtype");
  c.build(g);
  cudnnfe_build_options_t b;
  cudnnfe_build_options_init(&b);
  b.target = o.stub ? CUDNNFE_TARGET_CPU_REFERENCE : CUDNNFE_TARGET_GPU;
  b.verify = verify && !o.stub ? CUDNNFE_VERIFY_ON : CUDNNFE_VERIFY_OFF;
  b.verify_samples = o.samples;
  ok(cudnnfe_graph_build(g, o.stub ? nullptr : h, &b), "build", cudnnfe_graph_last_error(g));
  if (o.stub) {
    stub::give_gpu_plan(g);
    VerifySettings settings =
        resolve_verify_settings(verify ? CUDNNFE_VERIFY_ON : CUDNNFE_VERIFY_OFF, o.samples, 0.0);
    attach_verifier(graph_of(g), settings);
  }
  return g;
}

void bench_case(const Case &c, const Options &o, cudnnfe_handle_t *h) {
  const bool on_device = !o.stub;
  cudnnfe_graph_t *plain = make_graph(c, o, false, h);
  cudnnfe_graph_t *checked = make_graph(c, o, true, h);
  Buffers bp, bc;
  bp.on_device = bc.on_device = on_device;
  make_buffers(plain, bp);
  make_buffers(checked, bc);
  execute_ms(plain, h, bp, on_device);  // warm-up
  std::vector<double> times;
  for (int i = 0; i < o.iters; ++i) times.push_back(execute_ms(plain, h, bp, on_device));
  std::sort(times.begin(), times.end());
  const double median = times[times.size() / 2];
  verify_line.clear();
  cudnnfe_status_t status = CUDNNFE_STATUS_OK;
  const double first = execute_ms(checked, h, bc, on_device, &status);
  std::string result = status == CUDNNFE_STATUS_OK ? "ok" : cudnnfe_status_name(status);
  if (status != CUDNNFE_STATUS_OK && !o.stub)
    result += std::string(": ") + cudnnfe_handle_last_error(h);
  if (status == CUDNNFE_STATUS_VERIFY_FAILED && o.stub)
    result += " (expected: the stub computes nothing)";
  // The stub computes nothing, so its check fails (and the failure is
  // reported again): the cost is the same as a pass. On the GPU a failure
  // is reported again too; the table shows the first one.
  cudnnfe_status_t again = CUDNNFE_STATUS_OK;
  const double second = execute_ms(checked, h, bc, on_device, &again);
  const char *plan = nullptr;
  ok(cudnnfe_graph_get_plan_name(checked, &plan), "get_plan_name");
  std::printf("%-10s %-34s %-22s %10.3f %12.3f %12.3f %10.3f  %s\n", c.name, c.shape, plan, median,
              first, first - median, second, result.c_str());
  std::lock_guard<std::mutex> lock(log_mutex);
  std::printf("    %s\n", verify_line.empty() ? "(no verify log line)" : verify_line.c_str());
  std::fflush(stdout);
  cudnnfe_graph_destroy(plain);
  cudnnfe_graph_destroy(checked);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--stub") {
      o.stub = true;
    } else if (arg == "--iters") {
      o.iters = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--samples") {
      o.samples = std::atoi(value().c_str());
    } else if (arg == "--cases") {
      o.cases.clear();
      std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        o.cases.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      die("unknown argument " + arg +
          "; usage: bench_verify [--stub] [--cases a,b] [--iters N] [--samples N]");
    }
  }
  return o;
}

}  // namespace

int main(int argc, char **argv) {
  const Options o = parse(argc, argv);
  ok(cudnnfe_set_log_callback(collect, nullptr, CUDNNFE_LOG_LEVEL_DEBUG), "set_log_callback");
  cudnnfe_handle_t *h = nullptr;
  ok(cudnnfe_handle_create(&h, o.stub ? -1 : 0), "handle_create");
  const char *device = o.stub ? "stub GPU (host memory; the check's host cost only)" : "GPU 0";
  std::printf("bench_verify: %s; samples per output %s\n", device,
              o.samples ? std::to_string(o.samples).c_str() : "default (64)");
  std::printf("%-10s %-34s %-22s %10s %12s %12s %10s  %s\n", "family", "size", "plan", "exec ms",
              "1st+verify", "overhead ms", "2nd ms", "result");
  for (const std::string &name : o.cases) {
    const Case *c = nullptr;
    for (const Case &k : kCases)
      if (name == k.name) c = &k;
    if (!c) die("unknown case " + name + " (sdpa, conv, matmul, layernorm)");
    bench_case(*c, o, h);
  }
  cudnnfe_handle_destroy(h);
  return 0;
}
