//! Compiles the small C++ shim over MLIR's pass infrastructure (cxx/mlir_driver_shim.cpp): what
//! the driver needs that the MLIR C API does not expose. It links against the same static MLIR
//! libraries mlir-sys links, so there is one MLIR in the process.

fn main() {
    let prefix = std::env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    let source = "cxx/mlir_driver_shim.cpp";
    println!("cargo:rerun-if-changed={source}");
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
    cc::Build::new()
        .cpp(true)
        .std("c++17")
        .file(source)
        .include(format!("{prefix}/include"))
        // LLVM is built without RTTI and exceptions; the shim must match its ABI.
        .flag("-fno-rtti")
        .flag("-fno-exceptions")
        .flag_if_supported("-Wno-unused-parameter")
        .compile("ipu_mlir_driver_shim");
}
