// What the norm lowerings describe to cuDNN, read from the stub cuDNN
// (tests/stub), which logs every finalized tensor descriptor: layer and RMS
// norm operands collapse into cuDNN's LLM form [rows, features, 1, 1] when
// they can (a transformer's [b, s, d] x with [1, 1, d] scale and bias is
// [b*s, d, 1, 1]), adaptive layer norm's into [B, S, features], and a graph
// whose operands do not collapse is described in its own dims for cuDNN to
// decide. The stub offers no engine, so every build ends NOT_SUPPORTED after
// the lowering; the descriptors are what is checked. Runs without a GPU.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include "harness.h"
#include "stub_counters.h"

namespace {

using Dims = std::vector<int64_t>;

stub_counters *counters() {
  const char *path = std::getenv("CUDNNFE_CUDNN_LIBRARY");
  if (!path) return nullptr;
  void *lib = dlopen(path, RTLD_NOW);
  return lib ? static_cast<stub_counters *>(dlsym(lib, "stub_counters")) : nullptr;
}

#define REQUIRE_STUB()                                                                           \
  do {                                                                                           \
    if (!counters()) SKIP("set CUDNNFE_CUDNN_LIBRARY / CUDNNFE_CUDART_LIBRARY to tests/stub's"); \
  } while (0)

struct Described {
  Dims dims, strides;
};

// A graph built for the GPU against the stub; `described` holds the first
// descriptor the lowering made for each graph UID.
class StubBuild {
 public:
  explicit StubBuild(const char *name) {
    cudnnfe_graph_create(&g_);
    cudnnfe_graph_set_name(g_, name);
    cudnnfe_graph_set_io_dtype(g_, CUDNNFE_DTYPE_HALF);
  }
  ~StubBuild() { cudnnfe_graph_destroy(g_); }
  StubBuild(const StubBuild &) = delete;
  StubBuild &operator=(const StubBuild &) = delete;
  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, const Dims &dims, const Dims &strides = {}) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, CUDNNFE_DTYPE_HALF,
                                      static_cast<int32_t>(dims.size()), dims.data(),
                                      strides.empty() ? nullptr : strides.data(), &uid));
    return uid;
  }

  // Builds for the GPU (refused: the stub has no engine) and reads the log.
  void build(const std::vector<int64_t> &outputs) {
    for (int64_t uid : outputs) CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1));
    stub_counters *c = counters();
    c->tensors_logged = 0;
    cudnnfe_handle_t *h = nullptr;
    CHECK_OK(cudnnfe_handle_create(&h, 0));
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_GPU;
    const cudnnfe_status_t s = cudnnfe_graph_build(g_, h, &o);
    CHECK_MSG(s == CUDNNFE_STATUS_NOT_SUPPORTED, "build returned %s: %s", cudnnfe_status_name(s),
              cudnnfe_graph_last_error(g_));
    CHECK_MSG(std::strstr(cudnnfe_graph_last_error(g_), "no engine") != nullptr,
              "the stub's refusal, not the lowering's: %s", cudnnfe_graph_last_error(g_));
    cudnnfe_handle_destroy(h);
    for (long i = 0; i < c->tensors_logged && i < STUB_MAX_TENSORS; ++i) {
      const stub_tensor &t = c->tensors[i];
      if (described_.count(t.uid)) continue;
      described_[t.uid] = {Dims(t.dims, t.dims + t.rank), Dims(t.strides, t.strides + t.rank)};
    }
  }

  void expect(const char *what, int64_t uid, const Dims &dims, const Dims &strides) const {
    auto it = described_.find(uid);
    CHECK_MSG(it != described_.end(), "%s: not described", what);
    if (it == described_.end()) return;
    CHECK_MSG(it->second.dims == dims && it->second.strides == strides,
              "%s: described as %s strides %s, expected %s strides %s", what,
              text(it->second.dims).c_str(), text(it->second.strides).c_str(), text(dims).c_str(),
              text(strides).c_str());
  }

 private:
  static std::string text(const Dims &d) {
    std::string s = "[";
    for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
    return s + "]";
  }

  cudnnfe_graph_t *g_ = nullptr;
  std::map<int64_t, Described> described_;
};

const bool kNoProbes = [] {
  setenv("CUDNNFE_REFUSAL_PROBES", "0", 1);
  return true;
}();

}  // namespace

TEST(layernorm_bsd_with_shared_scale_is_rows_by_features) {
  REQUIRE_STUB();
  StubBuild b("ln_bsd");
  int64_t x = b.input("x", {2, 3, 8}), s = b.input("scale", {1, 1, 8}),
          bias = b.input("bias", {1, 1, 8});
  int64_t y = 0, mean = 0, inv = 0;
  REQUIRE_OK(cudnnfe_graph_add_layernorm(b.get(), x, s, bias, nullptr, &y, &mean, &inv));
  b.build({y, mean, inv});
  b.expect("x", x, {6, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("y", y, {6, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("scale", s, {1, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("bias", bias, {1, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("mean", mean, {6, 1, 1, 1}, {1, 1, 1, 1});
  b.expect("inv_variance", inv, {6, 1, 1, 1}, {1, 1, 1, 1});
}

TEST(layernorm_with_per_row_features_is_unchanged) {
  REQUIRE_STUB();
  // [N, C, H, W] with a [1, C, H, W] scale: one row per sample, as before.
  StubBuild b("ln_nchw");
  int64_t x = b.input("x", {4, 2, 3, 5}), s = b.input("scale", {1, 2, 3, 5});
  int64_t y = 0, inv = 0;
  REQUIRE_OK(cudnnfe_graph_add_rmsnorm(b.get(), x, s, 0, nullptr, &y, &inv));
  b.build({y, inv});
  b.expect("x", x, {4, 30, 1, 1}, {30, 1, 30, 30});
  b.expect("scale", s, {1, 30, 1, 1}, {30, 1, 30, 30});
  b.expect("inv_rms", inv, {4, 1, 1, 1}, {1, 1, 1, 1});
}

TEST(layernorm_rows_in_another_order_still_collapse) {
  REQUIRE_STUB();
  // x [b=2, s=3, d=8] stored s-major: rows (s, b) are one run of stride 8.
  StubBuild b("ln_s_major");
  int64_t x = b.input("x", {2, 3, 8}, {8, 16, 1}), s = b.input("scale", {1, 1, 8}),
          bias = b.input("bias", {1, 1, 8});
  int64_t y = 0, mean = 0, inv = 0;
  REQUIRE_OK(cudnnfe_graph_add_layernorm(b.get(), x, s, bias, nullptr, &y, &mean, &inv));
  b.build({y, mean, inv});
  b.expect("x", x, {6, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("y (x's layout)", y, {6, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("mean (x's order)", mean, {6, 1, 1, 1}, {1, 1, 1, 1});
}

TEST(layernorm_backward_bsd_with_shared_scale) {
  REQUIRE_STUB();
  StubBuild b("ln_bwd_bsd");
  int64_t dy = b.input("dy", {2, 3, 8}), x = b.input("x", {2, 3, 8}),
          s = b.input("scale", {1, 1, 8}), mean = b.input("mean", {2, 3, 1}),
          inv = b.input("inv", {2, 3, 1});
  int64_t dx = 0, ds = 0, db = 0;
  REQUIRE_OK(
      cudnnfe_graph_add_layernorm_backward(b.get(), dy, x, s, mean, inv, nullptr, &dx, &ds, &db));
  b.build({dx, ds, db});
  b.expect("dx", dx, {6, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("dscale", ds, {1, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("dbias", db, {1, 8, 1, 1}, {8, 1, 8, 8});
  b.expect("mean", mean, {6, 1, 1, 1}, {1, 1, 1, 1});
}

TEST(norm_operands_that_do_not_collapse_keep_their_own_dims) {
  REQUIRE_STUB();
  // Rows of 32 features padded to 40: the features are no contiguous block.
  // cudnnfe used to refuse this; now cuDNN sees the tensors as they are.
  StubBuild b("padded_rows");
  int64_t x = b.input("x", {16, 8, 32}, {8 * 40, 40, 1}), s = b.input("scale", {1, 8, 32});
  int64_t y = 0, inv = 0;
  REQUIRE_OK(cudnnfe_graph_add_rmsnorm(b.get(), x, s, 0, nullptr, &y, &inv));
  b.build({y, inv});
  b.expect("x", x, {16, 8, 32}, {320, 40, 1});
  b.expect("scale", s, {1, 8, 32}, {256, 32, 1});
}

TEST(adalayernorm_shared_scale_is_batch_rows_features) {
  REQUIRE_STUB();
  StubBuild b("ada_shared");
  int64_t x = b.input("x", {2, 5, 4, 4}), s = b.input("scale", {1, 1, 4, 4}),
          bias = b.input("bias", {2, 1, 4, 4});
  int64_t y = 0, mean = 0, inv = 0;
  REQUIRE_OK(cudnnfe_graph_add_adalayernorm(b.get(), x, s, bias, nullptr, &y, &mean, &inv));
  b.build({y, mean, inv});
  b.expect("x", x, {2, 5, 16}, {80, 16, 1});
  b.expect("scale", s, {1, 1, 16}, {16, 16, 1});
  b.expect("bias", bias, {2, 1, 16}, {16, 16, 1});
  b.expect("mean", mean, {2, 5, 1}, {5, 1, 1});
}
