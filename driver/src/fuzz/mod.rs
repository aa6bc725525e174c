//! The reliability campaign (`ipu-fuzz`): seeded cases against the real tools, each run as a
//! separate process under a memory cap and a timeout, each judged by the rules every tool
//! must keep:
//!
//! * it exits 0, 1 or 2 (no signal, no panic's 101, no abort);
//! * it prints no panic message, `LLVM ERROR` or stack dump;
//! * it finishes within the timeout and the memory cap;
//! * a failure says something (a non-empty diagnostic on stderr);
//! * the files it was given are unchanged.
//!
//! Targets: `ir` (mutated `.mlir` files of a corpus through `ipu-opt` and `ipu compile`),
//! `pipeline` (grammar-aware pipeline strings), `attributes` (random `#ipu.format` /
//! `#ipu.plan` texts), `package` (mutated `.ipuexe` through `ipu run`), `profile` (mutated
//! `.ipuprof` through `ipu profile report`), `npy` (mutated inputs through `ipu run`).
//! A case is a function of (seed, index): a finding is reproduced by its command.

pub mod mutate;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The targets, in the order cases cycle through them.
pub const TARGETS: &[&str] = &["ir", "pipeline", "attributes", "package", "profile", "npy"];

/// What a campaign runs on.
#[derive(Debug, Clone)]
pub struct Campaign {
    pub seed: u64,
    pub cases: usize,
    /// Directory holding `ipu-opt` and `ipu`.
    pub bin_dir: PathBuf,
    /// `.mlir` files mutated by the `ir` target.
    pub corpus: Vec<PathBuf>,
    /// Scratch directory (cases, then findings under `findings/`).
    pub work: PathBuf,
    pub timeout: Duration,
    /// Address-space cap of each case, bytes.
    pub memory: u64,
    pub jobs: usize,
    pub targets: Vec<String>,
}

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// Exit 0.
    Accepted,
    /// Exit 1 or 2 with a diagnostic.
    Rejected,
    Crash,
    Hang,
    /// Killed or aborted at the memory cap.
    Memory,
    /// An exit code other than 0, 1, 2.
    ExitCode,
    /// A failure without a diagnostic.
    Silent,
    /// A file it was given changed.
    Overwrote,
    /// The case could not be started (a defect of the generator, reported as a finding).
    Unrunnable,
}

impl Outcome {
    pub fn is_finding(self) -> bool {
        !matches!(self, Outcome::Accepted | Outcome::Rejected)
    }
}

/// One case's command and result.
#[derive(Debug, Clone)]
pub struct CaseResult {
    pub index: usize,
    pub target: &'static str,
    pub command: Vec<String>,
    pub outcome: Outcome,
    pub detail: String,
}

/// The campaign's counts.
#[derive(Debug, Default)]
pub struct Summary {
    pub results: Vec<CaseResult>,
}

impl Summary {
    pub fn count(&self, outcome: Outcome) -> usize {
        self.results.iter().filter(|r| r.outcome == outcome).count()
    }

    pub fn findings(&self) -> Vec<&CaseResult> {
        self.results
            .iter()
            .filter(|r| r.outcome.is_finding())
            .collect()
    }

    /// The summary lines: totals, then per target.
    pub fn report(&self) -> String {
        let mut text = format!(
            "ipu-fuzz: cases={} accepted={} rejected={} findings={} (crash={} hang={} memory={} exit={} silent={} overwrote={} unrunnable={})\n",
            self.results.len(),
            self.count(Outcome::Accepted),
            self.count(Outcome::Rejected),
            self.findings().len(),
            self.count(Outcome::Crash),
            self.count(Outcome::Hang),
            self.count(Outcome::Memory),
            self.count(Outcome::ExitCode),
            self.count(Outcome::Silent),
            self.count(Outcome::Overwrote),
            self.count(Outcome::Unrunnable),
        );
        for target in TARGETS {
            let of: Vec<&CaseResult> = self
                .results
                .iter()
                .filter(|r| r.target == *target)
                .collect();
            if of.is_empty() {
                continue;
            }
            text.push_str(&format!(
                "  {target}: cases={} accepted={} rejected={} findings={}\n",
                of.len(),
                of.iter().filter(|r| r.outcome == Outcome::Accepted).count(),
                of.iter().filter(|r| r.outcome == Outcome::Rejected).count(),
                of.iter().filter(|r| r.outcome.is_finding()).count()
            ));
        }
        for finding in self.findings() {
            text.push_str(&format!(
                "  FINDING case {} [{}] {:?}: {}\n    {}\n",
                finding.index,
                finding.target,
                finding.outcome,
                finding.detail,
                finding
                    .command
                    .join(" ")
                    .chars()
                    .take(400)
                    .collect::<String>()
            ));
        }
        text
    }
}

/// The fixtures the binary-format targets mutate: a package, a profile and a directory of
/// inputs made once from `examples/mlp_small.mlir`-like source.
struct Fixtures {
    package: Vec<u8>,
    profile: Vec<u8>,
    npy: Vec<(String, Vec<u8>)>,
    /// A valid module for the pipeline target.
    module: PathBuf,
}

const FIXTURE_MODEL: &str = r#"func.func @mlp(%x: tensor<4x32xf16>, %w: tensor<32x16xf16>, %b: tensor<16xf16>) -> tensor<4x16xf16> {
  %h = "ipu.matmul"(%x, %w) : (tensor<4x32xf16>, tensor<32x16xf16>) -> tensor<4x16xf16>
  %a = "ipu.add"(%h, %b) : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
  %g = "ipu.gelu"(%a) {approximate = "tanh"} : (tensor<4x16xf16>) -> tensor<4x16xf16>
  return %g : tensor<4x16xf16>
}
"#;

impl Campaign {
    fn tool(&self, name: &str) -> String {
        self.bin_dir.join(name).display().to_string()
    }

    fn fixtures(&self) -> anyhow::Result<Fixtures> {
        use anyhow::Context;
        let dir = self.work.join("fixtures");
        std::fs::create_dir_all(&dir)?;
        let model = dir.join("model.mlir");
        std::fs::write(&model, FIXTURE_MODEL)?;
        let run = Command::new(self.tool("ipu"))
            .arg("run")
            .arg(&model)
            .args(["--tiles", "8", "--name", "fixture", "--artifacts"])
            .arg(dir.join("artifacts"))
            .arg("--outputs")
            .arg(dir.join("outputs"))
            .output()
            .context("running ipu to make the fixtures")?;
        anyhow::ensure!(
            run.status.success(),
            "making the fixtures failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let artifacts = dir.join("artifacts").join("fixture");
        let package = std::fs::read(artifacts.join("fixture-final.ipuexe"))
            .or_else(|_| std::fs::read(artifacts.join("model-final.ipuexe")))
            .context("reading the fixture package")?;
        let profile = std::fs::read(artifacts.join("profile-final.ipuprof"))
            .context("reading the fixture profile")?;
        let inputs = dir.join("inputs");
        std::fs::create_dir_all(&inputs)?;
        let mut npy = Vec::new();
        for (name, shape) in [("arg0.npy", [4u64, 32]), ("arg1.npy", [32, 16])] {
            npy.push((name.to_string(), npy_f16(&shape)));
        }
        npy.push(("arg2.npy".into(), npy_f16(&[16])));
        Ok(Fixtures {
            package,
            profile,
            npy,
            module: model,
        })
    }

    /// Runs the campaign; `progress` is called after each case.
    pub fn run(&self, progress: impl Fn(usize) + Sync) -> anyhow::Result<Summary> {
        std::fs::create_dir_all(&self.work)?;
        let fixtures = self.fixtures()?;
        let corpus: Vec<Vec<u8>> = self
            .corpus
            .iter()
            .filter_map(|p| std::fs::read(p).ok())
            .filter(|b| b.len() <= 256 * 1024)
            .collect();
        anyhow::ensure!(!corpus.is_empty(), "the corpus has no readable .mlir file");
        let targets: Vec<&'static str> = TARGETS
            .iter()
            .copied()
            .filter(|t| self.targets.is_empty() || self.targets.iter().any(|s| s == t))
            .collect();
        anyhow::ensure!(!targets.is_empty(), "no target selected");
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.max(1) {
                let (next, results, fixtures, corpus, targets, progress) =
                    (&next, &results, &fixtures, &corpus, &targets, &progress);
                scope.spawn(move || loop {
                    let index = next.fetch_add(1, Ordering::SeqCst);
                    if index >= self.cases {
                        break;
                    }
                    let target = targets[index % targets.len()];
                    let result = self.case(index, target, fixtures, corpus);
                    results
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push(result);
                    progress(index);
                });
            }
        });
        let mut results = results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        results.sort_by_key(|r| r.index);
        let summary = Summary { results };
        for finding in summary.findings() {
            let dir = self
                .work
                .join("findings")
                .join(format!("{}-{}", finding.index, finding.target));
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(
                dir.join("command.txt"),
                format!("{}\n{}\n", finding.command.join(" "), finding.detail),
            );
        }
        Ok(summary)
    }

    fn case(
        &self,
        index: usize,
        target: &'static str,
        fixtures: &Fixtures,
        corpus: &[Vec<u8>],
    ) -> CaseResult {
        let mut rng = ChaCha8Rng::seed_from_u64(
            self.seed ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let dir = self.work.join(format!("case-{index}"));
        let _ = std::fs::remove_dir_all(&dir);
        let _ = std::fs::create_dir_all(&dir);
        let artifacts = dir.join("artifacts").display().to_string();
        let (command, inputs): (Vec<String>, Vec<PathBuf>) = match target {
            "ir" => {
                let source = corpus.choose(&mut rng).cloned().unwrap_or_default();
                let file = dir.join("input.mlir");
                let _ = std::fs::write(&file, mutate::bytes(&mut rng, &source));
                let f = file.display().to_string();
                let command = match rng.random_range(0..4) {
                    0 => vec![self.tool("ipu-opt"), f],
                    1 => vec![
                        self.tool("ipu-opt"),
                        f,
                        "-p".into(),
                        "builtin.module(ipu-cleanup,ipu-lower-mid{tiles=16})".into(),
                    ],
                    2 => vec![
                        self.tool("ipu-opt"),
                        f,
                        "--split-input-file".into(),
                        "--verify-diagnostics".into(),
                    ],
                    _ => vec![
                        self.tool("ipu"),
                        "compile".into(),
                        f,
                        "--tiles".into(),
                        "16".into(),
                        "-o".into(),
                        dir.join("out.ipuexe").display().to_string(),
                    ],
                };
                (command, vec![file])
            }
            "pipeline" => (
                vec![
                    self.tool("ipu-opt"),
                    fixtures.module.display().to_string(),
                    format!("--pass-pipeline={}", mutate::pipeline(&mut rng)),
                    "-o".into(),
                    dir.join("out.mlir").display().to_string(),
                ],
                vec![fixtures.module.clone()],
            ),
            "attributes" => {
                let file = dir.join("attributes.mlir");
                let _ = std::fs::write(&file, mutate::attribute_module(&mut rng));
                let pipeline = ["builtin.module()", "builtin.module(ipu-lower-mid{tiles=8})"]
                    .choose(&mut rng)
                    .copied()
                    .unwrap_or("builtin.module()");
                (
                    vec![
                        self.tool("ipu-opt"),
                        file.display().to_string(),
                        "-p".into(),
                        pipeline.into(),
                    ],
                    vec![file],
                )
            }
            "package" => {
                let file = dir.join("model.ipuexe");
                let _ = std::fs::write(&file, mutate::bytes(&mut rng, &fixtures.package));
                (
                    vec![
                        self.tool("ipu"),
                        "run".into(),
                        file.display().to_string(),
                        "--artifacts".into(),
                        artifacts,
                    ],
                    vec![file],
                )
            }
            "profile" => {
                let file = dir.join("profile.ipuprof");
                let _ = std::fs::write(&file, mutate::bytes(&mut rng, &fixtures.profile));
                let (view, out) = [
                    ("report", "report.html"),
                    ("trace", "trace.json"),
                    ("compare", "compare.html"),
                ][rng.random_range(0..3)];
                let mut command = vec![
                    self.tool("ipu"),
                    "profile".into(),
                    view.into(),
                    file.display().to_string(),
                ];
                let mut inputs = vec![file];
                if view == "compare" {
                    // The mutated profile against the intact one.
                    let intact = dir.join("intact.ipuprof");
                    let _ = std::fs::write(&intact, &fixtures.profile);
                    command.push(intact.display().to_string());
                    inputs.push(intact);
                }
                command.extend(["-o".into(), dir.join(out).display().to_string()]);
                (command, inputs)
            }
            _ => {
                let inputs = dir.join("inputs");
                let _ = std::fs::create_dir_all(&inputs);
                let victim = rng.random_range(0..fixtures.npy.len());
                let mut files = Vec::new();
                for (i, (name, bytes)) in fixtures.npy.iter().enumerate() {
                    let file = inputs.join(name);
                    let bytes = if i == victim {
                        mutate::bytes(&mut rng, bytes)
                    } else {
                        bytes.clone()
                    };
                    let _ = std::fs::write(&file, bytes);
                    files.push(file);
                }
                let package = dir.join("model.ipuexe");
                let _ = std::fs::write(&package, &fixtures.package);
                files.push(package.clone());
                (
                    vec![
                        self.tool("ipu"),
                        "run".into(),
                        package.display().to_string(),
                        "--inputs".into(),
                        inputs.display().to_string(),
                        "--artifacts".into(),
                        artifacts,
                    ],
                    files,
                )
            }
        };
        let (outcome, detail) = self.judge(&command, &inputs);
        if !outcome.is_finding() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        CaseResult {
            index,
            target,
            command,
            outcome,
            detail,
        }
    }

    /// Runs `command` under the cap and the timeout and judges it.
    fn judge(&self, command: &[String], inputs: &[PathBuf]) -> (Outcome, String) {
        let before: Vec<Option<Vec<u8>>> = inputs.iter().map(|p| std::fs::read(p).ok()).collect();
        let started = Instant::now();
        use std::os::unix::process::CommandExt;
        // Its own process group, so a hung case is killed with everything it started.
        let child = Command::new("prlimit")
            .process_group(0)
            .arg(format!("--as={}", self.memory))
            .arg("--")
            .args(command)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .env("RUST_BACKTRACE", "0")
            .env("RUST_LOG", "warn")
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(e) => return (Outcome::Unrunnable, format!("cannot start: {e}")),
        };
        // Drain stderr on a thread so a chatty tool cannot block on a full pipe.
        let stderr = child.stderr.take();
        let reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut stderr) = stderr {
                use std::io::Read;
                let _ = stderr.by_ref().take(1 << 20).read_to_end(&mut text);
                let _ = std::io::copy(&mut stderr, &mut std::io::sink());
            }
            String::from_utf8_lossy(&text).into_owned()
        });
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if started.elapsed() > self.timeout => {
                    let _ = Command::new("kill")
                        .args(["-KILL", "--", &format!("-{}", child.id())])
                        .stderr(Stdio::null())
                        .status();
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => break None,
            }
        };
        let stderr = reader.join().unwrap_or_default();
        // The line that says what went wrong: the first naming an error, else the first.
        let first_line = |text: &str| {
            text.lines()
                .find(|l| l.contains("error"))
                .or_else(|| text.lines().next())
                .unwrap_or("")
                .chars()
                .take(200)
                .collect::<String>()
        };
        let Some(status) = status else {
            return (
                Outcome::Hang,
                format!("no exit within {:.0} s", self.timeout.as_secs_f64()),
            );
        };
        let after: Vec<Option<Vec<u8>>> = inputs.iter().map(|p| std::fs::read(p).ok()).collect();
        if before != after {
            return (Outcome::Overwrote, "a file it was given changed".into());
        }
        let memory_words = [
            "memory allocation of",
            "std::bad_alloc",
            "Cannot allocate memory",
            "out of memory",
        ];
        if memory_words.iter().any(|w| stderr.contains(w)) {
            return (Outcome::Memory, first_line(&stderr));
        }
        for word in [
            "panicked at",
            "LLVM ERROR",
            "Stack dump",
            "stack overflow",
            "Aborted",
        ] {
            if let Some(line) = stderr.lines().find(|l| l.contains(word)) {
                return (Outcome::Crash, line.chars().take(200).collect());
            }
        }
        match status.code() {
            Some(0) => (Outcome::Accepted, String::new()),
            Some(1 | 2) if stderr.trim().is_empty() => {
                (Outcome::Silent, "failed without a diagnostic".into())
            }
            Some(1 | 2) => (Outcome::Rejected, first_line(&stderr)),
            Some(code) => (
                Outcome::ExitCode,
                format!("exit {code}: {}", first_line(&stderr)),
            ),
            None => {
                use std::os::unix::process::ExitStatusExt;
                (
                    Outcome::Crash,
                    format!(
                        "killed by signal {:?}: {}",
                        status.signal(),
                        first_line(&stderr)
                    ),
                )
            }
        }
    }
}

/// A little-endian f16 `.npy` of `shape` holding small values.
fn npy_f16(shape: &[u64]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_text = if dims.len() == 1 {
        format!("({},)", dims[0])
    } else {
        format!("({})", dims.join(", "))
    };
    let mut header = format!("{{'descr': '<f2', 'fortran_order': False, 'shape': {shape_text}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&u16::try_from(header.len()).unwrap_or(0).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    let count: u64 = shape.iter().product();
    for i in 0..count {
        // 0.25 * (i % 4), exactly representable: 0, 0x3400, 0x3800, 0x3A00.
        let bits: u16 = [0x0000, 0x3400, 0x3800, 0x3A00][(i % 4) as usize];
        out.extend_from_slice(&bits.to_le_bytes());
    }
    out
}

/// The `.mlir` files under `roots` (recursively), sorted.
pub fn collect_corpus(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = roots.to_vec();
    while let Some(path) = stack.pop() {
        if path.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.filter_map(|e| e.ok().map(|e| e.path())));
            }
        } else if path.extension().is_some_and(|e| e == "mlir") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The directory of the running executable (where `ipu-opt` and `ipu` are built).
pub fn default_bin_dir() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn campaign(work: &Path) -> Campaign {
        Campaign {
            seed: 0,
            cases: 0,
            bin_dir: PathBuf::from("."),
            corpus: Vec::new(),
            work: work.to_path_buf(),
            timeout: Duration::from_millis(500),
            memory: 1 << 30,
            jobs: 1,
            targets: Vec::new(),
        }
    }

    fn sh(script: &str) -> Vec<String> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    /// Each rule of the judge, on commands that break it (and two that keep them).
    #[test]
    fn the_judge_names_each_kind_of_finding() {
        let work = std::env::temp_dir().join(format!("ipu-fuzz-judge-{}", std::process::id()));
        std::fs::create_dir_all(&work).unwrap();
        let given = work.join("given.txt");
        std::fs::write(&given, "input").unwrap();
        let c = campaign(&work);
        let judge = |script: &str| c.judge(&sh(script), std::slice::from_ref(&given)).0;
        assert_eq!(judge("exit 0"), Outcome::Accepted);
        assert_eq!(
            judge("echo 'error: bad input' >&2; exit 1"),
            Outcome::Rejected
        );
        assert_eq!(judge("echo 'usage' >&2; exit 2"), Outcome::Rejected);
        assert_eq!(judge("exit 1"), Outcome::Silent);
        assert_eq!(judge("echo x >&2; exit 3"), Outcome::ExitCode);
        assert_eq!(judge("kill -SEGV $$"), Outcome::Crash);
        assert_eq!(
            judge("echo \"thread 'main' panicked at src/x.rs:1:1\" >&2; exit 101"),
            Outcome::Crash
        );
        assert_eq!(judge("echo 'LLVM ERROR: x' >&2; exit 1"), Outcome::Crash);
        assert_eq!(
            judge("echo 'memory allocation of 8000000000 bytes failed' >&2; kill -ABRT $$"),
            Outcome::Memory
        );
        assert_eq!(judge("sleep 5"), Outcome::Hang);
        assert_eq!(
            judge(&format!("echo changed > {}", given.display())),
            Outcome::Overwrote
        );
        let _ = std::fs::remove_dir_all(&work);
    }

    #[test]
    fn npy_fixtures_have_valid_headers() {
        let bytes = npy_f16(&[4, 32]);
        assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00");
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % 64, 0);
        assert_eq!(bytes.len(), 10 + header_len + 4 * 32 * 2);
        let header = std::str::from_utf8(&bytes[10..10 + header_len]).unwrap();
        assert!(header.contains("'shape': (4, 32)"), "{header}");
        assert!(npy_f16(&[16]).windows(5).any(|w| w == b"(16,)"));
    }
}
