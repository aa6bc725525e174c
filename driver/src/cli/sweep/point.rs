//! One point of a sweep: an `ipu run` of the model in a process of its own, with the point's
//! options, in the point's own directory (`<out>/points/<id>/`: its artifacts, so each point
//! has its own device lock; its constraints, plan dump, result, stdout and stderr).
//!
//! A process per point, not a compile in this process: a point that panics, aborts inside
//! MLIR, overflows its stack or runs out of memory takes down only its own process, and the
//! sweep records it as failed with what the process said. The kernel cache
//! (`IPU_KERNEL_CACHE`, inherited) is shared, so a kernel compiled for one point is reused by
//! the others.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::results::{Record, Status};
use super::spec::Point;
use crate::cli::run_result::RunResult;

/// What every point of a sweep shares.
pub struct Job {
    /// The program to run and its first arguments (`ipu run`'s follow): the `ipu` binary,
    /// or a Python interpreter running the Python package's command line.
    pub launcher: Vec<std::ffi::OsString>,
    pub model: PathBuf,
    pub model_label: String,
    pub model_hash: String,
    pub points_dir: PathBuf,
    pub seed: u64,
    pub max_cycles: Option<u64>,
    pub timeout: Option<Duration>,
}

/// The `ipu run` arguments of `point` writing into `dir`.
fn arguments(job: &Job, point: &Point, dir: &Path) -> anyhow::Result<Vec<String>> {
    let path = |name: &str| dir.join(name).display().to_string();
    let mut args = vec![
        "run".to_string(),
        job.model.display().to_string(),
        "--artifacts".into(),
        path("artifacts"),
        "--name".into(),
        "run".into(),
        "--seed".into(),
        job.seed.to_string(),
        "--dump-plans".into(),
        path("plans.json"),
        "--result-json".into(),
        path("result.json"),
    ];
    if let Some(cycles) = job.max_cycles {
        args.extend(["--max-cycles".into(), cycles.to_string()]);
    }
    let options = [
        ("--tiles", point.tiles.map(|v| v.to_string())),
        ("--precision", point.precision.clone()),
        ("--weight-memory", point.weight_memory.clone()),
        ("--beam-width", point.beam_width.map(|v| v.to_string())),
        (
            "--candidates-per-op",
            point.candidates_per_op.map(|v| v.to_string()),
        ),
        ("--finalists", point.finalists.map(|v| v.to_string())),
    ];
    for (flag, value) in options {
        if let Some(value) = value {
            args.extend([flag.to_string(), value]);
        }
    }
    if let Some(constraints) = &point.constraints {
        if !constraints.document.is_null() {
            let file = dir.join("constraints.json");
            std::fs::write(&file, serde_json::to_string_pretty(&constraints.document)?)?;
            args.extend(["--constraints".into(), file.display().to_string()]);
        }
    }
    Ok(args)
}

/// The diagnostic of a failed run: its `error:` lines and failed-test lines, else the end
/// of its stderr.
pub fn diagnostic(stdout: &str, stderr: &str) -> String {
    let mut lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("error:") || l.contains("numerical test failed"))
        .collect();
    lines.extend(stdout.lines().filter(|l| l.contains("=FAIL")));
    if lines.is_empty() {
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        lines = tail.into_iter().rev().collect();
    }
    let mut text = lines.join("\n");
    if text.len() > 4000 {
        let mut cut = 4000;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str(" ...");
    }
    text
}

/// How the process ended.
enum Ended {
    Exited(Option<i32>),
    TimedOut,
}

/// Waits for `child`, killing it after `timeout`.
fn wait(child: &mut std::process::Child, timeout: Option<Duration>) -> std::io::Result<Ended> {
    let Some(timeout) = timeout else {
        return child.wait().map(|status| Ended::Exited(status.code()));
    };
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Ended::Exited(status.code()));
        }
        if started.elapsed() >= timeout {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Runs `point` and returns its record; never fails: what goes wrong is the record's
/// diagnostic.
pub fn run(job: &Job, point: &Point) -> Record {
    let started = Instant::now();
    let id = point.id();
    let dir = job.points_dir.join(&id);
    let mut record = Record {
        key: point.key(),
        id,
        model: job.model_label.clone(),
        model_hash: job.model_hash.clone(),
        params: point.clone(),
        status: Status::Failed,
        diagnostic: None,
        exit_code: None,
        wall_seconds: 0.0,
        result: RunResult::default(),
        plans: None,
    };
    let ended = spawn(job, point, &dir);
    record.wall_seconds = started.elapsed().as_secs_f64();
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    let (stdout, stderr) = (read("stdout.txt"), read("stderr.txt"));
    record.result = RunResult::read(&dir.join("result.json")).unwrap_or_default();
    record.plans = serde_json::from_str(&read("plans.json")).ok();
    match ended {
        Err(error) => record.diagnostic = Some(format!("the point did not run: {error:#}")),
        Ok(Ended::TimedOut) => {
            record.diagnostic = Some(format!(
                "timed out after {:.0} s (--timeout)",
                job.timeout.unwrap_or_default().as_secs_f64()
            ))
        }
        Ok(Ended::Exited(code)) => {
            record.exit_code = code;
            if code == Some(0) {
                record.status = Status::Ok;
            } else {
                let mut text = diagnostic(&stdout, &stderr);
                if code.is_none() {
                    text = format!("ipu run was killed by a signal\n{text}");
                }
                record.diagnostic = Some(text.trim().to_string());
            }
        }
    }
    record
}

/// Starts the point's process with its output in files, and waits for it.
fn spawn(job: &Job, point: &Point, dir: &Path) -> anyhow::Result<Ended> {
    // A previous attempt's files (an interrupted or retried point) must not be read as this
    // attempt's.
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let args = arguments(job, point, dir)?;
    std::fs::write(dir.join("command.txt"), args.join(" ") + "\n")?;
    let stdout = std::fs::File::create(dir.join("stdout.txt"))?;
    let stderr = std::fs::File::create(dir.join("stderr.txt"))?;
    let (program, first) = job
        .launcher
        .split_first()
        .ok_or_else(|| anyhow::anyhow!("no program to run the point with"))?;
    let mut command = Command::new(program);
    command
        .args(first)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    die_with_parent(&mut command);
    let mut child = command.spawn()?;
    Ok(wait(&mut child, job.timeout)?)
}

/// The point's process is killed when the thread that started it (and so the sweep) dies:
/// a sweep stopped by a signal leaves no point running on.
#[cfg(target_os = "linux")]
fn die_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl, which
    // is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_command: &mut Command) {}

#[cfg(test)]
mod tests {
    use super::diagnostic;

    #[test]
    fn diagnostic_keeps_errors_and_failed_tests() {
        let stderr = "INFO compiling\nipu: error: compiling 'm.mlir': no candidate\nINFO x\n";
        assert_eq!(
            diagnostic("", stderr),
            "ipu: error: compiling 'm.mlir': no candidate"
        );
        let stdout = "referenceMaximumAbsoluteError=9.0 numericalTest=FAIL\n";
        assert_eq!(
            diagnostic(stdout, ""),
            "referenceMaximumAbsoluteError=9.0 numericalTest=FAIL"
        );
        let crash = "a\nb\nc\nd\ne\nf\nthread 'main' panicked at x.rs:1\n";
        assert_eq!(
            diagnostic("", crash),
            "c\nd\ne\nf\nthread 'main' panicked at x.rs:1"
        );
    }
}
