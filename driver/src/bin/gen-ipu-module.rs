//! `gen-ipu-module`: writes the benchmark's generated `ipu` module (see
//! `ipu_driver::bench_module`) so it can be inspected or fed to other tools.
//!
//! ```text
//! cargo run --release -p ipu-driver --bin gen-ipu-module -- --ops 100000 -o /tmp/ipu-100k.mlir
//! cargo run --release -p ipu-driver --bin gen-ipu-module -- --chain elementwise --ops 10000 -o /tmp/chain.mlir
//! ```

use anyhow::Context;
use clap::Parser;

#[derive(Parser)]
#[command(about = "Write a generated module of about N ipu ops (valid shapes) for benchmarks")]
struct Args {
    /// Number of `ipu` ops (rounded up to whole 10-op units).
    #[arg(long, default_value_t = 100_000)]
    ops: usize,
    /// Write one chain of exactly N ops instead (the planning-time benchmark).
    #[arg(long, value_enum)]
    chain: Option<ipu_driver::bench_module::ChainKind>,
    /// Output file (`-` for standard output).
    #[arg(short = 'o', default_value = "-")]
    output: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let (text, generated) = match args.chain {
        Some(kind) => (
            ipu_driver::bench_module::chain(kind, args.ops),
            ipu_driver::bench_module::Generated {
                ipu_ops: args.ops,
                functions: 1,
            },
        ),
        None => ipu_driver::bench_module::generate(args.ops),
    };
    if args.output == "-" {
        print!("{text}");
    } else {
        ipu_runtime::output::write_output(std::path::Path::new(&args.output), &[], text.as_bytes())
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
