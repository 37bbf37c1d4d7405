// bench_plans: what getting a plan costs, and what running one costs.
//
// Build table, per graph (matmul 8192^3 BFLOAT16; conv 3x3 64->64 56x56
// N=32 NHWC HALF): a cold build in a fresh process (first graph, then a
// second distinct shape) split by stage, an in-process plan cache hit, the
// load of a serialized plan, and a persistent-cache hit in a new process
// (also after cuDNN has been used once in it: its first use loads engine
// libraries, a cost no plan cache removes; and with cudnnfe's preload of
// those libraries, building at once or after 1 s of other start-up work).
// Autotune table: the heuristics' first choice against the autotuned plan.
// Execute table: host microseconds per call over back-to-back calls (median
// and p99) for raw cudnnBackendExecute on the same plan (variant pack made
// once, and made per call), cudnnfe_graph_execute, _execute_ordered,
// cudnnfe_bound_execute (plain, and replaying a CUDA graph), and a CUDA
// graph replay; plus GPU time per call and TFLOP/s.
//
// usage: bench_plans [--iters N] [--matmul-iters N] [--cases matmul,conv,sdpa]
// (children: bench_plans --child <case> <cold|disk|disk-warm> <cache dir>)
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "api/objects.h"
#include "backend/descriptor.h"
#include "backend/device.h"
#include "backend/gpu_plan.h"
#include "backend/loader.h"
#include "cudnnfe/cudnnfe.h"

using namespace cudnnfe;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_plans: %s\n", what.c_str());
  std::fflush(stdout);
  std::exit(1);
}

void ok(cudnnfe_status_t status, const char *what, cudnnfe_graph_t *g = nullptr) {
  if (status != CUDNNFE_STATUS_OK)
    die(std::string(what) + ": " + cudnnfe_status_name(status) + ": " +
        (g ? cudnnfe_graph_last_error(g) : cudnnfe_last_error()));
}

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// ---- CUDA runtime (the library's loader, plus graph and stream calls) ----

struct Cuda {
  int (*StreamCreate)(void **) = nullptr;
  int (*GraphCreate)(void **, unsigned) = nullptr;
  int (*GraphInstantiateWithFlags)(void **, void *, unsigned long long) = nullptr;
  int (*GraphLaunch)(void *, void *) = nullptr;
  int (*StreamBeginCapture)(void *, int) = nullptr;
  int (*StreamEndCapture)(void *, void **) = nullptr;
};

const Cuda &cuda() {
  static const Cuda api = [] {
    Cuda c;
    void *lib = dlopen(backend::cudart().path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!lib) die("libcudart is not loaded");
    auto sym = [&](const char *name, auto *slot) {
      *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(lib, name));
      if (!*slot) die(std::string("libcudart lacks ") + name);
    };
    sym("cudaStreamCreate", &c.StreamCreate);
    sym("cudaGraphCreate", &c.GraphCreate);
    sym("cudaGraphInstantiateWithFlags", &c.GraphInstantiateWithFlags);
    sym("cudaGraphLaunch", &c.GraphLaunch);
    sym("cudaStreamBeginCapture", &c.StreamBeginCapture);
    sym("cudaStreamEndCapture", &c.StreamEndCapture);
    return c;
  }();
  return api;
}

void *device_alloc(size_t bytes) {
  void *p = nullptr;
  if (backend::cudart().Malloc(&p, std::max<size_t>(bytes, 256)) != cudaSuccess)
    die("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
  backend::cudart().Memset(p, 0x3c, bytes);  // finite values in every type
  return p;
}

void sync(void *stream) {
  backend::cudart().StreamSynchronize(static_cast<cudaStream_t>(stream));
}

// ---- the graphs ----

struct Case {
  std::string name;
  std::string title;
  int64_t variant = 0;  // 0: the benchmarked shape; 1: a second distinct shape
  double flops = 0;
};

struct Built {
  cudnnfe_graph_t *g = nullptr;
  std::vector<int64_t> inputs;
  int64_t output = 0;
};

// matmul: [1,M,K] @ [1,K,N] BFLOAT16, M = N = K = 8192 (variant 1: M = 4096).
// conv: 3x3, 64 -> 64 channels, 56x56, N = 32 (variant 1: N = 16), NHWC HALF.
// sdpa: causal, b = 1, h_q = 64, h_kv = 8, s = 8192 (variant 1: 4096),
// d = 128, BFLOAT16, BSHD storage, inference (no stats).
Built make_graph(const std::string &which, int variant) {
  Built b;
  ok(cudnnfe_graph_create(&b.g), "cudnnfe_graph_create");
  cudnnfe_graph_set_compute_dtype(b.g, CUDNNFE_DTYPE_FLOAT);
  int64_t x = 0, w = 0;
  if (which == "sdpa") {
    const int64_t s = variant ? 4096 : 8192, d = 128, h_q = 64, h_kv = 8;
    cudnnfe_graph_set_io_dtype(b.g, CUDNNFE_DTYPE_BFLOAT16);
    const int64_t qd[4] = {1, h_q, s, d}, qs[4] = {s * h_q * d, d, h_q * d, 1};
    const int64_t kd[4] = {1, h_kv, s, d}, ks[4] = {s * h_kv * d, d, h_kv * d, 1};
    int64_t v = 0;
    ok(cudnnfe_graph_add_tensor(b.g, "q", CUDNNFE_DTYPE_BFLOAT16, 4, qd, qs, &x), "tensor");
    ok(cudnnfe_graph_add_tensor(b.g, "k", CUDNNFE_DTYPE_BFLOAT16, 4, kd, ks, &w), "tensor");
    ok(cudnnfe_graph_add_tensor(b.g, "v", CUDNNFE_DTYPE_BFLOAT16, 4, kd, ks, &v), "tensor");
    cudnnfe_sdpa_options_t o;
    cudnnfe_sdpa_options_init(&o);
    o.causal_mask = 1;
    ok(cudnnfe_graph_add_sdpa(b.g, x, w, v, &o, &b.output, nullptr), "sdpa", b.g);
    ok(cudnnfe_tensor_set_output(b.g, b.output, 1), "set_output", b.g);
    b.inputs = {x, w, v};
    return b;
  }
  if (which == "matmul") {
    const int64_t m = variant ? 4096 : 8192, n = 8192, k = 8192;
    cudnnfe_graph_set_io_dtype(b.g, CUDNNFE_DTYPE_BFLOAT16);
    const int64_t ad[3] = {1, m, k}, bd[3] = {1, k, n};
    ok(cudnnfe_graph_add_tensor(b.g, "a", CUDNNFE_DTYPE_BFLOAT16, 3, ad, nullptr, &x), "tensor");
    ok(cudnnfe_graph_add_tensor(b.g, "b", CUDNNFE_DTYPE_BFLOAT16, 3, bd, nullptr, &w), "tensor");
    ok(cudnnfe_graph_add_matmul(b.g, x, w, nullptr, &b.output), "matmul", b.g);
  } else {
    const int64_t n = variant ? 16 : 32, c = 64, h = 56, k = 64;
    cudnnfe_graph_set_io_dtype(b.g, CUDNNFE_DTYPE_HALF);
    const int64_t xd[4] = {n, c, h, h}, xs[4] = {c * h * h, 1, h * c, c};
    const int64_t wd[4] = {k, c, 3, 3}, ws[4] = {c * 9, 1, 3 * c, c};
    ok(cudnnfe_graph_add_tensor(b.g, "x", CUDNNFE_DTYPE_HALF, 4, xd, xs, &x), "tensor");
    ok(cudnnfe_graph_add_tensor(b.g, "w", CUDNNFE_DTYPE_HALF, 4, wd, ws, &w), "tensor");
    cudnnfe_conv_options_t o;
    cudnnfe_conv_options_init(&o);
    o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
    ok(cudnnfe_graph_add_conv_fprop(b.g, x, w, &o, &b.output), "conv", b.g);
  }
  ok(cudnnfe_tensor_set_output(b.g, b.output, 1), "set_output", b.g);
  b.inputs = {x, w};
  return b;
}

double flops_of(const std::string &which) {
  if (which == "sdpa") return 4.0 * 64 * 8192.0 * 8192 * 128 / 2;  // causal: half
  return which == "matmul" ? 2.0 * 8192 * 8192 * 8192 : 2.0 * 32 * 64 * 64 * 9 * 56 * 56;
}

const char *title_of(const std::string &which) {
  if (which == "sdpa") return "causal SDPA b1 h64/8 s8192 d128 BF16";
  return which == "matmul" ? "matmul 8192^3 BF16" : "conv 3x3 64->64 56x56 N=32 NHWC FP16";
}

// PyTorch's GPU time for the same work (bench/torch_kernels.py, run in a
// child Python), or a reason it is not available.
std::string torch_kernel(const std::string &which) {
  const std::string command =
      std::string("python3 ") + CUDNNFE_BENCH_DIR + "/torch_kernels.py " + which + " 2>&1";
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) return "PyTorch: not run (popen failed)";
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof(buffer), pipe)) out += buffer;
  const int status = pclose(pipe);
  const size_t at = out.find("RESULT ");
  if (status != 0 || at == std::string::npos)
    return "PyTorch: not measured (" + out.substr(0, 200) + ")";
  const size_t end = out.find('\n', at);
  const std::string fields = out.substr(at + 7, end == std::string::npos ? end : end - at - 7);
  const size_t bar = fields.find(' ');
  const double ms = std::atof(fields.substr(0, bar).c_str());
  char line[512];
  std::snprintf(line, sizeof(line), "PyTorch %s: %.4f ms = %.1f TFLOP/s",
                bar == std::string::npos ? "" : fields.substr(bar + 1).c_str(), ms,
                flops_of(which) / (ms * 1e9));
  return line;
}

size_t bytes_of(cudnnfe_graph_t *g, int64_t uid) {
  int64_t dims[8], strides[8];
  int32_t rank = 0;
  cudnnfe_tensor_get_shape(g, uid, dims, strides, 8, &rank);
  cudnnfe_dtype_t dtype = 0;
  cudnnfe_tensor_get_dtype(g, uid, &dtype);
  int64_t span = 1;
  for (int i = 0; i < rank; ++i) span += (dims[i] - 1) * strides[i];
  return static_cast<size_t>(span) * cudnnfe_dtype_size(dtype);
}

cudnnfe_build_options_t options(bool cache, const char *dir = "") {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_GPU;
  o.disable_plan_cache = cache ? 0 : 1;
  o.plan_cache_dir = dir;
  return o;
}

cudnnfe_build_info_t info_of(cudnnfe_graph_t *g) {
  cudnnfe_build_info_t i;
  cudnnfe_build_info_init(&i);
  ok(cudnnfe_graph_get_build_info(g, &i), "build info", g);
  return i;
}

// Wall time of one build and the library's stage split.
struct BuildTime {
  double wall_ms = 0;
  cudnnfe_build_info_t info{};
};

BuildTime timed_build(cudnnfe_graph_t *g, cudnnfe_handle_t *h, const cudnnfe_build_options_t &o) {
  BuildTime t;
  const Clock::time_point start = Clock::now();
  ok(cudnnfe_graph_build(g, h, &o), "build", g);
  t.wall_ms = ms_since(start);
  t.info = info_of(g);
  return t;
}

std::string stages(const cudnnfe_build_info_t &i) {
  char buf[200];
  std::snprintf(buf, sizeof(buf),
                "validate %.3f | lower+opgraph %.3f | heuristics %.3f | "
                "check+plan %.3f | cache %.3f",
                i.validate_ms, i.lower_ms, i.heuristics_ms, i.plan_build_ms, i.cache_ms);
  return buf;
}

// Makes the CUDA context and loads cuDNN, so that child timings measure the
// build and not process start-up.
cudnnfe_handle_t *warm_process() {
  int32_t count = 0;
  ok(cudnnfe_device_count(&count), "device_count");
  if (count == 0) die("no CUDA device");
  int64_t version = 0;
  ok(cudnnfe_cudnn_version(&version), "cudnn_version");
  void *p = device_alloc(256);
  backend::cudart().Free(p);
  cudnnfe_handle_t *h = nullptr;
  ok(cudnnfe_handle_create(&h, -1), "handle_create");
  backend::GpuPlan::raw_handle(handle_of(h));  // its cuDNN handle, now
  return h;
}

// ---- children: fresh processes ----

// The "1 s start-up" rows: a program that makes its handle, then spends this
// long on other work (reading weights, allocating) before its first build.
constexpr int kStartupGapMs = 1000;

int child(const std::string &which, const std::string &mode, const std::string &dir) {
  cudnnfe_handle_t *h = warm_process();
  if (const char *gap = std::getenv("BENCH_PLANS_GAP_MS"))
    usleep(static_cast<useconds_t>(std::atoi(gap)) * 1000);
  if (mode == "cold") {
    Built first = make_graph(which, 0), second = make_graph(which, 1);
    const BuildTime a = timed_build(first.g, h, options(false));
    const BuildTime b = timed_build(second.g, h, options(false));
    std::printf("RESULT first=%.3f second=%.3f\n", a.wall_ms, b.wall_ms);
    std::printf("STAGES1 %s\nSTAGES2 %s\n", stages(a.info).c_str(), stages(b.info).c_str());
  } else {
    if (mode == "disk-warm") {
      // cuDNN loads its engine libraries and kernels on first use in a
      // process; a different shape built first pays for that.
      Built other = make_graph(which, 1);
      timed_build(other.g, h, options(false));
    }
    Built g = make_graph(which, 0);
    const BuildTime t = timed_build(g.g, h, options(true, dir.c_str()));
    std::printf("RESULT first=%.3f source=%d\nSTAGES1 %s\n", t.wall_ms, t.info.source,
                stages(t.info).c_str());
  }
  return 0;
}

// How a child process starts: with or without cudnnfe's engine preload
// (started by cudnnfe_handle_create), and how long it works on other things
// (sleeps) between making its handle and its first build.
struct ChildStart {
  bool preload = false;
  int gap_ms = 0;
};

std::map<std::string, std::string> run_child(const std::string &which, const std::string &mode,
                                             const std::string &dir, ChildStart how = {}) {
  int fds[2];
  if (pipe(fds) != 0) die("pipe");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    setenv("CUDNNFE_PRELOAD", how.preload ? "1" : "0", 1);
    setenv("BENCH_PLANS_GAP_MS", std::to_string(how.gap_ms).c_str(), 1);
    // The preload warms the in-process cache from this directory (docs/plans.md).
    if (how.preload && !dir.empty())
      setenv("CUDNNFE_PLAN_CACHE_DIR", dir.c_str(), 1);
    else
      unsetenv("CUDNNFE_PLAN_CACHE_DIR");
    execl("/proc/self/exe", "bench_plans", "--child", which.c_str(), mode.c_str(), dir.c_str(),
          static_cast<char *>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buffer[1024];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) die("child failed: " + out);
  std::map<std::string, std::string> result;
  size_t start = 0;
  while (start < out.size()) {
    size_t end = out.find('\n', start);
    if (end == std::string::npos) end = out.size();
    const std::string line = out.substr(start, end - start);
    start = end + 1;
    const size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    const std::string key = line.substr(0, space), rest = line.substr(space + 1);
    if (key == "RESULT") {
      size_t p = 0;
      while (p < rest.size()) {
        size_t q = rest.find(' ', p);
        if (q == std::string::npos) q = rest.size();
        const std::string kv = rest.substr(p, q - p);
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) result[kv.substr(0, eq)] = kv.substr(eq + 1);
        p = q + 1;
      }
    } else {
      result[key] = rest;
    }
  }
  return result;
}

// ---- execute timing ----

struct CallStats {
  double median_us = 0, p99_us = 0;
  int calls = 0;
};

CallStats time_calls(int calls, void *stream, const std::function<void()> &call) {
  for (int i = 0; i < std::min(calls, 50); ++i) call();  // warm-up
  sync(stream);
  std::vector<double> us;
  us.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    if (i % 64 == 0) sync(stream);  // keep the launch queue from filling
    const Clock::time_point start = Clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  sync(stream);
  std::sort(us.begin(), us.end());
  CallStats s;
  s.calls = calls;
  s.median_us = us[us.size() / 2];
  s.p99_us = us[std::min(us.size() - 1, static_cast<size_t>(us.size() * 0.99))];
  return s;
}

// GPU milliseconds per call of `call`, from CUDA events around a batch.
double gpu_ms(void *stream, int batch, const std::function<void()> &call) {
  const backend::CudartApi &rt = backend::cudart();
  cudaEvent_t start, stop;
  rt.EventCreate(&start);
  rt.EventCreate(&stop);
  call();
  sync(stream);
  rt.EventRecord(start, static_cast<cudaStream_t>(stream));
  for (int i = 0; i < batch; ++i) call();
  rt.EventRecord(stop, static_cast<cudaStream_t>(stream));
  rt.EventSynchronize(stop);
  float ms = 0;
  rt.EventElapsedTime(&ms, start, stop);
  rt.EventDestroy(start);
  rt.EventDestroy(stop);
  return ms / batch;
}

struct ExecRow {
  std::string what;
  CallStats stats;
};

// ---- one case ----

void bench_case(const std::string &which, int iters, cudnnfe_handle_t *h, void *stream,
                std::vector<std::string> &build_lines, std::vector<std::string> &tune_lines,
                std::vector<std::string> &exec_lines) {
  const std::string title = title_of(which);
  char line[512];

  // Cold builds in a fresh process.
  const auto cold = run_child(which, "cold", "");
  const double cold_first = std::atof(cold.at("first").c_str());
  const double cold_second = std::atof(cold.at("second").c_str());

  // In this process: a cache-enabled build (a miss) and hits.
  cudnnfe_plan_cache_clear();
  Built base = make_graph(which, 0);
  const BuildTime miss = timed_build(base.g, h, options(true));
  std::vector<double> hits;
  for (int i = 0; i < 50; ++i) {
    Built again = make_graph(which, 0);
    const BuildTime t = timed_build(again.g, h, options(true));
    if (t.info.source != CUDNNFE_PLAN_SOURCE_MEMORY_CACHE) die("expected a memory-cache hit");
    hits.push_back(t.wall_ms);
    cudnnfe_graph_destroy(again.g);
  }
  std::sort(hits.begin(), hits.end());
  const double hit_ms = hits[hits.size() / 2];

  // Serialized plan load.
  size_t size = 0;
  ok(cudnnfe_graph_serialize_plan(base.g, nullptr, 0, &size), "serialize_plan", base.g);
  std::string blob(size, '\0');
  ok(cudnnfe_graph_serialize_plan(base.g, blob.data(), size, &size), "serialize_plan", base.g);
  std::vector<double> loads;
  cudnnfe_build_info_t load_info{};
  for (int i = 0; i < 10; ++i) {
    cudnnfe_graph_t *g = nullptr;
    cudnnfe_graph_create(&g);
    const Clock::time_point start = Clock::now();
    ok(cudnnfe_graph_deserialize_plan(g, h, blob.data(), blob.size(), nullptr), "deserialize_plan",
       g);
    loads.push_back(ms_since(start));
    load_info = info_of(g);
    cudnnfe_graph_destroy(g);
  }
  std::sort(loads.begin(), loads.end());
  const double load_ms = loads[loads.size() / 2];

  // Persistent cache: one process writes, a new one reads.
  char dir_template[] = "/tmp/bench_plans_cache_XXXXXX";
  if (!mkdtemp(dir_template)) die("mkdtemp");
  const std::string dir = dir_template;
  const auto writer = run_child(which, "disk", dir);
  const auto reader = run_child(which, "disk", dir);
  const auto warm_reader = run_child(which, "disk-warm", dir);
  if (writer.at("source") != "1" || reader.at("source") != "3")
    die("persistent cache: expected sources 1 then 3, got " + writer.at("source") + " and " +
        reader.at("source"));
  const double disk_ms = std::atof(reader.at("first").c_str());
  const double warm_disk_ms = std::atof(warm_reader.at("first").c_str());
  const auto preload_now = run_child(which, "disk", dir, {true, 0});
  const auto preload_gap = run_child(which, "disk", dir, {true, kStartupGapMs});
  const auto cold_gap = run_child(which, "cold", "", {true, kStartupGapMs});
  std::system(("rm -rf " + dir).c_str());

  // Speed-up against the cold build of the same kind: in a fresh process
  // for the new-process rows, in a warm process (2nd shape) for the others.
  auto row = [&](const char *what, double ms, const std::string &detail, bool fresh = false) {
    std::snprintf(line, sizeof(line), "| %-38s | %-36s | %10.3f | %7.1fx%s | %s", title.c_str(),
                  what, ms, (fresh ? cold_first : cold_second) / ms, fresh ? "F" : " ",
                  detail.c_str());
    build_lines.push_back(line);
  };
  row("cold build, fresh process, 1st graph", cold_first, cold.at("STAGES1"), true);
  row("cold build, same process, 2nd shape", cold_second, cold.at("STAGES2"));
  row("cache miss, 1st build of bench process", miss.wall_ms, stages(miss.info));
  char p90[64];
  std::snprintf(p90, sizeof(p90), "p90 %.3f ms, max %.3f ms", hits[45], hits.back());
  row("in-process cache hit (median of 50)", hit_ms, p90);
  row("serialized plan load (median of 10)", load_ms, stages(load_info));
  row("persistent-cache hit, new process", disk_ms, reader.at("STAGES1"), true);
  row("same, after cuDNN's first use there", warm_disk_ms, warm_reader.at("STAGES1"));
  // Source 2: the preload's warm-up had the plan in memory; 3: read from disk.
  auto with_source = [](const std::map<std::string, std::string> &r) {
    return r.at("STAGES1") + " | source " + r.at("source");
  };
  row("persistent hit, preload, build at once", std::atof(preload_now.at("first").c_str()),
      with_source(preload_now), true);
  row("persistent hit, preload, 1 s start-up", std::atof(preload_gap.at("first").c_str()),
      with_source(preload_gap), true);
  row("cold build, preload, 1 s start-up", std::atof(cold_gap.at("first").c_str()),
      cold_gap.at("STAGES1"), true);

  // Autotune: every plan of POLICY_ALL timed; the heuristics' choice is plan 0.
  {
    Built all = make_graph(which, 0);
    cudnnfe_build_options_t o = options(false);
    o.policy = CUDNNFE_BUILD_POLICY_ALL;
    // Attention engines are all runtime-compiled: keep them for SDPA.
    o.exclude_behavior_notes = which == "sdpa" ? 0 : CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
    o.max_plans = which == "sdpa" ? 8 : 16;
    const BuildTime t = timed_build(all.g, h, o);
    const Clock::time_point start = Clock::now();
    ok(cudnnfe_graph_autotune(all.g, h, nullptr, 0, nullptr, 0, stream, nullptr), "autotune",
       all.g);
    const double tune_ms = ms_since(start);
    int64_t count = 0, chosen = 0;
    cudnnfe_graph_get_plan_count(all.g, &count);
    cudnnfe_graph_get_selected_plan(all.g, &chosen);
    cudnnfe_plan_info_t first, best;
    cudnnfe_plan_info_init(&first);
    cudnnfe_plan_info_init(&best);
    cudnnfe_graph_get_plan_info(all.g, 0, &first);
    cudnnfe_graph_get_plan_info(all.g, chosen, &best);
    const double flops = flops_of(which);
    std::snprintf(line, sizeof(line),
                  "| %-38s | %5lld | %8.1f | %8.1f | %-26s %8.4f ms %6.1f TFLOP/s | %-26s %8.4f "
                  "ms %6.1f TFLOP/s |",
                  title.c_str(), static_cast<long long>(count), t.wall_ms, tune_ms, first.name,
                  first.autotune_time_ms, flops / (first.autotune_time_ms * 1e9), best.name,
                  best.autotune_time_ms, flops / (best.autotune_time_ms * 1e9));
    tune_lines.push_back(line);
    cudnnfe_graph_destroy(all.g);
  }

  // Execute overhead, on the heuristics' plan (`base`).
  std::vector<void *> buffers;
  for (int64_t uid : base.inputs) buffers.push_back(device_alloc(bytes_of(base.g, uid)));
  void *out = device_alloc(bytes_of(base.g, base.output));
  int64_t ws_size = 0;
  cudnnfe_graph_get_workspace_size(base.g, &ws_size);
  void *ws = ws_size ? device_alloc(static_cast<size_t>(ws_size)) : nullptr;
  std::vector<cudnnfe_binding_t> bindings;
  for (size_t i = 0; i < base.inputs.size(); ++i) bindings.push_back({base.inputs[i], buffers[i]});
  bindings.push_back({base.output, out});
  size_t bound = 0;
  cudnnfe_graph_get_bound_uids(base.g, nullptr, 0, &bound);
  std::vector<int64_t> order(bound);
  cudnnfe_graph_get_bound_uids(base.g, order.data(), bound, &bound);
  std::vector<void *> ordered;
  for (int64_t uid : order)
    for (const cudnnfe_binding_t &b : bindings)
      if (b.uid == uid) ordered.push_back(b.data);

  const auto &plan = dynamic_cast<const backend::GpuPlan &>(graph_of(base.g).plan());
  const backend::PlanSet &set = plan.set();
  cudnnHandle_t raw_handle = static_cast<cudnnHandle_t>(backend::GpuPlan::raw_handle(handle_of(h)));
  cudnnBackendDescriptor_t raw_plan = static_cast<cudnnBackendDescriptor_t>(plan.raw_plan());
  const backend::CudnnApi &dnn = backend::cudnn();
  auto make_pack = [&]() {
    void *table[kMaxBoundTensors + backend::kMaxScalars];
    void *backend_ws = set.bind(ordered.data(), ws, table);
    for (size_t i = 0; i < set.scalars.size(); ++i)
      table[set.bound_count + i] = const_cast<unsigned char *>(set.scalars[i].bytes);
    backend::Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    const int64_t n = static_cast<int64_t>(set.uids.size());
    pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, set.uids.data(), n);
    pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, table, n);
    pack.set_pointers(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &backend_ws, 1);
    pack.finalize();
    return pack;
  };
  const backend::Descriptor pack = make_pack();
  auto raw = [&] {
    if (dnn.BackendExecute(raw_handle, raw_plan, pack.get()) != CUDNN_STATUS_SUCCESS)
      die("cudnnBackendExecute failed");
  };
  auto raw_with_pack = [&] {
    const backend::Descriptor per_call = make_pack();
    if (dnn.BackendExecute(raw_handle, raw_plan, per_call.get()) != CUDNN_STATUS_SUCCESS)
      die("cudnnBackendExecute failed");
  };
  auto abi = [&] {
    ok(cudnnfe_graph_execute(base.g, h, bindings.data(), bindings.size(), ws,
                             static_cast<size_t>(ws_size), stream),
       "execute");
  };
  auto abi_ordered = [&] {
    ok(cudnnfe_graph_execute_ordered(base.g, h, ordered.data(), ordered.size(), ws,
                                     static_cast<size_t>(ws_size), stream),
       "execute_ordered");
  };
  abi();  // sets the handle's stream, which the raw calls then share
  sync(stream);

  // Bound executions (cudnnfe_graph_bind): the variant pack made at bind;
  // and the same with a CUDA graph recorded at bind and replayed per call
  // (AUTO: cuDNN's native population where the plan supports it, else
  // stream capture).
  cudnnfe_bind_options_t bind_options;
  cudnnfe_bind_options_init(&bind_options);
  cudnnfe_bound_t *bound_plain = nullptr, *bound_graph = nullptr;
  ok(cudnnfe_graph_bind(&bound_plain, base.g, h, ordered.data(), ordered.size(), ws,
                        static_cast<size_t>(ws_size), &bind_options),
     "cudnnfe_graph_bind");
  bind_options.cuda_graph = CUDNNFE_CUDA_GRAPH_AUTO;
  std::string bound_how;
  if (cudnnfe_graph_bind(&bound_graph, base.g, h, ordered.data(), ordered.size(), ws,
                         static_cast<size_t>(ws_size), &bind_options) != CUDNNFE_STATUS_OK) {
    bound_how = std::string("refused: ") + cudnnfe_handle_last_error(h);
    bound_graph = nullptr;
  } else {
    cudnnfe_cuda_graph_mode_t mode = 0;
    cudnnfe_bound_get_cuda_graph_mode(bound_graph, &mode);
    bound_how = mode == CUDNNFE_CUDA_GRAPH_NATIVE ? "native populate" : "stream capture";
  }
  auto bound_run = [&] { ok(cudnnfe_bound_execute(bound_plain, stream), "cudnnfe_bound_execute"); };
  auto bound_replay = [&] {
    ok(cudnnfe_bound_execute(bound_graph, stream), "cudnnfe_bound_execute (CUDA graph)");
  };

  // A CUDA graph: cuDNN's native population when the plan supports it, else
  // stream capture of cudnnfe_graph_execute.
  void *graph = nullptr, *exec = nullptr;
  std::string how = "stream capture";
  cudnnfe_plan_info_t info;
  cudnnfe_plan_info_init(&info);
  cudnnfe_graph_get_plan_info(base.g, 0, &info);
  if (info.behavior_notes & CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API) {
    cuda().GraphCreate(&graph, 0);
    if (cudnnfe_graph_populate_cuda_graph(base.g, h, bindings.data(), bindings.size(), ws,
                                          static_cast<size_t>(ws_size), graph) == CUDNNFE_STATUS_OK)
      how = "native populate";
    else
      graph = nullptr;
  }
  if (!graph) {
    if (cuda().StreamBeginCapture(stream, 1) != 0) die("cudaStreamBeginCapture failed");
    abi();
    if (cuda().StreamEndCapture(stream, &graph) != 0 || !graph) die("stream capture failed");
  }
  if (cuda().GraphInstantiateWithFlags(&exec, graph, 0) != 0) die("cudaGraphInstantiate failed");
  auto replay = [&] {
    if (cuda().GraphLaunch(exec, stream) != 0) die("cudaGraphLaunch failed");
  };

  // cuDNN's native CUDA graph API needs a plan that supports it; when the
  // heuristics' plan does not, a second graph asks for one (often a
  // runtime-compiled engine: another plan, timed separately).
  std::string native_note;
  std::function<void()> native_replay;
  void *native_exec = nullptr;
  Built native{};
  void *native_out = nullptr;
  if (how != "native populate") {
    native = make_graph(which, 0);
    cudnnfe_build_options_t o = options(false);
    o.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
    int64_t native_ws = 0;
    void *native_graph = nullptr;
    if (cudnnfe_graph_build(native.g, h, &o) != CUDNNFE_STATUS_OK) {
      native_note = cudnnfe_graph_last_error(native.g);
    } else {
      cudnnfe_graph_get_workspace_size(native.g, &native_ws);
      void *nws = native_ws ? device_alloc(static_cast<size_t>(native_ws)) : nullptr;
      native_out = device_alloc(bytes_of(native.g, native.output));
      std::vector<cudnnfe_binding_t> nb = {{native.inputs[0], buffers[0]},
                                           {native.inputs[1], buffers[1]},
                                           {native.output, native_out}};
      cuda().GraphCreate(&native_graph, 0);
      if (cudnnfe_graph_populate_cuda_graph(native.g, h, nb.data(), nb.size(), nws,
                                            static_cast<size_t>(native_ws),
                                            native_graph) != CUDNNFE_STATUS_OK) {
        native_note = cudnnfe_handle_last_error(h);
      } else if (cuda().GraphInstantiateWithFlags(&native_exec, native_graph, 0) != 0) {
        native_note = "cudaGraphInstantiate failed";
      } else {
        const char *name = "";
        cudnnfe_graph_get_plan_name(native.g, &name);
        native_note = name;
        native_replay = [&] {
          if (cuda().GraphLaunch(native_exec, stream) != 0) die("cudaGraphLaunch failed");
        };
      }
    }
  }

  const int kernel_reps = which == "conv" ? 200 : 20;
  const double kernel_ms = gpu_ms(stream, kernel_reps, abi);
  std::vector<ExecRow> rows = {
      {"raw cudnnBackendExecute (pack made once)", time_calls(iters, stream, raw)},
      {"raw cudnnBackendExecute + pack per call", time_calls(iters, stream, raw_with_pack)},
      {"cudnnfe_graph_execute", time_calls(iters, stream, abi)},
      {"cudnnfe_graph_execute_ordered", time_calls(iters, stream, abi_ordered)},
      {"cudnnfe_bound_execute", time_calls(iters, stream, bound_run)},
      {"CUDA graph replay (" + how + ")", time_calls(iters, stream, replay)},
  };
  if (bound_graph) {
    rows.push_back({"cudnnfe_bound_execute, CUDA graph (" + bound_how + ")",
                    time_calls(iters, stream, bound_replay)});
  } else {
    exec_lines.push_back("| " + title + " | cudnnfe_bound_execute with a CUDA graph " + bound_how);
  }
  if (native_replay) {
    const double native_kernel_ms = gpu_ms(stream, kernel_reps, native_replay);
    rows.push_back({"CUDA graph replay (native populate; plan " + native_note + ")",
                    time_calls(iters, stream, native_replay)});
    std::snprintf(line, sizeof(line), "GPU time per replay of the native-populated graph: %.4f ms",
                  native_kernel_ms);
    native_note = line;
  } else if (!native_note.empty()) {
    native_note = "native CUDA graph API not measured: " + native_note.substr(0, 300);
  }
  for (const ExecRow &r : rows) {
    std::snprintf(line, sizeof(line), "| %-38s | %-44s | %6d | %8.2f | %8.2f | %8.1f |",
                  title.c_str(), r.what.c_str(), r.stats.calls, r.stats.median_us, r.stats.p99_us,
                  r.stats.median_us - rows[0].stats.median_us);
    exec_lines.push_back(line);
  }
  std::snprintf(line, sizeof(line), "| %-38s | GPU time per call (plan %s): %.4f ms = %.1f TFLOP/s",
                title.c_str(), info.name, kernel_ms, flops_of(which) / (kernel_ms * 1e9));
  exec_lines.push_back(line);
  exec_lines.push_back("| " + std::string(title) +
                       std::string(38 - std::min<size_t>(38, title.size()), ' ') + " | " +
                       torch_kernel(which));
  if (!native_note.empty()) {
    std::snprintf(line, sizeof(line), "| %-38s | %s", title.c_str(), native_note.c_str());
    exec_lines.push_back(line);
  }
  cudnnfe_bound_destroy(bound_plain);
  cudnnfe_bound_destroy(bound_graph);
  if (native.g) cudnnfe_graph_destroy(native.g);
  for (void *b : buffers) backend::cudart().Free(b);
  backend::cudart().Free(out);
  if (ws) backend::cudart().Free(ws);
  cudnnfe_graph_destroy(base.g);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 5 && std::string(argv[1]) == "--child") return child(argv[2], argv[3], argv[4]);
  int iters = 10000, matmul_iters = 10000;
  std::vector<std::string> cases = {"matmul", "conv", "sdpa"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--iters") iters = std::atoi(argv[i + 1]);
    if (flag == "--matmul-iters") matmul_iters = std::atoi(argv[i + 1]);
    if (flag == "--cases") {
      cases.clear();
      std::string list = argv[i + 1];
      size_t p = 0;
      while (p <= list.size()) {
        size_t q = list.find(',', p);
        if (q == std::string::npos) q = list.size();
        cases.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    }
  }
  cudnnfe_handle_t *h = warm_process();
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  void *stream = nullptr;
  if (cuda().StreamCreate(&stream) != 0) die("cudaStreamCreate failed");
  std::printf("GPU: %s; cuDNN %lld.%lld.%lld (%s); cudnnfe %u\n",
              backend::describe_device(handle_of(h).device).c_str(),
              static_cast<long long>(version / 10000),
              static_cast<long long>(version % 10000 / 100), static_cast<long long>(version % 100),
              backend::cudnn().path.c_str(), cudnnfe_version());
  std::fflush(stdout);
  std::vector<std::string> build, tune, exec;
  for (const std::string &c : cases) {
    const size_t shown[3] = {build.size(), tune.size(), exec.size()};
    bench_case(c, c == "conv" ? iters : matmul_iters, h, stream, build, tune, exec);
    // Each case's rows as soon as they exist, so a run cut short by a time
    // limit keeps what it measured; the tables below repeat them together.
    std::printf("\n-- %s done:\n", c.c_str());
    const std::vector<std::string> *tables[3] = {&build, &tune, &exec};
    for (int t = 0; t < 3; ++t)
      for (size_t i = shown[t]; i < tables[t]->size(); ++i)
        std::printf("%s\n", (*tables[t])[i].c_str());
    std::fflush(stdout);
  }

  std::printf(
      "\nBuild (wall ms of cudnnfe_graph_build / _deserialize_plan; speed-up vs the cold "
      "build of a 2nd shape in a warm process, or F: vs the cold first build in a fresh "
      "process)\n");
  std::printf("| %-38s | %-36s | %10s | %9s | stages (ms)\n", "graph", "how", "ms", "speed-up");
  for (const std::string &l : build) std::printf("%s\n", l.c_str());
  std::printf(
      "\nAutotune (POLICY_ALL, at most 16 plans without runtime-compiled engines; SDPA: 8 with "
      "them; scratch "
      "buffers; plan 0 is the heuristics' choice)\n");
  std::printf("| %-38s | %5s | %8s | %8s | %-53s | %-53s |\n", "graph", "plans", "build ms",
              "tune ms", "heuristics' choice", "autotuned");
  for (const std::string &l : tune) std::printf("%s\n", l.c_str());
  std::printf("\nExecute (host us per call, back-to-back, stream synchronized every 64 calls)\n");
  std::printf("| %-38s | %-44s | %6s | %8s | %8s | %8s |\n", "graph", "how", "calls", "median",
              "p99", "vs raw");
  for (const std::string &l : exec) std::printf("%s\n", l.c_str());
  cudnnfe_handle_destroy(h);
  return 0;
}
