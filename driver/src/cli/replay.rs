//! `ipu run model.mlir --plan model.plan.json`: replays a measured run. The replay file pins
//! the whole plan of every op of the model (the form `--dump-plans` writes) and names the
//! hardware measurement it reproduces; the run compiles exactly that plan, simulates it and
//! prints the simulated device program against the measured cycles:
//!
//! ```text
//! hardwareCycles=426132 fidelityError=+10.71% replayExact=false
//! ```
//!
//! ## File format
//! ```json
//! {
//!   "replay": "flash_attention_h1024",
//!   "hardware": {"source": "ANCHOR-PLANS.md section 3, commit 170bf3d",
//!                "cycles": 426132, "exchange_cycles": 67336},
//!   "kernel_constants": "the target table's (7f01179); the run used 170bf3d's",
//!   "target": "c600-6d83c64",
//!   "ops": [{"op": 0, "kind": "attention_flash", "params": {...}}],
//!   "differences": ["what our lowering of this plan does that the measured run did not"]
//! }
//! ```
//! `target` (optional) names the target table the replay compiles and simulates with, the C600
//! with the measured run's AMP GEMM kernel where that is known (`Target::c600_dated`); the run
//! uses it for the compile and as its device (`sim:<target>`), so `--device` must be left as
//! it is or name the same target. `exchange_cycles` (optional) is the measured exchange, compared with the simulated exchange
//! steps' sum. A replay is exact when `differences` is empty; `replayExact=false` marks a
//! figure that compares different programs, whatever its error. Unknown fields are errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use serde::Deserialize;
use serde_json::Value as Json;

use super::Failure;

/// The measured run a replay reproduces.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measured {
    /// Where the figure comes from.
    pub source: String,
    /// Device-program cycles measured on hardware (host I/O excluded).
    pub cycles: u64,
    /// The measured exchange cycles, when published.
    #[serde(default)]
    pub exchange_cycles: Option<u64>,
}

/// A replay file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Replay {
    pub replay: String,
    pub hardware: Measured,
    /// Which kernel constants the replay runs with, against the measured run's.
    #[serde(default)]
    pub kernel_constants: String,
    /// The target table the replay compiles and simulates with: the C600 with the measured
    /// run's AMP GEMM kernel (`c600-6d83c64`), default the table's own C600.
    #[serde(default)]
    pub target: Option<String>,
    /// Every op's whole plan, in the `--constraints` form.
    pub ops: Vec<Json>,
    /// Where our lowering of the plan departs from the measured run.
    #[serde(default)]
    pub differences: Vec<String>,
}

impl Replay {
    /// Reads and checks a replay file; errors name the file (and serde's line and column).
    pub fn read(path: &Path) -> Result<Replay, Failure> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--plan '{}': cannot read it", path.display()))
            .map_err(Failure::Input)?;
        let replay: Replay = serde_json::from_str(&text)
            .with_context(|| format!("--plan '{}': not a replay file", path.display()))
            .map_err(Failure::Input)?;
        if replay.hardware.cycles == 0 {
            return Err(Failure::input(anyhow!(
                "--plan '{}': hardware.cycles must be the measured cycles, not 0",
                path.display()
            )));
        }
        if let Some(target) = &replay.target {
            ipu_device::Target::by_name(target).map_err(|e| {
                Failure::input(anyhow!("--plan '{}': \"target\": {e}", path.display()))
            })?;
        }
        if replay.ops.is_empty() {
            return Err(Failure::input(anyhow!(
                "--plan '{}': \"ops\" is empty; a replay pins every op's plan",
                path.display()
            )));
        }
        Ok(replay)
    }

    /// The constraints file the planner reads: `{"ops": [...]}`.
    pub fn constraints_text(&self) -> String {
        let ops = serde_json::json!({ "ops": self.ops });
        serde_json::to_string_pretty(&ops).unwrap_or_default()
    }

    /// Whether the replay reproduces the measured run's program (no listed difference).
    pub fn exact(&self) -> bool {
        self.differences.is_empty()
    }
}

/// `args` with the replay's `target` as the compile's target table and the run's device
/// (`sim:<target>`); a `--device` naming another device is an error.
pub fn retarget(args: &super::RunArgs, target: &str) -> Result<super::RunArgs, Failure> {
    let device = format!("sim:{target}");
    let named = args.device.strip_prefix("sim:").unwrap_or(&args.device);
    if args.device != ipu_runtime::DEFAULT_DEVICE && args.device != device && named != target {
        return Err(Failure::input(anyhow!(
            "--plan replays on {device} (its \"target\"), not --device {}",
            args.device
        )));
    }
    let mut args = args.clone();
    args.device = device;
    args.compile.target = Some(target.to_string());
    Ok(args)
}

/// The op key of a constraints / dump entry (`0`, `"body:layer:2"`).
fn op_key(entry: &Json) -> Option<String> {
    match entry.get("op")? {
        Json::Number(number) => Some(number.to_string()),
        Json::String(text) => Some(text.clone()),
        _ => None,
    }
}

/// Checks that the plans the compile chose (`dumped`, the `--dump-plans` text) are the
/// replay's, op for op and parameter for parameter: a replay pins whole plans, so an op the
/// file does not pin, or pins only in part, is an error naming the op and the plan it got.
pub fn check_pinned(replay: &Replay, file: &Path, dumped: &str) -> Result<(), Failure> {
    let dumped: Json = serde_json::from_str(dumped)
        .context("reading the compile's plan dump")
        .map_err(Failure::failed)?;
    let chosen = dumped
        .get("ops")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let pinned: BTreeMap<String, &Json> = replay
        .ops
        .iter()
        .filter_map(|entry| Some((op_key(entry)?, entry)))
        .collect();
    for entry in &chosen {
        let key = op_key(entry).unwrap_or_default();
        let text = serde_json::to_string(entry).unwrap_or_default();
        let Some(pin) = pinned.get(&key) else {
            return Err(Failure::input(anyhow!(
                "--plan '{}': op {key} is not pinned; a replay pins every op's whole plan (the \
                 compile chose {text})",
                file.display()
            )));
        };
        let kind_matches = pin.get("kind") == entry.get("kind");
        let params = |value: &Json| value.get("params").cloned().unwrap_or(Json::Null);
        let (want, got) = (params(pin), params(entry));
        let missing: Vec<&String> = got
            .as_object()
            .map(|got| {
                got.keys()
                    .filter(|name| want.get(name.as_str()).is_none())
                    .collect()
            })
            .unwrap_or_default();
        if !kind_matches || !missing.is_empty() {
            return Err(Failure::input(anyhow!(
                "--plan '{}': op {key} is pinned only in part ({}); a replay pins the whole \
                 plan (the compile chose {text})",
                file.display(),
                if kind_matches {
                    format!(
                        "no {}",
                        missing
                            .iter()
                            .map(|name| name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    "no kind, or another kind".to_string()
                }
            )));
        }
    }
    let compiled: Vec<String> = chosen.iter().filter_map(op_key).collect();
    if let Some(extra) = pinned.keys().find(|key| !compiled.contains(key)) {
        return Err(Failure::input(anyhow!(
            "--plan '{}': op {extra} is pinned but the model has no such planned op",
            file.display()
        )));
    }
    Ok(())
}

/// The files a replay run writes beside its artifacts: the constraints it compiles with and
/// the plans the compile chose.
pub struct ReplayFiles {
    pub constraints: PathBuf,
    pub dumped: PathBuf,
}

impl ReplayFiles {
    pub fn write(replay: &Replay, dir: &Path) -> Result<ReplayFiles, Failure> {
        let constraints = dir.join("replay-constraints.json");
        std::fs::write(&constraints, replay.constraints_text())
            .with_context(|| format!("writing '{}'", constraints.display()))
            .map_err(Failure::failed)?;
        Ok(ReplayFiles {
            constraints,
            dumped: dir.join("replay-plans.json"),
        })
    }
}

/// `simulated / hardware - 1` in percent.
pub fn error_percent(simulated: u64, hardware: u64) -> f64 {
    (simulated as f64 / hardware.max(1) as f64 - 1.0) * 100.0
}

/// The replay's line: the measured cycles and the simulated device program's error against
/// them, the exchange's when the file gives it, and whether the replay is exact.
pub fn fidelity_line(replay: &Replay, device_cycles: u64, exchange_cycles: u64) -> String {
    let measured = &replay.hardware;
    let mut line = format!(
        "hardwareCycles={} fidelityError={:+.2}%",
        measured.cycles,
        error_percent(device_cycles, measured.cycles)
    );
    if let Some(exchange) = measured.exchange_cycles {
        line.push_str(&format!(
            " hardwareExchangeCycles={exchange} exchangeCycles={exchange_cycles} exchangeError={:+.2}%",
            error_percent(exchange_cycles, exchange)
        ));
    }
    line.push_str(&format!(" replayExact={}", replay.exact()));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(failure: Failure) -> String {
        match failure {
            Failure::Input(error) | Failure::Failed(Some(error)) => format!("{error:#}"),
            Failure::Failed(None) => String::new(),
        }
    }

    fn replay(ops: Json, differences: &[&str]) -> Replay {
        Replay {
            replay: "r".into(),
            hardware: Measured {
                source: "s".into(),
                cycles: 1000,
                exchange_cycles: Some(400),
            },
            kernel_constants: String::new(),
            target: None,
            ops: ops.as_array().cloned().unwrap(),
            differences: differences.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn the_line_gives_the_error_against_the_hardware() {
        let exact = replay(serde_json::json!([{"op": 0}]), &[]);
        assert_eq!(
            fidelity_line(&exact, 1100, 380),
            "hardwareCycles=1000 fidelityError=+10.00% hardwareExchangeCycles=400 \
             exchangeCycles=380 exchangeError=-5.00% replayExact=true"
        );
        let partial = replay(serde_json::json!([{"op": 0}]), &["keys homed otherwise"]);
        assert!(fidelity_line(&partial, 950, 0).ends_with("fidelityError=-5.00% hardwareExchangeCycles=400 exchangeCycles=0 exchangeError=-100.00% replayExact=false"));
    }

    #[test]
    fn every_op_must_be_pinned_whole() {
        let file = Path::new("r.plan.json");
        let dump = r#"{"ops": [{"op": 0, "kind": "k", "params": {"grid": [1, 2], "tiles": 2}}]}"#;
        let whole = replay(
            serde_json::json!([{"op": 0, "kind": "k", "params": {"grid": [1, 2], "tiles": 2}}]),
            &[],
        );
        assert!(check_pinned(&whole, file, dump).is_ok());
        let part = replay(
            serde_json::json!([{"op": 0, "kind": "k", "params": {"grid": [1, 2]}}]),
            &[],
        );
        let error = message(check_pinned(&part, file, dump).unwrap_err());
        assert!(
            error.contains("op 0 is pinned only in part (no tiles)"),
            "{error}"
        );
        let other = replay(serde_json::json!([{"op": 1, "kind": "k"}]), &[]);
        let error = message(check_pinned(&other, file, dump).unwrap_err());
        assert!(error.contains("op 0 is not pinned"), "{error}");
        let extra = replay(
            serde_json::json!([
                {"op": 0, "kind": "k", "params": {"grid": [1, 2], "tiles": 2}},
                {"op": 7, "kind": "k"}
            ]),
            &[],
        );
        let error = message(check_pinned(&extra, file, dump).unwrap_err());
        assert!(
            error.contains("op 7 is pinned but the model has no such"),
            "{error}"
        );
    }

    #[test]
    fn a_malformed_file_is_an_input_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("ipu-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bad.plan.json");
        std::fs::write(
            &path,
            r#"{"replay": "x", "hardware": {"cycles": 5}, "ops": []}"#,
        )
        .unwrap();
        let error = message(Replay::read(&path).unwrap_err());
        assert!(
            error.contains("bad.plan.json") && error.contains("source"),
            "{error}"
        );
        std::fs::write(
            &path,
            r#"{"replay": "x", "hardware": {"source": "s", "cycles": 5}, "ops": [], "extra": 1}"#,
        )
        .unwrap();
        let error = message(Replay::read(&path).unwrap_err());
        assert!(error.contains("unknown field `extra`"), "{error}");
        std::fs::write(
            &path,
            r#"{"replay": "x", "hardware": {"source": "s", "cycles": 5}, "ops": []}"#,
        )
        .unwrap();
        let error = message(Replay::read(&path).unwrap_err());
        assert!(error.contains("\"ops\" is empty"), "{error}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
