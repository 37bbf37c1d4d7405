// Verify mode (docs/verify.md): the first execute of each plan is checked
// against the CPU reference on a sample of output elements. On the CPU
// reference (every case here runs in CI) the check compares the executed
// graph with an independent sampled evaluation; on the GPU (cases named
// gpu_*, skipped without one) with cuDNN's result. A test-only hook
// (CUDNNFE_VERIFY_TEST_CORRUPT=1) spoils an output element after the run,
// so that each family shows a planted wrong result caught; the families
// that cannot be checked pass and say why in the log.
#include <cstddef>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gpu_tensor_data.h"
#include "harness.h"

namespace {

using namespace gpu_test;

// ---------------------------------------------------------------------------
// Environment and log

// Sets an environment variable for one scope (unset: value nullptr).
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char *name_;
  std::string old_;
  bool had_ = false;
};

std::mutex log_mutex;
std::vector<std::string> log_lines;

void collect(cudnnfe_log_level_t, const char *message, void *) {
  std::lock_guard<std::mutex> lock(log_mutex);
  if (std::strstr(message, "verify")) log_lines.emplace_back(message);
}

// Collects verify's log lines for one scope.
struct LogCapture {
  LogCapture() {
    std::lock_guard<std::mutex> lock(log_mutex);
    log_lines.clear();
    cudnnfe_set_log_callback(collect, nullptr, CUDNNFE_LOG_LEVEL_INFO);
  }
  ~LogCapture() { cudnnfe_set_log_callback(nullptr, nullptr, CUDNNFE_LOG_LEVEL_OFF); }
  // Lines containing every one of `parts`.
  int count(std::initializer_list<const char *> parts) const {
    std::lock_guard<std::mutex> lock(log_mutex);
    int n = 0;
    for (const std::string &line : log_lines) {
      bool all = true;
      for (const char *p : parts) all = all && line.find(p) != std::string::npos;
      n += all;
    }
    return n;
  }
  std::string text() const {
    std::lock_guard<std::mutex> lock(log_mutex);
    std::string s;
    for (const std::string &line : log_lines) s += "    " + line + "\n";
    return s;
  }
};

// ---------------------------------------------------------------------------
// Graphs

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dt, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dt, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

void output(cudnnfe_graph_t *g, int64_t uid, cudnnfe_dtype_t dt = CUDNNFE_DTYPE_NOT_SET) {
  ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
  if (dt != CUDNNFE_DTYPE_NOT_SET) ok(cudnnfe_tensor_set_dtype(g, uid, dt), "set_dtype");
}

// Channels-last strides of [n, c, h, w].
Dims nhwc(const Dims &d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

int64_t pointwise(cudnnfe_graph_t *g, cudnnfe_pointwise_mode_t mode, int64_t a, int64_t b,
                  const char *name) {
  cudnnfe_pointwise_options_t o;
  cudnnfe_pointwise_options_init(&o);
  o.name = name;
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t y = 0;
  ok(cudnnfe_graph_add_pointwise(g, mode, a, b, 0, &o, &y), "add_pointwise");
  return y;
}

cudnnfe_conv_options_t conv_options(const char *name, int64_t pad, int64_t stride) {
  cudnnfe_conv_options_t o;
  cudnnfe_conv_options_init(&o);
  o.name = name;
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  for (int i = 0; i < 2; ++i) {
    o.pre_padding[i] = o.post_padding[i] = pad;
    o.stride[i] = stride;
  }
  return o;
}

using Builder = std::function<void(cudnnfe_graph_t *, cudnnfe_dtype_t)>;

// y = relu(conv(x, w) + bias), channels-last, 3x3, padding 1.
void conv_bias_relu(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims xd = {2, 8, 12, 12}, wd = {16, 8, 3, 3};
  const int64_t x = input(g, "x", dt, xd, nhwc(xd)), w = input(g, "w", dt, wd, nhwc(wd));
  const int64_t bias = input(g, "bias", dt, {1, 16, 1, 1});
  const cudnnfe_conv_options_t o = conv_options("conv", 1, 1);
  int64_t conv = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &conv), "add_conv_fprop");
  const int64_t biased = pointwise(g, CUDNNFE_POINTWISE_ADD, conv, bias, "bias");
  output(g, pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, biased, 0, "relu"), dt);
}

// dx = dgrad(dy, w), stride 2.
void conv_dgrad(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims dyd = {2, 16, 6, 6}, wd = {16, 8, 3, 3}, dxd = {2, 8, 12, 12};
  const int64_t dy = input(g, "dy", dt, dyd, nhwc(dyd)), w = input(g, "w", dt, wd, nhwc(wd));
  const cudnnfe_conv_options_t o = conv_options("dgrad", 1, 2);
  int64_t dx = 0;
  ok(cudnnfe_graph_add_conv_dgrad(g, dy, w, &o, &dx), "add_conv_dgrad");
  const Dims strides = nhwc(dxd);
  ok(cudnnfe_tensor_set_dims(g, dx, 4, dxd.data()), "set_dims");
  ok(cudnnfe_tensor_set_strides(g, dx, 4, strides.data()), "set_strides");
  output(g, dx, dt);
}

// dw = wgrad(x, dy), padding 1.
void conv_wgrad(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims xd = {2, 8, 12, 12}, dyd = {2, 16, 12, 12}, dwd = {16, 8, 3, 3};
  const int64_t x = input(g, "x", dt, xd, nhwc(xd)), dy = input(g, "dy", dt, dyd, nhwc(dyd));
  const cudnnfe_conv_options_t o = conv_options("wgrad", 1, 1);
  int64_t dw = 0;
  ok(cudnnfe_graph_add_conv_wgrad(g, x, dy, &o, &dw), "add_conv_wgrad");
  const Dims strides = nhwc(dwd);
  ok(cudnnfe_tensor_set_strides(g, dw, 4, strides.data()), "set_strides");
  output(g, dw, dt);
}

// c = relu(a @ b + bias), b broadcast over the batch.
void matmul_bias_relu(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t a = input(g, "a", dt, {2, 64, 96}), b = input(g, "b", dt, {1, 96, 80});
  const int64_t bias = input(g, "bias", dt, {1, 1, 80});
  cudnnfe_matmul_options_t o;
  cudnnfe_matmul_options_init(&o);
  o.name = "matmul";
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t c = 0;
  ok(cudnnfe_graph_add_matmul(g, a, b, &o, &c), "add_matmul");
  const int64_t biased = pointwise(g, CUDNNFE_POINTWISE_ADD, c, bias, "bias");
  output(g, pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, biased, 0, "relu"), dt);
}

// Causal GQA attention in BSHD layout, with stats.
void sdpa(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t b = 2, hq = 4, hk = 2, s = 64, d = 32;
  const Dims qd = {b, hq, s, d}, kd = {b, hk, s, d};
  const Dims qs = {s * hq * d, d, hq * d, 1}, ks = {s * hk * d, d, hk * d, 1};
  const int64_t q = input(g, "q", dt, qd, qs), k = input(g, "k", dt, kd, ks),
                v = input(g, "v", dt, kd, ks);
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attention";
  o.generate_stats = 1;
  o.causal_mask = 1;
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, &stats), "add_sdpa");
  const Dims os = qs;
  ok(cudnnfe_tensor_set_strides(g, out, 4, os.data()), "set_strides");
  output(g, out, dt);
  output(g, stats, CUDNNFE_DTYPE_FLOAT);
}

void norm(cudnnfe_graph_t *g, cudnnfe_dtype_t dt, bool layer) {
  const int64_t x = input(g, "x", dt, {256, 1024});
  const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 1024});
  const int64_t bias = layer ? input(g, "bias", CUDNNFE_DTYPE_FLOAT, {1, 1024}) : 0;
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = layer ? "layernorm" : "rmsnorm";
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t y = 0, s0 = 0, s1 = 0;
  if (layer)
    ok(cudnnfe_graph_add_layernorm(g, x, scale, bias, &o, &y, &s0, &s1), "add_layernorm");
  else
    ok(cudnnfe_graph_add_rmsnorm(g, x, scale, bias, &o, &y, &s0), "add_rmsnorm");
  output(g, y, dt);
  output(g, s0, CUDNNFE_DTYPE_FLOAT);
  if (s1) output(g, s1, CUDNNFE_DTYPE_FLOAT);
}
void layernorm(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  norm(g, dt, true);
}
void rmsnorm(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  norm(g, dt, false);
}

// y = sum over the last dim of exp(x * s), s broadcast.
void pointwise_reduction(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {4, 32, 33}), s = input(g, "s", dt, {1, 32, 1});
  const int64_t e = pointwise(g, CUDNNFE_POINTWISE_EXP,
                              pointwise(g, CUDNNFE_POINTWISE_MUL, x, s, "scale"), 0, "exp");
  cudnnfe_reduction_options_t o;
  cudnnfe_reduction_options_init(&o);
  o.name = "sum";
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t y = 0;
  ok(cudnnfe_graph_add_reduction(g, CUDNNFE_REDUCTION_ADD, e, &o, &y), "add_reduction");
  const Dims yd = {4, 32, 1};
  ok(cudnnfe_tensor_set_dims(g, y, 3, yd.data()), "set_dims");
  output(g, y, CUDNNFE_DTYPE_FLOAT);
  // And the elementwise result itself, transposed: a layout op in the cone.
  output(g, pointwise(g, CUDNNFE_POINTWISE_IDENTITY, e, 0, "copy"), dt);
}

// Batch norm has no sampled form: it runs in full on the CPU reference.
void batchnorm(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims xd = {4, 8, 6, 6};
  const int64_t x = input(g, "x", dt, xd, nhwc(xd));
  const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 8, 1, 1});
  const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, {1, 8, 1, 1});
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "bn";
  o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
  int64_t y = 0, mean = 0, inv = 0, next_mean = 0, next_var = 0;
  ok(cudnnfe_graph_add_batchnorm(g, x, scale, bias, 0, 0, &o, &y, &mean, &inv, &next_mean,
                                 &next_var),
     "add_batchnorm");
  output(g, y, dt);
  output(g, mean, CUDNNFE_DTYPE_FLOAT);
  output(g, inv, CUDNNFE_DTYPE_FLOAT);
}

// Grouped (2 groups), strided, dilated, CONVOLUTION mode (flipped filter).
cudnnfe_conv_options_t grouped_options(const char *name) {
  cudnnfe_conv_options_t o = conv_options(name, 2, 2);
  o.dilation[0] = o.dilation[1] = 2;
  o.mode = CUDNNFE_CONV_MODE_CONVOLUTION;
  return o;
}

void conv_grouped(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {2, 8, 9, 9}), w = input(g, "w", dt, {12, 4, 3, 3});
  const cudnnfe_conv_options_t o = grouped_options("grouped");
  int64_t y = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
  output(g, y, dt);
}

void dgrad_grouped(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t dy = input(g, "dy", dt, {2, 12, 5, 5}), w = input(g, "w", dt, {12, 4, 3, 3});
  const cudnnfe_conv_options_t o = grouped_options("dgrad");
  int64_t dx = 0;
  ok(cudnnfe_graph_add_conv_dgrad(g, dy, w, &o, &dx), "add_conv_dgrad");
  const Dims dxd = {2, 8, 9, 9};
  ok(cudnnfe_tensor_set_dims(g, dx, 4, dxd.data()), "set_dims");
  output(g, dx, dt);
}

void wgrad_grouped(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {2, 8, 9, 9}), dy = input(g, "dy", dt, {2, 12, 5, 5});
  const cudnnfe_conv_options_t o = grouped_options("wgrad");
  int64_t dw = 0;
  ok(cudnnfe_graph_add_conv_wgrad(g, x, dy, &o, &dw), "add_conv_wgrad");
  const Dims dwd = {12, 4, 3, 3};
  ok(cudnnfe_tensor_set_dims(g, dw, 4, dwd.data()), "set_dims");
  output(g, dw, dt);
}

void conv3d(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {1, 4, 5, 6, 7}), w = input(g, "w", dt, {6, 4, 2, 3, 3});
  cudnnfe_conv_options_t o = conv_options("conv3d", 1, 1);
  o.pre_padding[2] = o.post_padding[2] = 1;
  int64_t y = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
  output(g, y, dt);
}

void conv1d(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {2, 4, 40}), w = input(g, "w", dt, {5, 4, 3});
  cudnnfe_conv_options_t o = conv_options("conv1d", 0, 3);
  int64_t y = 0;
  ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
  output(g, y, dt);
}

// a column-major, b batch-broadcast.
void matmul_transposed(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t a = input(g, "a", dt, {3, 40, 24}, {960, 1, 40});
  const int64_t b = input(g, "b", dt, {1, 24, 36});
  int64_t c = 0;
  ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "add_matmul");
  output(g, c, dt);
}

// Bias, padding mask, a bottom-right band, sink logits, more keys than queries.
void sdpa_options(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t q = input(g, "q", dt, {2, 4, 24, 16}), k = input(g, "k", dt, {2, 4, 40, 16}),
                v = input(g, "v", dt, {2, 4, 40, 16});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attention";
  o.generate_stats = 1;
  o.bias = input(g, "bias", dt, {1, 4, 24, 40});
  o.padding_mask = 1;
  o.seq_len_q = input(g, "seq_q", CUDNNFE_DTYPE_INT32, {2, 1, 1, 1});
  o.seq_len_kv = input(g, "seq_kv", CUDNNFE_DTYPE_INT32, {2, 1, 1, 1});
  o.window_left = 8;
  o.diagonal_alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  o.sink_token = input(g, "sink", CUDNNFE_DTYPE_FLOAT, {1, 4, 1, 1});
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, &stats), "add_sdpa");
  output(g, out, dt);
  output(g, stats, CUDNNFE_DTYPE_FLOAT);
}

// ALiBi (causal) with a given dropout mask and scale.
void sdpa_alibi_mask(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t q = input(g, "q", dt, {1, 4, 20, 8}), k = input(g, "k", dt, {1, 4, 20, 8}),
                v = input(g, "v", dt, {1, 4, 20, 8});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attention";
  o.causal_mask = 1;
  o.alibi_mask = 1;
  o.dropout_mask = input(g, "keep", dt, {1, 4, 20, 20});
  o.dropout_scale = input(g, "keep_scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
  int64_t out = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, nullptr), "add_sdpa");
  output(g, out, dt);
}

// transpose, reshape and slice feeding a pointwise op, and a reduction of
// a middle dim.
void layout_chain(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {4, 6, 10});
  const int32_t perm[3] = {0, 2, 1};
  int64_t t = 0, r = 0, sl = 0;
  ok(cudnnfe_graph_add_transpose(g, x, 3, perm, nullptr, &t), "add_transpose");
  const int64_t dims[2] = {4, 60};
  ok(cudnnfe_graph_add_reshape(g, t, 2, dims, nullptr, &r), "add_reshape");
  const int64_t start[2] = {1, 5}, end[2] = {4, 50}, step[2] = {2, 3};
  ok(cudnnfe_graph_add_slice(g, r, 2, start, end, step, nullptr, &sl), "add_slice");
  output(g, pointwise(g, CUDNNFE_POINTWISE_MUL, sl, sl, "square"), dt);
  cudnnfe_reduction_options_t o;
  cudnnfe_reduction_options_init(&o);
  o.name = "max";
  int64_t y = 0;
  ok(cudnnfe_graph_add_reduction(g, CUDNNFE_REDUCTION_MAX, x, &o, &y), "add_reduction");
  const Dims yd = {4, 1, 10};
  ok(cudnnfe_tensor_set_dims(g, y, 3, yd.data()), "set_dims");
  output(g, y, dt);
}

// Layer norm of 4-D rows with zero-centred gamma.
void layernorm_4d(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const int64_t x = input(g, "x", dt, {16, 8, 4, 4});
  const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 8, 4, 4});
  const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, {1, 8, 4, 4});
  cudnnfe_norm_options_t o;
  cudnnfe_norm_options_init(&o);
  o.name = "layernorm";
  o.zero_centered_gamma = 1;
  int64_t y = 0, mean = 0, inv = 0;
  ok(cudnnfe_graph_add_layernorm(g, x, scale, bias, &o, &y, &mean, &inv), "add_layernorm");
  output(g, y, dt);
  output(g, inv, CUDNNFE_DTYPE_FLOAT);
}

struct Family {
  const char *name;
  Builder build;
  const char *node;  // the label a mismatch names
};

const Family kFamilies[] = {
    {"conv_bias_relu", conv_bias_relu, "pointwise \"relu\""},
    {"conv_dgrad", conv_dgrad, "conv_dgrad \"dgrad\""},
    {"conv_wgrad", conv_wgrad, "conv_wgrad \"wgrad\""},
    {"matmul_bias_relu", matmul_bias_relu, "pointwise \"relu\""},
    {"sdpa", sdpa, "sdpa \"attention\""},
    {"layernorm", layernorm, "layernorm \"layernorm\""},
    {"rmsnorm", rmsnorm, "rmsnorm \"rmsnorm\""},
    {"pointwise_reduction", pointwise_reduction, "reduction \"sum\""},
    {"batchnorm", batchnorm, "batchnorm \"bn\""},
};

// ---------------------------------------------------------------------------
// Building and running

struct Options {
  cudnnfe_target_t target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_verify_mode_t verify = CUDNNFE_VERIFY_ON;
  int32_t samples = 0;
  double rtol = 0.0;
  int executes = 1;
  bool bind = false;  // run through cudnnfe_graph_bind instead of execute
  cudnnfe_cuda_graph_mode_t cuda_graph = CUDNNFE_CUDA_GRAPH_OFF;
};

// Inputs whose values must make sense (sequence lengths) by name.
Fill fill_of(const std::string &name) {
  if (name == "seq_q" || name == "seq_kv") return Fill{8, 24, true};
  return Fill{};
}

struct Outcome {
  bool ran = false;                        // built and executed (whatever the status)
  std::vector<cudnnfe_status_t> statuses;  // one per execute
  std::vector<std::string> messages;
  std::string plan;
  int64_t output_elements = 0;
};

// Buffers of one run: host bytes, and device copies on the GPU.
struct Buffers {
  std::vector<TensorInfo> tensors;
  std::vector<Bytes> host;
  std::vector<gpu::DeviceBuffer> device;
  std::vector<void *> pointers;
};

Buffers make_buffers(cudnnfe_graph_t *g, bool on_gpu, uint32_t seed) {
  Buffers b;
  size_t count = 0;
  ok(cudnnfe_graph_get_bound_uids(g, nullptr, 0, &count), "get_bound_uids");
  std::vector<int64_t> uids(count);
  ok(cudnnfe_graph_get_bound_uids(g, uids.data(), count, &count), "get_bound_uids");
  std::mt19937 rng(seed);
  for (int64_t uid : uids) {
    TensorInfo t = describe(g, uid);
    cudnnfe_tensor_kind_t kind = 0;
    ok(cudnnfe_tensor_get_kind(g, uid, &kind), "get_kind");
    t.is_output = kind == CUDNNFE_TENSOR_KIND_OUTPUT;
    b.host.push_back(t.is_output ? Bytes(t.bytes, 0) : random_bytes(t, fill_of(t.name), rng));
    b.tensors.push_back(t);
  }
  for (size_t i = 0; i < uids.size(); ++i) {
    if (!on_gpu) {
      b.pointers.push_back(b.host[i].data());
      continue;
    }
    b.device.emplace_back(b.tensors[i].bytes);
    if (!b.device.back().ok()) throw Failure("cudaMalloc failed");
    ok(gpu::runtime().Memcpy(b.device.back().get(), b.host[i].data(), b.tensors[i].bytes,
                             gpu::kHostToDevice) == 0
           ? CUDNNFE_STATUS_OK
           : CUDNNFE_STATUS_CUDA_ERROR,
       "cudaMemcpy");
    b.pointers.push_back(b.device.back().get());
  }
  return b;
}

Outcome run(const std::string &name, cudnnfe_dtype_t dt, const Builder &build,
            const Options &options) {
  Outcome out;
  GraphPtr graph = new_graph(name, dt);
  cudnnfe_graph_t *g = graph.get();
  ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "set_compute_dtype");
  build(g, dt);
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = options.target;
  o.verify = options.verify;
  o.verify_samples = options.samples;
  o.verify_rtol = options.rtol;
  cudnnfe_status_t s = cudnnfe_graph_build(g, nullptr, &o);
  if (s != CUDNNFE_STATUS_OK) {
    if (options.target == CUDNNFE_TARGET_GPU && s == CUDNNFE_STATUS_NOT_SUPPORTED) {
      std::printf("  %s: cuDNN offers no plan: %s\n", name.c_str(), cudnnfe_graph_last_error(g));
      return out;
    }
    throw Failure(std::string("build returned ") + cudnnfe_status_name(s) + ": " +
                  cudnnfe_graph_last_error(g));
  }
  const char *plan = nullptr;
  ok(cudnnfe_graph_get_plan_name(g, &plan), "get_plan_name");
  out.plan = plan;
  const bool on_gpu = options.target == CUDNNFE_TARGET_GPU;
  Buffers b = make_buffers(g, on_gpu, seed_of(name));
  for (const TensorInfo &t : b.tensors)
    if (t.is_output) {
      int64_t n = 1;
      for (int64_t d : t.dims) n *= d;
      out.output_elements += n;
    }
  int64_t ws_size = 0;
  ok(cudnnfe_graph_get_workspace_size(g, &ws_size), "get_workspace_size");
  gpu::DeviceBuffer ws(on_gpu ? static_cast<size_t>(ws_size) : 0);
  cudnnfe_handle_t *h = test_handle();
  cudnnfe_bound_t *bound = nullptr;
  if (options.bind) {
    cudnnfe_bind_options_t bo;
    cudnnfe_bind_options_init(&bo);
    bo.cuda_graph = options.cuda_graph;
    ok(cudnnfe_graph_bind(&bound, g, h, b.pointers.data(), b.pointers.size(), ws.get(),
                          static_cast<size_t>(ws_size), &bo),
       "cudnnfe_graph_bind");
  }
  out.ran = true;
  for (int i = 0; i < options.executes; ++i) {
    s = bound ? cudnnfe_bound_execute(bound, nullptr)
              : cudnnfe_graph_execute_ordered(g, h, b.pointers.data(), b.pointers.size(), ws.get(),
                                              static_cast<size_t>(ws_size), nullptr);
    out.statuses.push_back(s);
    out.messages.push_back(s == CUDNNFE_STATUS_OK ? "" : cudnnfe_handle_last_error(h));
  }
  if (bound) cudnnfe_bound_destroy(bound);
  if (on_gpu) gpu::runtime().DeviceSynchronize();
  return out;
}

bool contains(const std::string &text, const char *part) {
  return text.find(part) != std::string::npos;
}

// Runs `f`, turning a Failure into a test failure.
void guarded(const std::function<void()> &f) {
  try {
    f();
  } catch (const Failure &e) {
    std::printf("  %s\n", e.what());
    ++testing::state().failures;
  }
}

// Every family passes with correct results, and catches the planted one.
void check_family(const Family &f, cudnnfe_dtype_t dt, cudnnfe_target_t target) {
  const std::string name = std::string(f.name) + "_" + short_name(dt);
  Options o;
  o.target = target;
  {
    LogCapture log;
    const Outcome good = run(name, dt, f.build, o);
    if (!good.ran) return;
    CHECK_MSG(good.statuses[0] == CUDNNFE_STATUS_OK, "%s: %s", name.c_str(),
              good.messages[0].c_str());
    CHECK_MSG(log.count({"verify", name.c_str(), "passed"}) == 1, "%s log:\n%s", name.c_str(),
              log.text().c_str());
  }
  ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
  const Outcome bad = run(name, dt, f.build, o);
  if (!bad.ran) return;
  const std::string &m = bad.messages[0];
  CHECK_MSG(bad.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED, "%s returned %s: %s", name.c_str(),
            cudnnfe_status_name(bad.statuses[0]), m.c_str());
  for (const char *part :
       {"verify: graph", name.c_str(), f.node, "differs from the CPU reference",
        "worst at index [0,", "got", "expected", "tolerance", "plan", bad.plan.c_str()})
    CHECK_MSG(contains(m, part), "%s: the message lacks \"%s\": %s", name.c_str(), part, m.c_str());
  if (target == CUDNNFE_TARGET_GPU)
    for (const char *part : {"cuDNN 9.", "GPU ", "engine "})
      CHECK_MSG(contains(m, part), "%s: the message lacks \"%s\": %s", name.c_str(), part,
                m.c_str());
}

}  // namespace

// ---------------------------------------------------------------------------
// CPU reference: every family, correct and planted

TEST(cpu_families_pass_and_catch_a_planted_error) {
  for (const Family &f : kFamilies)
    for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_FLOAT})
      guarded([&] { check_family(f, dt, CUDNNFE_TARGET_CPU_REFERENCE); });
}

// The sampled reference computes each element as the full one does: the
// CPU executor (full loops) and the check (sampled ones) must agree on a
// large sample of each of these graphs, including a planted error.
TEST(cpu_sampled_reference_matches_the_full_one) {
  const Family extra[] = {
      {"conv_grouped", conv_grouped, "conv_fprop \"grouped\""},
      {"dgrad_grouped", dgrad_grouped, "conv_dgrad \"dgrad\""},
      {"wgrad_grouped", wgrad_grouped, "conv_wgrad \"wgrad\""},
      {"conv3d", conv3d, "conv_fprop \"conv3d\""},
      {"conv1d", conv1d, "conv_fprop \"conv1d\""},
      {"matmul_transposed", matmul_transposed, "matmul"},
      {"sdpa_options", sdpa_options, "sdpa \"attention\""},
      {"sdpa_alibi_mask", sdpa_alibi_mask, "sdpa \"attention\""},
      {"layout_chain", layout_chain, "pointwise \"square\""},
      {"layernorm_4d", layernorm_4d, "layernorm \"layernorm\""},
  };
  for (const Family &f : extra)
    for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_BFLOAT16})
      guarded([&] {
        LogCapture log;
        Options o;
        o.samples = 200;
        const std::string name = std::string(f.name) + "_" + short_name(dt);
        const Outcome good = run(name, dt, f.build, o);
        CHECK_MSG(good.statuses[0] == CUDNNFE_STATUS_OK, "%s: %s", name.c_str(),
                  good.messages[0].c_str());
        CHECK_MSG(log.count({name.c_str(), "passed"}) == 1, "%s log:\n%s", name.c_str(),
                  log.text().c_str());
        CHECK_MSG(log.count({name.c_str(), "run in full"}) == 0, "%s log:\n%s", name.c_str(),
                  log.text().c_str());
        ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
        const Outcome bad = run(name, dt, f.build, o);
        CHECK_MSG(
            bad.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED && contains(bad.messages[0], f.node),
            "%s returned %s: %s", name.c_str(), cudnnfe_status_name(bad.statuses[0]),
            bad.messages[0].c_str());
      });
}

// Padding rows (and rows that see no key) are unspecified on the GPU: the
// check leaves them out, and plants its test error in a compared element.
TEST(cpu_attention_rows_left_unspecified_are_not_compared) {
  guarded([] {
    LogCapture log;
    Options o;
    o.samples = 400;
    const Outcome good = run("padded", CUDNNFE_DTYPE_HALF, sdpa_options, o);
    CHECK(good.statuses[0] == CUDNNFE_STATUS_OK);
    CHECK_MSG(
        log.count({"padded", "passed", "in rows the op leaves unspecified not compared"}) == 1,
        "log:\n%s", log.text().c_str());
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    const Outcome bad = run("padded_bad", CUDNNFE_DTYPE_HALF, sdpa_options, o);
    CHECK_MSG(bad.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED, "%s", bad.messages[0].c_str());
  });
}

TEST(cpu_sampled_check_reads_part_of_the_inputs) {
  // A sampled conv reads the receptive fields of its samples only; a node
  // with no sampled form (batch norm) runs in full and says so.
  guarded([] {
    LogCapture log;
    Options o;
    o.samples = 4;
    const Outcome conv = run("sampled_conv", CUDNNFE_DTYPE_HALF, conv_bias_relu, o);
    CHECK(conv.statuses[0] == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"sampled_conv", "passed", "\"relu::out\" 4 elements"}) == 1, "log:\n%s",
              log.text().c_str());
    const Outcome bn = run("full_bn", CUDNNFE_DTYPE_HALF, batchnorm, o);
    CHECK(bn.statuses[0] == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"full_bn", "passed", "run in full: batchnorm \"bn\""}) == 1, "log:\n%s",
              log.text().c_str());
  });
}

TEST(cpu_samples_option_checks_every_element) {
  guarded([] {
    LogCapture log;
    Options o;
    o.samples = 1 << 20;
    const Outcome r = run("all_elements", CUDNNFE_DTYPE_FLOAT, matmul_bias_relu, o);
    CHECK(r.statuses[0] == CUDNNFE_STATUS_OK);
    const std::string all = "\"relu::out\" " + std::to_string(r.output_elements) + " elements";
    CHECK_MSG(log.count({"all_elements", "passed", all.c_str()}) == 1, "expected %s in:\n%s",
              all.c_str(), log.text().c_str());
  });
}

TEST(cpu_plan_is_checked_once_and_a_failure_is_reported_again) {
  guarded([] {
    LogCapture log;
    Options o;
    o.executes = 3;
    const Outcome good = run("once", CUDNNFE_DTYPE_HALF, sdpa, o);
    for (cudnnfe_status_t s : good.statuses) CHECK(s == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"once", "passed"}) == 1, "log:\n%s", log.text().c_str());
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    const Outcome bad = run("again", CUDNNFE_DTYPE_HALF, sdpa, o);
    for (cudnnfe_status_t s : bad.statuses) CHECK(s == CUDNNFE_STATUS_VERIFY_FAILED);
    CHECK(contains(bad.messages[1], "reported again"));
    CHECK(contains(bad.messages[2], "worst at index"));
  });
}

TEST(cpu_bound_execution_checks_its_first_run) {
  guarded([] {
    LogCapture log;
    Options o;
    o.bind = true;
    o.executes = 2;
    const Outcome good = run("bound", CUDNNFE_DTYPE_HALF, conv_wgrad, o);
    for (cudnnfe_status_t s : good.statuses) CHECK(s == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"bound", "passed"}) == 1, "log:\n%s", log.text().c_str());
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    const Outcome bad = run("bound_bad", CUDNNFE_DTYPE_HALF, conv_wgrad, o);
    CHECK(bad.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED);
    CHECK(bad.statuses[1] == CUDNNFE_STATUS_VERIFY_FAILED);
    CHECK(contains(bad.messages[0], "conv_wgrad \"wgrad\""));
  });
}

TEST(cpu_threads_check_a_plan_once) {
  guarded([] {
    LogCapture log;
    GraphPtr graph = new_graph("threads", CUDNNFE_DTYPE_HALF);
    cudnnfe_graph_t *g = graph.get();
    matmul_bias_relu(g, CUDNNFE_DTYPE_HALF);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    o.verify = CUDNNFE_VERIFY_ON;
    ok(cudnnfe_graph_build(g, nullptr, &o), "build");
    constexpr int kThreads = 8;
    std::vector<cudnnfe_status_t> statuses(kThreads, CUDNNFE_STATUS_INTERNAL);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i)
      threads.emplace_back([&, i] {
        Buffers b = make_buffers(g, false, 7);  // same inputs, own buffers
        cudnnfe_handle_t *h = nullptr;
        cudnnfe_handle_create(&h, -1);
        statuses[static_cast<size_t>(i)] = cudnnfe_graph_execute_ordered(
            g, h, b.pointers.data(), b.pointers.size(), nullptr, 0, nullptr);
        cudnnfe_handle_destroy(h);
      });
    for (std::thread &t : threads) t.join();
    for (cudnnfe_status_t s : statuses) CHECK(s == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"threads", "passed"}) == 1, "log:\n%s", log.text().c_str());
  });
}

// ---------------------------------------------------------------------------
// What is not verified passes, and the log says why

namespace {

// Random numbers: uniform noise added to x.
void rng_noise(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims d = {4, 16};
  const int64_t x = input(g, "x", dt, d);
  cudnnfe_rng_options_t o;
  cudnnfe_rng_options_init(&o);
  o.name = "noise";
  o.distribution = CUDNNFE_RNG_UNIFORM;
  int64_t r = 0;
  ok(cudnnfe_graph_add_rng(g, 2, d.data(), 0, 0, &o, &r), "add_rng");
  output(g, pointwise(g, CUDNNFE_POINTWISE_ADD, x, r, "add"), dt);
}

// Attention with dropout drawn from a seed.
void sdpa_dropout(cudnnfe_graph_t *g, cudnnfe_dtype_t dt) {
  const Dims d = {1, 2, 16, 16};
  const int64_t q = input(g, "q", dt, d), k = input(g, "k", dt, d), v = input(g, "v", dt, d);
  const int64_t seed = input(g, "seed", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
  const int64_t offset = input(g, "offset", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attention";
  o.dropout_probability = 0.25;
  o.dropout_seed = seed;
  o.dropout_offset = offset;
  int64_t out = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, nullptr), "add_sdpa");
  output(g, out, dt);
}

}  // namespace

TEST(cpu_random_numbers_are_not_verified) {
  guarded([] {
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");  // nothing to corrupt: not checked
    LogCapture log;
    const Outcome r = run("random", CUDNNFE_DTYPE_FLOAT, rng_noise, Options{});
    CHECK_MSG(r.statuses[0] == CUDNNFE_STATUS_OK, "%s", r.messages[0].c_str());
    CHECK_MSG(log.count({"random", "not verified", "random numbers of rng \"noise\""}) >= 1,
              "log:\n%s", log.text().c_str());
    const Outcome d = run("dropout", CUDNNFE_DTYPE_HALF, sdpa_dropout, Options{});
    CHECK_MSG(d.statuses[0] == CUDNNFE_STATUS_OK, "%s", d.messages[0].c_str());
    CHECK_MSG(log.count({"dropout", "not verified", "sdpa \"attention\""}) >= 1, "log:\n%s",
              log.text().c_str());
  });
}

TEST(cpu_in_place_output_is_not_verified) {
  guarded([] {
    LogCapture log;
    GraphPtr graph = new_graph("in_place", CUDNNFE_DTYPE_FLOAT);
    cudnnfe_graph_t *g = graph.get();
    const int64_t x = input(g, "x", CUDNNFE_DTYPE_FLOAT, {64});
    const int64_t y = pointwise(g, CUDNNFE_POINTWISE_NEG, x, 0, "neg");
    output(g, y, CUDNNFE_DTYPE_FLOAT);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    o.verify = CUDNNFE_VERIFY_ON;
    ok(cudnnfe_graph_build(g, nullptr, &o), "build");
    std::vector<float> data(64, 1.0f);
    cudnnfe_binding_t b[2] = {{x, data.data()}, {y, data.data()}};
    CHECK_OK(cudnnfe_graph_execute(g, test_handle(), b, 2, nullptr, 0, nullptr));
    CHECK(data[0] == -1.0f);
    CHECK_MSG(log.count({"in_place", "not verified", "overlaps input \"x\""}) >= 1, "log:\n%s",
              log.text().c_str());
  });
}

TEST(cpu_execute_time_shapes_are_not_verified) {
  guarded([] {
    LogCapture log;
    GraphPtr graph = new_graph("overrides", CUDNNFE_DTYPE_FLOAT);
    cudnnfe_graph_t *g = graph.get();
    const int64_t x = input(g, "x", CUDNNFE_DTYPE_FLOAT, {2, 8});
    const int64_t y = pointwise(g, CUDNNFE_POINTWISE_NEG, x, 0, "neg");
    output(g, y, CUDNNFE_DTYPE_FLOAT);
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    o.verify = CUDNNFE_VERIFY_ON;
    o.override_shape_enabled = 1;
    ok(cudnnfe_graph_build(g, nullptr, &o), "build");
    std::vector<float> xs(16, 1.0f), ys(16, 0.0f);
    cudnnfe_binding_t b[2] = {{x, xs.data()}, {y, ys.data()}};
    const int64_t dims[2] = {1, 8}, strides[2] = {8, 1};
    cudnnfe_shape_override_t over[2] = {{x, 2, dims, strides}, {y, 2, dims, strides}};
    CHECK_OK(
        cudnnfe_graph_execute_with_overrides(g, test_handle(), b, 2, over, 2, nullptr, 0, nullptr));
    CHECK_MSG(log.count({"overrides", "not verified", "execute-time shapes"}) == 1, "log:\n%s",
              log.text().c_str());
    CHECK_OK(cudnnfe_graph_execute(g, test_handle(), b, 2, nullptr, 0, nullptr));
    CHECK_MSG(log.count({"overrides", "passed"}) == 1, "log:\n%s", log.text().c_str());
  });
}

// ---------------------------------------------------------------------------
// Options and environment

namespace {

cudnnfe_status_t build_with(cudnnfe_graph_t **out, const cudnnfe_build_options_t *o) {
  GraphPtr graph = new_graph("options", CUDNNFE_DTYPE_FLOAT);
  const int64_t x = input(graph.get(), "x", CUDNNFE_DTYPE_FLOAT, {8});
  output(graph.get(), pointwise(graph.get(), CUDNNFE_POINTWISE_NEG, x, 0, "neg"));
  const cudnnfe_status_t s = cudnnfe_graph_build(graph.get(), nullptr, o);
  *out = graph.release();
  return s;
}

// Whether a build with `o` turns verify mode on (its log says so).
bool verify_on(const cudnnfe_build_options_t *o) {
  LogCapture log;
  cudnnfe_graph_t *g = nullptr;
  const cudnnfe_status_t s = build_with(&g, o);
  GraphPtr owner(g);
  if (s != CUDNNFE_STATUS_OK) throw Failure(cudnnfe_graph_last_error(g));
  return log.count({"verify mode on"}) == 1;
}

}  // namespace

TEST(options_and_environment_turn_verify_on) {
  guarded([] {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    CHECK(o.verify == CUDNNFE_VERIFY_FROM_ENV && o.verify_samples == 0 && o.verify_rtol == 0.0);
    {
      ScopedEnv env("CUDNNFE_VERIFY", nullptr);
      CHECK(!verify_on(&o));
      o.verify = CUDNNFE_VERIFY_ON;
      CHECK(verify_on(&o));
      o.verify = CUDNNFE_VERIFY_FROM_ENV;
    }
    {
      ScopedEnv env("CUDNNFE_VERIFY", "1");
      CHECK(verify_on(&o));
      o.verify = CUDNNFE_VERIFY_OFF;
      CHECK(!verify_on(&o));
      o.verify = CUDNNFE_VERIFY_FROM_ENV;
      // A caller's struct from before 0.4 (no verify fields): the environment decides.
      cudnnfe_build_options_t old;
      cudnnfe_build_options_init_sized(&old, offsetof(cudnnfe_build_options_t, verify));
      old.target = CUDNNFE_TARGET_CPU_REFERENCE;
      CHECK(verify_on(&old));
    }
    {
      ScopedEnv env("CUDNNFE_VERIFY", "0");
      CHECK(!verify_on(&o));
    }
  });
}

TEST(bad_verify_options_are_refused) {
  cudnnfe_build_options_t o;
  cudnnfe_build_options_init(&o);
  o.target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_graph_t *g = nullptr;
  o.verify = 7;
  CHECK_FAILS(build_with(&g, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, "verify is 7");
  cudnnfe_graph_destroy(g);
  o.verify = CUDNNFE_VERIFY_ON;
  o.verify_samples = -1;
  CHECK_FAILS(build_with(&g, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, "verify_samples is -1");
  cudnnfe_graph_destroy(g);
  o.verify_samples = 0;
  o.verify_rtol = -0.5;
  CHECK_FAILS(build_with(&g, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, "verify_rtol is -0.5");
  cudnnfe_graph_destroy(g);
  o.verify_rtol = 0;
  {
    ScopedEnv env("CUDNNFE_VERIFY", "yes");
    o.verify = CUDNNFE_VERIFY_FROM_ENV;
    CHECK_FAILS(build_with(&g, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, "CUDNNFE_VERIFY", "\"yes\"");
    cudnnfe_graph_destroy(g);
    o.verify = CUDNNFE_VERIFY_OFF;  // an explicit choice does not read it
    CHECK_OK(build_with(&g, &o));
    cudnnfe_graph_destroy(g);
  }
  {
    ScopedEnv env("CUDNNFE_VERIFY_SAMPLES", "0");
    o.verify = CUDNNFE_VERIFY_ON;
    CHECK_FAILS(build_with(&g, &o), CUDNNFE_STATUS_INVALID_ARGUMENT, "CUDNNFE_VERIFY_SAMPLES");
    cudnnfe_graph_destroy(g);
  }
}

TEST(rtol_option_sets_the_tolerance) {
  guarded([] {
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    Options o;
    o.rtol = 0.25;
    const Outcome r = run("rtol", CUDNNFE_DTYPE_FLOAT, layernorm, o);
    CHECK(r.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED);
    CHECK_MSG(contains(r.messages[0], "rtol 0.25 of |expected|"), "%s", r.messages[0].c_str());
  });
}

TEST(status_name_of_verify_failed) {
  CHECK(std::strcmp(cudnnfe_status_name(CUDNNFE_STATUS_VERIFY_FAILED),
                    "CUDNNFE_STATUS_VERIFY_FAILED") == 0);
}

// ---------------------------------------------------------------------------
// GPU: cuDNN's results pass for conv, matmul, SDPA and norms, and a planted
// wrong element is caught. Each case prints the plan it checked.

TEST(gpu_families_pass_and_catch_a_planted_error) {
  REQUIRE_GPU();
  const struct {
    const Family *family;
    cudnnfe_dtype_t dt;
  } cases[] = {
      {&kFamilies[0], CUDNNFE_DTYPE_HALF},  {&kFamilies[1], CUDNNFE_DTYPE_HALF},
      {&kFamilies[2], CUDNNFE_DTYPE_HALF},  {&kFamilies[3], CUDNNFE_DTYPE_BFLOAT16},
      {&kFamilies[3], CUDNNFE_DTYPE_FLOAT}, {&kFamilies[4], CUDNNFE_DTYPE_BFLOAT16},
      {&kFamilies[4], CUDNNFE_DTYPE_HALF},  {&kFamilies[5], CUDNNFE_DTYPE_BFLOAT16},
      {&kFamilies[6], CUDNNFE_DTYPE_HALF},  {&kFamilies[0], CUDNNFE_DTYPE_BFLOAT16},
  };
  for (const auto &c : cases) {
    std::printf("  %s %s\n", c.family->name, short_name(c.dt));
    guarded([&] { check_family(*c.family, c.dt, CUDNNFE_TARGET_GPU); });
  }
}

TEST(gpu_cuda_graph_replay_is_checked) {
  REQUIRE_GPU();
  guarded([] {
    LogCapture log;
    Options o;
    o.target = CUDNNFE_TARGET_GPU;
    o.bind = true;
    o.cuda_graph = CUDNNFE_CUDA_GRAPH_CAPTURE;
    o.executes = 2;
    const Outcome good = run("gpu_bound", CUDNNFE_DTYPE_HALF, conv_bias_relu, o);
    if (!good.ran) return;
    for (cudnnfe_status_t s : good.statuses) CHECK(s == CUDNNFE_STATUS_OK);
    CHECK_MSG(log.count({"gpu_bound", "passed"}) == 1, "log:\n%s", log.text().c_str());
    ScopedEnv corrupt("CUDNNFE_VERIFY_TEST_CORRUPT", "1");
    const Outcome bad = run("gpu_bound_bad", CUDNNFE_DTYPE_HALF, conv_bias_relu, o);
    CHECK(bad.statuses[0] == CUDNNFE_STATUS_VERIFY_FAILED);
  });
}
