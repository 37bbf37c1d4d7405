#include "cpu/attention_dropout.h"

#include <cmath>
#include <cstring>

namespace cudnnfe {
namespace cpu {
namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// An INT64 element read exactly (load() goes through double).
uint64_t load_u64(const StridedTensor &t) {
  if (t.dtype == CUDNNFE_DTYPE_INT64) {
    int64_t v;
    std::memcpy(&v, t.data, sizeof(v));
    return static_cast<uint64_t>(v);
  }
  return static_cast<uint64_t>(static_cast<int64_t>(t.load(0)));
}

}  // namespace

bool AttentionDropout::keep(uint64_t seed, uint64_t offset, uint64_t linear, double p) {
  const uint64_t x = mix(mix(mix(linear) ^ offset) ^ seed);
  const double u = static_cast<double>(x >> 11) * 0x1.0p-53;
  return u >= p;
}

AttentionDropout::AttentionDropout(const AttentionSpec &spec, const AttentionInputs &in,
                                   const Index &dims)
    : dims_(dims) {
  if (spec.seeded_dropout()) {
    kind_ = Kind::kDrawn;
    seed_ = load_u64(*in.dropout_seed);
    offset_ = load_u64(*in.dropout_offset);
    p_ = spec.options.dropout_probability;
    // In float, as the lowering hands them to cuDNN.
    scale_ = static_cast<float>(1.0f / (1.0f - static_cast<float>(p_)));
    scale_inv_ = static_cast<float>(1.0f - static_cast<float>(p_));
  } else if (spec.mask_dropout()) {
    kind_ = Kind::kGiven;
    given_ = in.dropout_mask;
    given_strides_ = broadcast_strides(*given_, 4, dims);
    scale_ = in.dropout_scale->load(0);
    scale_inv_ = in.dropout_scale_inv ? in.dropout_scale_inv->load(0) : 1.0;
  }
}

double AttentionDropout::mask(int64_t n, int64_t h, int64_t i, int64_t j) const {
  switch (kind_) {
    case Kind::kNone: return 1.0;
    case Kind::kDrawn: {
      const uint64_t linear =
          static_cast<uint64_t>(((n * dims_[1] + h) * dims_[2] + i) * dims_[3] + j);
      return keep(seed_, offset_, linear, p_) ? 1.0 : 0.0;
    }
    case Kind::kGiven:
      return given_->load(n * given_strides_[0] + h * given_strides_[1] + i * given_strides_[2] +
                          j * given_strides_[3]);
  }
  return 1.0;
}

}  // namespace cpu
}  // namespace cudnnfe
