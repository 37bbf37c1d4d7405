package cudnnfe

import (
	"math"
	"testing"
)

// TestHalfExhaustive: every FP16 value converts to float32 and back
// unchanged (NaNs stay NaN), and the float32 halfway between two adjacent
// FP16 values rounds to the even one.
func TestHalfExhaustive(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := HalfToFloat32(h)
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		if isNaN {
			if !math.IsNaN(float64(f)) || Float32ToHalf(f)&0x7c00 != 0x7c00 || Float32ToHalf(f)&0x3ff == 0 {
				t.Fatalf("NaN %#04x -> %v -> %#04x", h, f, Float32ToHalf(f))
			}
			continue
		}
		if back := Float32ToHalf(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
		// Midpoint to the next value of larger magnitude (finite, not max).
		if h&0x7fff < 0x7bff {
			next := HalfToFloat32(h + 1)
			mid := float32((float64(f) + float64(next)) / 2)
			want := h
			if h&1 == 1 {
				want = h + 1
			}
			if got := Float32ToHalf(mid); got != want {
				t.Fatalf("midpoint of %#04x and %#04x (%v) -> %#04x; want %#04x", h, h+1, mid, got, want)
			}
			// Just above the midpoint rounds away.
			above := math.Nextafter32(mid, float32(math.Copysign(math.Inf(1), float64(f))))
			if got := Float32ToHalf(above); got != h+1 {
				t.Fatalf("above midpoint of %#04x -> %#04x", h, got)
			}
		}
	}
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-08, 0x0001}, {2.98e-08, 0x0000},
		{3.0e-08, 0x0001}, {float32(math.Copysign(0, -1)), 0x8000}, {0.1, 0x2e66},
	} {
		if got := Float32ToHalf(c.f); got != c.h {
			t.Errorf("Float32ToHalf(%v) = %#04x; want %#04x", c.f, got, c.h)
		}
	}
}

func TestBFloat16(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BFloat16ToFloat32(h)
		if math.IsNaN(float64(f)) {
			if !math.IsNaN(float64(BFloat16ToFloat32(Float32ToBFloat16(f)))) {
				t.Fatalf("NaN %#04x lost", h)
			}
			continue
		}
		if back := Float32ToBFloat16(f); back != h {
			t.Fatalf("%#04x -> %v -> %#04x", h, f, back)
		}
	}
	for _, c := range []struct {
		bits uint32
		want uint16
	}{
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above tie
		{0x7f7fffff, 0x7f80}, // max float rounds to Inf
		{0x7fc00001, 0x7fc0}, // NaN stays NaN
		{0x7f800001, 0x7fc0}, // signalling NaN: quiet, not Inf
	} {
		if got := Float32ToBFloat16(math.Float32frombits(c.bits)); got != c.want {
			t.Errorf("Float32ToBFloat16(%#08x) = %#04x; want %#04x", c.bits, got, c.want)
		}
	}
	s := []float32{1, -0.5, 3.140625}
	if got := Float32sFromBFloat16s(BFloat16sFromFloat32s(s)); got[0] != 1 || got[1] != -0.5 || got[2] != 3.140625 {
		t.Errorf("slice round trip %v", got)
	}
	if got := Float32sFromHalfs(HalfsFromFloat32s(s)); got[0] != 1 || got[1] != -0.5 || got[2] != 3.140625 {
		t.Errorf("slice round trip %v", got)
	}
}
