//! The ipu-device integration tests: one binary, one module per area.

mod cost;
mod numerics;
mod target;
mod sim;
mod sim_gemm;
mod sim_hazards;
mod sim_support;
mod kernels;
mod kernels_support;
mod kernels_cache;
