//! Conversions of whole buffers: device tensors are little-endian byte buffers in tile memory.

use half::f16;

use super::fp8::{decode_scaled, encode_scaled, validate_scale, Fp8Format, Rounding};
use super::NumericsError;
use crate::precision::Precision;

fn check_whole(
    what: &'static str,
    bytes: &[u8],
    element_bytes: usize,
) -> Result<(), NumericsError> {
    // `element_bytes` is 2 or 4 here, never 0.
    if !bytes.chunks_exact(element_bytes).remainder().is_empty() {
        return Err(NumericsError::RaggedBuffer {
            what,
            bytes: bytes.len(),
            element_bytes,
        });
    }
    Ok(())
}

fn fp8_format(what: &'static str, precision: Precision) -> Result<Fp8Format, NumericsError> {
    Fp8Format::from_precision(precision).ok_or(NumericsError::NotFp8 { what, precision })
}

/// Decodes FP8 codes with one per-tensor scale (exact).
pub fn decode_slice(
    codes: &[u8],
    format: Fp8Format,
    scale_exp: i32,
) -> Result<Vec<f32>, NumericsError> {
    validate_scale(scale_exp)?;
    Ok(codes
        .iter()
        .map(|&code| decode_scaled(code, format, scale_exp))
        .collect())
}

/// Encodes values into FP8 codes with one per-tensor scale (see [`super::encode`]).
pub fn encode_slice(
    values: &[f32],
    format: Fp8Format,
    scale_exp: i32,
    rounding: Rounding,
) -> Result<Vec<u8>, NumericsError> {
    validate_scale(scale_exp)?;
    Ok(values
        .iter()
        .map(|&value| encode_scaled(value, format, scale_exp, rounding))
        .collect())
}

/// Little-endian F16 bytes to f32 (exact).
pub fn f16_bytes_to_f32(bytes: &[u8]) -> Result<Vec<f32>, NumericsError> {
    check_whole("f16 buffer", bytes, 2)?;
    Ok(bytes
        .chunks_exact(2)
        .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
        .collect())
}

/// f32 to little-endian F16 bytes: IEEE round to nearest even, overflow to infinity.
pub fn f32_to_f16_bytes(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&value| f16::from_f32(value).to_le_bytes())
        .collect()
}

/// Little-endian F32 bytes to f32.
pub fn f32_bytes_to_vec(bytes: &[u8]) -> Result<Vec<f32>, NumericsError> {
    check_whole("f32 buffer", bytes, 4)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

/// f32 to little-endian F32 bytes.
pub fn f32_to_bytes(values: &[f32]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&value| value.to_le_bytes())
        .collect()
}

/// Decodes a device buffer of `precision` elements to f32 values; `scale_exp` applies to FP8
/// buffers only (value = code * 2^scale) and must be in range for them.
pub fn decode_bytes(
    bytes: &[u8],
    precision: Precision,
    scale_exp: i32,
) -> Result<Vec<f32>, NumericsError> {
    match precision {
        Precision::F32 => f32_bytes_to_vec(bytes),
        Precision::F16 => f16_bytes_to_f32(bytes),
        Precision::F8E4M3 | Precision::F8E5M2 => {
            decode_slice(bytes, fp8_format("decode", precision)?, scale_exp)
        }
    }
}

/// Encodes f32 values as a device buffer of `precision` elements; `scale_exp` and `rounding`
/// apply to FP8 only (F16 rounds to nearest even with IEEE overflow to infinity).
pub fn encode_bytes(
    values: &[f32],
    precision: Precision,
    scale_exp: i32,
    rounding: Rounding,
) -> Result<Vec<u8>, NumericsError> {
    match precision {
        Precision::F32 => Ok(f32_to_bytes(values)),
        Precision::F16 => Ok(f32_to_f16_bytes(values)),
        Precision::F8E4M3 | Precision::F8E5M2 => encode_slice(
            values,
            fp8_format("encode", precision)?,
            scale_exp,
            rounding,
        ),
    }
}

/// The host reference of the cast kernel: converts a buffer from `from` to `to` elements.
///
/// `scale_exp` is the tensor scale of whichever side is FP8 (both, if both are: the value is
/// preserved, re-rounded in the target format). Each element is rounded once: F32/F16 inputs
/// are exact in f32 and rounded directly into the target format.
pub fn cast_bytes(
    src: &[u8],
    from: Precision,
    to: Precision,
    scale_exp: i32,
    rounding: Rounding,
) -> Result<Vec<u8>, NumericsError> {
    let values = decode_bytes(src, from, scale_exp)?;
    encode_bytes(&values, to, scale_exp, rounding)
}
