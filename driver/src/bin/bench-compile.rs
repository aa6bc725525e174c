//! `bench-compile`: wall time of a whole compile (parse, `ipu-compile`, package with embedded
//! kernel objects) with a warm kernel cache, in process.
//!
//! `cargo run --release -p ipu-driver --bin bench-compile -- [--model examples/gemm_fp8.mlir]
//! [--tiles 64] [--precision fp8] [--repetitions 9]`
//!
//! One untimed build first fills the kernel cache ($IPU_KERNEL_CACHE), then `--repetitions`
//! timed builds; prints the median, minimum and maximum.

use std::time::Instant;

use anyhow::Context as _;
use clap::Parser;
use ipu_driver::build::{build_package, BuildOptions};

#[derive(Debug, Parser)]
#[command(
    name = "bench-compile",
    about = "Time whole compiles with a warm kernel cache"
)]
struct Args {
    #[arg(long, default_value = "examples/gemm_fp8.mlir")]
    model: String,
    #[arg(long, default_value_t = 64)]
    tiles: u32,
    #[arg(long, default_value = "fp8")]
    precision: String,
    #[arg(long, default_value_t = 9)]
    repetitions: usize,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let source =
        std::fs::read_to_string(&args.model).with_context(|| format!("reading {}", args.model))?;
    let options = BuildOptions {
        tiles: Some(args.tiles),
        precision: args.precision.clone(),
        ..BuildOptions::default()
    };
    let warm = build_package(&source, &args.model, &options)?;
    let mut times = Vec::with_capacity(args.repetitions);
    for _ in 0..args.repetitions.max(1) {
        let started = Instant::now();
        let package = build_package(&source, &args.model, &options)?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
        anyhow::ensure!(package.tile_count() == warm.tile_count(), "builds differ");
    }
    times.sort_by(f64::total_cmp);
    println!(
        "model={} tiles={} precision={} repetitions={} median_ms={:.1} min_ms={:.1} max_ms={:.1}",
        args.model,
        args.tiles,
        args.precision,
        times.len(),
        times[times.len() / 2],
        times[0],
        times[times.len() - 1]
    );
    Ok(())
}
