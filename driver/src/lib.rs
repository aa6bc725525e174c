//! The ipu-opt driver library: mlir-opt conventions over our pass registry.
