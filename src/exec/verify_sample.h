// Verify mode's choices (docs/verify.md): which output elements a check
// samples, what an output's dependency cone holds (random numbers, data
// types, op families), the tolerance that follows, and the comparison.
#pragma once

#include <cstdint>
#include <string>

#include "cpu/element_mask.h"
#include "cpu/strided_tensor.h"
#include "graph/graph.h"

namespace cudnnfe::verify {

// The sampled elements of `t` (logical row-major indices): every element
// when it has at most `samples`, else its first and last and `samples` - 2
// more, one in each of equal strata of its rows (the index space of all
// dims but the last) at a random place along the last dim. Deterministic in
// the tensor's UID.
cpu::ElementMask sample_elements(const Tensor &t, int32_t samples);

// What the nodes an output depends on hold.
struct Cone {
  std::string random;  // the node drawing random numbers ("" if none)
  // The least precise floating type among the cone's tensors and compute
  // types (NOT_SET when none is floating).
  cudnnfe_dtype_t least_precise = CUDNNFE_DTYPE_NOT_SET;
  bool all_integer = true;  // no floating tensor or compute type at all
  bool mma = false;         // conv, matmul or grouped matmul (TF32 on FLOAT data)
  bool attention = false;   // attention forward
  bool attention_backward = false;
};
Cone output_cone(const Graph &graph, int64_t uid);

// sdpa, sdpa_backward, sdpa_fp8 or sdpa_fp8_backward.
bool attention_kind(OpKind kind);

// How close an element must be: floating elements |got - want| <= rtol *
// (|want| + floor * max|want| over the sample); integer and boolean ones
// within `integer_slack` (0: equal).
struct Tolerance {
  double rtol = 0.0;
  double floor = 0.1;
  double integer_slack = 0.0;
  bool floating = true;
};
// The tolerance of output `t` with cone `cone`; `rtol` > 0 replaces the
// floating default (docs/verify.md has the table).
Tolerance output_tolerance(const Tensor &t, const Cone &cone, double rtol);

struct Comparison {
  int64_t compared = 0, bad = 0;
  double scale = 0.0;  // max |want| over the sample (finite values)
  // The worst element by error over allowed error (bad ones first).
  int64_t worst = -1;  // logical index; -1: nothing compared
  double got = 0.0, want = 0.0, error = 0.0, allowed = 0.0;
};
// Compares `got` with `want` (same layout) at the elements of `mask`.
Comparison compare(const cpu::StridedTensor &got, const cpu::StridedTensor &want,
                   const cpu::ElementMask &mask, const Tolerance &tolerance);

}  // namespace cudnnfe::verify
