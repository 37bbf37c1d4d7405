// Verify mode's sampling, tolerances and comparison (exec/verify_sample.h).
#include "exec/verify_sample.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/dtype.h"
#include "ops/attention.h"

namespace cudnnfe::verify {
namespace {

// splitmix64: a small, fixed generator, so that samples repeat run to run.
uint64_t next_random(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Larger is less precise.
int imprecision(cudnnfe_dtype_t dtype) {
  switch (dtype) {
    case CUDNNFE_DTYPE_DOUBLE: return 1;
    case CUDNNFE_DTYPE_FLOAT: return 2;
    case CUDNNFE_DTYPE_HALF: return 3;
    case CUDNNFE_DTYPE_BFLOAT16: return 4;
    case CUDNNFE_DTYPE_FP8_E4M3: return 5;
    case CUDNNFE_DTYPE_FP8_E5M2: return 6;
    default: return 0;
  }
}

void note_dtype(Cone &cone, cudnnfe_dtype_t dtype) {
  if (!dtype_is_float(dtype)) return;
  cone.all_integer = false;
  if (imprecision(dtype) > imprecision(cone.least_precise)) cone.least_precise = dtype;
}

bool is_attention(OpKind kind) {
  return kind == OpKind::kSdpa || kind == OpKind::kSdpaFp8;
}
bool is_attention_backward(OpKind kind) {
  return kind == OpKind::kSdpaBackward || kind == OpKind::kSdpaFp8Backward;
}
bool is_mma(OpKind kind) {
  return kind == OpKind::kConvFprop || kind == OpKind::kConvDgrad || kind == OpKind::kConvWgrad ||
         kind == OpKind::kMatmul || kind == OpKind::kMoeGroupedMatmul ||
         kind == OpKind::kMoeGroupedMatmulBackward;
}

// Whether the node draws random numbers the CPU reference cannot repeat:
// rng, and attention dropout from a seed (the CPU's generator is not
// cuDNN's Philox stream).
bool draws_random(const Node &node) {
  if (node.kind == OpKind::kRng) return true;
  if (!is_attention(node.kind) && !is_attention_backward(node.kind)) return false;
  const AttentionSpec spec = attention_spec(node);
  return spec.seeded_dropout() && spec.options.dropout_probability > 0.0;
}

double floating_rtol(const Tensor &t, const Cone &cone) {
  cudnnfe_dtype_t least = cone.least_precise;
  if (imprecision(t.dtype) > imprecision(least)) least = t.dtype;
  double rtol;
  switch (least) {
    case CUDNNFE_DTYPE_DOUBLE: rtol = 1e-6; break;
    // cuDNN may run FLOAT convolutions and matmuls on TF32 tensor cores (a
    // 10-bit mantissa) unless NVIDIA_TF32_OVERRIDE=0.
    case CUDNNFE_DTYPE_FLOAT: rtol = cone.mma || cone.attention ? 5e-3 : 1e-3; break;
    case CUDNNFE_DTYPE_HALF: rtol = 1e-2; break;
    case CUDNNFE_DTYPE_BFLOAT16: rtol = 2e-2; break;
    case CUDNNFE_DTYPE_FP8_E4M3: rtol = 1.25e-1; break;
    case CUDNNFE_DTYPE_FP8_E5M2: rtol = 2.5e-1; break;
    default: rtol = 1e-3; break;
  }
  if (cone.attention) rtol = std::max(rtol, 2e-2);
  if (cone.attention_backward) rtol = std::max(rtol, least == CUDNNFE_DTYPE_BFLOAT16 ? 7e-2 : 2e-2);
  return rtol;
}

}  // namespace

cpu::ElementMask sample_elements(const Tensor &t, int32_t samples) {
  const int64_t count = t.element_count();
  cpu::ElementMask mask(count);
  if (count <= samples) {
    mask.set_all();
    return mask;
  }
  mask.set(0);
  mask.set(count - 1);
  const int64_t last = t.dims.back(), rows = count / last;
  const int64_t strata = std::max<int64_t>(samples - 2, 0);
  uint64_t state = static_cast<uint64_t>(t.uid) * 0x2545f4914f6cdd1dull + 1;
  for (int64_t k = 0; k < strata; ++k) {
    // Stratum k holds rows [k * rows / strata, (k + 1) * rows / strata).
    const int64_t lo = static_cast<int64_t>(static_cast<double>(k) * rows / strata);
    const int64_t hi =
        std::max(lo + 1, static_cast<int64_t>(static_cast<double>(k + 1) * rows / strata));
    const int64_t row =
        lo + static_cast<int64_t>(next_random(state) % static_cast<uint64_t>(hi - lo));
    const int64_t col = static_cast<int64_t>(next_random(state) % static_cast<uint64_t>(last));
    mask.set(std::min(row, rows - 1) * last + col);
  }
  return mask;
}

bool attention_kind(OpKind kind) {
  return is_attention(kind) || is_attention_backward(kind);
}

Cone output_cone(const Graph &graph, int64_t uid) {
  Cone cone;
  std::vector<bool> seen(graph.nodes().size(), false);
  std::vector<int64_t> pending{uid};
  while (!pending.empty()) {
    const Tensor &t = graph.tensor(pending.back());
    pending.pop_back();
    note_dtype(cone, t.dtype);
    if (t.producer < 0 || seen[static_cast<size_t>(t.producer)]) continue;
    seen[static_cast<size_t>(t.producer)] = true;
    const Node &node = graph.nodes()[static_cast<size_t>(t.producer)];
    note_dtype(cone, node.compute_dtype);
    if (cone.random.empty() && draws_random(node)) cone.random = Graph::label(node);
    cone.mma = cone.mma || is_mma(node.kind);
    cone.attention = cone.attention || is_attention(node.kind);
    cone.attention_backward = cone.attention_backward || is_attention_backward(node.kind);
    for (int64_t input : node.inputs)
      if (input != 0) pending.push_back(input);
    if (t.view_of != 0) pending.push_back(t.view_of);
  }
  return cone;
}

Tolerance output_tolerance(const Tensor &t, const Cone &cone, double rtol) {
  Tolerance tol;
  tol.floating = dtype_is_float(t.dtype);
  if (tol.floating) {
    tol.rtol = rtol > 0 ? rtol : floating_rtol(t, cone);
  } else {
    // An integer written from floating math may round the other way.
    tol.integer_slack = dtype_is_integer(t.dtype) && !cone.all_integer ? 1.0 : 0.0;
  }
  return tol;
}

Comparison compare(const cpu::StridedTensor &got, const cpu::StridedTensor &want,
                   const cpu::ElementMask &mask, const Tolerance &tolerance) {
  Comparison c;
  auto offset = [&](const cpu::StridedTensor &t, int64_t linear) {
    return t.offset(cpu::unravel(linear, t.rank, t.dims).data());
  };
  mask.for_each([&](int64_t linear) {
    const double w = want.load(offset(want, linear));
    if (std::isfinite(w)) c.scale = std::max(c.scale, std::fabs(w));
  });
  double worst_ratio = -1.0;
  mask.for_each([&](int64_t linear) {
    const double g = got.load(offset(got, linear)), w = want.load(offset(want, linear));
    ++c.compared;
    double error, allowed;
    bool good;
    if (std::isnan(g) || std::isnan(w)) {
      good = std::isnan(g) && std::isnan(w);
      error = good ? 0.0 : std::numeric_limits<double>::infinity();
      allowed = 0.0;
    } else if (std::isinf(g) || std::isinf(w)) {
      good = g == w;
      error = good ? 0.0 : std::numeric_limits<double>::infinity();
      allowed = 0.0;
    } else {
      error = std::fabs(g - w);
      allowed = tolerance.floating ? tolerance.rtol * (std::fabs(w) + 0.1 * c.scale) + 1e-12
                                   : tolerance.integer_slack;
      good = error <= allowed;
    }
    if (!good) ++c.bad;
    // error / allowed: above 1 when bad (infinite for a NaN or infinity
    // where none belongs); the worst element has the largest.
    const double ratio = allowed > 0 ? error / allowed
                         : error > 0 ? std::numeric_limits<double>::infinity()
                                     : 0.0;
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      c.worst = linear;
      c.got = g;
      c.want = w;
      c.error = error;
      c.allowed = allowed;
    }
  });
  return c;
}

}  // namespace cudnnfe::verify
