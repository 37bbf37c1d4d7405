package cudnnfe

import "math"

// IEEE 754 half precision (FP16) and bfloat16 (BF16) conversions for host
// buffers of DTypeHalf and DTypeBFloat16 tensors, which Go holds as []uint16
// bit patterns. Float32 to 16-bit rounds to nearest, ties to even; NaN stays
// NaN (quiet), infinities and signed zeros are kept, FP16 overflow gives
// infinity and underflow gives subnormals, then zero.

// Float32ToHalf converts f to the nearest FP16 value's bits.
func Float32ToHalf(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff { // Inf or NaN
		if mant != 0 {
			return sign | 0x7e00 | uint16(mant>>13)
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 { // subnormal FP16, or zero
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // may carry into the exponent: rounds up to the next binade or Inf
	}
	return sign | uint16(h)
}

// HalfToFloat32 converts FP16 bits to float32 (exactly).
func HalfToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		e := uint32(127 - 14)
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	default:
		return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
	}
}

// Float32ToBFloat16 converts f to the nearest BF16 value's bits.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it NaN after truncation
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16ToFloat32 converts BF16 bits to float32 (exactly).
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// HalfsFromFloat32s converts a float32 slice to FP16 bits.
func HalfsFromFloat32s(src []float32) []uint16 {
	dst := make([]uint16, len(src))
	for i, f := range src {
		dst[i] = Float32ToHalf(f)
	}
	return dst
}

// Float32sFromHalfs converts FP16 bits to a float32 slice.
func Float32sFromHalfs(src []uint16) []float32 {
	dst := make([]float32, len(src))
	for i, h := range src {
		dst[i] = HalfToFloat32(h)
	}
	return dst
}

// BFloat16sFromFloat32s converts a float32 slice to BF16 bits.
func BFloat16sFromFloat32s(src []float32) []uint16 {
	dst := make([]uint16, len(src))
	for i, f := range src {
		dst[i] = Float32ToBFloat16(f)
	}
	return dst
}

// Float32sFromBFloat16s converts BF16 bits to a float32 slice.
func Float32sFromBFloat16s(src []uint16) []float32 {
	dst := make([]float32, len(src))
	for i, h := range src {
		dst[i] = BFloat16ToFloat32(h)
	}
	return dst
}
