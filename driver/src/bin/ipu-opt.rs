//! `ipu-opt`: the MLIR optimizer driver for the ipu dialects (mlir-opt conventions).

fn main() {
    std::process::exit(ipu_driver::opt::main_with_arguments(
        std::env::args().collect(),
    ));
}
