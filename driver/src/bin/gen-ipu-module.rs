//! `gen-ipu-module`: writes the benchmark's generated `ipu` module (see
//! `ipu_driver::bench_module`) so it can be inspected or fed to other tools.
//!
//! ```text
//! cargo run --release -p ipu-driver --bin gen-ipu-module -- --ops 100000 -o /tmp/ipu-100k.mlir
//! ```

use anyhow::Context;
use clap::Parser;

#[derive(Parser)]
#[command(about = "Write a generated module of about N ipu ops (valid shapes) for benchmarks")]
struct Args {
    /// Number of `ipu` ops (rounded up to whole 10-op units).
    #[arg(long, default_value_t = 100_000)]
    ops: usize,
    /// Output file (`-` for standard output).
    #[arg(short = 'o', default_value = "-")]
    output: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (text, generated) = ipu_driver::bench_module::generate(args.ops);
    if args.output == "-" {
        print!("{text}");
    } else {
        std::fs::write(&args.output, &text)
            .with_context(|| format!("cannot write {}", args.output))?;
        eprintln!(
            "wrote {} ({} ipu ops in {} functions, {} bytes)",
            args.output,
            generated.ipu_ops,
            generated.functions,
            text.len()
        );
    }
    Ok(())
}
