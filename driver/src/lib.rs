//! The ipu-opt driver library: mlir-opt conventions over our pass registry, and the `ipu`
//! command line ([`cli`]), which the `ipu` binary and the Python package (`python/`) both run.

// The command modules name this crate as the `ipu` binary does (`ipu_driver::build`).
extern crate self as ipu_driver;

pub mod bench_module;
pub mod build;
pub mod cli;
pub mod crosscheck;
pub mod diagnostics;
pub mod fuzz;
pub mod logging;
pub mod opt;
pub mod oracle;
pub mod split_input;
pub mod verify_diagnostics;
