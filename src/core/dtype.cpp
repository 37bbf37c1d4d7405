#include "core/dtype.h"

#include <cstring>

namespace cudnnfe {
namespace {

struct DtypeInfo {
  cudnnfe_dtype_t dtype;
  const char *name;
  size_t size;
};

constexpr DtypeInfo kDtypes[] = {
    {CUDNNFE_DTYPE_FLOAT, "FLOAT", 4},
    {CUDNNFE_DTYPE_HALF, "HALF", 2},
    {CUDNNFE_DTYPE_BFLOAT16, "BFLOAT16", 2},
    {CUDNNFE_DTYPE_FP8_E4M3, "FP8_E4M3", 1},
    {CUDNNFE_DTYPE_FP8_E5M2, "FP8_E5M2", 1},
    {CUDNNFE_DTYPE_INT8, "INT8", 1},
    {CUDNNFE_DTYPE_INT32, "INT32", 4},
    {CUDNNFE_DTYPE_INT64, "INT64", 8},
    {CUDNNFE_DTYPE_BOOLEAN, "BOOLEAN", 1},
    {CUDNNFE_DTYPE_UINT8, "UINT8", 1},
    {CUDNNFE_DTYPE_DOUBLE, "DOUBLE", 8},
    {CUDNNFE_DTYPE_FP8_E8M0, "FP8_E8M0", 1},
    // Bit-packed: 1 is the bound a buffer needs per element, not the exact size.
    {CUDNNFE_DTYPE_BOOLEAN_PACKED, "BOOLEAN_PACKED", 1},
};

const DtypeInfo *find(cudnnfe_dtype_t dtype) {
  for (const DtypeInfo &info : kDtypes)
    if (info.dtype == dtype) return &info;
  return nullptr;
}

}  // namespace

bool dtype_is_valid(cudnnfe_dtype_t dtype) {
  return find(dtype) != nullptr;
}

const char *dtype_name(cudnnfe_dtype_t dtype) {
  if (dtype == CUDNNFE_DTYPE_NOT_SET) return "NOT_SET";
  const DtypeInfo *info = find(dtype);
  return info ? info->name : "UNKNOWN";
}

size_t dtype_size(cudnnfe_dtype_t dtype) {
  const DtypeInfo *info = find(dtype);
  return info ? info->size : 0;
}

bool dtype_is_float(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_FLOAT:
    case CUDNNFE_DTYPE_DOUBLE:
    case CUDNNFE_DTYPE_HALF:
    case CUDNNFE_DTYPE_BFLOAT16:
    case CUDNNFE_DTYPE_FP8_E4M3:
    case CUDNNFE_DTYPE_FP8_E5M2: return true;
    default: return false;
  }
}

bool dtype_is_integer(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_INT8:
    case CUDNNFE_DTYPE_INT32:
    case CUDNNFE_DTYPE_INT64:
    case CUDNNFE_DTYPE_UINT8: return true;
    default: return false;
  }
}

bool dtype_from_name(const char *name, cudnnfe_dtype_t *dtype) {
  if (std::strcmp(name, "NOT_SET") == 0) {
    *dtype = CUDNNFE_DTYPE_NOT_SET;
    return true;
  }
  for (const DtypeInfo &info : kDtypes) {
    if (std::strcmp(info.name, name) == 0) {
      *dtype = info.dtype;
      return true;
    }
  }
  return false;
}

}  // namespace cudnnfe
