//! The ipu-opt driver library: mlir-opt conventions over our pass registry.

pub mod split_input;
pub mod verify_diagnostics;
