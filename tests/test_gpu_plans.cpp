// Plans on the GPU through the C API: build policies and engine filters,
// plan selection, autotune (user buffers and scratch), the plan blob's round
// trip with bit-identical results and its refusal on another GPU or cuDNN,
// the in-process plan cache, the persistent cache shared by two processes,
// and CUDA graphs (cuDNN's native API and stream capture) against direct
// execution.
//
// Without a GPU every case skips with the reason; with one, any failure
// fails. Engines marked NONDETERMINISTIC are excluded wherever results are
// compared bit for bit.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpu_util.h"
#include "harness.h"

namespace {

// ---------------------------------------------------------------------------
// CUDA runtime entry points beyond gpu_util.h's (graphs, streams, capture).

struct CudaExtra {
  int (*GraphCreate)(void **, unsigned) = nullptr;
  int (*GraphInstantiateWithFlags)(void **, void *, unsigned long long) = nullptr;
  int (*GraphLaunch)(void *, void *) = nullptr;
  int (*GraphExecDestroy)(void *) = nullptr;
  int (*GraphDestroy)(void *) = nullptr;
  int (*StreamBeginCapture)(void *, int) = nullptr;
  int (*StreamEndCapture)(void *, void **) = nullptr;
  std::string error;
};

const CudaExtra &cuda() {
  static const CudaExtra api = [] {
    CudaExtra a;
    const char *env = std::getenv("CUDNNFE_CUDART_LIBRARY");
    void *lib = nullptr;
    for (const char *name : {env && *env ? env : "libcudart.so.13", "libcudart.so.12"})
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      a.error = "libcudart could not be loaded";
      return a;
    }
    auto sym = [&](const char *name, auto *slot) {
      *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(lib, name));
      if (!*slot) a.error += std::string(a.error.empty() ? "libcudart lacks " : ", ") + name;
    };
    sym("cudaGraphCreate", &a.GraphCreate);
    sym("cudaGraphInstantiateWithFlags", &a.GraphInstantiateWithFlags);
    sym("cudaGraphLaunch", &a.GraphLaunch);
    sym("cudaGraphExecDestroy", &a.GraphExecDestroy);
    sym("cudaGraphDestroy", &a.GraphDestroy);
    sym("cudaStreamBeginCapture", &a.StreamBeginCapture);
    sym("cudaStreamEndCapture", &a.StreamEndCapture);
    return a;
  }();
  return api;
}

bool gpu_ready(std::string *skip) {
  int32_t count = 0;
  if (cudnnfe_device_count(&count) != CUDNNFE_STATUS_OK || count == 0) {
    *skip = "no CUDA device (cudnnfe_device_count is 0)";
    return false;
  }
  int64_t version = 0;
  if (cudnnfe_cudnn_version(&version) != CUDNNFE_STATUS_OK) {
    std::printf("  a GPU is present but cuDNN is unavailable: %s\n", cudnnfe_last_error());
    ++testing::state().failures;
    return false;
  }
  for (const std::string &error : {gpu::runtime().error, cuda().error}) {
    if (!error.empty()) {
      std::printf("  a GPU is present but the tests cannot use libcudart: %s\n", error.c_str());
      ++testing::state().failures;
      return false;
    }
  }
  return true;
}

#define REQUIRE_GPU()                                \
  do {                                               \
    std::string skip_reason_;                        \
    if (!gpu_ready(&skip_reason_)) {                 \
      if (!skip_reason_.empty()) SKIP(skip_reason_); \
      return;                                        \
    }                                                \
  } while (0)

// ---------------------------------------------------------------------------
// Problems: a graph, its inputs (host and device) and its output.

struct GraphPtr {
  cudnnfe_graph_t *g = nullptr;
  GraphPtr() { cudnnfe_graph_create(&g); }
  ~GraphPtr() { cudnnfe_graph_destroy(g); }
  GraphPtr(const GraphPtr &) = delete;
  GraphPtr &operator=(const GraphPtr &) = delete;
  operator cudnnfe_graph_t *() const { return g; }
};

cudnnfe_handle_t *handle() {
  static cudnnfe_handle_t *h = [] {
    cudnnfe_handle_t *created = nullptr;
    cudnnfe_handle_create(&created, -1);
    return created;
  }();
  return h;
}

// kMatmulRelu: a matmul with a ReLU epilogue, which cuDNN serves with
// runtime-compiled (NVRTC) engines.
enum class Kind { kMatmul, kConv, kMatmulRelu };

struct Uids {
  int64_t x = 0, w = 0, y = 0;
};

// matmul: y[1,256,384] = x[1,256,512] @ w[1,512,384], HALF.
// conv: y = conv3x3(x[2,32,16,16] NHWC, w[32,32,3,3] KRSC), pad 1, HALF.
Uids add_graph(cudnnfe_graph_t *g, Kind kind, const std::string &prefix, int64_t size = 256) {
  Uids u;
  const char *names[] = {"matmul", "conv", "matmul_relu"};
  cudnnfe_graph_set_name(g, (prefix + names[static_cast<int>(kind)]).c_str());
  cudnnfe_graph_set_io_dtype(g, CUDNNFE_DTYPE_HALF);
  cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT);
  if (kind != Kind::kConv) {
    const int64_t xd[3] = {1, size, 512}, wd[3] = {1, 512, 384};
    cudnnfe_graph_add_tensor(g, (prefix + "x").c_str(), CUDNNFE_DTYPE_HALF, 3, xd, nullptr, &u.x);
    cudnnfe_graph_add_tensor(g, (prefix + "w").c_str(), CUDNNFE_DTYPE_HALF, 3, wd, nullptr, &u.w);
    cudnnfe_graph_add_matmul(g, u.x, u.w, nullptr, &u.y);
    if (kind == Kind::kMatmulRelu) {
      const int64_t product = u.y;
      cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, product, 0, 0, nullptr, &u.y);
      cudnnfe_tensor_set_dtype(g, u.y, CUDNNFE_DTYPE_HALF);
    }
  } else {
    const int64_t xd[4] = {2, 32, 16, 16}, xs[4] = {32 * 16 * 16, 1, 16 * 32, 32};
    const int64_t wd[4] = {32, 32, 3, 3}, ws[4] = {32 * 9, 1, 3 * 32, 32};
    cudnnfe_graph_add_tensor(g, (prefix + "x").c_str(), CUDNNFE_DTYPE_HALF, 4, xd, xs, &u.x);
    cudnnfe_graph_add_tensor(g, (prefix + "w").c_str(), CUDNNFE_DTYPE_HALF, 4, wd, ws, &u.w);
    cudnnfe_conv_options_t o;
    cudnnfe_conv_options_init(&o);
    o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
    cudnnfe_graph_add_conv_fprop(g, u.x, u.w, &o, &u.y);
  }
  cudnnfe_tensor_set_output(g, u.y, 1);
  return u;
}

size_t tensor_bytes(cudnnfe_graph_t *g, int64_t uid) {
  int64_t dims[8], strides[8];
  int32_t rank = 0;
  cudnnfe_tensor_get_shape(g, uid, dims, strides, 8, &rank);
  int64_t span = 1;
  for (int i = 0; i < rank; ++i) span += (dims[i] - 1) * strides[i];
  return static_cast<size_t>(span) * 2;  // HALF
}

// Device inputs (fixed pseudo-random HALF values) and output buffers for
// the graph shape of `kind`.
struct Buffers {
  Uids uids;
  std::vector<uint16_t> x_host, w_host;
  gpu::DeviceBuffer x, w, y, y2, y3;
  size_t y_bytes = 0;

  Buffers(cudnnfe_graph_t *g, const Uids &u) : uids(u) {
    const size_t xb = tensor_bytes(g, u.x), wb = tensor_bytes(g, u.w);
    y_bytes = tensor_bytes(g, u.y);
    x_host.resize(xb / 2);
    w_host.resize(wb / 2);
    uint32_t state = 12345;
    auto next = [&state] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>((state >> 8) & 0xffff) / 65536.0f - 0.5f;
    };
    for (uint16_t &v : x_host) v = gpu::float_to_half(next());
    for (uint16_t &v : w_host) v = gpu::float_to_half(0.25f * next());
    x = gpu::DeviceBuffer(xb);
    w = gpu::DeviceBuffer(wb);
    y = gpu::DeviceBuffer(y_bytes);
    y2 = gpu::DeviceBuffer(y_bytes);
    y3 = gpu::DeviceBuffer(y_bytes);
    gpu::runtime().Memcpy(x.get(), x_host.data(), xb, gpu::kHostToDevice);
    gpu::runtime().Memcpy(w.get(), w_host.data(), wb, gpu::kHostToDevice);
  }
  bool ok() const { return x.get() && w.get() && y.get() && y2.get() && y3.get(); }

  std::vector<cudnnfe_binding_t> bindings(void *out) const {
    return {{uids.x, x.get()}, {uids.w, w.get()}, {uids.y, out}};
  }
  std::vector<uint8_t> read(const gpu::DeviceBuffer &b) const {
    std::vector<uint8_t> host(y_bytes);
    gpu::runtime().DeviceSynchronize();
    gpu::runtime().Memcpy(host.data(), b.get(), y_bytes, gpu::kDeviceToHost);
    return host;
  }
  void clear(const gpu::DeviceBuffer &b) const {
    gpu::runtime().Memset(b.get(), 0xff, y_bytes);  // NaN pattern
  }
};

int64_t workspace_of(cudnnfe_graph_t *g) {
  int64_t size = 0;
  cudnnfe_graph_get_workspace_size(g, &size);
  return size;
}

// Runs the graph's selected plan into `out`; returns the output bytes.
std::vector<uint8_t> run(cudnnfe_graph_t *g, const Buffers &b, const gpu::DeviceBuffer &out) {
  b.clear(out);
  gpu::DeviceBuffer ws(static_cast<size_t>(workspace_of(g)));
  auto bindings = b.bindings(out.get());
  cudnnfe_status_t status = cudnnfe_graph_execute(g, handle(), bindings.data(), bindings.size(),
                                                  ws.get(), ws.size(), nullptr);
  if (status != CUDNNFE_STATUS_OK) {
    std::printf("  execute failed: %s\n", cudnnfe_handle_last_error(handle()));
    ++testing::state().failures;
  }
  return b.read(out);
}

// The CPU reference's output for the same graph and inputs, as floats.
std::vector<float> reference(Kind kind, const Buffers &b) {
  GraphPtr g;
  Uids u = add_graph(g, kind, "ref_");
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  std::vector<uint16_t> y(b.y_bytes / 2);
  if (cudnnfe_graph_build(g, nullptr, &o) != CUDNNFE_STATUS_OK) return {};
  cudnnfe_binding_t bindings[] = {{u.x, const_cast<uint16_t *>(b.x_host.data())},
                                  {u.w, const_cast<uint16_t *>(b.w_host.data())},
                                  {u.y, y.data()}};
  if (cudnnfe_graph_execute(g, handle(), bindings, 3, nullptr, 0, nullptr) != CUDNNFE_STATUS_OK)
    return {};
  std::vector<float> out;
  for (uint16_t v : y) out.push_back(gpu::half_to_float(v));
  return out;
}

// Largest error relative to the reference's largest magnitude.
double error_vs(const std::vector<float> &ref, const std::vector<uint8_t> &got) {
  if (ref.empty() || got.size() != ref.size() * 2) return INFINITY;
  double worst = 0, scale = 1e-6;
  for (float r : ref) scale = std::max(scale, static_cast<double>(std::fabs(r)));
  for (size_t i = 0; i < ref.size(); ++i) {
    uint16_t h;
    std::memcpy(&h, &got[2 * i], 2);
    const double d = std::fabs(gpu::half_to_float(h) - ref[i]);
    worst = std::max(worst, std::isnan(d) ? INFINITY : d / scale);
  }
  return worst;
}

cudnnfe_build_options_t gpu_options(cudnnfe_build_policy_t policy, bool cache = false) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_GPU;
  o.policy = policy;
  o.disable_plan_cache = cache ? 0 : 1;
  o.exclude_numerical_notes = CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC;
  // Keeps POLICY_ALL builds quick: no kernel compiled at build (NVRTC).
  o.exclude_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  o.plan_cache_dir = "";
  return o;
}

struct PlanSummary {
  std::string name;
  int64_t engine = -1, workspace = 0;
  uint32_t numerical = 0, behavior = 0;
  double time_ms = -1;
  bool selected = false, chosen = false;
};

std::vector<PlanSummary> plans_of(cudnnfe_graph_t *g) {
  std::vector<PlanSummary> out;
  int64_t count = 0;
  if (cudnnfe_graph_get_plan_count(g, &count) != CUDNNFE_STATUS_OK) return out;
  for (int64_t i = 0; i < count; ++i) {
    cudnnfe_plan_info_t info;
    cudnnfe_plan_info_init(&info);
    if (cudnnfe_graph_get_plan_info(g, i, &info) != CUDNNFE_STATUS_OK) continue;
    out.push_back({info.name, info.engine_id, info.workspace_size, info.numerical_notes,
                   info.behavior_notes, info.autotune_time_ms, info.selected == 1,
                   info.chosen_by_autotune == 1});
  }
  return out;
}

cudnnfe_build_info_t build_info(cudnnfe_graph_t *g) {
  cudnnfe_build_info_t info;
  cudnnfe_build_info_init(&info);
  cudnnfe_graph_get_build_info(g, &info);
  return info;
}

std::string serialize_plan(cudnnfe_graph_t *g) {
  size_t size = 0;
  if (cudnnfe_graph_serialize_plan(g, nullptr, 0, &size) != CUDNNFE_STATUS_OK) return "";
  std::string blob(size, '\0');
  cudnnfe_graph_serialize_plan(g, blob.data(), size, &size);
  return blob;
}

uint64_t fnv1a64(const std::string &s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// The blob with `from` replaced by `to` in its payload, header recomputed.
std::string edit_blob(const std::string &blob, const std::string &from, const std::string &to) {
  std::string payload = blob.substr(blob.find('\n') + 1);
  const size_t at = payload.find(from);
  if (at == std::string::npos) return "";
  payload.replace(at, from.size(), to);
  char header[96];
  std::snprintf(header, sizeof(header), "CUDNNFE-PLAN 1 %zu %016llx\n", payload.size(),
                static_cast<unsigned long long>(fnv1a64(payload)));
  return header + payload;
}

std::string version_text(int64_t v) {
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
         std::to_string(v % 100);
}

// ---------------------------------------------------------------------------
// The child process of the persistent-cache test (run as this executable
// with CUDNNFE_TEST_PLANS_CHILD=<cache dir>): builds the matmul graph with
// the directory cache, executes it, prints where the plan came from.

int child_main(const char *dir) {
  GraphPtr g;
  Uids u = add_graph(g, Kind::kMatmul, "child_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE, true);
  o.plan_cache_dir = dir;
  if (cudnnfe_graph_build(g, nullptr, &o) != CUDNNFE_STATUS_OK) {
    std::printf("CHILD build failed: %s\n", cudnnfe_graph_last_error(g));
    return 1;
  }
  const cudnnfe_build_info_t info = build_info(g);
  Buffers b(g, u);
  const std::vector<uint8_t> y = run(g, b, b.y);
  const char *name = "";
  cudnnfe_graph_get_plan_name(g, &name);
  std::printf("CHILD source=%d total_ms=%.3f plan=%s ok=%d\n", info.source, info.total_ms, name,
              testing::state().failures == 0 ? 1 : 0);
  return testing::state().failures == 0 ? 0 : 1;
}

[[maybe_unused]] const bool kChild = [] {
  const char *dir = std::getenv("CUDNNFE_TEST_PLANS_CHILD");
  if (!dir) return false;
  const int rc = child_main(dir);
  std::fflush(stdout);
  _exit(rc);
}();

// Runs this executable as a child; returns its stdout.
std::string run_child(const std::string &dir) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], 1);
    setenv("CUDNNFE_TEST_PLANS_CHILD", dir.c_str(), 1);
    execl("/proc/self/exe", "test_gpu_plans", static_cast<char *>(nullptr));
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buffer[512];
  ssize_t n;
  while ((n = read(fds[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) out += " [child failed]";
  return out;
}

std::vector<std::string> list_dir(const std::string &dir) {
  std::vector<std::string> names;
  if (DIR *d = opendir(dir.c_str())) {
    while (dirent *e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
  }
  return names;
}

}  // namespace

// ---------------------------------------------------------------------------

TEST(gpu_policies_and_plan_selection) {
  REQUIRE_GPU();
  GraphPtr all, first;
  Uids u = add_graph(all, Kind::kMatmul, "all_");
  add_graph(first, Kind::kMatmul, "first_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  REQUIRE_OK(cudnnfe_graph_build(all, handle(), &o));
  o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE);
  REQUIRE_OK(cudnnfe_graph_build(first, handle(), &o));
  const std::vector<PlanSummary> plans = plans_of(all), one = plans_of(first);
  REQUIRE(!plans.empty() && one.size() == 1);
  std::printf("  POLICY_ALL built %zu plans; HEURISTICS_CHOICE built %s\n", plans.size(),
              one[0].name.c_str());
  CHECK(one[0].name == plans[0].name);  // plan 0 is the heuristics' choice
  std::map<std::string, int> names;
  for (size_t i = 0; i < plans.size(); ++i) {
    const PlanSummary &p = plans[i];
    std::printf("    [%zu] %-28s engine %3lld  workspace %10lld  notes %u/%u\n", i, p.name.c_str(),
                static_cast<long long>(p.engine), static_cast<long long>(p.workspace), p.numerical,
                p.behavior);
    CHECK(p.name.rfind("eng" + std::to_string(p.engine), 0) == 0);
    CHECK(p.workspace >= 0);
    CHECK(p.selected == (i == 0));
    CHECK(!(p.numerical & CUDNNFE_NUMERICAL_NOTE_NONDETERMINISTIC));
    CHECK(++names[p.name] == 1);
  }
  Buffers b(all, u);
  REQUIRE(b.ok());
  const std::vector<float> ref = reference(Kind::kMatmul, b);
  for (size_t i = 0; i < plans.size() && i < 12; ++i) {
    REQUIRE_OK(cudnnfe_graph_select_plan(all, static_cast<int64_t>(i)));
    int64_t selected = -1, ws = -1;
    CHECK_OK(cudnnfe_graph_get_selected_plan(all, &selected));
    CHECK(selected == static_cast<int64_t>(i));
    CHECK_OK(cudnnfe_graph_get_workspace_size(all, &ws));
    CHECK(ws == plans[i].workspace);
    const char *name = nullptr;
    CHECK_OK(cudnnfe_graph_get_plan_name(all, &name));
    CHECK(plans[i].name == name);
    const double err = error_vs(ref, run(all, b, b.y));
    CHECK_MSG(err < 1e-2, "plan %s: error %.3g vs the CPU reference", name, err);
  }
  CHECK_FAILS(cudnnfe_graph_select_plan(all, static_cast<int64_t>(plans.size())),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "out of range");
}

TEST(gpu_engine_filters) {
  REQUIRE_GPU();
  GraphPtr all;
  add_graph(all, Kind::kConv, "f_");
  cudnnfe_build_options_t base = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  base.exclude_numerical_notes = 0;
  REQUIRE_OK(cudnnfe_graph_build(all, handle(), &base));
  const std::vector<PlanSummary> plans = plans_of(all);
  REQUIRE(!plans.empty());

  // Workspace limit 0: plans without workspace only, or a refusal naming it.
  {
    GraphPtr g;
    add_graph(g, Kind::kConv, "f_");
    cudnnfe_build_options_t o = base;
    o.max_workspace_size = 0;
    const cudnnfe_status_t status = cudnnfe_graph_build(g, handle(), &o);
    if (status == CUDNNFE_STATUS_OK) {
      for (const PlanSummary &p : plans_of(g)) CHECK(p.workspace == 0);
    } else {
      CHECK(status == CUDNNFE_STATUS_NOT_SUPPORTED);
      CHECK(std::strstr(cudnnfe_graph_last_error(g), "max_workspace_size 0 removed"));
    }
  }
  // Every engine the ALL build saw, excluded: NOT_SUPPORTED naming the filter.
  std::vector<int64_t> engines;
  for (const PlanSummary &p : plans)
    if (std::find(engines.begin(), engines.end(), p.engine) == engines.end())
      engines.push_back(p.engine);
  {
    GraphPtr g;
    add_graph(g, Kind::kConv, "f_");
    cudnnfe_build_options_t o = base;
    o.num_exclude_engines = static_cast<int32_t>(engines.size());
    o.exclude_engines = engines.data();
    const cudnnfe_status_t status = cudnnfe_graph_build(g, handle(), &o);
    if (status == CUDNNFE_STATUS_OK) {
      // The heuristics may offer configurations that failed to build the
      // first time; none of the excluded engines may appear.
      for (const PlanSummary &p : plans_of(g))
        CHECK(std::find(engines.begin(), engines.end(), p.engine) == engines.end());
    } else {
      std::printf("  every engine excluded: %s\n", cudnnfe_graph_last_error(g));
      CHECK(status == CUDNNFE_STATUS_NOT_SUPPORTED);
      CHECK(std::strstr(cudnnfe_graph_last_error(g), "exclude_engines removed eng"));
      CHECK(std::strstr(cudnnfe_graph_last_error(g), "cuDNN"));
    }
  }
  // One engine left, then removed by its own notes: the message says which
  // note filter removed it.
  const PlanSummary *noted = nullptr;
  for (const PlanSummary &p : plans)
    if (p.numerical) {
      noted = &p;
      break;
    }
  if (noted) {
    std::vector<int64_t> others;
    for (int64_t e : engines)
      if (e != noted->engine) others.push_back(e);
    GraphPtr g;
    add_graph(g, Kind::kConv, "f_");
    cudnnfe_build_options_t o = base;
    o.num_exclude_engines = static_cast<int32_t>(others.size());
    o.exclude_engines = others.data();
    o.exclude_numerical_notes = noted->numerical;
    const cudnnfe_status_t status = cudnnfe_graph_build(g, handle(), &o);
    if (status != CUDNNFE_STATUS_OK) {
      const char *m = cudnnfe_graph_last_error(g);
      std::printf("  notes filter: %s\n", m);
      CHECK(status == CUDNNFE_STATUS_NOT_SUPPORTED);
      CHECK(std::strstr(m, "exclude_numerical_notes removed"));
      CHECK(std::strstr(m, ("eng" + std::to_string(noted->engine)).c_str()));
    } else {
      for (const PlanSummary &p : plans_of(g)) {
        CHECK(!(p.numerical & noted->numerical));
        CHECK(p.engine != noted->engine);
      }
    }
  } else {
    std::printf("  no plan carries notes; the notes-filter message is not exercised\n");
  }
  // Excluding TENSOR_CORE keeps only plans without it (or refuses).
  {
    GraphPtr g;
    add_graph(g, Kind::kConv, "f_");
    cudnnfe_build_options_t o = base;
    o.exclude_numerical_notes = CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE;
    if (cudnnfe_graph_build(g, handle(), &o) == CUDNNFE_STATUS_OK)
      for (const PlanSummary &p : plans_of(g))
        CHECK(!(p.numerical & CUDNNFE_NUMERICAL_NOTE_TENSOR_CORE));
    else
      CHECK(std::strstr(cudnnfe_graph_last_error(g), "exclude_numerical_notes"));
  }
  // max_plans bounds POLICY_ALL.
  {
    GraphPtr g;
    add_graph(g, Kind::kConv, "f_");
    cudnnfe_build_options_t o = base;
    o.max_plans = 2;
    REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
    CHECK(plans_of(g).size() == std::min<size_t>(2, plans.size()));
  }
}

TEST(gpu_autotune_with_user_buffers) {
  REQUIRE_GPU();
  GraphPtr g;
  Uids u = add_graph(g, Kind::kMatmul, "tune_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
  std::vector<PlanSummary> plans = plans_of(g);
  int64_t largest = 0;
  for (const PlanSummary &p : plans) largest = std::max(largest, p.workspace);
  Buffers b(g, u);
  REQUIRE(b.ok());
  gpu::DeviceBuffer ws(static_cast<size_t>(largest));
  auto bindings = b.bindings(b.y.get());
  REQUIRE_OK(cudnnfe_graph_autotune(g, handle(), bindings.data(), bindings.size(), ws.get(),
                                    ws.size(), nullptr, nullptr));
  plans = plans_of(g);
  int64_t selected = -1;
  REQUIRE_OK(cudnnfe_graph_get_selected_plan(g, &selected));
  REQUIRE(selected >= 0 && selected < static_cast<int64_t>(plans.size()));
  const PlanSummary &best = plans[selected];
  CHECK(best.chosen && best.selected && best.time_ms > 0);
  for (const PlanSummary &p : plans) {
    std::printf("    %-28s %9.4f ms%s\n", p.name.c_str(), p.time_ms, p.chosen ? "  <- chosen" : "");
    if (p.time_ms >= 0) CHECK(best.time_ms <= p.time_ms);
    CHECK(p.chosen == (&p == &best));
  }
  const std::vector<float> ref = reference(Kind::kMatmul, b);
  CHECK(error_vs(ref, run(g, b, b.y)) < 1e-2);

  // The in-process cache remembers the choice: a later build of the same
  // graph starts with the autotuned plan.
  cudnnfe_plan_cache_clear();
  GraphPtr cached, later;
  add_graph(cached, Kind::kMatmul, "tune_");
  cudnnfe_build_options_t c = gpu_options(CUDNNFE_BUILD_POLICY_ALL, true);
  REQUIRE_OK(cudnnfe_graph_build(cached, handle(), &c));
  REQUIRE_OK(cudnnfe_graph_autotune(cached, handle(), bindings.data(), bindings.size(), nullptr, 0,
                                    nullptr, nullptr));
  int64_t chosen = -1, again = -2;
  cudnnfe_graph_get_selected_plan(cached, &chosen);
  add_graph(later, Kind::kMatmul, "later_");
  REQUIRE_OK(cudnnfe_graph_build(later, handle(), &c));
  CHECK(build_info(later).source == CUDNNFE_PLAN_SOURCE_MEMORY_CACHE);
  cudnnfe_graph_get_selected_plan(later, &again);
  CHECK(again == chosen);
  CHECK(plans_of(later)[again].chosen);
}

TEST(gpu_autotune_with_scratch_buffers) {
  REQUIRE_GPU();
  GraphPtr g;
  Uids u = add_graph(g, Kind::kConv, "scratch_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
  cudnnfe_autotune_options_t a;
  cudnnfe_autotune_options_init(&a);
  a.max_iterations = 10;
  REQUIRE_OK(cudnnfe_graph_autotune(g, handle(), nullptr, 0, nullptr, 0, nullptr, &a));
  int64_t selected = -1;
  CHECK_OK(cudnnfe_graph_get_selected_plan(g, &selected));
  const std::vector<PlanSummary> plans = plans_of(g);
  REQUIRE(selected >= 0 && selected < static_cast<int64_t>(plans.size()));
  CHECK(plans[selected].chosen && plans[selected].time_ms > 0);
  std::printf("  conv: %zu plans, autotune chose %s (%.4f ms)\n", plans.size(),
              plans[selected].name.c_str(), plans[selected].time_ms);
  Buffers b(g, u);
  CHECK(error_vs(reference(Kind::kConv, b), run(g, b, b.y)) < 1e-2);
}

TEST(gpu_plan_blob_round_trip_is_bit_identical) {
  REQUIRE_GPU();
  GraphPtr g;
  Uids u = add_graph(g, Kind::kConv, "blob_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
  const double cold_ms = build_info(g).total_ms;
  REQUIRE_OK(cudnnfe_graph_autotune(g, handle(), nullptr, 0, nullptr, 0, nullptr, nullptr));
  Buffers b(g, u);
  REQUIRE(b.ok());
  const std::vector<uint8_t> direct = run(g, b, b.y);
  const std::string blob = serialize_plan(g);
  REQUIRE(!blob.empty());
  const char *name = nullptr;
  cudnnfe_graph_get_plan_name(g, &name);
  const std::string original_name = name;
  CHECK(blob.find("\"engine_id\": ") != std::string::npos);
  CHECK(blob.find("\"chosen\": true") != std::string::npos);

  GraphPtr loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded, handle(), blob.data(), blob.size(), nullptr));
  const cudnnfe_build_info_t info = build_info(loaded);
  CHECK(info.source == CUDNNFE_PLAN_SOURCE_SERIALIZED);
  CHECK(info.heuristics_ms == 0);
  std::printf("  cold ALL build %.2f ms; plan load %.2f ms (lower %.2f, plan %.2f)\n", cold_ms,
              info.total_ms, info.lower_ms, info.plan_build_ms);
  cudnnfe_graph_get_plan_name(loaded, &name);
  CHECK(original_name == name);
  const std::vector<PlanSummary> plans = plans_of(loaded);
  REQUIRE(plans.size() == 1);
  CHECK(plans[0].chosen && plans[0].time_ms > 0);  // the autotune record survives
  const std::vector<uint8_t> again = run(loaded, b, b.y2);
  CHECK(again == direct);
  CHECK(serialize_plan(loaded) == blob);

  // Made for another GPU architecture or cuDNN version: refused naming both.
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  const size_t sm_at = blob.find("\"sm\": ");
  REQUIRE(sm_at != std::string::npos);
  const std::string sm_here =
      blob.substr(sm_at + 6, blob.find_first_not_of("0123456789", sm_at + 6) - sm_at - 6);
  const std::string other_sm = edit_blob(blob, "\"sm\": " + sm_here, "\"sm\": 75");
  GraphPtr refused;
  CHECK_FAILS(
      cudnnfe_graph_deserialize_plan(refused, handle(), other_sm.data(), other_sm.size(), nullptr),
      CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "(sm_75)", ("(sm_" + sm_here + ")").c_str());
  const std::string other_cudnn =
      edit_blob(blob, "\"cudnn_version\": " + std::to_string(version), "\"cudnn_version\": 90100");
  CHECK_FAILS(cudnnfe_graph_deserialize_plan(refused, handle(), other_cudnn.data(),
                                             other_cudnn.size(), nullptr),
              CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "cuDNN 9.1.0",
              ("cuDNN " + version_text(version)).c_str());
  cudnnfe_plan_load_options_t lo;
  cudnnfe_plan_load_options_init(&lo);
  lo.rebuild_on_mismatch = 1;
  GraphPtr rebuilt;
  REQUIRE_OK(
      cudnnfe_graph_deserialize_plan(rebuilt, handle(), other_sm.data(), other_sm.size(), &lo));
  CHECK(build_info(rebuilt).source == CUDNNFE_PLAN_SOURCE_REBUILT);
  CHECK(error_vs(reference(Kind::kConv, b), run(rebuilt, b, b.y3)) < 1e-2);
  // An engine this cuDNN does not have for the graph: NOT_SUPPORTED, or
  // rebuilt when asked.
  const size_t id_at = blob.find("\"engine_id\": ");
  REQUIRE(id_at != std::string::npos);
  const std::string id =
      blob.substr(id_at + 13, blob.find_first_not_of("0123456789", id_at + 13) - id_at - 13);
  const std::string bad_engine =
      edit_blob(edit_blob(blob, "\"engine_id\": " + id, "\"engine_id\": 99999"),
                "\"name\": \"eng" + id, "\"name\": \"eng99999");
  REQUIRE(!bad_engine.empty());
  GraphPtr none, fallback;
  CHECK_FAILS(
      cudnnfe_graph_deserialize_plan(none, handle(), bad_engine.data(), bad_engine.size(), nullptr),
      CUDNNFE_STATUS_NOT_SUPPORTED, "eng99999", "does not build");
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(fallback, handle(), bad_engine.data(),
                                            bad_engine.size(), &lo));
  CHECK(build_info(fallback).source == CUDNNFE_PLAN_SOURCE_REBUILT);
}

// A runtime-compiled plan's blob carries cuDNN's own serialization of it;
// loading restores the compiled plan from it (no NVRTC compile), and a blob
// whose copy is damaged still loads through the engine configuration.
TEST(gpu_runtime_compiled_plan_restores_from_cudnn_serialization) {
  REQUIRE_GPU();
  GraphPtr g;
  Uids u = add_graph(g, Kind::kMatmulRelu, "rtc_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE);
  o.exclude_behavior_notes = 0;
  o.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
  const cudnnfe_build_info_t cold = build_info(g);
  Buffers b(g, u);
  REQUIRE(b.ok());
  const std::vector<uint8_t> direct = run(g, b, b.y);
  CHECK(error_vs(reference(Kind::kMatmulRelu, b), direct) < 1e-2);
  const std::string blob = serialize_plan(g);
  const size_t at = blob.find("\"cudnn_execution_plan\": \"");
  CHECK_MSG(at != std::string::npos, "the blob of a runtime-compiled plan has no cuDNN plan");
  if (at == std::string::npos) return;

  GraphPtr loaded;
  REQUIRE_OK(cudnnfe_graph_deserialize_plan(loaded, handle(), blob.data(), blob.size(), nullptr));
  const cudnnfe_build_info_t load = build_info(loaded);
  CHECK(load.source == CUDNNFE_PLAN_SOURCE_SERIALIZED);
  std::printf("  runtime-compiled plan: cold build %.2f ms (plan %.2f); load %.2f ms (plan %.2f)\n",
              cold.total_ms, cold.plan_build_ms, load.total_ms, load.plan_build_ms);
  CHECK(run(loaded, b, b.y2) == direct);
  CHECK(serialize_plan(loaded) == blob);

  // Damaged serialization: cuDNN refuses it and the engine configuration
  // builds the same plan.
  const size_t text = at + std::string("\"cudnn_execution_plan\": \"").size();
  const std::string damaged = edit_blob(blob, blob.substr(text, 12), "{not a plan ");
  REQUIRE(!damaged.empty());
  GraphPtr fallback;
  REQUIRE_OK(
      cudnnfe_graph_deserialize_plan(fallback, handle(), damaged.data(), damaged.size(), nullptr));
  std::printf("  damaged copy: load %.2f ms through the engine configuration\n",
              build_info(fallback).total_ms);
  CHECK(run(fallback, b, b.y3) == direct);
}

// cudnnfe_graph_check_support on the GPU: configurations found without a
// plan built; a POLICY_ALL build then makes plans of exactly those (minus any
// that fail to build), in the same order.
TEST(gpu_check_support_lists_what_all_builds) {
  REQUIRE_GPU();
  GraphPtr g;
  add_graph(g, Kind::kMatmul, "check_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_ALL);
  int64_t count = 0;
  REQUIRE_OK(cudnnfe_graph_check_support(g, handle(), &o, &count));
  int32_t built = 1;
  CHECK_OK(cudnnfe_graph_is_built(g, &built));
  CHECK(built == 0 && count >= 1);
  std::vector<std::string> checked;
  for (int64_t i = 0; i < count; ++i) {
    cudnnfe_plan_info_t info;
    cudnnfe_plan_info_init(&info);
    REQUIRE_OK(cudnnfe_graph_get_checked_config_info(g, i, &info));
    CHECK(info.engine_id >= 0 && info.workspace_size == -1);
    checked.emplace_back(info.name);
  }
  REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
  const std::vector<PlanSummary> plans = plans_of(g);
  std::printf("  check_support found %lld configuration(s); ALL built %zu\n",
              static_cast<long long>(count), plans.size());
  size_t at = 0;
  for (const PlanSummary &p : plans) {
    while (at < checked.size() && checked[at] != p.name) ++at;
    CHECK_MSG(at < checked.size(), "plan %s was not among check_support's configurations, in order",
              p.name.c_str());
  }
}

// Debug log lines saying a plan was restored from one compiled earlier in the
// process (backend/compiled_plan_memo.h).
int g_restored_lines = 0;
void count_restored(cudnnfe_log_level_t, const char *message, void *) {
  if (std::strstr(message, ": restored in ") && std::strstr(message, "earlier in the process"))
    ++g_restored_lines;
}

// cudnn-frontend's check_support() then build_plans(ALL): the heuristics'
// choice is compiled once; the ALL build of the same graph restores it from
// cuDNN's serialization instead of compiling it again, and runs the same.
TEST(gpu_all_build_restores_a_plan_compiled_earlier_in_the_process) {
  REQUIRE_GPU();
  cudnnfe_plan_cache_clear();
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE, true);
  o.exclude_behavior_notes = 0;
  o.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
  GraphPtr first;
  Uids u = add_graph(first, Kind::kMatmulRelu, "memo_a_");
  REQUIRE_OK(cudnnfe_graph_build(first, handle(), &o));
  const std::string chosen = plans_of(first).at(0).name;
  REQUIRE_OK(cudnnfe_set_log_callback(count_restored, nullptr, CUDNNFE_LOG_LEVEL_DEBUG));
  g_restored_lines = 0;
  GraphPtr all;
  add_graph(all, Kind::kMatmulRelu, "memo_b_");
  o.policy = CUDNNFE_BUILD_POLICY_ALL;
  const cudnnfe_status_t built = cudnnfe_graph_build(all, handle(), &o);
  cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF);
  REQUIRE_OK(built);
  std::printf(
      "  heuristics' choice %s compiled in %.1f ms; ALL built %zu plan(s) in %.1f ms, "
      "%d restored\n",
      chosen.c_str(), build_info(first).plan_build_ms, plans_of(all).size(),
      build_info(all).plan_build_ms, g_restored_lines);
  CHECK_MSG(g_restored_lines == 1, "%d plan(s) restored, expected the heuristics' choice",
            g_restored_lines);
  Buffers b(first, u);
  REQUIRE(b.ok());
  const std::vector<uint8_t> direct = run(first, b, b.y);
  CHECK(error_vs(reference(Kind::kMatmulRelu, b), direct) < 1e-2);
  const std::vector<PlanSummary> plans = plans_of(all);
  for (size_t i = 0; i < plans.size(); ++i) {
    if (plans[i].name != chosen) continue;
    REQUIRE_OK(cudnnfe_graph_select_plan(all, static_cast<int64_t>(i)));
    CHECK(run(all, b, b.y2) == direct);  // the same engine configuration, restored
  }
}

TEST(gpu_in_process_cache_hit) {
  REQUIRE_GPU();
  cudnnfe_plan_cache_clear();
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE, true);
  GraphPtr first;
  Uids u = add_graph(first, Kind::kMatmul, "a_");
  REQUIRE_OK(cudnnfe_graph_build(first, handle(), &o));
  const cudnnfe_build_info_t cold = build_info(first);
  CHECK(cold.source == CUDNNFE_PLAN_SOURCE_BUILT);
  cudnnfe_plan_cache_stats_t s;
  cudnnfe_plan_cache_stats_init(&s);
  CHECK_OK(cudnnfe_plan_cache_get_stats(&s));
  CHECK(s.entries == 1 && s.misses == 1 && s.hits == 0);

  std::vector<double> hit_ms;
  for (int i = 0; i < 20; ++i) {
    GraphPtr again;
    add_graph(again, Kind::kMatmul, "b" + std::to_string(i) + "_");  // other names
    const auto start = std::chrono::steady_clock::now();
    REQUIRE_OK(cudnnfe_graph_build(again, handle(), &o));
    hit_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    CHECK(build_info(again).source == CUDNNFE_PLAN_SOURCE_MEMORY_CACHE);
  }
  std::sort(hit_ms.begin(), hit_ms.end());
  std::printf(
      "  cold build %.2f ms (validate %.3f, lower %.2f, heuristics %.2f, plan %.2f); "
      "cache hit median %.3f ms, worst %.3f ms\n",
      cold.total_ms, cold.validate_ms, cold.lower_ms, cold.heuristics_ms, cold.plan_build_ms,
      hit_ms[hit_ms.size() / 2], hit_ms.back());
  CHECK(hit_ms[hit_ms.size() / 2] < 2.0);
  CHECK_OK(cudnnfe_plan_cache_get_stats(&s));
  CHECK(s.hits == 20 && s.entries == 1);

  GraphPtr hit;
  add_graph(hit, Kind::kMatmul, "hit_");
  REQUIRE_OK(cudnnfe_graph_build(hit, handle(), &o));
  Buffers b(first, u);
  REQUIRE(b.ok());
  CHECK(run(first, b, b.y) == run(hit, b, b.y2));
  // Another shape, or the cache turned off: a real build.
  GraphPtr other, uncached;
  add_graph(other, Kind::kMatmul, "o_", 128);
  REQUIRE_OK(cudnnfe_graph_build(other, handle(), &o));
  CHECK(build_info(other).source == CUDNNFE_PLAN_SOURCE_BUILT);
  add_graph(uncached, Kind::kMatmul, "u_");
  cudnnfe_build_options_t off = o;
  off.disable_plan_cache = 1;
  REQUIRE_OK(cudnnfe_graph_build(uncached, handle(), &off));
  CHECK(build_info(uncached).source == CUDNNFE_PLAN_SOURCE_BUILT);
  // Other options, another key.
  GraphPtr all;
  add_graph(all, Kind::kMatmul, "all_");
  cudnnfe_build_options_t policy_all = o;
  policy_all.policy = CUDNNFE_BUILD_POLICY_ALL;
  REQUIRE_OK(cudnnfe_graph_build(all, handle(), &policy_all));
  CHECK(build_info(all).source == CUDNNFE_PLAN_SOURCE_BUILT);
}

TEST(gpu_persistent_cache_across_processes) {
  REQUIRE_GPU();
  char dir_template[] = "/tmp/cudnnfe_plan_cache_XXXXXX";
  REQUIRE(mkdtemp(dir_template) != nullptr);
  const std::string dir = std::string(dir_template) + "/nested";  // created on demand
  const std::string first = run_child(dir);
  const std::string second = run_child(dir);
  std::printf("  first process:  %s  second process: %s", first.c_str(), second.c_str());
  CHECK(first.find("source=1 ") != std::string::npos);   // BUILT
  CHECK(second.find("source=3 ") != std::string::npos);  // DISK_CACHE
  CHECK(first.find("ok=1") != std::string::npos && second.find("ok=1") != std::string::npos);
  const std::vector<std::string> files = list_dir(dir);
  CHECK(files.size() == 1);
  for (const std::string &f : files) {
    CHECK(f.find(".cudnnfe-plan") != std::string::npos);
    CHECK(f.find(".tmp.") == std::string::npos);
    unlink((dir + "/" + f).c_str());
  }
  rmdir(dir.c_str());
  rmdir(dir_template);
}

TEST(gpu_cuda_graph_replay_matches_direct_execution) {
  REQUIRE_GPU();
  const CudaExtra &rt = cuda();
  void *stream = nullptr;
  REQUIRE(gpu::runtime().StreamCreate(&stream) == 0);

  // Stream capture of cudnnfe_graph_execute works for any GPU plan.
  {
    GraphPtr g;
    Uids u = add_graph(g, Kind::kMatmul, "cap_");
    cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE);
    REQUIRE_OK(cudnnfe_graph_build(g, handle(), &o));
    Buffers b(g, u);
    REQUIRE(b.ok());
    const std::vector<uint8_t> direct = run(g, b, b.y);
    gpu::DeviceBuffer ws(static_cast<size_t>(workspace_of(g)));
    auto bindings = b.bindings(b.y2.get());
    b.clear(b.y2);
    // Once outside capture on the same stream (first-use work stays out).
    CHECK_OK(cudnnfe_graph_execute(g, handle(), bindings.data(), bindings.size(), ws.get(),
                                   ws.size(), stream));
    gpu::runtime().StreamSynchronize(stream);
    b.clear(b.y2);
    REQUIRE(rt.StreamBeginCapture(stream, 1 /* cudaStreamCaptureModeThreadLocal */) == 0);
    const cudnnfe_status_t status = cudnnfe_graph_execute(
        g, handle(), bindings.data(), bindings.size(), ws.get(), ws.size(), stream);
    void *captured = nullptr;
    const int end = rt.StreamEndCapture(stream, &captured);
    CHECK_MSG(status == CUDNNFE_STATUS_OK, "execute under capture: %s",
              cudnnfe_handle_last_error(handle()));
    REQUIRE(end == 0 && captured);
    void *exec = nullptr;
    REQUIRE(rt.GraphInstantiateWithFlags(&exec, captured, 0) == 0);
    REQUIRE(rt.GraphLaunch(exec, stream) == 0);
    gpu::runtime().StreamSynchronize(stream);
    CHECK(b.read(b.y2) == direct);
    rt.GraphExecDestroy(exec);
    rt.GraphDestroy(captured);
  }

  // cuDNN's native API, for plans that support it.
  GraphPtr g;
  Uids u = add_graph(g, Kind::kMatmul, "native_");
  cudnnfe_build_options_t o = gpu_options(CUDNNFE_BUILD_POLICY_HEURISTICS_CHOICE);
  o.require_behavior_notes = CUDNNFE_BEHAVIOR_NOTE_SUPPORTS_CUDA_GRAPH_NATIVE_API;
  o.exclude_behavior_notes = 0;  // runtime-compiled engines may support it
  if (cudnnfe_graph_build(g, handle(), &o) != CUDNNFE_STATUS_OK) {
    std::printf("  no plan supports the native CUDA graph API here: %s\n",
                cudnnfe_graph_last_error(g));
    CHECK(std::strstr(cudnnfe_graph_last_error(g), "require_behavior_notes"));
    gpu::runtime().StreamDestroy(stream);
    return;
  }
  const char *name = nullptr;
  cudnnfe_graph_get_plan_name(g, &name);
  std::printf("  native CUDA graph plan: %s\n", name);
  Buffers b(g, u);
  REQUIRE(b.ok());
  const std::vector<uint8_t> direct = run(g, b, b.y);
  gpu::DeviceBuffer ws(static_cast<size_t>(workspace_of(g)));
  void *cuda_graph = nullptr;
  REQUIRE(rt.GraphCreate(&cuda_graph, 0) == 0);
  auto bindings = b.bindings(b.y2.get());
  b.clear(b.y2);
  REQUIRE_OK(cudnnfe_graph_populate_cuda_graph(g, handle(), bindings.data(), bindings.size(),
                                               ws.get(), ws.size(), cuda_graph));
  void *exec = nullptr;
  REQUIRE(rt.GraphInstantiateWithFlags(&exec, cuda_graph, 0) == 0);
  REQUIRE(rt.GraphLaunch(exec, stream) == 0);
  gpu::runtime().StreamSynchronize(stream);
  CHECK(b.read(b.y2) == direct);
  // Replays run again on the same buffers.
  b.clear(b.y2);
  for (int i = 0; i < 3; ++i) REQUIRE(rt.GraphLaunch(exec, stream) == 0);
  gpu::runtime().StreamSynchronize(stream);
  CHECK(b.read(b.y2) == direct);
  rt.GraphExecDestroy(exec);
  // Update: the same CUDA graph pointed at another output buffer.
  auto moved = b.bindings(b.y3.get());
  b.clear(b.y3);
  REQUIRE_OK(cudnnfe_graph_update_cuda_graph(g, handle(), moved.data(), moved.size(), ws.get(),
                                             ws.size(), cuda_graph));
  REQUIRE(rt.GraphInstantiateWithFlags(&exec, cuda_graph, 0) == 0);
  REQUIRE(rt.GraphLaunch(exec, stream) == 0);
  gpu::runtime().StreamSynchronize(stream);
  CHECK(b.read(b.y3) == direct);
  rt.GraphExecDestroy(exec);
  rt.GraphDestroy(cuda_graph);
  // Bad arguments are reported on the handle.
  CHECK_FAILS(cudnnfe_graph_populate_cuda_graph(g, handle(), bindings.data(), bindings.size(),
                                                ws.get(), ws.size(), nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "cuda_graph");
  gpu::runtime().StreamDestroy(stream);
}
