//! `ipu sweep`: compile and simulate one model at many points of plan constraints and compile
//! options, in parallel, into a results file that resumes.
//!
//! The points come from a sweep file ([`spec`]) and/or axis flags (a flag replaces that axis
//! of the file's `[product]`). Each point is an `ipu run` in its own process ([`point`]);
//! `--jobs` of them run at once. Each finished point is appended to `<out>/results.jsonl`
//! and `<out>/results.csv` is rewritten ([`results`]); a point already on record is skipped.
//! At the end: the best points by simulated device-program cycles, the failures, and
//! `<out>/pareto.svg` ([`pareto`]).

mod pareto;
mod point;
pub mod results;
mod spec;
mod summary;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use super::Failure;
use results::{Record, Status};
use spec::{ConstraintSpec, Point, SweepFile};

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The model: an MLIR module, as `ipu run` takes it.
    pub model: PathBuf,
    /// Sweep file (TOML; JSON when it ends in .json): a [product] of axes and/or [[point]]
    /// tables. See README.md.
    #[arg(long, value_name = "FILE")]
    pub sweep: Option<PathBuf>,
    /// Tile counts to sweep (replaces the file's `tiles` axis).
    #[arg(long, value_name = "COUNTS", value_delimiter = ',')]
    pub tiles: Vec<u32>,
    /// Precisions to sweep: native, f16, f32, fp8.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub precision: Vec<String>,
    /// Memory classes of GEMM weights to sweep: auto, interleaved, standard.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub weight_memory: Vec<String>,
    /// Beam widths to sweep.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub beam_width: Vec<u32>,
    /// Candidates per op to sweep.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub candidates_per_op: Vec<u32>,
    /// Finalist counts to sweep.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub finalists: Vec<u32>,
    /// Plan-constraint files to sweep (the form `ipu run --constraints` reads), each named by
    /// its file stem.
    #[arg(long, value_name = "FILES", value_delimiter = ',')]
    pub constraints: Vec<PathBuf>,
    /// Directory of the results (results.jsonl, results.csv, pareto.svg, points/).
    #[arg(short, long, value_name = "DIR", default_value = "sweep")]
    pub out: PathBuf,
    /// Points run at once [default: the available cores].
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Seed of every point's generated inputs.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Passed to each point's `ipu run --max-cycles`.
    #[arg(long, value_name = "CYCLES")]
    pub max_cycles: Option<u64>,
    /// Seconds a point may take before it is stopped and recorded as failed.
    #[arg(long, value_name = "SECONDS")]
    pub timeout: Option<f64>,
    /// Run again the points on record as failed.
    #[arg(long)]
    pub retry_failed: bool,
    /// Rows of the summary table.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// List the points and exit without running any.
    #[arg(long)]
    pub dry_run: bool,
}

/// The sweep file with the flags' axes put in.
fn sweep_file(args: &SweepArgs) -> Result<(SweepFile, PathBuf, String), Failure> {
    let (mut file, base, origin) = match &args.sweep {
        Some(path) => {
            let file = spec::read(path).map_err(Failure::Input)?;
            let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
            (file, base, path.display().to_string())
        }
        None => (
            SweepFile::default(),
            PathBuf::new(),
            "the command line".to_string(),
        ),
    };
    let flags_given = !(args.tiles.is_empty()
        && args.precision.is_empty()
        && args.weight_memory.is_empty()
        && args.beam_width.is_empty()
        && args.candidates_per_op.is_empty()
        && args.finalists.is_empty()
        && args.constraints.is_empty());
    if flags_given {
        let axes = file.product.get_or_insert_with(Default::default);
        let set = |values: &Vec<u32>, axis: &mut Option<Vec<u32>>| {
            if !values.is_empty() {
                *axis = Some(values.clone());
            }
        };
        set(&args.tiles, &mut axes.tiles);
        set(&args.beam_width, &mut axes.beam_width);
        set(&args.candidates_per_op, &mut axes.candidates_per_op);
        set(&args.finalists, &mut axes.finalists);
        if !args.precision.is_empty() {
            axes.precision = Some(args.precision.clone());
        }
        if !args.weight_memory.is_empty() {
            axes.weight_memory = Some(args.weight_memory.clone());
        }
        if !args.constraints.is_empty() {
            let specs = args.constraints.iter().map(|path| ConstraintSpec {
                name: path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| path.display().to_string()),
                file: Some(std::path::absolute(path).unwrap_or_else(|_| path.clone())),
                ops: None,
            });
            axes.constraints = Some(specs.collect());
        }
    } else if args.sweep.is_none() {
        return Err(Failure::input(anyhow!(
            "nothing to sweep: give --sweep FILE or axis flags (--tiles, --precision, ...)"
        )));
    }
    Ok((file, base, origin))
}

/// The model's text hash, checked against what the results file was written for.
fn model_hash(model: &Path) -> Result<String, Failure> {
    let text = std::fs::read(model)
        .with_context(|| format!("cannot read model '{}'", model.display()))
        .map_err(Failure::Input)?;
    Ok(format!("{:016x}", spec::fnv1a(&text)))
}

/// Holds `<out>/sweep.lock` for the sweep's life: two sweeps writing one results directory
/// would run the same points and remove each other's point directories. (A lock the kernel
/// drops with its holder, so a killed sweep never leaves the directory locked.)
fn lock_out(out: &Path) -> Result<std::fs::File, Failure> {
    let path = out.join("sweep.lock");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("opening '{}'", path.display()))
        .map_err(Failure::Input)?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(Failure::input(anyhow!(
            "another `ipu sweep` is writing to '{}' (it holds {}); wait for it or use another --out",
            out.display(),
            path.display()
        ))),
        Err(std::fs::TryLockError::Error(error)) => Err(Failure::input(
            anyhow!(error).context(format!("locking '{}'", path.display())),
        )),
    }
}

pub fn command(args: &SweepArgs) -> Result<(), Failure> {
    let ipu = std::env::current_exe()
        .context("locating the ipu binary")
        .map_err(Failure::failed)?;
    sweep(args, &[ipu.into_os_string()]).map(|_| ())
}

/// Runs the sweep `args` describes; each point runs `launcher` (a program and its first
/// arguments, which then take `ipu run`'s: the `ipu` binary, or a Python interpreter running
/// the Python package's command line) in a process of its own. Returns the records of the
/// sweep's points, in the sweep's order (none for a dry run).
pub fn sweep(args: &SweepArgs, launcher: &[std::ffi::OsString]) -> Result<Vec<Record>, Failure> {
    if launcher.is_empty() {
        return Err(Failure::input(anyhow!(
            "no program to run the sweep's points with"
        )));
    }
    if args.model.extension().is_none_or(|e| e != "mlir") {
        return Err(Failure::input(anyhow!(
            "the model must be an MLIR module (.mlir), not '{}'",
            args.model.display()
        )));
    }
    let hash = model_hash(&args.model)?;
    let (file, base, origin) = sweep_file(args)?;
    let points = spec::expand(&file, &base, &origin).map_err(Failure::Input)?;
    if args.dry_run {
        for point in &points {
            println!("{} {}", point.id(), point.label());
        }
        println!("{} points", points.len());
        return Ok(Vec::new());
    }
    if args.jobs == Some(0) {
        return Err(Failure::input(anyhow!("--jobs must be at least 1")));
    }
    let timeout = match args.timeout {
        Some(s) if !(s.is_finite() && s > 0.0) => {
            return Err(Failure::input(anyhow!(
                "--timeout must be a positive number of seconds"
            )))
        }
        other => other.map(Duration::from_secs_f64),
    };
    std::fs::create_dir_all(args.out.join("points"))
        .with_context(|| format!("creating '{}'", args.out.display()))
        .map_err(Failure::Input)?;
    let _lock = lock_out(&args.out)?;
    let jsonl = args.out.join("results.jsonl");
    let loaded = results::load(&jsonl).map_err(Failure::Input)?;
    for line in &loaded.unreadable {
        eprintln!(
            "ipu sweep: warning: {}:{line} is not a result (cut short by an interrupt?); ignored",
            jsonl.display()
        );
    }
    if let Some(other) = loaded.records.values().find(|r| r.model_hash != hash) {
        return Err(Failure::input(anyhow!(
            "{} holds results of another model ('{}', or an edited one); use another --out",
            jsonl.display(),
            other.model
        )));
    }
    let done = |point: &Point| {
        loaded
            .records
            .get(&point.key())
            .is_some_and(|r| !(args.retry_failed && r.status == Status::Failed))
    };
    let todo: Vec<Point> = points.iter().filter(|p| !done(p)).cloned().collect();
    let skipped = points.len() - todo.len();
    let job = point::Job {
        launcher: launcher.to_vec(),
        model: std::path::absolute(&args.model).unwrap_or_else(|_| args.model.clone()),
        model_label: args.model.display().to_string(),
        model_hash: hash,
        points_dir: std::path::absolute(args.out.join("points")).map_err(Failure::failed)?,
        seed: args.seed,
        max_cycles: args.max_cycles,
        timeout,
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    if todo.is_empty() {
        println!(
            "sweep: all {} points already done in {}; nothing to run",
            points.len(),
            jsonl.display()
        );
    } else {
        println!(
            "sweep: {} points, {skipped} already done, {} to run, {} at a time; results in {}",
            points.len(),
            todo.len(),
            jobs.min(todo.len()),
            args.out.display()
        );
    }
    let mut records = loaded.records;
    let started = Instant::now();
    if !todo.is_empty() {
        run_points(&job, &todo, jobs, &args.out, &mut records).map_err(Failure::failed)?;
    }
    // The summary covers this sweep's points (the results file may hold other sweeps').
    let ours: Vec<&Record> = points
        .iter()
        .filter_map(|p| records.get(&p.key()))
        .collect();
    let csv = args.out.join("results.csv");
    results::write_csv(&csv, records.values()).map_err(Failure::failed)?;
    let svg_path = args.out.join("pareto.svg");
    summary::write_plot(&svg_path, &args.model, &ours).map_err(Failure::failed)?;
    summary::print(&ours, args.top);
    println!(
        "sweep: {} points ({} run now in {:.1} s, {skipped} already done); {} ok, {} failed",
        ours.len(),
        todo.len(),
        started.elapsed().as_secs_f64(),
        ours.iter().filter(|r| r.status == Status::Ok).count(),
        ours.iter().filter(|r| r.status == Status::Failed).count(),
    );
    println!(
        "results={} csv={} plot={}",
        jsonl.display(),
        csv.display(),
        svg_path.display()
    );
    Ok(ours.into_iter().cloned().collect())
}

/// Progress: a bar on a terminal, a line per finished point otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    finished: usize,
}

impl Progress {
    fn new(total: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template(
                "{spinner} [{bar:30}] {pos}/{len} points {elapsed} (eta {eta}) {msg}",
            ) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress {
            bar,
            total,
            finished: 0,
        }
    }

    fn finished(&mut self, record: &Record) {
        self.finished += 1;
        let verdict = match record.status {
            Status::Ok => format!(
                "ok deviceProgramCycles={}",
                record
                    .result
                    .device_program_cycles
                    .map_or("?".into(), |c| c.to_string())
            ),
            Status::Failed => "FAILED".to_string(),
        };
        let line = format!(
            "[{}/{}] {} {} {verdict} ({:.1} s)",
            self.finished,
            self.total,
            record.id,
            record.params.label(),
            record.wall_seconds
        );
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                bar.println(line);
            }
            None => eprintln!("{line}"),
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Runs `todo` on `jobs` worker threads, each running one point's process at a time; records
/// each finished point as it arrives.
fn run_points(
    job: &point::Job,
    todo: &[Point],
    jobs: usize,
    out: &Path,
    records: &mut std::collections::BTreeMap<String, Record>,
) -> anyhow::Result<()> {
    let mut appender = results::Appender::open(&out.join("results.jsonl"))?;
    let csv = out.join("results.csv");
    let queue = Mutex::new(todo.iter());
    let (sender, receiver) = mpsc::channel::<Record>();
    let mut progress = Progress::new(todo.len());
    std::thread::scope(|scope| -> anyhow::Result<()> {
        for _ in 0..jobs.min(todo.len()) {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || loop {
                let next = queue.lock().map(|mut q| q.next().cloned());
                let Ok(Some(point)) = next else { break };
                if sender.send(point::run(job, &point)).is_err() {
                    break;
                }
            });
        }
        drop(sender);
        for record in receiver {
            appender.append(&record)?;
            progress.finished(&record);
            records.insert(record.key.clone(), record);
            results::write_csv(&csv, records.values())?;
        }
        Ok(())
    })
}
