//! Reporting diagnostics at an operation's location through MLIR's diagnostic engine, so they
//! come out as `file:line:col: error: ...` and `--verify-diagnostics` can match them.

use melior::ir::{operation::OperationLike, Location};
use std::ffi::CString;

/// Emits an error at `location`. (The C API exposes only errors; warnings and remarks from our
/// passes go through tracing.)
pub fn error_at(location: Location, message: &str) {
    // Interior NULs cannot cross the C API; replace them rather than dropping the diagnostic.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    unsafe { mlir_sys::mlirEmitError(location.to_raw(), text.as_ptr()) }
}

/// Emits an error at the location of `op`, prefixed with the op name like MLIR's verifier
/// (`'ipu.matmul' op ...`).
pub fn op_error<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, message: &str) {
    let name = op.name();
    let name = name.as_string_ref().as_str().unwrap_or("?").to_string();
    error_at(op.location(), &format!("'{name}' op {message}"));
}
