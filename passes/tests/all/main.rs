//! The passes crate's integration tests, in one binary (each test binary links all of MLIR).

mod handoff;
mod lower_gemm;
mod lower_properties;
