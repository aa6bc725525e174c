//! Rust errors as the Python exceptions of `ipu_opt._errors`, and the panic guard.

use std::panic::{catch_unwind, AssertUnwindSafe};

use ipu_driver::build::Diagnosed;
use ipu_driver::cli::Failure;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::PyList;

/// An instance of the exception class `class` of `ipu_opt._errors`, built from `arguments`.
fn raise<'py>(py: Python<'py>, class: &str, arguments: impl pyo3::call::PyCallArgs<'py>) -> PyErr {
    let made = py
        .import("ipu_opt._errors")
        .and_then(|module| module.getattr(class))
        .and_then(|class| class.call1(arguments));
    match made {
        Ok(instance) => PyErr::from_value(instance),
        // The package's own module is missing: the installation is broken, say so.
        Err(error) => PyRuntimeError::new_err(format!(
            "ipu_opt._errors.{class} is not available ({error}); is the ipu_opt package installed whole?"
        )),
    }
}

/// `ipu_opt.IpuError(message)`.
pub fn ipu_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "IpuError", (message,))
}

/// `ipu_opt.InputError(message)`: something the caller can fix (also a `ValueError`).
pub fn input_error(py: Python<'_>, message: String) -> PyErr {
    raise(py, "InputError", (message,))
}

/// The exception of a failed command: `InputError` for a usage or input error, `RunError`
/// for a run that failed.
pub fn failure_error(py: Python<'_>, failure: Failure) -> PyErr {
    match failure {
        Failure::Input(error) => input_error(py, format!("{error:#}")),
        Failure::Failed(Some(error)) => raise(py, "RunError", (format!("{error:#}"),)),
        Failure::Failed(None) => raise(py, "RunError", ("the run failed".to_string(),)),
    }
}

/// The exception of a failed compile: `InputError` for bad options, else `CompileError`
/// carrying the compiler's diagnostics as `(severity, file, line, column, message)` tuples
/// (also for a model the compiler refused as input: it does not parse, verify or import,
/// which `ipu compile` reports as an input error).
pub fn compile_error(py: Python<'_>, failure: Failure) -> PyErr {
    let error = match failure {
        Failure::Input(error) if !ipu_driver::build::is_rejected(&error) => {
            return input_error(py, format!("{error:#}"))
        }
        Failure::Input(error) => error,
        Failure::Failed(Some(error)) => error,
        Failure::Failed(None) => anyhow::anyhow!("the compile failed"),
    };
    let message = format!("{error:#}");
    let diagnostics = PyList::empty(py);
    if let Some(diagnosed) = error.downcast_ref::<Diagnosed>() {
        for d in &diagnosed.diagnostics {
            let entry = (
                d.severity.to_string(),
                d.file.clone(),
                d.line,
                d.column,
                d.message.clone(),
            );
            if let Err(error) = diagnostics.append(entry) {
                return error;
            }
        }
    }
    raise(py, "CompileError", (message, diagnostics))
}

/// Runs `work` without the GIL, turning a panic into `ipu_opt.IpuError` naming it: nothing
/// crosses into Python as a panic.
pub fn guard<T: Send>(py: Python<'_>, work: impl FnOnce() -> T + Send) -> PyResult<T> {
    let outcome = py.detach(|| catch_unwind(AssertUnwindSafe(work)));
    outcome.map_err(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        ipu_error(
            py,
            format!("internal error in ipu-opt (please report it): {what}"),
        )
    })
}
