//! The passes crate's integration tests, in one binary (each test binary links all of MLIR).

mod lower_gemm;
mod lower_properties;
