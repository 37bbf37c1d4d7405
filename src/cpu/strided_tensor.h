// A view of one tensor's host buffer: its data type, logical dims and
// element strides (any layout, broadcast stride 0 included). Elements are
// read and written as double through dtype_convert.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/c_api.h"
#include "cpu/dtype_convert.h"

namespace cudnnfe {
namespace cpu {

using Index = std::array<int64_t, CUDNNFE_MAX_DIMS>;

struct StridedTensor {
  void *data = nullptr;
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_NOT_SET;
  size_t element_size = 0;
  int rank = 0;
  Index dims{};
  Index strides{};

  int64_t element_count() const;
  // Offset in elements of a multi-index with `rank` entries.
  int64_t offset(const int64_t *index) const {
    int64_t off = 0;
    for (int i = 0; i < rank; ++i) off += index[i] * strides[i];
    return off;
  }
  double load(int64_t offset) const {
    if (dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED) return load_packed_bit(data, offset);
    return load_element(static_cast<const unsigned char *>(data) + offset * element_size, dtype);
  }
  void store(int64_t offset, double value) const {
    if (dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED) return store_packed_bit(data, offset, value);
    store_element(static_cast<unsigned char *>(data) + offset * element_size, dtype, value);
  }
};

// Strides that read `t` while iterating over `dims` (rank `rank`): dims of
// size 1 broadcast (stride 0) and `t`'s dims align to the right, so a
// lower-rank operand broadcasts along the missing leading dims. Leading
// dims of `t` beyond `rank` are skipped; callers check they are 1.
Index broadcast_strides(const StridedTensor &t, int rank, const Index &dims);

// Advances `index` over `dims` in row-major order; false after the last.
inline bool next_index(Index &index, int rank, const Index &dims) {
  for (int i = rank - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// The whole tensor in packed row-major order of its logical dims.
std::vector<double> load_dense(const StridedTensor &t);
// Writes packed row-major `values` into the tensor's layout.
void store_dense(const StridedTensor &t, const std::vector<double> &values);

// The same, with every value rounded to a node's compute type on the way
// (see round_to_compute): what the ops read and write.
std::vector<double> load_dense(const StridedTensor &t, cudnnfe_dtype_t compute);
void store_dense(const StridedTensor &t, std::vector<double> values, cudnnfe_dtype_t compute);

}  // namespace cpu
}  // namespace cudnnfe
