//! The driver's integration tests, in one binary (each test binary links all of MLIR).

mod cli;
mod estimates;
mod mutation;
mod numerical;
mod oracle;
mod sweep;
