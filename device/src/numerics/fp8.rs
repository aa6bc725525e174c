//! F143 / F152 element codecs (see the module documentation of `crate::numerics`).

use std::ops::RangeInclusive;

use serde::{Deserialize, Serialize};

use super::NumericsError;
use crate::precision::Precision;

/// Allowed per-tensor scale exponents: poplar's quarter metadata requires the FP8 scale to be
/// within -31..=+31 (docs.graphcore.ai, Poplar API, `createConstantMetadataTensor`) [Doc].
pub const SCALE_RANGE: RangeInclusive<i32> = -31..=31;

/// The single NaN encoding of both FNUZ formats (the would-be negative zero).
const NAN_CODE: u8 = 0x80;
const SIGN_BIT: u8 = 0x80;

/// An 8-bit floating-point element format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Fp8Format {
    /// 1/4/3, bias 8 (MLIR `f8E4M3FNUZ`, ml_dtypes `float8_e4m3fnuz`).
    F143,
    /// 1/5/2, bias 16 (MLIR `f8E5M2FNUZ`, ml_dtypes `float8_e5m2fnuz`).
    F152,
}

/// How [`encode`] rounds and what it does on overflow (see the module documentation).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub enum Rounding {
    /// Round to nearest, ties to even; overflow and infinities clamp to +-max finite. The
    /// device kernels' mode.
    #[default]
    NearestEvenSaturating,
    /// Round to nearest, ties to even; overflow and infinities become NaN (`0x80`), matching
    /// `ml_dtypes`' conversions.
    NearestEvenNanOnOverflow,
}

impl Fp8Format {
    pub const ALL: [Fp8Format; 2] = [Fp8Format::F143, Fp8Format::F152];

    /// The NaN code (`0x80`).
    pub const NAN: u8 = NAN_CODE;

    pub const fn exponent_bits(self) -> u32 {
        match self {
            Fp8Format::F143 => 4,
            Fp8Format::F152 => 5,
        }
    }

    pub const fn mantissa_bits(self) -> u32 {
        match self {
            Fp8Format::F143 => 3,
            Fp8Format::F152 => 2,
        }
    }

    pub const fn bias(self) -> i32 {
        match self {
            Fp8Format::F143 => 8,
            Fp8Format::F152 => 16,
        }
    }

    /// Code of the largest finite value (all exponent values encode finite numbers: no inf).
    pub const fn max_finite_code(self) -> u8 {
        0x7f
    }

    /// Largest finite value: 240 (F143), 57,344 (F152).
    pub fn max_finite(self) -> f32 {
        decode_unscaled(self.max_finite_code(), self)
    }

    /// Smallest positive subnormal: 2^-10 (F143), 2^-17 (F152).
    pub fn min_subnormal(self) -> f32 {
        decode_unscaled(1, self)
    }

    /// Smallest positive normal: 2^-7 (F143), 2^-15 (F152).
    pub fn min_normal(self) -> f32 {
        decode_unscaled(1 << self.mantissa_bits(), self)
    }

    /// The FP8 format of a device precision, if it is one.
    pub const fn from_precision(precision: Precision) -> Option<Fp8Format> {
        match precision {
            Precision::F8E4M3 => Some(Fp8Format::F143),
            Precision::F8E5M2 => Some(Fp8Format::F152),
            Precision::F16 | Precision::F32 => None,
        }
    }

    pub const fn precision(self) -> Precision {
        match self {
            Fp8Format::F143 => Precision::F8E4M3,
            Fp8Format::F152 => Precision::F8E5M2,
        }
    }

    /// Largest exponent field value; FNUZ formats use all of them for finite numbers.
    const fn max_exponent_field(self) -> i32 {
        (1 << self.exponent_bits()) - 1
    }
}

/// Checks that `scale_exp` is in [`SCALE_RANGE`].
pub fn validate_scale(scale_exp: i32) -> Result<(), NumericsError> {
    if SCALE_RANGE.contains(&scale_exp) {
        Ok(())
    } else {
        Err(NumericsError::ScaleOutOfRange {
            scale: scale_exp,
            min: *SCALE_RANGE.start(),
            max: *SCALE_RANGE.end(),
        })
    }
}

/// 2^n exactly, for the exponents used here (|n| well inside f64's normal range).
fn pow2(n: i32) -> f64 {
    debug_assert!((-1022..=1023).contains(&n));
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// floor(log2(x)) of a positive normal f64, read from its exponent field.
fn floor_log2(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32 - 1023
}

/// The real value of `code` times `2^scale_exp`.
///
/// `0x80` decodes to NaN; every other code is finite. The result is exact: every FP8 value
/// times any allowed scale is representable in f32.
pub fn decode(code: u8, format: Fp8Format, scale_exp: i32) -> Result<f32, NumericsError> {
    validate_scale(scale_exp)?;
    Ok(decode_scaled(code, format, scale_exp))
}

/// [`decode`] with an already validated scale.
pub(super) fn decode_scaled(code: u8, format: Fp8Format, scale_exp: i32) -> f32 {
    if code == NAN_CODE {
        return f32::NAN;
    }
    let mantissa_bits = format.mantissa_bits();
    let field = i32::from((code & !SIGN_BIT) >> mantissa_bits);
    let mantissa = f64::from(code & ((1 << mantissa_bits) - 1));
    let mantissa_bits = mantissa_bits as i32;
    let magnitude = if field == 0 {
        mantissa * pow2(1 - format.bias() - mantissa_bits)
    } else {
        (pow2(mantissa_bits) + mantissa) * pow2(field - format.bias() - mantissa_bits)
    };
    // Exact: scaling by a power of two within f64 range, and the result fits f32 exactly.
    let value = (magnitude * pow2(scale_exp)) as f32;
    if code & SIGN_BIT != 0 {
        -value
    } else {
        value
    }
}

fn decode_unscaled(code: u8, format: Fp8Format) -> f32 {
    decode_scaled(code, format, 0)
}

/// Encodes `value / 2^scale_exp` in `format`, rounding to nearest with ties to even; overflow
/// as `rounding` says. See the module documentation for NaN, zero and overflow rules.
pub fn encode(
    value: f32,
    format: Fp8Format,
    scale_exp: i32,
    rounding: Rounding,
) -> Result<u8, NumericsError> {
    validate_scale(scale_exp)?;
    Ok(encode_scaled(value, format, scale_exp, rounding))
}

fn overflow_code(sign: u8, format: Fp8Format, rounding: Rounding) -> u8 {
    match rounding {
        Rounding::NearestEvenSaturating => sign | format.max_finite_code(),
        Rounding::NearestEvenNanOnOverflow => NAN_CODE,
    }
}

/// [`encode`] with an already validated scale.
pub(super) fn encode_scaled(
    value: f32,
    format: Fp8Format,
    scale_exp: i32,
    rounding: Rounding,
) -> u8 {
    if value.is_nan() {
        return NAN_CODE;
    }
    let sign = if value.is_sign_negative() {
        SIGN_BIT
    } else {
        0
    };
    if value.is_infinite() {
        return overflow_code(sign, format, rounding);
    }
    // Exact in f64: |value| <= 2^128 and the scale moves it by at most 2^31.
    let magnitude = f64::from(value).abs() * pow2(-scale_exp);
    if magnitude == 0.0 {
        // No negative zero in FNUZ formats.
        return 0;
    }
    let mantissa_bits = format.mantissa_bits() as i32;
    let min_normal_exponent = 1 - format.bias();
    // Spacing of representable values around `magnitude`: 2^(e - mbits) in the binade of
    // 2^e, and the fixed subnormal spacing below the smallest normal.
    let quantum_exponent = floor_log2(magnitude).max(min_normal_exponent) - mantissa_bits;
    // `steps` is the number of quanta, rounded once from the exact value (ties to even).
    let steps = (magnitude * pow2(-quantum_exponent)).round_ties_even();
    if steps == 0.0 {
        // Underflow to zero, of either sign, is +0.
        return 0;
    }
    let implicit_one = 1u32 << mantissa_bits;
    let mut steps = steps as u32;
    let mut quantum_exponent = quantum_exponent;
    if steps < implicit_one {
        // Subnormal: only reachable in the subnormal spacing; exponent field 0.
        return sign | steps as u8;
    }
    if steps == 2 * implicit_one {
        // Rounding carried into the next binade.
        steps = implicit_one;
        quantum_exponent += 1;
    }
    let field = quantum_exponent + mantissa_bits + format.bias();
    if field > format.max_exponent_field() {
        return overflow_code(sign, format, rounding);
    }
    let mantissa = steps - implicit_one;
    sign | ((field as u8) << mantissa_bits) | mantissa as u8
}

/// The per-tensor scale exponent that maps data with largest magnitude `max_abs` into
/// `format`: the smallest `s` with `max_abs / 2^s <= max_finite`, so the largest element lands
/// in the format's top binade without saturating and small elements keep as many bits as
/// possible.
///
/// `max_abs == 0` gives 0. Data so small that `s` would be below the range gets the smallest
/// allowed scale (-31): it still encodes without overflow, with unused headroom. Data that
/// needs more than the largest scale (31) is an error, as is a NaN, infinite or negative
/// `max_abs`.
pub fn choose_scale(max_abs: f32, format: Fp8Format) -> Result<i32, NumericsError> {
    if !max_abs.is_finite() || max_abs < 0.0 {
        return Err(NumericsError::NonFiniteRange { max_abs });
    }
    if max_abs == 0.0 {
        return Ok(0);
    }
    let max_finite = f64::from(format.max_finite());
    let target = f64::from(max_abs);
    // Start at the exponent difference and correct by at most a step either way.
    let mut scale = floor_log2(target) - floor_log2(max_finite);
    while target * pow2(-scale) > max_finite {
        scale += 1;
    }
    while target * pow2(-(scale - 1)) <= max_finite {
        scale -= 1;
    }
    let (min, max) = (*SCALE_RANGE.start(), *SCALE_RANGE.end());
    if scale > max {
        return Err(NumericsError::DataRangeTooLarge {
            max_abs,
            needed: scale,
            format,
            max_finite: format.max_finite(),
            max,
        });
    }
    Ok(scale.max(min))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_constants() {
        assert_eq!(Fp8Format::F143.max_finite(), 240.0);
        assert_eq!(Fp8Format::F152.max_finite(), 57344.0);
        assert_eq!(Fp8Format::F143.min_subnormal(), 2f32.powi(-10));
        assert_eq!(Fp8Format::F152.min_subnormal(), 2f32.powi(-17));
        assert_eq!(Fp8Format::F143.min_normal(), 2f32.powi(-7));
        assert_eq!(Fp8Format::F152.min_normal(), 2f32.powi(-15));
    }

    #[test]
    fn overflow_is_decided_after_rounding() {
        let nan = Rounding::NearestEvenNanOnOverflow;
        let sat = Rounding::NearestEvenSaturating;
        assert_eq!(encode(247.0, Fp8Format::F143, 0, nan), Ok(0x7f));
        assert_eq!(encode(248.0, Fp8Format::F143, 0, nan), Ok(0x80));
        assert_eq!(encode(248.0, Fp8Format::F143, 0, sat), Ok(0x7f));
        assert_eq!(encode(-1e30, Fp8Format::F143, 0, sat), Ok(0xff));
        assert_eq!(encode(f32::NEG_INFINITY, Fp8Format::F152, 0, sat), Ok(0xff));
        assert_eq!(encode(f32::NAN, Fp8Format::F152, 0, sat), Ok(0x80));
    }
}
