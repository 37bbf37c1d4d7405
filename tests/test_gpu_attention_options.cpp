// GPU tests of attention's options (scale tensor, padding, diagonal band,
// ALiBi, dropout drawn and given, dBias, the sink and its gradient dSink),
// forward and backward, through the public C API. Each configuration is
// built for the GPU and for the CPU reference, run on the same inputs, and
// compared element by element: O at 2e-2, dQ/dK/dV/dBias at 2e-2 (fp16) and
// 7e-2 (bf16 dK, dV, dBias), dSink at 4e-2 + 2e-2 |cpu| (cudnn-frontend's).
// With padding only the valid region is compared (rows below seq_len_q for
// O, stats and dQ; rows below seq_len_kv for dK and dV): the rest is
// unspecified on the GPU.
//
// Drawn dropout cannot be compared with the CPU reference (cuDNN's Philox
// bits are its own), so it is checked through what it must do: with s_kv =
// d_v and V = identity, O = P * keep / (1 - p) shows every decision; each
// element must be 0 or P / (1 - p), the dropped fraction must be near p,
// the same seed must repeat bit for bit and another seed or offset must
// not, the stats must be those without dropout, and the forward with
// random V and the backward must equal the given-mask form run with the
// mask read back from the identity run.
//
// Errors are made visible as in test_gpu_transformer.cpp: outputs start as
// NaN inside guard bands, the workspace starts as NaN, and every compared
// case runs twice. Without a GPU every case skips; CUDNNFE_ATTENTION_TESTS_
// ON_CPU=1 runs the whole harness with the CPU reference in the GPU's place
// (a check of the harness, not of cuDNN).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;

[[maybe_unused]] const bool kTf32Off = [] {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 0);
  return true;
}();

// The harness with the CPU reference standing in for the GPU.
bool on_cpu() {
  static const bool value = [] {
    const char *e = std::getenv("CUDNNFE_ATTENTION_TESTS_ON_CPU");
    return e && *e == '1';
  }();
  return value;
}

#define REQUIRE_GPU_OR_DRY_RUN()  \
  do {                            \
    if (!on_cpu()) REQUIRE_GPU(); \
  } while (0)

constexpr double kRtol = 2e-2;
constexpr double kBf16GradRtol = 7e-2;
constexpr cudnnfe_dtype_t kTypes[] = {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16};
constexpr size_t kGuardBytes = 512;
constexpr unsigned char kGuardByte = 0x5a;

// ---------------------------------------------------------------------------
// Results across cases

struct Worst {
  double max_abs = 0, max_rel = 0;
  std::string where;
  int outputs = 0;
};

std::map<std::string, Worst> &worst_by_output() {
  static std::map<std::string, Worst> worst;
  return worst;
}

std::vector<std::string> &refusals() {
  static std::vector<std::string> list;
  return list;
}

// ---------------------------------------------------------------------------
// Graphs

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              nullptr, &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

cudnnfe_build_options_t build_options(bool gpu) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = gpu && !on_cpu() ? CUDNNFE_TARGET_GPU : CUDNNFE_TARGET_CPU_REFERENCE;
  return options;
}

void execute(cudnnfe_graph_t *g, const std::vector<int64_t> &uids,
             const std::vector<void *> &buffers, void *workspace, size_t workspace_size,
             const char *what) {
  std::vector<cudnnfe_binding_t> bindings;
  for (size_t i = 0; i < uids.size(); ++i) bindings.push_back({uids[i], buffers[i]});
  cudnnfe_status_t s = cudnnfe_graph_execute(g, test_handle(), bindings.data(), bindings.size(),
                                             workspace, workspace_size, nullptr);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure(std::string(what) + " execute returned " + cudnnfe_status_name(s) + ": " +
                  cudnnfe_handle_last_error(test_handle()));
}

// Device memory, or host memory when the CPU reference stands in.
class Buffer {
 public:
  explicit Buffer(size_t bytes) {
    if (on_cpu()) {
      host_.assign(bytes, 0);
    } else {
      device_ = gpu::DeviceBuffer(bytes);
      if (!device_.ok()) throw Failure("cudaMalloc of " + std::to_string(bytes) + " bytes failed");
    }
  }
  unsigned char *get() {
    return on_cpu() ? host_.data() : static_cast<unsigned char *>(device_.get());
  }
  void upload(size_t offset, const void *from, size_t bytes) {
    if (on_cpu()) {
      std::memcpy(host_.data() + offset, from, bytes);
      return;
    }
    std::string err = gpu::cuda_check(
        gpu::runtime().Memcpy(get() + offset, from, bytes, gpu::kHostToDevice), "cudaMemcpy");
    if (!err.empty()) throw Failure(err);
  }
  void download(size_t offset, void *to, size_t bytes) {
    if (on_cpu()) {
      std::memcpy(to, host_.data() + offset, bytes);
      return;
    }
    std::string err = gpu::cuda_check(
        gpu::runtime().Memcpy(to, get() + offset, bytes, gpu::kDeviceToHost), "cudaMemcpy");
    if (!err.empty()) throw Failure(err);
  }

 private:
  gpu::DeviceBuffer device_;
  Bytes host_;
};

// A graph built for the GPU with its buffers: inputs are uploaded from
// `host`, outputs downloaded into it by run().
class GpuGraph {
 public:
  // False (the graph's message in *refusal) when the build is refused
  // with NOT_SUPPORTED; other failures throw.
  bool build(GraphPtr graph, std::string *refusal) {
    graph_ = std::move(graph);
    cudnnfe_build_options_t options = build_options(true);
    cudnnfe_status_t s = cudnnfe_graph_build(graph_.get(), test_handle(), &options);
    if (s == CUDNNFE_STATUS_NOT_SUPPORTED) {
      *refusal = cudnnfe_graph_last_error(graph_.get());
      return false;
    }
    if (s != CUDNNFE_STATUS_OK)
      throw Failure("GPU build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                    cudnnfe_graph_last_error(graph_.get()));
    adopt(std::move(graph_));
    return true;
  }

  // Takes a graph that is already built (a loaded plan, say).
  void adopt(GraphPtr built) {
    graph_ = std::move(built);
    size_t count = 0;
    ok(cudnnfe_graph_get_bound_uids(graph_.get(), nullptr, 0, &count), "get_bound_uids");
    uids_.resize(count);
    ok(cudnnfe_graph_get_bound_uids(graph_.get(), uids_.data(), count, &count), "get_bound_uids");
    for (int64_t uid : uids_) {
      TensorInfo t = describe(graph_.get(), uid);
      cudnnfe_tensor_kind_t kind = 0;
      ok(cudnnfe_tensor_get_kind(graph_.get(), uid, &kind), "cudnnfe_tensor_get_kind");
      t.is_output = kind == CUDNNFE_TENSOR_KIND_OUTPUT;
      host_[uid] = Bytes(t.bytes, 0);
      buffers_.emplace_back(t.bytes + (t.is_output ? 2 * kGuardBytes : 0));
      tensors_.push_back(std::move(t));
    }
    ok(cudnnfe_graph_get_workspace_size(graph_.get(), &workspace_size_), "get_workspace_size");
    workspace_ = std::make_unique<Buffer>(static_cast<size_t>(workspace_size_));
    const char *plan = "";
    cudnnfe_graph_get_plan_name(graph_.get(), &plan);
    plan_ = plan;
  }

  cudnnfe_graph_t *graph() const { return graph_.get(); }
  const std::vector<int64_t> &uids() const { return uids_; }
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  const TensorInfo &info(int64_t uid) const { return tensors_[index(uid)]; }
  Bytes &host(int64_t uid) { return host_.at(uid); }
  const std::string &plan() const { return plan_; }
  int64_t workspace_size() const { return workspace_size_; }

  void upload(int64_t uid) { buffers_[index(uid)].upload(0, host_[uid].data(), host_[uid].size()); }
  void upload_inputs() {
    for (const TensorInfo &t : tensors_)
      if (!t.is_output) upload(t.uid);
  }

  // Runs once: outputs NaN inside guard bands, the workspace NaN; returns
  // how many guard-band bytes were overwritten.
  size_t run() {
    std::vector<void *> pointers;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorInfo &t = tensors_[i];
      if (t.is_output) {
        Bytes fill(t.bytes + 2 * kGuardBytes, kGuardByte);
        std::fill(fill.begin() + kGuardBytes, fill.end() - kGuardBytes, 0xff);
        buffers_[i].upload(0, fill.data(), fill.size());
      }
      pointers.push_back(buffers_[i].get() + (t.is_output ? kGuardBytes : 0));
    }
    if (workspace_size_ > 0) {
      Bytes nan(static_cast<size_t>(workspace_size_), 0xff);
      workspace_->upload(0, nan.data(), nan.size());
    }
    execute(graph_.get(), uids_, pointers, workspace_->get(), static_cast<size_t>(workspace_size_),
            "GPU");
    if (!on_cpu()) {
      std::string err =
          gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
      if (!err.empty()) throw Failure(err);
    }
    size_t guard_hits = 0;
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const TensorInfo &t = tensors_[i];
      if (!t.is_output) continue;
      Bytes all(t.bytes + 2 * kGuardBytes);
      buffers_[i].download(0, all.data(), all.size());
      for (size_t j = 0; j < kGuardBytes; ++j)
        guard_hits += (all[j] != kGuardByte) + (all[all.size() - 1 - j] != kGuardByte);
      host_[t.uid].assign(all.begin() + kGuardBytes, all.end() - kGuardBytes);
    }
    return guard_hits;
  }

 private:
  size_t index(int64_t uid) const {
    for (size_t i = 0; i < uids_.size(); ++i)
      if (uids_[i] == uid) return i;
    throw Failure("uid " + std::to_string(uid) + " is not bound");
  }

  GraphPtr graph_;
  std::vector<int64_t> uids_;
  std::vector<TensorInfo> tensors_;
  std::map<int64_t, Bytes> host_;
  std::vector<Buffer> buffers_;
  std::unique_ptr<Buffer> workspace_;
  int64_t workspace_size_ = 0;
  std::string plan_;
};

// Runs a CPU reference graph on host buffers (inputs by UID) and returns
// the outputs by UID (with their descriptions).
std::map<int64_t, std::pair<TensorInfo, Bytes>> run_cpu(cudnnfe_graph_t *g,
                                                        const std::map<int64_t, Bytes *> &inputs,
                                                        const std::vector<int64_t> &outputs) {
  for (int64_t uid : outputs) ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
  cudnnfe_build_options_t options = build_options(false);
  cudnnfe_status_t s = cudnnfe_graph_build(g, test_handle(), &options);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("CPU reference build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(g));
  std::map<int64_t, std::pair<TensorInfo, Bytes>> results;
  std::vector<int64_t> uids;
  std::vector<void *> ptrs;
  for (const auto &[uid, bytes] : inputs) {
    uids.push_back(uid);
    ptrs.push_back(bytes->data());
  }
  for (int64_t uid : outputs) {
    TensorInfo t = describe(g, uid);
    auto &slot = results[uid];
    slot.second.assign(t.bytes, 0);
    slot.first = std::move(t);
    uids.push_back(uid);
    ptrs.push_back(slot.second.data());
  }
  execute(g, uids, ptrs, nullptr, 0, "CPU reference");
  return results;
}

// ---------------------------------------------------------------------------
// Attention configurations

enum class Drop { kNone, kGiven, kDrawn };
enum class Expect { kBuilds, kMayRefuse };

struct Case {
  std::string name;
  int64_t b = 2, h_q = 2, h_kv = 2, s_q = 128, s_kv = 128, d = 64, d_v = 64;
  double scale = 0.11;
  bool scale_tensor = false, scale_scalar = false;
  bool causal = false, causal_br = false;
  int64_t left = -1, right = -1;
  cudnnfe_diagonal_alignment_t align = CUDNNFE_DIAGONAL_TOP_LEFT;
  bool padding = false;
  std::vector<int32_t> seq_q, seq_kv;
  bool alibi = false, bias = false;
  Drop dropout = Drop::kNone;
  double p = 0.0;
  int64_t seed = 0x5eed1234, offset = 42;
  double keep = 0.8;  // given mask: fraction of ones
  // Given mask: dropout_scale a scalar (else a device tensor);
  // dropout_scale_inv a device tensor (else a scalar). `prescaled`: the
  // mask holds 0 and 1/keep, dropout_scale and dropout_scale_inv are 1 (the
  // form cuDNN's backward computes right).
  bool dropout_scale_scalar = false, scale_inv_tensor = false, prescaled = false;
  bool seed_scalar = false;
  bool stats = true;      // forward writes stats
  bool compare_o = true;  // forward compares O
  bool dbias = false;     // backward writes dBias
  Expect expect = Expect::kBuilds;
  // A sink logit per head ([1, h_q, 1, 1] FLOAT; the backward also writes
  // dSink_token); forward only: the implementation choice and a block mask
  // (UINT8, bit-packed tiles).
  cudnnfe_attention_implementation_t impl = CUDNNFE_ATTENTION_IMPLEMENTATION_AUTO;
  bool sink = false, block_mask = false;
};

template <class Options>
void add_options(cudnnfe_graph_t *g, const Case &c, cudnnfe_dtype_t dt, Options &o) {
  o.attn_scale = c.scale;
  if (c.scale_tensor) {
    o.attn_scale = 0;
    o.attn_scale_tensor = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
  } else if (c.scale_scalar) {
    o.attn_scale = 0;
    ok(cudnnfe_graph_add_scalar(g, "scale", CUDNNFE_DTYPE_FLOAT, c.scale, &o.attn_scale_tensor),
       "add_scalar");
  }
  o.causal_mask = c.causal;
  o.causal_mask_bottom_right = c.causal_br;
  o.window_left = c.left;
  o.window_right = c.right;
  o.diagonal_alignment = c.align;
  o.alibi_mask = c.alibi;
  if (c.bias) o.bias = input(g, "bias", dt, {1, c.h_q, c.s_q, c.s_kv});
  if (c.padding) {
    o.padding_mask = 1;
    o.seq_len_q = input(g, "seq_len_q", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1});
    o.seq_len_kv = input(g, "seq_len_kv", CUDNNFE_DTYPE_INT32, {c.b, 1, 1, 1});
  }
  if (c.dropout == Drop::kDrawn) {
    o.dropout_probability = c.p;
    if (c.seed_scalar) {
      ok(cudnnfe_graph_add_scalar(g, "seed", CUDNNFE_DTYPE_INT64, static_cast<double>(c.seed),
                                  &o.dropout_seed),
         "add_scalar");
      ok(cudnnfe_graph_add_scalar(g, "offset", CUDNNFE_DTYPE_INT64, static_cast<double>(c.offset),
                                  &o.dropout_offset),
         "add_scalar");
    } else {
      o.dropout_seed = input(g, "seed", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
      o.dropout_offset = input(g, "offset", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
    }
  } else if (c.dropout == Drop::kGiven) {
    o.dropout_mask = input(g, "mask", dt, {c.b, c.h_q, c.s_q, c.s_kv});
    if (c.dropout_scale_scalar)
      ok(cudnnfe_graph_add_scalar(g, "dropout_scale", CUDNNFE_DTYPE_FLOAT,
                                  c.prescaled ? 1.0 : 1.0 / c.keep, &o.dropout_scale),
         "add_scalar");
    else
      o.dropout_scale = input(g, "dropout_scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
  }
}

// O (and stats) of a forward node on new inputs q, k, v.
struct ForwardUids {
  int64_t q, k, v, o, stats;
};

ForwardUids build_forward(cudnnfe_graph_t *g, const Case &c, cudnnfe_dtype_t dt) {
  ForwardUids u{};
  u.q = input(g, "q", dt, {c.b, c.h_q, c.s_q, c.d});
  u.k = input(g, "k", dt, {c.b, c.h_kv, c.s_kv, c.d});
  u.v = input(g, "v", dt, {c.b, c.h_kv, c.s_kv, c.d_v});
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.name = "attn";
  o.generate_stats = c.stats;
  add_options(g, c, dt, o);
  o.implementation = c.impl;
  if (c.sink) o.sink_token = input(g, "sink", CUDNNFE_DTYPE_FLOAT, {1, c.h_q, 1, 1});
  if (c.block_mask) {
    const int64_t rows = (c.s_q + 127) / 128, cols = ((c.s_kv + 127) / 128 + 7) / 8;
    o.block_mask = input(g, "block_mask", CUDNNFE_DTYPE_UINT8, {c.b, c.h_q, rows, cols});
  }
  ok(cudnnfe_graph_add_sdpa(g, u.q, u.k, u.v, &o, &u.o, &u.stats), "add_sdpa");
  return u;
}

struct BackwardUids {
  int64_t q, k, v, o, d_o, stats, dq, dk, dv, dbias, dsink;
};

BackwardUids build_backward(cudnnfe_graph_t *g, const Case &c, cudnnfe_dtype_t dt) {
  BackwardUids u{};
  u.q = input(g, "q", dt, {c.b, c.h_q, c.s_q, c.d});
  u.k = input(g, "k", dt, {c.b, c.h_kv, c.s_kv, c.d});
  u.v = input(g, "v", dt, {c.b, c.h_kv, c.s_kv, c.d_v});
  u.o = input(g, "o", dt, {c.b, c.h_q, c.s_q, c.d_v});
  u.d_o = input(g, "dO", dt, {c.b, c.h_q, c.s_q, c.d_v});
  u.stats = input(g, "stats", CUDNNFE_DTYPE_FLOAT, {c.b, c.h_q, c.s_q, 1});
  cudnnfe_sdpa_backward_options_t o;
  cudnnfe_sdpa_backward_options_init(&o);
  o.name = "attn_bwd";
  add_options(g, c, dt, o);
  if (c.dropout == Drop::kGiven && c.scale_inv_tensor)
    o.dropout_scale_inv = input(g, "dropout_scale_inv", CUDNNFE_DTYPE_FLOAT, {1, 1, 1, 1});
  else if (c.dropout == Drop::kGiven)
    ok(cudnnfe_graph_add_scalar(g, "dropout_scale_inv", CUDNNFE_DTYPE_FLOAT,
                                c.prescaled ? 1.0 : c.keep, &o.dropout_scale_inv),
       "add_scalar");
  if (c.sink) {
    // The forward's logits (same name: forward_for_backward and fill_options
    // give both the same values) and the caller's dSink tensor, named so
    // that its port() reads dSink_token.
    o.sink_token = input(g, "sink", CUDNNFE_DTYPE_FLOAT, {1, c.h_q, 1, 1});
    u.dsink = o.dsink_token =
        input(g, "attn_bwd::dSink_token", CUDNNFE_DTYPE_FLOAT, {1, c.h_q, 1, 1});
  }
  ok(cudnnfe_graph_add_sdpa_backward_ex(g, u.q, u.k, u.v, u.o, u.d_o, u.stats, &o, &u.dq, &u.dk,
                                        &u.dv, c.dbias ? &u.dbias : nullptr),
     "add_sdpa_backward_ex");
  return u;
}

// Gives the option tensors their values (by name) after the random fill.
void fill_options(const Case &c, const TensorInfo &t, Bytes &bytes) {
  const std::string &n = t.name;
  if (n == "seq_len_q" || n == "seq_len_kv") {
    const std::vector<int32_t> &lens = n == "seq_len_q" ? c.seq_q : c.seq_kv;
    for (int64_t i = 0; i < c.b; ++i)
      set_element(t, bytes, i * t.strides[0], lens[static_cast<size_t>(i)]);
  } else if (n == "scale") {
    set_element(t, bytes, 0, c.scale);
  } else if (n == "seed" || n == "offset") {
    const int64_t v = n == "seed" ? c.seed : c.offset;
    std::memcpy(bytes.data(), &v, sizeof(v));
  } else if (n == "mask") {
    std::mt19937 rng(seed_of(c.name + "mask"));
    std::bernoulli_distribution keep(c.keep);
    const double one = c.prescaled ? 1.0 / c.keep : 1.0;
    for_each_element(
        t, [&](int64_t off, const Dims &) { set_element(t, bytes, off, keep(rng) ? one : 0.0); });
  } else if (n == "sink") {
    // Logits about as large as the scores' maxima, so that the sink matters.
    for_each_element(t, [&](int64_t off, const Dims &i) {
      set_element(t, bytes, off, 0.5 + 0.75 * static_cast<double>(i[1]));
    });
  } else if (n == "block_mask") {
    // Every nonzero pattern of the three low bits (s_kv <= 384 in the
    // cases), so that each row keeps a tile: a row with none is O = 0 and
    // stats = -inf on the CPU reference and unspecified on the GPU.
    int64_t k = 0;
    for_each_element(t, [&](int64_t off, const Dims &) {
      set_element(t, bytes, off, static_cast<double>(k++ % 7 + 1));
    });
  } else if (n == "dropout_scale") {
    set_element(t, bytes, 0, c.prescaled ? 1.0 : 1.0 / c.keep);
  } else if (n == "dropout_scale_inv") {
    set_element(t, bytes, 0, c.prescaled ? 1.0 : c.keep);
  }
}

// Whether an output element is specified (padding leaves the rest open).
std::function<bool(const Dims &)> region(const Case &c, const TensorInfo &t) {
  if (!c.padding) return {};
  const std::string port = t.port();
  if (port == "O" || port == "stats" || port == "dQ")
    return [c](const Dims &i) { return i[2] < c.seq_q[static_cast<size_t>(i[0])]; };
  if (port == "dK" || port == "dV")
    return [c](const Dims &i) { return i[2] < c.seq_kv[static_cast<size_t>(i[0])]; };
  return {};
}

double rtol_for(const std::string &port, cudnnfe_dtype_t dt) {
  if (dt == CUDNNFE_DTYPE_BFLOAT16 && (port == "dK" || port == "dV" || port == "dBias"))
    return kBf16GradRtol;
  return kRtol;
}

// Random inputs for a graph's bound tensors, option tensors by name.
void fill_inputs(const Case &c, GpuGraph &gg, const std::string &label) {
  std::mt19937 rng(seed_of(label));
  for (const TensorInfo &t : gg.tensors()) {
    if (t.is_output) continue;
    Bytes &b = gg.host(t.uid);
    b = random_bytes(t, Fill{-1.0, 1.0}, rng);
    fill_options(c, t, b);
  }
}

// The backward's o and stats from the CPU reference's forward on the same
// inputs and options (matched by name).
void forward_for_backward(const Case &c, cudnnfe_dtype_t dt, GpuGraph &gg) {
  Case fc = c;
  fc.stats = true;
  GraphPtr fwd = new_graph("forward for inputs", dt);
  ForwardUids f = build_forward(fwd.get(), fc, dt);
  std::map<std::string, int64_t> by_name;
  for (const TensorInfo &t : gg.tensors()) by_name[t.name] = t.uid;
  std::map<int64_t, Bytes *> inputs;
  size_t count = 0;
  ok(cudnnfe_graph_get_tensor_uids(fwd.get(), nullptr, 0, &count), "get_tensor_uids");
  std::vector<int64_t> all(count);
  ok(cudnnfe_graph_get_tensor_uids(fwd.get(), all.data(), count, &count), "get_tensor_uids");
  for (int64_t uid : all) {
    if (uid == f.o || uid == f.stats) continue;
    const TensorInfo t = describe(fwd.get(), uid);
    auto it = by_name.find(t.name);
    if (it != by_name.end()) inputs[uid] = &gg.host(it->second);
  }
  auto results = run_cpu(fwd.get(), inputs, {f.o, f.stats});
  const int64_t o = by_name.at("o"), stats = by_name.at("stats");
  copy_elements(results[f.o].first, results[f.o].second, gg.info(o), gg.host(o));
  gg.host(stats) = results[f.stats].second;
}

// What the GPU wrote where padding leaves the values unspecified (for the
// record: zeros, -inf, NaN or other).
void describe_padding(const Case &c, const TensorInfo &t, const Bytes &got) {
  const auto valid = region(c, t);
  if (!valid) return;
  int64_t zeros = 0, neg_inf = 0, nans = 0, other = 0;
  for_each_element(t, [&](int64_t off, const Dims &index) {
    if (valid(index)) return;
    const double v = element(t, got, off);
    if (v == 0.0)
      ++zeros;
    else if (v == -INFINITY)
      ++neg_inf;
    else if (std::isnan(v))
      ++nans;
    else
      ++other;
  });
  std::printf("    padding rows of %s: %lld zero, %lld -inf, %lld NaN, %lld other\n",
              t.port().c_str(), static_cast<long long>(zeros), static_cast<long long>(neg_inf),
              static_cast<long long>(nans), static_cast<long long>(other));
}

enum class Pass { kForward, kBackward };

// dSink (h_q sums over every valid row) at cudnn-frontend's tolerance for
// it: |gpu - cpu| <= 4e-2 + 2e-2 |cpu|. The CPU reference has the autograd
// sign (-P_sink * D, docs/attention.md); a GPU result near -cpu says that
// cuDNN computed the frontend chain's literal sign (lower_sdpa_backward.cpp).
bool dsink_matches(const std::string &full, const TensorInfo &t, const Bytes &got,
                   const Bytes &want, int run) {
  constexpr double kAtol = 4e-2, kDsinkRtol = 2e-2;
  bool good = true, flipped = true;
  double max_abs = 0;
  for_each_element(t, [&](int64_t off, const Dims &index) {
    const double g = element(t, got, off), r = element(t, want, off);
    const double err = std::fabs(g - r);
    max_abs = std::isnan(err) ? INFINITY : std::max(max_abs, err);
    good = good && err <= kAtol + kDsinkRtol * std::fabs(r);
    flipped = flipped && std::fabs(g + r) <= kAtol + kDsinkRtol * std::fabs(r);
    if (run == 0)
      std::printf("    dSink_token%s: gpu %.5g, cpu %.5g\n", dims_text(index).c_str(), g, r);
  });
  if (run == 0 || !good)
    std::printf("  %-52s %-7s max_abs %.2e (atol %.0e, rtol %.0e)%s%s\n", full.c_str(), "dSink",
                max_abs, kAtol, kDsinkRtol, run ? " [run 2]" : "", good ? "" : "  MISMATCH");
  if (!good && flipped)
    std::printf(
        "    the GPU's dSink is -1 times the CPU reference's: cuDNN evaluated the chain's "
        "literal sign; negate it in lower_sdpa_backward.cpp (add_sink_gradient)\n");
  return good;
}

// Builds `c` for the GPU and the CPU reference, runs both on the same
// inputs and compares every compared output (twice for the GPU).
void run_case(Pass pass, const Case &c, cudnnfe_dtype_t dt) {
  const std::string family = pass == Pass::kForward ? "sdpa" : "sdpa_backward";
  const std::string full = family + " " + c.name + " " + short_name(dt);
  auto build = [&](cudnnfe_graph_t *g) {
    std::vector<int64_t> outs;
    if (pass == Pass::kForward) {
      ForwardUids u = build_forward(g, c, dt);
      outs = {u.o};
      if (c.stats) outs.push_back(u.stats);
    } else {
      BackwardUids u = build_backward(g, c, dt);
      outs = {u.dq, u.dk, u.dv};
      if (c.dbias) outs.push_back(u.dbias);
      if (c.sink) outs.push_back(u.dsink);
    }
    for (int64_t uid : outs) ok(cudnnfe_tensor_set_output(g, uid, 1), "set_output");
    return outs;
  };
  GpuGraph gg;
  GraphPtr gpu_graph = new_graph(full, dt);
  const std::vector<int64_t> outputs = build(gpu_graph.get());
  std::string refusal;
  if (!gg.build(std::move(gpu_graph), &refusal)) {
    if (c.expect == Expect::kMayRefuse) {
      std::printf("  %-52s refused (allowed): %s\n", full.c_str(), refusal.c_str());
      refusals().push_back(full + ": " + refusal);
      return;
    }
    throw Failure("GPU build refused: " + refusal);
  }
  fill_inputs(c, gg, full);
  if (pass == Pass::kBackward) forward_for_backward(c, dt, gg);
  gg.upload_inputs();

  // The CPU reference on the same host inputs.
  GraphPtr cpu_graph = new_graph(full, dt);
  build(cpu_graph.get());
  std::map<int64_t, Bytes *> inputs;
  for (const TensorInfo &t : gg.tensors())
    if (!t.is_output) inputs[t.uid] = &gg.host(t.uid);
  auto want = run_cpu(cpu_graph.get(), inputs, outputs);

  std::map<int64_t, Bytes> first;
  for (int run = 0; run < 2; ++run) {
    const size_t guard_hits = gg.run();
    for (int64_t uid : outputs) {
      const TensorInfo &t = gg.info(uid);
      const Bytes &got = gg.host(uid);
      const bool differs = run == 1 && got != first[uid];
      if (run == 0) first[uid] = got;
      if (pass == Pass::kForward && t.port() == "O" && !c.compare_o) continue;
      if (t.port() == "dSink_token") {
        if (!dsink_matches(full, t, got, want[uid].second, run) || guard_hits)
          ++testing::state().failures;
        continue;
      }
      const double rtol = rtol_for(t.port(), dt);
      Errors e = compare(t, got, want[uid].second, rtol, NonFinite::kMustMatch, region(c, t));
      (void)differs;
      if (run == 0 || e.bad || guard_hits)
        std::printf(
            "  %-52s %-7s max_abs %.2e max_rel %.2e (rtol %.0e, %lld compared) plan %s%s%s%s\n",
            full.c_str(), t.port().c_str(), e.max_abs, e.max_rel, rtol,
            static_cast<long long>(e.compared), gg.plan().c_str(), run ? " [run 2]" : "",
            e.bad ? "  MISMATCH" : "", guard_hits ? "  GUARD BAND OVERWRITTEN" : "");
      if (e.bad)
        std::printf("    %lld elements out of tolerance; first at %s\n",
                    static_cast<long long>(e.bad), e.first_bad.c_str());
      if (e.bad || guard_hits) ++testing::state().failures;
      if (run == 0 && c.padding) describe_padding(c, t, got);
      Worst &w = worst_by_output()[family + " " + t.port() + " " + short_name(dt)];
      if (run == 0) ++w.outputs;
      if (e.max_rel >= w.max_rel) {
        w.max_rel = e.max_rel;
        w.where = full;
      }
      w.max_abs = std::max(w.max_abs, e.max_abs);
    }
  }
}

void check(Pass pass, const Case &c) {
  for (cudnnfe_dtype_t dt : kTypes) {
    try {
      run_case(pass, c, dt);
    } catch (const Failure &f) {
      std::printf("  %s %s FAILED: %s\n", c.name.c_str(), short_name(dt), f.what());
      ++testing::state().failures;
    }
    std::fflush(stdout);
  }
}

Case padded(Case c) {
  c.padding = true;
  c.seq_q = {100, 37};
  c.seq_kv = {128, 61};
  return c;
}

// ---------------------------------------------------------------------------
// Cases compared with the CPU reference

TEST(gpu_environment) {
  REQUIRE_GPU_OR_DRY_RUN();
  int64_t version = 0;
  if (!on_cpu()) cudnnfe_cudnn_version(&version);
  std::printf("  cuDNN %lld%s\n", static_cast<long long>(version),
              on_cpu() ? " (dry run: the CPU reference stands in for the GPU)" : "");
}

TEST(gpu_attention_scale_tensor) {
  REQUIRE_GPU_OR_DRY_RUN();
  Case c;
  c.name = "scale tensor, causal";
  c.scale_tensor = true;
  c.causal = true;
  check(Pass::kForward, c);
  check(Pass::kBackward, c);
  Case s;
  s.name = "scale scalar";
  s.scale_scalar = true;
  check(Pass::kForward, s);
}

TEST(gpu_attention_padding) {
  REQUIRE_GPU_OR_DRY_RUN();
  Case c = padded(Case{});
  c.name = "padding";
  check(Pass::kForward, c);
  check(Pass::kBackward, c);
  Case causal = padded(Case{});
  causal.name = "padding, causal, GQA";
  causal.h_q = 4;
  causal.causal = true;
  check(Pass::kForward, causal);
  check(Pass::kBackward, causal);
  Case br = padded(Case{});
  br.name = "padding, causal bottom-right";
  br.causal_br = true;
  check(Pass::kForward, br);
  check(Pass::kBackward, br);
}

TEST(gpu_attention_sliding_window) {
  REQUIRE_GPU_OR_DRY_RUN();
  Case a;
  a.name = "causal, window_left 32";
  a.causal = true;
  a.left = 32;
  check(Pass::kForward, a);
  check(Pass::kBackward, a);
  Case b;
  b.name = "band (48, 16) top-left";
  b.left = 48;
  b.right = 16;
  check(Pass::kForward, b);
  check(Pass::kBackward, b);
  Case br;
  br.name = "causal bottom-right s_q 64 s_kv 128, window_left 40";
  br.s_q = 64;
  br.causal_br = true;
  br.left = 40;
  check(Pass::kForward, br);
  check(Pass::kBackward, br);
  Case pb = padded(Case{});
  pb.name = "padding, causal bottom-right, window_left 24";
  pb.causal_br = true;
  pb.left = 24;
  pb.expect = Expect::kMayRefuse;
  check(Pass::kForward, pb);
  check(Pass::kBackward, pb);
}

TEST(gpu_attention_alibi) {
  REQUIRE_GPU_OR_DRY_RUN();
  Case c;
  c.name = "alibi, causal, 6 heads";
  c.h_q = 6;
  c.h_kv = 3;
  c.alibi = true;
  c.causal = true;
  check(Pass::kForward, c);
  check(Pass::kBackward, c);
}

TEST(gpu_attention_dropout_mask) {
  REQUIRE_GPU_OR_DRY_RUN();
  // Forward: mask 0/1, dropout_scale 1/keep (a device tensor, then a scalar).
  Case c;
  c.name = "dropout mask";
  c.dropout = Drop::kGiven;
  check(Pass::kForward, c);
  Case scalars = c;
  scalars.name = "dropout mask, scale scalar";
  scalars.dropout_scale_scalar = true;
  check(Pass::kForward, scalars);
  Case m;
  m.name = "dropout mask, causal, bias";
  m.dropout = Drop::kGiven;
  m.causal = true;
  m.bias = true;
  check(Pass::kForward, m);
  // Backward: cuDNN leaves dropout_scale_inv out of sum(dO * O), so the
  // scale goes into the mask (0 and 1/keep) with both scales 1.
  Case pre = c;
  pre.name = "dropout mask prescaled";
  pre.prescaled = true;
  check(Pass::kForward, pre);
  check(Pass::kBackward, pre);
  Case pre_m = m;
  pre_m.name = "dropout mask prescaled, causal, bias";
  pre_m.prescaled = true;
  check(Pass::kBackward, pre_m);
}

TEST(gpu_attention_dropout_mask_backward_refusals) {
  REQUIRE_GPU();
  // With the scale in dropout_scale and dropout_scale_inv = 1 - p, cuDNN's
  // backward gave wrong dQ and dK (exactly those of sum(dO * O) without
  // scale_inv; H100, cuDNN 9.14 and 9.19): the lowering refuses anything
  // but a scalar 1.
  for (bool tensor : {false, true}) {
    Case c;
    c.name = tensor ? "dropout mask, scale_inv tensor" : "dropout mask, scale_inv 0.8";
    c.dropout = Drop::kGiven;
    c.scale_inv_tensor = tensor;
    GraphPtr g = new_graph(c.name, CUDNNFE_DTYPE_HALF);
    BackwardUids u = build_backward(g.get(), c, CUDNNFE_DTYPE_HALF);
    for (int64_t uid : {u.dq, u.dk, u.dv}) cudnnfe_tensor_set_output(g.get(), uid, 1);
    cudnnfe_build_options_t options = build_options(true);
    CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
                "sdpa_backward \"attn_bwd\"", "ignores dropout_scale_inv",
                tensor ? "a device tensor" : "the scalar 0.8");
    std::printf("  refused: %s\n", cudnnfe_graph_last_error(g.get()));
  }
}

TEST(gpu_attention_dropout_drawn_p0_and_stats) {
  REQUIRE_GPU_OR_DRY_RUN();
  // p = 0 with a seed (the RNG operation keeps everything) is no dropout.
  Case zero;
  zero.name = "dropout drawn p 0";
  zero.dropout = Drop::kDrawn;
  check(Pass::kForward, zero);
  check(Pass::kBackward, zero);
  // Dropout leaves the stats alone: only they are compared.
  Case stats;
  stats.name = "dropout drawn p 0.2, stats only";
  stats.dropout = Drop::kDrawn;
  stats.p = 0.2;
  stats.causal = true;
  stats.compare_o = false;
  check(Pass::kForward, stats);
  // Seed and offset as pass-by-value scalars.
  Case scalar = zero;
  scalar.name = "dropout drawn p 0, seed scalar";
  scalar.seed_scalar = true;
  scalar.expect = Expect::kMayRefuse;
  check(Pass::kForward, scalar);
}

// The implementation choice, sink and block mask (issue 16). UNIFIED needs
// cuDNN 9.13.1 (9.15 with padding), the block mask 9.14 and the sink 9.13:
// older versions must refuse (NOT_SUPPORTED), newer ones must run.
TEST(gpu_attention_implementation_sink_block_mask) {
  REQUIRE_GPU_OR_DRY_RUN();
  int64_t version = 0;
  if (!on_cpu()) cudnnfe_cudnn_version(&version);
  auto expect_from = [&](int64_t needed) {
    return on_cpu() || version >= needed ? Expect::kBuilds : Expect::kMayRefuse;
  };
  Case c;
  c.name = "composite";
  c.impl = CUDNNFE_ATTENTION_IMPLEMENTATION_COMPOSITE;
  check(Pass::kForward, c);
  c.name = "unified";
  c.impl = CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED;
  c.expect = expect_from(91301);
  check(Pass::kForward, c);
  Case p = padded(c);
  p.name = "unified padded";
  p.expect = expect_from(91500);
  check(Pass::kForward, p);
  Case sink;
  sink.name = "sink causal";
  sink.causal = true;
  sink.sink = true;
  sink.expect = expect_from(91300);
  check(Pass::kForward, sink);
  Case mask;
  mask.name = "block mask";
  mask.s_q = 256;
  mask.s_kv = 384;
  mask.block_mask = true;
  // cuDNN 9.14 and 9.19 on an H100 refuse it ("Block mask is only supported
  // on Blackwell"): a refusal is allowed, and it names the block mask.
  mask.expect = Expect::kMayRefuse;
  check(Pass::kForward, mask);
}

// The backward's sink: sink_token in, dSink_token out, with dQ, dK and dV
// (compared as every backward's) and dSink at cudnn-frontend's tolerance
// (dsink_matches). cuDNN 9.13 and newer must run it; older ones refuse it.
// The padded case has O = 0, stats = -inf and random dO in the padded rows
// (the CPU forward's): they must not reach dSink.
TEST(gpu_attention_backward_sink) {
  REQUIRE_GPU_OR_DRY_RUN();
  int64_t version = 0;
  if (!on_cpu()) cudnnfe_cudnn_version(&version);
  const Expect expect = on_cpu() || version >= 91300 ? Expect::kBuilds : Expect::kMayRefuse;
  Case c;
  c.name = "sink";
  c.sink = true;
  c.expect = expect;
  check(Pass::kBackward, c);
  Case causal = c;
  causal.name = "sink causal, GQA";
  causal.causal = true;
  causal.h_q = 4;
  check(Pass::kBackward, causal);
  Case p = padded(c);
  p.name = "sink padded";
  check(Pass::kBackward, p);
}

// What the unified operation is not given is refused under UNIFIED with
// the option named (cudnnfe builds no score subgraph), on every cuDNN; a
// block mask before 9.14 names the version it needs.
TEST(gpu_attention_unified_refusals) {
  REQUIRE_GPU();
  Case c;
  c.name = "unified causal";
  c.causal = true;
  c.impl = CUDNNFE_ATTENTION_IMPLEMENTATION_UNIFIED;
  GraphPtr g = new_graph(c.name, CUDNNFE_DTYPE_HALF);
  ForwardUids u = build_forward(g.get(), c, CUDNNFE_DTYPE_HALF);
  cudnnfe_tensor_set_output(g.get(), u.o, 1);
  cudnnfe_build_options_t options = build_options(true);
  CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
              "sdpa \"attn\"", "implementation UNIFIED is refused",
              "a causal mask or diagonal band");
  std::printf("  refused: %s\n", cudnnfe_graph_last_error(g.get()));
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  if (version >= 91400) return;
  Case m;
  m.name = "block mask before 9.14";
  m.block_mask = true;
  GraphPtr mg = new_graph(m.name, CUDNNFE_DTYPE_HALF);
  ForwardUids mu = build_forward(mg.get(), m, CUDNNFE_DTYPE_HALF);
  cudnnfe_tensor_set_output(mg.get(), mu.o, 1);
  CHECK_FAILS(cudnnfe_graph_build(mg.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
              "AUTO with block_mask", "block_mask needs cuDNN 9.14.0");
  std::printf("  refused: %s\n", cudnnfe_graph_last_error(mg.get()));
}

TEST(gpu_attention_dbias) {
  REQUIRE_GPU_OR_DRY_RUN();
  Case c;
  c.name = "dbias";
  c.bias = true;
  c.dbias = true;
  check(Pass::kBackward, c);
  Case m;
  m.name = "dbias, causal, dropout mask prescaled";
  m.bias = true;
  m.dbias = true;
  m.causal = true;
  m.dropout = Drop::kGiven;
  m.prescaled = true;
  check(Pass::kBackward, m);
}

TEST(gpu_attention_backward_s_kv_not_multiple_of_128) {
  REQUIRE_GPU_OR_DRY_RUN();
  // Before cuDNN 9.15.1 this takes the padding workaround (constant lengths).
  Case c;
  c.name = "s_kv 96";
  c.s_kv = 96;
  check(Pass::kBackward, c);
  Case causal = c;
  causal.name = "s_q 80 s_kv 200, causal bottom-right";
  causal.s_q = 80;
  causal.s_kv = 200;
  causal.causal_br = true;
  check(Pass::kBackward, causal);
}

TEST(gpu_attention_plan_constants_survive_a_plan_reload) {
  REQUIRE_GPU_OR_DRY_RUN();
  // ALiBi's slopes live in device memory the plan owns: a plan loaded from
  // its serialized form uploads its own, and outlives the graph it came
  // from.
  Case c;
  c.name = "alibi plan reload";
  c.h_q = 4;
  c.alibi = true;
  c.causal = true;
  const cudnnfe_dtype_t dt = CUDNNFE_DTYPE_BFLOAT16;
  try {
    GraphPtr g = new_graph(c.name, dt);
    ForwardUids u = build_forward(g.get(), c, dt);
    ok(cudnnfe_tensor_set_output(g.get(), u.o, 1), "set_output");
    ok(cudnnfe_tensor_set_output(g.get(), u.stats, 1), "set_output");
    auto first = std::make_unique<GpuGraph>();
    std::string refusal;
    if (!first->build(std::move(g), &refusal)) throw Failure("GPU build refused: " + refusal);
    fill_inputs(c, *first, c.name);
    first->upload_inputs();
    first->run();
    const Bytes o_first = first->host(u.o);
    size_t size = 0;
    ok(cudnnfe_graph_serialize_plan(first->graph(), nullptr, 0, &size), "serialize_plan");
    std::string blob(size, '\0');
    ok(cudnnfe_graph_serialize_plan(first->graph(), blob.data(), blob.size(), &size),
       "serialize_plan");
    std::map<int64_t, Bytes> inputs;
    for (const TensorInfo &t : first->tensors())
      if (!t.is_output) inputs[t.uid] = first->host(t.uid);
    first.reset();  // the first plan and its constants are gone
    cudnnfe_graph_t *raw = nullptr;
    ok(cudnnfe_graph_create(&raw), "graph_create");
    GraphPtr loaded(raw);
    ok(cudnnfe_graph_deserialize_plan(raw, test_handle(), blob.data(), blob.size(), nullptr),
       "deserialize_plan");
    GpuGraph second;
    second.adopt(std::move(loaded));
    for (auto &[uid, bytes] : inputs) second.host(uid) = bytes;
    second.upload_inputs();
    second.run();
    const bool same = second.host(u.o) == o_first;
    std::printf("  %-52s reloaded plan %s gives %s O\n", c.name.c_str(), second.plan().c_str(),
                same ? "the same" : "ANOTHER");
    CHECK(same);
  } catch (const Failure &f) {
    std::printf("  %s FAILED: %s\n", c.name.c_str(), f.what());
    ++testing::state().failures;
  }
}

// ---------------------------------------------------------------------------
// Drawn dropout, checked through V = identity

// The seeded forward with s_kv = d_v and V = identity.
struct IdentityRun {
  Case c;
  GpuGraph gg;
  ForwardUids u{};
  Bytes p_ref;  // the CPU reference's O without dropout: P
  TensorInfo o_info;
};

bool identity_setup(IdentityRun &r, cudnnfe_dtype_t dt) {
  Case &c = r.c;
  c.name = std::string("dropout identity ") + short_name(dt);
  c.s_kv = c.d_v = 128;
  c.dropout = Drop::kDrawn;
  c.p = 0.2;
  GraphPtr g = new_graph(c.name, dt);
  r.u = build_forward(g.get(), c, dt);
  ok(cudnnfe_tensor_set_output(g.get(), r.u.o, 1), "set_output");
  ok(cudnnfe_tensor_set_output(g.get(), r.u.stats, 1), "set_output");
  std::string refusal;
  if (!r.gg.build(std::move(g), &refusal)) throw Failure("GPU build refused: " + refusal);
  std::mt19937 rng(seed_of(c.name));
  for (const TensorInfo &t : r.gg.tensors()) {
    if (t.is_output) continue;
    Bytes &b = r.gg.host(t.uid);
    b = random_bytes(t, Fill{-0.5, 0.5}, rng);
    fill_options(c, t, b);
  }
  const TensorInfo &v = r.gg.info(r.u.v);
  for_each_element(v, [&](int64_t off, const Dims &i) {
    set_element(v, r.gg.host(r.u.v), off, i[2] == i[3] ? 1.0 : 0.0);
  });
  r.gg.upload_inputs();
  // P from the CPU reference without dropout.
  Case plain = c;
  plain.dropout = Drop::kNone;
  GraphPtr cpu = new_graph(c.name + " reference", dt);
  ForwardUids cu = build_forward(cpu.get(), plain, dt);
  auto results = run_cpu(
      cpu.get(), {{cu.q, &r.gg.host(r.u.q)}, {cu.k, &r.gg.host(r.u.k)}, {cu.v, &r.gg.host(r.u.v)}},
      {cu.o, cu.stats});
  r.p_ref = results[cu.o].second;
  r.o_info = r.gg.info(r.u.o);
  // The stats are those without dropout.
  r.gg.run();
  Errors e = compare(r.gg.info(r.u.stats), r.gg.host(r.u.stats), results[cu.stats].second, kRtol,
                     NonFinite::kMustMatch);
  std::printf("  %-52s stats   max_abs %.2e max_rel %.2e (dropout leaves them alone)%s\n",
              c.name.c_str(), e.max_abs, e.max_rel, e.bad ? "  MISMATCH" : "");
  if (e.bad) {
    std::printf("    first at %s\n", e.first_bad.c_str());
    ++testing::state().failures;
  }
  return true;
}

// Reads the keep mask out of O: each element must be exactly 0 or
// P / (1 - p) within tolerance. Returns the mask (1 kept, 0 dropped).
std::vector<uint8_t> read_mask(IdentityRun &r, const char *what) {
  const Bytes &o = r.gg.host(r.u.o);
  const double scale = 1.0 / (1.0 - r.c.p);
  std::vector<uint8_t> mask;
  int64_t neither = 0;
  std::string first;
  for_each_element(r.o_info, [&](int64_t off, const Dims &i) {
    const double got = element(r.o_info, o, off), p = element(r.o_info, r.p_ref, off);
    if (got == 0.0) {
      mask.push_back(0);
      return;
    }
    mask.push_back(1);
    if (!(std::fabs(got - p * scale) <= kRtol * p * scale + 1e-3 * scale / r.c.s_kv) &&
        neither++ == 0)
      first =
          dims_text(i) + ": gpu " + std::to_string(got) + ", P/(1-p) " + std::to_string(p * scale);
  });
  if (neither) {
    std::printf("    %s: %lld elements are neither 0 nor P/(1-p); first at %s\n", what,
                static_cast<long long>(neither), first.c_str());
    ++testing::state().failures;
  }
  return mask;
}

TEST(gpu_attention_dropout_drawn_identity) {
  REQUIRE_GPU_OR_DRY_RUN();
  for (cudnnfe_dtype_t dt : kTypes) {
    try {
      IdentityRun r;
      identity_setup(r, dt);
      const std::vector<uint8_t> mask = read_mask(r, "seed A");
      int64_t dropped = 0;
      for (uint8_t m : mask) dropped += m == 0;
      const double fraction = static_cast<double>(dropped) / static_cast<double>(mask.size());
      std::printf("  %-52s dropped %.4f of %zu (p %.2f) plan %s\n", r.c.name.c_str(), fraction,
                  mask.size(), r.c.p, r.gg.plan().c_str());
      CHECK_MSG(std::fabs(fraction - r.c.p) < 0.01, "dropped fraction %.4f, p %.2f", fraction,
                r.c.p);
      // The same seed repeats bit for bit.
      const Bytes o_a = r.gg.host(r.u.o);
      r.gg.run();
      CHECK_MSG(r.gg.host(r.u.o) == o_a, "the same seed and offset gave another O");
      // Another seed, then another offset, change the decisions.
      auto differing = [&](const std::vector<uint8_t> &other) {
        int64_t n = 0;
        for (size_t i = 0; i < mask.size(); ++i) n += other[i] != mask[i];
        return static_cast<double>(n) / static_cast<double>(mask.size());
      };
      const int64_t seed_b = r.c.seed + 1;
      for (const TensorInfo &t : r.gg.tensors())
        if (t.name == "seed") {
          std::memcpy(r.gg.host(t.uid).data(), &seed_b, 8);
          r.gg.upload(t.uid);
        }
      r.gg.run();
      const double by_seed = differing(read_mask(r, "seed B"));
      for (const TensorInfo &t : r.gg.tensors()) {
        if (t.name == "seed") {
          std::memcpy(r.gg.host(t.uid).data(), &r.c.seed, 8);
          r.gg.upload(t.uid);
        }
        if (t.name == "offset") {
          const int64_t offset_b = r.c.offset + 1000;
          std::memcpy(r.gg.host(t.uid).data(), &offset_b, 8);
          r.gg.upload(t.uid);
        }
      }
      r.gg.run();
      const double by_offset = differing(read_mask(r, "offset B"));
      std::printf("  %-52s another seed changes %.3f of the decisions, another offset %.3f\n",
                  r.c.name.c_str(), by_seed, by_offset);
      // Independent masks at p = 0.2 differ in 2 p (1 - p) = 0.32 of them.
      CHECK_MSG(by_seed > 0.2 && by_offset > 0.2, "seed %.3f, offset %.3f", by_seed, by_offset);
    } catch (const Failure &f) {
      std::printf("  dropout identity %s FAILED: %s\n", short_name(dt), f.what());
      ++testing::state().failures;
    }
    std::fflush(stdout);
  }
}

// The seeded forward with random V, and the seeded backward, against the
// given-mask form on the CPU reference with the mask read from the
// identity run (same seed, offset and shape).
TEST(gpu_attention_dropout_drawn_matches_its_mask) {
  REQUIRE_GPU_OR_DRY_RUN();
  for (cudnnfe_dtype_t dt : kTypes) {
    try {
      IdentityRun r;
      identity_setup(r, dt);
      const std::vector<uint8_t> mask = read_mask(r, "identity");
      const Case drawn = r.c;
      Case given = drawn;
      given.dropout = Drop::kGiven;
      given.keep = 1.0 - drawn.p;  // dropout_scale 1/(1-p), scale_inv 1-p
      for (Pass pass : {Pass::kForward, Pass::kBackward}) {
        const std::string full = std::string(pass == Pass::kForward ? "sdpa" : "sdpa_backward") +
                                 " dropout drawn vs its mask " + short_name(dt);
        GraphPtr g = new_graph(full, dt);
        std::vector<int64_t> outs;
        if (pass == Pass::kForward) {
          ForwardUids u = build_forward(g.get(), drawn, dt);
          outs = {u.o};
        } else {
          BackwardUids u = build_backward(g.get(), drawn, dt);
          outs = {u.dq, u.dk, u.dv};
        }
        for (int64_t uid : outs) ok(cudnnfe_tensor_set_output(g.get(), uid, 1), "set_output");
        GpuGraph gg;
        std::string refusal;
        if (!gg.build(std::move(g), &refusal)) throw Failure("GPU build refused: " + refusal);
        fill_inputs(drawn, gg, full);
        // The CPU reference of the given form: same inputs plus the mask.
        GraphPtr cpu = new_graph(full + " reference", dt);
        std::vector<int64_t> cpu_outs;
        if (pass == Pass::kForward) {
          ForwardUids u = build_forward(cpu.get(), given, dt);
          cpu_outs = {u.o};
        } else {
          BackwardUids u = build_backward(cpu.get(), given, dt);
          cpu_outs = {u.dq, u.dk, u.dv};
        }
        std::map<std::string, int64_t> cpu_by_name;
        {
          size_t count = 0;
          ok(cudnnfe_graph_get_tensor_uids(cpu.get(), nullptr, 0, &count), "get_tensor_uids");
          std::vector<int64_t> all(count);
          ok(cudnnfe_graph_get_tensor_uids(cpu.get(), all.data(), count, &count),
             "get_tensor_uids");
          for (int64_t uid : all) cpu_by_name[describe(cpu.get(), uid).name] = uid;
        }
        std::map<std::string, Bytes> extra;
        for (const char *name : {"mask", "dropout_scale", "dropout_scale_inv"}) {
          auto it = cpu_by_name.find(name);
          if (it == cpu_by_name.end()) continue;
          cudnnfe_tensor_kind_t kind = 0;
          ok(cudnnfe_tensor_get_kind(cpu.get(), it->second, &kind), "get_kind");
          if (kind == CUDNNFE_TENSOR_KIND_SCALAR) continue;  // holds its value
          const TensorInfo t = describe(cpu.get(), it->second);
          Bytes b(t.bytes);
          fill_options(given, t, b);
          if (std::string(name) == "mask") {
            size_t i = 0;
            for_each_element(t,
                             [&](int64_t off, const Dims &) { set_element(t, b, off, mask[i++]); });
          }
          extra[name] = std::move(b);
        }
        if (pass == Pass::kBackward) {
          // o and stats from the given form's forward (the same mask).
          Case fc = given;
          fc.stats = true;
          GraphPtr fwd = new_graph("forward for inputs", dt);
          ForwardUids f = build_forward(fwd.get(), fc, dt);
          std::map<std::string, int64_t> gpu_by_name;
          for (const TensorInfo &t : gg.tensors()) gpu_by_name[t.name] = t.uid;
          std::map<int64_t, Bytes *> inputs = {{f.q, &gg.host(gpu_by_name.at("q"))},
                                               {f.k, &gg.host(gpu_by_name.at("k"))},
                                               {f.v, &gg.host(gpu_by_name.at("v"))}};
          size_t count = 0;
          ok(cudnnfe_graph_get_tensor_uids(fwd.get(), nullptr, 0, &count), "get_tensor_uids");
          std::vector<int64_t> all(count);
          ok(cudnnfe_graph_get_tensor_uids(fwd.get(), all.data(), count, &count),
             "get_tensor_uids");
          for (int64_t uid : all) {
            const std::string name = describe(fwd.get(), uid).name;
            if (extra.count(name)) inputs[uid] = &extra[name];
          }
          auto results = run_cpu(fwd.get(), inputs, {f.o, f.stats});
          const int64_t o = gpu_by_name.at("o"), st = gpu_by_name.at("stats");
          copy_elements(results[f.o].first, results[f.o].second, gg.info(o), gg.host(o));
          gg.host(st) = results[f.stats].second;
        }
        gg.upload_inputs();
        std::map<int64_t, Bytes *> inputs;
        for (const TensorInfo &t : gg.tensors()) {
          if (t.is_output) continue;
          auto it = cpu_by_name.find(t.name);
          if (it != cpu_by_name.end()) inputs[it->second] = &gg.host(t.uid);
        }
        for (auto &[name, bytes] : extra) inputs[cpu_by_name.at(name)] = &bytes;
        auto want = run_cpu(cpu.get(), inputs, cpu_outs);
        gg.run();
        for (size_t i = 0; i < outs.size(); ++i) {
          const TensorInfo &t = gg.info(outs[i]);
          const double rtol = rtol_for(t.port(), dt);
          Errors e =
              compare(t, gg.host(outs[i]), want[cpu_outs[i]].second, rtol, NonFinite::kMustMatch);
          std::printf("  %-52s %-7s max_abs %.2e max_rel %.2e (rtol %.0e) plan %s%s\n",
                      full.c_str(), t.port().c_str(), e.max_abs, e.max_rel, rtol, gg.plan().c_str(),
                      e.bad ? "  MISMATCH" : "");
          if (e.bad) {
            std::printf("    %lld elements out of tolerance; first at %s\n",
                        static_cast<long long>(e.bad), e.first_bad.c_str());
            ++testing::state().failures;
          }
          Worst &w =
              worst_by_output()[std::string(pass == Pass::kForward ? "sdpa" : "sdpa_backward") +
                                " drawn " + t.port() + " " + short_name(dt)];
          ++w.outputs;
          if (e.max_rel >= w.max_rel) {
            w.max_rel = e.max_rel;
            w.where = full;
          }
          w.max_abs = std::max(w.max_abs, e.max_abs);
        }
      }
    } catch (const Failure &f) {
      std::printf("  dropout drawn vs mask %s FAILED: %s\n", short_name(dt), f.what());
      ++testing::state().failures;
    }
    std::fflush(stdout);
  }
}

// ---------------------------------------------------------------------------

TEST(gpu_zz_summary) {
  REQUIRE_GPU_OR_DRY_RUN();
  std::printf("  worst error per op, output and type:\n");
  for (const auto &[what, w] : worst_by_output())
    std::printf("    %-40s %3d outputs  max_abs %.2e  max_rel %.2e  (%s)\n", what.c_str(),
                w.outputs, w.max_abs, w.max_rel, w.where.c_str());
  std::printf("  configurations cuDNN refused (%zu):\n", refusals().size());
  for (const std::string &r : refusals()) std::printf("    %s\n", r.c_str());
}

}  // namespace
