//! F32, F16, F143 and F152 conversions with per-tensor power-of-two scales.
//!
//! # Formats
//! * **F143** (MLIR `f8E4M3FNUZ`): 1 sign, 4 exponent, 3 mantissa bits, exponent bias 8.
//! * **F152** (MLIR `f8E5M2FNUZ`): 1 sign, 5 exponent, 2 mantissa bits, exponent bias 16.
//!
//! Both follow the "FNUZ" conventions of Graphcore's FP8 proposal (arXiv:2206.02915): finite
//! only (no infinities), no negative zero, and a single NaN encoding `0x80` (the bit pattern
//! that would otherwise be -0). Exponent field 0 encodes subnormals `m * 2^(1 - bias - mbits)`.
//! Largest finite values: F143 240 (`0x7f`), F152 57,344 (`0x7f`); smallest subnormals 2^-10
//! and 2^-17.
//!
//! # Scale
//! An FP8 tensor carries one signed power-of-two scale held outside the elements (poplar's
//! "quarter" metadata): the real value of code `q` is `decode(q) * 2^scale`. Encoding divides
//! by `2^scale` before rounding; this is poplar's convention (`d = q * pow(2, s)`). The scale
//! must lie in [`SCALE_RANGE`] (-31..=31, the range poplar accepts for FP8 metadata [Doc]);
//! outside it the functions return [`NumericsError::ScaleOutOfRange`].
//! Applying the scale is exact: it is done in f64, whose exponent range holds every f32 value
//! times any allowed scale, so scaling never rounds and never overflows before the FP8 rounding.
//!
//! # Rounding and overflow
//! Encoding rounds the (scaled) value once, to nearest with ties to even, directly from its
//! exact value (no double rounding through F16). What happens when the rounded magnitude
//! exceeds the largest finite value is the [`Rounding`] mode:
//! * [`Rounding::NearestEvenSaturating`] clamps to +-max finite (`0x7f` / `0xff`), infinities
//!   included. This is what the device kernels use: a GEMM or cast never manufactures NaN out
//!   of a large but finite partial.
//! * [`Rounding::NearestEvenNanOnOverflow`] returns NaN (`0x80`) for overflow and infinities,
//!   exactly as PyPI `ml_dtypes`' `astype(float8_e4m3fnuz)` does; the oracle test checks this
//!   mode bit for bit.
//!
//! In both modes NaN encodes as `0x80`, and zero, negative zero, and negative values that round
//! to zero all encode as `0x00` (there is no -0). Overflow is decided *after* rounding: F143
//! values in (240, 248) round to 240; 248 is a tie that rounds to even (256) and overflows.
//!
//! F16 conversions use the `half` crate (IEEE binary16, round to nearest even, overflow to
//! infinity as IEEE specifies).
//!
//! # Accumulation
//! These are element conversions. Kernels that accumulate FP8 products (the AMP GEMM) keep
//! partials in F16 between K blocks, as PopLibs does for quarter inputs; the kernels document
//! their own accumulation.

mod buffers;
mod fp8;

pub use buffers::{
    cast_bytes, decode_bytes, decode_slice, encode_bytes, encode_slice, f16_bytes_to_f32,
    f32_bytes_to_vec, f32_to_bytes, f32_to_f16_bytes,
};
pub use fp8::{choose_scale, decode, encode, validate_scale, Fp8Format, Rounding, SCALE_RANGE};

use crate::precision::Precision;

/// Errors from numeric conversions.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NumericsError {
    #[error("FP8 scale exponent {scale} is outside the supported range {min}..={max}")]
    ScaleOutOfRange { scale: i32, min: i32, max: i32 },
    #[error(
        "data with max |x| = {max_abs:e} needs scale exponent {needed} for {format:?} (max finite {max_finite}), above the largest supported scale {max}"
    )]
    DataRangeTooLarge {
        max_abs: f32,
        needed: i32,
        format: Fp8Format,
        max_finite: f32,
        max: i32,
    },
    #[error("max |x| = {max_abs} is not a finite non-negative number; cannot choose an FP8 scale")]
    NonFiniteRange { max_abs: f32 },
    #[error(
        "{what}: buffer of {bytes} bytes is not a whole number of {element_bytes}-byte elements"
    )]
    RaggedBuffer {
        what: &'static str,
        bytes: usize,
        element_bytes: usize,
    },
    #[error("{what}: {precision:?} is not an FP8 precision")]
    NotFp8 {
        what: &'static str,
        precision: Precision,
    },
}
