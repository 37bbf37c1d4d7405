// Elementwise ops: walks the output's index space and reads each operand
// broadcast (dims of size 1, and missing leading dims, repeat).
#include "core/error.h"
#include "cpu/pointwise_math.h"
#include "cpu/reference_ops.h"
#include "cpu/reference_table.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {

// Pointwise's inputs in0, in1 and in2 (graph/op_list.def).
constexpr int kOperands = Pointwise::kInputCount;
namespace {

template <class T>
void run_typed(const Node &node, const StridedTensor *const inputs[Pointwise::kInputCount],
               const StridedTensor &out, const ElementMask *want) {
  const PointwiseAttrs &attrs = node.as<PointwiseAttrs>();
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const int rank = out.rank;
  Index strides[kOperands] = {};
  for (int port = 0; port < kOperands; ++port)
    if (inputs[port]) strides[port] = broadcast_strides(*inputs[port], rank, out.dims);
  auto operand = [&](int port, const Index &index) -> T {
    if (!inputs[port]) return T(0);
    int64_t offset = 0;
    for (int i = 0; i < rank; ++i) offset += index[i] * strides[port][i];
    return static_cast<T>(round_to_compute(inputs[port]->load(offset), compute));
  };

  auto element = [&](const Index &index) {
    const int64_t offset = out.offset(index.data());
    if (attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX) {
      // Indices are exact integers whatever the compute type.
      out.store(offset, static_cast<double>(index[attrs.axis]));
      return;
    }
    T y;
    if (!pointwise_apply<T>(attrs, operand(0, index), operand(1, index), operand(2, index), &y))
      fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": pointwise mode ",
           pointwise_mode_name(attrs.mode), " (", attrs.mode,
           ") is not supported by the CPU reference");
    out.store(offset, round_to_compute(static_cast<double>(y), compute));
  };
  if (want && !want->all()) {
    want->for_each([&](int64_t linear) { element(unravel(linear, rank, out.dims)); });
    return;
  }
  Index index{};
  do {
    element(index);
  } while (next_index(index, rank, out.dims));
}

}  // namespace

// Output element i reads each operand at i, broadcast (dims of size 1 read
// index 0; missing leading dims are skipped).
void demand_pointwise(const DemandStep &t) {
  const ElementMask *want = t.wanted(Pointwise::kOut);
  if (!want) return;
  const StridedTensor &out = *t.out(Pointwise::kOut);
  want->for_each([&](int64_t linear) {
    const Index index = unravel(linear, out.rank, out.dims);
    for (size_t port = 0; port < t.inputs.size(); ++port) {
      const StridedTensor *in = t.in(port);
      if (!in || !t.needed(port)) continue;
      int64_t at = 0;
      const int shift = out.rank - in->rank;
      for (int i = 0; i < in->rank; ++i) {
        const int own = i + shift;
        at = at * in->dims[i] + (own < 0 || in->dims[i] == 1 ? 0 : index[own]);
      }
      t.needed(port)->set(at);
    }
  });
}

bool pointwise_supported(cudnnfe_pointwise_mode_t mode) {
  if (mode == CUDNNFE_POINTWISE_GEN_INDEX) return true;
  // pointwise_apply is the one list of formulas; ask it on dummy operands.
  PointwiseAttrs attrs;
  attrs.mode = mode;
  double ignored;
  return pointwise_apply<double>(attrs, 0.0, 0.0, 0.0, &ignored);
}

void run_pointwise(const Node &node, const StridedTensor *const inputs[Pointwise::kInputCount],
                   const StridedTensor &out, const ElementMask *want) {
  const PointwiseAttrs &attrs = node.as<PointwiseAttrs>();
  if (attrs.mode == CUDNNFE_POINTWISE_GEN_INDEX && (attrs.axis < 0 || attrs.axis >= out.rank))
    fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": GEN_INDEX axis ", attrs.axis,
         " is outside the output's ", out.rank, " dims");
  // A scalar shared by consumers of different ranks may have more dims than
  // this output; those extra dims are all 1 and simply broadcast.
  for (int port = 0; port < kOperands; ++port) {
    if (!inputs[port]) continue;
    for (int i = 0; i < inputs[port]->rank - out.rank; ++i)
      if (inputs[port]->dims[i] != 1)
        fail(CUDNNFE_STATUS_NOT_SUPPORTED, Graph::label(node), ": ", Graph::input_port(node, port),
             " has more dims than the output");
  }
  // Exact integer math needs double; float math is what FLOAT and HALF mean.
  if (node.compute_dtype == CUDNNFE_DTYPE_DOUBLE || node.compute_dtype == CUDNNFE_DTYPE_INT32)
    run_typed<double>(node, inputs, out, want);
  else
    run_typed<float>(node, inputs, out, want);
}

}  // namespace cpu
}  // namespace cudnnfe
