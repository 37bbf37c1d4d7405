#include "graph/tensor.h"

#include <algorithm>
#include <numeric>

#include "core/checked.h"
#include "core/error.h"

namespace cudnnfe {
namespace {

// Callers check the element count before asking for packed strides; this
// catches one that did not, instead of wrapping.
int64_t checked_stride(CheckedInt stride, const std::vector<int64_t> &dims) {
  auto value = stride.get();
  if (!value)
    fail_argument("dims ", dims_string(dims), " have more than ", kMaxTensorElementsText,
                  " elements");
  return *value;
}

}  // namespace

int64_t Tensor::element_count() const {
  auto count = checked_element_count(dims);
  if (!count)
    fail_graph("tensor \"", name, "\" ", dims_string(dims), " has more than ",
               kMaxTensorElementsText, " elements");
  return *count;
}

int64_t Tensor::element_span() const {
  if (dims.empty()) return 1;
  auto span = checked_element_span(dims, strides);
  if (!span)
    fail_graph("tensor \"", name, "\" ", dims_string(dims), " with strides ", dims_string(strides),
               " spans more than ", kMaxTensorElementsText, " elements");
  return *span;
}

std::optional<int64_t> checked_element_count(const std::vector<int64_t> &dims) {
  CheckedInt count = 1;
  for (int64_t d : dims) count *= d;
  auto value = count.get();
  if (!value || *value > kMaxTensorElements) return std::nullopt;
  return value;
}

std::optional<int64_t> checked_element_span(const std::vector<int64_t> &dims,
                                            const std::vector<int64_t> &strides) {
  if (strides.size() != dims.size()) return std::nullopt;
  CheckedInt last = 0;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) return 0;
    last += (CheckedInt(dims[i]) - 1) * strides[i];
  }
  auto value = (last + 1).get();
  if (!value || *value > kMaxTensorElements) return std::nullopt;
  return value;
}

void require_shape_fits(cudnnfe_status_t status, const std::string &what,
                        const std::vector<int64_t> &dims, const std::vector<int64_t> *strides) {
  if (!checked_element_count(dims))
    fail(status, what, ": dims ", dims_string(dims), " have more than ", kMaxTensorElementsText,
         " elements (the byte count must fit in 64 bits)");
  if (strides && !checked_element_span(dims, *strides))
    fail(status, what, ": dims ", dims_string(dims), " with strides ", dims_string(*strides),
         " reach an offset beyond ", kMaxTensorElementsText,
         " elements (the byte count must fit in 64 bits)");
}

bool strides_alias(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides) {
  // Innermost first: each dim must step past everything the inner dims span.
  std::vector<size_t> order;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > 1) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  CheckedInt reach = 1;  // offsets 0 .. reach-1 are used by the inner dims
  for (size_t i : order) {
    auto needed = reach.get();
    if (!needed || strides[i] < *needed) return true;
    reach = (CheckedInt(dims[i]) - 1) * strides[i] + reach;
  }
  return false;
}

std::vector<int64_t> packed_strides(const std::vector<int64_t> &dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  CheckedInt running = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = checked_stride(running, dims);
    running *= std::max<int64_t>(dims[i], 1);
  }
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
  CheckedInt running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    strides[*it] = checked_stride(running, dims);
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
