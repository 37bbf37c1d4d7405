// Test-only helpers for GPU cases: the CUDA runtime loaded with dlopen (so
// that tests need no CUDA headers or link, like the library itself), device
// buffers, and conversions between host doubles and stored elements of each
// cudnnfe data type.
#pragma once

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>

#include "cudnnfe/cudnnfe.h"

namespace gpu {

// The few runtime entry points the tests use; cudaError_t is an int enum
// and cudaMemcpyKind 1 is host-to-device, 2 device-to-host.
struct Runtime {
  int (*Malloc)(void **, size_t) = nullptr;
  int (*Free)(void *) = nullptr;
  int (*Memcpy)(void *, const void *, size_t, int) = nullptr;
  int (*Memset)(void *, int, size_t) = nullptr;
  int (*DeviceSynchronize)() = nullptr;
  int (*StreamCreate)(void **) = nullptr;
  int (*StreamSynchronize)(void *) = nullptr;
  int (*StreamDestroy)(void *) = nullptr;
  const char *(*GetErrorString)(int) = nullptr;
  std::string error;  // why loading failed, "" when usable
};

constexpr int kHostToDevice = 1;
constexpr int kDeviceToHost = 2;

inline const Runtime &runtime() {
  static const Runtime rt = [] {
    Runtime r;
    const char *env = std::getenv("CUDNNFE_CUDART_LIBRARY");
    const char *names[] = {env && *env ? env : "libcudart.so.13", "libcudart.so.12"};
    void *lib = nullptr;
    for (const char *name : names)
      if ((lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!lib) {
      r.error = std::string("libcudart could not be loaded: ") + dlerror();
      return r;
    }
    auto sym = [&](const char *name, auto *slot) {
      *slot = reinterpret_cast<std::remove_pointer_t<decltype(slot)>>(dlsym(lib, name));
      if (!*slot) r.error += std::string(r.error.empty() ? "libcudart lacks " : ", ") + name;
    };
    sym("cudaMalloc", &r.Malloc);
    sym("cudaFree", &r.Free);
    sym("cudaMemcpy", &r.Memcpy);
    sym("cudaMemset", &r.Memset);
    sym("cudaDeviceSynchronize", &r.DeviceSynchronize);
    sym("cudaStreamCreate", &r.StreamCreate);
    sym("cudaStreamSynchronize", &r.StreamSynchronize);
    sym("cudaStreamDestroy", &r.StreamDestroy);
    sym("cudaGetErrorString", &r.GetErrorString);
    return r;
  }();
  return rt;
}

// "cudaMalloc: out of memory" style text for a failed call, "" on success.
inline std::string cuda_check(int error, const char *what) {
  if (error == 0) return "";
  return std::string(what) + ": " + runtime().GetErrorString(error);
}

// An owned device allocation.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {
    if (bytes && runtime().Malloc(&ptr_, bytes) != 0) ptr_ = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr_) runtime().Free(ptr_);
  }
  DeviceBuffer(DeviceBuffer &&o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void *get() const { return ptr_; }
  size_t size() const { return bytes_; }
  bool ok() const { return ptr_ != nullptr || bytes_ == 0; }

 private:
  void *ptr_ = nullptr;
  size_t bytes_ = 0;
};

// ---- element conversions (round to nearest even, like the GPU) ----

inline uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  const int exp = static_cast<int>((x >> 23) & 0xffu);
  if (exp == 255) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 112;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(h);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const int exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ffu;
  float value;
  if (exp == 0)
    value = std::ldexp(static_cast<float>(mant), -24);
  else if (exp == 31)
    value = mant ? NAN : INFINITY;
  else
    value = std::ldexp(static_cast<float>(mant | 0x400u), exp - 25);
  return sign ? -value : value;
}

inline uint16_t float_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

inline float bf16_to_float(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// Writes `v` as one element of `dtype` at `p`.
inline void store(cudnnfe_dtype_t dtype, void *p, double v) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      return;
    }
    case CUDNNFE_DTYPE_DOUBLE: std::memcpy(p, &v, 8); return;
    case CUDNNFE_DTYPE_HALF: {
      uint16_t h = float_to_half(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case CUDNNFE_DTYPE_BFLOAT16: {
      uint16_t h = float_to_bf16(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      return;
    }
    case CUDNNFE_DTYPE_INT32: {
      int32_t i = static_cast<int32_t>(std::lrint(v));
      std::memcpy(p, &i, 4);
      return;
    }
    case CUDNNFE_DTYPE_INT64: {
      int64_t i = static_cast<int64_t>(std::llrint(v));
      std::memcpy(p, &i, 8);
      return;
    }
    case CUDNNFE_DTYPE_INT8: *static_cast<int8_t *>(p) = static_cast<int8_t>(std::lrint(v)); return;
    case CUDNNFE_DTYPE_UINT8:
    case CUDNNFE_DTYPE_BOOLEAN:
      *static_cast<uint8_t *>(p) = static_cast<uint8_t>(std::lrint(v));
      return;
    default: return;
  }
}

// Reads one element of `dtype` at `p`.
inline double load(cudnnfe_dtype_t dtype, const void *p) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case CUDNNFE_DTYPE_DOUBLE: {
      double d;
      std::memcpy(&d, p, 8);
      return d;
    }
    case CUDNNFE_DTYPE_HALF: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return half_to_float(h);
    }
    case CUDNNFE_DTYPE_BFLOAT16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      return bf16_to_float(h);
    }
    case CUDNNFE_DTYPE_INT32: {
      int32_t i;
      std::memcpy(&i, p, 4);
      return i;
    }
    case CUDNNFE_DTYPE_INT64: {
      int64_t i;
      std::memcpy(&i, p, 8);
      return static_cast<double>(i);
    }
    case CUDNNFE_DTYPE_INT8: return *static_cast<const int8_t *>(p);
    case CUDNNFE_DTYPE_UINT8: return *static_cast<const uint8_t *>(p);
    case CUDNNFE_DTYPE_BOOLEAN: return *static_cast<const uint8_t *>(p) ? 1.0 : 0.0;
    default: return NAN;
  }
}

}  // namespace gpu
