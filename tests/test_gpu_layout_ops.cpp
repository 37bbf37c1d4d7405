// GPU tests of the layout, resampling and random-number ops through the
// public C API: pooling and upsampling, reshape and transpose (standalone
// and fused), slices (pointer-offset views), concatenate, and rng.
//
// Deterministic ops are built twice, for the GPU and for the CPU reference,
// run on the same random inputs and compared element by element at the
// tolerance each case states. Output buffers are pre-filled with NaN inside
// guard bands that must come back untouched, and every GPU case runs twice.
//
// Random numbers cannot match the CPU reference bit for bit (cuDNN's
// Philox stream is its own), so rng cases check statistics of a million
// samples at six standard errors, that the same seed and offset reproduce
// bit for bit, that another seed or offset changes the numbers, and that a
// Bernoulli mask fused into x * mask gives only x or 0.
//
// Without a GPU every case skips. With one, a refusal passes only where a
// case says cuDNN may refuse it; it is then printed with cudnnfe's
// NOT_SUPPORTED message and listed in the summary (docs/layout-ops.md
// records what cuDNN 9.14 and 9.19 accept on an H100).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
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

constexpr size_t kGuardBytes = 512;
constexpr unsigned char kGuardByte = 0x5a;

std::vector<std::string> &refusals() {
  static std::vector<std::string> list;
  return list;
}

std::vector<std::string> &accepted() {
  static std::vector<std::string> list;
  return list;
}

// ---------------------------------------------------------------------------
// Host tensors

// Distinct values (k - n/2) / 256 in shuffled order: exact in HALF for
// n < 4096, so pooling maxima and their indices are unique.
void fill_distinct(const TensorInfo &t, Bytes &bytes, std::mt19937 &rng) {
  std::vector<int64_t> offsets;
  for_each_offset(t, [&](int64_t off) { offsets.push_back(off); });
  std::vector<int64_t> values(offsets.size());
  std::iota(values.begin(), values.end(), 0);
  std::shuffle(values.begin(), values.end(), rng);
  const size_t size = cudnnfe_dtype_size(t.dtype);
  const double half = static_cast<double>(offsets.size()) / 2;
  for (size_t i = 0; i < offsets.size(); ++i)
    gpu::store(t.dtype, &bytes[offsets[i] * size], (static_cast<double>(values[i]) - half) / 256);
}

// NHWC strides of logical NCHW dims.
Dims nhwc(const Dims &d) {
  return {d[1] * d[2] * d[3], 1, d[3] * d[1], d[1]};
}

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

cudnnfe_status_t build_for(cudnnfe_graph_t *g, cudnnfe_target_t target) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = target;
  return cudnnfe_graph_build(g, test_handle(), &options);
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

void copy_to_device(void *device, const void *host, size_t bytes) {
  std::string err =
      gpu::cuda_check(gpu::runtime().Memcpy(device, host, bytes, gpu::kHostToDevice), "cudaMemcpy");
  if (!err.empty()) throw Failure(err);
}

void copy_to_host(void *host, const void *device, size_t bytes) {
  std::string err =
      gpu::cuda_check(gpu::runtime().Memcpy(host, device, bytes, gpu::kDeviceToHost), "cudaMemcpy");
  if (!err.empty()) throw Failure(err);
}

void synchronize() {
  std::string err = gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "cudaDeviceSynchronize");
  if (!err.empty()) throw Failure(err);
}

// ---------------------------------------------------------------------------
// GPU against CPU reference

struct Spec {
  std::vector<int64_t> outputs;
  std::map<int64_t, double> rtol;
  std::vector<int64_t> distinct;  // inputs filled by fill_distinct
  void output(cudnnfe_graph_t *g, int64_t uid, double tolerance) {
    ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
    outputs.push_back(uid);
    rtol[uid] = tolerance;
  }
};

using Builder = std::function<void(cudnnfe_graph_t *, Spec &)>;

enum class Expect { kBuilds, kMayRefuse };

void run_case(const std::string &label, cudnnfe_dtype_t io, const Builder &build, Expect expect) {
  const std::string full = label + " " + short_name(io);
  GraphPtr gpu_graph = new_graph(full, io);
  Spec spec;
  build(gpu_graph.get(), spec);
  cudnnfe_status_t s = build_for(gpu_graph.get(), CUDNNFE_TARGET_GPU);
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
  s = build_for(cpu_graph.get(), CUDNNFE_TARGET_CPU_REFERENCE);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("CPU reference build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(cpu_graph.get()));

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
    if (t.is_output) {
      host[i] = Bytes(t.bytes, 0);
    } else {
      host[i] = random_bytes(t, Fill{}, rng);
      if (std::count(spec.distinct.begin(), spec.distinct.end(), uids[i]))
        fill_distinct(t, host[i], rng);
    }
    tensors.push_back(std::move(t));
  }

  std::vector<gpu::DeviceBuffer> device;
  std::vector<void *> device_ptrs, host_ptrs;
  for (size_t i = 0; i < uids.size(); ++i) {
    const TensorInfo &t = tensors[i];
    const size_t guard = t.is_output ? kGuardBytes : 0;
    device.emplace_back(t.bytes + 2 * guard);
    if (!device.back().ok()) throw Failure("cudaMalloc of " + std::to_string(t.bytes) + " failed");
    device_ptrs.push_back(static_cast<unsigned char *>(device.back().get()) + guard);
    host_ptrs.push_back(host[i].data());
    if (!t.is_output) copy_to_device(device_ptrs.back(), host[i].data(), t.bytes);
  }
  execute(cpu_graph.get(), uids, host_ptrs, nullptr, 0, "CPU reference");

  int64_t workspace_size = 0;
  ok(cudnnfe_graph_get_workspace_size(gpu_graph.get(), &workspace_size), "get_workspace_size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(workspace_size));
  if (!workspace.ok()) throw Failure("cudaMalloc of the workspace failed");
  if (workspace_size > 0)
    gpu::runtime().Memset(workspace.get(), 0xff, static_cast<size_t>(workspace_size));
  const char *plan = "";
  cudnnfe_graph_get_plan_name(gpu_graph.get(), &plan);

  bool failed = false;
  for (int run = 0; run < 2; ++run) {
    for (size_t i = 0; i < uids.size(); ++i) {
      if (!tensors[i].is_output) continue;
      Bytes fill(tensors[i].bytes + 2 * kGuardBytes, kGuardByte);
      std::fill(fill.begin() + kGuardBytes, fill.end() - kGuardBytes, 0xff);
      copy_to_device(device[i].get(), fill.data(), fill.size());
    }
    execute(gpu_graph.get(), uids, device_ptrs, workspace.get(),
            static_cast<size_t>(workspace_size), "GPU");
    synchronize();
    for (size_t i = 0; i < uids.size(); ++i) {
      const TensorInfo &t = tensors[i];
      if (!t.is_output) continue;
      Bytes all(t.bytes + 2 * kGuardBytes);
      copy_to_host(all.data(), device[i].get(), all.size());
      size_t guard_hits = 0;
      for (size_t j = 0; j < kGuardBytes; ++j)
        guard_hits += (all[j] != kGuardByte) + (all[all.size() - 1 - j] != kGuardByte);
      Bytes got(all.begin() + kGuardBytes, all.end() - kGuardBytes);
      const double rtol = spec.rtol[t.uid];
      Errors e = compare(t, got, host[i], rtol, NonFinite::kMustMatch);
      if (run == 0 || e.bad || guard_hits)
        std::printf("  %-40s %-28s max_abs %.2e (rtol %.0e) plan %s%s%s%s\n", full.c_str(),
                    (t.name + dims_text(t.dims)).c_str(), e.max_abs, rtol, plan,
                    run ? " [run 2]" : "", e.bad ? "  MISMATCH" : "",
                    guard_hits ? "  GUARD BAND OVERWRITTEN" : "");
      if (e.bad)
        std::printf("    %lld elements out of tolerance; first at %s\n",
                    static_cast<long long>(e.bad), e.first_bad.c_str());
      if (e.bad || guard_hits) {
        ++testing::state().failures;
        failed = true;
      }
    }
  }
  if (!failed) accepted().push_back(full + " (plan " + plan + ")");
}

void check_case(const std::string &label, cudnnfe_dtype_t io, const Builder &build,
                Expect expect = Expect::kBuilds) {
  try {
    run_case(label, io, build, expect);
  } catch (const Failure &f) {
    std::printf("  %s %s FAILED: %s\n", label.c_str(), short_name(io), f.what());
    ++testing::state().failures;
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// Resampling

struct PoolCase {
  const char *name;
  cudnnfe_resample_mode_t mode;
  bool nhwc;
  bool index;
  Dims x;
  int64_t window[2], stride[2], pre[2], post[2];
  cudnnfe_dtype_t dtype;
  Expect expect;
};

Builder pool_builder(const PoolCase &c) {
  return [c](cudnnfe_graph_t *g, Spec &spec) {
    const int64_t x = input(g, "x", c.dtype, c.x, c.nhwc ? nhwc(c.x) : Dims{});
    spec.distinct.push_back(x);
    cudnnfe_resample_options_t o;
    cudnnfe_resample_options_init(&o);
    o.name = "pool";
    o.mode = c.mode;
    for (int i = 0; i < 2; ++i) {
      o.window[i] = c.window[i];
      o.stride[i] = c.stride[i];
      o.pre_padding[i] = c.pre[i];
      o.post_padding[i] = c.post[i];
    }
    o.generate_index = c.index;
    int64_t y = 0, index = 0;
    ok(cudnnfe_graph_add_resample(g, x, &o, &y, &index), "add_resample");
    if (!c.nhwc) {
      // Outputs default to channels-last (cudnn-frontend's resample
      // default); an NCHW case keeps y and the index NCHW, as x.
      int64_t dims[4], strides[4];
      int32_t rank = 0;
      ok(cudnnfe_tensor_get_shape(g, y, dims, strides, 4, &rank), "get_shape");
      const Dims packed = {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
      ok(cudnnfe_tensor_set_strides(g, y, 4, packed.data()), "set_strides");
      if (index) ok(cudnnfe_tensor_set_strides(g, index, 4, packed.data()), "set_strides");
    }
    const bool exact = c.mode == CUDNNFE_RESAMPLE_MAXPOOL;
    spec.output(g, y, exact ? 0.0 : (c.dtype == CUDNNFE_DTYPE_FLOAT ? 1e-5 : 1e-2));
    if (index) spec.output(g, index, 0.0);
  };
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

TEST(gpu_pooling) {
  REQUIRE_GPU();
  constexpr cudnnfe_dtype_t H = CUDNNFE_DTYPE_HALF, F = CUDNNFE_DTYPE_FLOAT;
  const PoolCase cases[] = {
      {"maxpool_nhwc_3x3_s2_p1",
       CUDNNFE_RESAMPLE_MAXPOOL,
       true,
       false,
       {2, 8, 12, 10},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       H,
       Expect::kBuilds},
      {"maxpool_nhwc_2x3_s4x5_pads",
       CUDNNFE_RESAMPLE_MAXPOOL,
       true,
       false,
       {2, 8, 14, 16},
       {2, 3},
       {4, 5},
       {1, 2},
       {1, 2},
       H,
       Expect::kBuilds},
      {"maxpool_nhwc_index",
       CUDNNFE_RESAMPLE_MAXPOOL,
       true,
       true,
       {2, 8, 12, 10},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       H,
       Expect::kBuilds},
      {"maxpool_nchw_fp32",
       CUDNNFE_RESAMPLE_MAXPOOL,
       false,
       false,
       {2, 4, 9, 9},
       {2, 2},
       {2, 2},
       {0, 0},
       {1, 1},
       F,
       Expect::kBuilds},
      {"avgpool_include_nhwc",
       CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING,
       true,
       false,
       {2, 8, 12, 10},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       H,
       Expect::kBuilds},
      {"avgpool_exclude_nhwc",
       CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
       true,
       false,
       {2, 8, 12, 10},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       H,
       Expect::kBuilds},
      {"avgpool_include_nchw_fp32",
       CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING,
       false,
       false,
       {2, 4, 9, 9},
       {2, 2},
       {2, 2},
       {1, 1},
       {0, 0},
       F,
       Expect::kBuilds},
  };
  for (const PoolCase &c : cases) check_case(c.name, c.dtype, pool_builder(c), c.expect);
}

TEST(gpu_pooling_fused_with_pointwise) {
  REQUIRE_GPU();
  // maxpool -> * scale -> + bias -> relu, NHWC (cuDNN's pool-scale-bias-act pattern).
  check_case(
      "maxpool_scale_bias_relu", CUDNNFE_DTYPE_HALF,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const Dims xd = {2, 16, 12, 12};
        const int64_t x = input(g, "x", CUDNNFE_DTYPE_HALF, xd, nhwc(xd));
        spec.distinct.push_back(x);
        const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 16, 1, 1});
        const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, {1, 16, 1, 1});
        cudnnfe_resample_options_t o;
        cudnnfe_resample_options_init(&o);
        int64_t p = 0, m = 0, a = 0, y = 0;
        ok(cudnnfe_graph_add_resample(g, x, &o, &p, nullptr), "add_resample");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, p, scale, 0, nullptr, &m), "mul");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, m, bias, 0, nullptr, &a), "add");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, a, 0, 0, nullptr, &y),
           "relu");
        spec.output(g, y, 1e-2);
      },
      Expect::kBuilds);
}

TEST(gpu_upsampling) {
  REQUIRE_GPU();
  for (cudnnfe_resample_mode_t mode : {CUDNNFE_RESAMPLE_NEAREST, CUDNNFE_RESAMPLE_BILINEAR})
    for (bool channels_last : {true, false})
      check_case(
          std::string(mode == CUDNNFE_RESAMPLE_NEAREST ? "nearest" : "bilinear") + "_x2_" +
              (channels_last ? "nhwc" : "nchw"),
          CUDNNFE_DTYPE_HALF,
          [=](cudnnfe_graph_t *g, Spec &spec) {
            const Dims xd = {2, 8, 6, 5};
            const int64_t x =
                input(g, "x", CUDNNFE_DTYPE_HALF, xd, channels_last ? nhwc(xd) : Dims{});
            cudnnfe_resample_options_t o;
            cudnnfe_resample_options_init(&o);
            o.mode = mode;
            int64_t y = 0;
            ok(cudnnfe_graph_add_resample(g, x, &o, &y, nullptr), "add_resample");
            spec.output(g, y, mode == CUDNNFE_RESAMPLE_NEAREST ? 0.0 : 1e-2);
          },
          Expect::kMayRefuse);
}

// ---------------------------------------------------------------------------
// Reshape and transpose

TEST(gpu_reshape) {
  REQUIRE_GPU();
  constexpr cudnnfe_dtype_t H = CUDNNFE_DTYPE_HALF;
  check_case(
      "reshape_standalone", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {4, 6, 8});
        const Dims yd = {24, 8};
        int64_t y = 0;
        ok(cudnnfe_graph_add_reshape(g, x, 2, yd.data(), nullptr, &y), "add_reshape");
        spec.output(g, y, 0.0);
      },
      Expect::kMayRefuse);
  check_case(
      "reshape_then_relu", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {2, 16, 8});
        const Dims yd = {32, 8};
        int64_t r = 0, y = 0;
        ok(cudnnfe_graph_add_reshape(g, x, 2, yd.data(), nullptr, &r), "add_reshape");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, r, 0, 0, nullptr, &y),
           "relu");
        spec.output(g, y, 0.0);
      },
      Expect::kBuilds);
  check_case(
      "matmul_then_reshape", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", H, {2, 16, 32});
        const int64_t b = input(g, "b", H, {2, 32, 8});
        int64_t c = 0, y = 0;
        ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "add_matmul");
        const Dims yd = {32, 8};
        ok(cudnnfe_graph_add_reshape(g, c, 2, yd.data(), nullptr, &y), "add_reshape");
        spec.output(g, y, 2e-2);
      },
      Expect::kMayRefuse);
  check_case(
      "matmul_reshape_relu", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", H, {1, 64, 32});
        const int64_t b = input(g, "b", H, {1, 32, 16});
        int64_t c = 0, r = 0, y = 0;
        ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "add_matmul");
        const Dims rd = {1, 16, 64};
        ok(cudnnfe_graph_add_reshape(g, c, 3, rd.data(), nullptr, &r), "add_reshape");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, r, 0, 0, nullptr, &y),
           "relu");
        spec.output(g, y, 2e-2);
      },
      Expect::kMayRefuse);
}

TEST(gpu_transpose) {
  REQUIRE_GPU();
  constexpr cudnnfe_dtype_t H = CUDNNFE_DTYPE_HALF;
  check_case(
      "transpose_standalone", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {4, 8, 16});
        const int32_t perm[] = {0, 2, 1};
        int64_t y = 0;
        ok(cudnnfe_graph_add_transpose(g, x, 3, perm, nullptr, &y), "add_transpose");
        spec.output(g, y, 0.0);
      },
      Expect::kMayRefuse);
  // cuDNN 9.14/9.19 refuse a pointwise op on a transposed (column-major)
  // input: CUDNN_STATUS_NOT_SUPPORTED_LAYOUT, get_matrix_layout != RowMajor.
  check_case(
      "transpose_then_relu", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {4, 8, 16});
        const int32_t perm[] = {0, 2, 1};
        int64_t t = 0, y = 0;
        ok(cudnnfe_graph_add_transpose(g, x, 3, perm, nullptr, &t), "add_transpose");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, t, 0, 0, nullptr, &y),
           "relu");
        spec.output(g, y, 0.0);
      },
      Expect::kMayRefuse);
  // Kᵀ of attention: b = transpose(k) as the matmul's right operand.
  check_case(
      "transpose_into_matmul", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", H, {2, 16, 32});
        const int64_t k = input(g, "k", H, {2, 8, 32});
        const int32_t perm[] = {0, 2, 1};
        int64_t kt = 0, c = 0;
        ok(cudnnfe_graph_add_transpose(g, k, 3, perm, nullptr, &kt), "add_transpose");
        ok(cudnnfe_graph_add_matmul(g, a, kt, nullptr, &c), "add_matmul");
        spec.output(g, c, 2e-2);
      },
      Expect::kBuilds);
  // Kᵀ straight from a fused QKV input: slice, then transpose, into matmul.
  check_case(
      "slice_transpose_into_matmul", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t q = input(g, "q", H, {2, 16, 32});
        const int64_t qkv = input(g, "qkv", H, {2, 8, 96});
        const int64_t start[] = {0, 0, 32}, end[] = {2, 8, 64};
        const int32_t perm[] = {0, 2, 1};
        int64_t k = 0, kt = 0, c = 0;
        ok(cudnnfe_graph_add_slice(g, qkv, 3, start, end, nullptr, nullptr, &k), "add_slice");
        ok(cudnnfe_graph_add_transpose(g, k, 3, perm, nullptr, &kt), "add_transpose");
        ok(cudnnfe_graph_add_matmul(g, q, kt, nullptr, &c), "add_matmul");
        spec.output(g, c, 2e-2);
      },
      Expect::kBuilds);
  // A matmul writing its output transposed (a reshape operation on a
  // virtual tensor, with a bound output of the view's strides).
  check_case(
      "matmul_then_transpose", CUDNNFE_DTYPE_FLOAT,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", CUDNNFE_DTYPE_FLOAT, {2, 16, 32});
        const int64_t b = input(g, "b", CUDNNFE_DTYPE_FLOAT, {2, 32, 8});
        const int32_t perm[] = {0, 2, 1};
        int64_t c = 0, y = 0;
        ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "add_matmul");
        ok(cudnnfe_graph_add_transpose(g, c, 3, perm, nullptr, &y), "add_transpose");
        spec.output(g, y, 1e-4);
      },
      Expect::kMayRefuse);
}

// ---------------------------------------------------------------------------
// Slices (pointer-offset views of graph inputs)

TEST(gpu_slice) {
  REQUIRE_GPU();
  constexpr cudnnfe_dtype_t H = CUDNNFE_DTYPE_HALF;
  check_case(
      "slice_then_relu", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {4, 64});
        const int64_t start[] = {1, 16}, end[] = {3, 48};
        int64_t s = 0, y = 0;
        ok(cudnnfe_graph_add_slice(g, x, 2, start, end, nullptr, nullptr, &s), "add_slice");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, s, 0, 0, nullptr, &y),
           "relu");
        spec.output(g, y, 0.0);
      },
      Expect::kBuilds);
  // Stepped along the innermost dim: cuDNN 9.14/9.19 computed wrong values
  // (the view read as contiguous), so cudnnfe refuses it with NOT_SUPPORTED.
  check_case(
      "slice_stepped_then_add", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", H, {6, 8, 32});
        const int64_t b = input(g, "b", H, {3, 8, 8});
        const int64_t start[] = {1, 0, 2}, end[] = {6, 8, 32}, step[] = {2, 1, 4};
        int64_t s = 0, y = 0;
        ok(cudnnfe_graph_add_slice(g, x, 3, start, end, step, nullptr, &s), "add_slice");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_ADD, s, b, 0, nullptr, &y), "add");
        spec.output(g, y, 1e-2);
      },
      Expect::kMayRefuse);
  // A fused QKV projection sliced into attention-style matmul operands.
  check_case(
      "slice_into_matmul", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t qkv = input(g, "qkv", H, {2, 16, 96});
        const int64_t w = input(g, "w", H, {2, 32, 8});
        const int64_t start[] = {0, 0, 32}, end[] = {2, 16, 64};
        int64_t k = 0, c = 0;
        ok(cudnnfe_graph_add_slice(g, qkv, 3, start, end, nullptr, nullptr, &k), "add_slice");
        ok(cudnnfe_graph_add_matmul(g, k, w, nullptr, &c), "add_matmul");
        spec.output(g, c, 2e-2);
      },
      Expect::kMayRefuse);
  // Two slices of one input feeding one op.
  check_case(
      "two_slices_mul", CUDNNFE_DTYPE_FLOAT,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t x = input(g, "x", CUDNNFE_DTYPE_FLOAT, {8, 64});
        const int64_t s0[] = {0, 0}, e0[] = {8, 32}, s1[] = {0, 32}, e1[] = {8, 64};
        int64_t lo = 0, hi = 0, y = 0;
        ok(cudnnfe_graph_add_slice(g, x, 2, s0, e0, nullptr, nullptr, &lo), "add_slice");
        ok(cudnnfe_graph_add_slice(g, x, 2, s1, e1, nullptr, nullptr, &hi), "add_slice");
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, lo, hi, 0, nullptr, &y), "mul");
        spec.output(g, y, 1e-6);
      },
      Expect::kBuilds);
}

TEST(gpu_slice_of_an_intermediate_is_refused_by_name) {
  REQUIRE_GPU();
  GraphPtr g = new_graph("slice_of_virtual", CUDNNFE_DTYPE_HALF);
  const int64_t x = input(g.get(), "x", CUDNNFE_DTYPE_HALF, {4, 64});
  int64_t r = 0, s = 0, y = 0;
  ok(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_RELU_FWD, x, 0, 0, nullptr, &r),
     "relu");
  const int64_t start[] = {0, 0}, end[] = {2, 64};
  ok(cudnnfe_graph_add_slice(g.get(), r, 2, start, end, nullptr, nullptr, &s), "add_slice");
  ok(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_NEG, s, 0, 0, nullptr, &y), "neg");
  ok(cudnnfe_tensor_set_output(g.get(), y, 1), "set_output");
  CHECK_FAILS(build_for(g.get(), CUDNNFE_TARGET_GPU), CUDNNFE_STATUS_NOT_SUPPORTED, "slice",
              "not a graph input", "pointer");
}

void check_rebinding(cudnnfe_graph_t *graph, int64_t x, int64_t y);

// A slice's pointer follows its input's buffer from one execute to the next.
TEST(gpu_slice_view_follows_new_buffers) {
  REQUIRE_GPU();
  GraphPtr g = new_graph("slice_rebind", CUDNNFE_DTYPE_FLOAT);
  const int64_t x = input(g.get(), "x", CUDNNFE_DTYPE_FLOAT, {4, 16});
  const int64_t start[] = {2, 8}, end[] = {4, 16};
  int64_t s = 0, y = 0;
  ok(cudnnfe_graph_add_slice(g.get(), x, 2, start, end, nullptr, nullptr, &s), "add_slice");
  ok(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_IDENTITY, s, 0, 0, nullptr, &y),
     "identity");
  ok(cudnnfe_tensor_set_output(g.get(), y, 1), "set_output");
  try {
    check_rebinding(g.get(), x, y);
  } catch (const Failure &f) {
    std::printf("  FAILED: %s\n", f.what());
    ++testing::state().failures;
  }
}

void check_rebinding(cudnnfe_graph_t *graph, int64_t x, int64_t y) {
  const cudnnfe_status_t status = build_for(graph, CUDNNFE_TARGET_GPU);
  if (status != CUDNNFE_STATUS_OK) {
    std::printf("  build: %s: %s\n", cudnnfe_status_name(status), cudnnfe_graph_last_error(graph));
    ++testing::state().failures;
    return;
  }
  int64_t ws = 0;
  ok(cudnnfe_graph_get_workspace_size(graph, &ws), "workspace");
  gpu::DeviceBuffer workspace(static_cast<size_t>(ws)), out(16 * sizeof(float));
  // Two live input buffers, so the second execute sees another pointer.
  gpu::DeviceBuffer inputs[2] = {gpu::DeviceBuffer(64 * sizeof(float)),
                                 gpu::DeviceBuffer(64 * sizeof(float))};
  for (int which = 0; which < 2; ++which) {
    std::vector<float> xv(64);
    for (int i = 0; i < 64; ++i) xv[i] = 1000.0f * which + static_cast<float>(i);
    copy_to_device(inputs[which].get(), xv.data(), 64 * sizeof(float));
    execute(graph, {x, y}, {inputs[which].get(), out.get()}, workspace.get(),
            static_cast<size_t>(ws), "GPU");
    synchronize();
    std::vector<float> yv(16);
    copy_to_host(yv.data(), out.get(), 16 * sizeof(float));
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 8; ++c) CHECK(yv[r * 8 + c] == xv[(2 + r) * 16 + 8 + c]);
  }
}

// ---------------------------------------------------------------------------
// Concatenate

TEST(gpu_concatenate) {
  REQUIRE_GPU();
  constexpr cudnnfe_dtype_t H = CUDNNFE_DTYPE_HALF;
  check_case(
      "concatenate_standalone", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", H, {2, 8, 16});
        const int64_t b = input(g, "b", H, {2, 4, 16});
        const int64_t in[] = {a, b};
        int64_t y = 0;
        ok(cudnnfe_graph_add_concatenate(g, 2, in, 1, nullptr, &y), "add_concatenate");
        spec.output(g, y, 0.0);
      },
      Expect::kMayRefuse);
  check_case(
      "relu_then_concatenate", H,
      [](cudnnfe_graph_t *g, Spec &spec) {
        const int64_t a = input(g, "a", H, {2, 8, 64});
        const int64_t b = input(g, "b", H, {2, 8, 64});
        int64_t ra = 0, y = 0;
        ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, a, 0, 0, nullptr, &ra),
           "relu");
        // Concatenated tensors share one type: the intermediate is HALF too.
        ok(cudnnfe_tensor_set_dtype(g, ra, H), "set_dtype");
        const int64_t in[] = {ra, b};
        ok(cudnnfe_graph_add_concatenate(g, 2, in, 2, nullptr, &y), "add_concatenate");
        spec.output(g, y, 0.0);
      },
      Expect::kMayRefuse);
}

// ---------------------------------------------------------------------------
// Random numbers

struct RngGraph {
  GraphPtr graph;
  int64_t seed = 0, offset = 0, x = 0, y = 0;
  bool built = false;
  int64_t workspace = 0;
};

// y = rng(dims) (or x * rng when `with_x`); seed/offset INT64 inputs unless
// `seed_option`.
RngGraph make_rng(const std::string &name, const cudnnfe_rng_options_t &o, const Dims &dims,
                  bool seed_option, bool with_x, cudnnfe_dtype_t x_type = CUDNNFE_DTYPE_FLOAT) {
  RngGraph r;
  r.graph = new_graph(name, CUDNNFE_DTYPE_FLOAT);
  cudnnfe_graph_t *g = r.graph.get();
  if (!seed_option) {
    r.seed = input(g, "seed", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
    r.offset = input(g, "offset", CUDNNFE_DTYPE_INT64, {1, 1, 1, 1});
  }
  int64_t mask = 0;
  ok(cudnnfe_graph_add_rng(g, static_cast<int32_t>(dims.size()), dims.data(), r.seed, r.offset, &o,
                           &mask),
     "add_rng");
  if (with_x) {
    r.x = input(g, "x", x_type, dims);
    ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, r.x, mask, 0, nullptr, &r.y), "mul");
    ok(cudnnfe_tensor_set_dtype(g, r.y, x_type), "set_dtype");
  } else {
    r.y = mask;
  }
  ok(cudnnfe_tensor_set_output(g, r.y, 1), "set_output");
  const cudnnfe_status_t s = build_for(g, CUDNNFE_TARGET_GPU);
  if (s == CUDNNFE_STATUS_NOT_SUPPORTED) {
    std::printf("  %-44s refused (allowed): %s\n", name.c_str(), cudnnfe_graph_last_error(g));
    refusals().push_back(name + ": " + cudnnfe_graph_last_error(g));
    return r;
  }
  ok(s, "GPU build");
  ok(cudnnfe_graph_get_workspace_size(g, &r.workspace), "workspace");
  r.built = true;
  const char *plan = "";
  cudnnfe_graph_get_plan_name(g, &plan);
  accepted().push_back(name + " (plan " + plan + ")");
  return r;
}

// Runs a built rng graph and returns y as FLOAT values.
std::vector<float> run_rng(const RngGraph &r, int64_t seed, int64_t offset, size_t count,
                           const std::vector<float> *x = nullptr) {
  gpu::DeviceBuffer workspace(static_cast<size_t>(r.workspace)), yb(count * sizeof(float));
  gpu::DeviceBuffer sb(sizeof(int64_t)), ob(sizeof(int64_t)), xb(count * sizeof(float));
  std::vector<float> nan(count, NAN);
  copy_to_device(yb.get(), nan.data(), count * sizeof(float));
  std::vector<int64_t> uids = {r.y};
  std::vector<void *> ptrs = {yb.get()};
  if (r.seed) {
    copy_to_device(sb.get(), &seed, sizeof(seed));
    copy_to_device(ob.get(), &offset, sizeof(offset));
    uids.insert(uids.end(), {r.seed, r.offset});
    ptrs.insert(ptrs.end(), {sb.get(), ob.get()});
  }
  if (x) {
    copy_to_device(xb.get(), x->data(), count * sizeof(float));
    uids.push_back(r.x);
    ptrs.push_back(xb.get());
  }
  execute(r.graph.get(), uids, ptrs, workspace.get(), static_cast<size_t>(r.workspace), "GPU");
  synchronize();
  std::vector<float> y(count);
  copy_to_host(y.data(), yb.get(), count * sizeof(float));
  return y;
}

struct Moments {
  double mean = 0, var = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nan = 0;
};

Moments moments(const std::vector<float> &v) {
  Moments m;
  double sum = 0;
  for (float f : v) {
    if (std::isnan(f)) {
      ++m.nan;
      continue;
    }
    sum += f;
    m.lo = std::min<double>(m.lo, f);
    m.hi = std::max<double>(m.hi, f);
  }
  const double n = static_cast<double>(v.size());
  m.mean = sum / n;
  double sq = 0;
  for (float f : v) sq += (f - m.mean) * (f - m.mean);
  m.var = sq / (n - 1);
  return m;
}

cudnnfe_rng_options_t rng_options(cudnnfe_rng_distribution_t d) {
  cudnnfe_rng_options_t o;
  cudnnfe_rng_options_init(&o);
  o.distribution = d;
  o.bernoulli_probability = 0.3;
  o.uniform_min = -1;
  o.uniform_max = 3;
  o.normal_mean = 2;
  o.normal_stddev = 0.5;
  return o;
}

TEST(gpu_rng_statistics) {
  REQUIRE_GPU();
  const Dims dims = {1000, 1000};
  const double n = 1e6;
  struct Case {
    const char *name;
    cudnnfe_rng_distribution_t d;
    double mean, var;
  };
  // Fourth central moments give the variance's standard error:
  // sqrt((mu4 - var^2) / n).
  for (const Case &c : {Case{"rng_bernoulli_p0.3", CUDNNFE_RNG_BERNOULLI, 0.3, 0.21},
                        Case{"rng_uniform_-1_3", CUDNNFE_RNG_UNIFORM, 1.0, 16.0 / 12.0},
                        Case{"rng_normal_2_0.5", CUDNNFE_RNG_NORMAL, 2.0, 0.25}}) {
    try {
      RngGraph r = make_rng(c.name, rng_options(c.d), dims, false, false);
      if (!r.built) continue;
      const std::vector<float> v = run_rng(r, 12345, 0, 1000000);
      const Moments m = moments(v);
      const double mu4 = c.d == CUDNNFE_RNG_BERNOULLI ? c.var * (1 - 3 * c.var)
                         : c.d == CUDNNFE_RNG_UNIFORM ? 256.0 / 80.0
                                                      : 3 * c.var * c.var;
      const double se_mean = std::sqrt(c.var / n), se_var = std::sqrt((mu4 - c.var * c.var) / n);
      std::printf(
          "  %-22s mean %.5f (want %.5f, se %.1e)  var %.5f (want %.5f, se %.1e)  "
          "range [%g, %g]\n",
          c.name, m.mean, c.mean, se_mean, m.var, c.var, se_var, m.lo, m.hi);
      CHECK(m.nan == 0);
      CHECK_MSG(std::fabs(m.mean - c.mean) < 6 * se_mean, "%s mean %g", c.name, m.mean);
      CHECK_MSG(std::fabs(m.var - c.var) < 6 * se_var, "%s variance %g", c.name, m.var);
      if (c.d == CUDNNFE_RNG_BERNOULLI) {
        int64_t other = 0;
        for (float f : v) other += f != 0.0f && f != 1.0f;
        CHECK_MSG(other == 0, "%lld values are neither 0 nor 1", static_cast<long long>(other));
      }
      if (c.d == CUDNNFE_RNG_UNIFORM) CHECK((m.lo >= -1 && m.hi <= 3));
    } catch (const Failure &f) {
      std::printf("  %s FAILED: %s\n", c.name, f.what());
      ++testing::state().failures;
    }
  }
}

TEST(gpu_rng_seed_and_offset) {
  REQUIRE_GPU();
  try {
    const Dims dims = {256, 1024};
    const size_t count = 256 * 1024;
    RngGraph r =
        make_rng("rng_uniform_reproducible", rng_options(CUDNNFE_RNG_UNIFORM), dims, false, false);
    if (!r.built) return;
    const std::vector<float> a = run_rng(r, 7, 0, count);
    const std::vector<float> b = run_rng(r, 7, 0, count);
    const std::vector<float> c = run_rng(r, 8, 0, count);
    const std::vector<float> d = run_rng(r, 7, 4096, count);
    CHECK_MSG(std::memcmp(a.data(), b.data(), count * sizeof(float)) == 0,
              "the same seed and offset gave different numbers");
    size_t same_c = 0, same_d = 0;
    for (size_t i = 0; i < count; ++i) {
      same_c += a[i] == c[i];
      same_d += a[i] == d[i];
    }
    std::printf("  equal elements: other seed %zu, other offset %zu of %zu\n", same_c, same_d,
                count);
    CHECK(same_c < count / 100);
    CHECK(same_d < count / 100);
  } catch (const Failure &f) {
    std::printf("  FAILED: %s\n", f.what());
    ++testing::state().failures;
  }
}

TEST(gpu_rng_seed_option) {
  REQUIRE_GPU();
  try {
    cudnnfe_rng_options_t o = rng_options(CUDNNFE_RNG_BERNOULLI);
    o.seed = 99;
    RngGraph r = make_rng("rng_bernoulli_seed_option", o, {512, 512}, true, false);
    if (!r.built) return;
    const std::vector<float> a = run_rng(r, 0, 0, 512 * 512);
    const std::vector<float> b = run_rng(r, 0, 0, 512 * 512);
    CHECK(a == b);
    const Moments m = moments(a);
    std::printf("  rng_bernoulli_seed_option rate %.5f (want 0.3)\n", m.mean);
    CHECK(std::fabs(m.mean - 0.3) < 6 * std::sqrt(0.21 / (512 * 512)));
  } catch (const Failure &f) {
    std::printf("  FAILED: %s\n", f.what());
    ++testing::state().failures;
  }
}

TEST(gpu_rng_dropout_mask_fused) {
  REQUIRE_GPU();
  try {
    cudnnfe_rng_options_t o = rng_options(CUDNNFE_RNG_BERNOULLI);
    o.bernoulli_probability = 0.8;
    const Dims dims = {512, 1024};
    const size_t count = 512 * 1024;
    RngGraph r = make_rng("rng_dropout_x_times_mask", o, dims, false, true);
    if (!r.built) return;
    std::vector<float> x(count);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(0.5f, 2.0f);  // never 0
    for (float &f : x) f = u(rng);
    const std::vector<float> y = run_rng(r, 2024, 77, count, &x);
    size_t zeros = 0, wrong = 0;
    for (size_t i = 0; i < count; ++i) {
      if (y[i] == 0.0f)
        ++zeros;
      else if (y[i] != x[i])
        ++wrong;
    }
    const double keep = 1.0 - static_cast<double>(zeros) / count;
    std::printf("  rng_dropout_x_times_mask: kept %.5f (want 0.8), %zu values neither x nor 0\n",
                keep, wrong);
    CHECK(wrong == 0);
    CHECK(std::fabs(keep - 0.8) < 6 * std::sqrt(0.16 / count));
  } catch (const Failure &f) {
    std::printf("  FAILED: %s\n", f.what());
    ++testing::state().failures;
  }
}

TEST(gpu_summary) {
  REQUIRE_GPU();
  std::printf("  graphs cuDNN built and ran (their checks are above) (%zu):\n", accepted().size());
  for (const std::string &a : accepted()) std::printf("    %s\n", a.c_str());
  std::printf("  graphs cuDNN refused (%zu):\n", refusals().size());
  for (const std::string &r : refusals()) std::printf("    %s\n", r.c_str());
}

}  // namespace
