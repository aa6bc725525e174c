//! `ipu run --result-json FILE`: the run's figures as one JSON object, for tools that compare
//! runs (`ipu sweep` reads it for each point). Written when the run got as far as a package,
//! also when a test failed; fields the run did not reach are `null`.

use std::path::Path;

use anyhow::Context;
use serde::{Deserialize, Serialize};

use ipu_driver::build::CompileEstimates;
use ipu_runtime::profile::ProgramRun;

/// What one `ipu run` measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Tiles of the package's target (the device's, whatever tiles the program uses).
    pub device_tiles: Option<u32>,
    /// The target table the package was compiled for (`c600`, a replay's `c600-6d83c64`).
    #[serde(default)]
    pub target: Option<String>,
    /// Wall time of the compile (a `.mlir` input), seconds.
    pub compile_seconds: Option<f64>,
    /// The simulator's cycles of the `run` call, its device program and its host exchange.
    pub simulated_cycles: Option<u64>,
    pub device_program_cycles: Option<u64>,
    pub host_exchange_cycles: Option<u64>,
    /// The compiler's refined estimate and final cycles of the program.
    pub refined_cycles: Option<u64>,
    pub final_cycles: Option<u64>,
    /// `(refined - device) / device` in percent.
    pub refined_error_percent: Option<f64>,
    /// The selected plan's peak bytes per tile by memory class.
    pub peak_standard_bytes: Option<u64>,
    pub peak_interleaved_bytes: Option<u64>,
    pub peak_total_bytes: Option<u64>,
    /// `PASS` or `FAIL`.
    pub hardware: Option<String>,
    /// `PASS`, `FAIL` or `SKIPPED`.
    pub numerical: Option<String>,
    pub max_abs_error: Option<f64>,
    /// `--expected`: `PASS` or `FAIL`, the largest absolute error over the outputs and the
    /// rule's `t` (the largest applied).
    #[serde(default)]
    pub expected: Option<String>,
    #[serde(default)]
    pub expected_max_abs_error: Option<f64>,
    #[serde(default)]
    pub expected_tolerance: Option<f64>,
    /// `--plan`: the measured cycles and `simulated / hardware - 1` in percent.
    #[serde(default)]
    pub hardware_cycles: Option<u64>,
    #[serde(default)]
    pub fidelity_error_percent: Option<f64>,
}

impl RunResult {
    /// Records the compiler's estimates of a compiled model.
    pub fn set_estimates(&mut self, estimates: &CompileEstimates) {
        self.refined_cycles = estimates.refined_cycles;
        self.final_cycles = estimates.final_cycles;
        self.peak_standard_bytes = estimates.peak_standard_bytes;
        self.peak_interleaved_bytes = estimates.peak_interleaved_bytes;
        self.peak_total_bytes = estimates.peak_total_bytes;
    }

    /// Records the simulated `run` call.
    pub fn set_run(&mut self, run: &ProgramRun) {
        let device = run.device_cycles();
        self.simulated_cycles = Some(run.total_cycles);
        self.device_program_cycles = Some(device);
        self.host_exchange_cycles = Some(run.host_cycles());
        if let (Some(refined), true) = (self.refined_cycles, device > 0) {
            self.refined_error_percent =
                Some((refined as f64 - device as f64) / device as f64 * 100.0);
        }
    }

    /// Writes the object to `path` (pretty JSON, one object).
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        std::fs::write(path, text + "\n")
            .with_context(|| format!("writing the run result '{}'", path.display()))
    }

    /// Reads an object [`RunResult::write`] wrote.
    pub fn read(path: &Path) -> anyhow::Result<RunResult> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading the run result '{}'", path.display()))?;
        serde_json::from_str(&text)
            .with_context(|| format!("parsing the run result '{}'", path.display()))
    }
}
