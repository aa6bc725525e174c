//! The numerical test: a device result against the reference, under a per-workload
//! tolerance rule.

use std::fmt;

use ipu_dialects::ElementType;

use super::array::Array;
use super::round::unit_roundoff;
use super::ReferenceError;

/// Unit roundoff of the F16 partials FP8 and FP16 AMP GEMMs accumulate in between K blocks
/// (PopLibs: half is the only partials type for quarter inputs): 2^-11.
pub const F16_ACCUMULATOR_EPSILON: f64 = 1.0 / 2048.0;

/// When a device result passes.
///
/// | workload | rule | source |
/// |---|---|---|
/// | MLP smoke ([`Tolerance::MLP_SMOKE`]) | `max |x - ref| <= 0.02` | HW-C600 (IPU21.md) |
/// | checkpoints ([`Tolerance::CHECKPOINT`]) | every `|x - ref| <= 0.03 + 0.03 |ref|` | HW-C600 |
/// | FP8 GEMM ([`Tolerance::fp8_gemm`]) | every `|x - ref| <= abs + rel |ref|`, derived below | Derived |
/// | one-hot / layout checks ([`Tolerance::Exact`]) | bit-exact | - |
///
/// A NaN on one side only, or infinities that differ, always fail.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// The largest absolute error is at most `max_abs`.
    Absolute { max_abs: f64 },
    /// Every element: `|x - ref| <= abs + rel * |ref|`.
    Elementwise { abs: f64, rel: f64 },
    /// Every element equal.
    Exact,
}

impl Tolerance {
    /// The SigLIP MLP smoke test on hardware: max abs error 0.02.
    pub const MLP_SMOKE: Tolerance = Tolerance::Absolute { max_abs: 0.02 };
    /// Checkpoint comparisons on hardware: `abs(x - ref) <= 0.03 + 0.03 * abs(ref)`.
    pub const CHECKPOINT: Tolerance = Tolerance::Elementwise {
        abs: 0.03,
        rel: 0.03,
    };

    /// The rule for a GEMM over `k` products of FP8 operands, accumulated in F16 partials, whose
    /// result is `output` (FP8 at `output_scale`, or f16/f32) and whose reference result is
    /// `reference`.
    ///
    /// The reference evaluates the planned IR, so both sides see the same FP8 operands (the
    /// casts are in the IR); what differs is the accumulation and the final rounding:
    /// * accumulation: each F16 addition rounds with relative error at most
    ///   `u = 2^-11` ([`F16_ACCUMULATOR_EPSILON`]) of the partial sum. With random-sign data the
    ///   K rounding errors add like a random walk (the probabilistic bound `lambda sqrt(K) u`
    ///   of Higham and Mary, 2019, here with `lambda = 2`), and a partial sum is of the order of
    ///   the output's dynamic range `max |ref|`: `abs = 2 sqrt(K) u max|ref|`;
    /// * final rounding: a slightly different sum may round to the neighbouring grid point of
    ///   the output format, one ulp, at most `2^-m |ref| = 2 u_out |ref|` for `m` mantissa bits
    ///   (2^-3 for F143, 2^-2 for F152, 2^-10 for f16): `rel = 2 u_out`; near zero one
    ///   smallest output step is added to `abs` (2^-10 * 2^scale for F143, 2^-17 * 2^scale for
    ///   F152, 2^-24 for f16).
    ///
    /// Example: K = 1152, f16 output, max |ref| = 4 gives abs = 0.133, rel = 2^-10.
    pub fn fp8_gemm(
        k: usize,
        output: ElementType,
        output_scale: i32,
        reference: &Array,
    ) -> Tolerance {
        let max_reference = reference
            .data
            .iter()
            .filter(|value| value.is_finite())
            .fold(0.0f64, |max, v| max.max(v.abs()));
        let accumulation = 2.0 * (k as f64).sqrt() * F16_ACCUMULATOR_EPSILON * max_reference;
        let smallest_step = match output {
            ElementType::F8E4M3 => (-10.0 + f64::from(output_scale)).exp2(),
            ElementType::F8E5M2 => (-17.0 + f64::from(output_scale)).exp2(),
            ElementType::F16 => (-24.0f64).exp2(),
            ElementType::F32 => (-149.0f64).exp2(),
        };
        Tolerance::Elementwise {
            abs: accumulation + smallest_step,
            rel: 2.0 * unit_roundoff(output),
        }
    }

    /// The error allowed at an element whose reference value is `reference`: none where the
    /// reference is not finite (an overflow or a NaN the device must reproduce; a relative
    /// term would otherwise allow anything there).
    pub fn allowed(&self, reference: f64) -> f64 {
        if !reference.is_finite() {
            return 0.0;
        }
        match *self {
            Tolerance::Absolute { max_abs } => max_abs,
            Tolerance::Elementwise { abs, rel } => abs + rel * reference.abs(),
            Tolerance::Exact => 0.0,
        }
    }
}

impl fmt::Display for Tolerance {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        match self {
            Tolerance::Absolute { max_abs } => write!(formatter, "max |x - ref| <= {max_abs}"),
            Tolerance::Elementwise { abs, rel } => {
                write!(formatter, "|x - ref| <= {abs} + {rel} |ref|")
            }
            Tolerance::Exact => formatter.write_str("exact"),
        }
    }
}

/// The outcome of a numerical test.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub max_abs_error: f64,
    /// Largest `|x - ref| / |ref|` over elements with `ref != 0`.
    pub max_rel_error: f64,
    /// The output (for [`compare_all`]; 0 otherwise) holding the worst element.
    pub worst_output: usize,
    /// Multi-index of the worst element: the largest error relative to what the rule allows
    /// there (for [`Tolerance::Absolute`] and [`Tolerance::Exact`], the largest error); the
    /// first such element on ties. Empty for an empty tensor.
    pub worst_index: Vec<usize>,
    pub worst_reference: f64,
    pub worst_device: f64,
    /// Elements outside the rule.
    pub failures: usize,
    pub elements: usize,
    pub pass: bool,
    pub tolerance: Tolerance,
}

impl Comparison {
    /// The log line of the seed: `referenceMaximumAbsoluteError=0.019749 numericalTest=PASS`.
    pub fn summary(&self) -> String {
        format!(
            "referenceMaximumAbsoluteError={:.6} numericalTest={}",
            self.max_abs_error,
            if self.pass { "PASS" } else { "FAIL" }
        )
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(&self.summary())
    }
}

/// The error between two values: 0 for equal values (equal infinities, or NaN on both sides),
/// infinite when only one side is NaN or the infinities differ.
fn error(reference: f64, device: f64) -> f64 {
    if reference == device || (reference.is_nan() && device.is_nan()) {
        0.0
    } else if reference.is_finite() && device.is_finite() {
        (device - reference).abs()
    } else {
        f64::INFINITY
    }
}

/// Compares a device result with the reference under `tolerance`.
pub fn compare(
    reference: &Array,
    device: &Array,
    tolerance: &Tolerance,
) -> Result<Comparison, ReferenceError> {
    if reference.shape != device.shape || reference.len() != device.len() {
        return Err(ReferenceError::ShapeMismatch {
            what: "numerical test".to_string(),
            reference: reference.shape.clone(),
            device: device.shape.clone(),
        });
    }
    let mut comparison = Comparison {
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        worst_output: 0,
        worst_index: Vec::new(),
        worst_reference: 0.0,
        worst_device: 0.0,
        failures: 0,
        elements: reference.len(),
        pass: true,
        tolerance: *tolerance,
    };
    let mut worst_score = f64::NEG_INFINITY;
    let mut worst_offset = None;
    for (offset, (&expected, &found)) in reference.data.iter().zip(&device.data).enumerate() {
        let error = error(expected, found);
        comparison.max_abs_error = comparison.max_abs_error.max(error);
        if expected != 0.0 && expected.is_finite() {
            comparison.max_rel_error = comparison.max_rel_error.max(error / expected.abs());
        }
        let allowed = tolerance.allowed(expected);
        if error > allowed {
            comparison.failures += 1;
        }
        let score = match tolerance {
            Tolerance::Elementwise { .. } if allowed > 0.0 => error / allowed,
            _ => error,
        };
        if score > worst_score {
            worst_score = score;
            worst_offset = Some(offset);
        }
    }
    if let Some(offset) = worst_offset {
        comparison.worst_index = reference.unravel(offset);
        comparison.worst_reference = reference.data[offset];
        comparison.worst_device = device.data[offset];
    }
    comparison.pass = match tolerance {
        Tolerance::Absolute { max_abs } => comparison.max_abs_error <= *max_abs,
        Tolerance::Elementwise { .. } | Tolerance::Exact => comparison.failures == 0,
    };
    Ok(comparison)
}

/// Compares several outputs under one rule: errors and failures over all of them, the worst
/// element's output in `worst_output`.
pub fn compare_all(
    references: &[Array],
    devices: &[Array],
    tolerance: &Tolerance,
) -> Result<Comparison, ReferenceError> {
    if references.len() != devices.len() {
        return Err(ReferenceError::Helper {
            what: "numerical test",
            detail: format!(
                "{} reference outputs, {} device outputs",
                references.len(),
                devices.len()
            ),
        });
    }
    let mut total: Option<Comparison> = None;
    for (output, (reference, device)) in references.iter().zip(devices).enumerate() {
        let mut next = compare(reference, device, tolerance)?;
        next.worst_output = output;
        total = Some(match total {
            None => next,
            Some(mut total) => {
                let next_is_worse = match tolerance {
                    Tolerance::Elementwise { .. } => {
                        let ratio = |c: &Comparison| {
                            error(c.worst_reference, c.worst_device)
                                / tolerance.allowed(c.worst_reference).max(f64::MIN_POSITIVE)
                        };
                        ratio(&next) > ratio(&total)
                    }
                    _ => next.max_abs_error > total.max_abs_error,
                };
                if next_is_worse {
                    total.worst_output = next.worst_output;
                    total.worst_index = next.worst_index.clone();
                    total.worst_reference = next.worst_reference;
                    total.worst_device = next.worst_device;
                }
                total.max_abs_error = total.max_abs_error.max(next.max_abs_error);
                total.max_rel_error = total.max_rel_error.max(next.max_rel_error);
                total.failures += next.failures;
                total.elements += next.elements;
                total.pass &= next.pass;
                total
            }
        });
    }
    Ok(total.unwrap_or(Comparison {
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        worst_output: 0,
        worst_index: Vec::new(),
        worst_reference: 0.0,
        worst_device: 0.0,
        failures: 0,
        elements: 0,
        pass: true,
        tolerance: *tolerance,
    }))
}
