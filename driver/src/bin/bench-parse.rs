//! `bench-parse`: the speed benchmark of issue 2. Generates a module of about 100k `ipu` ops
//! (`ipu_driver::bench_module`), then times, alternating within one run,
//!
//! * `ipu-opt <file> -o /dev/null` (parse, IRDL verification, our Rust verifiers, print) and
//! * `mlir-opt-22 --irdl-file=dialects/irdl/ipu.irdl.mlir <file> -o /dev/null`,
//!
//! and reports each one's median wall time and their ratio. Exits non-zero when the ratio
//! exceeds `--max-ratio` (1.3, the issue's target) or either tool fails.
//!
//! ```text
//! cargo build --release -p ipu-driver && cargo run --release -p ipu-driver --bin bench-parse
//! ```

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Parser;

#[derive(Parser)]
#[command(about = "Time ipu-opt against mlir-opt-22 --irdl-file on a generated ipu module")]
struct Args {
    /// Number of `ipu` ops in the generated module.
    #[arg(long, default_value_t = 100_000)]
    ops: usize,
    /// Timed runs of each tool (after one untimed warm-up run each).
    #[arg(long, default_value_t = 7)]
    repetitions: usize,
    /// Benchmark this file instead of generating one.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The ipu-opt binary (default: the one next to this binary, i.e. the same profile).
    #[arg(long)]
    ipu_opt: Option<PathBuf>,
    /// The mlir-opt binary.
    #[arg(long, default_value = "/usr/lib/llvm-22/bin/mlir-opt")]
    mlir_opt: PathBuf,
    /// The IRDL declaration handed to mlir-opt.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../dialects/irdl/ipu.irdl.mlir"))]
    irdl_file: PathBuf,
    /// Fail when median(ipu-opt) / median(mlir-opt) exceeds this.
    #[arg(long, default_value_t = 1.3)]
    max_ratio: f64,
}

struct Tool {
    name: &'static str,
    command: Vec<String>,
    times: Vec<Duration>,
}

impl Tool {
    fn run(&self) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let output = Command::new(&self.command[0])
            .args(&self.command[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("cannot run {}", self.command[0]))?;
        let elapsed = started.elapsed();
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let head: String = stderr.lines().take(10).collect::<Vec<_>>().join("\n");
            bail!(
                "{} failed ({}):\n{head}",
                self.command.join(" "),
                output.status
            );
        }
        Ok(elapsed)
    }

    fn median(&self) -> Duration {
        let mut sorted = self.times.clone();
        sorted.sort();
        let middle = sorted.len() / 2;
        if sorted.len() % 2 == 1 {
            sorted[middle]
        } else {
            (sorted[middle - 1] + sorted[middle]) / 2
        }
    }
}

fn default_ipu_opt() -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find this binary's path")?;
    let path = me.with_file_name("ipu-opt");
    if !path.exists() {
        bail!(
            "{} does not exist: build it in the same profile first (cargo build --release -p ipu-driver) or pass --ipu-opt",
            path.display()
        );
    }
    Ok(path)
}

fn seconds(duration: Duration) -> String {
    format!("{:.3} s", duration.as_secs_f64())
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // `{:#}`: the message and its causes, without anyhow's backtrace.
            eprintln!("bench-parse: error: {error:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    if args.repetitions == 0 {
        bail!("--repetitions must be at least 1");
    }
    let ipu_opt = match &args.ipu_opt {
        Some(path) => path.clone(),
        None => default_ipu_opt()?,
    };
    let (input, generated_path) = match &args.input {
        Some(path) => (path.clone(), None),
        None => {
            let (text, generated) = ipu_driver::bench_module::generate(args.ops);
            let path = std::env::temp_dir().join(format!(
                "ipu-bench-{}-{}.mlir",
                generated.ipu_ops,
                std::process::id()
            ));
            std::fs::write(&path, &text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!(
                "module: {} ({} ipu ops in {} functions, {} bytes)",
                path.display(),
                generated.ipu_ops,
                generated.functions,
                text.len()
            );
            (path.clone(), Some(path))
        }
    };
    let result = measure(&args, &ipu_opt, &input);
    if let Some(path) = generated_path {
        let _ = std::fs::remove_file(path);
    }
    result
}

fn measure(args: &Args, ipu_opt: &Path, input: &Path) -> anyhow::Result<()> {
    let input = input.display().to_string();
    let mut tools = [
        Tool {
            name: "ipu-opt",
            command: vec![
                ipu_opt.display().to_string(),
                input.clone(),
                "-o".into(),
                "/dev/null".into(),
            ],
            times: Vec::new(),
        },
        Tool {
            name: "mlir-opt",
            command: vec![
                args.mlir_opt.display().to_string(),
                format!("--irdl-file={}", args.irdl_file.display()),
                input.clone(),
                "-o".into(),
                "/dev/null".into(),
            ],
            times: Vec::new(),
        },
    ];
    for tool in &tools {
        println!("{:>8}: {}", tool.name, tool.command.join(" "));
    }
    // Warm-up: page cache, dynamic loader; also checks that both tools accept the file.
    for tool in &tools {
        tool.run()?;
    }
    println!("{:>3}  {:>10}  {:>10}", "run", "ipu-opt", "mlir-opt");
    for repetition in 0..args.repetitions {
        // Alternate which tool goes first so drift (thermal, other load) hits both alike.
        let order: [usize; 2] = if repetition % 2 == 0 { [0, 1] } else { [1, 0] };
        for index in order {
            let elapsed = tools[index].run()?;
            tools[index].times.push(elapsed);
        }
        println!(
            "{:>3}  {:>10}  {:>10}",
            repetition + 1,
            seconds(tools[0].times[repetition]),
            seconds(tools[1].times[repetition])
        );
    }
    let (ours, theirs) = (tools[0].median(), tools[1].median());
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    println!(
        "median: ipu-opt {}, mlir-opt {}, ratio {ratio:.2} (target <= {:.2})",
        seconds(ours),
        seconds(theirs),
        args.max_ratio
    );
    if ratio > args.max_ratio {
        bail!(
            "ipu-opt is {ratio:.2}x mlir-opt, above the {:.2}x target",
            args.max_ratio
        );
    }
    Ok(())
}
