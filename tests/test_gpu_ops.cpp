// GPU tests through the public C API: every op family and the common
// fusions are built twice, once for the CPU reference and once for the GPU,
// run on the same random inputs and compared element by element. Each case
// prints its largest absolute and relative error; a summary at the end gives
// the worst per family and every configuration cuDNN refused.
//
// Without a GPU every case skips with the reason. With one, any failure
// fails: a refusal passes only where the case says cuDNN may refuse it (and
// is then printed with our message).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu_case_runner.h"
#include "gpu_tensor_data.h"
#include "gpu_test_support.h"
#include "gpu_util.h"
#include "harness.h"

namespace {

using namespace gpu_test;
using test_layouts::channels_last;
using test_layouts::packed;

// Tolerances: gpu_case_runner.h's case_rtol per I/O type (relative to each
// element, with an absolute floor of the same fraction of the output's
// largest magnitude, so that sums that cancel to near zero are judged on the
// scale of their terms).
constexpr double kSdpaRtol = 2e-2;
constexpr cudnnfe_dtype_t kAllTypes[] = {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF,
                                         CUDNNFE_DTYPE_BFLOAT16};

// ---------------------------------------------------------------------------
// GPU availability

// False when the case cannot run: `skip` says why when there is simply no
// GPU; with a GPU, a missing cuDNN or runtime is a failure (recorded here).

// ---------------------------------------------------------------------------
// Results across cases

struct Worst {
  double max_abs = 0, max_rel = 0;
  std::string where;
  int cases = 0;
};

std::map<std::string, Worst> &worst_by_family() {
  static std::map<std::string, Worst> worst;
  return worst;
}

std::vector<std::string> &refusals() {
  static std::vector<std::string> list;
  return list;
}

// ---------------------------------------------------------------------------
// Graph construction helpers

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
              const Dims &strides = {}) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.empty() ? nullptr : strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

int64_t pointwise(cudnnfe_graph_t *g, cudnnfe_pointwise_mode_t mode, int64_t a, int64_t b = 0,
                  int64_t c = 0, int axis = 0) {
  cudnnfe_pointwise_options_t o;
  cudnnfe_pointwise_options_init(&o);
  o.axis = axis;
  int64_t out = 0;
  ok(cudnnfe_graph_add_pointwise(g, mode, a, b, c, &o, &out), "cudnnfe_graph_add_pointwise");
  return out;
}

int64_t matmul(cudnnfe_graph_t *g, int64_t a, int64_t b) {
  int64_t c = 0;
  ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &c), "cudnnfe_graph_add_matmul");
  return c;
}

struct Spec {
  std::vector<int64_t> outputs;
  std::map<int64_t, Fill> fills;
  void output(cudnnfe_graph_t *g, int64_t uid) {
    ok(cudnnfe_tensor_set_output(g, uid, 1), "cudnnfe_tensor_set_output");
    outputs.push_back(uid);
  }
};

using Builder = std::function<void(cudnnfe_graph_t *, Spec &)>;

// kRefuses: a class-3 rule (docs/refusals.md) must refuse the graph, naming
// cuDNN's wrong results.
enum class Expect { kBuilds, kMayRefuse, kRefuses };

// ---------------------------------------------------------------------------
// Running one case on both targets

void run_case(const std::string &family, const std::string &label, cudnnfe_dtype_t io,
              const Builder &build, double rtol, Expect expect) {
  const std::string full = label + " " + short_name(io);
  // GPU build first: a refusal needs no CPU run.
  GraphPtr gpu_graph = new_graph(full, io);
  Spec spec;
  build(gpu_graph.get(), spec);
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  cudnnfe_status_t s = cudnnfe_graph_build(gpu_graph.get(), test_handle(), &options);
  if (expect == Expect::kRefuses) {
    const std::string why = cudnnfe_graph_last_error(gpu_graph.get());
    if (s != CUDNNFE_STATUS_NOT_SUPPORTED || why.find("wrongly") == std::string::npos)
      throw Failure("expected the refusal of a pattern cuDNN computes wrongly; got " +
                    std::string(cudnnfe_status_name(s)) + ": " + why);
    std::printf("  %-44s refused as expected: %s\n", full.c_str(), why.c_str());
    return;
  }
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
  options.target = CUDNNFE_TARGET_CPU_REFERENCE;
  s = cudnnfe_graph_build(cpu_graph.get(), test_handle(), &options);
  if (s != CUDNNFE_STATUS_OK)
    throw Failure("CPU reference build returned " + std::string(cudnnfe_status_name(s)) + ": " +
                  cudnnfe_graph_last_error(cpu_graph.get()));

  const CaseRun run =
      run_on_both(gpu_graph.get(), cpu_graph.get(), spec.outputs, spec.fills, seed_of(full));
  for (size_t i = 0; i < run.tensors.size(); ++i) {
    const TensorInfo &t = run.tensors[i];
    if (!t.is_output) continue;
    const Bytes &got = run.gpu[i];
    const Bytes &want = run.reference[i];
    Errors e = compare(t, got, want, rtol, NonFinite::kMustMatch, {}, true);
    std::printf("  %-44s %-22s max_abs %.2e max_rel %.2e (rtol %.0e) plan %s ws %lld%s\n",
                full.c_str(), (t.name + dims_text(t.dims)).c_str(), e.max_abs, e.max_rel, rtol,
                run.plan.c_str(), static_cast<long long>(run.workspace_size),
                e.bad ? "  MISMATCH" : "");
    if (e.bad) {
      std::printf("    %lld elements out of tolerance; first at %s\n",
                  static_cast<long long>(e.bad), e.first_bad.c_str());
      if (t.dtype == CUDNNFE_DTYPE_BOOLEAN) {
        // Diagnostic: does the GPU write 8 booleans per byte (LSB first)?
        int64_t packed_bad = 0;
        for_each_offset(t, [&](int64_t off) {
          const int bit = (got[static_cast<size_t>(off / 8)] >> (off % 8)) & 1;
          if (bit != (want[static_cast<size_t>(off)] ? 1 : 0)) ++packed_bad;
        });
        std::printf("    read as bit-packed (8 per byte, LSB first): %lld mismatches\n",
                    static_cast<long long>(packed_bad));
      }
      ++testing::state().failures;
    }
    Worst &w = worst_by_family()[family];
    ++w.cases;
    if (e.max_rel >= w.max_rel) {
      w.max_rel = e.max_rel;
      w.where = full;
    }
    w.max_abs = std::max(w.max_abs, e.max_abs);
  }
}

// Runs a case, turning a Failure into a recorded failure with its label.
void check_case(const std::string &family, const std::string &label, cudnnfe_dtype_t io,
                const Builder &build, double rtol, Expect expect = Expect::kBuilds) {
  try {
    run_case(family, label, io, build, rtol, expect);
  } catch (const Failure &f) {
    std::printf("  %s %s FAILED: %s\n", label.c_str(), short_name(io), f.what());
    ++testing::state().failures;
  }
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// Convolutions

struct ConvGeometry {
  const char *name;
  Dims x, w;
  int64_t pad[3], stride[3], dilation[3];
  bool channels_last;

  int spatial() const { return static_cast<int>(x.size()) - 2; }
  Dims y() const {
    Dims y = {x[0], w[0]};
    for (int i = 0; i < spatial(); ++i)
      y.push_back((x[2 + i] + 2 * pad[i] - dilation[i] * (w[2 + i] - 1) - 1) / stride[i] + 1);
    return y;
  }
  Dims layout(const Dims &d) const {
    return channels_last ? test_layouts::channels_last(d) : packed(d);
  }
  cudnnfe_conv_options_t options() const {
    cudnnfe_conv_options_t o;
    cudnnfe_conv_options_init(&o);
    for (int i = 0; i < spatial(); ++i) {
      o.pre_padding[i] = o.post_padding[i] = pad[i];
      o.stride[i] = stride[i];
      o.dilation[i] = dilation[i];
    }
    return o;
  }
};

const std::vector<ConvGeometry> &conv_geometries() {
  static const std::vector<ConvGeometry> g = {
      {"2d_nchw_pad1", {2, 8, 12, 12}, {16, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}, false},
      {"2d_nhwc_pad_stride_dil", {2, 8, 12, 12}, {16, 8, 3, 3}, {1, 2}, {2, 1}, {1, 2}, true},
      {"3d_ncdhw_pad1_stride2",
       {2, 8, 6, 6, 6},
       {8, 8, 3, 3, 3},
       {1, 1, 1},
       {2, 2, 2},
       {1, 1, 1},
       false},
      {"3d_ndhwc_pad1_dil2",
       {2, 8, 6, 6, 6},
       {8, 8, 3, 3, 3},
       {1, 1, 1},
       {1, 1, 1},
       {2, 2, 2},
       true},
      // Grouped and depthwise (groups = image C / weight C, inferred by cuDNN
      // from the dims), as in cudnn-frontend's conv fuzzer.
      {"2d_nhwc_groups4", {2, 16, 10, 10}, {16, 4, 3, 3}, {1, 1}, {1, 1}, {1, 1}, true},
      {"2d_nchw_groups2_stride2", {2, 8, 9, 9}, {12, 4, 3, 3}, {1, 1}, {2, 2}, {1, 1}, false},
      {"2d_nhwc_depthwise", {2, 32, 12, 12}, {32, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, true},
      {"3d_ndhwc_depthwise",
       {2, 8, 6, 6, 6},
       {8, 1, 3, 3, 3},
       {1, 1, 1},
       {1, 1, 1},
       {1, 1, 1},
       true},
  };
  return g;
}

TEST(gpu_environment) {
  REQUIRE_GPU();
  int64_t version = 0;
  int32_t count = 0;
  cudnnfe_cudnn_version(&version);
  cudnnfe_device_count(&count);
  const char *lib = std::getenv("CUDNNFE_CUDNN_LIBRARY");
  std::printf("  cuDNN %lld (%s), %d CUDA device(s), TF32 override %s\n",
              static_cast<long long>(version), lib ? lib : "libcudnn.so.9 from the loader path",
              count, std::getenv("NVIDIA_TF32_OVERRIDE"));
}

TEST(gpu_conv_fprop) {
  REQUIRE_GPU();
  for (const ConvGeometry &geo : conv_geometries())
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "conv_fprop", std::string("conv_fprop_") + geo.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t x = input(g, "x", dt, geo.x, geo.layout(geo.x));
            int64_t w = input(g, "w", dt, geo.w, geo.layout(geo.w));
            cudnnfe_conv_options_t o = geo.options();
            int64_t y = 0;
            ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
            // The geometry's layout for y too (the default is channels-last).
            const Dims ys = geo.layout(geo.y());
            ok(cudnnfe_tensor_set_strides(g, y, static_cast<int32_t>(ys.size()), ys.data()),
               "set_strides");
            spec.output(g, y);
          },
          case_rtol(dt));
}

TEST(gpu_conv_dgrad) {
  REQUIRE_GPU();
  for (const ConvGeometry &geo : conv_geometries())
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "conv_dgrad", std::string("conv_dgrad_") + geo.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            Dims y = geo.y();
            int64_t dy = input(g, "dy", dt, y, geo.layout(y));
            int64_t w = input(g, "w", dt, geo.w, geo.layout(geo.w));
            cudnnfe_conv_options_t o = geo.options();
            int64_t dx = 0;
            ok(cudnnfe_graph_add_conv_dgrad(g, dy, w, &o, &dx), "add_conv_dgrad");
            // Stride > 1 hides dx's size: give the forward input's.
            ok(cudnnfe_tensor_set_dims(g, dx, static_cast<int32_t>(geo.x.size()), geo.x.data()),
               "set_dims");
            const Dims dxs = geo.layout(geo.x);
            ok(cudnnfe_tensor_set_strides(g, dx, static_cast<int32_t>(dxs.size()), dxs.data()),
               "set_strides");
            spec.output(g, dx);
          },
          case_rtol(dt));
}

TEST(gpu_conv_wgrad) {
  REQUIRE_GPU();
  for (const ConvGeometry &geo : conv_geometries())
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "conv_wgrad", std::string("conv_wgrad_") + geo.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            Dims y = geo.y();
            int64_t x = input(g, "x", dt, geo.x, geo.layout(geo.x));
            int64_t dy = input(g, "dy", dt, y, geo.layout(y));
            cudnnfe_conv_options_t o = geo.options();
            int64_t dw = 0;
            ok(cudnnfe_graph_add_conv_wgrad(g, x, dy, &o, &dw), "add_conv_wgrad");
            ok(cudnnfe_tensor_set_dims(g, dw, static_cast<int32_t>(geo.w.size()), geo.w.data()),
               "set_dims");
            const Dims dws = geo.layout(geo.w);
            ok(cudnnfe_tensor_set_strides(g, dw, static_cast<int32_t>(dws.size()), dws.data()),
               "set_strides");
            spec.output(g, dw);
          },
          case_rtol(dt));
}

// genstats after a convolution, the pattern of cudnn-frontend's
// test_conv_genstats (cuDNN runs genstats fused behind a convolution): y,
// sum and sq_sum against the CPU reference. cudnn-frontend's test is HALF;
// FLOAT and BFLOAT16 may be refused.
TEST(gpu_conv_genstats) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : kAllTypes)
    check_case(
        "genstats", "conv_genstats_nhwc", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          const Dims xd = {4, 32, 16, 16}, wd = {64, 32, 3, 3};
          int64_t x = input(g, "x", dt, xd, channels_last(xd));
          int64_t w = input(g, "w", dt, wd, channels_last(wd));
          cudnnfe_conv_options_t o;
          cudnnfe_conv_options_init(&o);
          o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
          o.compute_dtype = CUDNNFE_DTYPE_FLOAT;
          int64_t y = 0, sum = 0, sq_sum = 0;
          ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
          spec.output(g, y);
          ok(cudnnfe_graph_add_genstats(g, y, nullptr, &sum, &sq_sum), "add_genstats");
          spec.output(g, sum);
          spec.output(g, sq_sum);
        },
        case_rtol(dt), dt == CUDNNFE_DTYPE_HALF ? Expect::kBuilds : Expect::kMayRefuse);
}

// bn_finalize on its own (cudnn-frontend's "BN Finalize Graph" sample: FLOAT,
// C = 32, epsilon and accum_count as scalars, running statistics given).
// sq_sum is drawn in [1, 2) so that the variance sq_sum/M - mean^2 is
// positive. The reference's running variance is the unbiased one; a
// mismatch on next_running_var alone says cuDNN uses another definition.
TEST(gpu_bn_finalize) {
  REQUIRE_GPU();
  check_case(
      "bn_finalize", "bn_finalize_c32", CUDNNFE_DTYPE_FLOAT,
      [&](cudnnfe_graph_t *g, Spec &spec) {
        const Dims cd = {1, 32, 1, 1};
        const Dims cs = channels_last(cd);
        int64_t sum = input(g, "sum", CUDNNFE_DTYPE_FLOAT, cd, cs);
        int64_t sq_sum = input(g, "sq_sum", CUDNNFE_DTYPE_FLOAT, cd, cs);
        int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, cd, cs);
        int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, cd, cs);
        int64_t prev_mean = input(g, "prev_running_mean", CUDNNFE_DTYPE_FLOAT, cd, cs);
        int64_t prev_var = input(g, "prev_running_var", CUDNNFE_DTYPE_FLOAT, cd, cs);
        spec.fills[sq_sum] = Fill{1.0, 2.0};
        int64_t eps = 0, count = 0, momentum = 0;
        ok(cudnnfe_graph_add_scalar(g, "epsilon", CUDNNFE_DTYPE_FLOAT, 1e-3, &eps), "scalar");
        ok(cudnnfe_graph_add_scalar(g, "accum_count", CUDNNFE_DTYPE_INT64, 64, &count), "scalar");
        ok(cudnnfe_graph_add_scalar(g, "momentum", CUDNNFE_DTYPE_FLOAT, 0.125, &momentum),
           "scalar");
        int64_t out[6] = {};
        ok(cudnnfe_graph_add_bn_finalize(g, sum, sq_sum, scale, bias, eps, count, prev_mean,
                                         prev_var, momentum, nullptr, &out[0], &out[1], &out[2],
                                         &out[3], &out[4], &out[5]),
           "add_bn_finalize");
        for (int64_t t : out) spec.output(g, t);
      },
      1e-4, Expect::kMayRefuse);
}

// dbn_weight in cudnn-frontend's DgradDreluBNBwdWeight pattern
// (samples/cpp/convolution/dgrads.cpp): dgrad -> RELU_BWD against the
// batch-norm forward recomputed from x, mean, inv_variance, scale and bias
// -> dbn_weight. HALF I/O, FLOAT statistics; cuDNN 9.8+, Ampere or Hopper.
TEST(gpu_dgrad_drelu_dbn_weight) {
  REQUIRE_GPU();
  check_case(
      "dbn_weight", "dgrad_drelu_dbn_weight", CUDNNFE_DTYPE_HALF,
      [&](cudnnfe_graph_t *g, Spec &spec) {
        const Dims dyd = {4, 64, 16, 16}, wd = {64, 32, 3, 3}, xd = {4, 32, 16, 16};
        const Dims cd = {1, 32, 1, 1};
        ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "intermediate");
        ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "compute");
        int64_t dy = input(g, "dy", CUDNNFE_DTYPE_HALF, dyd, channels_last(dyd));
        int64_t w = input(g, "w", CUDNNFE_DTYPE_HALF, wd, channels_last(wd));
        int64_t x = input(g, "x", CUDNNFE_DTYPE_HALF, xd, channels_last(xd));
        int64_t mean = input(g, "mean", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
        int64_t inv = input(g, "inv_variance", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
        int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
        int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
        cudnnfe_conv_options_t o;
        cudnnfe_conv_options_init(&o);
        o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
        int64_t dx = 0;
        ok(cudnnfe_graph_add_conv_dgrad(g, dy, w, &o, &dx), "add_conv_dgrad");
        ok(cudnnfe_tensor_set_dims(g, dx, 4, xd.data()), "set_dims");
        int64_t y = pointwise(g, CUDNNFE_POINTWISE_SUB, x, mean);
        y = pointwise(g, CUDNNFE_POINTWISE_MUL, y, inv);
        y = pointwise(g, CUDNNFE_POINTWISE_MUL, y, scale);
        y = pointwise(g, CUDNNFE_POINTWISE_ADD, y, bias);
        int64_t drelu = pointwise(g, CUDNNFE_POINTWISE_RELU_BWD, dx, y);
        spec.output(g, drelu);
        int64_t out[5] = {};
        ok(cudnnfe_graph_add_dbn_weight(g, drelu, x, mean, inv, scale, nullptr, &out[0], &out[1],
                                        &out[2], &out[3], &out[4]),
           "add_dbn_weight");
        for (int64_t t : out) spec.output(g, t);
      },
      case_rtol(CUDNNFE_DTYPE_HALF), Expect::kMayRefuse);
}

// ---------------------------------------------------------------------------
// Matmul

TEST(gpu_matmul) {
  REQUIRE_GPU();
  struct Variant {
    const char *name;
    Dims a, b, b_strides;
  };
  const Variant variants[] = {
      {"matmul_2d", {64, 32}, {32, 48}, {}},
      {"matmul_batched", {4, 64, 32}, {4, 32, 48}, {}},
      {"matmul_broadcast_b", {4, 64, 32}, {1, 32, 48}, {}},
      {"matmul_transposed_b", {4, 64, 32}, {4, 32, 48}, {32 * 48, 1, 32}},
  };
  for (const Variant &v : variants)
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "matmul", v.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t a = input(g, "a", dt, v.a);
            int64_t b = input(g, "b", dt, v.b, v.b_strides);
            spec.output(g, matmul(g, a, b));
          },
          case_rtol(dt));
}

// ---------------------------------------------------------------------------
// Pointwise

struct PointwiseCase {
  cudnnfe_pointwise_mode_t mode;
  const char *name;
  int arity;
  Fill in0, in1;
};

const std::vector<PointwiseCase> &pointwise_cases() {
  const Fill any{-1, 1}, wide{-3, 3}, positive{0.1, 4}, away{0.5, 2}, ints{-2, 2, true};
  static const std::vector<PointwiseCase> cases = {
      {CUDNNFE_POINTWISE_ADD, "ADD", 2, any, any},
      {CUDNNFE_POINTWISE_ADD_SQUARE, "ADD_SQUARE", 2, any, any},
      {CUDNNFE_POINTWISE_SUB, "SUB", 2, any, any},
      {CUDNNFE_POINTWISE_MUL, "MUL", 2, any, any},
      {CUDNNFE_POINTWISE_DIV, "DIV", 2, any, away},
      {CUDNNFE_POINTWISE_MAX, "MAX", 2, any, any},
      {CUDNNFE_POINTWISE_MIN, "MIN", 2, any, any},
      {CUDNNFE_POINTWISE_MOD, "MOD", 2, {-4, 4}, away},
      {CUDNNFE_POINTWISE_POW, "POW", 2, away, {-2, 2}},
      {CUDNNFE_POINTWISE_ATAN2, "ATAN2", 2, any, any},
      {CUDNNFE_POINTWISE_NEG, "NEG", 1, any, any},
      {CUDNNFE_POINTWISE_ABS, "ABS", 1, any, any},
      {CUDNNFE_POINTWISE_CEIL, "CEIL", 1, {-4, 4}, any},
      {CUDNNFE_POINTWISE_FLOOR, "FLOOR", 1, {-4, 4}, any},
      {CUDNNFE_POINTWISE_RECIPROCAL, "RECIPROCAL", 1, away, any},
      {CUDNNFE_POINTWISE_SQRT, "SQRT", 1, positive, any},
      {CUDNNFE_POINTWISE_RSQRT, "RSQRT", 1, positive, any},
      {CUDNNFE_POINTWISE_EXP, "EXP", 1, {-2, 2}, any},
      {CUDNNFE_POINTWISE_LOG, "LOG", 1, positive, any},
      {CUDNNFE_POINTWISE_SIN, "SIN", 1, wide, any},
      {CUDNNFE_POINTWISE_COS, "COS", 1, wide, any},
      {CUDNNFE_POINTWISE_TAN, "TAN", 1, any, any},
      {CUDNNFE_POINTWISE_ERF, "ERF", 1, wide, any},
      {CUDNNFE_POINTWISE_IDENTITY, "IDENTITY", 1, any, any},
      {CUDNNFE_POINTWISE_RELU_FWD, "RELU_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_TANH_FWD, "TANH_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_SIGMOID_FWD, "SIGMOID_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_ELU_FWD, "ELU_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_GELU_FWD, "GELU_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_GELU_APPROX_TANH_FWD, "GELU_APPROX_TANH_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_SOFTPLUS_FWD, "SOFTPLUS_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_SWISH_FWD, "SWISH_FWD", 1, wide, any},
      {CUDNNFE_POINTWISE_RELU_BWD, "RELU_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_TANH_BWD, "TANH_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_SIGMOID_BWD, "SIGMOID_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_ELU_BWD, "ELU_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_GELU_BWD, "GELU_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_GELU_APPROX_TANH_BWD, "GELU_APPROX_TANH_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_SOFTPLUS_BWD, "SOFTPLUS_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_SWISH_BWD, "SWISH_BWD", 2, any, wide},
      {CUDNNFE_POINTWISE_CMP_EQ, "CMP_EQ", 2, ints, ints},
      {CUDNNFE_POINTWISE_CMP_NEQ, "CMP_NEQ", 2, ints, ints},
      {CUDNNFE_POINTWISE_CMP_GT, "CMP_GT", 2, ints, ints},
      {CUDNNFE_POINTWISE_CMP_GE, "CMP_GE", 2, ints, ints},
      {CUDNNFE_POINTWISE_CMP_LT, "CMP_LT", 2, ints, ints},
      {CUDNNFE_POINTWISE_CMP_LE, "CMP_LE", 2, ints, ints},
  };
  return cases;
}

// Standalone pointwise and reduction engines take channels-last (NHWC)
// packed layouts only; NCHW is checked separately as a documented refusal.
const Dims kPointwiseDims = {2, 8, 16, 16};
const Dims kNhwc = channels_last(kPointwiseDims);

// out = mask ? 1 : 0 in `dt`, from bound all-ones and all-zeros inputs.
int64_t select_01(cudnnfe_graph_t *g, Spec &spec, cudnnfe_dtype_t dt, int64_t mask) {
  int64_t ones = input(g, "ones", dt, kPointwiseDims, kNhwc);
  int64_t zeros = input(g, "zeros", dt, kPointwiseDims, kNhwc);
  spec.fills[ones] = Fill{1, 1};
  spec.fills[zeros] = Fill{0, 0};
  return pointwise(g, CUDNNFE_POINTWISE_BINARY_SELECT, ones, zeros, mask);
}

// FP32 graphs with comparisons or logic go to a runtime-compiled engine that
// failed NVRTC compilation on an H100 with cuDNN 9.14 and 9.19 (passed on an
// H200 earlier): cuDNN's refusal is accepted with its message printed, a wrong
// value still fails. FP16/BF16 must build.
Expect comparison_expectation(cudnnfe_pointwise_mode_t mode, cudnnfe_dtype_t dt) {
  const bool logic = (mode >= CUDNNFE_POINTWISE_CMP_EQ && mode <= CUDNNFE_POINTWISE_LOGICAL_NOT) ||
                     mode == CUDNNFE_POINTWISE_BINARY_SELECT;
  return logic && dt == CUDNNFE_DTYPE_FLOAT ? Expect::kMayRefuse : Expect::kBuilds;
}

TEST(gpu_pointwise_modes) {
  REQUIRE_GPU();
  for (const PointwiseCase &c : pointwise_cases())
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "pointwise", std::string("pointwise_") + c.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t a = input(g, "in0", dt, kPointwiseDims, kNhwc);
            spec.fills[a] = c.in0;
            int64_t b = 0;
            if (c.arity == 2) {
              b = input(g, "in1", dt, kPointwiseDims, kNhwc);
              spec.fills[b] = c.in1;
            }
            int64_t out = pointwise(g, c.mode, a, b);
            // Booleans cannot leave the graph (cuDNN bit-packs them): a
            // comparison is read through out = cmp ? 1 : 0.
            if (c.mode >= CUDNNFE_POINTWISE_CMP_EQ && c.mode <= CUDNNFE_POINTWISE_CMP_LE)
              out = select_01(g, spec, dt, out);
            spec.output(g, out);
          },
          case_rtol(dt), comparison_expectation(c.mode, dt));
}

TEST(gpu_pointwise_special) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : kAllTypes) {
    // Channel bias broadcast over N, H, W.
    check_case(
        "pointwise", "pointwise_ADD_broadcast", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "x", dt, kPointwiseDims, kNhwc);
          int64_t b = input(g, "bias", dt, {1, 8, 1, 1}, channels_last({1, 8, 1, 1}));
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_ADD, a, b));
        },
        case_rtol(dt));
    // Broadcast along two dims at once, row-major rank 3 and NHWC rank 4:
    // cuDNN computed wrong values for the row-major form, which the lowering
    // now refuses; a refusal is accepted, a wrong value fails.
    check_case(
        "pointwise", "pointwise_ADD_broadcast_2dims_rowmajor", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "x", dt, {4, 16, 32});
          int64_t b = input(g, "b", dt, {1, 16, 1});
          int64_t c = input(g, "c", dt, {1, 1, 32});
          spec.output(
              g, pointwise(g, CUDNNFE_POINTWISE_ADD, pointwise(g, CUDNNFE_POINTWISE_ADD, a, b), c));
        },
        case_rtol(dt), Expect::kMayRefuse);
    check_case(
        "pointwise", "pointwise_MUL_broadcast_2dims_nhwc", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "x", dt, kPointwiseDims, kNhwc);
          std::vector<int64_t> bd = {kPointwiseDims[0], 1, kPointwiseDims[2], 1};
          int64_t b = input(g, "b", dt, bd, channels_last(bd));
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_MUL, a, b));
        },
        case_rtol(dt), Expect::kMayRefuse);
    // A pass-by-value scalar.
    check_case(
        "pointwise", "pointwise_MUL_scalar", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          // Rank 1 (padded to [1,1,4096] for cuDNN); rank-4 scalars are
          // covered by SDPA's scale and mask constants.
          int64_t a = input(g, "x", dt, {4096});
          int64_t s = 0;
          ok(cudnnfe_graph_add_scalar(g, "half", CUDNNFE_DTYPE_FLOAT, 0.5, &s), "add_scalar");
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_MUL, a, s));
        },
        case_rtol(dt));
    // BINARY_SELECT: in2 ? in0 : in1, with an in-graph mask.
    check_case(
        "pointwise", "pointwise_BINARY_SELECT", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "a", dt, kPointwiseDims, kNhwc);
          int64_t b = input(g, "b", dt, kPointwiseDims, kNhwc);
          int64_t c = input(g, "c", dt, kPointwiseDims, kNhwc);
          int64_t d = input(g, "d", dt, kPointwiseDims, kNhwc);
          int64_t m = pointwise(g, CUDNNFE_POINTWISE_CMP_GT, c, d);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_BINARY_SELECT, a, b, m));
        },
        case_rtol(dt), comparison_expectation(CUDNNFE_POINTWISE_BINARY_SELECT, dt));
    // GEN_INDEX writes INT32 indices along an axis.
    check_case(
        "pointwise", "pointwise_GEN_INDEX_axis2", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "x", dt, kPointwiseDims, kNhwc);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_GEN_INDEX, a, 0, 0, 2));
        },
        case_rtol(dt));
    // Row-major NCHW: refused by cuDNN's standalone pointwise engines.
    check_case(
        "pointwise", "pointwise_ADD_nchw", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "a", dt, kPointwiseDims);
          int64_t b = input(g, "b", dt, kPointwiseDims);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_ADD, a, b));
        },
        case_rtol(dt), Expect::kMayRefuse);
  }
  // Logic on in-graph booleans: (a > b) op (c < d), read as 1 or 0.
  const struct {
    cudnnfe_pointwise_mode_t mode;
    const char *name;
    int arity;
  } logic[] = {{CUDNNFE_POINTWISE_LOGICAL_AND, "LOGICAL_AND", 2},
               {CUDNNFE_POINTWISE_LOGICAL_OR, "LOGICAL_OR", 2},
               {CUDNNFE_POINTWISE_LOGICAL_NOT, "LOGICAL_NOT", 1}};
  for (const auto &l : logic)
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "pointwise", std::string("pointwise_") + l.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t a = input(g, "a", dt, kPointwiseDims, kNhwc);
            int64_t b = input(g, "b", dt, kPointwiseDims, kNhwc);
            int64_t m = pointwise(g, CUDNNFE_POINTWISE_CMP_GT, a, b);
            if (l.arity == 2) {
              int64_t c = input(g, "c", dt, kPointwiseDims, kNhwc);
              int64_t d = input(g, "d", dt, kPointwiseDims, kNhwc);
              m = pointwise(g, l.mode, m, pointwise(g, CUDNNFE_POINTWISE_CMP_LT, c, d));
            } else {
              m = pointwise(g, l.mode, m);
            }
            spec.output(g, select_01(g, spec, dt, m));
          },
          case_rtol(dt), comparison_expectation(l.mode, dt));
}

TEST(gpu_boolean_io_refused) {
  REQUIRE_GPU();
  // A BOOLEAN graph output would be bit-packed by cuDNN but read as one
  // byte per element: the build must refuse it, naming the tensor.
  GraphPtr g = new_graph("bool_out", CUDNNFE_DTYPE_FLOAT);
  int64_t a = input(g.get(), "a", CUDNNFE_DTYPE_FLOAT, kPointwiseDims, kNhwc);
  int64_t b = input(g.get(), "b", CUDNNFE_DTYPE_FLOAT, kPointwiseDims, kNhwc);
  int64_t m = pointwise(g.get(), CUDNNFE_POINTWISE_CMP_GT, a, b);
  ok(cudnnfe_tensor_set_output(g.get(), m, 1), "set_output");
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
              "pointwise_0::out", "bit-packed", "cuDNN 9.", "sm_");
  std::printf("  message: %s\n", cudnnfe_graph_last_error(g.get()));
}

// ---------------------------------------------------------------------------
// Reductions

TEST(gpu_reduction) {
  REQUIRE_GPU();
  // cuDNN 9.14 and 9.19 run ADD, MIN, MAX and AMAX standalone; MUL has no
  // standalone engine ("Unsupported reduction op in the graph") and AVG,
  // NORM1, NORM2 and MUL_NO_ZEROS are refused by the reduction descriptor.
  const struct {
    cudnnfe_reduction_mode_t mode;
    const char *name;
    Fill fill;
    Expect expect;
  } modes[] = {
      {CUDNNFE_REDUCTION_ADD, "ADD", {-1, 1}, Expect::kBuilds},
      {CUDNNFE_REDUCTION_MUL, "MUL", {0.5, 1.5}, Expect::kMayRefuse},
      {CUDNNFE_REDUCTION_MIN, "MIN", {-1, 1}, Expect::kBuilds},
      {CUDNNFE_REDUCTION_MAX, "MAX", {-1, 1}, Expect::kBuilds},
      {CUDNNFE_REDUCTION_AMAX, "AMAX", {-1, 1}, Expect::kBuilds},
      {CUDNNFE_REDUCTION_AVG, "AVG", {-1, 1}, Expect::kMayRefuse},
      {CUDNNFE_REDUCTION_NORM1, "NORM1", {-1, 1}, Expect::kMayRefuse},
      {CUDNNFE_REDUCTION_NORM2, "NORM2", {-1, 1}, Expect::kMayRefuse},
      {CUDNNFE_REDUCTION_MUL_NO_ZEROS, "MUL_NO_ZEROS", {0.5, 1.5, false, 0.25}, Expect::kMayRefuse},
  };
  // Engines reduce rows (the innermost dim), columns (all but the
  // innermost) or everything of a channels-last tensor.
  const struct {
    const char *name;
    uint32_t mask;
  } shapes[] = {{"c_row", 0x2u}, {"nhw_column", 0xdu}, {"all", 0xfu}};
  for (const auto &m : modes)
    for (const auto &shape : shapes)
      for (cudnnfe_dtype_t dt : kAllTypes)
        check_case(
            "reduction", std::string("reduction_") + m.name + "_" + shape.name, dt,
            [&](cudnnfe_graph_t *g, Spec &spec) {
              const Dims xd = {2, 16, 8, 8};
              int64_t x = input(g, "x", dt, xd, channels_last(xd));
              spec.fills[x] = m.fill;
              cudnnfe_reduction_options_t o;
              cudnnfe_reduction_options_init(&o);
              o.axes_mask = shape.mask;
              int64_t y = 0;
              ok(cudnnfe_graph_add_reduction(g, m.mode, x, &o, &y), "add_reduction");
              // Reductions write FLOAT: the sum of many halves needs it.
              ok(cudnnfe_tensor_set_dtype(g, y, CUDNNFE_DTYPE_FLOAT), "set_dtype");
              spec.output(g, y);
            },
            case_rtol(dt), m.expect);
}

// ---------------------------------------------------------------------------
// Fusions

TEST(gpu_fusion_conv_bias_relu) {
  REQUIRE_GPU();
  for (bool nhwc : {true, false})
    for (cudnnfe_dtype_t dt : kAllTypes)
      check_case(
          "fusion", nhwc ? "conv_bias_relu_nhwc" : "conv_bias_relu_nchw", dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            Dims xd = {2, 16, 12, 12}, wd = {32, 16, 3, 3};
            int64_t x = input(g, "x", dt, xd, nhwc ? channels_last(xd) : packed(xd));
            int64_t w = input(g, "w", dt, wd, nhwc ? channels_last(wd) : packed(wd));
            int64_t bias = input(g, "bias", dt, {1, 32, 1, 1});
            cudnnfe_conv_options_t o;
            cudnnfe_conv_options_init(&o);
            o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
            int64_t y = 0;
            ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
            // y (and so the fused result) in x's layout; the default is NHWC.
            const Dims yd = {2, 32, 12, 12}, ys = nhwc ? channels_last(yd) : packed(yd);
            ok(cudnnfe_tensor_set_strides(g, y, 4, ys.data()), "set_strides");
            int64_t biased = pointwise(g, CUDNNFE_POINTWISE_ADD, y, bias);
            spec.output(g, pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, biased));
          },
          case_rtol(dt));
}

// cuDNN's fusing engines for matmul and conv epilogues take 16-bit inputs
// on Hopper: FLOAT matmul+pointwise and conv+reduction have no engine (9.14
// and 9.19; "TF32 data type is not supported").
Expect fused_matmul_expectation(cudnnfe_dtype_t dt) {
  return dt == CUDNNFE_DTYPE_FLOAT ? Expect::kMayRefuse : Expect::kBuilds;
}

TEST(gpu_fusion_matmul_bias_gelu) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : kAllTypes)
    check_case(
        "fusion", "matmul_bias_gelu", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "a", dt, {4, 64, 32});
          int64_t b = input(g, "b", dt, {4, 32, 64});
          int64_t bias = input(g, "bias", dt, {1, 1, 64});
          int64_t c = matmul(g, a, b);
          int64_t biased = pointwise(g, CUDNNFE_POINTWISE_ADD, c, bias);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_GELU_FWD, biased));
        },
        case_rtol(dt), fused_matmul_expectation(dt));
}

TEST(gpu_fusion_matmul_scale_add) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : kAllTypes)
    check_case(
        "fusion", "matmul_scale_add", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "a", dt, {4, 64, 32});
          int64_t b = input(g, "b", dt, {4, 32, 48});
          // A per-tensor scale: a [1,1,1] tensor (a scalar needs
          // equal ranks, which the graph's pointwise rule lacks).
          int64_t scale = input(g, "scale", dt, {1, 1, 1});
          int64_t residual = input(g, "residual", dt, {4, 64, 48});
          int64_t c = matmul(g, a, b);
          int64_t scaled = pointwise(g, CUDNNFE_POINTWISE_MUL, c, scale);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_ADD, scaled, residual));
        },
        case_rtol(dt), fused_matmul_expectation(dt));
}

TEST(gpu_pass_by_value_scale) {
  REQUIRE_GPU();
  // cudnn-frontend's is_pass_by_value tensors: a scale given in host memory at execute.
  for (cudnnfe_dtype_t dt : kAllTypes)
    check_case(
        "pointwise", "pass_by_value_scale", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t x = input(g, "x", dt, {2, 16, 32});
          int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, {1, 1, 1});
          ok(cudnnfe_tensor_set_pass_by_value(g, scale, 1), "cudnnfe_tensor_set_pass_by_value");
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_MUL, x, scale));
        },
        case_rtol(dt));
}

TEST(gpu_fusion_conv_reduction) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : kAllTypes)
    check_case(
        "fusion", "conv_fprop_then_reduction", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          Dims xd = {2, 16, 12, 12}, wd = {32, 16, 3, 3};
          int64_t x = input(g, "x", dt, xd, channels_last(xd));
          int64_t w = input(g, "w", dt, wd, channels_last(wd));
          cudnnfe_conv_options_t o;
          cudnnfe_conv_options_init(&o);
          o.pre_padding[0] = o.pre_padding[1] = o.post_padding[0] = o.post_padding[1] = 1;
          int64_t y = 0;
          ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
          spec.output(g, y);
          cudnnfe_reduction_options_t r;
          cudnnfe_reduction_options_init(&r);
          r.axes_mask = 0xdu;  // N, H, W: per-channel sums
          int64_t sum = 0;
          ok(cudnnfe_graph_add_reduction(g, CUDNNFE_REDUCTION_ADD, y, &r, &sum), "add_reduction");
          ok(cudnnfe_tensor_set_dtype(g, sum, CUDNNFE_DTYPE_FLOAT), "set_dtype");
          spec.output(g, sum);
        },
        case_rtol(dt), fused_matmul_expectation(dt));
}

// ---------------------------------------------------------------------------
// Scaled dot-product attention

struct SdpaVariant {
  const char *name;
  int64_t b, h_q, h_kv, s_q, s_kv, d;
  bool causal, bottom_right, stats, bias, bshd;
};

void build_sdpa(cudnnfe_graph_t *g, Spec &spec, const SdpaVariant &v, cudnnfe_dtype_t dt) {
  auto layout = [&](int64_t h, int64_t s, int64_t d) {
    Dims dims = {v.b, h, s, d};
    return v.bshd ? Dims{s * h * d, d, h * d, 1} : packed(dims);
  };
  int64_t q = input(g, "q", dt, {v.b, v.h_q, v.s_q, v.d}, layout(v.h_q, v.s_q, v.d));
  int64_t k = input(g, "k", dt, {v.b, v.h_kv, v.s_kv, v.d}, layout(v.h_kv, v.s_kv, v.d));
  int64_t val = input(g, "v", dt, {v.b, v.h_kv, v.s_kv, v.d}, layout(v.h_kv, v.s_kv, v.d));
  cudnnfe_sdpa_options_t o;
  cudnnfe_sdpa_options_init(&o);
  o.causal_mask = v.causal && !v.bottom_right;
  o.causal_mask_bottom_right = v.causal && v.bottom_right;
  o.generate_stats = v.stats;
  if (v.bias) o.bias = input(g, "bias", dt, {1, v.h_q, v.s_q, v.s_kv});
  int64_t out = 0, stats = 0;
  ok(cudnnfe_graph_add_sdpa(g, q, k, val, &o, &out, &stats), "add_sdpa");
  spec.output(g, out);
  if (v.stats) spec.output(g, stats);
}

TEST(gpu_sdpa) {
  REQUIRE_GPU();
  const SdpaVariant variants[] = {
      {"sdpa_noncausal", 2, 4, 4, 128, 128, 64, false, false, false, false, false},
      {"sdpa_causal_top_left", 2, 4, 4, 128, 128, 64, true, false, false, false, false},
      {"sdpa_causal_bottom_right", 2, 4, 4, 64, 128, 64, true, true, false, false, false},
      {"sdpa_gqa_causal", 2, 8, 2, 128, 128, 64, true, false, false, false, false},
      {"sdpa_stats", 2, 4, 4, 128, 128, 64, false, false, true, false, false},
      {"sdpa_bias", 2, 4, 4, 128, 128, 64, false, false, false, true, false},
      {"sdpa_bshd_causal_stats", 2, 4, 4, 128, 128, 128, true, false, true, false, true},
  };
  for (const SdpaVariant &v : variants)
    for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16})
      check_case(
          "sdpa", v.name, dt, [&](cudnnfe_graph_t *g, Spec &spec) { build_sdpa(g, spec, v, dt); },
          kSdpaRtol);
  // FLOAT attention has no flash engine, but cuDNN runs the composite graph
  // on a generic runtime-fusion engine.
  for (const SdpaVariant &v : {variants[0], variants[1]})
    check_case(
        "sdpa", v.name, CUDNNFE_DTYPE_FLOAT,
        [&](cudnnfe_graph_t *g, Spec &spec) { build_sdpa(g, spec, v, CUDNNFE_DTYPE_FLOAT); },
        kSdpaRtol);
}

// ---------------------------------------------------------------------------
// Refusals and a missing cuDNN

TEST(gpu_not_supported_message) {
  REQUIRE_GPU();
  // cuDNN's standalone pointwise engines take channels-last layouts only: a
  // row-major NCHW add is refused, and the refusal must say what, where and
  // why.
  GraphPtr g = new_graph("nchw_add", CUDNNFE_DTYPE_FLOAT);
  int64_t a = input(g.get(), "a", CUDNNFE_DTYPE_FLOAT, kPointwiseDims);
  int64_t b = input(g.get(), "b", CUDNNFE_DTYPE_FLOAT, kPointwiseDims);
  ok(cudnnfe_tensor_set_output(g.get(), pointwise(g.get(), CUDNNFE_POINTWISE_ADD, a, b), 1),
     "set_output");
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  CHECK_FAILS(cudnnfe_graph_build(g.get(), test_handle(), &options), CUDNNFE_STATUS_NOT_SUPPORTED,
              "nchw_add", "pointwise \"", "ADD", "cuDNN 9.", "sm_", "LAYOUT");
  std::printf("  message: %s\n", cudnnfe_graph_last_error(g.get()));
}

constexpr const char *kMissingCudnn = "/nonexistent/libcudnn.so.9";

TEST(gpu_cudnn_unavailable) {
  const char *env = std::getenv("CUDNNFE_CUDNN_LIBRARY");
  if (env && std::string(env) == kMissingCudnn) {
    // The child: cuDNN cannot load, so GPU calls say so and AUTO falls back.
    int64_t version = 0;
    CHECK_FAILS(cudnnfe_cudnn_version(&version), CUDNNFE_STATUS_CUDNN_UNAVAILABLE, kMissingCudnn,
                "CUDNNFE_CUDNN_LIBRARY");
    std::printf("  message: %s\n", cudnnfe_last_error());
    for (cudnnfe_target_t target : {CUDNNFE_TARGET_GPU, CUDNNFE_TARGET_AUTO}) {
      GraphPtr g = new_graph("no_cudnn", CUDNNFE_DTYPE_FLOAT);
      int64_t a = input(g.get(), "a", CUDNNFE_DTYPE_FLOAT, {8, 8});
      int64_t b = input(g.get(), "b", CUDNNFE_DTYPE_FLOAT, {8, 8});
      ok(cudnnfe_tensor_set_output(g.get(), matmul(g.get(), a, b), 1), "set_output");
      cudnnfe_build_options_t options;
      cudnnfe_build_options_init(&options);
      options.target = target;
      cudnnfe_status_t s = cudnnfe_graph_build(g.get(), nullptr, &options);
      if (target == CUDNNFE_TARGET_GPU) {
        CHECK(s == CUDNNFE_STATUS_CUDNN_UNAVAILABLE);
        CHECK(std::strstr(cudnnfe_graph_last_error(g.get()), kMissingCudnn) != nullptr);
      } else {
        CHECK_MSG(s != CUDNNFE_STATUS_CUDNN_UNAVAILABLE, "AUTO must fall back to the CPU: %s",
                  cudnnfe_graph_last_error(g.get()));
        cudnnfe_target_t built = CUDNNFE_TARGET_GPU;
        if (s == CUDNNFE_STATUS_OK) {
          cudnnfe_graph_get_target(g.get(), &built);
          CHECK(built == CUDNNFE_TARGET_CPU_REFERENCE);
        }
      }
    }
    return;
  }
  // The parent: cuDNN loads once per process, so run this case again in a
  // child whose environment points at a library that does not exist.
  std::fflush(stdout);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("CUDNNFE_CUDNN_LIBRARY", kMissingCudnn, 1);
    execl("/proc/self/exe", "/proc/self/exe", "gpu_cudnn_unavailable",
          static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child run failed (status %d)",
            status);
}

// ---------------------------------------------------------------------------
// Threads and streams

TEST(gpu_threads_streams) {
  REQUIRE_GPU();
  // One built graph, executed by several threads at once, each with its own
  // handle, stream, output and workspace; all must match a single run.
  const cudnnfe_dtype_t dt = CUDNNFE_DTYPE_HALF;
  GraphPtr g = new_graph("threads", dt);
  Spec spec;
  int64_t a = input(g.get(), "a", dt, {4, 64, 32});
  int64_t b = input(g.get(), "b", dt, {4, 32, 48});
  int64_t c = matmul(g.get(), a, b);
  ok(cudnnfe_tensor_set_output(g.get(), c, 1), "set_output");
  cudnnfe_build_options_t options;
  cudnnfe_build_options_init(&options);
  options.target = CUDNNFE_TARGET_GPU;
  REQUIRE_OK(cudnnfe_graph_build(g.get(), nullptr, &options));
  int64_t ws_size = 0;
  REQUIRE_OK(cudnnfe_graph_get_workspace_size(g.get(), &ws_size));
  TensorInfo ta = describe(g.get(), a), tb = describe(g.get(), b), tc = describe(g.get(), c);
  std::mt19937 rng(7);
  auto ha = random_bytes(ta, Fill{}, rng), hb = random_bytes(tb, Fill{}, rng);
  gpu::DeviceBuffer da(ta.bytes), db(tb.bytes);
  REQUIRE(da.ok() && db.ok());
  gpu::runtime().Memcpy(da.get(), ha.data(), ta.bytes, gpu::kHostToDevice);
  gpu::runtime().Memcpy(db.get(), hb.data(), tb.bytes, gpu::kHostToDevice);

  constexpr int kThreads = 4, kRuns = 25;
  std::vector<std::vector<unsigned char>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      cudnnfe_handle_t *h = nullptr;
      if (cudnnfe_handle_create(&h, -1) != CUDNNFE_STATUS_OK) {
        errors[t] = "handle_create failed";
        return;
      }
      void *stream = nullptr;
      gpu::runtime().StreamCreate(&stream);
      gpu::DeviceBuffer dc(tc.bytes), ws(static_cast<size_t>(ws_size));
      cudnnfe_binding_t bind[] = {{a, da.get()}, {b, db.get()}, {c, dc.get()}};
      for (int r = 0; r < kRuns && errors[t].empty(); ++r) {
        // Alternate streams so that the handle's stream really changes.
        void *s = (r % 2) ? stream : nullptr;
        if (cudnnfe_graph_execute(g.get(), h, bind, 3, ws.get(), static_cast<size_t>(ws_size), s) !=
            CUDNNFE_STATUS_OK)
          errors[t] = cudnnfe_handle_last_error(h);
      }
      gpu::runtime().StreamSynchronize(stream);
      gpu::runtime().DeviceSynchronize();
      results[t].resize(tc.bytes);
      gpu::runtime().Memcpy(results[t].data(), dc.get(), tc.bytes, gpu::kDeviceToHost);
      gpu::runtime().StreamDestroy(stream);
      cudnnfe_handle_destroy(h);
    });
  }
  for (std::thread &t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    CHECK_MSG(errors[t].empty(), "thread %d: %s", t, errors[t].c_str());
    CHECK_MSG(results[t] == results[0], "thread %d's output differs from thread 0's", t);
  }
  std::printf("  %d threads x %d runs on alternating streams agree\n", kThreads, kRuns);
}

// ---------------------------------------------------------------------------

// ---------------------------------------------------------------------------
// Patterns cuDNN 9.19 computes wrongly (docs/refusals.md, class 3), found by
// the differential tester (tests/differential; its seeds in the names): the
// graphs that cudnnfe still builds must now be right, the others refused.

TEST(gpu_cudnn_known_wrong_patterns) {
  REQUIRE_GPU();
  for (cudnnfe_dtype_t dt : {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16}) {
    // NCHW conv_fprop + ReLU: engine 7's kernel 29 and engine 4 got it wrong;
    // the builder skips them (src/backend/known_wrong_configs.cpp). The 3-D
    // grouped case has no other configuration on cuDNN 9.14 (refused there).
    const ConvGeometry relu_cases[] = {
        {"relu_nchw_seed122", {4, 2, 12, 7}, {2, 2, 3, 3}, {2, 3}, {2, 2}, {1, 2}, false},
        {"3d_groups3_relu_ncdhw_seed63",
         {2, 9, 6, 3, 6},
         {15, 3, 2, 3, 2},
         {1, 1, 0},
         {2, 1, 2},
         {1, 2, 1},
         false},
    };
    for (const ConvGeometry &geo : relu_cases)
      check_case(
          "known_wrong", std::string("conv_") + geo.name, dt,
          [&](cudnnfe_graph_t *g, Spec &spec) {
            int64_t x = input(g, "x", dt, geo.x, geo.layout(geo.x));
            int64_t w = input(g, "w", dt, geo.w, geo.layout(geo.w));
            cudnnfe_conv_options_t o = geo.options();
            int64_t y = 0;
            ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &y), "add_conv_fprop");
            spec.output(g, pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, y));
          },
          case_rtol(dt), geo.spatial() == 3 ? Expect::kMayRefuse : Expect::kBuilds);
    // A batch of dot products (M = N = 1) + bias + GELU: engine 0 got it
    // wrong; the builder skips engine 0 for it.
    check_case(
        "known_wrong", "matmul_M1_N1_bias_gelu_seed116", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t a = input(g, "a", dt, {4, 1, 86});
          int64_t b = input(g, "b", dt, {4, 86, 1});
          int64_t bias = input(g, "bias", dt, {4, 1, 1});
          int64_t c = pointwise(g, CUDNNFE_POINTWISE_ADD, matmul(g, a, b), bias);
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_GELU_FWD, c));
        },
        case_rtol(dt));
    // Pointwise-only graphs: a two-dim broadcast after another op, and an
    // output whose first dim is innermost, are refused.
    check_case(
        "known_wrong", "pointwise_NEG_ADD_broadcast_2dims_chain_seed55", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          int64_t x = input(g, "x", dt, {4, 6, 10});
          int64_t b = input(g, "b", dt, {1, 6, 1});
          spec.output(
              g, pointwise(g, CUDNNFE_POINTWISE_ADD, pointwise(g, CUDNNFE_POINTWISE_NEG, x), b));
        },
        case_rtol(dt), Expect::kRefuses);
    check_case(
        "known_wrong", "pointwise_NEG_first_dim_innermost_seed635", dt,
        [&](cudnnfe_graph_t *g, Spec &spec) {
          // [8,9,12] stored with dim 1 outermost and dim 0 innermost.
          int64_t x = input(g, "x", dt, {8, 9, 12}, {1, 96, 8});
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_NEG, x));
        },
        case_rtol(dt), Expect::kRefuses);
  }
}

TEST(gpu_zz_summary) {
  REQUIRE_GPU();
  std::printf("  worst error per op family:\n");
  for (const auto &[family, w] : worst_by_family())
    std::printf("    %-12s %3d outputs  max_abs %.2e  max_rel %.2e  (%s)\n", family.c_str(),
                w.cases, w.max_abs, w.max_rel, w.where.c_str());
  std::printf("  configurations cuDNN refused (%zu):\n", refusals().size());
  for (const std::string &r : refusals()) std::printf("    %s\n", r.c_str());
}

}  // namespace
