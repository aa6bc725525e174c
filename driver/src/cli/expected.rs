//! `ipu run --expected DIR`: the device's outputs compared with the frontend's own outputs
//! (what JAX, TensorFlow or PyTorch computed for the same inputs), given as
//! `DIR/<binding>.npy` with the file names `ipu run --outputs` writes (`result0.npy`, ...;
//! `ipu_runtime::inputs::file_name`). The run prints
//! `expectedMaximumAbsoluteError=... expectedTest=PASS|FAIL`; a failure fails the run (exit 1).
//!
//! # Tolerance
//! Every element of output `o` must satisfy
//! `|device - expected| <= t * (max|expected_o| + |expected|)`: an absolute part on the scale of
//! the output's values (`max|expected_o|` over its finite elements; 1 for an all-zero output)
//! and a relative part, both `t`. `--expected-tolerance T` sets `t`; the default depends on
//! the precision the device computes in (the loosest of the `--precision` policy and the
//! element types of the package's bindings; [`default_tolerance`]):
//! * f32 ([`F32_TOLERANCE`], 1e-4): the frontend and the device both compute in f32 and
//!   differ in summation order and in the elementwise functions' approximations. 1e-4 is the
//!   bound the corpus itself holds IREE's CPU run of each exported model to against the
//!   frontend (examples/frontends/README.md; measured errors 6e-8 to 1.2e-6, with sigma-1
//!   inputs and outputs of order 1): well above f32 rounding (unit roundoff 2^-24, times
//!   `2 sqrt(K)` for a K-term sum as in the host reference's f32 GEMM rule: 2e-6 at K = 1024),
//!   well below any layout or lowering bug (errors of the order of the values).
//! * f16 ([`F16_TOLERANCE`], 2^-5): the device rounds its operands to f16 and accumulates F16
//!   partials. The host reference's GEMM rule (`super::numerical`) bounds one GEMM's error by
//!   `2 sqrt(K) 2^-11 max|ref|`, 2^-6 max|ref| at K = 256 (the corpus's widest contraction, the
//!   4x MLP of hidden 64); a block chains two (the MLP rule's K = K1 + K2 = 512 gives 0.022),
//!   and the operands' own rounding to f16 (2^-11 relative) adds little: 2^-5.
//! * FP8 ([`FP8_TOLERANCE`], 2^-3), the `--precision fp8` policy: every GEMM operand is rounded
//!   to E4M3 (3 mantissa bits, unit roundoff 2^-4) at the policy's scale, so each product
//!   carries up to twice that, 2^-3, relative to its size; the products of a dot product share
//!   the scale of the output's values, so 2^-3 of `max|expected|` bounds the error a correct
//!   FP8 compile makes against an f32 frontend.
//!
//! # Input errors (exit 2, nothing runs)
//! A missing file, a file that is not a readable `.npy`, a dtype other than f32/f16 (integer
//! or boolean data) and a shape other than the output's are each refused naming the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context as _};
use ipu_dialects::ElementType;
use ipu_runtime::inputs::file_name;
use ipu_runtime::npy::{NpyError, Tensor};
use ipu_runtime::package::{BindingRole, SourcePrecision};
use ipu_runtime::reference::{compare, Array, Comparison, Tolerance};
use ipu_runtime::Package;

/// Default `t` for outputs computed in f32 (module docs).
pub const F32_TOLERANCE: f64 = 1e-4;
/// Default `t` for outputs computed in f16 (module docs).
pub const F16_TOLERANCE: f64 = 1.0 / 32.0;
/// Default `t` under the FP8 precision policy or with FP8 tensors (module docs).
pub const FP8_TOLERANCE: f64 = 1.0 / 8.0;

/// One output's expected values, read from `file`.
#[derive(Debug, Clone)]
pub struct ExpectedOutput {
    pub binding: String,
    pub file: PathBuf,
    pub values: Tensor,
    /// The rule's `t` for this output.
    pub tolerance: f64,
}

/// The expected outputs of a run, one per output binding of the package.
#[derive(Debug, Clone, Default)]
pub struct Expected {
    pub outputs: Vec<ExpectedOutput>,
}

/// The outcome of comparing a run's outputs with [`Expected`].
#[derive(Debug, Clone)]
pub struct ExpectedOutcome {
    pub max_abs_error: f64,
    pub pass: bool,
    /// The largest `t` applied.
    pub tolerance: f64,
    /// One per output, in binding order: the binding, its file and the comparison.
    pub comparisons: Vec<(String, PathBuf, Comparison)>,
}

impl ExpectedOutcome {
    /// `expectedMaximumAbsoluteError=0.000001 expectedTest=PASS`.
    pub fn summary(&self) -> String {
        format!(
            "expectedMaximumAbsoluteError={:.6} expectedTest={}",
            self.max_abs_error,
            if self.pass { "PASS" } else { "FAIL" }
        )
    }

    /// Records the outcome in the run's result (`--result-json`).
    pub fn record(&self, result: &mut super::run_result::RunResult) {
        result.expected = Some(if self.pass { "PASS" } else { "FAIL" }.into());
        result.expected_max_abs_error = Some(self.max_abs_error);
        result.expected_tolerance = Some(self.tolerance);
    }

    /// One stderr line per output outside the rule.
    pub fn failures(&self) -> Vec<String> {
        self.comparisons
            .iter()
            .filter(|(_, _, comparison)| !comparison.pass)
            .map(|(binding, file, comparison)| {
                format!(
                    "ipu: expected test failed: '{}': {}",
                    file.display(),
                    super::numerical::describe(binding, comparison)
                )
            })
            .collect()
    }
}

/// The default `t` for a run of `package` (module docs): the loosest rule over the precisions
/// the device computes in, the compile's precision policy `policy` (`--precision`, when this
/// run compiled the model) and the element types of every binding (inputs, weights,
/// outputs), FP8 also when the package records the FP8 policy.
pub fn default_tolerance(package: &Package, policy: Option<&str>) -> f64 {
    let fp8_policy = package
        .source
        .as_ref()
        .is_some_and(|source| matches!(source.precision, SourcePrecision::Fp8 { .. }));
    let by_policy = match policy {
        Some("fp8") => FP8_TOLERANCE,
        Some("f16") => F16_TOLERANCE,
        _ if fp8_policy => FP8_TOLERANCE,
        _ => F32_TOLERANCE,
    };
    package
        .bindings
        .iter()
        .map(|binding| match binding.precision {
            ElementType::F8E4M3 | ElementType::F8E5M2 => FP8_TOLERANCE,
            ElementType::F16 => F16_TOLERANCE,
            ElementType::F32 => F32_TOLERANCE,
        })
        .fold(by_policy, f64::max)
}

/// Checks `--expected-tolerance`: a finite, non-negative number.
pub fn check_tolerance(tolerance: Option<f64>) -> anyhow::Result<()> {
    match tolerance {
        Some(t) if !(t.is_finite() && t >= 0.0) => {
            bail!("--expected-tolerance must be a finite non-negative number, not {t}")
        }
        _ => Ok(()),
    }
}

/// Reads `DIR/<binding>.npy` for every output of `package`, each held to `t` = `tolerance`
/// (see [`default_tolerance`]). Every problem is an input error naming the file.
pub fn read_expected(dir: &Path, package: &Package, tolerance: f64) -> anyhow::Result<Expected> {
    check_tolerance(Some(tolerance))?;
    if !dir.is_dir() {
        bail!("--expected '{}' is not a directory", dir.display());
    }
    let mut outputs = Vec::new();
    for binding in package
        .bindings
        .iter()
        .filter(|b| b.role == BindingRole::Output)
    {
        let file = dir.join(file_name(&binding.name));
        match std::fs::metadata(&file) {
            Ok(metadata) if metadata.is_file() => {}
            Ok(_) => bail!(
                "expected output '{}': '{}' is not a regular file",
                binding.name,
                file.display()
            ),
            Err(_) => bail!(
                "expected output '{}': '{}': no such file (--expected needs one <binding>.npy per output)",
                binding.name,
                file.display()
            ),
        }
        let values = Tensor::read(&file).map_err(|error| match error {
            NpyError::Dtype { descr, .. } => anyhow!(
                "expected output '{}': '{}' holds dtype '{descr}', not floating point (little-endian '<f4' or '<f2')",
                binding.name,
                file.display()
            ),
            other => anyhow!(other).context(format!(
                "expected output '{}': cannot read '{}'",
                binding.name,
                file.display()
            )),
        })?;
        if values.shape != binding.shape {
            bail!(
                "expected output '{}': '{}' has shape {:?}, the output has shape {:?}",
                binding.name,
                file.display(),
                values.shape,
                binding.shape
            );
        }
        outputs.push(ExpectedOutput {
            binding: binding.name.clone(),
            file,
            values,
            tolerance,
        });
    }
    Ok(Expected { outputs })
}

/// The rule for an output with expected values `values` and `t` (module docs).
pub fn rule(values: &Array, t: f64) -> Tolerance {
    let scale = values
        .data
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |max, v| max.max(v.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    Tolerance::Elementwise {
        abs: t * scale,
        rel: t,
    }
}

/// Compares the device's `outputs` (by binding name) with the expected ones.
pub fn check(
    expected: &Expected,
    outputs: &BTreeMap<String, Tensor>,
) -> anyhow::Result<ExpectedOutcome> {
    let mut outcome = ExpectedOutcome {
        max_abs_error: 0.0,
        pass: true,
        tolerance: 0.0,
        comparisons: Vec::new(),
    };
    for output in &expected.outputs {
        let device = outputs
            .get(&output.binding)
            .ok_or_else(|| anyhow!("the device returned no output '{}'", output.binding))?;
        let found = Array::from_tensor(device)
            .with_context(|| format!("device output '{}'", output.binding))?;
        let values = Array::from_tensor(&output.values)
            .with_context(|| format!("'{}'", output.file.display()))?;
        let comparison = compare(&values, &found, &rule(&values, output.tolerance))
            .with_context(|| format!("output '{}'", output.binding))?;
        outcome.max_abs_error = outcome.max_abs_error.max(comparison.max_abs_error);
        outcome.pass &= comparison.pass;
        outcome.tolerance = outcome.tolerance.max(output.tolerance);
        outcome
            .comparisons
            .push((output.binding.clone(), output.file.clone(), comparison));
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expected(values: Vec<f32>, t: f64) -> Expected {
        Expected {
            outputs: vec![ExpectedOutput {
                binding: "result0".into(),
                file: PathBuf::from("result0.npy"),
                values: Tensor::new(vec![values.len() as u64], values).unwrap(),
                tolerance: t,
            }],
        }
    }

    fn device(values: Vec<f32>) -> BTreeMap<String, Tensor> {
        BTreeMap::from([(
            "result0".to_string(),
            Tensor::new(vec![values.len() as u64], values).unwrap(),
        )])
    }

    #[test]
    fn the_rule_scales_with_the_largest_expected_value() {
        // max|e| = 10: an element may be off by 1e-4 * (10 + |e|).
        let want = expected(vec![10.0, 0.0, -1.0], 1e-4);
        let within = check(&want, &device(vec![10.0, 0.0009, -1.0011])).unwrap();
        assert!(within.pass, "{:?}", within.comparisons[0].2);
        let outside = check(&want, &device(vec![10.0, 0.0011, -1.0])).unwrap();
        assert!(!outside.pass);
        assert!((outside.max_abs_error - 0.0011).abs() < 1e-6);
        assert_eq!(outside.failures().len(), 1);
        assert!(outside.summary().ends_with("expectedTest=FAIL"));
    }

    #[test]
    fn an_all_zero_output_is_held_to_t_absolute() {
        let want = expected(vec![0.0; 4], 1e-4);
        assert!(check(&want, &device(vec![5e-5; 4])).unwrap().pass);
        assert!(!check(&want, &device(vec![2e-4; 4])).unwrap().pass);
    }

    #[test]
    fn a_nan_on_the_device_fails() {
        let want = expected(vec![1.0, 2.0], 0.5);
        assert!(!check(&want, &device(vec![1.0, f32::NAN])).unwrap().pass);
    }

    #[test]
    fn tolerances_are_checked() {
        assert!(check_tolerance(Some(1e-3)).is_ok());
        assert!(check_tolerance(Some(0.0)).is_ok());
        assert!(check_tolerance(Some(-1.0)).is_err());
        assert!(check_tolerance(Some(f64::NAN)).is_err());
        assert!(check_tolerance(None).is_ok());
    }

    #[test]
    fn defaults_loosen_with_the_precision() {
        const { assert!(F32_TOLERANCE < F16_TOLERANCE && F16_TOLERANCE < FP8_TOLERANCE) };
    }
}
