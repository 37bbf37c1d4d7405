#include "backend/scalar_bytes.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe::backend {
namespace {

template <class Int>
Int saturate(double value) {
  if (std::isnan(value)) return 0;
  const double r = std::nearbyint(value);
  if (r <= static_cast<double>(std::numeric_limits<Int>::min()))
    return std::numeric_limits<Int>::min();
  if (r >= static_cast<double>(std::numeric_limits<Int>::max()))
    return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

template <class T>
void put(unsigned char out[8], T value) {
  std::memcpy(out, &value, sizeof(T));
}

}  // namespace

uint16_t float_to_half_bits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  const int exp = static_cast<int>((x >> 23) & 0xffu);
  if (exp == 255) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = exp - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    // Subnormal half: shift the full significand down, rounding to even.
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return static_cast<uint16_t>(h);
}

uint16_t float_to_bfloat16_bits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  if (std::isnan(value)) return static_cast<uint16_t>(((x >> 16) & 0x8000u) | 0x7fc0u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

void encode_scalar(double value, cudnnfe_dtype_t dtype, unsigned char out[8]) {
  std::memset(out, 0, 8);
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: return put(out, static_cast<float>(value));
    case CUDNNFE_DTYPE_DOUBLE: return put(out, value);
    case CUDNNFE_DTYPE_HALF: return put(out, float_to_half_bits(static_cast<float>(value)));
    case CUDNNFE_DTYPE_BFLOAT16: return put(out, float_to_bfloat16_bits(static_cast<float>(value)));
    case CUDNNFE_DTYPE_INT8: return put(out, saturate<int8_t>(value));
    case CUDNNFE_DTYPE_UINT8: return put(out, saturate<uint8_t>(value));
    case CUDNNFE_DTYPE_INT32: return put(out, saturate<int32_t>(value));
    case CUDNNFE_DTYPE_INT64: return put(out, saturate<int64_t>(value));
    case CUDNNFE_DTYPE_BOOLEAN:
    case CUDNNFE_DTYPE_BOOLEAN_PACKED:  // one element: bit 0 of byte 0 either way
      return put(out, static_cast<uint8_t>(value != 0.0 ? 1 : 0));
    default:
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, "a pass-by-value scalar of type ", dtype_name(dtype),
           " is not supported on the GPU; use FLOAT, HALF, BFLOAT16 or an integer type");
  }
}

}  // namespace cudnnfe::backend
