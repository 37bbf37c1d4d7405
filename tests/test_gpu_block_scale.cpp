// GPU tests of block-scale quantize and dequantize (MXFP8) through the C
// API: each graph is built for the GPU and for the CPU reference, run on the
// same random inputs (GPU outputs pre-filled with 0xff bytes, NaN in every
// type used here) and compared: scales (FP8_E8M0) exactly, FP8 values
// within one step of their grid, wide outputs at 2e-2 relative.
//
// cuDNN runs block scaling on Blackwell GPUs (sm_100 and newer); Hopper and
// older are expected to refuse it. A refusal passes only when it is
// cudnnfe's NOT_SUPPORTED for a graph cuDNN turned down: its message must
// name the op, the cuDNN version and the GPU (it is printed and listed in
// the summary). A quantize refused on sm_100 or newer fails. Without a GPU
// every case skips.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;
using Dims = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

std::vector<std::string> &refusals() {
  static std::vector<std::string> list;
  return list;
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

size_t element_size(cudnnfe_dtype_t t) {
  return cudnnfe_dtype_size(t);
}

double fp8_value(unsigned bits, cudnnfe_dtype_t t) {
  if (t == CUDNNFE_DTYPE_FP8_E8M0)
    return bits == 0xff ? std::nan("") : std::ldexp(1.0, static_cast<int>(bits) - 127);
  const bool e4m3 = t == CUDNNFE_DTYPE_FP8_E4M3;
  const int man_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const unsigned e = (bits >> man_bits) & (e4m3 ? 0xf : 0x1f);
  const unsigned m = bits & ((1u << man_bits) - 1);
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (e4m3 && (bits & 0x7f) == 0x7f) return std::nan("");
  if (!e4m3 && e == 0x1f) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * m * std::ldexp(1.0, 1 - bias - man_bits);
  return sign * ((1u << man_bits) + m) * std::ldexp(1.0, static_cast<int>(e) - bias - man_bits);
}

bool is_byte_type(cudnnfe_dtype_t t) {
  return t == CUDNNFE_DTYPE_FP8_E4M3 || t == CUDNNFE_DTYPE_FP8_E5M2 || t == CUDNNFE_DTYPE_FP8_E8M0;
}

double value_at(cudnnfe_dtype_t t, const Bytes &b, size_t i) {
  if (is_byte_type(t)) return fp8_value(b[i], t);
  return gpu::load(t, &b[i * element_size(t)]);
}

struct Info {
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_NOT_SET;
  size_t count = 0;  // elements spanned by dims and strides
};

Info info(cudnnfe_graph_t *g, int64_t uid) {
  Info r;
  int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
  int32_t rank = 0;
  ok(cudnnfe_tensor_get_shape(g, uid, d, s, CUDNNFE_MAX_DIMS, &rank), "get_shape");
  ok(cudnnfe_tensor_get_dtype(g, uid, &r.dtype), "get_dtype");
  size_t span = 1;
  for (int i = 0; i < rank; ++i) span += static_cast<size_t>((d[i] - 1) * s[i]);
  r.count = span;
  return r;
}

Bytes random_input(cudnnfe_dtype_t t, size_t n, std::mt19937 &rng) {
  Bytes b(n * element_size(t));
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> binade(-6, 6);
  for (size_t i = 0; i < n; ++i) {
    if (t == CUDNNFE_DTYPE_FP8_E8M0) {
      b[i] = static_cast<unsigned char>(127 - 8 + rng() % 16);
    } else if (is_byte_type(t)) {
      do b[i] = static_cast<unsigned char>(rng());
      while (!std::isfinite(fp8_value(b[i], t)));
    } else {
      gpu::store(t, &b[i * element_size(t)], normal(rng) * std::ldexp(1.0, binade(rng)));
    }
  }
  return b;
}

using Builder = std::function<void(cudnnfe_graph_t *, std::vector<int64_t> &outputs)>;

int sm_in_message(const std::string &m) {
  const size_t at = m.find("(sm_");
  return at == std::string::npos ? 0 : std::atoi(m.c_str() + at + 4);
}

std::string version_string() {
  int64_t v = 0;
  cudnnfe_cudnn_version(&v);
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." +
         std::to_string(v % 100);
}

// Runs one case; `op` names the op the refusal message must mention,
// `quantize` says whether sm_100+ must accept it.
void run_case(const std::string &label, const char *op, bool must_run_on_blackwell,
              const Builder &build) {
  GraphPtr gg = new_graph(label, CUDNNFE_DTYPE_NOT_SET);
  std::vector<int64_t> outs;
  build(gg.get(), outs);
  cudnnfe_status_t s = build_for(gg.get(), CUDNNFE_TARGET_GPU);
  if (s != CUDNNFE_STATUS_OK) {
    const std::string msg = cudnnfe_graph_last_error(gg.get());
    std::printf("  %-36s %s: %s\n", label.c_str(), cudnnfe_status_name(s), msg.c_str());
    if (s != CUDNNFE_STATUS_NOT_SUPPORTED)
      throw Failure("GPU build returned " + std::string(cudnnfe_status_name(s)));
    const std::string version = "cuDNN " + version_string();
    for (const std::string &part : {std::string(op), version, std::string("(sm_")})
      if (msg.find(part) == std::string::npos)
        throw Failure("the refusal does not name \"" + part + "\": " + msg);
    const int sm = sm_in_message(msg);
    if (must_run_on_blackwell && sm >= 100)
      throw Failure("cuDNN refused " + std::string(op) + " on sm_" + std::to_string(sm) +
                    ", where block scaling is supported");
    refusals().push_back(label + ": " + msg);
    return;
  }
  GraphPtr cg = new_graph(label, CUDNNFE_DTYPE_NOT_SET);
  std::vector<int64_t> cpu_outs;
  build(cg.get(), cpu_outs);
  ok(build_for(cg.get(), CUDNNFE_TARGET_CPU_REFERENCE), "CPU build");

  size_t count = 0;
  ok(cudnnfe_graph_get_bound_uids(gg.get(), nullptr, 0, &count), "get_bound_uids");
  std::vector<int64_t> uids(count);
  ok(cudnnfe_graph_get_bound_uids(gg.get(), uids.data(), count, &count), "get_bound_uids");
  std::mt19937 rng(1234);
  std::vector<Bytes> host(count), cpu_host(count);
  std::vector<gpu::DeviceBuffer> dev;
  std::vector<void *> dptr, hptr;
  for (size_t i = 0; i < count; ++i) {
    const Info t = info(gg.get(), uids[i]);
    const bool is_out = std::find(outs.begin(), outs.end(), uids[i]) != outs.end();
    host[i] =
        is_out ? Bytes(t.count * element_size(t.dtype), 0xff) : random_input(t.dtype, t.count, rng);
    cpu_host[i] = host[i];
    dev.emplace_back(host[i].size());
    if (!dev.back().ok()) throw Failure("cudaMalloc failed");
    const std::string e = gpu::cuda_check(
        gpu::runtime().Memcpy(dev.back().get(), host[i].data(), host[i].size(), gpu::kHostToDevice),
        "cudaMemcpy");
    if (!e.empty()) throw Failure(e);
    dptr.push_back(dev.back().get());
    hptr.push_back(cpu_host[i].data());
  }
  int64_t ws = 0;
  ok(cudnnfe_graph_get_workspace_size(gg.get(), &ws), "workspace size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(ws));
  execute(gg.get(), uids, dptr, workspace.get(), static_cast<size_t>(ws), "GPU");
  gpu::runtime().DeviceSynchronize();
  execute(cg.get(), uids, hptr, nullptr, 0, "CPU reference");
  for (size_t i = 0; i < count; ++i) {
    if (std::find(outs.begin(), outs.end(), uids[i]) == outs.end()) continue;
    gpu::runtime().Memcpy(host[i].data(), dev[i].get(), host[i].size(), gpu::kDeviceToHost);
    const Info t = info(gg.get(), uids[i]);
    double worst = 0.0;
    size_t bad = 0;
    for (size_t k = 0; k < t.count; ++k) {
      const double want = value_at(t.dtype, cpu_host[i], k);
      const double got = value_at(t.dtype, host[i], k);
      double err = std::fabs(got - want);
      double tol = 0.0;  // E8M0 scales: exact
      if (t.dtype == CUDNNFE_DTYPE_FP8_E4M3) tol = std::fabs(want) * 0.125 + 0x1p-9;
      if (t.dtype == CUDNNFE_DTYPE_FP8_E5M2) tol = std::fabs(want) * 0.25 + 0x1p-16;
      if (!is_byte_type(t.dtype)) tol = std::fabs(want) * 2e-2 + 1e-6;
      if (std::isnan(got) != std::isnan(want)) err = INFINITY;
      if (std::isnan(got) && std::isnan(want)) err = 0.0;
      worst = std::max(worst, err);
      if (!(err <= tol) && bad++ < 5)
        std::printf("    uid %lld element %zu: GPU %g, CPU %g\n", static_cast<long long>(uids[i]),
                    k, got, want);
    }
    std::printf("  %-36s output %lld (%s): max |GPU - CPU| %g, %zu beyond tolerance\n",
                label.c_str(), static_cast<long long>(uids[i]), cudnnfe_dtype_name(t.dtype), worst,
                bad);
    if (bad) throw Failure(label + ": GPU and CPU reference differ");
  }
}

cudnnfe_block_scale_options_t opts(int32_t block, int32_t axis, bool transpose, cudnnfe_dtype_t y) {
  cudnnfe_block_scale_options_t o;
  cudnnfe_block_scale_options_init(&o);
  o.block_size = block;
  o.axis = axis;
  o.transpose = transpose ? 1 : 0;
  o.y_dtype = y;
  return o;
}

Builder quantize(cudnnfe_dtype_t xt, cudnnfe_dtype_t yt, Dims dims, int32_t axis, bool transpose) {
  return [=](cudnnfe_graph_t *g, std::vector<int64_t> &outs) {
    int64_t x = 0, y = 0, s = 0;
    ok(cudnnfe_graph_add_tensor(g, "x", xt, static_cast<int32_t>(dims.size()), dims.data(), nullptr,
                                &x),
       "add x");
    cudnnfe_block_scale_options_t o = opts(32, axis, transpose, yt);
    ok(cudnnfe_graph_add_block_scale_quantize(g, x, &o, &y, &s), "quantize");
    ok(cudnnfe_tensor_set_output(g, y, 1), "y output");
    ok(cudnnfe_tensor_set_output(g, s, 1), "scale output");
    outs = {y, s};
  };
}

void guarded(const std::string &label, const char *op, bool must, const Builder &b) {
  try {
    run_case(label, op, must, b);
  } catch (const Failure &f) {
    std::printf("  %s: %s\n", label.c_str(), f.what());
    ++testing::state().failures;
  }
}

}  // namespace

TEST(gpu_block_scale_quantize_last_axis) {
  REQUIRE_GPU();
  guarded("quantize fp32->e4m3 [128,256] axis -1", "block_scale_quantize", true,
          quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E4M3, {128, 256}, -1, false));
  guarded("quantize bf16->e5m2 [4,64,128] axis -1", "block_scale_quantize", true,
          quantize(CUDNNFE_DTYPE_BFLOAT16, CUDNNFE_DTYPE_FP8_E5M2, {4, 64, 128}, -1, false));
  guarded("quantize fp16->e4m3 [256,128] axis -1", "block_scale_quantize", true,
          quantize(CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_FP8_E4M3, {256, 128}, -1, false));
}

TEST(gpu_block_scale_quantize_transposed) {
  REQUIRE_GPU();
  // Blocks along the rows (axis 0) with y and scale packed along axis 0.
  guarded("quantize bf16->e4m3 [128,256] axis 0 T", "block_scale_quantize", true,
          quantize(CUDNNFE_DTYPE_BFLOAT16, CUDNNFE_DTYPE_FP8_E4M3, {128, 256}, 0, true));
}

TEST(gpu_block_scale_dequantize) {
  REQUIRE_GPU();
  // Standalone dequantize writes a graph output: cuDNN runs dequantize fused
  // into a matmul, so a refusal is allowed on every GPU.
  guarded(
      "dequantize e4m3->fp32 [128,256]", "block_scale_dequantize", false,
      [](cudnnfe_graph_t *g, std::vector<int64_t> &outs) {
        const Dims xd = {128, 256}, sd = {128, 8};
        int64_t x = 0, s = 0, y = 0;
        ok(cudnnfe_graph_add_tensor(g, "x", CUDNNFE_DTYPE_FP8_E4M3, 2, xd.data(), nullptr, &x),
           "add x");
        ok(cudnnfe_graph_add_tensor(g, "scale", CUDNNFE_DTYPE_FP8_E8M0, 2, sd.data(), nullptr, &s),
           "add scale");
        cudnnfe_block_scale_options_t o = opts(32, -1, false, CUDNNFE_DTYPE_FP8_E4M3);
        ok(cudnnfe_graph_add_block_scale_dequantize(g, x, s, &o, &y), "dequantize");
        ok(cudnnfe_tensor_set_output(g, y, 1), "y output");
        outs = {y};
      });
}

TEST(gpu_block_scale_summary) {
  REQUIRE_GPU();
  std::printf("  cuDNN %s; graphs cuDNN refused (%zu):\n", version_string().c_str(),
              refusals().size());
  for (const std::string &r : refusals()) std::printf("    %s\n", r.c_str());
}
