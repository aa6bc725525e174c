//! `ipu_opt._native`: the Rust half of the `ipu_opt` Python package.
//!
//! Each function calls the project's own APIs, as the `ipu` command line does: the compile of
//! `ipu compile` ([`ipu_driver::cli::compile::compile_source`]), the run of `ipu run` once it
//! has a package ([`ipu_driver::cli::run::run_in_process`]), and `ipu sweep`'s process-per-point
//! runner ([`ipu_driver::cli::sweep::sweep`]). The Python half (`ipu_opt/__init__.py`) holds
//! the documented API, its argument handling and the exception classes.
//!
//! Nothing crosses into Python as a panic: every entry point runs its Rust work under
//! [`guard`], which turns a panic into an `ipu_opt.IpuError` naming it. Errors become the
//! exception classes of `ipu_opt._errors`: `InputError` (a `ValueError`) for what the caller
//! can fix, `CompileError` with the compiler's diagnostics, `RunError` for a run that failed.

mod arrays;
mod errors;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;
use ipu_driver::build::CompileEstimates;
use ipu_driver::cli::run::{default_lock_dir, run_in_process, InProcess};
use ipu_driver::cli::{Cli, Command, CompileOptions};
use ipu_runtime::{BindingRole, SessionOptions};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use errors::{compile_error, failure_error, guard, input_error};

/// A compiled application package (`.ipuexe`): what `ipu compile` writes and `ipu run` runs.
#[pyclass(module = "ipu_opt", name = "Package", frozen)]
pub struct Package {
    inner: ipu_runtime::Package,
    /// The compiler's estimates, when compiled in this process (a loaded package has none).
    estimates: Option<CompileEstimates>,
    compile_seconds: Option<f64>,
}

#[pymethods]
impl Package {
    /// The function the package runs.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// Tiles of the package's target device.
    #[getter]
    fn tiles(&self) -> u32 {
        self.inner.tile_count()
    }

    /// The target device table the package was built for (`c600`, `bow`).
    #[getter]
    fn target(&self) -> &str {
        &self.inner.image.target
    }

    /// The host tensors: one dict per binding (`name`, `role`, `shape`, `dtype`).
    #[getter]
    fn bindings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for binding in &self.inner.bindings {
            let entry = PyDict::new(py);
            entry.set_item("name", &binding.name)?;
            entry.set_item("role", binding.role.name())?;
            entry.set_item("shape", PyTuple::new(py, &binding.shape)?)?;
            entry.set_item("dtype", binding.precision.to_string())?;
            list.append(entry)?;
        }
        Ok(list)
    }

    /// The compiler's estimates (`refined_cycles`, `final_cycles`, peak bytes per memory
    /// class) when the package was compiled in this process; `None` for a loaded package.
    #[getter]
    fn estimates<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(estimates) = &self.estimates else {
            return Ok(None);
        };
        let entry = PyDict::new(py);
        entry.set_item("refined_cycles", estimates.refined_cycles)?;
        entry.set_item("final_cycles", estimates.final_cycles)?;
        entry.set_item("peak_standard_bytes", estimates.peak_standard_bytes)?;
        entry.set_item("peak_interleaved_bytes", estimates.peak_interleaved_bytes)?;
        entry.set_item("peak_total_bytes", estimates.peak_total_bytes)?;
        entry.set_item("compile_seconds", self.compile_seconds)?;
        Ok(Some(entry))
    }

    /// Writes the package to `path` (`.ipuexe`, written atomically).
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let result = guard(py, || {
            self.inner
                .write(&path)
                .map_err(|e| anyhow::anyhow!(e).context(format!("writing '{}'", path.display())))
        })?;
        result.map_err(|e| input_error(py, format!("{e:#}")))
    }

    /// The package file's bytes.
    fn to_bytes(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let result = guard(py, || self.inner.to_bytes())?;
        result.map_err(|e| input_error(py, format!("encoding the package: {e}")))
    }

    /// Reads a package from its file's bytes.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: Vec<u8>) -> PyResult<Package> {
        let result = guard(py, || ipu_runtime::Package::from_bytes(&data))?;
        let inner = result.map_err(|e| input_error(py, format!("not a package: {e}")))?;
        Ok(Package {
            inner,
            estimates: None,
            compile_seconds: None,
        })
    }

    fn __repr__(&self) -> String {
        let list = |role: BindingRole| {
            self.inner
                .bindings
                .iter()
                .filter(|b| b.role == role)
                .map(|b| format!("{}: {}{:?}", b.name, b.precision, b.shape))
                .collect::<Vec<_>>()
                .join(", ")
        };
        format!(
            "<ipu_opt.Package @{} target={} tiles={} inputs=[{}] outputs=[{}]>",
            self.inner.name,
            self.inner.image.target,
            self.inner.tile_count(),
            list(BindingRole::Input),
            list(BindingRole::Output)
        )
    }
}

/// Compiles the model text `source` (`file` names it in diagnostics) to a package.
#[pyfunction]
#[pyo3(signature = (
    source, file, *, tiles=None, precision=None, constraints=None, active_tiles=None,
    beam_width=None, candidates_per_op=None, finalists=None, memory_budget=None,
    weight_memory=None, dump_plans=None
))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    source: String,
    file: String,
    tiles: Option<u32>,
    precision: Option<String>,
    constraints: Option<PathBuf>,
    active_tiles: Option<Vec<u32>>,
    beam_width: Option<u32>,
    candidates_per_op: Option<u32>,
    finalists: Option<u32>,
    memory_budget: Option<u64>,
    weight_memory: Option<String>,
    dump_plans: Option<PathBuf>,
) -> PyResult<Package> {
    if let Some(tiles) = tiles {
        let device = ipu_device::Target::by_name("c600")
            .map(|target| target.geometry.tiles.value)
            .map_err(|e| errors::ipu_error(py, format!("the C600 target table: {e}")))?;
        if tiles == 0 || tiles > device {
            return Err(input_error(
                py,
                format!("tiles={tiles} is outside 1..={device} (the C600's tiles)"),
            ));
        }
    }
    if let Some(precision) = &precision {
        if !["native", "f16", "f32", "fp8"].contains(&precision.as_str()) {
            return Err(input_error(
                py,
                format!("precision '{precision}': expected native, f16, f32 or fp8"),
            ));
        }
    }
    if let Some(class) = &weight_memory {
        if !["auto", "interleaved", "standard"].contains(&class.as_str()) {
            return Err(input_error(
                py,
                format!("weight_memory '{class}': expected auto, interleaved or standard"),
            ));
        }
    }
    for (name, value) in [
        ("beam_width", beam_width),
        ("candidates_per_op", candidates_per_op),
        ("finalists", finalists),
    ] {
        if value == Some(0) {
            return Err(input_error(py, format!("{name} must be at least 1")));
        }
    }
    let options = CompileOptions {
        tiles,
        precision,
        plan_constraints: constraints,
        active_tiles: active_tiles.unwrap_or_default(),
        beam_width,
        candidates_per_op,
        finalists,
        memory_budget,
        weight_memory,
        dump_plans,
        target: None,
    };
    let started = Instant::now();
    let compiled = guard(py, || {
        ipu_driver::cli::compile::compile_source(&source, &file, &options, true)
    })?;
    let (inner, estimates) = compiled.map_err(|failure| compile_error(py, failure))?;
    Ok(Package {
        inner,
        estimates: Some(estimates),
        compile_seconds: Some(started.elapsed().as_secs_f64()),
    })
}

/// Reads a package file (`.ipuexe`).
#[pyfunction]
fn load(py: Python<'_>, path: PathBuf) -> PyResult<Package> {
    let result = guard(py, || ipu_runtime::Package::read(&path))?;
    let inner = result
        .map_err(|e| input_error(py, format!("reading package '{}': {e}", path.display())))?;
    Ok(Package {
        inner,
        estimates: None,
        compile_seconds: None,
    })
}

/// Runs `package` on a simulated device as `ipu run` does; returns the outputs (float32
/// arrays by binding name), the run's figures as JSON (what `ipu run --result-json` writes)
/// and the numerical test's failure lines.
#[pyfunction]
#[pyo3(signature = (
    package, inputs=None, *, seed=0, check=true, device=None, max_cycles=10_000_000_000,
    lock_dir=None, lock_timeout=None, config=None, profile_path=None
))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    package: &Package,
    inputs: Option<&Bound<'py, PyDict>>,
    seed: u64,
    check: bool,
    device: Option<String>,
    max_cycles: u64,
    lock_dir: Option<PathBuf>,
    lock_timeout: Option<f64>,
    config: Option<PathBuf>,
    profile_path: Option<PathBuf>,
) -> PyResult<(Bound<'py, PyDict>, String, Vec<String>)> {
    let given = match inputs {
        Some(inputs) => arrays::inputs(py, &package.inner, inputs)?,
        None => BTreeMap::new(),
    };
    let device = device.unwrap_or_else(|| ipu_runtime::DEFAULT_DEVICE.to_string());
    if let Some(seconds) = lock_timeout {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(input_error(
                py,
                format!("lock_timeout must be a non-negative number of seconds, not {seconds}"),
            ));
        }
    }
    if let Some(config) = &config {
        if let Err(e) = ipu_runtime::DeviceConfig::read(config) {
            return Err(input_error(
                py,
                format!("device configuration '{}': {e}", config.display()),
            ));
        }
    }
    let mut session = SessionOptions::new(lock_dir.unwrap_or_else(|| default_lock_dir(&device)));
    session.device = device;
    session.config_file = config;
    session.lock_timeout = lock_timeout.map(Duration::from_secs_f64);
    let how = InProcess {
        session,
        seed,
        max_cycles,
        check,
        estimates: package.estimates.as_ref(),
        compile_seconds: package.compile_seconds,
    };
    let ran = guard(py, || {
        let ran = run_in_process(&package.inner, given, &how)?;
        if let Some(path) = &profile_path {
            ran.profile
                .write(path)
                .map_err(|e| {
                    anyhow::anyhow!(e).context(format!("writing the profile '{}'", path.display()))
                })
                .map_err(ipu_driver::cli::Failure::Input)?;
        }
        Ok(ran)
    })?;
    let ran = ran.map_err(|failure| failure_error(py, failure))?;
    let outputs = arrays::outputs(py, &ran.outputs)?;
    let result = serde_json::to_string(&ran.result)
        .map_err(|e| errors::ipu_error(py, format!("encoding the run's figures: {e}")))?;
    let failures = ran.verdict.map(|v| v.failures).unwrap_or_default();
    Ok((outputs, result, failures))
}

/// Runs `ipu sweep` with `arguments` (what follows `ipu sweep` on its command line); each
/// point runs `launcher` followed by `ipu run`'s arguments. Returns the sweep's records as a
/// JSON array.
#[pyfunction]
fn sweep(py: Python<'_>, arguments: Vec<String>, launcher: Vec<OsString>) -> PyResult<String> {
    let argv = ["ipu".to_string(), "sweep".to_string()]
        .into_iter()
        .chain(arguments);
    let cli = Cli::try_parse_from(argv).map_err(|e| input_error(py, e.to_string()))?;
    let Command::Sweep(args) = cli.command else {
        return Err(errors::ipu_error(py, "not a sweep command".into()));
    };
    let records = guard(py, || ipu_driver::cli::sweep::sweep(&args, &launcher))?
        .map_err(|failure| failure_error(py, failure))?;
    serde_json::to_string(&records)
        .map_err(|e| errors::ipu_error(py, format!("encoding the sweep's records: {e}")))
}

/// The `ipu` command line inside this process (`python -m ipu_opt ...`): `argv` as the `ipu`
/// binary takes it (the program name first); sweep points run `launcher`. Returns the exit
/// code.
#[pyfunction]
fn cli_main(py: Python<'_>, argv: Vec<OsString>, launcher: Vec<OsString>) -> PyResult<i32> {
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return Ok(error.exit_code());
        }
    };
    ipu_driver::logging::init_with_default(&cli.log_format, ipu_driver::cli::DEFAULT_LOG_FILTER);
    guard(py, || ipu_driver::cli::main_with_launcher(cli, &launcher))
}

/// Panics with `message` inside the guard every entry point uses: the tests check that a
/// panic reaches Python as `ipu_opt.IpuError`, not as a crash or a `PanicException`.
#[pyfunction]
fn _panic_for_test(py: Python<'_>, message: String) -> PyResult<()> {
    guard(py, || -> () { panic!("{message}") })
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Package>()?;
    module.add_function(wrap_pyfunction!(compile, module)?)?;
    module.add_function(wrap_pyfunction!(load, module)?)?;
    module.add_function(wrap_pyfunction!(run, module)?)?;
    module.add_function(wrap_pyfunction!(sweep, module)?)?;
    module.add_function(wrap_pyfunction!(cli_main, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_for_test, module)?)?;
    module.add("DEFAULT_DEVICE", ipu_runtime::DEFAULT_DEVICE)?;
    Ok(())
}
