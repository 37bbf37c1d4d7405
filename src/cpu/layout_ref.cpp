// Reshape, transpose and concatenate on the CPU: element copies, byte for
// byte (the types of input and output are equal, so nothing rounds and
// INT64 values above 2^53 survive). A slice has nothing to run: its output
// is a view of its input's buffer (cpu_plan.cpp points it there).
#include <cstring>
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

// Element offsets of `t` in logical row-major order.
std::vector<int64_t> row_major_offsets(const StridedTensor &t) {
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(t.element_count()));
  Index index{};
  do {
    offsets.push_back(t.offset(index.data()));
  } while (next_index(index, t.rank, t.dims));
  return offsets;
}

void copy_element(const StridedTensor &to, int64_t to_offset, const StridedTensor &from,
                  int64_t from_offset) {
  std::memmove(static_cast<unsigned char *>(to.data) + to_offset * to.element_size,
               static_cast<const unsigned char *>(from.data) + from_offset * from.element_size,
               to.element_size);
}

void require_same_type(const Node &node, const StridedTensor &x, const StridedTensor &y) {
  if (x.dtype != y.dtype || x.element_size != y.element_size)
    fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": input and output types differ");
  // These copy whole bytes; cudnn-frontend's layout ops have no bit-packed form either.
  if (x.dtype == CUDNNFE_DTYPE_BOOLEAN_PACKED)
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node),
         ": BOOLEAN_PACKED data cannot be reshaped, transposed or sliced");
}

}  // namespace

void run_reshape(const Node &node, const StridedTensor &x, const StridedTensor &y) {
  require_same_type(node, x, y);
  const std::vector<int64_t> from = row_major_offsets(x), to = row_major_offsets(y);
  if (from.size() != to.size())
    fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": element counts differ");
  // Through a copy: x and y never share memory, but a copy keeps this safe.
  std::vector<unsigned char> staged(from.size() * x.element_size);
  for (size_t i = 0; i < from.size(); ++i)
    std::memcpy(&staged[i * x.element_size],
                static_cast<const unsigned char *>(x.data) + from[i] * x.element_size,
                x.element_size);
  for (size_t i = 0; i < to.size(); ++i)
    std::memcpy(static_cast<unsigned char *>(y.data) + to[i] * y.element_size,
                &staged[i * y.element_size], y.element_size);
}

void run_transpose(const Node &node, const StridedTensor &x, const StridedTensor &y) {
  require_same_type(node, x, y);
  const std::vector<int64_t> &perm = node.as<TransposeAttrs>().permutation;
  // x's strides in y's dim order: y index i reads x with index[perm[k]] = i[k].
  StridedTensor source = x;
  source.rank = y.rank;
  for (int k = 0; k < y.rank; ++k) {
    source.dims[k] = y.dims[k];
    source.strides[k] = x.strides[static_cast<size_t>(perm[static_cast<size_t>(k)])];
  }
  Index index{};
  do {
    copy_element(y, y.offset(index.data()), source, source.offset(index.data()));
  } while (next_index(index, y.rank, y.dims));
}

void run_concatenate(const Node &node, const StridedTensor *const *inputs, size_t count,
                     const StridedTensor &y) {
  const int axis = node.as<ConcatAttrs>().axis;
  int64_t start = 0;
  for (size_t k = 0; k < count; ++k) {
    const StridedTensor &x = *inputs[k];
    require_same_type(node, x, y);
    Index index{};
    do {
      Index at = index;
      at[axis] += start;
      copy_element(y, y.offset(at.data()), x, x.offset(index.data()));
    } while (next_index(index, x.rank, x.dims));
    start += x.dims[axis];
  }
}

// Reshape keeps the row-major order: y element i is x element i.
void demand_reshape(const DemandStep &t) {
  if (const ElementMask *want = t.wanted(Reshape::kY)) t.needed(Reshape::kX)->merge(*want);
}

// y element i reads x at index[perm[k]] = i[k].
void demand_transpose(const DemandStep &t) {
  const ElementMask *want = t.wanted(Transpose::kY);
  if (!want) return;
  const std::vector<int64_t> &perm = t.node.as<TransposeAttrs>().permutation;
  const StridedTensor &x = *t.in(Transpose::kX), &y = *t.out(Transpose::kY);
  want->for_each([&](int64_t linear) {
    const Index i = unravel(linear, y.rank, y.dims);
    Index at{};
    for (int k = 0; k < y.rank; ++k) at[static_cast<size_t>(perm[static_cast<size_t>(k)])] = i[k];
    t.needed(Transpose::kX)->set(ravel(at, x.rank, x.dims));
  });
}

// y element i reads x at start + i * step in each dim.
void demand_slice(const DemandStep &t) {
  const ElementMask *want = t.wanted(Slice::kY);
  if (!want) return;
  const SliceAttrs &a = t.node.as<SliceAttrs>();
  const StridedTensor &x = *t.in(Slice::kX), &y = *t.out(Slice::kY);
  want->for_each([&](int64_t linear) {
    Index at = unravel(linear, y.rank, y.dims);
    for (int k = 0; k < y.rank; ++k) {
      const size_t d = static_cast<size_t>(k);
      at[d] = a.start[d] + at[d] * a.step[d];
    }
    t.needed(0)->set(ravel(at, x.rank, x.dims));
  });
}

}  // namespace cpu
}  // namespace cudnnfe
