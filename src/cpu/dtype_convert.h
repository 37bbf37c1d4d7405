// Conversions between stored elements of every cudnnfe data type and
// double, with the rounding the GPU applies when it writes each type.
//
// Floating formats round to nearest, ties to even, directly from double (no
// double rounding through float). Overflow: HALF and BFLOAT16 go to
// infinity (IEEE); both FP8 formats saturate to their largest finite value,
// as cuDNN's satfinite conversions do, and so does infinity. NaN becomes the
// canonical NaN of the format (FP8: 0x7f). Integers round to nearest even
// and saturate to their range; NaN becomes 0. BOOLEAN stores 1 for any
// non-zero value (NaN included) and reads any non-zero byte as 1;
// BOOLEAN_PACKED holds one bit per element (load_packed_bit).
// FP8_E8M0 (a power of two 2^(bits - 127), 0xff NaN) stores a value rounded
// UP to a power of two, clamped to [2^-127, 2^127]; zero stores 0x00
// (2^-127), NaN and negative values 0xff.
#pragma once

#include <cstdint>

#include "core/c_api.h"

namespace cudnnfe {
namespace cpu {

uint16_t encode_half(double value);
double decode_half(uint16_t bits);
uint16_t encode_bfloat16(double value);
double decode_bfloat16(uint16_t bits);
uint8_t encode_fp8_e4m3(double value);
double decode_fp8_e4m3(uint8_t bits);
uint8_t encode_fp8_e5m2(double value);
double decode_fp8_e5m2(uint8_t bits);
uint8_t encode_fp8_e8m0(double value);
double decode_fp8_e8m0(uint8_t bits);

// BOOLEAN_PACKED: element `offset` (>= 0) is bit offset % 8, least
// significant first, of byte offset / 8 from `base` (cuDNN's layout).
double load_packed_bit(const void *base, int64_t offset);
void store_packed_bit(void *base, int64_t offset, double value);

// Reads one element of `dtype` at `p` (any alignment).
double load_element(const void *p, cudnnfe_dtype_t dtype);
// Writes `value` as one element of `dtype` at `p` (any alignment).
void store_element(void *p, cudnnfe_dtype_t dtype, double value);

// The value `value` becomes once stored as `dtype` and read back.
double round_to_dtype(double value, cudnnfe_dtype_t dtype);

// The value `value` becomes as a result in a node's compute type: FLOAT
// rounds to float, HALF to half, INT32 truncates toward zero (integer
// arithmetic), DOUBLE keeps it.
double round_to_compute(double value, cudnnfe_dtype_t compute);

}  // namespace cpu
}  // namespace cudnnfe
