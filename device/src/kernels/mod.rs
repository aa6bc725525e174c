//! Device kernels: their specializations ([`spec::KernelSpec`]), the MLIR sources in
//! `device/kernels/*.mlir`, the compiler (MLIR -> LLVM IR -> native code through inkwell) and
//! the content-addressed cache.
//!
//! Typical use: `KernelLibrary::from_env()?` once, then `library.run(&spec, tile_memory, &args)`
//! from any thread (compiles on first use through the cache), or `KernelCache::ensure(&spec)`
//! to compile without loading (the codegen pass).

pub mod cache;
pub mod compile;
pub mod describe;
pub mod error;
pub mod library;
pub mod operands;
pub mod source;
pub mod spec;

pub use cache::{CachedKernel, KernelCache, KernelMetadata};
pub use compile::compile_object;
pub use error::KernelError;
pub use library::{KernelLibrary, LoadedKernel};
pub use operands::{Access, OperandRange};
