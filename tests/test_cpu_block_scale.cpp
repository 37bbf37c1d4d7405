// The CPU reference of block-scale quantize and dequantize (MXFP8) against
// a straightforward computation written here, through the public C API:
// the FP8_E8M0 data type's conversions, exact small cases, random blocks
// along every axis and layout, quantize -> dequantize error bounds, bad
// inputs and the graph JSON round trip (docs/layout-ops.md, "Block
// scaling").
// Uses the experimental part of the header (include/cudnnfe/cudnnfe.h).
#define CUDNNFE_EXPERIMENTAL
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness.h"

namespace {

using Dims = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

class G {
 public:
  G() { cudnnfe_graph_create(&g_); }
  ~G() { cudnnfe_graph_destroy(g_); }
  G(const G &) = delete;
  G &operator=(const G &) = delete;
  cudnnfe_graph_t *get() const { return g_; }

  int64_t input(const char *name, cudnnfe_dtype_t dtype, const Dims &dims,
                const Dims &strides = {}) {
    int64_t uid = 0;
    CHECK_OK(cudnnfe_graph_add_tensor(g_, name, dtype, static_cast<int32_t>(dims.size()),
                                      dims.data(), strides.empty() ? nullptr : strides.data(),
                                      &uid));
    return uid;
  }
  void output(int64_t uid) { CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1)); }
  cudnnfe_status_t build_status() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    return cudnnfe_graph_build(g_, nullptr, &o);
  }
  bool build() {
    cudnnfe_status_t s = build_status();
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  build failed: %s: %s\n", cudnnfe_status_name(s), cudnnfe_graph_last_error(g_));
    return s == CUDNNFE_STATUS_OK;
  }
  bool run(const std::vector<cudnnfe_binding_t> &bindings) const {
    cudnnfe_handle_t *h = nullptr;
    cudnnfe_handle_create(&h, -1);
    cudnnfe_status_t s =
        cudnnfe_graph_execute(g_, h, bindings.data(), bindings.size(), nullptr, 0, nullptr);
    if (s != CUDNNFE_STATUS_OK)
      std::printf("  execute failed: %s: %s\n", cudnnfe_status_name(s),
                  cudnnfe_handle_last_error(h));
    cudnnfe_handle_destroy(h);
    return s == CUDNNFE_STATUS_OK;
  }
  Dims dims(int64_t uid) const { return shape(uid, true); }
  Dims strides(int64_t uid) const { return shape(uid, false); }
  cudnnfe_dtype_t dtype(int64_t uid) const {
    cudnnfe_dtype_t t = CUDNNFE_DTYPE_NOT_SET;
    CHECK_OK(cudnnfe_tensor_get_dtype(g_, uid, &t));
    return t;
  }

 private:
  Dims shape(int64_t uid, bool want_dims) const {
    int64_t d[CUDNNFE_MAX_DIMS], s[CUDNNFE_MAX_DIMS];
    int32_t rank = 0;
    CHECK_OK(cudnnfe_tensor_get_shape(g_, uid, d, s, CUDNNFE_MAX_DIMS, &rank));
    const int64_t *src = want_dims ? d : s;
    return Dims(src, src + rank);
  }
  cudnnfe_graph_t *g_ = nullptr;
};

cudnnfe_block_scale_options_t options(int32_t block_size, int32_t axis, bool transpose = false,
                                      cudnnfe_dtype_t y_dtype = CUDNNFE_DTYPE_FP8_E4M3) {
  cudnnfe_block_scale_options_t o;
  cudnnfe_block_scale_options_init(&o);
  o.block_size = block_size;
  o.axis = axis;
  o.transpose = transpose ? 1 : 0;
  o.y_dtype = y_dtype;
  return o;
}

// ---- the straightforward computation ----

// FP8 values from their bit fields (OCP FP8: E4M3 has no infinity, 0x7f
// and 0xff are NaN; E5M2 is IEEE-like).
double fp8_value(unsigned bits, cudnnfe_dtype_t t) {
  const bool e4m3 = t == CUDNNFE_DTYPE_FP8_E4M3;
  const int man_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const unsigned e = (bits >> man_bits) & (e4m3 ? 0xf : 0x1f);
  const unsigned m = bits & ((1u << man_bits) - 1);
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  if (e4m3 && (bits & 0x7f) == 0x7f) return std::nan("");
  if (!e4m3 && e == 0x1f) return m ? std::nan("") : sign * INFINITY;
  if (e == 0) return sign * m * std::pow(2.0, 1 - bias - man_bits);
  return sign * ((1u << man_bits) + m) * std::pow(2.0, static_cast<int>(e) - bias - man_bits);
}

double fp8_max(cudnnfe_dtype_t t) {
  return t == CUDNNFE_DTYPE_FP8_E4M3 ? 448.0 : 57344.0;
}

// v rounded to the nearest FP8 value (ties: even last mantissa bit),
// saturating at the largest finite value: by search over all 256 codes.
double fp8_round(double v, cudnnfe_dtype_t t) {
  if (std::isnan(v)) return v;
  if (v >= fp8_max(t)) return fp8_max(t);
  if (v <= -fp8_max(t)) return -fp8_max(t);
  double best = 0.0, best_err = INFINITY;
  unsigned best_bits = 0;
  for (unsigned bits = 0; bits < 256; ++bits) {
    const double f = fp8_value(bits, t);
    if (!std::isfinite(f)) continue;
    const double err = std::fabs(f - v);
    if (err < best_err || (err == best_err && (bits & 1) == 0 && (best_bits & 1) == 1)) {
      best = f;
      best_err = err;
      best_bits = bits;
    }
  }
  return v < 0 && best == 0.0 ? -0.0 : best;
}

// The smallest power of two 2^k >= r, k clamped to -127..127: the exponent.
int round_up_exponent(double r) {
  int k = -127;
  while (k < 127 && std::ldexp(1.0, k) < r) ++k;
  return k;
}

// Expected scale exponent of a block: amax / max in float, rounded up.
int block_exponent(double amax, cudnnfe_dtype_t y) {
  const float ratio = static_cast<float>(amax) / static_cast<float>(fp8_max(y));
  return round_up_exponent(ratio);
}

float half_round(float v, cudnnfe_dtype_t t) {  // representable input values
  if (t == CUDNNFE_DTYPE_BFLOAT16) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    b &= 0xffff0000u;  // truncation gives some bf16 value
    std::memcpy(&v, &b, 4);
    return v;
  }
  if (t == CUDNNFE_DTYPE_HALF) {
    // A value with 11 significant bits and an exponent well inside half's range.
    int e = 0;
    const double f = std::frexp(v, &e);
    return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(f, 11)), e - 11));
  }
  return v;
}

// Host buffer of `dtype` holding `values` (float/half/bf16 for inputs).
uint16_t to_half(float v) {  // exact for the values half_round makes
  if (v == 0) return std::signbit(v) ? 0x8000 : 0;
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);  // |v| = f * 2^e
  const unsigned man = static_cast<unsigned>(std::ldexp(f, 11)) & 0x3ff;
  const unsigned exp = static_cast<unsigned>(e - 1 + 15);
  return static_cast<uint16_t>((v < 0 ? 0x8000 : 0) | (exp << 10) | man);
}

// The values of a buffer pack() made.
std::vector<float> unpack(const Bytes &bytes, cudnnfe_dtype_t t) {
  const size_t size = t == CUDNNFE_DTYPE_FLOAT ? 4 : 2;
  std::vector<float> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    if (t == CUDNNFE_DTYPE_FLOAT) {
      std::memcpy(&out[i], &bytes[i * 4], 4);
      continue;
    }
    uint16_t h;
    std::memcpy(&h, &bytes[i * 2], 2);
    if (t == CUDNNFE_DTYPE_BFLOAT16) {
      const uint32_t b = static_cast<uint32_t>(h) << 16;
      std::memcpy(&out[i], &b, 4);
      continue;
    }
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const double magnitude =
        exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
    out[i] = static_cast<float>((h & 0x8000) ? -magnitude : magnitude);
  }
  return out;
}

Bytes pack(const std::vector<float> &values, cudnnfe_dtype_t t) {
  const size_t size = t == CUDNNFE_DTYPE_FLOAT ? 4 : 2;
  Bytes out(values.size() * size);
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == CUDNNFE_DTYPE_FLOAT) {
      std::memcpy(&out[i * 4], &values[i], 4);
    } else if (t == CUDNNFE_DTYPE_BFLOAT16) {
      uint32_t b;
      std::memcpy(&b, &values[i], 4);
      const uint16_t h = static_cast<uint16_t>(b >> 16);
      std::memcpy(&out[i * 2], &h, 2);
    } else {
      const uint16_t h = to_half(values[i]);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

int64_t product(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

int64_t offset_of(const Dims &index, const Dims &strides) {
  int64_t o = 0;
  for (size_t i = 0; i < index.size(); ++i) o += index[i] * strides[i];
  return o;
}

bool next(Dims &index, const Dims &dims) {
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// Quantizes random x of `dims` (x strides `x_strides`, empty: packed) on
// the CPU reference and checks every scale byte and y value against the
// computation above.
void check_quantize(cudnnfe_dtype_t x_type, cudnnfe_dtype_t y_type, const Dims &dims,
                    const Dims &x_strides, int32_t block, int32_t axis, bool transpose,
                    unsigned seed) {
  G g;
  const int64_t x = g.input("x", x_type, dims, x_strides);
  cudnnfe_block_scale_options_t o = options(block, axis, transpose, y_type);
  int64_t y = 0, scale = 0;
  CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &scale));
  g.output(y);
  g.output(scale);
  if (!g.build()) {
    CHECK(false);
    return;
  }
  CHECK(g.dtype(y) == y_type);
  CHECK(g.dtype(scale) == CUDNNFE_DTYPE_FP8_E8M0);
  const int rank = static_cast<int>(dims.size());
  const int ax = axis < 0 ? axis + rank : axis;
  Dims s_dims = dims;
  s_dims[ax] /= block;
  CHECK(g.dims(y) == dims);
  CHECK(g.dims(scale) == s_dims);
  const Dims xs = g.strides(x), ys = g.strides(y), ss = g.strides(scale);
  if (transpose) {
    CHECK(ys[ax] == 1);
    CHECK(ss[ax] == 1);
  }
  // Values: random magnitudes over many binades, some blocks all zero.
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> exp(-20, 20);
  const int64_t n = product(dims);
  std::vector<float> xv(static_cast<size_t>(n));  // by x offset (x is packed or permuted)
  Dims index(dims.size(), 0);
  do {
    const float v =
        half_round(static_cast<float>(mant(rng) * std::ldexp(1.0, exp(rng) / 4)), x_type);
    xv[static_cast<size_t>(offset_of(index, xs))] = v;
  } while (next(index, dims));
  // One all-zero block (the first block) and one block hitting the maximum.
  {
    Dims i(dims.size(), 0);
    for (int k = 0; k < block; ++k) {
      i[ax] = k;
      xv[static_cast<size_t>(offset_of(i, xs))] = 0.0f;
    }
  }
  Bytes xb = pack(xv, x_type), yb(static_cast<size_t>(n), 0xcd),
        sb(static_cast<size_t>(product(s_dims)), 0xcd);
  // The expectation comes from the bytes the library reads, not from the
  // floats they were packed from.
  xv = unpack(xb, x_type);
  REQUIRE(g.run({{x, xb.data()}, {y, yb.data()}, {scale, sb.data()}}));
  int bad = 0;
  Dims s(s_dims.size(), 0);
  do {
    double amax = 0.0;
    Dims i = s;
    for (int k = 0; k < block; ++k) {
      i[ax] = s[ax] * block + k;
      amax = std::max(amax, std::fabs(static_cast<double>(xv[offset_of(i, xs)])));
    }
    const int e = block_exponent(amax, y_type);
    const unsigned got_s = sb[static_cast<size_t>(offset_of(s, ss))];
    if (got_s != static_cast<unsigned>(e + 127) && bad++ < 5)
      std::printf("  scale byte %u, expected %d (amax %g)\n", got_s, e + 127, amax);
    for (int k = 0; k < block; ++k) {
      i[ax] = s[ax] * block + k;
      const double want = fp8_round(xv[offset_of(i, xs)] / std::ldexp(1.0, e), y_type);
      const double got = fp8_value(yb[static_cast<size_t>(offset_of(i, ys))], y_type);
      if (!(got == want) && bad++ < 5)
        std::printf("  y %g, expected %g (x %g, scale 2^%d)\n", got, want, xv[offset_of(i, xs)], e);
    }
  } while (next(s, s_dims));
  CHECK_MSG(bad == 0, "%d mismatches", bad);
}

}  // namespace

// The FP8_E8M0 type through pointwise IDENTITY: stores round up to a power
// of two and clamp; zero stores 0x00, NaN and negative values 0xff.
TEST(e8m0_conversions) {
  CHECK(cudnnfe_dtype_size(CUDNNFE_DTYPE_FP8_E8M0) == 1);
  CHECK(std::strcmp(cudnnfe_dtype_name(CUDNNFE_DTYPE_FP8_E8M0), "FP8_E8M0") == 0);
  const std::vector<float> in = {1.0f,      1.5f,      0.75f,         0.5f,     3e38f,
                                 1e-40f,    0.0f,      -2.0f,         NAN,      INFINITY,
                                 0x1p-127f, 0x1p-126f, 0x1.000002p0f, 0x1p127f, 0x1.8p126f};
  const std::vector<unsigned> want = {127, 128, 127, 126, 254, 0,   0,  255,
                                      255, 254, 0,   1,   128, 254, 254};
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {static_cast<int64_t>(in.size())});
    int64_t y = 0;
    CHECK_OK(
        cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_IDENTITY, x, 0, 0, nullptr, &y));
    CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), y, CUDNNFE_DTYPE_FP8_E8M0));
    g.output(y);
    REQUIRE(g.build());
    Bytes yb(in.size(), 0xcd);
    REQUIRE(g.run({{x, const_cast<float *>(in.data())}, {y, yb.data()}}));
    for (size_t i = 0; i < in.size(); ++i)
      CHECK_MSG(yb[i] == want[i], "%g stored as %u, expected %u", in[i], yb[i], want[i]);
  }
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FP8_E8M0, {256});
    int64_t y = 0;
    CHECK_OK(
        cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_IDENTITY, x, 0, 0, nullptr, &y));
    CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), y, CUDNNFE_DTYPE_DOUBLE));
    g.output(y);
    REQUIRE(g.build());
    Bytes xb(256);
    for (int i = 0; i < 256; ++i) xb[i] = static_cast<unsigned char>(i);
    std::vector<double> yv(256, 0.0);
    REQUIRE(g.run({{x, xb.data()}, {y, yv.data()}}));
    for (int i = 0; i < 255; ++i)
      CHECK_MSG(yv[i] == std::ldexp(1.0, i - 127), "byte %d read as %g", i, yv[i]);
    CHECK(std::isnan(yv[255]));
  }
}

// Hand-computed: block [1, 2, 3, 4] has amax 4, 4/448 = 0.0089 rounds up to
// 2^-6, y = x * 64; block [448, -1, 0.001, 0] has amax 448, scale 1, and
// 0.001 rounds to E4M3's smallest subnormal 2^-9 (0.001 > 2^-10); block
// [500, 250, -17, 0.25] has amax 500, 500/448 rounds up to scale 2:
// 250 lies in [128, 256) where E4M3's step is 16 (-> 256), 125 in
// [64, 128) with step 8 (-> 128), -8.5 is a tie between -8 and -9 (-> -8,
// the even mantissa), 0.125 is exact.
TEST(quantize_exact_small_cases) {
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {3, 4});
  cudnnfe_block_scale_options_t o = options(4, -1);
  int64_t y = 0, scale = 0;
  CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &scale));
  g.output(y);
  g.output(scale);
  REQUIRE(g.build());
  CHECK((g.dims(scale) == Dims{3, 1}));
  const float xv[12] = {1, 2, 3, 4, 448, -1, 0.001f, 0, 500, 250, -17, 0.25f};
  Bytes yb(12, 0xcd), sb(3, 0xcd);
  REQUIRE(g.run({{x, const_cast<float *>(xv)}, {y, yb.data()}, {scale, sb.data()}}));
  CHECK(sb[0] == 127 - 6);
  CHECK(sb[1] == 127);
  CHECK(sb[2] == 128);
  const double want[12] = {64, 128, 192, 256, 448, -1, 0x1p-9, 0, 256, 128, -8, 0.125};
  for (int i = 0; i < 12; ++i) {
    const double got = fp8_value(yb[i], CUDNNFE_DTYPE_FP8_E4M3);
    CHECK_MSG(got == want[i], "y[%d] = %g, expected %g", i, got, want[i]);
  }
  CHECK(yb[4] == 0x7e);  // 448: E4M3's largest finite code
}

TEST(quantize_random_last_axis_all_types) {
  const cudnnfe_dtype_t xs[] = {CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_BFLOAT16};
  const cudnnfe_dtype_t ys[] = {CUDNNFE_DTYPE_FP8_E4M3, CUDNNFE_DTYPE_FP8_E5M2};
  unsigned seed = 1;
  for (cudnnfe_dtype_t xt : xs)
    for (cudnnfe_dtype_t yt : ys) check_quantize(xt, yt, {4, 6, 64}, {}, 32, -1, false, seed++);
}

TEST(quantize_random_other_axes_and_layouts) {
  check_quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E4M3, {64, 3, 5}, {}, 32, 0, false, 11);
  check_quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E4M3, {2, 48, 5}, {}, 16, 1, false, 12);
  check_quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E5M2, {2, 48, 5}, {}, 16, 1, true, 13);
  // Column-major x, blocks along the rows' packed dim 0, transposed output.
  check_quantize(CUDNNFE_DTYPE_HALF, CUDNNFE_DTYPE_FP8_E4M3, {64, 7}, {1, 64}, 32, 0, true, 14);
  check_quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E4M3, {8, 12}, {}, 3, -1, false, 15);
  check_quantize(CUDNNFE_DTYPE_FLOAT, CUDNNFE_DTYPE_FP8_E4M3, {8, 12}, {}, 1, 0, false, 16);
}

TEST(quantize_transpose_layout) {
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 64, 8});
  cudnnfe_block_scale_options_t o = options(32, 1, true);
  int64_t y = 0, scale = 0;
  CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &scale));
  g.output(y);
  g.output(scale);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  CHECK((g.strides(y) == Dims{512, 1, 64}));
  CHECK((g.dims(scale) == Dims{2, 2, 8}));
  CHECK((g.strides(scale) == Dims{16, 1, 2}));
}

// Dequantize: y = x * 2^(s - 127) exactly (every FP8 value times a power of
// two in float's range), for random bytes.
TEST(dequantize_random_exact) {
  const cudnnfe_dtype_t types[] = {CUDNNFE_DTYPE_FP8_E4M3, CUDNNFE_DTYPE_FP8_E5M2};
  for (cudnnfe_dtype_t xt : types) {
    G g;
    const int64_t x = g.input("x", xt, {3, 64, 2});
    const int64_t s = g.input("scale", CUDNNFE_DTYPE_FP8_E8M0, {3, 4, 2});
    cudnnfe_block_scale_options_t o = options(16, 1);
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), x, s, &o, &y));
    g.output(y);
    REQUIRE(g.build());
    CHECK(g.dtype(y) == CUDNNFE_DTYPE_FLOAT);
    std::mt19937 rng(7);
    Bytes xb(3 * 64 * 2), sb(3 * 4 * 2);
    for (auto &b : xb) {
      do b = static_cast<unsigned char>(rng());
      while (std::isnan(fp8_value(b, xt)) || std::isinf(fp8_value(b, xt)));
    }
    for (auto &b : sb) b = static_cast<unsigned char>(127 - 20 + rng() % 40);
    std::vector<float> yv(xb.size(), NAN);
    REQUIRE(g.run({{x, xb.data()}, {s, sb.data()}, {y, yv.data()}}));
    int bad = 0;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 64; ++b)
        for (int c = 0; c < 2; ++c) {
          const size_t xi = static_cast<size_t>((a * 64 + b) * 2 + c);
          const size_t si = static_cast<size_t>((a * 4 + b / 16) * 2 + c);
          const float want =
              static_cast<float>(fp8_value(xb[xi], xt) * std::ldexp(1.0, sb[si] - 127));
          if (yv[xi] != want && bad++ < 5) std::printf("  y %g, expected %g\n", yv[xi], want);
        }
    CHECK_MSG(bad == 0, "%d mismatches", bad);
  }
}

// quantize -> dequantize in one graph: |y - x| is at most half a step of
// the FP8 grid at the block's scale: |x| * 2^-(m+1) for normal results,
// scale * 2^(emin - m - 1) below (m = 3, emin = -6 for E4M3; 2, -14 for E5M2).
TEST(round_trip_error_bounds) {
  const cudnnfe_dtype_t types[] = {CUDNNFE_DTYPE_FP8_E4M3, CUDNNFE_DTYPE_FP8_E5M2};
  for (cudnnfe_dtype_t yt : types) {
    G g;
    const Dims dims = {16, 128};
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, dims);
    cudnnfe_block_scale_options_t o = options(32, -1, false, yt);
    int64_t q = 0, scale = 0, y = 0;
    CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &q, &scale));
    CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), q, scale, &o, &y));
    g.output(y);
    REQUIRE(g.build());
    std::mt19937 rng(99);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xv(static_cast<size_t>(product(dims))), yv(xv.size(), NAN);
    for (size_t i = 0; i < xv.size(); ++i)
      xv[i] = normal(rng) * std::ldexp(1.0f, static_cast<int>(i / 128) - 8);
    REQUIRE(g.run({{x, xv.data()}, {y, yv.data()}}));
    const int m = yt == CUDNNFE_DTYPE_FP8_E4M3 ? 3 : 2;
    const int emin = yt == CUDNNFE_DTYPE_FP8_E4M3 ? -6 : -14;
    int bad = 0;
    double worst = 0.0;
    for (size_t b = 0; b < xv.size() / 32; ++b) {
      double amax = 0.0;
      for (size_t k = 0; k < 32; ++k) amax = std::max(amax, std::fabs((double)xv[b * 32 + k]));
      const double sc = std::ldexp(1.0, block_exponent(amax, yt));
      for (size_t k = 0; k < 32; ++k) {
        const size_t i = b * 32 + k;
        const double err = std::fabs((double)yv[i] - xv[i]);
        const double bound = std::max(std::fabs((double)xv[i]) * std::ldexp(1.0, -(m + 1)),
                                      sc * std::ldexp(1.0, emin - m - 1));
        worst = std::max(worst, err / bound);
        if (!(err <= bound) && bad++ < 5)
          std::printf("  x %g -> %g, error %g > %g\n", xv[i], yv[i], err, bound);
      }
    }
    std::printf("  %s: worst error / bound %.3f\n", cudnnfe_dtype_name(yt), worst);
    CHECK_MSG(bad == 0, "%d errors above the bound", bad);
  }
}

TEST(bad_inputs) {
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 64});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(0, -1);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "block_scale_quantize", "block_size is 0");
    o = options(32, -1);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, nullptr),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "scale");
    o = options(32, 9);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s),
                CUDNNFE_STATUS_INVALID_ARGUMENT, "axis is 9");
  }
  {  // axis outside the rank, caught at validation
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 64});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(32, 2);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s),
                CUDNNFE_STATUS_INVALID_GRAPH, "block_scale_quantize", "axis 2 is outside x \"x\"");
  }
  {  // not whole blocks
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 48});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s),
                CUDNNFE_STATUS_INVALID_GRAPH, "block_scale_quantize", "48 elements along axis 1",
                "not a multiple of block_size 32");
  }
  {  // a HALF y_dtype: no API rule any more (cuDNN decides); the CPU reference refuses it
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 64});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(32, -1, false, CUDNNFE_DTYPE_HALF);
    CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s));
    g.output(y);
    g.output(s);
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "output y", "HALF",
                "FP8_E4M3 or FP8_E5M2");
  }
  {  // integer x
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_INT32, {4, 64});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s));
    g.output(y);
    g.output(s);
    // The types are cuDNN's to decide on the GPU; the CPU reference computes MXFP8 only.
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "input x \"x\"",
                "INT32", "FLOAT, HALF or BFLOAT16");
  }
  {  // a scale output forced to another type
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 64});
    int64_t y = 0, s = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &s));
    CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), s, CUDNNFE_DTYPE_FLOAT));
    g.output(y);
    g.output(s);
    // The types are cuDNN's to decide on the GPU; the CPU reference computes MXFP8 only.
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "output scale",
                "FLOAT", "takes FP8_E8M0");
  }
  {  // dequantize: wrong scale dims, wrong scale type, FP8 y
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FP8_E4M3, {4, 64});
    const int64_t s = g.input("s", CUDNNFE_DTYPE_FP8_E8M0, {4, 4});
    int64_t y = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_FAILS(cudnnfe_graph_add_block_scale_dequantize(g.get(), x, s, &o, &y),
                CUDNNFE_STATUS_INVALID_GRAPH, "block_scale_dequantize",
                "input scale \"s\" has dims [4,4]", "divided by block_size 32 gives [4,2]");
  }
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FP8_E4M3, {4, 64});
    const int64_t s = g.input("s", CUDNNFE_DTYPE_FLOAT, {4, 2});
    int64_t y = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), x, s, &o, &y));
    g.output(y);
    // The types are cuDNN's to decide on the GPU; the CPU reference computes MXFP8 only.
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "input scale",
                "takes FP8_E8M0");
  }
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {4, 64});
    const int64_t s = g.input("s", CUDNNFE_DTYPE_FP8_E8M0, {4, 2});
    int64_t y = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), x, s, &o, &y));
    g.output(y);
    // The types are cuDNN's to decide on the GPU; the CPU reference computes MXFP8 only.
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "input x",
                "takes FP8_E4M3 or FP8_E5M2");
  }
  {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FP8_E4M3, {4, 64});
    const int64_t s = g.input("s", CUDNNFE_DTYPE_FP8_E8M0, {4, 2});
    int64_t y = 0;
    cudnnfe_block_scale_options_t o = options(32, -1);
    CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), x, s, &o, &y));
    CHECK_OK(cudnnfe_tensor_set_dtype(g.get(), y, CUDNNFE_DTYPE_FP8_E5M2));
    g.output(y);
    // The types are cuDNN's to decide on the GPU; the CPU reference computes MXFP8 only.
    CHECK_OK(cudnnfe_graph_validate(g.get()));
    CHECK_FAILS(g.build_status(), CUDNNFE_STATUS_NOT_SUPPORTED, "CPU reference", "output y",
                "takes FLOAT, HALF or BFLOAT16");
  }
}

TEST(graph_json_round_trip) {
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_BFLOAT16, {2, 48, 5});
  cudnnfe_block_scale_options_t o = options(16, 1, true, CUDNNFE_DTYPE_FP8_E5M2);
  int64_t q = 0, s = 0, y = 0;
  CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &q, &s));
  cudnnfe_block_scale_options_t d = options(16, -2);
  CHECK_OK(cudnnfe_graph_add_block_scale_dequantize(g.get(), q, s, &d, &y));
  g.output(s);
  g.output(y);
  CHECK_OK(cudnnfe_graph_validate(g.get()));
  size_t size = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), nullptr, 0, &size));
  std::string json(size, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), &json[0], size, &size));
  for (const char *part : {"\"block_scale_quantize\"", "\"block_scale_dequantize\"",
                           "\"block_size\"", "\"y_data_type\"", "\"FP8_E5M2\"", "\"FP8_E8M0\""})
    CHECK_MSG(json.find(part) != std::string::npos, "JSON lacks %s", part);
  G h;
  REQUIRE_OK(cudnnfe_graph_deserialize(h.get(), json.data(), json.size()));
  CHECK_OK(cudnnfe_graph_validate(h.get()));
  size_t size2 = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(h.get(), nullptr, 0, &size2));
  std::string again(size2, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(h.get(), &again[0], size2, &size2));
  CHECK(again == json);
  CHECK(h.dims(s) == g.dims(s));
  CHECK(h.strides(q) == g.strides(q));
  // A bad block size in a document is refused by name.
  std::string broken = json;
  const size_t at = broken.find("\"block_size\": 16");
  if (at != std::string::npos) {
    broken.replace(at, 16, "\"block_size\": 0 ");
    G k;
    CHECK_FAILS(cudnnfe_graph_deserialize(k.get(), broken.data(), broken.size()),
                CUDNNFE_STATUS_BAD_SERIALIZED_DATA, "block_size");
  } else {
    std::printf("  (no \"block_size\": 16 text to corrupt; format differs)\n");
  }
}

// Special blocks (docs/layout-ops.md): an infinite amax gives scale 2^127
// (byte 254) with the infinity saturated to 448 and the rest flushed to 0;
// a NaN makes the block's scale NaN (0xff) and its values NaN; E5M2 keeps
// the same rule with its own maximum.
TEST(quantize_special_blocks) {
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 4});
  cudnnfe_block_scale_options_t o = options(4, 1);
  int64_t y = 0, scale = 0;
  CHECK_OK(cudnnfe_graph_add_block_scale_quantize(g.get(), x, &o, &y, &scale));
  g.output(y);
  g.output(scale);
  REQUIRE(g.build());
  const float xv[8] = {INFINITY, -1, 2, 0, 1, NAN, 3, 4};
  Bytes yb(8, 0xcd), sb(2, 0xcd);
  REQUIRE(g.run({{x, const_cast<float *>(xv)}, {y, yb.data()}, {scale, sb.data()}}));
  CHECK(sb[0] == 254);
  CHECK(fp8_value(yb[0], CUDNNFE_DTYPE_FP8_E4M3) == 448);
  for (int i = 1; i < 4; ++i) CHECK(fp8_value(yb[i], CUDNNFE_DTYPE_FP8_E4M3) == 0);
  CHECK(sb[1] == 255);
  for (int i = 4; i < 8; ++i) CHECK(std::isnan(fp8_value(yb[i], CUDNNFE_DTYPE_FP8_E4M3)));
}
