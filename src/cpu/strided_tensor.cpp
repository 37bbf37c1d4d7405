#include "cpu/strided_tensor.h"

namespace cudnnfe {
namespace cpu {

int64_t StridedTensor::element_count() const {
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) count *= dims[i];
  return count;
}

Index broadcast_strides(const StridedTensor &t, int rank, const Index &dims) {
  Index strides{};
  // Dims align to the right; t's extra leading dims (size 1) are skipped.
  const int shift = rank - t.rank;
  for (int i = 0; i < rank; ++i) {
    const int own = i - shift;
    if (own < 0) continue;
    strides[i] = (t.dims[own] == 1 && dims[i] != 1) ? 0 : t.strides[own];
  }
  return strides;
}

std::vector<double> load_dense(const StridedTensor &t) {
  std::vector<double> values(static_cast<size_t>(t.element_count()));
  Index index{};
  size_t i = 0;
  do {
    values[i++] = t.load(t.offset(index.data()));
  } while (next_index(index, t.rank, t.dims));
  return values;
}

void store_dense(const StridedTensor &t, const std::vector<double> &values) {
  Index index{};
  size_t i = 0;
  do {
    t.store(t.offset(index.data()), values[i++]);
  } while (next_index(index, t.rank, t.dims));
}

std::vector<double> load_dense(const StridedTensor &t, cudnnfe_dtype_t compute) {
  std::vector<double> values = load_dense(t);
  for (double &v : values) v = round_to_compute(v, compute);
  return values;
}

void store_dense(const StridedTensor &t, std::vector<double> values, cudnnfe_dtype_t compute) {
  for (double &v : values) v = round_to_compute(v, compute);
  store_dense(t, values);
}

}  // namespace cpu
}  // namespace cudnnfe
