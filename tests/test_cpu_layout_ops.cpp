// The CPU reference of the layout, resampling and random-number ops against
// independent straightforward computations, through the public C API:
// reshape, transpose, slice (views), concatenate, pooling and upsampling,
// and the documented rng generator (docs/layout-ops.md).
#include <algorithm>
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
  int64_t identity(int64_t x) {
    int64_t y = 0;
    CHECK_OK(cudnnfe_graph_add_pointwise(g_, CUDNNFE_POINTWISE_IDENTITY, x, 0, 0, nullptr, &y));
    return y;
  }
  void output(int64_t uid) { CHECK_OK(cudnnfe_tensor_set_output(g_, uid, 1)); }
  bool build() {
    cudnnfe_build_options_t o;
    cudnnfe_build_options_init(&o);
    o.target = CUDNNFE_TARGET_CPU_REFERENCE;
    cudnnfe_status_t s = cudnnfe_graph_build(g_, nullptr, &o);
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

int64_t product(const Dims &d) {
  int64_t n = 1;
  for (int64_t v : d) n *= v;
  return n;
}

Dims packed(const Dims &dims) {
  Dims s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

// Memory offset of logical row-major element `flat`.
int64_t offset_of(int64_t flat, const Dims &dims, const Dims &strides) {
  int64_t off = 0;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    off += (flat % dims[i]) * strides[i];
    flat /= dims[i];
  }
  return off;
}

int64_t span(const Dims &dims, const Dims &strides) {
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) last += (dims[i] - 1) * strides[i];
  return last + 1;
}

// Logical row-major values laid out with `strides` (unused memory is NaN).
std::vector<float> scatter(const std::vector<float> &logical, const Dims &dims,
                           const Dims &strides) {
  std::vector<float> mem(static_cast<size_t>(span(dims, strides)), NAN);
  for (int64_t i = 0; i < product(dims); ++i) mem[offset_of(i, dims, strides)] = logical[i];
  return mem;
}

std::vector<float> gather(const std::vector<float> &mem, const Dims &dims, const Dims &strides) {
  std::vector<float> out(static_cast<size_t>(product(dims)));
  for (int64_t i = 0; i < product(dims); ++i) out[i] = mem[offset_of(i, dims, strides)];
  return out;
}

std::vector<float> iota(int64_t n, float start = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float &f : v) f = u(rng);
  return v;
}

// Index of a multi-index in row-major order of `dims`.
int64_t flat_of(const Dims &index, const Dims &dims) {
  int64_t f = 0;
  for (size_t i = 0; i < dims.size(); ++i) f = f * dims[i] + index[i];
  return f;
}

Dims unflat(int64_t flat, const Dims &dims) {
  Dims index(dims.size());
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    index[i] = flat % dims[i];
    flat /= dims[i];
  }
  return index;
}

}  // namespace

// ---------------------------------------------------------------------------
// reshape

TEST(cpu_reshape_keeps_row_major_order_of_a_strided_input) {
  G g;
  const Dims xd = {2, 3, 4}, xs = {1, 8, 2};  // column-major-ish layout
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd, xs);
  const Dims yd = {4, 6};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_reshape(g.get(), x, 2, yd.data(), nullptr, &y));
  CHECK(g.dims(y) == yd);
  CHECK(g.strides(y) == packed(yd));
  g.output(y);
  REQUIRE(g.build());
  const std::vector<float> logical = random_values(24, 1);
  std::vector<float> xm = scatter(logical, xd, xs), ym(24, NAN);
  REQUIRE(g.run({{x, xm.data()}, {y, ym.data()}}));
  CHECK(ym == logical);  // same values in the same row-major order
}

TEST(cpu_reshape_int64_is_exact_and_feeds_a_fused_op) {
  G g;
  const Dims xd = {3, 2};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_INT64, xd);
  const Dims yd = {6};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_reshape(g.get(), x, 1, yd.data(), nullptr, &y));
  g.output(y);
  // A second reshape feeding a pointwise op (virtual intermediate).
  const int64_t f = g.input("f", CUDNNFE_DTYPE_FLOAT, {2, 3});
  const Dims rd = {3, 2};
  int64_t r = 0;
  REQUIRE_OK(cudnnfe_graph_add_reshape(g.get(), f, 2, rd.data(), nullptr, &r));
  int64_t neg = 0;
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_NEG, r, 0, 0, nullptr, &neg));
  g.output(neg);
  REQUIRE(g.build());
  int64_t xv[6], yv[6];
  for (int i = 0; i < 6; ++i) xv[i] = (int64_t{1} << 60) + 3 * i + 1;  // above 2^53
  std::vector<float> fv = iota(6, 1.0f), nv(6, NAN);
  REQUIRE(g.run({{x, xv}, {y, yv}, {f, fv.data()}, {neg, nv.data()}}));
  CHECK(std::memcmp(xv, yv, sizeof(xv)) == 0);
  for (int i = 0; i < 6; ++i) CHECK(nv[i] == -fv[i]);
}

// ---------------------------------------------------------------------------
// transpose

// Dims set on a reshape's output after it was added are the new shape (the
// node's dims follow them at validation); a count that does not match x's is
// refused then, naming both shapes.
TEST(cpu_reshape_takes_the_dims_set_on_its_output) {
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {2, 3, 4});
  const Dims first = {24};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_reshape(g.get(), x, 1, first.data(), nullptr, &y));
  const Dims later = {4, 6};
  REQUIRE_OK(cudnnfe_tensor_set_dims(g.get(), y, 2, later.data()));
  g.output(y);
  REQUIRE(g.build());
  CHECK(g.dims(y) == later);
  size_t n = 0;
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), nullptr, 0, &n));
  std::string json(n, '\0');
  REQUIRE_OK(cudnnfe_graph_serialize(g.get(), json.data(), n, &n));
  CHECK(json.find("\"dims\": [4, 6]") != std::string::npos);
  const std::vector<float> xv = random_values(24, 2);
  std::vector<float> yv(24, NAN);
  REQUIRE(g.run({{x, const_cast<float *>(xv.data())}, {y, yv.data()}}));
  CHECK(yv == xv);

  G bad;
  const int64_t bx = bad.input("x", CUDNNFE_DTYPE_FLOAT, {2, 3});
  const Dims six = {6}, five = {5};
  int64_t by = 0;
  REQUIRE_OK(cudnnfe_graph_add_reshape(bad.get(), bx, 1, six.data(), nullptr, &by));
  REQUIRE_OK(cudnnfe_tensor_set_dims(bad.get(), by, 1, five.data()));
  bad.output(by);
  CHECK_FAILS(cudnnfe_graph_validate(bad.get()), CUDNNFE_STATUS_INVALID_GRAPH, "[5]", "[2,3]",
              "keeps the element count");
}

TEST(cpu_transpose_permutes_dims_and_views_x_layout) {
  G g;
  const Dims xd = {2, 3, 4};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd);
  const int32_t perm[] = {2, 0, 1};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_transpose(g.get(), x, 3, perm, nullptr, &y));
  const Dims yd = {4, 2, 3};
  CHECK(g.dims(y) == yd);
  // x's strides [12,4,1] permuted: y is a view of x's memory.
  CHECK((g.strides(y) == Dims{1, 12, 4}));
  g.output(y);
  REQUIRE(g.build());
  std::vector<float> xv = random_values(24, 2);
  std::vector<float> ym(24, NAN);
  REQUIRE(g.run({{x, xv.data()}, {y, ym.data()}}));
  const std::vector<float> yl = gather(ym, yd, g.strides(y));
  for (int64_t f = 0; f < 24; ++f) {
    const Dims i = unflat(f, yd);  // y[i0,i1,i2] = x[i1,i2,i0]
    CHECK(yl[f] == xv[flat_of({i[1], i[2], i[0]}, xd)]);
  }
  // With the view layout, y's memory is x's memory unchanged.
  CHECK(ym == xv);
}

TEST(cpu_transpose_with_packed_output_strides_moves_data) {
  G g;
  const Dims xd = {2, 5}, xs = {1, 2};  // column-major
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd, xs);
  const int32_t perm[] = {1, 0};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_transpose(g.get(), x, 2, perm, nullptr, &y));
  const Dims ys = {1, 5};  // y [5,2] column-major: not x's memory order
  REQUIRE_OK(cudnnfe_tensor_set_strides(g.get(), y, 2, ys.data()));
  g.output(y);
  REQUIRE(g.build());
  const std::vector<float> logical = iota(10);
  std::vector<float> xm = scatter(logical, xd, xs), ym(10, NAN);
  REQUIRE(g.run({{x, xm.data()}, {y, ym.data()}}));
  const std::vector<float> yl = gather(ym, {5, 2}, ys);
  for (int64_t r = 0; r < 5; ++r)
    for (int64_t c = 0; c < 2; ++c) CHECK(yl[r * 2 + c] == logical[c * 5 + r]);
}

// ---------------------------------------------------------------------------
// slice

TEST(cpu_slice_is_a_view_with_stepped_strides) {
  G g;
  const Dims xd = {5, 6};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd);
  const int64_t start[] = {1, 0}, end[] = {5, 6}, step[] = {2, 3};
  int64_t s = 0;
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), x, 2, start, end, step, nullptr, &s));
  CHECK((g.dims(s) == Dims{2, 2}));
  CHECK((g.strides(s) == Dims{12, 3}));  // x's strides times the steps
  cudnnfe_tensor_kind_t kind = 0;
  CHECK_OK(cudnnfe_tensor_get_kind(g.get(), s, &kind));
  CHECK(kind == CUDNNFE_TENSOR_KIND_VIRTUAL);
  int32_t bound = 1;
  CHECK_OK(cudnnfe_tensor_is_bound(g.get(), s, &bound));
  CHECK(bound == 0);
  const int64_t y = g.identity(s);
  g.output(y);
  REQUIRE(g.build());
  std::vector<float> xv = iota(30);
  std::vector<float> yv(4, NAN);
  REQUIRE(g.run({{x, xv.data()}, {y, yv.data()}}));
  // rows 1, 3; cols 0, 3
  CHECK((yv == std::vector<float>{6, 9, 18, 21}));
}

TEST(cpu_slice_of_slice_of_nhwc_input_and_of_a_virtual_tensor) {
  G g;
  // x [N=2, C=3, H=4, W=5] stored NHWC.
  const Dims xd = {2, 3, 4, 5}, xs = {60, 1, 15, 3};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd, xs);
  const int64_t s1_start[] = {1, 0, 1, 0}, s1_end[] = {2, 3, 4, 5};
  int64_t s1 = 0;
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), x, 4, s1_start, s1_end, nullptr, nullptr, &s1));
  const int64_t s2_start[] = {0, 1, 0, 1}, s2_end[] = {1, 3, 3, 5}, s2_step[] = {1, 1, 2, 2};
  int64_t s2 = 0;
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), s1, 4, s2_start, s2_end, s2_step, nullptr, &s2));
  const Dims s2d = {1, 2, 2, 2};
  CHECK(g.dims(s2) == s2d);
  const int64_t y = g.identity(s2);
  g.output(y);
  // A slice of a virtual tensor (x + 1): the CPU reference views its arena.
  int64_t one = 0;
  CHECK_OK(cudnnfe_graph_add_scalar(g.get(), "one", CUDNNFE_DTYPE_FLOAT, 1.0, &one));
  int64_t plus = 0;
  REQUIRE_OK(
      cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_ADD, x, one, 0, nullptr, &plus));
  const int64_t v_start[] = {0, 2, 3, 0}, v_end[] = {2, 3, 4, 5};
  int64_t sv = 0;
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), plus, 4, v_start, v_end, nullptr, nullptr, &sv));
  const int64_t z = g.identity(sv);
  g.output(z);
  REQUIRE(g.build());
  const std::vector<float> logical = random_values(product(xd), 3);
  std::vector<float> xm = scatter(logical, xd, xs);
  std::vector<float> yv(static_cast<size_t>(product(s2d)), NAN), zv(10, NAN);
  REQUIRE(g.run({{x, xm.data()}, {y, yv.data()}, {z, zv.data()}}));
  const std::vector<float> yl = gather(yv, s2d, g.strides(y));
  for (int64_t f = 0; f < product(s2d); ++f) {
    const Dims i = unflat(f, s2d);
    // s2[i] = s1[i + s2_start (stepped)] = x[... + s1_start]
    const Dims xi = {i[0] + 1, i[1] + 1, 2 * i[2] + 1, 2 * i[3] + 1};
    CHECK(yl[f] == logical[flat_of(xi, xd)]);
  }
  const std::vector<float> zl = gather(zv, {2, 1, 1, 5}, g.strides(z));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t w = 0; w < 5; ++w)
      CHECK(zl[n * 5 + w] == logical[flat_of({n, 2, 3, w}, xd)] + 1.0f);
}

TEST(cpu_slice_feeds_matmul_operands) {
  G g;
  // A fused QKV-style input [4, 6]: a = columns 0..2, b^T from rows.
  const Dims xd = {1, 4, 6};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd);
  const int64_t as[] = {0, 0, 0}, ae[] = {1, 4, 3};
  const int64_t bs[] = {0, 1, 3}, be[] = {1, 4, 5};
  int64_t a = 0, b = 0, c = 0;
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), x, 3, as, ae, nullptr, nullptr, &a));  // [1,4,3]
  REQUIRE_OK(cudnnfe_graph_add_slice(g.get(), x, 3, bs, be, nullptr, nullptr, &b));  // [1,3,2]
  REQUIRE_OK(cudnnfe_graph_add_matmul(g.get(), a, b, nullptr, &c));
  CHECK((g.dims(c) == Dims{1, 4, 2}));
  g.output(c);
  REQUIRE(g.build());
  std::vector<float> xv = random_values(24, 4);
  std::vector<float> cv(8, NAN);
  REQUIRE(g.run({{x, xv.data()}, {c, cv.data()}}));
  for (int m = 0; m < 4; ++m)
    for (int n = 0; n < 2; ++n) {
      double want = 0;
      for (int k = 0; k < 3; ++k) want += double(xv[m * 6 + k]) * xv[(1 + k) * 6 + 3 + n];
      CHECK(std::fabs(cv[m * 2 + n] - want) < 1e-5);
    }
}

// ---------------------------------------------------------------------------
// concatenate

TEST(cpu_concatenate_three_inputs_of_different_layouts) {
  G g;
  const int64_t a = g.input("a", CUDNNFE_DTYPE_FLOAT, {2, 1, 3});
  const int64_t b = g.input("b", CUDNNFE_DTYPE_FLOAT, {2, 2, 3}, {1, 6, 2});  // column-major
  const int64_t c = g.input("c", CUDNNFE_DTYPE_FLOAT, {2, 3, 3});
  const int64_t in[] = {a, b, c};
  int64_t y = 0;
  REQUIRE_OK(cudnnfe_graph_add_concatenate(g.get(), 3, in, 1, nullptr, &y));
  const Dims yd = {2, 6, 3};
  CHECK(g.dims(y) == yd);
  g.output(y);
  REQUIRE(g.build());
  const std::vector<float> al = iota(6, 100), bl = iota(12, 200), cl = iota(18, 300);
  std::vector<float> bm = scatter(bl, {2, 2, 3}, {1, 6, 2}), yv(36, NAN);
  REQUIRE(g.run({{a, const_cast<float *>(al.data())},
                 {b, bm.data()},
                 {c, const_cast<float *>(cl.data())},
                 {y, yv.data()}}));
  for (int64_t f = 0; f < 36; ++f) {
    const Dims i = unflat(f, yd);
    float want;
    if (i[1] < 1)
      want = al[flat_of({i[0], i[1], i[2]}, {2, 1, 3})];
    else if (i[1] < 3)
      want = bl[flat_of({i[0], i[1] - 1, i[2]}, {2, 2, 3})];
    else
      want = cl[flat_of({i[0], i[1] - 3, i[2]}, {2, 3, 3})];
    CHECK(yv[f] == want);
  }
}

// ---------------------------------------------------------------------------
// resample

namespace {

struct Pool {
  cudnnfe_resample_mode_t mode;
  cudnnfe_padding_mode_t padding;
  Dims window, stride, pre, post;
};

// Straightforward pooling over packed NCHW doubles (2 spatial dims).
void naive_pool(const Pool &p, const std::vector<float> &x, const Dims &xd, std::vector<double> *y,
                std::vector<int> *index, Dims *yd) {
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3];
  // AUTO: -infinity for max pooling, zeros for average pooling.
  const cudnnfe_padding_mode_t padding = p.padding != CUDNNFE_PADDING_AUTO ? p.padding
                                         : p.mode == CUDNNFE_RESAMPLE_MAXPOOL
                                             ? CUDNNFE_PADDING_NEG_INF
                                             : CUDNNFE_PADDING_ZERO;
  const int64_t OH = (H + p.pre[0] + p.post[0] - p.window[0]) / p.stride[0] + 1;
  const int64_t OW = (W + p.pre[1] + p.post[1] - p.window[1]) / p.stride[1] + 1;
  *yd = {N, C, OH, OW};
  y->assign(N * C * OH * OW, 0);
  index->assign(N * C * OH * OW, -1);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double best = -INFINITY, sum = 0;
          int best_at = -1, inside = 0;
          for (int64_t r = 0; r < p.window[0]; ++r)
            for (int64_t s = 0; s < p.window[1]; ++s) {
              int64_t h = oh * p.stride[0] - p.pre[0] + r, w = ow * p.stride[1] - p.pre[1] + s;
              const bool in = h >= 0 && h < H && w >= 0 && w < W;
              double v;
              if (in) {
                v = x[((n * C + c) * H + h) * W + w];
                ++inside;
              } else if (padding == CUDNNFE_PADDING_EDGE) {
                h = std::clamp<int64_t>(h, 0, H - 1);
                w = std::clamp<int64_t>(w, 0, W - 1);
                v = x[((n * C + c) * H + h) * W + w];
              } else if (padding == CUDNNFE_PADDING_NEG_INF) {
                continue;
              } else {
                v = 0;
              }
              sum += v;
              if (v > best) {
                best = v;
                best_at = static_cast<int>(r * p.window[1] + s);
              }
            }
          const int64_t o = ((n * C + c) * OH + oh) * OW + ow;
          if (p.mode == CUDNNFE_RESAMPLE_MAXPOOL) {
            (*y)[o] = best;
            (*index)[o] = best_at;
          } else if (p.mode == CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING) {
            (*y)[o] = sum / (p.window[0] * p.window[1]);
          } else {
            (*y)[o] = sum / inside;
          }
        }
}

void check_pool(const Pool &p, bool nhwc, bool with_index) {
  const Dims xd = {2, 3, 7, 6};
  const Dims xs = nhwc ? Dims{126, 1, 18, 3} : packed(xd);
  G g;
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd, xs);
  cudnnfe_resample_options_t o;
  cudnnfe_resample_options_init(&o);
  o.mode = p.mode;
  o.padding_mode = p.padding;
  for (int i = 0; i < 2; ++i) {
    o.window[i] = p.window[i];
    o.stride[i] = p.stride[i];
    o.pre_padding[i] = p.pre[i];
    o.post_padding[i] = p.post[i];
  }
  o.generate_index = with_index;
  int64_t y = 0, index = 0;
  REQUIRE_OK(cudnnfe_graph_add_resample(g.get(), x, &o, &y, &index));
  g.output(y);
  if (with_index) g.output(index);
  REQUIRE(g.build());
  std::vector<double> want;
  std::vector<int> want_index;
  Dims yd;
  // Distinct values so that the maximum (and its index) is unique.
  std::vector<float> logical = random_values(product(xd), 5);
  naive_pool(p, logical, xd, &want, &want_index, &yd);
  CHECK(g.dims(y) == yd);
  const Dims ys = g.strides(y);
  if (nhwc) CHECK(ys[1] == 1);  // y keeps x's NHWC order
  std::vector<float> xm = scatter(logical, xd, xs), ym(static_cast<size_t>(span(yd, ys)), NAN);
  std::vector<int8_t> im(static_cast<size_t>(span(yd, ys)), -1);
  std::vector<cudnnfe_binding_t> b = {{x, xm.data()}, {y, ym.data()}};
  if (with_index) b.push_back({index, im.data()});
  REQUIRE(g.run(b));
  for (int64_t f = 0; f < product(yd); ++f) {
    const int64_t off = offset_of(f, yd, ys);
    CHECK_MSG(std::fabs(ym[off] - want[f]) <= 1e-6 * (1 + std::fabs(want[f])),
              "element %lld: got %g want %g", static_cast<long long>(f), ym[off], want[f]);
    if (with_index) CHECK(im[off] == want_index[f]);
  }
}

}  // namespace

TEST(cpu_maxpool_nhwc_padding_stride_and_index) {
  check_pool({CUDNNFE_RESAMPLE_MAXPOOL, CUDNNFE_PADDING_AUTO, {3, 2}, {2, 2}, {1, 1}, {1, 0}}, true,
             true);
  check_pool({CUDNNFE_RESAMPLE_MAXPOOL, CUDNNFE_PADDING_ZERO, {2, 3}, {1, 2}, {1, 2}, {0, 1}},
             false, true);
  check_pool({CUDNNFE_RESAMPLE_MAXPOOL, CUDNNFE_PADDING_EDGE, {3, 3}, {3, 2}, {2, 1}, {2, 2}}, true,
             false);
}

TEST(cpu_avgpool_include_and_exclude_padding) {
  check_pool({CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING,
              CUDNNFE_PADDING_AUTO,
              {3, 3},
              {2, 2},
              {1, 1},
              {1, 1}},
             true, false);
  check_pool({CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING,
              CUDNNFE_PADDING_ZERO,
              {3, 2},
              {2, 1},
              {2, 1},
              {1, 0}},
             false, false);
}

TEST(cpu_avgpool_hand_values_at_the_corner) {
  // x [1,1,2,2] = 1 2 / 3 4, window 2, stride 1, pre padding 1: the corner
  // window sees only x[0,0].
  for (cudnnfe_resample_mode_t mode :
       {CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING, CUDNNFE_RESAMPLE_AVGPOOL_EXCLUDE_PADDING}) {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 2});
    cudnnfe_resample_options_t o;
    cudnnfe_resample_options_init(&o);
    o.mode = mode;
    o.stride[0] = o.stride[1] = 1;
    o.pre_padding[0] = o.pre_padding[1] = 1;
    int64_t y = 0;
    REQUIRE_OK(cudnnfe_graph_add_resample(g.get(), x, &o, &y, nullptr));
    CHECK((g.dims(y) == Dims{1, 1, 2, 2}));
    g.output(y);
    REQUIRE(g.build());
    float xv[4] = {1, 2, 3, 4}, yv[4];
    REQUIRE(g.run({{x, xv}, {y, yv}}));
    if (mode == CUDNNFE_RESAMPLE_AVGPOOL_INCLUDE_PADDING)
      CHECK((yv[0] == 0.25f && yv[1] == 0.75f && yv[2] == 1.0f && yv[3] == 2.5f));
    else
      CHECK((yv[0] == 1.0f && yv[1] == 1.5f && yv[2] == 2.0f && yv[3] == 2.5f));
  }
}

TEST(cpu_maxpool_propagates_nan_and_pools_3d) {
  G g;
  const Dims xd = {1, 1, 2, 2, 2};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, xd);
  cudnnfe_resample_options_t o;
  cudnnfe_resample_options_init(&o);
  o.generate_index = 1;
  int64_t y = 0, index = 0;
  REQUIRE_OK(cudnnfe_graph_add_resample(g.get(), x, &o, &y, &index));
  CHECK((g.dims(y) == Dims{1, 1, 1, 1, 1}));
  g.output(y);
  g.output(index);
  REQUIRE(g.build());
  float xv[8] = {1, 5, 2, 7, 3, 0, 6, 4}, yv[1];
  int8_t iv[1];
  REQUIRE(g.run({{x, xv}, {y, yv}, {index, iv}}));
  CHECK(yv[0] == 7.0f);
  CHECK(iv[0] == 3);
  xv[5] = NAN;
  REQUIRE(g.run({{x, xv}, {y, yv}, {index, iv}}));
  CHECK(std::isnan(yv[0]));
  CHECK(iv[0] == 5);
}

TEST(cpu_upsample_nearest_and_bilinear_hand_values) {
  for (cudnnfe_resample_mode_t mode : {CUDNNFE_RESAMPLE_NEAREST, CUDNNFE_RESAMPLE_BILINEAR}) {
    G g;
    const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, {1, 1, 2, 3});
    cudnnfe_resample_options_t o;
    cudnnfe_resample_options_init(&o);
    o.mode = mode;
    o.scale[0] = 2;
    o.scale[1] = 2;
    int64_t y = 0;
    REQUIRE_OK(cudnnfe_graph_add_resample(g.get(), x, &o, &y, nullptr));
    CHECK((g.dims(y) == Dims{1, 1, 4, 6}));
    g.output(y);
    REQUIRE(g.build());
    float xv[6] = {0, 4, 8, 12, 16, 20}, yv[24];
    REQUIRE(g.run({{x, xv}, {y, yv}}));
    // 1-D weights of scale 2 with half-pixel centres and clamped edges.
    const double wl[4][2] = {{1, 0}, {0.75, 0.25}, {0.25, 0.75}, {0, 1}};
    for (int h = 0; h < 4; ++h)
      for (int w = 0; w < 6; ++w) {
        double want;
        if (mode == CUDNNFE_RESAMPLE_NEAREST) {
          want = xv[(h / 2) * 3 + w / 2];
        } else {
          // src_w = (w + 0.5)/2 - 0.5 clamped to [0, 2].
          const double sw = std::clamp((w + 0.5) / 2 - 0.5, 0.0, 2.0);
          const int w0 = static_cast<int>(std::floor(sw)), w1 = std::min(w0 + 1, 2);
          const double fw = sw - w0;
          auto row = [&](int r) { return (1 - fw) * xv[r * 3 + w0] + fw * xv[r * 3 + w1]; };
          want = wl[h][0] * row(0) + wl[h][1] * row(1);
        }
        CHECK_MSG(std::fabs(yv[h * 6 + w] - want) < 1e-5, "(%d,%d): got %g want %g", h, w,
                  yv[h * 6 + w], want);
      }
  }
}

// ---------------------------------------------------------------------------
// rng: the documented CPU generator (docs/layout-ops.md), reimplemented here

namespace {

uint64_t mix(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double doc_uniform(uint64_t seed, uint64_t counter) {
  const uint64_t word = mix(mix(seed) + (counter + 1) * 0x9E3779B97F4A7C15ull);
  return (static_cast<double>(word >> 11) + 0.5) / 9007199254740992.0;
}

struct RngRun {
  std::vector<float> values;
  bool ok = false;
};

// Builds and runs an rng node; seed/offset as INT64 inputs when `tensors`.
RngRun run_rng(const cudnnfe_rng_options_t &o, const Dims &dims, bool tensors, int64_t seed,
               int64_t offset, cudnnfe_dtype_t seed_type = CUDNNFE_DTYPE_INT64) {
  RngRun r;
  G g;
  int64_t s = 0, f = 0;
  if (tensors) {
    s = g.input("seed", seed_type, {1});
    f = g.input("offset", seed_type, {1, 1});
  }
  int64_t y = 0;
  if (cudnnfe_graph_add_rng(g.get(), static_cast<int32_t>(dims.size()), dims.data(), s, f, &o,
                            &y) != CUDNNFE_STATUS_OK) {
    std::printf("  add_rng failed: %s\n", cudnnfe_last_error());
    return r;
  }
  g.output(y);
  if (!g.build()) return r;
  r.values.assign(static_cast<size_t>(product(dims)), NAN);
  int64_t s64 = seed, f64 = offset;
  int32_t s32 = static_cast<int32_t>(seed), f32 = static_cast<int32_t>(offset);
  std::vector<cudnnfe_binding_t> b = {{y, r.values.data()}};
  if (tensors) {
    const bool wide = seed_type == CUDNNFE_DTYPE_INT64;
    b.push_back({s, wide ? static_cast<void *>(&s64) : &s32});
    b.push_back({f, wide ? static_cast<void *>(&f64) : &f32});
  }
  r.ok = g.run(b);
  return r;
}

cudnnfe_rng_options_t rng_options(cudnnfe_rng_distribution_t d) {
  cudnnfe_rng_options_t o;
  cudnnfe_rng_options_init(&o);
  o.distribution = d;
  return o;
}

}  // namespace

TEST(cpu_rng_matches_the_documented_generator) {
  const Dims dims = {3, 5, 7};
  const int64_t seed = 0x123456789abcdefll, offset = 1000;
  for (cudnnfe_rng_distribution_t d :
       {CUDNNFE_RNG_BERNOULLI, CUDNNFE_RNG_UNIFORM, CUDNNFE_RNG_NORMAL}) {
    cudnnfe_rng_options_t o = rng_options(d);
    o.bernoulli_probability = 0.3;
    o.uniform_min = -1;
    o.uniform_max = 3;
    o.normal_mean = 2;
    o.normal_stddev = 0.5;
    const RngRun r = run_rng(o, dims, true, seed, offset);
    REQUIRE(r.ok);
    for (size_t i = 0; i < r.values.size(); ++i) {
      const uint64_t k = static_cast<uint64_t>(offset) + i;
      const double u = doc_uniform(static_cast<uint64_t>(seed), 2 * k);
      double want;
      if (d == CUDNNFE_RNG_BERNOULLI)
        want = u < 0.3 ? 1 : 0;
      else if (d == CUDNNFE_RNG_UNIFORM)
        want = -1 + 4 * u;
      else
        want = 2 + 0.5 * std::sqrt(-2 * std::log(u)) *
                       std::cos(2 * M_PI * doc_uniform(static_cast<uint64_t>(seed), 2 * k + 1));
      CHECK_MSG(r.values[i] == static_cast<float>(want), "element %zu: %g vs %g", i, r.values[i],
                want);
    }
  }
}

TEST(cpu_rng_statistics_over_a_million_samples) {
  const Dims dims = {1000, 1000};
  const double n = 1e6;
  struct Case {
    cudnnfe_rng_distribution_t d;
    double mean, var;
  };
  for (const Case &c :
       {Case{CUDNNFE_RNG_BERNOULLI, 0.3, 0.21}, Case{CUDNNFE_RNG_UNIFORM, 1.0, 16.0 / 12.0},
        Case{CUDNNFE_RNG_NORMAL, 2.0, 0.25}}) {
    cudnnfe_rng_options_t o = rng_options(c.d);
    o.bernoulli_probability = 0.3;
    o.uniform_min = -1;
    o.uniform_max = 3;
    o.normal_mean = 2;
    o.normal_stddev = 0.5;
    o.seed = 7;
    const RngRun r = run_rng(o, dims, false, 0, 0);
    REQUIRE(r.ok);
    double sum = 0, sq = 0, lo = INFINITY, hi = -INFINITY;
    for (float v : r.values) {
      sum += v;
      lo = std::min<double>(lo, v);
      hi = std::max<double>(hi, v);
    }
    const double mean = sum / n;
    for (float v : r.values) sq += (v - mean) * (v - mean);
    const double var = sq / (n - 1);
    // 6 standard errors of the mean and (roughly) of the variance.
    CHECK_MSG(std::fabs(mean - c.mean) < 6 * std::sqrt(c.var / n), "mean %g want %g", mean, c.mean);
    CHECK_MSG(std::fabs(var - c.var) < 6 * c.var * std::sqrt(2.0 / n) + 1e-3 * c.var,
              "variance %g want %g", var, c.var);
    if (c.d == CUDNNFE_RNG_BERNOULLI) CHECK((lo == 0 && hi == 1));
    if (c.d == CUDNNFE_RNG_UNIFORM) CHECK((lo >= -1 && hi <= 3));
  }
}

TEST(cpu_rng_seed_offset_reproduce_and_shift) {
  const Dims dims = {64};
  cudnnfe_rng_options_t o = rng_options(CUDNNFE_RNG_UNIFORM);
  const RngRun a = run_rng(o, dims, true, 42, 0);
  const RngRun b = run_rng(o, dims, true, 42, 0);
  const RngRun c = run_rng(o, dims, true, 43, 0);
  const RngRun d = run_rng(o, dims, true, 42, 10);
  REQUIRE((a.ok && b.ok && c.ok && d.ok));
  CHECK(a.values == b.values);
  int same = 0;
  for (size_t i = 0; i < 64; ++i) same += a.values[i] == c.values[i];
  CHECK(same < 4);
  // Offset 10 shifts the stream by ten elements.
  for (size_t i = 0; i + 10 < 64; ++i) CHECK(d.values[i] == a.values[i + 10]);
  // INT32 seed tensors, and the seed option, give the same stream.
  const RngRun e = run_rng(o, dims, true, 42, 0, CUDNNFE_DTYPE_INT32);
  o.seed = 42;
  const RngRun f = run_rng(o, dims, false, 0, 0);
  REQUIRE((e.ok && f.ok));
  CHECK(e.values == a.values);
  CHECK(f.values == a.values);
}

TEST(cpu_rng_scalar_seed_and_dropout_mask_fusion) {
  G g;
  int64_t seed = 0, offset = 0;
  CHECK_OK(cudnnfe_graph_add_scalar(g.get(), "seed", CUDNNFE_DTYPE_INT64, 5, &seed));
  CHECK_OK(cudnnfe_graph_add_scalar(g.get(), "offset", CUDNNFE_DTYPE_INT64, 0, &offset));
  const Dims dims = {8, 128};
  const int64_t x = g.input("x", CUDNNFE_DTYPE_FLOAT, dims);
  cudnnfe_rng_options_t o = rng_options(CUDNNFE_RNG_BERNOULLI);
  o.bernoulli_probability = 0.75;
  int64_t mask = 0, y = 0;
  REQUIRE_OK(cudnnfe_graph_add_rng(g.get(), 2, dims.data(), seed, offset, &o, &mask));
  REQUIRE_OK(cudnnfe_graph_add_pointwise(g.get(), CUDNNFE_POINTWISE_MUL, x, mask, 0, nullptr, &y));
  g.output(y);
  REQUIRE(g.build());
  std::vector<float> xv = random_values(1024, 6);
  std::vector<float> yv(1024, NAN);
  REQUIRE(g.run({{x, xv.data()}, {y, yv.data()}}));
  int zeros = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    CHECK((yv[i] == xv[i] || yv[i] == 0.0f));
    zeros += yv[i] == 0.0f;
  }
  for (size_t i = 0; i < yv.size(); ++i)
    if ((doc_uniform(5, 2 * i) < 0.75) != (yv[i] == xv[i])) CHECK(false);
  CHECK((zeros > 180 && zeros < 330));  // ~256 expected
}
