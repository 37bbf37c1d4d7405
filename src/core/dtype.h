// Facts about cudnnfe data types: names, sizes, classes.
#pragma once

#include <cstddef>

#include "core/c_api.h"

namespace cudnnfe {

bool dtype_is_valid(cudnnfe_dtype_t dtype);  // a known value other than NOT_SET
const char *dtype_name(cudnnfe_dtype_t dtype);
size_t dtype_size(cudnnfe_dtype_t dtype);
// FLOAT, DOUBLE, HALF, BF16, FP8 E4M3/E5M2 (not FP8_E8M0: a scale-only type)
bool dtype_is_float(cudnnfe_dtype_t dtype);
bool dtype_is_integer(cudnnfe_dtype_t dtype);  // INT8/32/64, UINT8
// Parses a name produced by dtype_name; returns false if unknown.
bool dtype_from_name(const char *name, cudnnfe_dtype_t *dtype);

}  // namespace cudnnfe
