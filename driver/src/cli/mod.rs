//! The `ipu` command line: argument definitions, dispatch and exit codes.
//!
//! Each command's module turns its arguments into work and a [`Failure`] that says which
//! exit code a script sees.

pub mod compile;
pub mod expected;
mod inspect;
pub mod numerical;
mod profile;
mod progress;
pub mod replay;
pub mod run;
pub mod run_result;
pub mod sweep;

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Without `RUST_LOG`, `ipu` logs the session's milestones (the seed system's `INFO` lines)
/// and warnings from everything else; `RUST_LOG=warn` quiets them.
pub const DEFAULT_LOG_FILTER: &str = "warn,ipu_runtime=info,ipu_passes=info";

/// Process exit codes.
pub mod exit {
    /// The command did what was asked; for `ipu run`, every test that ran passed.
    pub const OK: i32 = 0;
    /// A run or test failed: the simulator refused or faulted (hardwareTest=FAIL), the numbers
    /// differ from the reference (numericalTest=FAIL) or from the frontend's
    /// (expectedTest=FAIL), or the device could not be owned.
    pub const FAILED: i32 = 1;
    /// The command line or an input is wrong: unknown option, missing or unreadable file,
    /// corrupt package or profile, a model that does not parse, verify or import into `ipu`
    /// ops, bad device name or configuration, the lowering pipeline is not available. Nothing
    /// ran.
    pub const USAGE: i32 = 2;
}

const AFTER_HELP: &str = "\
Exit codes:
  0  success (for `run`: every test that ran passed)
  1  a run or test failed (hardwareTest, numericalTest or expectedTest=FAIL, device ownership)
  2  usage or input error (bad arguments, missing/corrupt file, a model that does not parse,
     verify or import, unavailable pipeline)

Logging: RUST_LOG filters log lines on stderr (default: the session's milestones);
--log-format json writes one JSON object per line.";

/// Compile models for the Graphcore IPU21 (C600), run them on the simulated device, inspect
/// packages and look at profiles.
#[derive(Debug, Parser)]
#[command(name = "ipu", version, after_help = AFTER_HELP)]
pub struct Cli {
    /// Log line format on stderr.
    #[arg(long, global = true, default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile an `ipu` graph module (.mlir) to an application package (.ipuexe).
    #[command(after_help = AFTER_HELP)]
    Compile(CompileArgs),
    /// Run a package (.ipuexe), or compile and run a model (.mlir), on a device; write the
    /// package, profile and outputs, and report the hardware and numerical tests.
    #[command(after_help = AFTER_HELP)]
    Run(RunArgs),
    /// Print a readable summary of a package.
    #[command(after_help = AFTER_HELP)]
    Inspect(InspectArgs),
    /// Look at a profile (.ipuprof): HTML report, Chrome trace, grouped query.
    #[command(subcommand)]
    Profile(ProfileCommand),
    /// Compile and simulate a model at many points of plan constraints and compile options
    /// (a sweep file and/or axis flags), in parallel; write resumable results (JSON lines and
    /// CSV), a summary table and a Pareto plot (SVG).
    #[command(after_help = SWEEP_AFTER_HELP)]
    Sweep(sweep::SweepArgs),
}

const SWEEP_AFTER_HELP: &str = "\
Each point is an `ipu run` in a process of its own (a crash fails only that point), sharing
the kernel cache. A point's failure (no plan, does not fit, numericalTest=FAIL, crash,
timeout) is a result with its diagnostic, not an error of the sweep. Rerunning the same
command skips the points already in <out>/results.jsonl.

Exit codes:
  0  the sweep ran (failed points are in the results)
  2  usage or input error (bad arguments, malformed or empty sweep file, unreadable model)";

#[derive(Debug, Clone, Args)]
pub struct CompileOptions {
    /// Tiles the program may use (default: the whole device).
    #[arg(long)]
    pub tiles: Option<u32>,
    /// Precision the planner targets (for example f16, fp8).
    #[arg(long)]
    pub precision: Option<String>,
    /// Plan constraints the planner must satisfy: a JSON file of pinned plan parts, in the form
    /// `ipu-lower-mid{dump-plans=FILE}` writes (a dump fed back reproduces the compile).
    #[arg(
        long = "constraints",
        visible_alias = "plan-constraints",
        value_name = "FILE"
    )]
    pub plan_constraints: Option<PathBuf>,
    /// Tile counts plans may use, comma-separated (default: any count of the program's tiles).
    #[arg(long, value_name = "COUNTS", value_delimiter = ',')]
    pub active_tiles: Vec<u32>,
    /// Partial plans the planner's beam keeps per format group [default: 8].
    #[arg(long, value_name = "N")]
    pub beam_width: Option<u32>,
    /// Candidates per op kept before the beam, best standalone cost first [default: 24].
    #[arg(long, value_name = "N")]
    pub candidates_per_op: Option<u32>,
    /// Finalists planning keeps and selection schedules [default: 4].
    #[arg(long, value_name = "N")]
    pub finalists: Option<u32>,
    /// Per-tile memory budget in bytes (default: the target table's planned-data budget).
    #[arg(long, value_name = "BYTES")]
    pub memory_budget: Option<u64>,
    /// Memory class of GEMM weights.
    #[arg(long, value_name = "CLASS", value_parser = ["auto", "interleaved", "standard"])]
    pub weight_memory: Option<String>,
    /// Write the chosen plans to FILE, in the form `--constraints` reads (feeding it back
    /// reproduces the compile).
    #[arg(long, value_name = "FILE")]
    pub dump_plans: Option<PathBuf>,
    /// The target table the compile plans with (default: the C600's); set by a replay that
    /// names the kernels of its measured run, not a flag.
    #[arg(skip)]
    pub target: Option<String>,
}

impl CompileOptions {
    /// The planning options set, as `ipu-compile{...}` settings (`key=value`).
    pub fn planner_settings(&self) -> Vec<String> {
        let quote =
            |path: &PathBuf| ipu_passes::pipeline::format_option_value(&path.display().to_string());
        let mut settings = Vec::new();
        if !self.active_tiles.is_empty() {
            let counts: Vec<String> = self.active_tiles.iter().map(u32::to_string).collect();
            settings.push(format!("active-tiles={}", counts.join(",")));
        }
        let numbers = [
            ("beam-width", self.beam_width.map(u64::from)),
            ("candidates-per-op", self.candidates_per_op.map(u64::from)),
            ("finalists", self.finalists.map(u64::from)),
            ("memory-budget", self.memory_budget),
        ];
        for (key, value) in numbers {
            if let Some(value) = value {
                settings.push(format!("{key}={value}"));
            }
        }
        if let Some(class) = &self.weight_memory {
            settings.push(format!("weight-memory={class}"));
        }
        if let Some(path) = &self.dump_plans {
            settings.push(format!("dump-plans={}", quote(path)));
        }
        settings
    }
}

#[derive(Debug, Args)]
pub struct CompileArgs {
    /// The model: an MLIR module of `ipu` graph ops, or of TOSA / linalg ops (imported first).
    pub input: PathBuf,
    /// Where to write the package.
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub options: CompileOptions,
}

#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// A package (.ipuexe) or a model (.mlir, compiled first).
    pub input: PathBuf,
    /// Device: `sim:c600` (the C600 simulator), `sim:bow`, or any target of the device table
    /// as `sim:<name>`.
    #[arg(long, default_value = ipu_runtime::DEFAULT_DEVICE)]
    pub device: String,
    /// Device configuration file replayed after the package's own register writes.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Directory of `<binding>.npy` inputs (and weights replacing the package's); inputs
    /// without a file are generated from --seed.
    #[arg(long, value_name = "DIR")]
    pub inputs: Option<PathBuf>,
    /// Seed of the Gaussian input generators.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Directory to write the outputs to as `<binding>.npy` (f32).
    #[arg(long, value_name = "DIR")]
    pub outputs: Option<PathBuf>,
    /// Directory of the frontend's own outputs as `<binding>.npy` (`result0.npy`, ...: the
    /// names --outputs writes): compare the device's outputs with them
    /// (`expectedMaximumAbsoluteError=... expectedTest=PASS|FAIL`, FAIL exits 1). Each element
    /// must be within t * (max|expected| + |expected|) of its output's expected value.
    #[arg(long, value_name = "DIR")]
    pub expected: Option<PathBuf>,
    /// The `t` of --expected's rule [default: 1e-4 for f32, 2^-5 for f16, 2^-3 for FP8: the
    /// loosest precision of the compile's policy and the package's tensors].
    #[arg(long, value_name = "T", requires = "expected")]
    pub expected_tolerance: Option<f64>,
    /// Root of the artifact directories; this run writes `<root>/<name>/`.
    #[arg(long, default_value = "artifacts", value_name = "DIR")]
    pub artifacts: PathBuf,
    /// Name of this run's artifact directory (default: the input's file stem).
    #[arg(long)]
    pub name: Option<String>,
    /// Seconds to wait for device ownership before giving up (default: wait).
    #[arg(long, value_name = "SECONDS")]
    pub lock_timeout: Option<f64>,
    /// For a model in upstream dialects (TOSA, linalg): also run it with MLIR's own CPU
    /// lowering and ExecutionEngine (the `ipu-oracle`) on the same inputs and compare the
    /// device's outputs with it (`oracleMaximumAbsoluteError=... oracleTest=PASS|FAIL`; the f32
    /// tolerance, so the compile must be f32: `--precision f32`).
    #[arg(long)]
    pub oracle: bool,
    /// Refuse a program the compiler estimates at more device cycles than this (its
    /// simulation and host reference would run for hours: an `ipu.repeat` of 1e9 iterations).
    #[arg(long, value_name = "CYCLES", default_value_t = 10_000_000_000)]
    pub max_cycles: u64,
    /// Also write the run's figures (cycles, estimates, peak memory per class, compile time,
    /// test results) to FILE as one JSON object, for tools that compare runs.
    #[arg(long, value_name = "FILE")]
    pub result_json: Option<PathBuf>,
    /// Replay a measured run: FILE pins every op's whole plan and names the hardware
    /// measurement (`examples/replay/<name>.plan.json`); the run compiles exactly that plan and
    /// prints `hardwareCycles=... fidelityError=...` against the simulated device program.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["plan_constraints", "dump_plans"])]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub compile: CompileOptions,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The package.
    pub package: PathBuf,
    /// Every binding with its tile pieces and file offsets.
    #[arg(long, conflicts_with = "tile")]
    pub bindings: bool,
    /// One tile: segments, code, binding pieces and the program steps that touch it.
    #[arg(long, value_name = "N")]
    pub tile: Option<u32>,
}

#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Write a self-contained HTML report: ops against their roofline, memory per tile by
    /// category, buffer liveness, a timeline over every tile.
    #[command(after_help = AFTER_HELP)]
    Report(ReportArgs),
    /// Write Chrome trace JSON (opens in Perfetto or chrome://tracing).
    #[command(after_help = AFTER_HELP)]
    Trace(TraceArgs),
    /// Group and sort the profile's cycles by kernel, op, tile or phase.
    #[command(after_help = AFTER_HELP)]
    Query(QueryArgs),
    /// Write a self-contained HTML page comparing two profiles: cycles per run, step kind,
    /// phase and op side by side with their differences, and the memory per category.
    #[command(after_help = AFTER_HELP)]
    Compare(CompareArgs),
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The first profile (A).
    pub a: PathBuf,
    /// The second profile (B); differences are B - A.
    pub b: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    pub profile: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
    /// The profiled package, for the memory views of a profile without a memory plan.
    #[arg(long)]
    pub package: Option<PathBuf>,
    /// A sweep's results directory (`ipu sweep -o DIR`): its Pareto plot (`pareto.svg`) is
    /// included in the report.
    #[arg(long, value_name = "DIR")]
    pub sweep: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    pub profile: PathBuf,
    #[arg(short, long)]
    pub output: PathBuf,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum GroupByArg {
    Kernel,
    Op,
    Tile,
    Phase,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SortArg {
    /// Total cycles, largest first.
    Cycles,
    /// Runs or steps, most first.
    Count,
    /// Group name.
    Name,
}

#[derive(Debug, Args)]
pub struct QueryArgs {
    pub profile: PathBuf,
    #[arg(long, value_enum)]
    pub group_by: GroupByArg,
    #[arg(long, value_enum, default_value = "cycles")]
    pub sort: SortArg,
    /// Keep the first N rows.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Print JSON (an array of rows) instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Why a command failed, with the exit code it maps to.
#[derive(Debug)]
pub enum Failure {
    /// Bad input or usage ([`exit::USAGE`]).
    Input(anyhow::Error),
    /// The run or a test failed ([`exit::FAILED`]); the message was already printed when
    /// `None`.
    Failed(Option<anyhow::Error>),
}

impl Failure {
    pub fn input(error: impl Into<anyhow::Error>) -> Failure {
        Failure::Input(error.into())
    }

    pub fn failed(error: impl Into<anyhow::Error>) -> Failure {
        Failure::Failed(Some(error.into()))
    }
}

/// Runs the command and returns the process exit code.
pub fn main(cli: Cli) -> i32 {
    let result = match cli.command {
        Command::Compile(args) => compile::command(&args),
        Command::Run(args) => run::command(&args),
        Command::Inspect(args) => inspect::command(&args),
        Command::Profile(ProfileCommand::Report(args)) => profile::report(&args),
        Command::Profile(ProfileCommand::Trace(args)) => profile::trace(&args),
        Command::Profile(ProfileCommand::Query(args)) => profile::query(&args),
        Command::Profile(ProfileCommand::Compare(args)) => profile::compare(&args),
        Command::Sweep(args) => sweep::command(&args),
    };
    exit_code(result)
}

/// [`main`] for a program other than the `ipu` binary (the Python package's command line,
/// `python -m ipu_opt`): a sweep's points run `launcher` (a program and its first arguments,
/// which `ipu run`'s arguments follow) instead of this process's executable.
pub fn main_with_launcher(cli: Cli, launcher: &[std::ffi::OsString]) -> i32 {
    match &cli.command {
        Command::Sweep(args) => exit_code(sweep::sweep(args, launcher).map(|_| ())),
        _ => main(cli),
    }
}

/// Prints a failure and returns its exit code.
fn exit_code(result: Result<(), Failure>) -> i32 {
    match result {
        Ok(()) => exit::OK,
        Err(Failure::Input(error)) => {
            eprintln!("ipu: error: {error:#}");
            exit::USAGE
        }
        Err(Failure::Failed(Some(error))) => {
            eprintln!("ipu: error: {error:#}");
            exit::FAILED
        }
        Err(Failure::Failed(None)) => exit::FAILED,
    }
}
