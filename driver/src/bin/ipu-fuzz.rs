//! `ipu-fuzz`: the reliability campaign (see `ipu_driver::fuzz`). Seeded cases against the
//! built `ipu-opt` and `ipu`, each in its own process under a memory cap and a timeout;
//! prints the counts and every finding (with the command that reproduces it) and exits 1 if
//! there is one.
//!
//! ```text
//! cargo build --release && target/release/ipu-fuzz --seed 1 --cases 10000 --jobs 2 \
//!     --corpus test --corpus examples --work /tmp/ipu-fuzz
//! ```

use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Run the seeded reliability campaign against ipu-opt and ipu")]
struct Args {
    /// Seed of the campaign (case i is a function of the seed and i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of cases (they cycle through the targets).
    #[arg(long, default_value_t = 600)]
    cases: usize,
    /// Directory or file of `.mlir` inputs for the `ir` target (repeatable).
    #[arg(long, required = true)]
    corpus: Vec<PathBuf>,
    /// Scratch directory; findings are kept under `findings/`.
    #[arg(long)]
    work: PathBuf,
    /// Directory holding ipu-opt and ipu (default: this executable's).
    #[arg(long)]
    bin_dir: Option<PathBuf>,
    /// Seconds a case may take.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Address-space cap of each case, in MiB.
    #[arg(long, default_value_t = 8192)]
    memory_mib: u64,
    /// Cases run at once.
    #[arg(long, default_value_t = 2)]
    jobs: usize,
    /// Only these targets (ir, pipeline, attributes, package, profile, npy).
    #[arg(long = "target")]
    targets: Vec<String>,
    /// Print every case's outcome and first diagnostic line.
    #[arg(long)]
    list: bool,
}

fn main() {
    let args = Args::parse();
    if !(args.timeout > 0.0 && args.timeout.is_finite()) {
        eprintln!("ipu-fuzz: --timeout must be a positive number of seconds");
        std::process::exit(2);
    }
    if let Some(bad) = args
        .targets
        .iter()
        .find(|t| !ipu_driver::fuzz::TARGETS.contains(&t.as_str()))
    {
        eprintln!(
            "ipu-fuzz: unknown target '{bad}' (one of {})",
            ipu_driver::fuzz::TARGETS.join(", ")
        );
        std::process::exit(2);
    }
    let campaign = ipu_driver::fuzz::Campaign {
        seed: args.seed,
        cases: args.cases,
        bin_dir: args
            .bin_dir
            .unwrap_or_else(ipu_driver::fuzz::default_bin_dir),
        corpus: ipu_driver::fuzz::collect_corpus(&args.corpus),
        work: args.work,
        timeout: Duration::from_secs_f64(args.timeout),
        memory: args.memory_mib.saturating_mul(1 << 20),
        jobs: args.jobs,
        targets: args.targets,
    };
    let total = campaign.cases;
    let step = (total / 20).max(1);
    let started = std::time::Instant::now();
    let summary = campaign.run(|index| {
        if (index + 1) % step == 0 {
            eprintln!("ipu-fuzz: {} / {total} cases", index + 1);
        }
    });
    match summary {
        Ok(summary) => {
            if args.list {
                for case in &summary.results {
                    println!(
                        "case {} [{}] {:?}: {}",
                        case.index, case.target, case.outcome, case.detail
                    );
                }
            }
            print!("{}", summary.report());
            println!(
                "ipu-fuzz: seed={} elapsed={:.1}s",
                args.seed,
                started.elapsed().as_secs_f64()
            );
            std::process::exit(i32::from(!summary.findings().is_empty()));
        }
        Err(e) => {
            eprintln!("ipu-fuzz: {e:#}");
            std::process::exit(2);
        }
    }
}
