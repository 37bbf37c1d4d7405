// Degenerate shapes (dims of size 1) on the GPU against the CPU reference:
// convolutions with C, K, N, H or W = 1 (the three cases of the corpus run
// that found NHWC convolutions with C = 1 returning wrong values among
// them), matmuls with M, N or K = 1, norms with C = 1 or a size-1 feature
// dim, pointwise broadcasts of size-1 dims, and attention with s_q = 1,
// s_kv = 1 or h = 1, each in NCHW and NHWC (BHSD and BSHD). Outputs keep the
// layouts inference gives them; where a caller allocates a known layout
// (channels-last conv outputs as cudnn-frontend's callers do, row-major
// matmul outputs, q's layout for attention) the case also checks that the
// graph's strides address that memory.
//
// Every case is counted and printed with its largest errors; a case cuDNN
// refuses is listed as refused (not passed); the last test prints the
// counts. Without a GPU every test skips with the reason.
#include <string>
#include <vector>

#include "gpu_case_runner.h"

namespace {

using namespace gpu_test;
using namespace test_layouts;

constexpr cudnnfe_dtype_t kConvTypes[] = {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF};
constexpr cudnnfe_dtype_t kMatmulTypes[] = {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF,
                                            CUDNNFE_DTYPE_BFLOAT16};
constexpr cudnnfe_dtype_t kAttentionTypes[] = {CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16};

int64_t input(cudnnfe_graph_t *g, const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
              const Dims &strides) {
  int64_t uid = 0;
  ok(cudnnfe_graph_add_tensor(g, name, dtype, static_cast<int32_t>(dims.size()), dims.data(),
                              strides.data(), &uid),
     "cudnnfe_graph_add_tensor");
  return uid;
}

int64_t pointwise(cudnnfe_graph_t *g, cudnnfe_pointwise_mode_t mode, int64_t a, int64_t b = 0) {
  int64_t out = 0;
  ok(cudnnfe_graph_add_pointwise(g, mode, a, b, 0, nullptr, &out), "add_pointwise");
  return out;
}

const char *layout_name(bool nhwc) {
  return nhwc ? "nhwc" : "nchw";
}

// ---------------------------------------------------------------------------
// Convolutions

struct Conv {
  std::string name;
  Dims x, w;
  Dims pad, stride, dilation;
  bool bias = false;                             // a bias epilogue (y + b[1,K,1,...])
  cudnnfe_dtype_t only = CUDNNFE_DTYPE_NOT_SET;  // the corpus case's one type
  int layouts = 3;                               // bit 0: NCHW, bit 1: NHWC

  Dims y() const {
    Dims y = {x[0], w[0]};
    for (size_t i = 2; i < x.size(); ++i)
      y.push_back((x[i] + 2 * pad[i - 2] - dilation[i - 2] * (w[i] - 1) - 1) / stride[i - 2] + 1);
    return y;
  }
  cudnnfe_conv_options_t options() const {
    cudnnfe_conv_options_t o;
    cudnnfe_conv_options_init(&o);
    for (size_t i = 0; i < pad.size(); ++i) {
      o.pre_padding[i] = o.post_padding[i] = pad[i];
      o.stride[i] = stride[i];
      o.dilation[i] = dilation[i];
    }
    return o;
  }
};

const std::vector<Conv> &convs() {
  static const std::vector<Conv> cases = [] {
    std::vector<Conv> c = {
        {"c1", {4, 1, 16, 12}, {32, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
        {"k1", {4, 16, 16, 12}, {1, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
        {"n1", {1, 16, 16, 12}, {32, 16, 3, 3}, {1, 1}, {2, 2}, {1, 1}},
        {"h1", {4, 16, 1, 24}, {32, 16, 1, 3}, {0, 1}, {1, 1}, {1, 1}},
        {"w1", {4, 16, 24, 1}, {32, 16, 3, 1}, {1, 0}, {1, 1}, {1, 1}},
        {"n1_c1_k1", {1, 1, 16, 16}, {1, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
        {"3d_c1", {2, 1, 4, 8, 8}, {16, 1, 3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},
    };
    // The corpus cases, in their types and NHWC as found, then in NCHW too.
    Conv a{"corpus_x1x1x36x16_w196x1x5x7_bias",
           {1, 1, 36, 16},
           {196, 1, 5, 7},
           {1, 1},
           {1, 1},
           {1, 1}};
    a.bias = true;
    a.only = CUDNNFE_DTYPE_FLOAT;
    Conv b{"corpus_x2x1x4x4_w196x1x3x1", {2, 1, 4, 4}, {196, 1, 3, 1}, {1, 0}, {1, 2}, {1, 1}};
    b.only = CUDNNFE_DTYPE_HALF;
    Conv d{"corpus_x2x1x36x49x81_w256x1x1x3x1",
           {2, 1, 36, 49, 81},
           {256, 1, 1, 3, 1},
           {0, 0, 0},
           {2, 1, 1},
           {1, 1, 2}};
    d.only = CUDNNFE_DTYPE_HALF;
    for (Conv *corpus : {&a, &b, &d}) c.push_back(*corpus);
    return c;
  }();
  return cases;
}

enum class ConvKind { kFprop, kDgrad, kWgrad };

void conv_case(const Conv &c, ConvKind kind, bool nhwc, cudnnfe_dtype_t dt) {
  const char *what = kind == ConvKind::kFprop   ? "fprop"
                     : kind == ConvKind::kDgrad ? "dgrad"
                                                : "wgrad";
  const std::string label = std::string("conv_") + what + "_" + c.name + "_" + layout_name(nhwc);
  run_gpu_case(
      label, dt,
      [&](cudnnfe_graph_t *g, CaseSpec &spec) {
        auto layout = [&](const Dims &d) { return nhwc ? channels_last(d) : packed(d); };
        const cudnnfe_conv_options_t o = c.options();
        const int32_t rank = static_cast<int32_t>(c.x.size());
        const Dims yd = c.y();
        int64_t out = 0;
        Dims out_dims;
        if (kind == ConvKind::kFprop) {
          const int64_t x = input(g, "x", dt, c.x, layout(c.x));
          const int64_t w = input(g, "w", dt, c.w, layout(c.w));
          ok(cudnnfe_graph_add_conv_fprop(g, x, w, &o, &out), "add_conv_fprop");
          out_dims = yd;
          if (c.bias) {
            Dims bd(c.x.size(), 1);
            bd[1] = c.w[0];
            const int64_t b = input(g, "b", dt, bd, layout(bd));
            // The conv output (virtual) feeds the epilogue: its layout is
            // the one the add takes over.
            out = pointwise(g, CUDNNFE_POINTWISE_ADD, out, b);
          }
        } else if (kind == ConvKind::kDgrad) {
          const int64_t dy = input(g, "dy", dt, yd, layout(yd));
          const int64_t w = input(g, "w", dt, c.w, layout(c.w));
          ok(cudnnfe_graph_add_conv_dgrad(g, dy, w, &o, &out), "add_conv_dgrad");
          ok(cudnnfe_tensor_set_dims(g, out, rank, c.x.data()), "set_dims");
          out_dims = c.x;
        } else {
          const int64_t x = input(g, "x", dt, c.x, layout(c.x));
          const int64_t dy = input(g, "dy", dt, yd, layout(yd));
          ok(cudnnfe_graph_add_conv_wgrad(g, x, dy, &o, &out), "add_conv_wgrad");
          ok(cudnnfe_tensor_set_dims(g, out, rank, c.w.data()), "set_dims");
          out_dims = c.w;
        }
        // cudnn-frontend's callers allocate conv outputs channels-last (its
        // default; the corpus binds torch channels_last tensors).
        spec.output(g, out, channels_last(out_dims));
      },
      case_rtol(dt));
}

void conv_family(ConvKind kind) {
  for (const Conv &c : convs())
    for (bool nhwc : {false, true}) {
      if (!(c.layouts & (nhwc ? 2 : 1))) continue;
      for (cudnnfe_dtype_t dt : kConvTypes)
        if (c.only == CUDNNFE_DTYPE_NOT_SET || c.only == dt) conv_case(c, kind, nhwc, dt);
    }
}

TEST(gpu_degenerate_conv_fprop) {
  REQUIRE_GPU();
  conv_family(ConvKind::kFprop);
}

TEST(gpu_degenerate_conv_dgrad) {
  REQUIRE_GPU();
  conv_family(ConvKind::kDgrad);
}

TEST(gpu_degenerate_conv_wgrad) {
  REQUIRE_GPU();
  conv_family(ConvKind::kWgrad);
}

// ---------------------------------------------------------------------------
// Matmul with M, N or K = 1

TEST(gpu_degenerate_matmul) {
  REQUIRE_GPU();
  const struct {
    const char *name;
    Dims a, b;
  } cases[] = {
      {"m1", {2, 1, 64}, {2, 64, 48}},         {"n1", {2, 32, 64}, {2, 64, 1}},
      {"k1", {2, 32, 1}, {2, 1, 48}},          {"m1_n1", {3, 1, 64}, {3, 64, 1}},
      {"m1_bcast_a", {1, 1, 64}, {4, 64, 32}}, {"n1_bcast_b", {4, 32, 64}, {1, 64, 1}},
      {"k1_bcast_a", {1, 32, 1}, {4, 1, 16}},
  };
  const char *layouts[] = {"plain", "a_transposed", "b_transposed"};
  for (const auto &c : cases)
    for (int layout = 0; layout < 3; ++layout)
      for (cudnnfe_dtype_t dt : kMatmulTypes)
        run_gpu_case(
            std::string("matmul_") + c.name + "_" + layouts[layout], dt,
            [&](cudnnfe_graph_t *g, CaseSpec &spec) {
              const int64_t a =
                  input(g, "a", dt, c.a, layout == 1 ? transposed_matrices(c.a) : packed(c.a));
              const int64_t b =
                  input(g, "b", dt, c.b, layout == 2 ? transposed_matrices(c.b) : packed(c.b));
              int64_t out = 0;
              ok(cudnnfe_graph_add_matmul(g, a, b, nullptr, &out), "add_matmul");
              const Dims cd = {std::max(c.a[0], c.b[0]), c.a[1], c.b[2]};
              spec.output(g, out, packed(cd));
            },
            case_rtol(dt));
}

// ---------------------------------------------------------------------------
// Norms with C = 1 or a size-1 feature dim

TEST(gpu_degenerate_layernorm_and_rmsnorm) {
  REQUIRE_GPU();
  const Dims shapes[] = {{16, 1, 8, 8}, {16, 64, 1, 1}, {16, 1, 1, 64}};
  for (const Dims &xd : shapes)
    for (bool nhwc : {false, true})
      for (bool rms : {false, true})
        for (cudnnfe_dtype_t dt : kConvTypes) {
          std::string label = std::string(rms ? "rmsnorm_" : "layernorm_") + "x";
          for (int64_t d : xd) label += std::to_string(d) + "x";
          label.pop_back();
          run_gpu_case(
              label + "_" + layout_name(nhwc), dt,
              [&](cudnnfe_graph_t *g, CaseSpec &spec) {
                ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "compute");
                ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "intermediate");
                Dims pd = xd;
                pd[0] = 1;
                const Dims xs = nhwc ? channels_last(xd) : packed(xd);
                const Dims ps = nhwc ? channels_last(pd) : packed(pd);
                const int64_t x = input(g, "x", dt, xd, xs);
                const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, pd, ps);
                const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, pd, ps);
                int64_t y = 0, mean = 0, inv = 0;
                if (rms)
                  ok(cudnnfe_graph_add_rmsnorm(g, x, scale, bias, nullptr, &y, &inv), "rmsnorm");
                else
                  ok(cudnnfe_graph_add_layernorm(g, x, scale, bias, nullptr, &y, &mean, &inv),
                     "layernorm");
                spec.output(g, y, xs);  // y is laid out as x
                spec.output(g, inv);
                if (!rms) spec.output(g, mean);
              },
              case_rtol(dt));
        }
}

TEST(gpu_degenerate_batchnorm) {
  REQUIRE_GPU();
  const Dims shapes[] = {{4, 1, 8, 8}, {8, 32, 1, 1}, {1, 16, 8, 8}};
  for (const Dims &xd : shapes)
    for (bool nhwc : {false, true})
      for (cudnnfe_dtype_t dt : kConvTypes) {
        std::string label = "batchnorm_x";
        for (int64_t d : xd) label += std::to_string(d) + "x";
        label.pop_back();
        run_gpu_case(
            label + "_" + layout_name(nhwc), dt,
            [&](cudnnfe_graph_t *g, CaseSpec &spec) {
              ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "compute");
              ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "intermediate");
              const Dims cd = {1, xd[1], 1, 1};
              const Dims xs = nhwc ? channels_last(xd) : packed(xd);
              const int64_t x = input(g, "x", dt, xd, xs);
              const int64_t scale = input(g, "scale", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
              const int64_t bias = input(g, "bias", CUDNNFE_DTYPE_FLOAT, cd, channels_last(cd));
              int64_t y = 0, mean = 0, inv = 0;
              ok(cudnnfe_graph_add_batchnorm(g, x, scale, bias, 0, 0, nullptr, &y, &mean, &inv,
                                             nullptr, nullptr),
                 "add_batchnorm");
              spec.output(g, y, xs);
              spec.output(g, mean);
              spec.output(g, inv);
            },
            case_rtol(dt));
      }
}

// ---------------------------------------------------------------------------
// Pointwise broadcasts of size-1 dims

TEST(gpu_degenerate_pointwise_broadcast) {
  REQUIRE_GPU();
  for (int64_t k : {16, 512})  // the bias smaller, then larger, than x
    for (bool nhwc : {false, true})
      for (cudnnfe_dtype_t dt : kConvTypes)
        run_gpu_case(
            "add_x2x1x8x8_bias1x" + std::to_string(k) + "x1x1_" + layout_name(nhwc), dt,
            [&](cudnnfe_graph_t *g, CaseSpec &spec) {
              const Dims xd = {2, 1, 8, 8}, bd = {1, k, 1, 1}, od = {2, k, 8, 8};
              const int64_t x = input(g, "x", dt, xd, nhwc ? channels_last(xd) : packed(xd));
              const int64_t b = input(g, "b", dt, bd, nhwc ? channels_last(bd) : packed(bd));
              spec.output(g, pointwise(g, CUDNNFE_POINTWISE_ADD, x, b),
                          nhwc ? channels_last(od) : packed(od));
            },
            case_rtol(dt));
  for (cudnnfe_dtype_t dt : kConvTypes) {
    run_gpu_case(
        "mul_1x1x1x32_by_4x1x8x1", dt,
        [&](cudnnfe_graph_t *g, CaseSpec &spec) {
          const int64_t p = input(g, "p", dt, {1, 1, 1, 32}, {32, 32, 32, 1});
          const int64_t q = input(g, "q", dt, {4, 1, 8, 1}, {8, 8, 1, 1});
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_MUL, p, q), packed({4, 1, 8, 32}));
        },
        case_rtol(dt));
    run_gpu_case(
        "relu_x4x1x8x8_nhwc", dt,
        [&](cudnnfe_graph_t *g, CaseSpec &spec) {
          const Dims xd = {4, 1, 8, 8};
          const int64_t x = input(g, "x", dt, xd, channels_last(xd));
          spec.output(g, pointwise(g, CUDNNFE_POINTWISE_RELU_FWD, x), channels_last(xd));
        },
        case_rtol(dt));
  }
}

// ---------------------------------------------------------------------------
// Attention with s_q = 1, s_kv = 1 or h = 1

TEST(gpu_degenerate_sdpa) {
  REQUIRE_GPU();
  const struct {
    const char *name;
    int64_t b, h, sq, skv, d;
    bool causal;
  } cases[] = {
      {"h1", 2, 1, 128, 128, 64, false},    {"h1_causal", 2, 1, 128, 128, 64, true},
      {"sq1", 2, 4, 1, 128, 64, false},     {"skv1", 2, 4, 64, 1, 64, false},
      {"h1_sq1", 2, 1, 1, 64, 64, false},   {"sq1_skv1", 2, 4, 1, 1, 64, false},
      {"b1_h1", 1, 1, 128, 96, 128, false},
  };
  for (const auto &c : cases)
    for (bool bshd : {false, true})
      for (cudnnfe_dtype_t dt : kAttentionTypes)
        run_gpu_case(
            std::string("sdpa_") + c.name + (bshd ? "_bshd" : "_bhsd"), dt,
            [&](cudnnfe_graph_t *g, CaseSpec &spec) {
              ok(cudnnfe_graph_set_compute_dtype(g, CUDNNFE_DTYPE_FLOAT), "compute");
              ok(cudnnfe_graph_set_intermediate_dtype(g, CUDNNFE_DTYPE_FLOAT), "intermediate");
              auto dims = [&](int64_t s) { return Dims{c.b, c.h, s, c.d}; };
              auto strides = [&](int64_t s) {
                return bshd ? Dims{s * c.h * c.d, c.d, c.h * c.d, 1} : packed(dims(s));
              };
              const int64_t q = input(g, "q", dt, dims(c.sq), strides(c.sq));
              const int64_t k = input(g, "k", dt, dims(c.skv), strides(c.skv));
              const int64_t v = input(g, "v", dt, dims(c.skv), strides(c.skv));
              cudnnfe_sdpa_options_t o;
              cudnnfe_sdpa_options_init(&o);
              o.generate_stats = 1;
              o.causal_mask = c.causal ? 1 : 0;
              int64_t out = 0, stats = 0;
              ok(cudnnfe_graph_add_sdpa(g, q, k, v, &o, &out, &stats), "add_sdpa");
              spec.output(g, out, strides(c.sq));  // O is laid out as q
              spec.output(g, stats);
            },
            2e-2);
}

// Runs last (registration order): the counts of every case above.
TEST(gpu_degenerate_summary) {
  REQUIRE_GPU();
  print_case_summary("gpu_degenerate");
  CHECK(case_tally().failed == 0);
  CHECK(case_tally().passed > 0);
}

}  // namespace
