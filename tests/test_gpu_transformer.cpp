// GPU tests of the transformer ops through the public C API: layer norm and
// RMS norm (forward and backward), softmax and SDPA backward. Each case is
// built twice, for the GPU and for the CPU reference, run on the same random
// inputs and compared element by element with the tolerance it states.
//
// Errors are made visible: every output buffer is pre-filled with NaN and
// surrounded by guard bands that must come back untouched; the workspace
// starts as NaN; every GPU case runs twice (the second time on the dirty
// workspace of the first) and both runs are checked. Inputs that must agree
// with a forward pass (SDPA backward's o and stats, norm backward's
// statistics) are computed by the CPU reference's forward.
//
// Without a GPU every case skips with the reason. With one, any failure
// fails: a refusal passes only where the case says cuDNN may refuse it, and
// is then printed with cudnnfe's NOT_SUPPORTED message.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;

// FLOAT cases compare at 1e-3: ask cuDNN for full fp32 math (no TF32).
[[maybe_unused]] const bool kTf32Off = [] {
  setenv("NVIDIA_TF32_OVERRIDE", "0", 0);
  return true;
}();

// Tolerances (relative to each element, with a floor of the same fraction
// of a tenth of the output's largest magnitude):
//   norms and softmax: fp32 1e-3, fp16 1e-2, bf16 2e-2;
//   SDPA backward: 2e-2 for dQ, dK and dV, except bf16 dK and dV at 7e-2
//   (cudnn-frontend's own tolerances).
double norm_rtol(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_HALF: return 1e-2;
    case CUDNNFE_DTYPE_BFLOAT16: return 2e-2;
    default: return 1e-3;
  }
}
constexpr double kSdpaRtol = 2e-2;
constexpr double kSdpaBf16GradRtol = 7e-2;
constexpr cudnnfe_dtype_t kAllTypes[] = {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF,
                                         CUDNNFE_DTYPE_BFLOAT16};
constexpr cudnnfe_dtype_t kHalfTypes[] = {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16};

// Guard band around every output buffer, and its byte.
constexpr size_t kGuardBytes = 512;
constexpr unsigned char kGuardByte = 0x5a;

// ---------------------------------------------------------------------------
// GPU availability

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
// Graph construction helpers

Dims packed(const Dims &dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

void build_cpu(cudnnfe_graph_t *g) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_status_t s = cudnnfe_graph_build(g, test_handle(), &options);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("CPU reference build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(g));
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

// Host data of a case's bound tensors by UID, for Spec::prepare.
using HostData = std::map<int64_t, std::pair<TensorInfo, Bytes *>>;

struct Spec {
  std::vector<int64_t> outputs;
  std::map<int64_t, double> rtol;  // per output
  std::map<int64_t, Fill> fills;
  // Runs after the random fill: recomputes inputs that must agree with a
  // forward pass.
  std::function<void(HostData &)> prepare;
  // The two GPU runs must agree bit for bit.
  bool deterministic = false;
  void output(cudnnfe_graph_t *g, int64_t uid, double tolerance) {
    ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
    outputs.push_back(uid);
    rtol[uid] = tolerance;
  }
};

using Builder = std::function<void(cudnnfe_graph_t *, Spec &)>;

enum class Expect { kBuilds, kMayRefuse };

// ---------------------------------------------------------------------------
// Running one case on both targets

void run_case(const std::string &family, const std::string &label, cudnnfe_dtype_t io,
              const Builder &build, Expect expect) {
  const std::string full = label + " " + short_name(io);
  GraphPtr gpu_graph = new_graph(full, io);
  Spec spec;
  build(gpu_graph.get(), spec);
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  cudnnfe_status_t s = cudnnfe_graph_build(gpu_graph.get(), test_handle(), &options);
  if (s == CUDNNFE_STATUS_NOT_SUPPORTED && expect == Expect::kMayRefuse) {
    std::printf("  %-44s refused (allowed): %s\n", full.c_str(),
                cudnnfe_graph_last_error(gpu_graph.get()));
    refusals().push_back(full + ": " + cudnnfe_graph_last_error(gpu_graph.get()));
    return;
  }
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("GPU build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(gpu_graph.get()));

  GraphPtr cpu_graph = new_graph(full, io);
  Spec cpu_spec;
  build(cpu_graph.get(), cpu_spec);
  build_cpu(cpu_graph.get());

  size_t count = 0;
  ok(cudnnfe_graph_get_bound_uids(gpu_graph.get(), nullptr, 0, &count), "get_bound_uids");
  std::vector<int64_t> uids(count);
  ok(cudnnfe_graph_get_bound_uids(gpu_graph.get(), uids.data(), count, &count), "get_bound_uids");

  std::mt19937 rng(seed_of(full));
  std::vector<TensorInfo> tensors;
  std::vector<Bytes> host(uids.size());
  for (size_t i = 0; i < uids.size(); ++i) {
    TensorInfo t = describe(gpu_graph.get(), uids[i]);
    t.is_output = std::count(spec.outputs.begin(), spec.outputs.end(), uids[i]) > 0;
    auto fill = spec.fills.find(uids[i]);
    host[i] = t.is_output ? Bytes(t.bytes, 0)
                          : random_bytes(t, fill == spec.fills.end() ? Fill{} : fill->second, rng);
    tensors.push_back(std::move(t));
  }
  if (spec.prepare) {
    HostData data;
    for (size_t i = 0; i < uids.size(); ++i) data[uids[i]] = {tensors[i], &host[i]};
    spec.prepare(data);
  }

  // Device buffers: inputs as they are; outputs NaN inside guard bands.
  std::vector<gpu::DeviceBuffer> device;
  std::vector<void *> device_ptrs, host_ptrs;
  for (size_t i = 0; i < uids.size(); ++i) {
    const TensorInfo &t = tensors[i];
    const size_t guard = t.is_output ? kGuardBytes : 0;
    device.emplace_back(t.bytes + 2 * guard);
    if (!device.back().ok()) throw Failure("cudaMalloc of " + std::to_string(t.bytes) + " failed");
    device_ptrs.push_back(static_cast<unsigned char *>(device.back().get()) + guard);
    host_ptrs.push_back(host[i].data());
    if (!t.is_output) {
      std::string err = gpu::cuda_check(
          gpu::runtime().Memcpy(device_ptrs.back(), host[i].data(), t.bytes, gpu::kHostToDevice),
          "cudaMemcpy");
      if (!err.empty()) throw Failure(err);
    }
  }
  execute(cpu_graph.get(), uids, host_ptrs, nullptr, 0, "CPU reference");

  int64_t workspace_size = 0;
  ok(cudnnfe_graph_get_workspace_size(gpu_graph.get(), &workspace_size), "get_workspace_size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(workspace_size));
  if (!workspace.ok()) throw Failure("cudaMalloc of the workspace failed");
  // Garbage (NaN) workspace: nothing may rely on it being zeroed.
  if (workspace_size > 0)
    gpu::runtime().Memset(workspace.get(), 0xff, static_cast<size_t>(workspace_size));
  const char *plan = "";
  cudnnfe_graph_get_plan_name(gpu_graph.get(), &plan);

  std::map<int64_t, Bytes> first_run;
  for (int run = 0; run < 2; ++run) {
    for (size_t i = 0; i < uids.size(); ++i) {
      if (!tensors[i].is_output) continue;
      Bytes fill(tensors[i].bytes + 2 * kGuardBytes, kGuardByte);
      std::fill(fill.begin() + kGuardBytes, fill.end() - kGuardBytes, 0xff);
      std::string err = gpu::cuda_check(
          gpu::runtime().Memcpy(device[i].get(), fill.data(), fill.size(), gpu::kHostToDevice),
          "cudaMemcpy");
      if (!err.empty()) throw Failure(err);
    }
    execute(gpu_graph.get(), uids, device_ptrs, workspace.get(),
            static_cast<size_t>(workspace_size), "GPU");
    std::string err = gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
    if (!err.empty()) throw Failure(err);

    for (size_t i = 0; i < uids.size(); ++i) {
      const TensorInfo &t = tensors[i];
      if (!t.is_output) continue;
      Bytes all(t.bytes + 2 * kGuardBytes);
      err = gpu::cuda_check(
          gpu::runtime().Memcpy(all.data(), device[i].get(), all.size(), gpu::kDeviceToHost),
          "cudaMemcpy");
      if (!err.empty()) throw Failure(err);
      size_t guard_hits = 0;
      for (size_t j = 0; j < kGuardBytes; ++j)
        guard_hits += (all[j] != kGuardByte) + (all[all.size() - 1 - j] != kGuardByte);
      Bytes got(all.begin() + kGuardBytes, all.end() - kGuardBytes);
      const double rtol = spec.rtol[t.uid];
      Errors e = compare(t, got, host[i], rtol, NonFinite::kMustMatch);
      const bool differs = run == 1 && spec.deterministic && got != first_run[t.uid];
      if (run == 0) first_run[t.uid] = got;
      if (run == 0 || e.bad || guard_hits || differs)
        std::printf("  %-40s %-30s max_abs %.2e max_rel %.2e (rtol %.0e) plan %s ws %lld%s%s%s%s\n",
                    full.c_str(), (t.name + dims_text(t.dims)).c_str(), e.max_abs, e.max_rel, rtol,
                    plan, static_cast<long long>(workspace_size), run ? " [run 2]" : "",
                    e.bad ? "  MISMATCH" : "", guard_hits ? "  GUARD BAND OVERWRITTEN" : "",
                    differs ? "  NOT DETERMINISTIC" : "");
      if (e.bad)
        std::printf("    %lld elements out of tolerance; first at %s\n",
                    static_cast<long long>(e.bad), e.first_bad.c_str());
      if (e.bad || guard_hits || differs) ++testing::state().failures;
      // Worst per op family, output port and type ("sdpa_backward dK bf16").
      std::string port = t.name.substr(t.name.rfind(':') + 1);
      Worst &w = worst_by_output()[family + " " + port + " " + short_name(io)];
      if (run == 0) ++w.outputs;
      if (e.max_rel >= w.max_rel) {
        w.max_rel = e.max_rel;
        w.where = full;
      }
      w.max_abs = std::max(w.max_abs, e.max_abs);
    }
  }
}

void check_case(const std::string &family, const std::string &label, cudnnfe_dtype_t io,
                const Builder &build, Expect expect = Expect::kBuilds) {
  try {
    run_case(family, label, io, build, expect);
  } catch (const Failure &f) {
    std::printf("  %s %s FAILED: %s\n", label.c_str(), short_name(io), f.what());
    ++testing::state().failures;
  }
  std::fflush(stdout);
}

// Builds and runs a CPU reference graph: `inputs` are host buffers by UID;
// the returned map holds each of `outputs` (described once built).
std::map<int64_t, std::pair<TensorInfo, Bytes>> run_cpu(cudnnfe_graph_t *g,
                                                        const std::map<int64_t, Bytes *> &inputs,
                                                        const std::vector<int64_t> &outputs) {
  for (int64_t uid : outputs) ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
  build_cpu(g);
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
  execute(g, uids, ptrs, nullptr, 0, "CPU reference (forward for inputs)");
  return results;
}

// ---------------------------------------------------------------------------
// Norms

struct NormCase {
  const char *name;
  bool layer;          // layernorm, else rmsnorm
  bool training;       // statistics written
  bool bias;           // rmsnorm: with bias
  bool zero_centered;  // y uses 1 + scale
  bool params_io;      // scale/bias in the I/O type, else FLOAT
  Dims x;              // [N, features...]
  Expect expect;
  Dims params = {};  // scale and bias; empty: [1, x's other dims]
};

// Scale and bias: each dim x's or 1; the dims where they are not 1 are
// normalized (cudnn-frontend's statistics rule).
Dims param_dims(const NormCase &c) {
  if (!c.params.empty()) return c.params;
  Dims d = c.x;
  d[0] = 1;
  return d;
}

// x's dims with 1 where the scale is not 1.
Dims stats_dims(const NormCase &c) {
  Dims d = c.x, p = param_dims(c);
  for (size_t i = 0; i < d.size(); ++i)
    if (p[i] != 1) d[i] = 1;
  return d;
}

TEST(gpu_environment) {
  REQUIRE_GPU();
  int64_t version = 0;
  int32_t count = 0;
  cudnnfe_cudnn_version(&version);
  cudnnfe_device_count(&count);
  const char *lib = std::getenv("CUDNNFE_CUDNN_LIBRARY");
  std::printf("  cuDNN %lld (%s), %d CUDA device(s)\n", static_cast<long long>(version),
              lib ? lib : "libcudnn.so.9 from the loader path", count);
}

TEST(gpu_norm_forward) {
  REQUIRE_GPU();
  const NormCase cases[] = {
      {"layernorm_train", true, true, true, false, false, {256, 1024}, Expect::kBuilds},
      {"layernorm_infer", true, false, true, false, false, {256, 1024}, Expect::kBuilds},
      {"layernorm_train_4d", true, true, true, false, false, {64, 32, 4, 4}, Expect::kBuilds},
      {"layernorm_train_zero_centered",
       true,
       true,
       true,
       true,
       false,
       {256, 1024},
       Expect::kBuilds},
      {"rmsnorm_train", false, true, false, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_infer", false, false, false, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_train_bias", false, true, true, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_train_params_io", false, true, false, false, true, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_train_zero_centered",
       false,
       true,
       false,
       true,
       false,
       {256, 1024},
       Expect::kBuilds},
      // A transformer's norms: x [b, s, d], scale and bias [1, 1, d] shared
      // by every token (statistics [b, s, 1]); the lowering shows cuDNN
      // [b*s, d, 1, 1]. Also a [1, s, d] scale (per-sample statistics).
      {"layernorm_train_bsd_shared",
       true,
       true,
       true,
       false,
       false,
       {4, 64, 1024},
       Expect::kBuilds,
       {1, 1, 1024}},
      {"layernorm_infer_bsd_shared",
       true,
       false,
       true,
       false,
       false,
       {4, 64, 1024},
       Expect::kBuilds,
       {1, 1, 1024}},
      {"rmsnorm_train_bsd_shared",
       false,
       true,
       false,
       false,
       false,
       {4, 64, 1024},
       Expect::kBuilds,
       {1, 1, 1024}},
      {"layernorm_train_bsd_per_sample",
       true,
       true,
       true,
       false,
       false,
       {4, 16, 256},
       Expect::kBuilds,
       {1, 16, 256}},
  };
  for (const NormCase &c : cases)
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          c.layer ? "layernorm" : "rmsnorm", c.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            const cudnnfe_dtype_t param = c.params_io ? dt : CUDNNFE_DTYPE_FLOAT;
            int64_t x = input(g, "x", dt, c.x);
            int64_t scale = input(g, "scale", param, param_dims(c));
            int64_t bias = c.bias ? input(g, "bias", param, param_dims(c)) : 0;
            spec.fills[scale] = {0.5, 1.5};
            if (c.zero_centered) spec.fills[scale] = {-0.5, 0.5};
            cudnnfe_norm_options_t o;
            cudnnfe_norm_options_init(&o);
            o.name = c.layer ? "layernorm" : "rmsnorm";
            o.phase = c.training ? CUDNNFE_NORM_PHASE_TRAINING : CUDNNFE_NORM_PHASE_INFERENCE;
            o.epsilon = 1e-5;
            o.zero_centered_gamma = c.zero_centered;
            int64_t y = 0, s0 = 0, s1 = 0;
            if (c.layer)
              ok(cudnnfe_graph_add_layernorm(g, x, scale, bias, &o, &y, &s0, &s1), "add_layernorm");
            else
              ok(cudnnfe_graph_add_rmsnorm(g, x, scale, bias, &o, &y, &s0), "add_rmsnorm");
            const double rtol = norm_rtol(dt);
            spec.output(g, y, rtol);
            if (s0) spec.output(g, s0, rtol);
            if (s1) spec.output(g, s1, rtol);
          },
          c.expect);
}

TEST(gpu_norm_backward) {
  REQUIRE_GPU();
  const NormCase cases[] = {
      {"layernorm_backward", true, true, true, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_backward", false, true, false, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_backward_dbias", false, true, true, false, false, {256, 1024}, Expect::kBuilds},
      {"rmsnorm_backward_params_io",
       false,
       true,
       false,
       false,
       true,
       {256, 1024},
       Expect::kMayRefuse},
      {"layernorm_backward_zero_centered",
       true,
       true,
       true,
       true,
       false,
       {256, 1024},
       Expect::kBuilds},
      // [b, s, d] with a [1, 1, d] scale: dscale and dbias are [1, 1, d].
      {"layernorm_backward_bsd_shared",
       true,
       true,
       true,
       false,
       false,
       {4, 64, 1024},
       Expect::kBuilds,
       {1, 1, 1024}},
      {"rmsnorm_backward_bsd_shared",
       false,
       true,
       true,
       false,
       false,
       {4, 64, 1024},
       Expect::kBuilds,
       {1, 1, 1024}},
  };
  for (const NormCase &c : cases)
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          c.layer ? "layernorm_backward" : "rmsnorm_backward", c.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            const cudnnfe_dtype_t param = c.params_io ? dt : CUDNNFE_DTYPE_FLOAT;
            int64_t dy = input(g, "dy", dt, c.x);
            int64_t x = input(g, "x", dt, c.x);
            int64_t scale = input(g, "scale", param, param_dims(c));
            spec.fills[scale] = c.zero_centered ? Fill{-0.5, 0.5} : Fill{0.5, 1.5};
            int64_t mean = c.layer ? input(g, "mean", CUDNNFE_DTYPE_FLOAT, stats_dims(c)) : 0;
            int64_t inv = input(g, "inv", CUDNNFE_DTYPE_FLOAT, stats_dims(c));
            cudnnfe_norm_options_t o;
            cudnnfe_norm_options_init(&o);
            o.name = c.layer ? "layernorm_backward" : "rmsnorm_backward";
            o.zero_centered_gamma = c.zero_centered;
            int64_t dx = 0, dscale = 0, dbias = 0;
            if (c.layer)
              ok(cudnnfe_graph_add_layernorm_backward(g, dy, x, scale, mean, inv, &o, &dx, &dscale,
                                                      &dbias),
                 "add_layernorm_backward");
            else
              ok(cudnnfe_graph_add_rmsnorm_backward(g, dy, x, scale, inv, &o, &dx, &dscale,
                                                    c.bias ? &dbias : nullptr),
                 "add_rmsnorm_backward");
            // cuDNN writes dscale and dbias in the weight's type (FLOAT for
            // zero-centred gamma's scale + 1).
            const cudnnfe_dtype_t weight = c.zero_centered ? CUDNNFE_DTYPE_FLOAT : param;
            ok(cudnnfe_tensor_set_dtype(g, dscale, weight), "set_dtype");
            if (dbias) ok(cudnnfe_tensor_set_dtype(g, dbias, weight), "set_dtype");
            const double rtol = norm_rtol(dt);
            spec.output(g, dx, rtol);
            spec.output(g, dscale, rtol);
            if (dbias) spec.output(g, dbias, rtol);
            // The statistics the forward would have written for this x.
            spec.prepare = [=](HostData &data) {
              GraphPtr fwd = new_graph("norm_forward_for_stats", dt);
              int64_t fx = input(fwd.get(), "x", dt, c.x);
              int64_t fs = input(fwd.get(), "scale", param, param_dims(c));
              int64_t fb = c.layer ? input(fwd.get(), "bias", param, param_dims(c)) : 0;
              cudnnfe_norm_options_t fo;
              cudnnfe_norm_options_init(&fo);
              fo.zero_centered_gamma = c.zero_centered;
              int64_t y = 0, m = 0, v = 0;
              if (c.layer)
                ok(cudnnfe_graph_add_layernorm(fwd.get(), fx, fs, fb, &fo, &y, &m, &v),
                   "add_layernorm");
              else
                ok(cudnnfe_graph_add_rmsnorm(fwd.get(), fx, fs, 0, &fo, &y, &v), "add_rmsnorm");
              Bytes zeros(describe(fwd.get(), fs).bytes * 4, 0);  // the bias (any type)
              std::map<int64_t, Bytes *> inputs = {{fx, data[x].second}, {fs, data[scale].second}};
              if (fb) inputs[fb] = &zeros;
              std::vector<int64_t> outs = {y, v};
              if (m) outs.push_back(m);
              auto results = run_cpu(fwd.get(), inputs, outs);
              if (m) *data[mean].second = results[m].second;
              *data[inv].second = results[v].second;
            };
          },
          c.expect);
}

TEST(gpu_norm_refusals_by_cudnnfe) {
  REQUIRE_GPU();
  // Features not one contiguous block per row (rows of 32 padded to 40):
  // cudnnfe refused this itself until the inventory of issue 23 found no
  // recorded cuDNN refusal behind it. The lowering now describes every
  // operand in its own dims, as cudnn-frontend does; cuDNN may refuse it
  // (its message, not cudnnfe's) or must compute it right.
  check_case(
      "rmsnorm", "padded_rows", CUDNNFE_DTYPE_HALF,
      [&](cudnnfe_graph_t *g, Spec &spec) {
        int64_t x = input(g, "x", CUDNNFE_DTYPE_HALF, {16, 8, 32}, {8 * 40, 40, 1});
        int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 8, 32});
        spec.fills[scale] = {0.5, 1.5};
        int64_t y = 0, inv = 0;
        ok(cudnnfe_graph_add_rmsnorm(g, x, scale, 0, nullptr, &y, &inv), "add_rmsnorm");
        spec.output(g, y, norm_rtol(CUDNNFE_DTYPE_HALF));
        spec.output(g, inv, norm_rtol(CUDNNFE_DTYPE_HALF));
      },
      Expect::kMayRefuse);
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;

  // dscale forced to the I/O type while scale is FLOAT: cuDNN would only say
  // "no engine"; cudnnfe says which tensor and what to set.
  GraphPtr b = new_graph("dscale_type", CUDNNFE_DTYPE_BFLOAT16);
  int64_t dy = input(b.get(), "dy", CUDNNFE_DTYPE_BFLOAT16, {64, 256});
  int64_t bx = input(b.get(), "x", CUDNNFE_DTYPE_BFLOAT16, {64, 256});
  int64_t bs = input(b.get(), "scale", CUDNNFE_DTYPE_FLOAT, {1, 256});
  int64_t bi = input(b.get(), "inv_rms", CUDNNFE_DTYPE_FLOAT, {64, 1});
  int64_t dx = 0, dscale = 0;
  REQUIRE_OK(
      cudnnfe_graph_add_rmsnorm_backward(b.get(), dy, bx, bs, bi, nullptr, &dx, &dscale, nullptr));
  REQUIRE_OK(cudnnfe_tensor_set_output(b.get(), dx, 1));
  REQUIRE_OK(cudnnfe_tensor_set_output(b.get(), dscale, 1));
  // Left unset, dscale takes scale's type (FLOAT); here the user forces it.
  cudnnfe_dtype_t inferred = CUDNNFE_DTYPE_NOT_SET;
  CHECK_OK(cudnnfe_tensor_get_dtype(b.get(), dscale, &inferred));
  CHECK(inferred == CUDNNFE_DTYPE_FLOAT);
  REQUIRE_OK(cudnnfe_tensor_set_dtype(b.get(), dscale, CUDNNFE_DTYPE_BFLOAT16));
  CHECK_FAILS(cudnnfe_graph_build(b.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
              "dscale", "BFLOAT16", "FLOAT", "cudnnfe_tensor_set_dtype");
  std::printf("  message: %s\n", cudnnfe_graph_last_error(b.get()));
}

// ---------------------------------------------------------------------------
// Softmax

TEST(gpu_softmax) {
  REQUIRE_GPU();
  // A composite cuDNN fuses inside attention; standalone, an engine may or
  // may not take it.
  for (bool stats : {false, true})
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "softmax", stats ? "softmax_stats" : "softmax", dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t x = input(g, "x", dt, {2, 4, 64, 128});
            spec.fills[x] = {-4, 4};
            cudnnfe_softmax_options_t o;
            cudnnfe_softmax_options_init(&o);
            o.name = "softmax";
            o.generate_stats = stats;
            int64_t y = 0, st = 0;
            ok(cudnnfe_graph_add_softmax(g, x, &o, &y, &st), "add_softmax");
            spec.output(g, y, norm_rtol(dt));
            if (st) spec.output(g, st, norm_rtol(dt));
          },
          Expect::kMayRefuse);
}

// ---------------------------------------------------------------------------
// SDPA backward

struct SdpaCase {
  const char *name;
  int64_t b, h_q, h_kv, s_q, s_kv, d;
  bool causal, bottom_right, bias, bshd, deterministic;
};

void build_sdpa_backward(cudnnfe_graph_t *g, Spec &spec, const SdpaCase &c, cudnnfe_dtype_t dt) {
  auto layout = [&](int64_t h, int64_t s, int64_t d) {
    return c.bshd ? Dims{s * h * d, d, h * d, 1} : packed({c.b, h, s, d});
  };
  const Dims qd = {c.b, c.h_q, c.s_q, c.d}, kd = {c.b, c.h_kv, c.s_kv, c.d};
  int64_t q = input(g, "q", dt, qd, layout(c.h_q, c.s_q, c.d));
  int64_t k = input(g, "k", dt, kd, layout(c.h_kv, c.s_kv, c.d));
  int64_t v = input(g, "v", dt, kd, layout(c.h_kv, c.s_kv, c.d));
  int64_t o = input(g, "o", dt, qd, layout(c.h_q, c.s_q, c.d));
  int64_t d_o = input(g, "dO", dt, qd, layout(c.h_q, c.s_q, c.d));
  int64_t stats = input(g, "stats", CUDNNFE_DTYPE_FLOAT, {c.b, c.h_q, c.s_q, 1});
  int64_t bias = c.bias ? input(g, "bias", dt, {1, c.h_q, c.s_q, c.s_kv}) : 0;
  cudnnfe_sdpa_backward_options_t opt;
  cudnnfe_sdpa_backward_options_init(&opt);
  opt.name = "sdpa_backward";
  opt.causal_mask = c.causal && !c.bottom_right;
  opt.causal_mask_bottom_right = c.causal && c.bottom_right;
  opt.bias = bias;
  opt.deterministic = c.deterministic;
  int64_t dq = 0, dk = 0, dv = 0;
  ok(cudnnfe_graph_add_sdpa_backward(g, q, k, v, o, d_o, stats, &opt, &dq, &dk, &dv),
     "add_sdpa_backward");
  const double grad_rtol = dt == CUDNNFE_DTYPE_BFLOAT16 ? kSdpaBf16GradRtol : kSdpaRtol;
  spec.output(g, dq, kSdpaRtol);
  spec.output(g, dk, grad_rtol);
  spec.output(g, dv, grad_rtol);
  spec.deterministic = c.deterministic;
  // o and stats from the CPU reference's forward on the same q, k, v, bias.
  spec.prepare = [=](HostData &data) {
    GraphPtr fwd = new_graph("sdpa_forward_for_inputs", dt);
    int64_t fq = input(fwd.get(), "q", dt, qd, layout(c.h_q, c.s_q, c.d));
    int64_t fk = input(fwd.get(), "k", dt, kd, layout(c.h_kv, c.s_kv, c.d));
    int64_t fv = input(fwd.get(), "v", dt, kd, layout(c.h_kv, c.s_kv, c.d));
    cudnnfe_sdpa_options_t fo;
    cudnnfe_sdpa_options_init(&fo);
    fo.causal_mask = opt.causal_mask;
    fo.causal_mask_bottom_right = opt.causal_mask_bottom_right;
    fo.generate_stats = 1;
    int64_t fb = c.bias ? input(fwd.get(), "bias", dt, {1, c.h_q, c.s_q, c.s_kv}) : 0;
    fo.bias = fb;
    int64_t fout = 0, fstats = 0;
    ok(cudnnfe_graph_add_sdpa(fwd.get(), fq, fk, fv, &fo, &fout, &fstats), "add_sdpa");
    std::map<int64_t, Bytes *> inputs = {
        {fq, data[q].second}, {fk, data[k].second}, {fv, data[v].second}};
    if (fb) inputs[fb] = data[bias].second;
    auto results = run_cpu(fwd.get(), inputs, {fout, fstats});
    copy_elements(results[fout].first, results[fout].second, data[o].first, *data[o].second);
    *data[stats].second = results[fstats].second;
  };
}

TEST(gpu_sdpa_backward) {
  REQUIRE_GPU();
  const SdpaCase cases[] = {
      {"sdpa_backward_noncausal", 2, 4, 4, 128, 128, 64, false, false, false, false, false},
      {"sdpa_backward_causal", 2, 4, 4, 128, 128, 64, true, false, false, false, false},
      {"sdpa_backward_causal_bottom_right", 2, 4, 4, 64, 128, 64, true, true, false, false, false},
      {"sdpa_backward_gqa_causal", 2, 8, 2, 128, 128, 64, true, false, false, false, false},
      {"sdpa_backward_mqa", 1, 4, 1, 128, 128, 64, false, false, false, false, false},
      {"sdpa_backward_bias", 2, 4, 4, 128, 128, 64, false, false, true, false, false},
      {"sdpa_backward_bshd_causal_d128", 2, 4, 4, 128, 128, 128, true, false, false, true, false},
      {"sdpa_backward_deterministic", 2, 4, 4, 128, 128, 64, true, false, false, false, true},
  };
  for (const SdpaCase &c : cases)
    for (cudnnfe_dtype_t dt : kHalfTypes)
      check_case("sdpa_backward", c.name, dt,
                 [&](cudnnfe_graph_t *g, Spec &spec) { build_sdpa_backward(g, spec, c, dt); });
}

TEST(gpu_sdpa_backward_workspace) {
  REQUIRE_GPU();
  // The frontend's tensors (softmax_sum, dQ accumulator) are counted in the
  // workspace size: b * h_q * s_q * (1 + d) floats at least.
  const SdpaCase c = {"ws", 1, 4, 4, 128, 128, 64, false, false, false, false, false};
  GraphPtr g = new_graph("sdpa_backward_ws", CUDNNFE_DTYPE_BFLOAT16);
  Spec spec;
  build_sdpa_backward(g.get(), spec, c, CUDNNFE_DTYPE_BFLOAT16);
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  REQUIRE_OK(cudnnfe_graph_build(g.get(), test_handle(), &options));
  int64_t size = 0;
  REQUIRE_OK(cudnnfe_graph_get_workspace_size(g.get(), &size));
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  const int64_t frontend = 4 * c.b * c.h_q * c.s_q * (version >= 90600 ? 1 + c.d : 1);
  CHECK_MSG(size >= frontend, "workspace %lld < the frontend's %lld bytes",
            static_cast<long long>(size), static_cast<long long>(frontend));
  std::printf("  workspace %lld bytes (frontend part >= %lld)\n", static_cast<long long>(size),
              static_cast<long long>(frontend));
  // One byte short of it is refused before anything runs (the buffers are
  // never touched: the check comes first).
  size_t count = 0;
  REQUIRE_OK(cudnnfe_graph_get_bound_uids(g.get(), nullptr, 0, &count));
  std::vector<int64_t> uids(count);
  REQUIRE_OK(cudnnfe_graph_get_bound_uids(g.get(), uids.data(), count, &count));
  static unsigned char dummy[64];
  std::vector<cudnnfe_binding_t> bindings;
  for (int64_t uid : uids) bindings.push_back({uid, dummy});
  CHECK_FAILS(cudnnfe_graph_execute(g.get(), test_handle(), bindings.data(), bindings.size(), dummy,
                                    static_cast<size_t>(size - 1), nullptr),
              CUDNNFE_STATUS_INVALID_ARGUMENT, "too small");
}

// ---------------------------------------------------------------------------

TEST(gpu_zz_summary) {
  REQUIRE_GPU();
  std::printf("  worst error per op, output and type:\n");
  for (const auto &[what, w] : worst_by_output())
    std::printf("    %-36s %3d outputs  max_abs %.2e  max_rel %.2e  (%s)\n", what.c_str(),
                w.outputs, w.max_abs, w.max_rel, w.where.c_str());
  std::printf("  configurations cuDNN refused (%zu):\n", refusals().size());
  for (const std::string &r : refusals()) std::printf("    %s\n", r.c_str());
}

}  // namespace
