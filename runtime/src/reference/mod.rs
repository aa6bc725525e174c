//! The host reference: an evaluator of `ipu` graph IR in f64, and the numerical test that
//! compares a device run against it.
//!
//! # Two steps
//! 1. [`Program::from_module`] reads a parsed module into plain data ([`Program`]): one
//!    [`ipu_dialects::graph::Graph`] per `func.func` with a body, read by the dialects' graph
//!    reader with constants decoded into their values' data, `func.call`s inlined and each
//!    `ipu.repeat`'s body read into the op. This is the only part that touches MLIR.
//! 2. [`Program::evaluate`] runs a function's graph on host [`Array`]s. It needs no MLIR, so
//!    every op is unit-testable on graphs built by hand ([`Program::insert`]).
//!
//! # Numerics: measure the program, not the format
//! Every op computes in f64 from its (already rounded) operands, then rounds each result once,
//! to nearest even, onto the grid of its result type ([`Grid`]): f32, f16, or an FP8 format at
//! the tensor's power-of-two scale. Function arguments and constants are rounded the same way on
//! entry (the device receives them in their declared precision). So a value the device holds in f16 is
//! compared with the best f16 answer, and what remains is the device program's own error
//! (accumulation order, partial precision, kernel approximations) plus layout and exchange
//! bugs.
//!
//! FP8 scales (value = code * 2^scale): the scale of an FP8 value (the graph value's `scale`) is
//! the one its type's `#ipu.format` carries (the plan's choice), except for an `ipu.cast` result whose non-zero
//! `scale` attribute names it. A cast whose *input* is FP8 reads the input's codes at the cast's
//! `scale` when that attribute is non-zero, exactly as the device cast kernel does
//! (`ipu_device::numerics::cast_bytes`); if it differs from the scale the input was encoded
//! with, the values are reinterpreted by the power of two between them.
//!
//! # The numerical test
//! [`compare`] with a per-workload [`Tolerance`] (see there for the rules), and exact checks
//! with one-hot inputs ([`one_hot`], [`distinct_values`], [`check_exact`]) whose results are
//! exactly representable, so a layout or exchange bug shows as a value at the wrong position
//! rather than as tolerance noise.

mod array;
mod compare;
mod eval;
mod one_hot;
mod ops;
mod program;
mod round;

pub use array::Array;
pub use compare::{compare, compare_all, Comparison, Tolerance, F16_ACCUMULATOR_EPSILON};
pub use eval::{describe_value, MAX_CALL_DEPTH};
pub use one_hot::{check_exact, distinct_values, one_hot, ExactCheck, Misplaced};
pub use program::Program;
pub use round::{unit_roundoff, Grid};

/// Errors of the reference evaluator and the numerical test.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReferenceError {
    /// The module holds something the reference cannot read or evaluate.
    #[error("{op} at {location}: {detail}")]
    Unsupported {
        op: String,
        location: String,
        detail: String,
    },
    /// An op's operands or attributes do not fit its semantics.
    #[error("{op} at {location}: {detail}")]
    Invalid {
        op: String,
        location: String,
        detail: String,
    },
    #[error("no function @{name} in the module (functions: {available})")]
    UnknownFunction { name: String, available: String },
    #[error("function @{name} is a declaration without a body")]
    NoBody { name: String },
    #[error("function @{function}: {detail}")]
    Argument { function: String, detail: String },
    #[error("calls nest deeper than {limit} (recursive functions?) at @{function}")]
    CallDepth { function: String, limit: usize },
    #[error("array of shape {shape:?} needs {expected} elements, found {found}")]
    ArrayLength {
        shape: Vec<usize>,
        expected: usize,
        found: usize,
    },
    #[error("{what}: reference shape {reference:?} differs from device shape {device:?}")]
    ShapeMismatch {
        what: String,
        reference: Vec<usize>,
        device: Vec<usize>,
    },
    #[error("{what}: {detail}")]
    Helper { what: &'static str, detail: String },
}
