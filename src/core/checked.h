// Checked 64-bit integer arithmetic: the one helper for every size, stride,
// offset and byte count computed from caller data (dims, strides, padding,
// graph JSON, plan blobs). It does not decide what a failed computation
// means; callers turn an overflow into a message naming tensor and rule.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace cudnnfe {

// The largest element count (and element span: largest offset + 1) a tensor
// may have, so that its byte count for any data type (at most 8 bytes per
// element; the CPU reference computes in double) fits in int64 and size_t.
constexpr int64_t kMaxTensorElements = std::numeric_limits<int64_t>::max() / 8;
constexpr const char *kMaxTensorElementsText = "2^60 - 1";

// An int64 that remembers whether any step computing it overflowed (or
// divided by zero); once overflowed it stays so. Read it with get().
class CheckedInt {
 public:
  constexpr CheckedInt(int64_t value = 0) : value_(value) {}  // NOLINT: implicit on purpose

  // The value, or nullopt when some step overflowed.
  std::optional<int64_t> get() const {
    if (overflowed_) return std::nullopt;
    return value_;
  }
  bool overflowed() const { return overflowed_; }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    int64_t sum = 0;
    const bool bad = __builtin_add_overflow(a.value_, b.value_, &sum);
    return combine(sum, a, b, bad);
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    int64_t difference = 0;
    const bool bad = __builtin_sub_overflow(a.value_, b.value_, &difference);
    return combine(difference, a, b, bad);
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    int64_t product = 0;
    const bool bad = __builtin_mul_overflow(a.value_, b.value_, &product);
    return combine(product, a, b, bad);
  }
  friend CheckedInt operator/(CheckedInt a, CheckedInt b) {
    const bool bad =
        b.value_ == 0 || (a.value_ == std::numeric_limits<int64_t>::min() && b.value_ == -1);
    return combine(bad ? 0 : a.value_ / b.value_, a, b, bad);
  }
  CheckedInt &operator+=(CheckedInt b) { return *this = *this + b; }
  CheckedInt &operator*=(CheckedInt b) { return *this = *this * b; }

 private:
  static CheckedInt combine(int64_t value, CheckedInt a, CheckedInt b, bool step_overflowed) {
    CheckedInt result(value);
    result.overflowed_ = a.overflowed_ || b.overflowed_ || step_overflowed;
    return result;
  }

  int64_t value_;
  bool overflowed_ = false;
};

}  // namespace cudnnfe
