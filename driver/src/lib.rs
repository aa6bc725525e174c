//! The ipu-opt driver library: mlir-opt conventions over our pass registry.

pub mod bench_module;
pub mod build;
pub mod crosscheck;
pub mod diagnostics;
pub mod fuzz;
pub mod logging;
pub mod opt;
pub mod oracle;
pub mod split_input;
pub mod verify_diagnostics;
