//! The IPU the rest of ipu-opt targets: the IPU21/C600 target table (one table of sourced
//! constants), numerics, kernel cycle models, MLIR kernels compiled through LLVM with a
//! content-addressed cache, and the BSP simulator that executes loadable images.
//!
//! This crate knows nothing of the compiler or the runtime: they depend on it.

pub mod cost;
pub mod image;
pub mod kernels;
pub mod numerics;
pub mod precision;
pub mod sim;
pub mod target;

pub use kernels::spec::{KernelRunner, KernelSpec};
pub use precision::{MemoryClass, Precision};
pub use target::Target;
