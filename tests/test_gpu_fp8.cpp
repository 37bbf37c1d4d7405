// GPU tests of FP8: attention forward and backward
// (cudnnfe_graph_add_sdpa_fp8[_backward]; with padding, a given dropout
// mask and a paged K/V cache too) and an FP8 matmul made of
// existing ops, each built for the GPU and for the CPU reference from the
// same calls and run on the same inputs.
//
// Scales are chosen the way delayed scaling would: the CPU reference runs
// first with unit output scales, and each scale is set from the amax it
// reports (largest power of two keeping amax * scale below half the FP8
// maximum); then the reference runs again, and the GPU runs twice (outputs
// pre-filled with NaN inside guard bands, workspace starting as NaN, the
// second run on the first's dirty workspace).
//
// Tolerances, and why. FP8 results are compared dequantized (stored value /
// scale). cuDNN's fused forward kernel does not cast P where the graph does
// (it casts the unnormalised P of each key tile of an online softmax), so
// the GPU's and the reference's P carry independent FP8 rounding errors
// (relative std about 0.026 each for E4M3), which move O' by up to about
// 2% of max|O| in rows whose attention is peaked; and FP8 tensor cores
// accumulate in reduced precision where the reference uses double. An FP8
// output may therefore land one FP8 step from the reference's, rarely two.
// With u the relative FP8 step (E4M3 1/8, E5M2 1/4) and M the largest
// reference magnitude of that output, every element must satisfy
//     |gpu - ref| <= 1.5 u |ref| + u M
// (a step at its own magnitude with margin, plus an absolute floor of one
// step at the top binade for elements near zero, at least 5 standard
// deviations of the P-rounding noise above), and the mean error over the
// output must stay below 0.25 u M, so that a systematic error (a wrong
// scale, a missing mask) cannot hide inside the per-element band.
// amax outputs, relative: amax_s and amax_dP 1e-2 (maxima of FLOAT values
// computed before any FP8 cast); dQ, dK, dV 2e-2 (they follow FP8 dS and P
// cast at the same points on both sides); amax_o 0.4 u (E4M3 5e-2, E5M2
// 1e-1: it follows P, cast at different points, see above, so its error
// grows with the FP8 step); the matmul's 1e-2 (exact FP8 products,
// FLOAT sums). stats (FLOAT): 1e-2 absolute + 1e-3 relative (scores come
// from FP8 products accumulated in reduced precision). Non-FP8 outputs
// (BFLOAT16, FLOAT): 1e-2 relative to each element plus 1e-3 (matmul) or
// 1e-2 (attention O) of the output's maximum.
//
// Measured on an H100 (sm_90) with cuDNN 9.14.0 and 9.19.0 (identical
// results; engine 2 for attention, 0 for the matmuls; the amax_o
// tolerance was 5e-2 for both types then): forward O within one FP8 step
// (max error 0.06-0.10 of max|O| for E4M3, 0.125 for E5M2; 52-56% of
// elements bit-identical, mean error 0.3-0.7% of max|O|), stats within
// 8e-4, amax_s within 7e-4, amax_o within 2.7e-2 (E4M3) and 4.1e-2
// (E5M2); backward dQ, dK, dV 92-98% bit-identical, max error one step,
// amaxes within 2.6e-3; the FP8-output matmul 99.5% bit-identical. cuDNN
// refuses FP8 attention with a BFLOAT16 O on Hopper ("FP8 input with F16
// output is only supported on Blackwell"), the one allowed refusal seen.
//
// Without a GPU every case skips. With one, a refusal passes only for cases
// marked as possibly refused (printed with cuDNN's message and listed at the
// end); anything else fails.
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "fp8_test_support.h"
#include "gpu_test_support.h"
#include "harness.h"

namespace {

using namespace gpu_test;
using fp8t::Dims;
using Bytes = std::vector<unsigned char>;

constexpr cudnnfe_dtype_t E4M3 = CUDNNFE_DTYPE_FP8_E4M3;
constexpr cudnnfe_dtype_t E5M2 = CUDNNFE_DTYPE_FP8_E5M2;
constexpr cudnnfe_dtype_t F32 = CUDNNFE_DTYPE_FLOAT;
constexpr cudnnfe_dtype_t NOT_SET = CUDNNFE_DTYPE_NOT_SET;

constexpr size_t kGuardBytes = 256;
constexpr unsigned char kGuardByte = 0x5a;

// kRefuses: cudnnfe must refuse it on the GPU (NOT_SUPPORTED).
enum class Expect { kBuilds, kMayRefuse, kRefuses };

std::vector<std::string> &refusals() {
  static std::vector<std::string> list;
  return list;
}
std::vector<std::string> &summary() {
  static std::vector<std::string> list;
  return list;
}

// ---------------------------------------------------------------------------
// Tensors and buffers

struct Info {
  int64_t uid = 0;
  std::string name;
  cudnnfe_dtype_t dtype = NOT_SET;
  Dims dims, strides;
  size_t bytes = 0;
};

Info describe(cudnnfe_graph_t *g, int64_t uid) {
  Info t;
  t.uid = uid;
  int64_t dims[CUDNNFE_MAX_DIMS], strides[CUDNNFE_MAX_DIMS];
  int32_t rank = 0;
  ok(cudnnfe_tensor_get_shape(g, uid, dims, strides, CUDNNFE_MAX_DIMS, &rank), "get_shape");
  t.dims.assign(dims, dims + rank);
  t.strides.assign(strides, strides + rank);
  ok(cudnnfe_tensor_get_dtype(g, uid, &t.dtype), "get_dtype");
  const char *name = nullptr;
  ok(cudnnfe_tensor_get_name(g, uid, &name), "get_name");
  t.name = name;
  t.bytes = static_cast<size_t>(fp8t::span(t.dims, t.strides)) * cudnnfe_dtype_size(t.dtype);
  return t;
}

double load(const Info &t, const Bytes &b, int64_t offset) {
  const size_t size = cudnnfe_dtype_size(t.dtype);
  if (fp8t::is_fp8(t.dtype)) return fp8t::decode(t.dtype, b[static_cast<size_t>(offset)]);
  return gpu::load(t.dtype, &b[static_cast<size_t>(offset) * size]);
}

void store(const Info &t, Bytes &b, int64_t offset, double v) {
  const size_t size = cudnnfe_dtype_size(t.dtype);
  if (fp8t::is_fp8(t.dtype)) {
    b[static_cast<size_t>(offset)] = fp8t::encode(t.dtype, v);
    return;
  }
  gpu::store(t.dtype, &b[static_cast<size_t>(offset) * size], v);
}

// Logical (row-major) values of a tensor.
std::vector<double> values(const Info &t, const Bytes &b) {
  std::vector<double> out;
  for (int64_t i = 0; i < fp8t::count(t.dims); ++i)
    out.push_back(load(t, b, fp8t::offset_of(i, t.dims, t.strides)));
  return out;
}

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

int64_t scale_tensor(cudnnfe_graph_t *g, const char *name, bool by_value, double value) {
  if (!by_value) return input(g, name, F32, {1, 1, 1, 1});
  int64_t uid = 0;
  ok(cudnnfe_graph_add_scalar(g, name, F32, value, &uid), "cudnnfe_graph_add_scalar");
  return uid;
}

void mark_output(cudnnfe_graph_t *g, int64_t uid) {
  ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
}

// The host side of a case: the CPU reference graph and a buffer per bound
// tensor (the GPU graph has the same UIDs: both are built by the same
// calls).
struct Host {
  cudnnfe_graph_t *g = nullptr;
  std::vector<int64_t> uids;
  std::map<int64_t, Info> info;
  std::map<int64_t, Bytes> data;
  std::set<int64_t> outputs;

  void init(cudnnfe_graph_t *graph, const std::set<int64_t> &outs) {
    g = graph;
    outputs = outs;
    size_t count = 0;
    ok(cudnnfe_graph_get_bound_uids(g, nullptr, 0, &count), "get_bound_uids");
    uids.resize(count);
    ok(cudnnfe_graph_get_bound_uids(g, uids.data(), count, &count), "get_bound_uids");
    for (int64_t uid : uids) {
      info[uid] = describe(g, uid);
      data[uid] = Bytes(info[uid].bytes, 0);
    }
  }
  void set_one(int64_t uid, double v) { store(info.at(uid), data.at(uid), 0, v); }
  double one(int64_t uid) const { return load(info.at(uid), data.at(uid), 0); }
  // Random values in [-range, range] stored times `scale`.
  void fill(int64_t uid, double range, double scale, std::mt19937 &rng) {
    const Info &t = info.at(uid);
    std::uniform_real_distribution<double> u(-range, range);
    for (int64_t i = 0; i < fp8t::count(t.dims); ++i)
      store(t, data.at(uid), fp8t::offset_of(i, t.dims, t.strides), u(rng) * scale);
  }
  void run_cpu() {
    std::vector<cudnnfe_binding_t> b;
    for (int64_t uid : uids) b.push_back({uid, data.at(uid).data()});
    cudnnfe_status_t s =
        cudnnfe_graph_execute(g, test_handle(), b.data(), b.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK)
      throw Failure(std::string("CPU reference execute returned ") + cudnnfe_status_name(s) + ": " +
                    cudnnfe_handle_last_error(test_handle()));
  }
};

// Copies the logical elements of `src` into `dst` (same dims; any layouts).
void copy_logical(const Info &si, const Bytes &src, const Info &di, Bytes &dst) {
  for (int64_t i = 0; i < fp8t::count(si.dims); ++i)
    store(di, dst, fp8t::offset_of(i, di.dims, di.strides),
          load(si, src, fp8t::offset_of(i, si.dims, si.strides)));
}

// Runs the built GPU graph twice on the host's inputs; returns the outputs of
// each run. Fails on a written guard band.
std::vector<std::map<int64_t, Bytes>> run_gpu(cudnnfe_graph_t *gg, const Host &h) {
  std::vector<gpu::DeviceBuffer> device;
  std::vector<void *> ptrs;
  for (int64_t uid : h.uids) {
    const Info &t = h.info.at(uid);
    const bool out = h.outputs.count(uid) > 0;
    const size_t guard = out ? kGuardBytes : 0;
    device.emplace_back(t.bytes + 2 * guard);
    if (!device.back().ok()) throw Failure("cudaMalloc failed");
    ptrs.push_back(static_cast<unsigned char *>(device.back().get()) + guard);
    if (!out) {
      std::string err = gpu::cuda_check(
          gpu::runtime().Memcpy(ptrs.back(), h.data.at(uid).data(), t.bytes, gpu::kHostToDevice),
          "cudaMemcpy");
      if (!err.empty()) throw Failure(err);
    }
  }
  int64_t ws = 0;
  ok(cudnnfe_graph_get_workspace_size(gg, &ws), "get_workspace_size");
  gpu::DeviceBuffer workspace(static_cast<size_t>(ws));
  if (!workspace.ok()) throw Failure("cudaMalloc of the workspace failed");
  if (ws > 0) gpu::runtime().Memset(workspace.get(), 0xff, static_cast<size_t>(ws));
  std::vector<std::map<int64_t, Bytes>> runs(2);
  for (int run = 0; run < 2; ++run) {
    for (size_t i = 0; i < h.uids.size(); ++i) {
      if (!h.outputs.count(h.uids[i])) continue;
      Bytes fill(h.info.at(h.uids[i]).bytes + 2 * kGuardBytes, kGuardByte);
      std::fill(fill.begin() + kGuardBytes, fill.end() - kGuardBytes, 0xff);  // NaN
      gpu::runtime().Memcpy(device[i].get(), fill.data(), fill.size(), gpu::kHostToDevice);
    }
    std::vector<cudnnfe_binding_t> b;
    for (size_t i = 0; i < h.uids.size(); ++i) b.push_back({h.uids[i], ptrs[i]});
    cudnnfe_status_t s = cudnnfe_graph_execute(gg, test_handle(), b.data(), b.size(),
                                               workspace.get(), static_cast<size_t>(ws), nullptr);
    if (s != CUDNNFE_STATUS_OK)
      throw Failure(std::string("GPU execute returned ") + cudnnfe_status_name(s) + ": " +
                    cudnnfe_handle_last_error(test_handle()));
    std::string err = gpu::cuda_check(gpu::runtime().DeviceSynchronize(), "synchronize");
    if (!err.empty()) throw Failure(err);
    for (size_t i = 0; i < h.uids.size(); ++i) {
      if (!h.outputs.count(h.uids[i])) continue;
      const Info &t = h.info.at(h.uids[i]);
      Bytes all(t.bytes + 2 * kGuardBytes);
      gpu::runtime().Memcpy(all.data(), device[i].get(), all.size(), gpu::kDeviceToHost);
      for (size_t j = 0; j < kGuardBytes; ++j)
        if (all[j] != kGuardByte || all[all.size() - 1 - j] != kGuardByte)
          throw Failure("the GPU wrote outside " + t.name + "'s buffer");
      runs[run][h.uids[i]] = Bytes(all.begin() + kGuardBytes, all.end() - kGuardBytes);
    }
  }
  return runs;
}

// ---------------------------------------------------------------------------
// Comparisons (tolerances: see the top of the file)

// FP8 output compared dequantized (divided by `scale`).
bool compare_fp8(const std::string &label, const Info &t, const Bytes &got, const Bytes &want,
                 double scale) {
  const std::vector<double> g = values(t, got), r = values(t, want);
  const double u = fp8t::ulp_fraction(t.dtype);
  double m = 0;
  for (double x : r) m = std::max(m, std::fabs(x / scale));
  double worst = 0, sum = 0;
  int64_t bad = 0, exact = 0;
  std::string first;
  for (size_t i = 0; i < g.size(); ++i) {
    const double gv = g[i] / scale, rv = r[i] / scale;
    const double err = std::isnan(gv) ? INFINITY : std::fabs(gv - rv);
    worst = std::max(worst, err);
    sum += std::isfinite(err) ? err : m;
    exact += g[i] == r[i];
    if (!(err <= 1.5 * u * std::fabs(rv) + u * m) && bad++ == 0)
      first = "element " + std::to_string(i) + ": gpu " + std::to_string(gv) + ", cpu " +
              std::to_string(rv);
  }
  const double mean = sum / static_cast<double>(g.size());
  const bool pass = bad == 0 && mean <= 0.25 * u * m && m > 0;
  char line[320];
  std::snprintf(line, sizeof(line),
                "%-44s %-18s max|ref| %.3g  max err %.3g (%.3f of max)  mean err %.2e  exact "
                "%.1f%%%s",
                label.c_str(), t.name.c_str(), m, worst, m > 0 ? worst / m : 0.0, mean,
                100.0 * static_cast<double>(exact) / static_cast<double>(g.size()),
                pass ? "" : "  MISMATCH");
  std::printf("  %s\n", line);
  summary().push_back(line);
  if (!pass) {
    if (bad)
      std::printf("    %lld elements out of tolerance; first %s\n", static_cast<long long>(bad),
                  first.c_str());
    if (m == 0) std::printf("    the reference is all zeros\n");
    ++testing::state().failures;
  }
  return pass;
}

// Non-FP8 output (FLOAT, BFLOAT16, HALF): rel per element + abs floor.
bool compare_plain(const std::string &label, const Info &t, const Bytes &got, const Bytes &want,
                   double rel, double abs_of_max, double abs_floor = 0) {
  const std::vector<double> g = values(t, got), r = values(t, want);
  double m = 0, worst = 0;
  for (double x : r)
    if (std::isfinite(x)) m = std::max(m, std::fabs(x));
  int64_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    // Equal values pass, infinities included (a padded row's stats).
    const double err = g[i] == r[i] ? 0 : std::isnan(g[i]) ? INFINITY : std::fabs(g[i] - r[i]);
    worst = std::max(worst, err);
    if (!(err <= rel * std::fabs(r[i]) + abs_of_max * m + abs_floor)) ++bad;
  }
  char line[320];
  std::snprintf(line, sizeof(line), "%-44s %-18s max|ref| %.3g  max err %.3g%s", label.c_str(),
                t.name.c_str(), m, worst, bad ? "  MISMATCH" : "");
  std::printf("  %s\n", line);
  summary().push_back(line);
  if (bad) {
    std::printf("    %lld elements out of tolerance\n", static_cast<long long>(bad));
    ++testing::state().failures;
  }
  return bad == 0;
}

bool compare_amax(const std::string &label, const Info &t, const Bytes &got, const Bytes &want,
                  double rel) {
  const double g = load(t, got, 0), r = load(t, want, 0);
  const bool pass = std::fabs(g - r) <= rel * std::fabs(r) && r > 0;
  char line[320];
  std::snprintf(line, sizeof(line), "%-44s %-18s gpu %.6g  cpu %.6g  rel err %.2e%s", label.c_str(),
                t.name.c_str(), g, r, r != 0 ? std::fabs(g - r) / r : 0.0,
                pass ? "" : "  MISMATCH");
  std::printf("  %s\n", line);
  summary().push_back(line);
  if (!pass) ++testing::state().failures;
  return pass;
}

// Builds `gg` for the GPU: true when built; false when refused and the
// case allows it (printed and listed); throws otherwise.
bool build_gpu(cudnnfe_graph_t *gg, const std::string &label, Expect expect) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  cudnnfe_status_t s = cudnnfe_graph_build(gg, test_handle(), &options);
  if (expect == Expect::kRefuses) {
    if (s != CUDNNFE_STATUS_NOT_SUPPORTED)
      throw Failure("expected a refusal (NOT_SUPPORTED), got " +
                    std::string(cudnnfe_status_name(s)));
    std::printf("  %-44s refused (expected): %s\n", label.c_str(), cudnnfe_graph_last_error(gg));
    return false;
  }
  if (s == CUDNNFE_STATUS_OK) {
    const char *plan = "";
    cudnnfe_graph_get_plan_name(gg, &plan);
    std::printf("  %-44s built: plan %s\n", label.c_str(), plan);
    return true;
  }
  if (s == CUDNNFE_STATUS_NOT_SUPPORTED && expect == Expect::kMayRefuse) {
    std::printf("  %-44s refused (allowed): %s\n", label.c_str(), cudnnfe_graph_last_error(gg));
    refusals().push_back(label + ": " + cudnnfe_graph_last_error(gg));
    return false;
  }
  throw Failure("GPU build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                cudnnfe_graph_last_error(gg));
}

void build_cpu(cudnnfe_graph_t *g) {
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  cudnnfe_status_t s = cudnnfe_graph_build(g, test_handle(), &options);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("CPU build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(g));
}

void guarded(const std::string &label, const std::function<void()> &body) {
  try {
    body();
  } catch (const Failure &f) {
    std::printf("  %s FAILED: %s\n", label.c_str(), f.what());
    ++testing::state().failures;
  }
  std::fflush(stdout);
}

uint32_t seed_of(const std::string &label) {
  uint32_t h = 2166136261u;
  for (char c : label) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

// Half the largest finite value: the target of amax * scale.
double fp8_target(cudnnfe_dtype_t t) {
  return t == E5M2 ? 28672.0 : 224.0;
}

// ---------------------------------------------------------------------------
// FP8 attention graphs

struct AttnCase {
  std::string label;
  fp8t::AttnShape a;
  cudnnfe_dtype_t type = E4M3;
  cudnnfe_dtype_t o_type = NOT_SET;  // forward O (NOT_SET: q's type)
  cudnnfe_dtype_t do_type = E4M3;    // backward dO
  bool causal = false, stats = true, bshd = false, by_value = false;
  // The diagonal band (sliding window); the C options' defaults.
  int64_t window_left = -1, window_right = -1;
  cudnnfe_diagonal_alignment_t alignment = CUDNNFE_DIAGONAL_TOP_LEFT;
  Expect expect = Expect::kBuilds;
  // Padding: valid query rows and keys per batch (empty: no padding_mask).
  std::vector<int32_t> seq_q, seq_kv;
  // Forward: a given dropout mask (0/1 FLOAT, keep kKeep) with
  // dropout_scale 1/kKeep (a scalar).
  bool dropout_mask = false;
  bool alibi = false;  // forward: ALiBi (with the causal mask)
  bool sink = false;   // forward: a sink logit per query head
  // Forward, > 0: k and v are page containers [b * pages, h_kv, page_size,
  // d] read through page tables that shuffle the pages (needs seq_kv).
  int64_t page_size = 0;

  bool padded() const { return !seq_q.empty(); }
  int64_t pages() const { return (a.s_kv + page_size - 1) / page_size; }
  Dims q_dims() const { return {a.b, a.h_q, a.s_q, a.d}; }
  Dims k_dims() const {
    return page_size ? Dims{a.b * pages(), a.h_kv, page_size, a.d} : Dims{a.b, a.h_kv, a.s_kv, a.d};
  }
  Dims v_dims() const {
    return page_size ? Dims{a.b * pages(), a.h_kv, page_size, a.d_v}
                     : Dims{a.b, a.h_kv, a.s_kv, a.d_v};
  }
  Dims o_dims() const { return {a.b, a.h_q, a.s_q, a.d_v}; }
  Dims layout(const Dims &d) const { return bshd ? fp8t::bshd(d) : fp8t::packed(d); }
};

// Input scales: values uniform in [-2, 2] stored at these scales.
constexpr double kScaleQ = 64, kScaleK = 64, kScaleV = 64, kScaleDO = 64;
constexpr double kScaleS = 256;      // P <= 1
constexpr double kFixedScaleO = 64;  // by-value case (cannot be calibrated)
constexpr double kKeep = 0.75;       // a given dropout mask's keep probability

// The padding, dropout and paged-cache fields of either options struct
// (padding both; dropout and page tables the forward's, when `Options` has
// them).
template <class Options>
void add_padding(cudnnfe_graph_t *g, const AttnCase &c, Options &opt) {
  if (!c.padded()) return;
  opt.padding_mask = 1;
  opt.seq_len_q = input(g, "seq_len_q", CUDNNFE_DTYPE_INT32, {c.a.b, 1, 1, 1});
  opt.seq_len_kv = input(g, "seq_len_kv", CUDNNFE_DTYPE_INT32, {c.a.b, 1, 1, 1});
}

void add_forward_options(cudnnfe_graph_t *g, const AttnCase &c, cudnnfe_sdpa_fp8_options_t &opt) {
  add_padding(g, c, opt);
  opt.alibi_mask = c.alibi;
  if (c.sink) opt.sink_token = input(g, "sink_token", F32, {1, c.a.h_q, 1, 1});
  if (c.dropout_mask) {
    opt.dropout_mask = input(g, "dropout_mask", F32, {c.a.b, c.a.h_q, c.a.s_q, c.a.s_kv});
    ok(cudnnfe_graph_add_scalar(g, "dropout_scale", F32, 1 / kKeep, &opt.dropout_scale),
       "cudnnfe_graph_add_scalar");
  }
  if (c.page_size) {
    const Dims table = {c.a.b, 1, c.pages(), 1};
    opt.page_table_k = input(g, "page_table_k", CUDNNFE_DTYPE_INT32, table);
    opt.page_table_v = input(g, "page_table_v", CUDNNFE_DTYPE_INT32, table);
    opt.max_seq_len_kv = c.a.s_kv;
  }
}

struct FwdGraph {
  int64_t q, k, v, s[6], o, stats = 0, amax_s, amax_o;
};

FwdGraph add_forward(cudnnfe_graph_t *g, const AttnCase &c) {
  FwdGraph f{};
  f.q = input(g, "q", c.type, c.q_dims(), c.layout(c.q_dims()));
  f.k = input(g, "k", c.type, c.k_dims(), c.layout(c.k_dims()));
  f.v = input(g, "v", c.type, c.v_dims(), c.layout(c.v_dims()));
  const char *names[6] = {"descale_q", "descale_k", "descale_v", "descale_s", "scale_s", "scale_o"};
  const double fixed[6] = {1 / kScaleQ, 1 / kScaleK, 1 / kScaleV,
                           1 / kScaleS, kScaleS,     kFixedScaleO};
  for (int i = 0; i < 6; ++i) f.s[i] = scale_tensor(g, names[i], c.by_value, fixed[i]);
  cudnnfe_sdpa_fp8_options_t opt;
  cudnnfe_sdpa_fp8_options_init(&opt);
  opt.name = "attn";
  opt.generate_stats = c.stats;
  opt.causal_mask = c.causal;
  opt.window_left = c.window_left;
  opt.window_right = c.window_right;
  opt.diagonal_alignment = c.alignment;
  add_forward_options(g, c, opt);
  ok(cudnnfe_graph_add_sdpa_fp8(g, f.q, f.k, f.v, f.s[0], f.s[1], f.s[2], f.s[3], f.s[4], f.s[5],
                                &opt, &f.o, &f.stats, &f.amax_s, &f.amax_o),
     "cudnnfe_graph_add_sdpa_fp8");
  mark_output(g, f.o);
  if (c.o_type != NOT_SET) ok(cudnnfe_tensor_set_dtype(g, f.o, c.o_type), "set_dtype");
  if (c.stats) mark_output(g, f.stats);
  mark_output(g, f.amax_s);
  mark_output(g, f.amax_o);
  return f;
}

// The UID of the bound tensor named `name`, or 0.
int64_t named(const Host &h, const std::string &name) {
  for (const auto &[uid, t] : h.info)
    if (t.name == name) return uid;
  return 0;
}

// Gives the option tensors (found by name) their values: the lengths, a
// 0/1 dropout mask, sink logits, page tables mapping page p of batch n to
// container page ((n * pages + p) * 7) % (b * pages) (a shuffle: 7 is prime
// to the counts used).
void fill_options(Host &h, const AttnCase &c, std::mt19937 &rng) {
  for (const char *name : {"seq_len_q", "seq_len_kv"}) {
    const int64_t uid = named(h, name);
    if (!uid) continue;
    const std::vector<int32_t> &lens = name[8] == 'q' ? c.seq_q : c.seq_kv;
    const Info &t = h.info.at(uid);
    for (int64_t n = 0; n < c.a.b; ++n)
      store(t, h.data.at(uid), n * t.strides[0], lens[static_cast<size_t>(n)]);
  }
  if (const int64_t uid = named(h, "dropout_mask")) {
    std::bernoulli_distribution keep(kKeep);
    const Info &t = h.info.at(uid);
    for (int64_t i = 0; i < fp8t::count(t.dims); ++i)
      store(t, h.data.at(uid), fp8t::offset_of(i, t.dims, t.strides), keep(rng) ? 1.0 : 0.0);
  }
  // Sink logits about as large as the scores' maxima, so that they matter.
  if (const int64_t uid = named(h, "sink_token")) {
    const Info &t = h.info.at(uid);
    for (int64_t i = 0; i < c.a.h_q; ++i)
      store(t, h.data.at(uid), i * t.strides[1], 0.5 + 0.75 * static_cast<double>(i));
  }
  for (const char *name : {"page_table_k", "page_table_v"}) {
    const int64_t uid = named(h, name);
    if (!uid) continue;
    const Info &t = h.info.at(uid);
    const int64_t total = c.a.b * c.pages();
    for (int64_t i = 0; i < total; ++i)
      store(t, h.data.at(uid), fp8t::offset_of(i, t.dims, t.strides),
            static_cast<double>((i * 7) % total));
  }
}

// With padding, the GPU leaves rows past the valid length unspecified (O,
// stats, dQ: seq_len_q; dK, dV: seq_len_kv): they take the reference's
// values so that only the valid region is compared.
void keep_valid_rows(const Info &t, Bytes &gpu, const Bytes &ref,
                     const std::vector<int32_t> &lens) {
  if (lens.empty()) return;
  const size_t size = cudnnfe_dtype_size(t.dtype);
  for (int64_t i = 0; i < fp8t::count(t.dims); ++i) {
    const int64_t row = (i / t.dims[3]) % t.dims[2];
    const int64_t n = i / (t.dims[1] * t.dims[2] * t.dims[3]);
    if (row < lens[static_cast<size_t>(n)]) continue;
    const size_t off = static_cast<size_t>(fp8t::offset_of(i, t.dims, t.strides)) * size;
    std::copy(ref.begin() + off, ref.begin() + off + size, gpu.begin() + off);
  }
}

// Fills a forward case's inputs and calibrates scale_o on the CPU; leaves
// the reference outputs in `h`.
void prepare_forward(Host &h, const FwdGraph &f, const AttnCase &c, std::mt19937 &rng) {
  h.fill(f.q, 2.0, kScaleQ, rng);
  h.fill(f.k, 2.0, kScaleK, rng);
  h.fill(f.v, 2.0, kScaleV, rng);
  fill_options(h, c, rng);
  if (c.by_value) {
    h.run_cpu();
    return;
  }
  const double scales[6] = {1 / kScaleQ, 1 / kScaleK, 1 / kScaleV, 1 / kScaleS, kScaleS, 1};
  for (int i = 0; i < 6; ++i) h.set_one(f.s[i], scales[i]);
  h.run_cpu();
  const cudnnfe_dtype_t o_type = h.info.at(f.o).dtype;
  if (fp8t::is_fp8(o_type))
    h.set_one(f.s[5], fp8t::pow2_scale(h.one(f.amax_o), fp8_target(o_type)));
  h.run_cpu();
}

void run_forward_case(const AttnCase &c) {
  const std::string label = "sdpa_fp8 " + c.label;
  guarded(label, [&] {
    GraphPtr gg = new_graph(label, NOT_SET);
    FwdGraph f = add_forward(gg.get(), c);
    if (!build_gpu(gg.get(), label, c.expect)) return;
    GraphPtr cg = new_graph(label, NOT_SET);
    add_forward(cg.get(), c);
    build_cpu(cg.get());
    Host h;
    std::set<int64_t> outs = {f.o, f.amax_s, f.amax_o};
    if (c.stats) outs.insert(f.stats);
    h.init(cg.get(), outs);
    std::mt19937 rng(seed_of(label));
    prepare_forward(h, f, c, rng);
    const double scale_o = c.by_value ? kFixedScaleO : h.one(f.s[5]);
    auto runs = run_gpu(gg.get(), h);
    for (int run = 0; run < 2; ++run) {
      const std::string l = label + (run ? " [run 2]" : "");
      keep_valid_rows(h.info.at(f.o), runs[run][f.o], h.data[f.o], c.seq_q);
      if (c.stats)
        keep_valid_rows(h.info.at(f.stats), runs[run][f.stats], h.data[f.stats], c.seq_q);
      const Info &oi = h.info.at(f.o);
      if (fp8t::is_fp8(oi.dtype))
        compare_fp8(l, oi, runs[run][f.o], h.data[f.o], scale_o);
      else
        compare_plain(l, oi, runs[run][f.o], h.data[f.o], 1e-2, 1e-2);
      if (c.stats)
        compare_plain(l, h.info.at(f.stats), runs[run][f.stats], h.data[f.stats], 1e-3, 0, 1e-2);
      compare_amax(l, h.info.at(f.amax_s), runs[run][f.amax_s], h.data[f.amax_s], 1e-2);
      compare_amax(l, h.info.at(f.amax_o), runs[run][f.amax_o], h.data[f.amax_o],
                   0.4 * fp8t::ulp_fraction(c.type));
    }
  });
}

struct BwdGraph {
  int64_t q, k, v, o, d_o, stats, s[12], dq, dk, dv, amax[4];
};

enum BwdScale {
  kDescaleQ,
  kDescaleK,
  kDescaleV,
  kDescaleO,
  kDescaleDO,
  kDescaleS,
  kDescaleDP,
  kScaleS_,
  kScaleDQ,
  kScaleDK,
  kScaleDV,
  kScaleDP
};

BwdGraph add_backward(cudnnfe_graph_t *g, const AttnCase &c, cudnnfe_dtype_t o_type) {
  BwdGraph b{};
  b.q = input(g, "q", c.type, c.q_dims(), c.layout(c.q_dims()));
  b.k = input(g, "k", c.type, c.k_dims(), c.layout(c.k_dims()));
  b.v = input(g, "v", c.type, c.v_dims(), c.layout(c.v_dims()));
  b.o = input(g, "o", o_type, c.o_dims(), c.layout(c.o_dims()));
  b.d_o = input(g, "dO", c.do_type, c.o_dims(), c.layout(c.o_dims()));
  b.stats = input(g, "stats", F32, {c.a.b, c.a.h_q, c.a.s_q, 1});
  const char *names[12] = {"descale_q",  "descale_k", "descale_v",  "descale_o",
                           "descale_dO", "descale_s", "descale_dP", "scale_s",
                           "scale_dQ",   "scale_dK",  "scale_dV",   "scale_dP"};
  for (int i = 0; i < 12; ++i) b.s[i] = input(g, names[i], F32, {1, 1, 1, 1});
  cudnnfe_sdpa_fp8_backward_options_t opt;
  cudnnfe_sdpa_fp8_backward_options_init(&opt);
  opt.name = "attn_bwd";
  opt.causal_mask = c.causal;
  opt.window_left = c.window_left;
  opt.window_right = c.window_right;
  opt.diagonal_alignment = c.alignment;
  add_padding(g, c, opt);
  ok(cudnnfe_graph_add_sdpa_fp8_backward(g, b.q, b.k, b.v, b.o, b.d_o, b.stats, b.s[0], b.s[1],
                                         b.s[2], b.s[3], b.s[4], b.s[5], b.s[6], b.s[7], b.s[8],
                                         b.s[9], b.s[10], b.s[11], &opt, &b.dq, &b.dk, &b.dv,
                                         &b.amax[0], &b.amax[1], &b.amax[2], &b.amax[3]),
     "cudnnfe_graph_add_sdpa_fp8_backward");
  for (int64_t out : {b.dq, b.dk, b.dv, b.amax[0], b.amax[1], b.amax[2], b.amax[3]})
    mark_output(g, out);
  return b;
}

void run_backward_case(const AttnCase &c) {
  const std::string label = "sdpa_fp8_backward " + c.label;
  guarded(label, [&] {
    const cudnnfe_dtype_t o_type = c.type;
    GraphPtr gg = new_graph(label, NOT_SET);
    BwdGraph b = add_backward(gg.get(), c, o_type);
    if (!build_gpu(gg.get(), label, c.expect)) return;

    // The forward on the CPU makes o and stats (and calibrates scale_o).
    AttnCase fc = c;
    fc.stats = true;
    fc.by_value = false;
    GraphPtr fg = new_graph(label + " forward", NOT_SET);
    FwdGraph f = add_forward(fg.get(), fc);
    build_cpu(fg.get());
    Host fh;
    fh.init(fg.get(), {f.o, f.stats, f.amax_s, f.amax_o});
    std::mt19937 rng(seed_of(label));
    prepare_forward(fh, f, fc, rng);

    GraphPtr cg = new_graph(label, NOT_SET);
    add_backward(cg.get(), c, o_type);
    build_cpu(cg.get());
    Host h;
    h.init(cg.get(), {b.dq, b.dk, b.dv, b.amax[0], b.amax[1], b.amax[2], b.amax[3]});
    copy_logical(fh.info.at(f.q), fh.data.at(f.q), h.info.at(b.q), h.data.at(b.q));
    copy_logical(fh.info.at(f.k), fh.data.at(f.k), h.info.at(b.k), h.data.at(b.k));
    copy_logical(fh.info.at(f.v), fh.data.at(f.v), h.info.at(b.v), h.data.at(b.v));
    copy_logical(fh.info.at(f.o), fh.data.at(f.o), h.info.at(b.o), h.data.at(b.o));
    copy_logical(fh.info.at(f.stats), fh.data.at(f.stats), h.info.at(b.stats), h.data.at(b.stats));
    h.fill(b.d_o, 2.0, kScaleDO, rng);
    fill_options(h, c, rng);
    const double scale_o = fh.one(f.s[5]);
    double s[12] = {1 / kScaleQ,
                    1 / kScaleK,
                    1 / kScaleV,
                    1 / scale_o,
                    1 / kScaleDO,
                    1 / kScaleS,
                    1,
                    kScaleS,
                    1,
                    1,
                    1,
                    1};
    auto apply = [&] {
      for (int i = 0; i < 12; ++i) h.set_one(b.s[i], s[i]);
    };
    // Pass 1: amax of dS picks scale_dP; pass 2: the gradients' amaxes
    // pick their scales; pass 3: the reference.
    apply();
    h.run_cpu();
    s[kScaleDP] = fp8t::pow2_scale(h.one(b.amax[3]), fp8_target(c.do_type));
    s[kDescaleDP] = 1 / s[kScaleDP];
    apply();
    h.run_cpu();
    const int64_t grads[3] = {b.dq, b.dk, b.dv};
    for (int i = 0; i < 3; ++i)
      s[kScaleDQ + i] = fp8t::pow2_scale(h.one(b.amax[i]), fp8_target(h.info.at(grads[i]).dtype));
    apply();
    h.run_cpu();
    std::printf("  %-44s scales: dP %g, dQ %g, dK %g, dV %g, o %g\n", label.c_str(), s[kScaleDP],
                s[kScaleDQ], s[kScaleDK], s[kScaleDV], scale_o);

    auto runs = run_gpu(gg.get(), h);
    for (int run = 0; run < 2; ++run) {
      const std::string l = label + (run ? " [run 2]" : "");
      for (int i = 0; i < 3; ++i)
        keep_valid_rows(h.info.at(grads[i]), runs[run][grads[i]], h.data[grads[i]],
                        i == 0 ? c.seq_q : c.seq_kv);
      for (int i = 0; i < 3; ++i)
        compare_fp8(l, h.info.at(grads[i]), runs[run][grads[i]], h.data[grads[i]], s[kScaleDQ + i]);
      for (int i = 0; i < 4; ++i)
        compare_amax(l, h.info.at(b.amax[i]), runs[run][b.amax[i]], h.data[b.amax[i]],
                     i == 3 ? 1e-2 : 2e-2);
    }
  });
}

// ---------------------------------------------------------------------------
// FP8 matmul from existing ops

struct MatmulCase {
  std::string label;
  int64_t batch, m, n, k;
  cudnnfe_dtype_t a_type = E4M3, b_type = E4M3;
  cudnnfe_dtype_t c_type;  // FP8 (with scale_c and amax) or BFLOAT16 / FLOAT
  Expect expect;
};

struct MatmulGraph {
  int64_t a, b, da, db, sc = 0, amax = 0, c;
};

MatmulGraph add_matmul(cudnnfe_graph_t *g, const MatmulCase &c) {
  MatmulGraph m{};
  m.a = input(g, "a", c.a_type, {c.batch, c.m, c.k});
  // K contiguous in both operands ("TN"), as Hopper's FP8 GEMMs require.
  m.b = input(g, "b", c.b_type, {c.batch, c.k, c.n}, {c.k * c.n, 1, c.k});
  m.da = input(g, "descale_a", F32, {1, 1, 1});
  m.db = input(g, "descale_b", F32, {1, 1, 1});
  int64_t prod = 0, d1 = 0, d2 = 0;
  ok(cudnnfe_graph_add_matmul(g, m.a, m.b, nullptr, &prod), "add_matmul");
  ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, prod, m.da, 0, nullptr, &d1), "mul");
  ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, d1, m.db, 0, nullptr, &d2), "mul");
  if (fp8t::is_fp8(c.c_type)) {
    m.sc = input(g, "scale_c", F32, {1, 1, 1});
    ok(cudnnfe_graph_add_reduction(g, CUDNNFE_REDUCTION_AMAX, d2, nullptr, &m.amax), "amax");
    ok(cudnnfe_tensor_set_dtype(g, m.amax, F32), "set_dtype");
    mark_output(g, m.amax);
    ok(cudnnfe_graph_add_pointwise(g, CUDNNFE_POINTWISE_MUL, d2, m.sc, 0, nullptr, &m.c), "mul");
  } else {
    m.c = d2;
  }
  mark_output(g, m.c);
  ok(cudnnfe_tensor_set_dtype(g, m.c, c.c_type), "set_dtype");
  return m;
}

void run_matmul_case(const MatmulCase &c) {
  const std::string label = "fp8 matmul " + c.label;
  guarded(label, [&] {
    GraphPtr gg = new_graph(label, NOT_SET);
    MatmulGraph m = add_matmul(gg.get(), c);
    if (!build_gpu(gg.get(), label, c.expect)) return;
    GraphPtr cg = new_graph(label, NOT_SET);
    add_matmul(cg.get(), c);
    build_cpu(cg.get());
    Host h;
    std::set<int64_t> outs = {m.c};
    if (m.amax) outs.insert(m.amax);
    h.init(cg.get(), outs);
    std::mt19937 rng(seed_of(label));
    h.fill(m.a, 2.0, 64, rng);
    h.fill(m.b, 2.0, 64, rng);
    h.set_one(m.da, 1.0 / 64);
    h.set_one(m.db, 1.0 / 64);
    double scale_c = 1;
    if (m.sc) {
      h.set_one(m.sc, 1);
      h.run_cpu();
      scale_c = fp8t::pow2_scale(h.one(m.amax), fp8_target(c.c_type));
      h.set_one(m.sc, scale_c);
    }
    h.run_cpu();
    auto runs = run_gpu(gg.get(), h);
    for (int run = 0; run < 2; ++run) {
      const std::string l = label + (run ? " [run 2]" : "");
      if (fp8t::is_fp8(c.c_type)) {
        compare_fp8(l, h.info.at(m.c), runs[run][m.c], h.data[m.c], scale_c);
        compare_amax(l, h.info.at(m.amax), runs[run][m.amax], h.data[m.amax], 1e-2);
      } else {
        compare_plain(l, h.info.at(m.c), runs[run][m.c], h.data[m.c], 1e-2, 1e-3);
      }
    }
  });
}

}  // namespace

// ---------------------------------------------------------------------------

TEST(gpu_fp8_environment) {
  REQUIRE_GPU();
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  const char *lib = std::getenv("CUDNNFE_CUDNN_LIBRARY");
  std::printf("  cuDNN %lld (%s)\n", static_cast<long long>(version),
              lib ? lib : "libcudnn.so.9 from the loader path");
}

TEST(gpu_sdpa_fp8_forward) {
  REQUIRE_GPU();
  std::vector<AttnCase> cases(7);
  cases[0].label = "b2 h4 s512 d128 e4m3 stats bshd";
  cases[0].a = {2, 4, 4, 512, 512, 128, 128};
  cases[0].bshd = true;
  cases[1].label = "b2 h4 s256 d128 e4m3 causal inference";
  cases[1].a = {2, 4, 4, 256, 256, 128, 128};
  cases[1].causal = true;
  cases[1].stats = false;
  cases[2].label = "b2 h4/2 (gqa) s128 d128 e4m3 causal stats";
  cases[2].a = {2, 4, 2, 128, 128, 128, 128};
  cases[2].causal = true;
  // Possibly refused: the message is printed and listed.
  cases[3].label = "b2 h4 s_q128 s_kv384 d128 e4m3 stats";
  cases[3].a = {2, 4, 4, 128, 384, 128, 128};
  cases[3].expect = Expect::kMayRefuse;
  cases[4].label = "b2 h4 s256 d128 e5m2 causal stats";
  cases[4].a = {2, 4, 4, 256, 256, 128, 128};
  cases[4].type = E5M2;
  cases[4].causal = true;
  cases[4].expect = Expect::kMayRefuse;
  // cudnn-frontend documents BF16/HALF O as Blackwell-only (cuDNN 9.13+).
  cases[5].label = "b2 h4 s128 d128 e4m3 bf16 O";
  cases[5].a = {2, 4, 4, 128, 128, 128, 128};
  cases[5].o_type = CUDNNFE_DTYPE_BFLOAT16;
  cases[5].expect = Expect::kMayRefuse;
  // Descales and scales as pass-by-value scalars instead of bound tensors.
  cases[6].label = "b2 h4 s128 d128 e4m3 by-value scales";
  cases[6].a = {2, 4, 4, 128, 128, 128, 128};
  cases[6].by_value = true;
  cases[6].expect = Expect::kMayRefuse;
  for (const AttnCase &c : cases) run_forward_case(c);
}

TEST(gpu_sdpa_fp8_backward) {
  REQUIRE_GPU();
  std::vector<AttnCase> cases(4);
  cases[0].label = "b2 h4 s512 d128 e4m3 bshd";
  cases[0].a = {2, 4, 4, 512, 512, 128, 128};
  cases[0].bshd = true;
  cases[1].label = "b2 h4 s256 d128 e4m3 causal";
  cases[1].a = {2, 4, 4, 256, 256, 128, 128};
  cases[1].causal = true;
  cases[2].label = "b2 h4/2 (gqa) s128 d128 e4m3 causal";
  cases[2].a = {2, 4, 2, 128, 128, 128, 128};
  cases[2].causal = true;
  // The "hybrid" recipe: dO (and so dS) in E5M2.
  cases[3].label = "b2 h4 s256 d128 e4m3, dO e5m2";
  cases[3].a = {2, 4, 4, 256, 256, 128, 128};
  cases[3].do_type = E5M2;
  cases[3].expect = Expect::kMayRefuse;
  for (const AttnCase &c : cases) run_backward_case(c);
}

// The diagonal band (issue 15). cudnn-frontend 1.32 runs its FP8
// sliding-window case (test_sdpa_fp8_serialization.py: inference, BSHD,
// d_qk 192, d_v 128, s 1543, h_q 7, h_kv 1, causal with a left bound of
// 227) on Hopper with cuDNN 9.19, so from 9.19 on the forward cases must
// build; before, a refusal is allowed and listed. The bottom-right band may
// be refused anywhere (cudnn-frontend documents bottom-right FP8 masks for
// Blackwell), and so may the backward at d_qk 192 (no cudnn-frontend test
// runs it).
std::vector<AttnCase> sliding_window_cases() {
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  const Expect from_919 = version >= 91900 ? Expect::kBuilds : Expect::kMayRefuse;
  std::vector<AttnCase> cases(3);
  cases[0].label = "b1 h7/1 s1543 d192/128 e4m3 causal left 227 bshd";
  cases[0].a = {1, 7, 1, 1543, 1543, 192, 128};
  cases[0].causal = true;
  cases[0].window_left = 227;
  cases[0].bshd = true;
  cases[0].expect = from_919;
  cases[1].label = "b2 h4 s512 d128 e4m3 left 128 right 0 bshd";
  cases[1].a = {2, 4, 4, 512, 512, 128, 128};
  cases[1].window_left = 128;
  cases[1].window_right = 0;
  cases[1].bshd = true;
  cases[1].expect = from_919;
  cases[2].label = "b2 h4 s_q128 s_kv384 d128 e4m3 bottom-right left 64";
  cases[2].a = {2, 4, 4, 128, 384, 128, 128};
  cases[2].window_left = 64;
  cases[2].window_right = 0;
  cases[2].alignment = CUDNNFE_DIAGONAL_BOTTOM_RIGHT;
  cases[2].expect = Expect::kMayRefuse;
  return cases;
}

TEST(gpu_sdpa_fp8_sliding_window_forward) {
  REQUIRE_GPU();
  std::vector<AttnCase> cases = sliding_window_cases();
  cases[0].stats = false;  // inference, as cudnn-frontend's case
  for (const AttnCase &c : cases) run_forward_case(c);
}

TEST(gpu_sdpa_fp8_sliding_window_backward) {
  REQUIRE_GPU();
  std::vector<AttnCase> cases = sliding_window_cases();
  cases[0].expect = Expect::kMayRefuse;  // d_qk 192
  for (const AttnCase &c : cases) run_backward_case(c);
}

// Padding, a given dropout mask and a paged K/V cache (cudnn-frontend
// offers each for FP8 attention on Hopper): the forward of each, the
// backward with padding. Lengths include a full batch and a short one
// (not a multiple of the 64/128 tiles). The dropout mask may be refused
// (its FLOAT type is the test's choice; the message is listed), and so may
// ALiBi and the sink logits (no cudnn-frontend FP8 test runs them; a sink
// before cuDNN 9.13 is refused by cudnnfe); a paged cache before cuDNN 9.5
// is refused by cudnnfe, as cudnn-frontend does.
std::vector<AttnCase> option_cases() {
  int64_t version = 0;
  cudnnfe_cudnn_version(&version);
  std::vector<AttnCase> cases(6);
  cases[0].label = "b2 h4 s256 d128 e4m3 padding stats";
  cases[0].a = {2, 4, 4, 256, 256, 128, 128};
  cases[0].seq_q = {256, 77};
  cases[0].seq_kv = {256, 131};
  cases[1].label = "b2 h4/2 (gqa) s128 d128 e4m3 causal padding bshd";
  cases[1].a = {2, 4, 2, 128, 128, 128, 128};
  cases[1].causal = true;
  cases[1].bshd = true;
  cases[1].seq_q = {100, 128};
  cases[1].seq_kv = {100, 128};
  cases[2].label = "b2 h4 s256 d128 e4m3 dropout mask stats";
  cases[2].a = {2, 4, 4, 256, 256, 128, 128};
  cases[2].dropout_mask = true;
  cases[2].expect = Expect::kRefuses;  // built but wrong on cuDNN 9.14/9.19 (lower_sdpa_fp8.cpp)
  cases[3].label = "b2 h4 s256 d128 e4m3 paged (page 64) padding";
  cases[3].a = {2, 4, 4, 256, 256, 128, 128};
  cases[3].seq_q = {256, 200};
  cases[3].seq_kv = {256, 170};
  cases[3].page_size = 64;
  // cuDNN 9.14 offered no engine for it on an H100; 9.19 builds it.
  cases[3].expect = version >= 91900 ? Expect::kBuilds : Expect::kMayRefuse;
  cases[4].label = "b2 h4 s256 d128 e4m3 causal alibi stats";
  cases[4].a = {2, 4, 4, 256, 256, 128, 128};
  cases[4].causal = true;
  cases[4].alibi = true;
  cases[4].expect = Expect::kRefuses;  // built but wrong on cuDNN 9.14/9.19 (lower_sdpa_fp8.cpp)
  cases[5].label = "b2 h4 s256 d128 e4m3 causal sink stats";
  cases[5].a = {2, 4, 4, 256, 256, 128, 128};
  cases[5].causal = true;
  cases[5].sink = true;
  cases[5].expect = Expect::kRefuses;  // wrong on cuDNN 9.14, refused by 9.19 (lower_sdpa_fp8.cpp)
  return cases;
}

TEST(gpu_sdpa_fp8_options_forward) {
  REQUIRE_GPU();
  for (const AttnCase &c : option_cases()) run_forward_case(c);
}

TEST(gpu_sdpa_fp8_padding_backward) {
  REQUIRE_GPU();
  std::vector<AttnCase> cases = option_cases();
  cases.resize(2);  // the padding cases
  for (const AttnCase &c : cases) run_backward_case(c);
}

TEST(gpu_fp8_matmul) {
  REQUIRE_GPU();
  const MatmulCase cases[] = {
      // cudnn-frontend's FP8 matmul sample: FP8 in, descaled, BF16 out.
      {"b4 m128 n192 k256 e4m3 -> bf16", 4, 128, 192, 256, E4M3, E4M3, CUDNNFE_DTYPE_BFLOAT16,
       Expect::kBuilds},
      {"b4 m128 n192 k256 e4m3 -> fp32", 4, 128, 192, 256, E4M3, E4M3, F32, Expect::kMayRefuse},
      // The full FP8 block: scale, cast to FP8 and AMAX in one graph.
      {"b4 m128 n192 k256 e4m3 -> e4m3 + amax", 4, 128, 192, 256, E4M3, E4M3, E4M3,
       Expect::kMayRefuse},
      {"b4 m128 n192 k256 e4m3 x e5m2 -> bf16", 4, 128, 192, 256, E4M3, E5M2,
       CUDNNFE_DTYPE_BFLOAT16, Expect::kMayRefuse},
  };
  for (const MatmulCase &c : cases) run_matmul_case(c);
}

TEST(gpu_fp8_zz_summary) {
  REQUIRE_GPU();
  std::printf("  ---- FP8 results ----\n");
  for (const std::string &s : summary()) std::printf("  %s\n", s.c_str());
  std::printf("  ---- refusals (allowed) ----\n");
  for (const std::string &r : refusals()) std::printf("  %s\n", r.c_str());
  if (refusals().empty()) std::printf("  none\n");
}
