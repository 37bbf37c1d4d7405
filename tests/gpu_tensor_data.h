// Host-side tensor data for the GPU test binaries that compare the GPU
// with the CPU reference element by element: a tensor's shape and layout as
// the graph reports them, logical-order traversal, random fills and the
// tolerance comparison.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.h"
#include "gpu_util.h"

namespace gpu_test {

using Dims = std::vector<int64_t>;
using Bytes = std::vector<unsigned char>;

struct TensorInfo {
  int64_t uid = 0;
  std::string name;
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_NOT_SET;
  Dims dims, strides;
  size_t bytes = 0;
  bool is_output = false;
  // "O", "stats", "dQ", ... for op outputs ("<node>::<port>"); the name
  // for inputs.
  std::string port() const { return name.substr(name.rfind(':') + 1); }
};

TensorInfo describe(cudnnfe_graph_t *g, int64_t uid) {
  TensorInfo t;
  t.uid = uid;
  int64_t dims[CUDNNFE_MAX_DIMS], strides[CUDNNFE_MAX_DIMS];
  int32_t rank = 0;
  ok(cudnnfe_tensor_get_shape(g, uid, dims, strides, CUDNNFE_MAX_DIMS, &rank),
     "cudnnfe_tensor_get_shape");
  t.dims.assign(dims, dims + rank);
  t.strides.assign(strides, strides + rank);
  ok(cudnnfe_tensor_get_dtype(g, uid, &t.dtype), "cudnnfe_tensor_get_dtype");
  const char *name = nullptr;
  ok(cudnnfe_tensor_get_name(g, uid, &name), "cudnnfe_tensor_get_name");
  t.name = name;
  int64_t span = 1;
  for (size_t i = 0; i < t.dims.size(); ++i) span += (t.dims[i] - 1) * t.strides[i];
  t.bytes = static_cast<size_t>(span) * cudnnfe_dtype_size(t.dtype);
  return t;
}

// Calls f(offset, index) for every logical element, in row-major order.
template <class F>
void for_each_element(const TensorInfo &t, F f) {
  Dims index(t.dims.size(), 0);
  int64_t count = 1;
  for (int64_t d : t.dims) count *= d;
  for (int64_t n = 0; n < count; ++n) {
    int64_t offset = 0;
    for (size_t i = 0; i < index.size(); ++i) offset += index[i] * t.strides[i];
    f(offset, static_cast<const Dims &>(index));
    for (int i = static_cast<int>(index.size()) - 1; i >= 0; --i) {
      if (++index[i] < t.dims[i]) break;
      index[i] = 0;
    }
  }
}

// Calls f(offset) for every logical element, in logical row-major order.
template <class F>
void for_each_offset(const TensorInfo &t, F f) {
  for_each_element(t, [&](int64_t offset, const Dims &) { f(offset); });
}

double element(const TensorInfo &t, const Bytes &b, int64_t offset) {
  return gpu::load(t.dtype, b.data() + offset * cudnnfe_dtype_size(t.dtype));
}

void set_element(const TensorInfo &t, Bytes &b, int64_t offset, double v) {
  gpu::store(t.dtype, b.data() + offset * cudnnfe_dtype_size(t.dtype), v);
}

// Copies the logical elements of `src` into `dst` (same dims; any layouts
// and types).
void copy_elements(const TensorInfo &src, const Bytes &from, const TensorInfo &dst, Bytes &to) {
  std::vector<double> values;
  for_each_offset(src, [&](int64_t off) { values.push_back(element(src, from, off)); });
  size_t i = 0;
  for_each_offset(dst, [&](int64_t off) { set_element(dst, to, off, values[i++]); });
}

uint32_t seed_of(const std::string &label) {
  uint32_t h = 2166136261u;
  for (char c : label) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

// How a case fills an input: uniform in [lo, hi), optionally rounded to
// whole numbers, with a share of exact zeros; BOOLEAN tensors get 0 or 1.
// The defaults draw one number per element (the sequence seeds stay put).
struct Fill {
  double lo = -1.0, hi = 1.0;
  bool integers = false;
  double zero_fraction = 0;
};

Bytes random_bytes(const TensorInfo &t, const Fill &fill, std::mt19937 &rng) {
  Bytes bytes(t.bytes);
  const size_t size = cudnnfe_dtype_size(t.dtype);
  std::uniform_real_distribution<double> uniform(fill.lo, fill.hi);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (size_t i = 0; i * size < bytes.size(); ++i) {
    double v = uniform(rng);
    if (fill.integers) v = std::round(v);
    if (fill.zero_fraction > 0 && unit(rng) < fill.zero_fraction) v = 0;
    if (t.dtype == CUDNNFE_DTYPE_BOOLEAN) v = unit(rng) < 0.5 ? 0 : 1;
    gpu::store(t.dtype, bytes.data() + i * size, v);
  }
  return bytes;
}

struct Errors {
  double max_abs = 0, max_rel = 0;
  int64_t bad = 0, compared = 0;
  std::string first_bad;
};

// What a non-finite value (in the GPU's output or the reference) means.
enum class NonFinite {
  kAlwaysBad,  // no result may be NaN or infinite: NaN is an unwritten
               // output (the prefill) or a broken reference
  kMustMatch,  // NaN matches NaN and an infinity the same infinity (masked
               // attention rows, -inf statistics)
};

std::string dims_text(const Dims &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

// Which elements a comparison reads (all when empty).
using Region = std::function<bool(const Dims &index)>;

// |gpu - cpu| <= rtol * (|cpu| + 0.1 * max|cpu|) per element of `region`;
// rtol 0 demands equality, and so does `exact_integers` for tensors of a
// non-floating type.
Errors compare(const TensorInfo &t, const Bytes &got, const Bytes &want, double rtol,
               NonFinite non_finite, const Region &region = {}, bool exact_integers = false) {
  const bool exact = exact_integers && t.dtype != CUDNNFE_DTYPE_FLOAT &&
                     t.dtype != CUDNNFE_DTYPE_HALF && t.dtype != CUDNNFE_DTYPE_BFLOAT16 &&
                     t.dtype != CUDNNFE_DTYPE_DOUBLE;
  double scale = 0;
  for_each_element(t, [&](int64_t off, const Dims &index) {
    if (region && !region(index)) return;
    const double r = element(t, want, off);
    if (std::isfinite(r)) scale = std::max(scale, std::fabs(r));
  });
  Errors e;
  for_each_element(t, [&](int64_t off, const Dims &index) {
    if (region && !region(index)) return;
    ++e.compared;
    const double g = element(t, got, off), r = element(t, want, off);
    bool good;
    double err = 0;
    if (non_finite == NonFinite::kAlwaysBad && (!std::isfinite(r) || !std::isfinite(g))) {
      good = false;
      err = INFINITY;
    } else if (std::isnan(r) || std::isnan(g)) {
      good = std::isnan(r) && std::isnan(g);
      err = good ? 0 : INFINITY;
    } else if (std::isinf(r) || std::isinf(g)) {
      good = r == g;
      err = good ? 0 : INFINITY;
    } else {
      err = std::fabs(g - r);
      good = exact ? err == 0 : err <= rtol * (std::fabs(r) + 0.1 * scale);
      if (std::fabs(r) >= 1e-2 * scale && std::fabs(r) > 0)
        e.max_rel = std::max(e.max_rel, err / std::fabs(r));
    }
    e.max_abs = std::max(e.max_abs, err);
    if (!good && e.bad++ == 0) {
      char buf[200];
      std::snprintf(buf, sizeof(buf), "index %s (offset %lld): gpu %.6g, cpu %.6g",
                    dims_text(index).c_str(), static_cast<long long>(off), g, r);
      e.first_bad = buf;
    }
  });
  return e;
}

}  // namespace gpu_test
