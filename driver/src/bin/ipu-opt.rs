//! `ipu-opt`: the MLIR optimizer driver for the ipu dialects (mlir-opt conventions).

/// MLIR parses, verifies and prints nested IR recursively: the driver runs on a thread with a
/// stack well above what the nesting limit it enforces needs.
const STACK_BYTES: usize = 256 << 20;

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let code = std::thread::Builder::new()
        .name("ipu-opt".into())
        .stack_size(STACK_BYTES)
        .spawn(move || ipu_driver::opt::main_with_arguments(arguments))
        .map(|worker| worker.join().unwrap_or(101))
        .unwrap_or_else(|error| {
            eprintln!("ipu-opt: error: cannot start the driver thread: {error}");
            1
        });
    std::process::exit(code);
}
