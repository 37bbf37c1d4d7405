// A tensor of a graph: its identity (UID, name), type and layout, and how
// it is fed (bound buffer, virtual intermediate, or pass-by-value scalar).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/c_api.h"

namespace cudnnfe {

struct Tensor {
  int64_t uid = 0;
  std::string name;
  cudnnfe_dtype_t dtype = CUDNNFE_DTYPE_NOT_SET;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;

  // Virtual tensors live only inside the fused plan: op outputs not marked
  // as graph outputs.
  bool is_virtual = false;
  // Scalars are baked into the plan and fed to the backend by value.
  bool is_scalar = false;
  double scalar_value = 0.0;
  // A graph input whose one element is bound at execute as a pointer to host
  // memory (cudnn-frontend's is_pass_by_value tensors): cuDNN reads it by
  // value when execute is called (cudnnfe_tensor_set_pass_by_value).
  bool pass_by_value = false;

  // Index of the node that writes this tensor; -1 for graph inputs.
  int producer = -1;
  // A slice's output is a view: the elements of tensor `view_of` (a graph
  // input, or a virtual tensor on the CPU reference) starting `view_offset`
  // elements into its buffer, read with this tensor's dims and strides. It
  // has no buffer of its own: at execute its pointer is the parent's plus
  // the offset (docs/layout-ops.md). 0: not a view.
  int64_t view_of = 0;
  int64_t view_offset = 0;

  // A ragged (packed) tensor's rows: dim 0 (the batch) is placed by a
  // ragged-offset tensor of its op, not by strides[0] (docs/attention.md),
  // so only the other dims must give each element its own place.
  bool batch_at_offsets = false;

  // Set when the user overrode what shape inference would give.
  bool dims_set_by_user = false;
  bool strides_set_by_user = false;

  bool is_bound() const { return !is_virtual && !is_scalar; }
  // Both throw (naming the tensor) if the shape is beyond the limits that
  // require_shape_fits enforces when a shape is declared.
  int64_t element_count() const;
  // Span of memory the tensor touches, in elements (max offset + 1).
  int64_t element_span() const;
};

// The element count of `dims`, or nullopt when it exceeds kMaxTensorElements
// (core/checked.h) or overflows.
std::optional<int64_t> checked_element_count(const std::vector<int64_t> &dims);
// The largest offset + 1 of `dims` with `strides` (0 for an empty tensor), or
// nullopt when it exceeds kMaxTensorElements or overflows.
std::optional<int64_t> checked_element_span(const std::vector<int64_t> &dims,
                                            const std::vector<int64_t> &strides);
// Refuses (with `status`) a shape whose element count, or whose span when
// `strides` is given, is beyond kMaxTensorElements: `what` names the tensor.
void require_shape_fits(cudnnfe_status_t status, const std::string &what,
                        const std::vector<int64_t> &dims, const std::vector<int64_t> *strides);
// True when two distinct elements of `dims` share an offset under `strides`
// (a broadcast stride 0, or overlapping strides such as {1,1}). Conservative:
// layouts that interleave dims without overlap are reported too.
bool strides_alias(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides);

// Packed row-major strides for `dims`.
std::vector<int64_t> packed_strides(const std::vector<int64_t> &dims);

// A dimension order, outermost first: a permutation of 0..rank-1. A struct
// (not a bare vector) so that a list of strides cannot pass for one.
struct DimOrder {
  std::vector<size_t> outer_to_inner;
};
// The order that `strides` give `dims`: by descending stride. A dim of size
// 1 carries no layout (any stride addresses its one element the same), so
// on equal strides it goes inside the dim of size > 1 it ties with: a
// channels-last [N,1,H,W] (C's stride equals W's) is N,H,W,C and a
// channels-first one (C's stride equals N's) N,C,H,W. Other ties keep the
// logical order.
DimOrder dimension_order(const std::vector<int64_t> &dims, const std::vector<int64_t> &strides);
inline DimOrder dimension_order(const Tensor &t) {
  return dimension_order(t.dims, t.strides);
}
// 0, 1, ..., rank-1 (packed_strides' order).
DimOrder row_major_order(size_t rank);
// N, spatial..., C for [N, C, spatial...] (cudnn-frontend's NHWC stride
// order); row-major below 3 dims, where the two agree.
DimOrder channels_last_order(size_t rank);
// Packed strides for `dims` in `order`; row-major when the ranks differ (a
// caller-set shape of another rank, which the op then refuses).
std::vector<int64_t> packed_strides(const std::vector<int64_t> &dims, const DimOrder &order);
// Packed strides for `dims` that keep the dimension order of a tensor with
// dims `like_dims` and strides `like_strides` (so an output of an NHWC
// input is NHWC too). Falls back to row-major when ranks differ.
std::vector<int64_t> strides_like(const std::vector<int64_t> &dims,
                                  const std::vector<int64_t> &like_dims,
                                  const std::vector<int64_t> &like_strides);
// True when strides `a` and `b` address the same elements of `dims`: equal
// on every dim of size > 1 (a size-1 dim's stride is never multiplied by
// anything but 0). [1,4] with strides [4,1] and [1,1] is the same memory.
bool same_layout(const std::vector<int64_t> &dims, const std::vector<int64_t> &a,
                 const std::vector<int64_t> &b);
// "[2,3,4]"
std::string dims_string(const std::vector<int64_t> &dims);

}  // namespace cudnnfe
