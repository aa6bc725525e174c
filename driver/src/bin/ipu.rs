//! `ipu`: compile a model to an `.ipuexe`, run it on the simulated C600, inspect packages and
//! look at profiles. See `ipu --help` for the commands and the exit codes.

// The command modules live beside the library's but belong to this binary: they use
// `anyhow`, which the library crates do not.
#[path = "../cli/mod.rs"]
mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    ipu_driver::logging::init_with_default(&args.log_format, cli::DEFAULT_LOG_FILTER);
    std::process::exit(cli::main(args));
}
