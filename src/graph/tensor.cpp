// Tensor shapes: element counts and spans, aliasing, and the dimension orders
// and packed strides that output layouts are inferred from.
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

DimOrder dimension_order(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides) {
  DimOrder order;
  order.outer_to_inner.resize(strides.size());
  std::iota(order.outer_to_inner.begin(), order.outer_to_inner.end(), size_t{0});
  auto unit = [&](size_t i) { return i < dims.size() && dims[i] == 1; };
  // Key (stride descending, size-1 last, logical index): a strict weak order.
  std::stable_sort(order.outer_to_inner.begin(), order.outer_to_inner.end(),
                   [&](size_t a, size_t b) {
                     if (strides[a] != strides[b]) return strides[a] > strides[b];
                     return !unit(a) && unit(b);
                   });
  return order;
}

DimOrder row_major_order(size_t rank) {
  DimOrder order;
  order.outer_to_inner.resize(rank);
  std::iota(order.outer_to_inner.begin(), order.outer_to_inner.end(), size_t{0});
  return order;
}

DimOrder channels_last_order(size_t rank) {
  if (rank < 3) return row_major_order(rank);
  DimOrder order;
  order.outer_to_inner.push_back(0);
  for (size_t i = 2; i < rank; ++i) order.outer_to_inner.push_back(i);
  order.outer_to_inner.push_back(1);
  return order;
}

std::vector<int64_t> packed_strides(const std::vector<int64_t> &dims, const DimOrder &order) {
  const std::vector<size_t> &o = order.outer_to_inner;
  if (o.size() != dims.size()) return packed_strides(dims);
  std::vector<bool> seen(dims.size(), false);
  for (size_t i : o) {
    if (i >= dims.size() || seen[i])
      fail(CUDNNFE_STATUS_INTERNAL, "a dimension order of ", o.size(),
           " entries is not a permutation of the dims of ", dims_string(dims));
    seen[i] = true;
  }
  std::vector<int64_t> strides(dims.size(), 1);
  CheckedInt running = 1;
  for (auto it = o.rbegin(); it != o.rend(); ++it) {
    strides[*it] = checked_stride(running, dims);
    running *= std::max<int64_t>(dims[*it], 1);
  }
  return strides;
}

std::vector<int64_t> strides_like(const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &like_dims,
                                  const std::vector<int64_t> &like_strides) {
  if (like_strides.size() != dims.size()) return packed_strides(dims);
  return packed_strides(dims, dimension_order(like_dims, like_strides));
}

bool same_layout(const std::vector<int64_t> &dims, const std::vector<int64_t> &a,
                 const std::vector<int64_t> &b) {
  if (a.size() != dims.size() || b.size() != dims.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > 1 && a[i] != b[i]) return false;
  return true;
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
