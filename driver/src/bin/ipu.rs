//! `ipu`: compile a model to an `.ipuexe`, run it on the simulated C600, inspect packages and
//! look at profiles. See `ipu --help` for the commands and the exit codes.

use clap::Parser;
use ipu_driver::cli;

fn main() {
    let args = cli::Cli::parse();
    ipu_driver::logging::init_with_default(&args.log_format, cli::DEFAULT_LOG_FILTER);
    std::process::exit(cli::main(args));
}
