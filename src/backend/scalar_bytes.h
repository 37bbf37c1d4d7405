// The bytes of a pass-by-value scalar: cuDNN reads a by-value tensor's
// value from host memory in the tensor's own data type.
#pragma once

#include <cstdint>

#include "core/c_api.h"

namespace cudnnfe::backend {

// Writes `value` as one element of `dtype` into `out` (8 bytes). Floating
// types round to nearest even; integers round and saturate. Throws
// NOT_SUPPORTED for types cuDNN takes no scalars of (FP8).
void encode_scalar(double value, cudnnfe_dtype_t dtype, unsigned char out[8]);

// IEEE half and bfloat16 bit patterns of a float, rounded to nearest even.
uint16_t float_to_half_bits(float value);
uint16_t float_to_bfloat16_bits(float value);

}  // namespace cudnnfe::backend
