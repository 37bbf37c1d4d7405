// Random numbers on the CPU reference. cuDNN's Philox stream cannot be
// reproduced here (how it maps seed, offset and element to Philox counters
// is not documented), so the CPU uses its own counter-based generator with
// the same distributions, documented in docs/layout-ops.md:
//
//   mix(z)        = SplitMix64's finalizer: z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
//                   z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31
//   word(s, c)    = mix(mix(s) + (c + 1) * 0x9E3779B97F4A7C15)   (mod 2^64)
//   u(s, c)       = ((word(s, c) >> 11) + 0.5) / 2^53            in (0, 1)
//
// Element i of y (its logical row-major index) uses k = offset + i:
//   BERNOULLI  u(s, 2k) < p ? 1 : 0
//   UNIFORM    min + (max - min) * u(s, 2k)
//   NORMAL     mean + stddev * sqrt(-2 ln u(s, 2k)) * cos(2 pi u(s, 2k + 1))
//
// So the same seed and offset give the same numbers, and element i at
// offset o is element i + o at offset 0.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/error.h"
#include "cpu/reference_ops.h"
#include "graph/graph.h"

namespace cudnnfe {
namespace cpu {
namespace {

uint64_t mix(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 31;
  return z;
}

// Reads a one-element INT64 or INT32 tensor exactly (not through double).
uint64_t read_integer(const Node &node, const StridedTensor &t) {
  if (t.dtype == CUDNNFE_DTYPE_INT64) {
    int64_t v;
    std::memcpy(&v, t.data, sizeof(v));
    return static_cast<uint64_t>(v);
  }
  if (t.dtype == CUDNNFE_DTYPE_INT32) {
    int32_t v;
    std::memcpy(&v, t.data, sizeof(v));
    return static_cast<uint64_t>(static_cast<int64_t>(v));
  }
  fail(CUDNNFE_STATUS_INTERNAL, Graph::label(node), ": seed/offset is not INT64 or INT32");
}

}  // namespace

double rng_uniform(uint64_t seed, uint64_t counter) {
  const uint64_t word = mix(mix(seed) + (counter + 1) * 0x9E3779B97F4A7C15ull);
  return (static_cast<double>(word >> 11) + 0.5) * 0x1.0p-53;
}

double rng_value(const RngAttrs &a, uint64_t seed, uint64_t k) {
  const double u = rng_uniform(seed, 2 * k);
  switch (a.distribution) {
    case CUDNNFE_RNG_BERNOULLI: return u < a.bernoulli_probability ? 1.0 : 0.0;
    case CUDNNFE_RNG_UNIFORM: return a.uniform_min + (a.uniform_max - a.uniform_min) * u;
    default: {
      const double v = rng_uniform(seed, 2 * k + 1);
      return a.normal_mean +
             a.normal_stddev * std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * M_PI * v);
    }
  }
}

void run_rng(const Node &node, const StridedTensor *seed, const StridedTensor *offset,
             const StridedTensor &y) {
  const RngAttrs &a = node.as<RngAttrs>();
  const uint64_t s = seed ? read_integer(node, *seed) : static_cast<uint64_t>(a.seed);
  const uint64_t o = offset ? read_integer(node, *offset) : 0;
  Index index{};
  uint64_t i = 0;
  do {
    y.store(y.offset(index.data()), round_to_compute(rng_value(a, s, o + i), node.compute_dtype));
    ++i;
  } while (next_index(index, y.rank, y.dims));
}

}  // namespace cpu
}  // namespace cudnnfe
