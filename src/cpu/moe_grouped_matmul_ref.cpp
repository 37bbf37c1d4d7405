// moe_grouped_matmul and its backward on the CPU: plain loops over the
// expert groups and their routed rows, dot products accumulated in double
// (docs/moe.md). Offsets and indices outside their ranges are refused with
// INVALID_ARGUMENT naming the node, the tensor and the element.
#include <vector>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"
#include "ops/moe_grouped_matmul.h"

namespace cudnnfe {
namespace cpu {
namespace {

// Element i of an INT32 column ([n, 1, 1] or [1, n, 1]).
int64_t column_at(const StridedTensor &t, int64_t i) {
  const int axis = t.dims[0] > 1 ? 0 : 1;
  return static_cast<int64_t>(t.load(i * t.strides[axis]));
}

int64_t checked(const Node &node, const char *what, int64_t i, int64_t value, int64_t lo,
                int64_t hi) {
  if (value < lo || value > hi)
    fail(CUDNNFE_STATUS_INVALID_ARGUMENT, Graph::label(node), ": ", what, "[", i, "] = ", value,
         " is outside ", lo, "..", hi);
  return value;
}

struct Group {
  int64_t begin, end, expert;
};

// The routed rows [begin, end) and expert of each group; `rows` routed rows.
std::vector<Group> groups(const Node &node, const StridedTensor &offsets, int64_t experts,
                          int64_t rows) {
  const MoeGroups g = moe_groups(offsets.dims[0], experts);
  std::vector<Group> out;
  for (int64_t i = 0; i < g.count; ++i) {
    const int64_t begin = checked(node, "first_token_offset", i, column_at(offsets, i), 0, rows);
    const int64_t end =
        i + 1 < g.count || g.has_end_bound
            ? checked(node, "first_token_offset", i + 1, column_at(offsets, i + 1), begin, rows)
            : rows;
    out.push_back({begin, end, i % experts});
  }
  return out;
}

// Row `row` of a [1, rows, cols] tensor, rounded to the compute type.
void load_row(const StridedTensor &t, int64_t row, cudnnfe_dtype_t compute,
              std::vector<double> &values) {
  for (int64_t c = 0; c < t.dims[2]; ++c)
    values[c] = round_to_compute(t.load(row * t.strides[1] + c * t.strides[2]), compute);
}

}  // namespace

void run_moe_grouped_matmul(const Node &node, const StridedTensor &token,
                            const StridedTensor &weight, const StridedTensor &offsets,
                            const StridedTensor *token_index, const StridedTensor *token_ks,
                            const StridedTensor &output) {
  const MoeGroupedMatmulAttrs &a = node.as<MoeGroupedMatmulAttrs>();
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const int64_t k = weight.dims[1], n = weight.dims[2];
  const int64_t routed = output.dims[1], tokens = token.dims[1];
  const bool gather = a.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_GATHER;
  const bool scatter = a.mode == CUDNNFE_MOE_GROUPED_MATMUL_MODE_SCATTER;
  for (int64_t r = 0; r < routed; ++r)  // rows no group writes read as 0
    for (int64_t j = 0; j < n; ++j) output.store(r * output.strides[1] + j * output.strides[2], 0);
  std::vector<double> row(static_cast<size_t>(k));
  for (const Group &g : groups(node, offsets, weight.dims[0], scatter ? tokens : routed)) {
    for (int64_t r = g.begin; r < g.end; ++r) {
      int64_t src = r, dst = r;
      if (gather) src = checked(node, "token_index", r, column_at(*token_index, r), 0, tokens - 1);
      if (scatter) {
        const int64_t t = column_at(*token_index, r), slot = column_at(*token_ks, r);
        checked(node, "token_ks", r, slot, 0, a.top_k - 1);
        dst = checked(node, "token_index * top_k + token_ks", r, t * a.top_k + slot, 0, routed - 1);
      }
      load_row(token, src, compute, row);
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t kk = 0; kk < k; ++kk)
          acc += row[kk] *
                 round_to_compute(weight.load(g.expert * weight.strides[0] +
                                              kk * weight.strides[1] + j * weight.strides[2]),
                                  compute);
        output.store(dst * output.strides[1] + j * output.strides[2],
                     round_to_compute(acc, compute));
      }
    }
  }
}

void run_moe_grouped_matmul_backward(const Node &node, const StridedTensor &doutput,
                                     const StridedTensor &token, const StridedTensor &offsets,
                                     const StridedTensor &dweight) {
  const cudnnfe_dtype_t compute = node.compute_dtype;
  const int64_t experts = dweight.dims[0], k = dweight.dims[1], n = dweight.dims[2];
  std::vector<double> acc(static_cast<size_t>(experts * k * n), 0.0);
  std::vector<double> t_row(static_cast<size_t>(k)), d_row(static_cast<size_t>(n));
  for (const Group &g : groups(node, offsets, experts, token.dims[1])) {
    for (int64_t r = g.begin; r < g.end; ++r) {
      load_row(token, r, compute, t_row);
      load_row(doutput, r, compute, d_row);
      double *dst = &acc[static_cast<size_t>(g.expert * k * n)];
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j) dst[kk * n + j] += t_row[kk] * d_row[j];
    }
  }
  for (int64_t e = 0; e < experts; ++e)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j)
        dweight.store(e * dweight.strides[0] + kk * dweight.strides[1] + j * dweight.strides[2],
                      round_to_compute(acc[static_cast<size_t>((e * k + kk) * n + j)], compute));
}

}  // namespace cpu
}  // namespace cudnnfe
