#include "cpu/dtype_convert.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.h"
#include "core/error.h"

namespace cudnnfe {
namespace cpu {
namespace {

// A binary floating format of 1 sign, `exp_bits` exponent and `man_bits`
// mantissa bits. IEEE-like formats reserve the top exponent for inf/NaN;
// the others (E4M3) use it for numbers and keep only all-ones for NaN.
struct MiniFloat {
  int exp_bits;
  int man_bits;
  bool has_inf;
  bool saturate;  // overflow and infinity go to the largest finite value
  uint32_t nan_bits;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint32_t sign_bit() const { return 1u << (exp_bits + man_bits); }
  uint32_t inf_bits() const { return ((1u << exp_bits) - 1) << man_bits; }
  uint32_t max_bits() const {
    uint32_t top_exp = (1u << exp_bits) - (has_inf ? 2 : 1);
    uint32_t top_man = (1u << man_bits) - (has_inf ? 1 : 2);
    return (top_exp << man_bits) | top_man;
  }
  double max_finite() const { return decode(max_bits()); }

  double decode(uint32_t bits) const {
    const uint32_t man_mask = (1u << man_bits) - 1;
    const uint32_t exp_mask = (1u << exp_bits) - 1;
    const uint32_t man = bits & man_mask;
    const uint32_t field = (bits >> man_bits) & exp_mask;
    const double sign = (bits & sign_bit()) ? -1.0 : 1.0;
    if (has_inf && field == exp_mask)
      return man == 0 ? sign * std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
    if (!has_inf && field == exp_mask && man == man_mask)
      return std::numeric_limits<double>::quiet_NaN();
    if (field == 0) return sign * std::ldexp(static_cast<double>(man), 1 - bias() - man_bits);
    return sign * std::ldexp(static_cast<double>(man | (1u << man_bits)),
                             static_cast<int>(field) - bias() - man_bits);
  }

  uint32_t encode(double value) const;
};

double round_half_even(double q) {
  double floor_q = std::floor(q);
  double diff = q - floor_q;
  if (diff > 0.5) return floor_q + 1.0;
  if (diff < 0.5) return floor_q;
  return std::fmod(floor_q, 2.0) == 0.0 ? floor_q : floor_q + 1.0;
}

uint32_t MiniFloat::encode(double value) const {
  if (std::isnan(value)) return nan_bits;
  const uint32_t sign = std::signbit(value) ? sign_bit() : 0;
  const double a = std::fabs(value);
  const uint32_t overflow = sign | (saturate ? max_bits() : inf_bits());
  if (std::isinf(a)) return overflow;
  if (a == 0.0) return sign;
  const int emin = 1 - bias();
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
  const int exponent = std::max(e - 1, emin);
  // Scaling by a power of two is exact, so one rounding step happens here.
  const double units = round_half_even(std::ldexp(a, man_bits - exponent));
  const double rounded = std::ldexp(units, exponent - man_bits);
  if (rounded > max_finite()) return overflow;
  if (rounded < std::ldexp(1.0, emin)) return sign | static_cast<uint32_t>(units);  // subnormal
  std::frexp(rounded, &e);
  const int field = e - 1 + bias();
  const uint32_t man =
      static_cast<uint32_t>(std::ldexp(rounded, man_bits - (e - 1))) & ((1u << man_bits) - 1);
  return sign | (static_cast<uint32_t>(field) << man_bits) | man;
}

constexpr MiniFloat kHalf{5, 10, true, false, 0x7e00};
constexpr MiniFloat kBfloat16{8, 7, true, false, 0x7fc0};
constexpr MiniFloat kE4m3{4, 3, false, true, 0x7f};
constexpr MiniFloat kE5m2{5, 2, true, true, 0x7f};

template <class Int>
Int to_integer(double value) {
  if (std::isnan(value)) return 0;
  const double r = round_half_even(value);
  // Both bounds are powers of two (or 0), so they are exact as doubles.
  const double lo = static_cast<double>(std::numeric_limits<Int>::lowest());
  const double hi_exclusive = std::numeric_limits<Int>::is_signed
                                  ? -lo
                                  : static_cast<double>(std::numeric_limits<Int>::max()) + 1.0;
  if (r < lo) return std::numeric_limits<Int>::lowest();
  if (r >= hi_exclusive) return std::numeric_limits<Int>::max();
  return static_cast<Int>(r);
}

template <class T>
T read(const void *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void write(void *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

}  // namespace

// A 16-bit IEEE-like format's bits for `value` when the result is a normal
// number, rounded to nearest even straight from the double's bits (the
// rounding carry may step the exponent, as it should); false for NaN,
// infinity, zero, subnormal results and overflow, which MiniFloat::encode
// handles. `man_bits` 10 and `exp_bias` 15 for HALF, 7 and 127 for
// BFLOAT16; tests/test_cpu_reference.cpp checks ties and their neighbours.
bool encode_normal16(double value, int man_bits, int exp_bias, int max_field, uint32_t *out) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const uint64_t magnitude = bits & 0x7fffffffffffffffull;
  const int shift = 52 - man_bits;
  const uint64_t lsb = (magnitude >> shift) & 1u;
  const uint64_t rounded = (magnitude + (uint64_t{1} << (shift - 1)) - 1 + lsb) >> shift;
  const int64_t field = static_cast<int64_t>(rounded >> man_bits) - 1023 + exp_bias;
  const uint64_t double_field = magnitude >> 52;
  if (double_field == 0x7ff || field < 1 || field > max_field) return false;
  *out = static_cast<uint32_t>((bits >> 48) & 0x8000u) |
         static_cast<uint32_t>(rounded - (static_cast<uint64_t>(1023 - exp_bias) << man_bits));
  return true;
}

uint16_t encode_half(double value) {
  uint32_t bits;
  if (encode_normal16(value, 10, 15, 30, &bits)) return static_cast<uint16_t>(bits);
  return static_cast<uint16_t>(kHalf.encode(value));
}
// HALF and BFLOAT16 widen exactly to float by moving bits (what every load
// of the CPU reference does, millions of times for a large tensor), so they
// skip MiniFloat's general arithmetic; tests/test_cpu_reference.cpp checks
// every pattern.
double decode_half(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t field = (bits >> 10) & 0x1fu, man = bits & 0x3ffu;
  float f;
  if (field == 0) {  // zero or subnormal: man * 2^-24, exact in float
    f = static_cast<float>(man) * 0x1p-24f;
    return sign ? -static_cast<double>(f) : static_cast<double>(f);
  }
  if (field == 0x1f) return kHalf.decode(bits);  // infinity or NaN
  const uint32_t wide = sign | ((field + 112u) << 23) | (man << 13);
  std::memcpy(&f, &wide, sizeof f);
  return f;
}
uint16_t encode_bfloat16(double value) {
  uint32_t bits;
  if (encode_normal16(value, 7, 127, 254, &bits)) return static_cast<uint16_t>(bits);
  return static_cast<uint16_t>(kBfloat16.encode(value));
}
double decode_bfloat16(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  if ((wide & 0x7f800000u) == 0x7f800000u && (wide & 0x007fffffu))
    return std::numeric_limits<double>::quiet_NaN();
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}
uint8_t encode_fp8_e4m3(double value) {
  return static_cast<uint8_t>(kE4m3.encode(value));
}
double decode_fp8_e4m3(uint8_t bits) {
  return kE4m3.decode(bits);
}
uint8_t encode_fp8_e5m2(double value) {
  return static_cast<uint8_t>(kE5m2.encode(value));
}
double decode_fp8_e5m2(uint8_t bits) {
  return kE5m2.decode(bits);
}

uint8_t encode_fp8_e8m0(double value) {
  if (std::isnan(value) || value < 0.0) return 0xff;
  if (value == 0.0) return 0x00;
  if (std::isinf(value)) return 0xfe;  // clamped to 2^127
  int e = 0;
  const double f = std::frexp(value, &e);  // value = f * 2^e, f in [0.5, 1)
  // The smallest power of two >= value: 2^(e-1) when f is exactly 0.5.
  int exponent = f == 0.5 ? e - 1 : e;
  exponent = std::min(std::max(exponent, -127), 127);
  return static_cast<uint8_t>(exponent + 127);
}
double decode_fp8_e8m0(uint8_t bits) {
  if (bits == 0xff) return std::numeric_limits<double>::quiet_NaN();
  return std::ldexp(1.0, static_cast<int>(bits) - 127);
}

double load_element(const void *p, cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: return read<float>(p);
    case CUDNNFE_DTYPE_DOUBLE: return read<double>(p);
    case CUDNNFE_DTYPE_HALF: return decode_half(read<uint16_t>(p));
    case CUDNNFE_DTYPE_BFLOAT16: return decode_bfloat16(read<uint16_t>(p));
    case CUDNNFE_DTYPE_FP8_E4M3: return decode_fp8_e4m3(read<uint8_t>(p));
    case CUDNNFE_DTYPE_FP8_E5M2: return decode_fp8_e5m2(read<uint8_t>(p));
    case CUDNNFE_DTYPE_FP8_E8M0: return decode_fp8_e8m0(read<uint8_t>(p));
    case CUDNNFE_DTYPE_INT8: return read<int8_t>(p);
    case CUDNNFE_DTYPE_INT32: return read<int32_t>(p);
    case CUDNNFE_DTYPE_INT64: return static_cast<double>(read<int64_t>(p));
    case CUDNNFE_DTYPE_UINT8: return read<uint8_t>(p);
    case CUDNNFE_DTYPE_BOOLEAN: return read<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case CUDNNFE_DTYPE_BOOLEAN_PACKED: return load_packed_bit(p, 0);
  }
  fail(CUDNNFE_STATUS_INTERNAL, "cpu reference: cannot read data type ", dtype_name(dtype));
}

double load_packed_bit(const void *base, int64_t offset) {
  const uint8_t byte = static_cast<const uint8_t *>(base)[offset >> 3];
  return (byte >> (offset & 7)) & 1u ? 1.0 : 0.0;
}

void store_packed_bit(void *base, int64_t offset, double value) {
  uint8_t &byte = static_cast<uint8_t *>(base)[offset >> 3];
  const uint8_t bit = static_cast<uint8_t>(1u << (offset & 7));
  byte = static_cast<uint8_t>(value != 0.0 ? (byte | bit) : (byte & ~bit));
}

void store_element(void *p, cudnnfe_dtype_t dtype, double value) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT: return write(p, static_cast<float>(value));
    case CUDNNFE_DTYPE_DOUBLE: return write(p, value);
    case CUDNNFE_DTYPE_HALF: return write(p, encode_half(value));
    case CUDNNFE_DTYPE_BFLOAT16: return write(p, encode_bfloat16(value));
    case CUDNNFE_DTYPE_FP8_E4M3: return write(p, encode_fp8_e4m3(value));
    case CUDNNFE_DTYPE_FP8_E5M2: return write(p, encode_fp8_e5m2(value));
    case CUDNNFE_DTYPE_FP8_E8M0: return write(p, encode_fp8_e8m0(value));
    case CUDNNFE_DTYPE_INT8: return write(p, to_integer<int8_t>(value));
    case CUDNNFE_DTYPE_INT32: return write(p, to_integer<int32_t>(value));
    case CUDNNFE_DTYPE_INT64: return write(p, to_integer<int64_t>(value));
    case CUDNNFE_DTYPE_UINT8: return write(p, to_integer<uint8_t>(value));
    case CUDNNFE_DTYPE_BOOLEAN: return write(p, static_cast<uint8_t>(value != 0.0 ? 1 : 0));
    case CUDNNFE_DTYPE_BOOLEAN_PACKED: return store_packed_bit(p, 0, value);
  }
  fail(CUDNNFE_STATUS_INTERNAL, "cpu reference: cannot write data type ", dtype_name(dtype));
}

double round_to_dtype(double value, cudnnfe_dtype_t dtype) {
  if (dtype == CUDNNFE_DTYPE_DOUBLE) return value;
  unsigned char buffer[8] = {};
  store_element(buffer, dtype, value);
  return load_element(buffer, dtype);
}

double round_to_compute(double value, cudnnfe_dtype_t compute) {
  switch (compute) {
    case CUDNNFE_DTYPE_DOUBLE: return value;
    case CUDNNFE_DTYPE_HALF: return decode_half(encode_half(value));
    case CUDNNFE_DTYPE_INT32: return std::isfinite(value) ? std::trunc(value) : value;
    default: return static_cast<float>(value);
  }
}

}  // namespace cpu
}  // namespace cudnnfe
