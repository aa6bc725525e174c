//! The ipu-device integration tests: one binary, one module per area.

mod cost;
mod numerics;
mod target;
