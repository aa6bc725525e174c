//! The elements of a dense `arith.constant`, read from its printed attribute: `dense<1.5>`
//! (splat), `dense<[[1.0, 2.0], ...]>` (nested lists) or `dense<"0x...">` (raw little-endian
//! element bytes, as MLIR prints large constants). Reading the text needs no raw-buffer access
//! and handles f16 and FP8 elements the C API has no getters for.

use crate::ElementType;

/// Decodes one element's bit pattern (a hex payload's element, or a float printed as its bits)
/// of an element type. FP8 codes need the device's numerics, so the caller supplies it.
pub type DecodeBits = fn(u64, ElementType) -> f64;

/// Parses the printed dense elements attribute `text` of `element` values: row-major values, or
/// one value for a splat.
pub fn parse_dense(
    text: &str,
    element: ElementType,
    decode: DecodeBits,
) -> Result<Vec<f64>, String> {
    let body = text
        .strip_prefix("dense<")
        .ok_or("only dense constants are supported")?;
    // The payload ends at the `>` before the ` : tensor<...>` type.
    let end = body
        .rfind("> :")
        .or_else(|| body.rfind('>'))
        .ok_or("unterminated dense<...>")?;
    let payload = body[..end].trim();
    if let Some(hex) = payload
        .strip_prefix("\"0x")
        .and_then(|rest| rest.strip_suffix('"'))
    {
        return parse_hex(hex, element, decode);
    }
    payload
        .split(|character: char| matches!(character, '[' | ']' | ',') || character.is_whitespace())
        .filter(|item| !item.is_empty())
        .map(|item| parse_number(item, element, decode))
        .collect()
}

fn parse_number(item: &str, element: ElementType, decode: DecodeBits) -> Result<f64, String> {
    match item {
        "true" => return Ok(1.0),
        "false" => return Ok(0.0),
        _ => {}
    }
    if let Some(hex) = item.strip_prefix("0x") {
        // A float printed as its bit pattern (NaN, infinities).
        let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("bad element '{item}'"))?;
        return Ok(decode(bits, element));
    }
    item.parse::<f64>()
        .map_err(|_| format!("bad element '{item}'"))
}

fn parse_hex(hex: &str, element: ElementType, decode: DecodeBits) -> Result<Vec<f64>, String> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return Err("hex payload has an odd number of digits".to_string());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|index| {
            u8::from_str_radix(&hex[index..index + 2], 16)
                .map_err(|_| "bad hex payload".to_string())
        })
        .collect::<Result<Vec<u8>, String>>()?;
    let width = element.bytes() as usize;
    if !bytes.len().is_multiple_of(width) {
        return Err(format!(
            "hex payload of {} bytes is not a whole number of {width}-byte elements",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks(width)
        .map(|chunk| {
            let bits = chunk
                .iter()
                .rev()
                .fold(0u64, |bits, &byte| (bits << 8) | u64::from(byte));
            decode(bits, element)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// f32 only: enough to check the payload forms (the element decoding is the caller's).
    fn decode_f32(bits: u64, _: ElementType) -> f64 {
        f64::from(f32::from_bits(bits as u32))
    }

    #[test]
    fn splats_lists_and_hex_payloads_read_as_row_major_values() {
        let read = |text: &str| parse_dense(text, ElementType::F32, decode_f32);
        assert_eq!(read("dense<1.5> : tensor<4xf32>"), Ok(vec![1.5]));
        assert_eq!(
            read("dense<[[1.0, -2.0], [3.5, 0x7F800000]]> : tensor<2x2xf32>"),
            Ok(vec![1.0, -2.0, 3.5, f64::INFINITY])
        );
        // 1.0f32 and -2.0f32, little-endian.
        assert_eq!(
            read("dense<\"0x0000803F000000C0\"> : tensor<2xf32>"),
            Ok(vec![1.0, -2.0])
        );
        assert_eq!(
            read("dense<\"0x0000803F00\"> : tensor<2xf32>"),
            Err("hex payload of 5 bytes is not a whole number of 4-byte elements".to_string())
        );
        assert_eq!(
            read("dense<[1.0, x]> : tensor<2xf32>"),
            Err("bad element 'x'".to_string())
        );
        assert_eq!(
            read("sparse<[[0]], [1.0]> : tensor<2xf32>"),
            Err("only dense constants are supported".to_string())
        );
    }
}
