//! `ipu-opt`: the MLIR optimizer driver for the ipu dialects (mlir-opt conventions).

use clap::Parser;

fn main() {
    let arguments = ipu_driver::opt::normalize_arguments(std::env::args());
    let args = ipu_driver::opt::OptArgs::parse_from(arguments);
    ipu_driver::logging::init(&args.log_format);
    std::process::exit(ipu_driver::opt::run(args));
}
