#include "graph/tensor.h"

#include <algorithm>
#include <numeric>

namespace cudnnfe {

int64_t Tensor::element_count() const {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

int64_t Tensor::element_span() const {
  if (dims.empty()) return 1;
  int64_t last = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return 0;
    last += (dims[i] - 1) * strides[i];
  }
  return last + 1;
}

std::vector<int64_t> packed_strides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * std::max<int64_t>(dims[i + 1], 1);
  return strides;
}

std::vector<int64_t> strides_like(const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &like) {
  if (like.size() != dims.size()) return packed_strides(dims);
  // Order dimensions from outermost (largest stride) to innermost; ties keep
  // the logical order so that broadcast (stride 0) dims stay outermost.
  std::vector<size_t> order(dims.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return like[a] > like[b]; });
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = running;
    running *= std::max<int64_t>(dims[*it], 1);
  }
  return strides;
}

std::string dims_string(const std::vector<int64_t> &dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace cudnnfe
