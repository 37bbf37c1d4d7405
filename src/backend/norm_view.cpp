// Seeing a norm's tensors through fewer dims (backend/norm_view.h).
#include "backend/norm_view.h"

#include <algorithm>

namespace cudnnfe::backend {

NormView::NormView(const Tensor &x, std::vector<std::vector<size_t>> groups)
    : groups_(std::move(groups)), x_dims_(x.dims) {
  for (std::vector<size_t> &g : groups_) {
    g.erase(std::remove_if(g.begin(), g.end(), [&](size_t i) { return x.dims[i] == 1; }), g.end());
    std::stable_sort(g.begin(), g.end(),
                     [&](size_t a, size_t b) { return x.strides[a] > x.strides[b]; });
  }
}

bool NormView::collapse(const Tensor &t, Collapsed *out) const {
  if (t.dims.size() != x_dims_.size() || t.strides.size() != t.dims.size()) return false;
  out->dims.clear();
  out->strides.clear();
  for (const std::vector<size_t> &g : groups_) {
    size_t full = 0;
    for (size_t i : g) full += t.dims[i] == x_dims_[i];
    if (full == 0) {
      out->dims.push_back(1);
      out->strides.push_back(0);
      continue;
    }
    if (full != g.size()) return false;
    int64_t expected = t.strides[g.back()], extent = 1;
    for (auto it = g.rbegin(); it != g.rend(); ++it) {
      if (t.strides[*it] != expected) return false;
      expected *= t.dims[*it];
      extent *= t.dims[*it];
    }
    out->dims.push_back(extent);
    out->strides.push_back(t.strides[g.back()]);
  }
  return true;
}

std::vector<int64_t> canonical_strides(const std::vector<int64_t> &dims,
                                       std::vector<int64_t> strides,
                                       const std::vector<size_t> &order) {
  int64_t running = 1;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (dims[*it] == 1) {
      strides[*it] = running;
    } else {
      running = std::max(running, strides[*it] * dims[*it]);
    }
  }
  return strides;
}

}  // namespace cudnnfe::backend
