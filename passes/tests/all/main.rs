//! The passes crate's integration tests, in one binary (each test binary links all of MLIR).

mod handoff;
mod lower_determinism;
mod lower_gemm;
mod lower_general_properties;
mod lower_properties;
