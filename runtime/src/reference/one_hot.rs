//! Bit-exact checks. A one-hot operand (a single 1.0) times an operand of distinct, exactly
//! representable values selects values without rounding anything: `one_hot(m, k) @ B` is row
//! `k` of `B` in row `m` and zeros elsewhere, `A @ one_hot(k, n)` is column `k` of `A` in column
//! `n`, in any accumulation precision. A device result that differs is a layout or exchange
//! bug, and because every value is distinct, [`check_exact`] says where the wrong value came
//! from.

use std::collections::BTreeMap;
use std::fmt;

use ipu_device::numerics::{decode, Fp8Format};
use ipu_dialects::ElementType;

use super::array::Array;
use super::ReferenceError;

/// Zeros with a single 1.0 at `index`.
pub fn one_hot(shape: &[usize], index: &[usize]) -> Result<Array, ReferenceError> {
    let mut array = Array::zeros(shape);
    let offset = array.offset(index).ok_or_else(|| ReferenceError::Helper {
        what: "one_hot",
        detail: format!("index {index:?} is outside shape {shape:?}"),
    })?;
    array.data[offset] = 1.0;
    Ok(array)
}

/// Positive, pairwise distinct values, each exactly representable in `element` (FP8 at scale
/// 0), in row-major order: 1, 2, 3, ... for f32; the consecutive f16 values from 1.0 for f16
/// (16,384 of them); the 127 positive codes for FP8. A tensor larger than that repeats the
/// sequence (positions are then known modulo its length).
pub fn distinct_values(shape: &[usize], element: ElementType) -> Array {
    let count: usize = shape.iter().product();
    let data = (0..count)
        .map(|offset| match element {
            ElementType::F32 => ((offset % (1 << 24)) + 1) as f64,
            // 0x3c00 is 1.0; 0x7bff is 65504, the largest finite f16.
            ElementType::F16 => half::f16::from_bits(0x3c00 + (offset % 0x3fff) as u16).to_f64(),
            ElementType::F8E4M3 => fp8_value(offset, Fp8Format::F143),
            ElementType::F8E5M2 => fp8_value(offset, Fp8Format::F152),
        })
        .collect();
    Array {
        shape: shape.to_vec(),
        data,
    }
}

fn fp8_value(offset: usize, format: Fp8Format) -> f64 {
    let code = (offset % 127) as u8 + 1;
    decode(code, format, 0).map_or(f64::NAN, f64::from)
}

/// An element the device got wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct Misplaced {
    pub index: Vec<usize>,
    pub expected: f64,
    pub found: f64,
    /// Where `found` belongs in the expected result, if it occurs there (the first such
    /// position): the signature of a layout or exchange bug.
    pub belongs_at: Option<Vec<usize>>,
}

/// The outcome of a bit-exact check.
#[derive(Debug, Clone, PartialEq)]
pub struct ExactCheck {
    pub elements: usize,
    pub mismatches: usize,
    /// The first wrong element in row-major order.
    pub first: Option<Misplaced>,
}

impl ExactCheck {
    pub fn pass(&self) -> bool {
        self.mismatches == 0
    }
}

impl fmt::Display for ExactCheck {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match &self.first {
            None => write!(formatter, "exactTest=PASS elements={}", self.elements),
            Some(first) => {
                write!(
                    formatter,
                    "exactTest=FAIL mismatches={} of {}; first at {:?}: expected {}, found {}",
                    self.mismatches, self.elements, first.index, first.expected, first.found
                )?;
                match &first.belongs_at {
                    Some(position) => write!(formatter, " (the value expected at {position:?})"),
                    None => formatter.write_str(" (not a value of the expected result)"),
                }
            }
        }
    }
}

/// Compares bit for bit (NaN matches NaN); see [`Misplaced`].
pub fn check_exact(expected: &Array, device: &Array) -> Result<ExactCheck, ReferenceError> {
    if expected.shape != device.shape || expected.len() != device.len() {
        return Err(ReferenceError::ShapeMismatch {
            what: "exact check".to_string(),
            reference: expected.shape.clone(),
            device: device.shape.clone(),
        });
    }
    let mut check = ExactCheck {
        elements: expected.len(),
        mismatches: 0,
        first: None,
    };
    let mut first_offset = None;
    for (offset, (&want, &got)) in expected.data.iter().zip(&device.data).enumerate() {
        let same = want.to_bits() == got.to_bits()
            || (want.is_nan() && got.is_nan())
            || (want == 0.0 && got == 0.0);
        if !same {
            check.mismatches += 1;
            first_offset.get_or_insert(offset);
        }
    }
    if let Some(offset) = first_offset {
        let found = device.data[offset];
        // Index the expected values once, by bit pattern, for the lookup.
        let mut positions: BTreeMap<u64, usize> = BTreeMap::new();
        for (position, value) in expected.data.iter().enumerate() {
            positions.entry(value.to_bits()).or_insert(position);
        }
        check.first = Some(Misplaced {
            index: expected.unravel(offset),
            expected: expected.data[offset],
            found,
            belongs_at: positions
                .get(&found.to_bits())
                .map(|&position| expected.unravel(position)),
        });
    }
    Ok(check)
}
