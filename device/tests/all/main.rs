//! The ipu-device integration tests: one binary, one module per area.

mod cost;
mod fidelity;
mod fidelity_siglip;
mod kernels;
mod kernels_attention;
mod kernels_attention_columns;
mod kernels_attention_rows;
mod kernels_cache;
mod kernels_map;
mod kernels_runner;
mod kernels_support;
mod kernels_vector;
mod numerics;
mod sim;
mod sim_gemm;
mod sim_hazards;
mod sim_support;
mod target;
