//! `ipu run`: compile (for a `.mlir`) or read a package, run it on a device in one session,
//! write the artifacts and report the tests, ending like the seed system's runs:
//!
//! ```text
//! profile=artifacts/model/profile-final.ipuprof tiles=1472 samples=1472
//! simulatedCycles=191839 deviceProgramCycles=17240 hostExchangeCycles=174599 refinedEstimate=17240 finalCycles=17240 refinedError=+0.00% estimateTest=PASS (bound 5 %)
//! referenceMaximumAbsoluteError=0.019749 numericalTest=PASS
//! package=artifacts/model/model-final.ipuexe tiles=1472 hardwareTest=PASS
//! ```
//!
//! `hardwareTest` is whether the simulator loaded the package (its hazard analysis is what the
//! hardware would punish) and ran both host calls without a fault.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use ipu_device::image::ImageError;
use ipu_device::kernels::KernelLibrary;
use ipu_device::sim::SimError;
use ipu_device::KernelRunner;
use ipu_runtime::inputs::{read_tensors, seeded_inputs, write_tensors};
use ipu_runtime::npy::{NpyDtype, Tensor};
use ipu_runtime::{DeviceConfig, Package, Session, SessionError, SessionOptions};

use ipu_driver::build::CompileEstimates;
use ipu_runtime::profile::ProgramRun;

use super::expected::{self, Expected};
use super::progress::Steps;
use super::replay::{self, Replay, ReplayFiles};
use super::run_result::RunResult;
use super::{compile, numerical, CompileOptions, Failure, RunArgs};

/// The package's file name inside the run's artifact directory.
pub const PACKAGE_FILE: &str = "model-final.ipuexe";
/// The profile's file name inside the run's artifact directory.
pub const PROFILE_FILE: &str = "profile-final.ipuprof";

/// The artifact directory's name: `--name`, else the input's file stem.
fn run_name(args: &RunArgs) -> Result<String, Failure> {
    let name = match &args.name {
        Some(name) => name.clone(),
        None => args
            .input
            .file_stem()
            .and_then(|s| s.to_str())
            .map(str::to_string)
            .ok_or_else(|| {
                Failure::input(anyhow!(
                    "'{}' has no file name to name the artifacts after; pass --name",
                    args.input.display()
                ))
            })?,
    };
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\']) {
        return Err(Failure::input(anyhow!(
            "--name '{name}' must be one path component"
        )));
    }
    Ok(name)
}

/// One ownership lock per device, shared by every run under the same artifact root:
/// `<root>/sim-c600/device.lock`.
fn lock_dir(root: &Path, device: &str) -> PathBuf {
    let component: String = device
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    root.join(component)
}

/// The package: compiled from a `.mlir` (with the compiler's cycle estimates), read otherwise.
fn load_input(
    args: &RunArgs,
    replay: Option<(&Replay, &ReplayFiles)>,
) -> Result<(Package, Option<CompileEstimates>), Failure> {
    let is_model = args.input.extension().is_some_and(|e| e == "mlir");
    if let (Some((replay, files)), Some(plan)) = (replay, &args.plan) {
        // Compiled with the replay's plans as constraints, then checked to be exactly them.
        let options = CompileOptions {
            plan_constraints: Some(files.constraints.clone()),
            dump_plans: Some(files.dumped.clone()),
            ..args.compile.clone()
        };
        let compiled = compile::compile_with_estimates(&args.input, &options)?;
        let dumped = std::fs::read_to_string(&files.dumped)
            .with_context(|| format!("reading '{}'", files.dumped.display()))
            .map_err(Failure::failed)?;
        replay::check_pinned(replay, plan, &dumped)?;
        return Ok((compiled.0, Some(compiled.1)));
    }
    if is_model {
        return compile::compile_with_estimates(&args.input, &args.compile)
            .map(|(package, estimates)| (package, Some(estimates)));
    }
    Package::read(&args.input)
        .with_context(|| format!("reading package '{}'", args.input.display()))
        .map(|package| (package, None))
        .map_err(Failure::Input)
}

/// The cycles line of a run: the simulator's cycles of the `run` call split into the device
/// program and the host exchange (the host writes and reads of its streams), and, when the
/// model was compiled in this run, the compiler's refined and final estimates with the refined
/// estimate's error against the simulated device program.
fn cycles_line(run: &ProgramRun, estimates: Option<&CompileEstimates>) -> String {
    let device = run.device_cycles();
    let mut line = format!(
        "simulatedCycles={} deviceProgramCycles={device} hostExchangeCycles={}",
        run.total_cycles,
        run.host_cycles()
    );
    let estimates = estimates.copied().unwrap_or_default();
    if let Some(refined) = estimates.refined_cycles {
        line.push_str(&format!(" refinedEstimate={refined}"));
    }
    if let Some(final_cycles) = estimates.final_cycles {
        line.push_str(&format!(" finalCycles={final_cycles}"));
    }
    if let (Some(refined), true) = (estimates.refined_cycles, device > 0) {
        let error = (refined as f64 - device as f64) / device as f64 * 100.0;
        let verdict = if error.abs() <= ESTIMATE_BOUND_PERCENT {
            "PASS"
        } else {
            "FAIL"
        };
        line.push_str(&format!(
            " refinedError={error:+.2}% estimateTest={verdict} (bound {ESTIMATE_BOUND_PERCENT} %)"
        ));
    }
    line
}

/// How far the refined estimate may be from the simulated device program before a run marks
/// it (`estimateTest=FAIL`): the bound the planner is tested to (every selected plan of the
/// benchmark graphs and the seeded families of driver/tests/all/estimates.rs). A mark, not an
/// exit status: the program ran and its numbers are what they are.
const ESTIMATE_BOUND_PERCENT: f64 = 5.0;

/// Refuses (nothing runs, exit 2) a package whose ops the compiler estimates at more than
/// `bound` device cycles in all: its simulation and host reference would not finish in
/// reasonable time. Reports the estimate, its device time, and the op that dominates it.
pub fn check_cycle_bound(package: &Package, bound: u64) -> Result<(), Failure> {
    let ops = &package.profile_plan.ops;
    let total = ops
        .iter()
        .fold(0u64, |sum, op| sum.saturating_add(op.estimated_cycles));
    if total <= bound {
        return Ok(());
    }
    let largest = ops.iter().max_by_key(|op| op.estimated_cycles);
    let time = package
        .target()
        .map(|target| {
            let seconds = total as f64 / target.clock_hz.value;
            format!("about {seconds:.0} s on {}", package.image.target)
        })
        .unwrap_or_else(|_| format!("target {}", package.image.target));
    Err(Failure::input(anyhow!(
        "the program is estimated at {total} device cycles ({time}{}), over --max-cycles {bound}: its simulation would not finish in reasonable time (raise --max-cycles to run it anyway)",
        largest
            .map(|op| format!(
                "; {} {} alone {} cycles",
                op.op, op.provenance, op.estimated_cycles
            ))
            .unwrap_or_default()
    )))
}

/// Inputs: seeded Gaussians for every input, replaced by `<dir>/<binding>.npy` where present.
fn host_inputs(args: &RunArgs, package: &Package) -> Result<BTreeMap<String, Tensor>, Failure> {
    let mut tensors = seeded_inputs(package, args.seed);
    if let Some(dir) = &args.inputs {
        if !dir.is_dir() {
            return Err(Failure::input(anyhow!(
                "--inputs '{}' is not a directory",
                dir.display()
            )));
        }
        let read = read_tensors(package, dir)
            .with_context(|| format!("reading inputs from '{}'", dir.display()))
            .map_err(Failure::Input)?;
        tensors.extend(read);
    }
    Ok(tensors)
}

/// `--expected DIR`, read before anything runs: one `.npy` per output of the package, held to
/// `--expected-tolerance` or the default of the compile's precision (`super::expected`). Any
/// problem with the files is an input error naming the file.
fn expected_outputs(args: &RunArgs, package: &Package) -> Result<Option<Expected>, Failure> {
    let Some(dir) = &args.expected else {
        return Ok(None);
    };
    let tolerance = args
        .expected_tolerance
        .unwrap_or_else(|| expected::default_tolerance(package, args.compile.precision.as_deref()));
    expected::read_expected(dir, package, tolerance)
        .map(Some)
        .map_err(Failure::Input)
}

/// The expected test's line on stdout and its failures on stderr; records it in the result
/// and returns whether it passed.
fn expected_test(
    expected: &Expected,
    outputs: &BTreeMap<String, Tensor>,
    result: &mut RunResult,
) -> bool {
    match expected::check(expected, outputs) {
        Ok(outcome) => {
            for failure in outcome.failures() {
                eprintln!("{failure}");
            }
            for (binding, file, comparison) in &outcome.comparisons {
                if comparison.pass {
                    tracing::info!(file = %file.display(), "expected test: {}", numerical::describe(binding, comparison));
                }
            }
            println!("{}", outcome.summary());
            outcome.record(result);
            outcome.pass
        }
        Err(error) => {
            eprintln!("ipu: error: expected test: {error:#}");
            println!("expectedTest=FAIL ({error:#})");
            result.expected = Some("FAIL".into());
            false
        }
    }
}

/// Which exit code a session error maps to: what the user can fix in the command line or the
/// input files is a usage error; what happened on the device is a failed run.
pub fn classify(error: SessionError) -> Failure {
    match error {
        SessionError::Device { .. }
        | SessionError::Config(_)
        | SessionError::Package(_)
        | SessionError::UnknownCall { .. }
        | SessionError::MissingInput { .. }
        | SessionError::UnknownInput { .. }
        | SessionError::InputShape { .. } => Failure::input(error),
        // A package for another device, or from another format version, never ran: the
        // command named the wrong device or file.
        SessionError::Sim(ref sim)
            if matches!(
                **sim,
                SimError::Image(ImageError::TargetMismatch { .. } | ImageError::Version { .. })
            ) =>
        {
            Failure::input(error)
        }
        SessionError::Lock(_)
        | SessionError::Sim(_)
        | SessionError::Order(_)
        | SessionError::Numerics { .. } => Failure::failed(error),
    }
}

/// The host reference's outputs for `inputs` and the tolerance each is held to
/// (`super::numerical`, which documents the rule per workload): the package's source module
/// evaluated by `ipu_runtime::reference` on the inputs the device receives, with the weights
/// of the module, and the operands rounded as the package's precision policy does on the
/// device (FP8 E4M3 at its scale). `Ok(None)` when the package carries no source (the
/// numerical test is then reported as skipped); an error when it does but the reference
/// cannot be computed, which fails the test.
fn reference_outputs(
    package: &Package,
    inputs: &BTreeMap<String, Tensor>,
) -> anyhow::Result<Option<numerical::Reference>> {
    numerical::reference(package, inputs)
}

/// The numerical test's verdict on one run: what `ipu run` prints of it, and the figures its
/// `--result-json` records.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// `PASS`, `FAIL` or `SKIPPED` (the package carries no source to check against).
    pub status: &'static str,
    /// The stdout line: `referenceMaximumAbsoluteError=... numericalTest=PASS|FAIL`, or
    /// `numericalTest=SKIPPED (no reference)`.
    pub line: String,
    pub max_abs_error: Option<f64>,
    /// What failed, one stderr line each (`ipu: numerical test failed: ...`).
    pub failures: Vec<String>,
}

impl Verdict {
    /// Whether the run passes (a skipped test does not fail it).
    pub fn passed(&self) -> bool {
        self.status != "FAIL"
    }

    /// Records the verdict in the run's result.
    pub fn record(&self, result: &mut RunResult) {
        result.numerical = Some(self.status.to_string());
        if self.max_abs_error.is_some() {
            result.max_abs_error = self.max_abs_error;
        }
    }
}

/// Compares the device's `outputs` with the host `reference` (module docs of
/// `super::numerical`); passing comparisons are logged.
pub fn numerical_verdict(
    reference: &anyhow::Result<Option<numerical::Reference>>,
    outputs: &BTreeMap<String, Tensor>,
) -> Verdict {
    let reference = match reference {
        Ok(Some(reference)) => reference,
        Ok(None) => {
            return Verdict {
                status: "SKIPPED",
                line: "numericalTest=SKIPPED (no reference)".into(),
                max_abs_error: None,
                failures: Vec::new(),
            }
        }
        Err(error) => {
            return Verdict {
                status: "FAIL",
                line: format!("numericalTest=FAIL (no reference: {error:#})"),
                max_abs_error: None,
                failures: vec![format!(
                    "ipu: error: numerical test: the host reference failed: {error:#}"
                )],
            }
        }
    };
    let mut failures: Vec<String> = reference
        .altered_weights
        .iter()
        .map(|altered| format!("ipu: numerical test failed: {altered}"))
        .collect();
    match numerical::check(reference, outputs) {
        Ok(outcome) => {
            for (binding, comparison) in &outcome.comparisons {
                let detail = numerical::describe(binding, comparison);
                if comparison.pass {
                    tracing::info!(function = %reference.function, workload = reference.workload, "numerical test: {detail}");
                } else {
                    failures.push(format!(
                        "ipu: numerical test failed: @{} ({} rule): {detail}",
                        reference.function, reference.workload
                    ));
                }
            }
            Verdict {
                status: if outcome.pass { "PASS" } else { "FAIL" },
                line: outcome.summary(),
                max_abs_error: Some(outcome.max_abs_error),
                failures,
            }
        }
        Err(error) => {
            failures.push(format!("ipu: error: numerical test: {error:#}"));
            Verdict {
                status: "FAIL",
                line: format!("numericalTest=FAIL ({error:#})"),
                max_abs_error: None,
                failures,
            }
        }
    }
}

/// The numerical test's line on stdout and its failures on stderr; records the verdict and
/// returns whether it passed (a skipped test does not fail the run).
fn numerical_test(
    reference: &anyhow::Result<Option<numerical::Reference>>,
    outputs: &BTreeMap<String, Tensor>,
    result: &mut RunResult,
) -> bool {
    let verdict = numerical_verdict(reference, outputs);
    for failure in &verdict.failures {
        eprintln!("{failure}");
    }
    println!("{}", verdict.line);
    verdict.record(result);
    verdict.passed()
}

/// Puts the package's compiled kernel objects into the kernel cache when they were built for
/// this host, so the session loads them instead of compiling. An object that does not match
/// (or cannot be installed) only costs a compile from the kernel's spec, so it is logged, not
/// fatal.
pub fn install_packaged_kernels(package: &Package, library: &KernelLibrary) {
    for (artifact, spec) in package.kernels.iter().zip(&package.image.kernels) {
        let Some(object) = artifact
            .object
            .as_ref()
            .and_then(|hash| package.objects.get(hash))
        else {
            continue;
        };
        if let Err(error) = library
            .cache()
            .install(spec, &object.bytes, &object.cache_key)
        {
            tracing::warn!(kernel = %artifact.name, %error, "packaged kernel object not installed; compiling from the spec");
        }
    }
}

/// The model text `--oracle` runs: an f32 compile of an `.mlir` model.
fn oracle_source(args: &RunArgs) -> Result<String, Failure> {
    let is_model = args.input.extension().is_some_and(|e| e == "mlir");
    if !is_model {
        return Err(Failure::input(anyhow!(
            "--oracle needs the model (.mlir in TOSA or linalg), not a package: '{}'",
            args.input.display()
        )));
    }
    if args.compile.precision.as_deref() != Some("f32") {
        return Err(Failure::input(anyhow!(
            "--oracle compares with the f32 tolerance; compile in f32 (--precision f32)"
        )));
    }
    std::fs::read_to_string(&args.input)
        .with_context(|| format!("reading '{}'", args.input.display()))
        .map_err(Failure::Input)
}

/// Runs the oracle on the run's inputs (`argN`) and compares the device's outputs
/// (`resultN`) with it; prints `oracleMaximumAbsoluteError=... oracleTest=PASS|FAIL` and a
/// line per output. Returns whether it passed.
fn oracle_test(
    args: &RunArgs,
    source: &str,
    inputs: &BTreeMap<String, Tensor>,
    outputs: &BTreeMap<String, Tensor>,
) -> Result<bool, Failure> {
    use ipu_driver::oracle::{self, Element, HostTensor, OracleOptions, OracleTolerance};
    let host = |t: &Tensor| HostTensor {
        shape: t.shape.iter().map(|&d| d as usize).collect(),
        element: Element::F32,
        data: t.data.iter().map(|&v| f64::from(v)).collect(),
    };
    let given: BTreeMap<String, HostTensor> = inputs
        .iter()
        .filter(|(name, _)| name.starts_with("arg"))
        .map(|(name, tensor)| (name.clone(), host(tensor)))
        .collect();
    let file = args.input.display().to_string();
    let options = OracleOptions {
        function: None,
        seed: args.seed,
        keep_lowered: false,
    };
    let run = oracle::run_source(source, &file, &options, &given)
        .map_err(|e| Failure::failed(anyhow!("oracle: {e}")))?;
    let candidate: Vec<HostTensor> = (0..run.outputs.len())
        .map(|index| {
            outputs
                .get(&format!("result{index}"))
                .map(host)
                .ok_or_else(|| Failure::failed(anyhow!("the device returned no result{index}")))
        })
        .collect::<Result<_, _>>()?;
    let comparison = oracle::compare_with_oracle(&run, &candidate, OracleTolerance::F32)
        .map_err(|e| Failure::failed(anyhow!("oracle: {e}")))?;
    println!("{}", comparison.report());
    let passed = comparison.passed();
    println!(
        "oracleMaximumAbsoluteError={:.6} oracleTest={}",
        comparison.max_abs_error(),
        if passed { "PASS" } else { "FAIL" }
    );
    Ok(passed)
}

/// What one session returned.
pub struct Ran {
    pub outputs: BTreeMap<String, Tensor>,
    pub profile: ipu_runtime::ProfileFile,
}

/// The session options of `ipu run`'s device flags.
fn session_options(args: &RunArgs) -> SessionOptions {
    let mut options = SessionOptions::new(lock_dir(&args.artifacts, &args.device));
    options.device = args.device.clone();
    options.config_file = args.config.clone();
    options.lock_timeout = args.lock_timeout.map(Duration::from_secs_f64);
    options
}

/// One session: configure, load, host exchange, `initialize` (when present) and `run`.
fn run_session(
    options: &SessionOptions,
    package: Package,
    inputs: &BTreeMap<String, Tensor>,
    runner: Arc<dyn KernelRunner>,
    steps: &Steps,
) -> Result<Ran, SessionError> {
    steps.step("waiting for the device");
    let mut session = Session::open(options, runner)?;
    let writes = package.device_config.clone();
    session.configure(&writes)?;
    let has_initialize = package.call("initialize").is_some();
    steps.step("loading the application");
    session.load(package)?;
    session.start_host_exchange()?;
    steps.step("running");
    if has_initialize {
        session.call("initialize", inputs)?;
    }
    let result = session.call("run", inputs)?;
    Ok(Ran {
        outputs: result.outputs,
        profile: session.profile_file()?,
    })
}

/// Writes `--result-json` when given.
fn write_result(args: &RunArgs, result: &RunResult) -> Result<(), Failure> {
    match &args.result_json {
        Some(path) => result.write(path).map_err(Failure::failed),
        None => Ok(()),
    }
}

pub fn command(args: &RunArgs) -> Result<(), Failure> {
    if let Some(seconds) = args.lock_timeout {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(Failure::input(anyhow!(
                "--lock-timeout must be a non-negative number of seconds, not {seconds}"
            )));
        }
    }
    expected::check_tolerance(args.expected_tolerance).map_err(Failure::Input)?;
    let name = run_name(args)?;
    let steps = Steps::new(4);
    if !args.input.is_file() {
        return Err(Failure::input(anyhow!(
            "cannot read '{}': no such file",
            args.input.display()
        )));
    }
    // A bad configuration file is an input error found before waiting for the device.
    if let Some(config) = &args.config {
        DeviceConfig::read(config)
            .with_context(|| format!("device configuration '{}'", config.display()))
            .map_err(Failure::Input)?;
    }
    // The oracle's precondition is checked before the compile and the run.
    let oracle_source = if args.oracle {
        Some(oracle_source(args)?)
    } else {
        None
    };
    // A replay is read (and refused when malformed) before anything is compiled.
    let replay = match &args.plan {
        Some(plan) => {
            if args.input.extension().is_none_or(|e| e != "mlir") {
                return Err(Failure::input(anyhow!(
                    "--plan replays a model's plan: the input must be a model (.mlir), not '{}'",
                    args.input.display()
                )));
            }
            Some(Replay::read(plan)?)
        }
        None => None,
    };
    // A replay naming its target compiles and runs on it.
    let retargeted;
    let args = match replay.as_ref().and_then(|r| r.target.as_deref()) {
        Some(target) => {
            retargeted = replay::retarget(args, target)?;
            &retargeted
        }
        None => args,
    };
    steps.step("reading the package");
    let mut result = RunResult::default();
    let dir = args.artifacts.join(&name);
    let create_dir = || {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("creating '{}'", dir.display()))
            .map_err(Failure::Input)
    };
    // A replay writes its constraints and the compile's plan dump into the run's directory.
    let replay_files = match &replay {
        Some(replay) => {
            create_dir()?;
            Some(ReplayFiles::write(replay, &dir)?)
        }
        None => None,
    };
    let started = Instant::now();
    let (package, estimates) = load_input(args, replay.as_ref().zip(replay_files.as_ref()))?;
    if let Some(estimates) = &estimates {
        result.compile_seconds = Some(started.elapsed().as_secs_f64());
        result.set_estimates(estimates);
    }
    create_dir()?;
    let package_path = dir.join(PACKAGE_FILE);
    // Written and read back, as every run does: what runs is what the file holds. A package
    // run from its own artifact path is that file already, and is never written over.
    if ipu_runtime::output::check_not_input(&package_path, &[&args.input]).is_ok() {
        package
            .write(&package_path)
            .with_context(|| format!("writing '{}'", package_path.display()))
            .map_err(Failure::failed)?;
    }
    let package = Package::read(&package_path)
        .with_context(|| format!("reading back '{}'", package_path.display()))
        .map_err(Failure::failed)?;
    let tiles = package.tile_count();
    result.device_tiles = Some(tiles);
    result.target = Some(package.image.target.clone());
    check_cycle_bound(&package, args.max_cycles)?;
    let inputs = host_inputs(args, &package)?;
    let expected = expected_outputs(args, &package)?;
    let reference = reference_outputs(&package, &inputs);
    let library = KernelLibrary::from_env()
        .context("opening the kernel cache")
        .map_err(Failure::failed)?;
    install_packaged_kernels(&package, &library);
    let runner: Arc<dyn KernelRunner> = Arc::new(library);

    let ran = match run_session(&session_options(args), package, &inputs, runner, &steps) {
        Ok(ran) => ran,
        Err(error) => {
            let failure = classify(error);
            if matches!(failure, Failure::Failed(_)) {
                steps.suspend(|| {
                    println!(
                        "package={} tiles={tiles} hardwareTest=FAIL",
                        package_path.display()
                    )
                });
                result.hardware = Some("FAIL".into());
                write_result(args, &result)?;
            }
            return Err(failure);
        }
    };
    drop(steps);

    let profile_path = dir.join(PROFILE_FILE);
    ran.profile
        .write(&profile_path)
        .with_context(|| format!("writing '{}'", profile_path.display()))
        .map_err(Failure::failed)?;
    if let Some(outputs) = &args.outputs {
        write_tensors(&ran.outputs, outputs, NpyDtype::F32)
            .with_context(|| format!("writing outputs to '{}'", outputs.display()))
            .map_err(Failure::failed)?;
    }
    println!(
        "profile={} tiles={} samples={}",
        profile_path.display(),
        ran.profile.tiles,
        ran.profile.sample_count()
    );
    if let Some(run) = ran.profile.runs.iter().rev().find(|r| r.program == "run") {
        println!("{}", cycles_line(run, estimates.as_ref()));
        result.set_run(run);
        if let Some(replay) = &replay {
            let device = run.device_cycles();
            println!(
                "{}",
                replay::fidelity_line(replay, device, run.exchange_cycles())
            );
            result.hardware_cycles = Some(replay.hardware.cycles);
            result.fidelity_error_percent =
                Some(replay::error_percent(device, replay.hardware.cycles));
        }
    }
    let mut numerical_pass = numerical_test(&reference, &ran.outputs, &mut result);
    if let Some(source) = &oracle_source {
        numerical_pass &= oracle_test(args, source, &inputs, &ran.outputs)?;
    }
    if let Some(expected) = &expected {
        numerical_pass &= expected_test(expected, &ran.outputs, &mut result);
    }
    println!(
        "package={} tiles={tiles} hardwareTest=PASS",
        package_path.display()
    );
    result.hardware = Some("PASS".into());
    write_result(args, &result)?;
    if numerical_pass {
        Ok(())
    } else {
        Err(Failure::Failed(None))
    }
}

/// How [`run_in_process`] runs a package: `ipu run`'s options that apply once the package is
/// in hand.
pub struct InProcess<'a> {
    /// The device, its configuration file and its ownership lock.
    pub session: SessionOptions,
    /// Seed of the generated inputs (those not given).
    pub seed: u64,
    /// `--max-cycles`.
    pub max_cycles: u64,
    /// Whether to run the numerical test (the host reference); without it the verdict is
    /// `None`.
    pub check: bool,
    /// The compiler's estimates, when the package was compiled in this process.
    pub estimates: Option<&'a CompileEstimates>,
    pub compile_seconds: Option<f64>,
}

/// What [`run_in_process`] returns.
pub struct InProcessRun {
    pub outputs: BTreeMap<String, Tensor>,
    pub profile: ipu_runtime::ProfileFile,
    /// The figures `ipu run --result-json` writes.
    pub result: RunResult,
    pub verdict: Option<Verdict>,
}

/// The directory of a device's ownership lock for runs outside `ipu run`'s artifact tree
/// (`<temp>/ipu-opt/<device>`).
pub fn default_lock_dir(device: &str) -> PathBuf {
    lock_dir(&std::env::temp_dir().join("ipu-opt"), device)
}

/// Runs `package` as `ipu run` does once it has the package (round trip through the file
/// format, cycle bound, inputs, host reference, one session, numerical test), in this
/// process, printing nothing and writing no artifacts. `given` holds the inputs (and weights)
/// the caller gives by binding name; the other inputs are generated from the seed.
pub fn run_in_process(
    package: &Package,
    given: BTreeMap<String, Tensor>,
    how: &InProcess,
) -> Result<InProcessRun, Failure> {
    // What runs is what the file would hold, as `ipu run` writes the package and reads it back.
    let bytes = package
        .to_bytes()
        .context("encoding the package")
        .map_err(Failure::Input)?;
    let package = Package::from_bytes(&bytes)
        .context("reading the package back")
        .map_err(Failure::failed)?;
    let mut result = RunResult {
        device_tiles: Some(package.tile_count()),
        target: Some(package.image.target.clone()),
        compile_seconds: how.compile_seconds,
        ..RunResult::default()
    };
    if let Some(estimates) = how.estimates {
        result.set_estimates(estimates);
    }
    check_cycle_bound(&package, how.max_cycles)?;
    let mut inputs = seeded_inputs(&package, how.seed);
    inputs.extend(given);
    let reference = how.check.then(|| reference_outputs(&package, &inputs));
    let library = KernelLibrary::from_env()
        .context("opening the kernel cache")
        .map_err(Failure::failed)?;
    install_packaged_kernels(&package, &library);
    let runner: Arc<dyn KernelRunner> = Arc::new(library);
    let ran =
        run_session(&how.session, package, &inputs, runner, &Steps::hidden()).map_err(classify)?;
    if let Some(run) = ran.profile.runs.iter().rev().find(|r| r.program == "run") {
        result.set_run(run);
    }
    result.hardware = Some("PASS".into());
    let verdict = reference.map(|reference| numerical_verdict(&reference, &ran.outputs));
    if let Some(verdict) = &verdict {
        verdict.record(&mut result);
    }
    Ok(InProcessRun {
        outputs: ran.outputs,
        profile: ran.profile,
        result,
        verdict,
    })
}
