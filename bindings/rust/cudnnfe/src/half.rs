//! FP16 and BF16 values as `u16` bit patterns.
//!
//! Tensors of [`DataType::Half`](crate::DataType::Half) and
//! [`DataType::BFloat16`](crate::DataType::BFloat16) live in `u16` buffers.
//! Conversions from `f32` round to nearest, ties to even; overflow gives
//! infinity, NaN stays NaN (quiet).
//!
//! ```
//! use cudnnfe::{bf16_from_f32, bf16_to_f32, f16_from_f32, f16_to_f32};
//! assert_eq!(f16_from_f32(1.0), 0x3c00);
//! assert_eq!(f16_to_f32(0xc000), -2.0);
//! assert_eq!(bf16_from_f32(1.0), 0x3f80);
//! assert_eq!(bf16_to_f32(bf16_from_f32(3.140625)), 3.140625);
//! assert_eq!(f16_to_f32(f16_from_f32(65520.0)), f32::INFINITY); // rounds past the largest half
//! ```

/// Rounds `value` to the nearest IEEE half (FP16), ties to even.
pub fn f16_from_f32(value: f32) -> u16 {
    let bits = value.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exponent = ((bits >> 23) & 0xff) as i32;
    let mantissa = bits & 0x7f_ffff;
    if exponent == 0xff {
        // Infinity stays infinity; NaN stays a (quiet) NaN.
        return if mantissa == 0 {
            sign | 0x7c00
        } else {
            sign | 0x7e00 | (mantissa >> 13) as u16
        };
    }
    let half_exponent = exponent - 127 + 15;
    if half_exponent >= 0x1f {
        return sign | 0x7c00;
    }
    if half_exponent <= 0 {
        // A half subnormal (or zero): units of 2^-24.
        if half_exponent < -10 {
            return sign;
        }
        let full = mantissa | 0x80_0000;
        let shift = (14 - half_exponent) as u32;
        let mut result = full >> shift;
        let rest = full & ((1u32 << shift) - 1);
        let halfway = 1u32 << (shift - 1);
        if rest > halfway || (rest == halfway && result & 1 == 1) {
            result += 1;
        }
        return sign | result as u16;
    }
    let mut result = ((half_exponent as u32) << 10) | (mantissa >> 13);
    let rest = mantissa & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && result & 1 == 1) {
        result += 1; // may carry into the exponent: up to infinity, as it should
    }
    sign | result as u16
}

/// The `f32` value of an IEEE half (exact).
pub fn f16_to_f32(half: u16) -> f32 {
    let sign = ((half & 0x8000) as u32) << 16;
    let exponent = ((half >> 10) & 0x1f) as u32;
    let mantissa = (half & 0x3ff) as u32;
    let bits = match exponent {
        0 if mantissa == 0 => sign,
        0 => {
            let magnitude = mantissa as f32 * (1.0 / 16_777_216.0); // 2^-24, exact
            return if sign != 0 { -magnitude } else { magnitude };
        }
        0x1f => sign | 0x7f80_0000 | (mantissa << 13),
        _ => sign | ((exponent + 112) << 23) | (mantissa << 13),
    };
    f32::from_bits(bits)
}

/// Rounds `value` to the nearest bfloat16, ties to even.
pub fn bf16_from_f32(value: f32) -> u16 {
    let bits = value.to_bits();
    if value.is_nan() {
        return ((bits >> 16) as u16) | 0x0040;
    }
    let rounding = 0x7fff + ((bits >> 16) & 1);
    (bits.wrapping_add(rounding) >> 16) as u16
}

/// The `f32` value of a bfloat16 (exact).
pub fn bf16_to_f32(bf16: u16) -> f32 {
    f32::from_bits((bf16 as u32) << 16)
}

/// [`f16_from_f32`] of every element.
pub fn f16_vec_from_f32(values: &[f32]) -> Vec<u16> {
    values.iter().map(|&v| f16_from_f32(v)).collect()
}

/// [`f16_to_f32`] of every element.
pub fn f16_vec_to_f32(values: &[u16]) -> Vec<f32> {
    values.iter().map(|&v| f16_to_f32(v)).collect()
}

/// [`bf16_from_f32`] of every element.
pub fn bf16_vec_from_f32(values: &[f32]) -> Vec<u16> {
    values.iter().map(|&v| bf16_from_f32(v)).collect()
}

/// [`bf16_to_f32`] of every element.
pub fn bf16_vec_to_f32(values: &[u16]) -> Vec<f32> {
    values.iter().map(|&v| bf16_to_f32(v)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference: the exact value of every half, and the nearest-even choice
    /// between neighbours.
    #[test]
    fn f16_round_trips_every_value() {
        for h in 0..=u16::MAX {
            let f = f16_to_f32(h);
            if f.is_nan() {
                assert!(f16_to_f32(f16_from_f32(f)).is_nan());
            } else {
                assert_eq!(f16_from_f32(f), h, "{h:#06x} -> {f}");
            }
        }
    }

    #[test]
    fn f16_rounds_to_nearest_even() {
        // Between 1.0 (0x3c00) and the next half 1+2^-10 (0x3c01).
        assert_eq!(f16_from_f32(1.0 + 2f32.powi(-11)), 0x3c00); // tie -> even
        assert_eq!(f16_from_f32(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02); // tie -> even (up)
        assert_eq!(f16_from_f32(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3c01);
        assert_eq!(f16_from_f32(65504.0), 0x7bff);
        assert_eq!(f16_from_f32(65519.0), 0x7bff);
        assert_eq!(f16_from_f32(65520.0), 0x7c00);
        assert_eq!(f16_from_f32(-1e10), 0xfc00);
        assert_eq!(f16_from_f32(2f32.powi(-24)), 0x0001); // smallest subnormal
        assert_eq!(f16_from_f32(2f32.powi(-25)), 0x0000); // tie -> even (zero)
        assert_eq!(f16_from_f32(1.5 * 2f32.powi(-25)), 0x0001);
        assert_eq!(f16_from_f32(-0.0), 0x8000);
        assert_eq!(f16_from_f32(2f32.powi(-14) - 2f32.powi(-25)), 0x0400); // rounds up to the smallest normal
        assert!(f16_to_f32(f16_from_f32(f32::NAN)).is_nan());
    }

    #[test]
    fn bf16_round_trips_and_rounds() {
        for b in 0..=u16::MAX {
            let f = bf16_to_f32(b);
            if f.is_nan() {
                assert!(bf16_to_f32(bf16_from_f32(f)).is_nan());
            } else {
                assert_eq!(bf16_from_f32(f), b);
            }
        }
        assert_eq!(bf16_from_f32(1.0 + 2f32.powi(-8)), 0x3f80); // tie -> even
        assert_eq!(bf16_from_f32(1.0 + 3.0 * 2f32.powi(-8)), 0x3f82);
        assert_eq!(bf16_from_f32(f32::MAX), 0x7f80); // rounds to infinity
        assert_eq!(bf16_from_f32(f32::NEG_INFINITY), 0xff80);
        assert!(bf16_to_f32(bf16_from_f32(f32::NAN)).is_nan());
    }
}
