//! Rounding f64 values onto the grid of an element type, once, to nearest even.
//!
//! f16 and FP8 go through f32 with *round to odd*: rounding an exact value to odd at f32's 24
//! bits and then to nearest even at p <= 22 bits gives the same result as rounding the exact
//! value directly (the odd sticky bit keeps a value that is not a tie from becoming one), so
//! the f32 step never causes a double-rounding error. FP8 then uses the device's own encoder
//! (`ipu_device::numerics::encode`, saturating), f16 the `half` crate (IEEE overflow to
//! infinity), so the reference and the device agree on every rounding rule.

use ipu_device::numerics::{self, Fp8Format, Rounding};
use ipu_dialects::ElementType;

/// The set of values a tensor of some element type (and FP8 scale) can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grid {
    pub element: ElementType,
    /// FP8 scale exponent; ignored for f16 and f32.
    pub scale: i32,
}

impl Grid {
    pub fn of(element: ElementType, scale: i32) -> Grid {
        Grid {
            element,
            scale: if element.is_fp8() { scale } else { 0 },
        }
    }

    /// The nearest value on the grid (ties to even). FP8 saturates at its largest finite
    /// value, as the device kernels do; f16 and f32 overflow to infinity. The scale must be
    /// in `ipu_device::numerics::SCALE_RANGE` (checked when a program is read).
    pub fn round(&self, value: f64) -> f64 {
        match self.element {
            ElementType::F32 => value as f32 as f64,
            ElementType::F16 => half::f16::from_f32(round_to_odd_f32(value)).to_f64(),
            ElementType::F8E4M3 => round_fp8(value, Fp8Format::F143, self.scale),
            ElementType::F8E5M2 => round_fp8(value, Fp8Format::F152, self.scale),
        }
    }

    /// Rounds every value in place.
    pub fn round_all(&self, values: &mut [f64]) {
        for value in values {
            *value = self.round(*value);
        }
    }
}

/// The unit roundoff (half an ulp at 1.0) of an element type: 2^-(mantissa bits + 1).
pub fn unit_roundoff(element: ElementType) -> f64 {
    let mantissa_bits = match element {
        ElementType::F32 => 23,
        ElementType::F16 => 10,
        ElementType::F8E4M3 => 3,
        ElementType::F8E5M2 => 2,
    };
    (-(mantissa_bits + 1) as f64).exp2()
}

fn round_fp8(value: f64, format: Fp8Format, scale: i32) -> f64 {
    let narrowed = round_to_odd_f32(value);
    // The scale was validated when the program was read; an invalid one would make both
    // calls fail, which maps to NaN rather than a panic.
    numerics::encode(narrowed, format, scale, Rounding::NearestEvenSaturating)
        .and_then(|code| numerics::decode(code, format, scale))
        .map_or(f64::NAN, f64::from)
}

/// `value` rounded to f32 with round-to-odd: exact values stay, others become the neighbour
/// (towards zero or away) whose last significand bit is 1. Overflow gives infinity.
fn round_to_odd_f32(value: f64) -> f32 {
    if !value.is_finite() {
        return value as f32;
    }
    let nearest = value as f32;
    if f64::from(nearest) == value {
        return nearest;
    }
    if nearest.is_infinite() {
        // Beyond f32's range: every target grid saturates or overflows the same way.
        return nearest;
    }
    // Truncate towards zero, then set the sticky bit.
    let truncated = if f64::from(nearest).abs() > value.abs() {
        f32::from_bits(nearest.to_bits() - 1)
    } else {
        nearest
    };
    f32::from_bits(truncated.to_bits() | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f16_rounding_avoids_double_rounding() {
        // 1 + 2^-11 is the tie between 1 and 1 + 2^-10; just above it must round up even
        // though rounding to f32 first would land exactly on the tie.
        let above_tie = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(
            Grid::of(ElementType::F16, 0).round(above_tie),
            1.0 + 2f64.powi(-10)
        );
        assert_eq!(
            Grid::of(ElementType::F16, 0).round(1.0 + 2f64.powi(-11)),
            1.0
        );
        assert_eq!(Grid::of(ElementType::F16, 0).round(70000.0), f64::INFINITY);
    }

    #[test]
    fn fp8_rounding_uses_the_scale_and_saturates() {
        let grid = Grid::of(ElementType::F8E4M3, -2);
        assert_eq!(grid.round(0.3), 0.3125);
        assert_eq!(grid.round(1000.0), 60.0);
        assert_eq!(grid.round(-1000.0), -60.0);
        let above_tie = 1.0 + 2f64.powi(-4) + 2f64.powi(-40);
        assert_eq!(Grid::of(ElementType::F8E4M3, 0).round(above_tie), 1.125);
    }
}
