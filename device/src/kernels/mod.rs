//! Device kernels: their specializations ([`spec::KernelSpec`]), the MLIR sources in
//! `device/kernels/*.mlir`, the compiler (MLIR -> LLVM IR -> native code through inkwell) and
//! the content-addressed cache.

pub mod spec;
