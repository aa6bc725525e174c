//! Bad-input robustness: every `.mlir` file of the lit suite, damaged by seeded byte-level
//! mutations, goes through `ipu-opt`. Whatever the damage, ipu-opt must answer with a diagnostic
//! and exit code 0 or 1: never a panic, a signal, an LLVM fatal error or a hang, and it must never
//! write to its input file.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Fixed so a failure reproduces; each file's generator is this seed mixed with its path.
const SEED: u64 = 0x1b0_2026_0000_0002;
const MUTANTS_PER_FILE: usize = 20;
/// Keeps the whole test to a few tens of seconds as the suite grows (ipu-opt starts in ~50 ms).
const MAX_MUTANTS: usize = 400;
/// Enough failures to see a pattern without burying it.
const MAX_FAILURES_SHOWN: usize = 10;
/// A run longer than this is reported as a hang.
const RUN_TIMEOUT: Duration = Duration::from_secs(20);
/// Text that only a crash prints: Rust panics, LLVM's crash handler and fatal errors.
const CRASH_MARKERS: &[&str] = &[
    "panicked",
    "Stack dump",
    "LLVM ERROR",
    "PLEASE submit a bug report",
];
/// Fragments that steer the parser into interesting states: unbalanced delimiters, SSA and
/// symbol sigils, our dialect's prefix, split markers, expectations and non-ASCII bytes.
const INSERTIONS: &[&[u8]] = &[
    b"}",
    b"{",
    b")",
    b"(",
    b"%",
    b"\"",
    b"ipu.",
    b"ipu_tile.",
    b"<",
    b">",
    b":",
    b",",
    b"@",
    b"#",
    b"!",
    b"^bb0:",
    b"loc(",
    b"-> ",
    b"tensor<",
    b"x0x",
    b"f8E4M3FNUZ",
    b"0x7fffffffffffffff",
    b"-1",
    b"\n// -----\n",
    b"// expected-error@+1 {{",
    b"\0",
    b"\xff\xfe",
    b"\xc3",
];

#[derive(Debug, Clone, Copy)]
enum Mutation {
    FlipByte,
    DeleteSpan,
    DuplicateSpan,
    Insert,
}

#[test]
fn mutated_inputs_never_crash_ipu_opt() {
    let test_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test");
    let mut inputs = Vec::new();
    collect_mlir_files(&test_dir, &mut inputs);
    inputs.sort();
    assert!(
        !inputs.is_empty(),
        "no .mlir files under {}: the mutation test needs the lit suite's inputs to mutate",
        test_dir.display()
    );

    let per_file = MUTANTS_PER_FILE.min(MAX_MUTANTS / inputs.len()).max(1);
    let work_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutation");
    let _ = fs::remove_dir_all(&work_dir);
    fs::create_dir_all(&work_dir).expect("create the mutants' directory");

    let started = Instant::now();
    let mut failures = Vec::new();
    let mut runs = 0usize;
    for input in &inputs {
        let relative = input.strip_prefix(&test_dir).unwrap_or(input);
        let original = fs::read(input).expect("read a test input");
        let split = contains(&original, b"// -----");
        let mut rng =
            ChaCha8Rng::seed_from_u64(SEED ^ fnv1a(relative.to_string_lossy().as_bytes()));
        for mutant_index in 0..per_file {
            let mutant = mutate(&original, &mut rng);
            let stem = relative
                .to_string_lossy()
                .replace(['/', '\\'], "_")
                .trim_end_matches(".mlir")
                .to_string();
            let mutant_path = work_dir.join(format!("{stem}.mutant{mutant_index}.mlir"));
            fs::write(&mutant_path, &mutant).expect("write a mutant");
            runs += 1;
            match check_run(&mutant_path, &mutant, split) {
                Ok(()) => {
                    let _ = fs::remove_file(&mutant_path);
                }
                // Failing mutants stay on disk to reproduce with.
                Err(problem) => failures.push(format!(
                    "{} mutant {mutant_index} (kept at {}): {problem}",
                    relative.display(),
                    mutant_path.display()
                )),
            }
        }
    }
    let elapsed = started.elapsed();
    let shown = failures.len().min(MAX_FAILURES_SHOWN);
    assert!(
        failures.is_empty(),
        "{} of {runs} mutated inputs broke ipu-opt (seed {SEED:#x}, {:.1} s); the first {shown}:\n{}",
        failures.len(),
        elapsed.as_secs_f64(),
        failures[..shown].join("\n")
    );
    eprintln!(
        "{runs} mutants of {} files handled cleanly in {:.1} s",
        inputs.len(),
        elapsed.as_secs_f64()
    );
}

/// Runs ipu-opt on one mutant and says what, if anything, went wrong.
fn check_run(mutant_path: &Path, mutant: &[u8], split: bool) -> Result<(), String> {
    let stderr_path = mutant_path.with_extension("stderr");
    let stderr_file = File::create(&stderr_path).map_err(|e| format!("create stderr file: {e}"))?;
    let mut command = Command::new(env!("CARGO_BIN_EXE_ipu-opt"));
    command.arg(mutant_path);
    if split {
        command.arg("--split-input-file");
    }
    // stderr goes to a file, not a pipe, so a chatty run cannot block on a full pipe.
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr_file))
        .spawn()
        .map_err(|e| format!("cannot start ipu-opt: {e}"))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > RUN_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {RUN_TIMEOUT:?} (hang)"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(format!("waiting for ipu-opt: {e}")),
        }
    };
    let stderr = fs::read(&stderr_path).unwrap_or_default();
    let _ = fs::remove_file(&stderr_path);
    let stderr = String::from_utf8_lossy(&stderr);

    let mut problems = Vec::new();
    match status.code() {
        Some(0) | Some(1) => {}
        Some(code) => problems.push(format!("exit code {code}")),
        None => problems.push(format!("killed by a signal ({status})")),
    }
    if let Some(marker) = CRASH_MARKERS.iter().find(|marker| stderr.contains(*marker)) {
        problems.push(format!("stderr contains {marker:?}"));
    }
    match fs::read(mutant_path) {
        Ok(after) if after == mutant => {}
        Ok(_) => problems.push("the input file was modified".to_string()),
        Err(e) => problems.push(format!("the input file is gone: {e}")),
    }
    if problems.is_empty() {
        Ok(())
    } else {
        let excerpt: String = stderr.chars().take(600).collect();
        Err(format!("{}; stderr:\n{excerpt}", problems.join(", ")))
    }
}

/// Applies one to three seeded mutations.
fn mutate(original: &[u8], rng: &mut ChaCha8Rng) -> Vec<u8> {
    let mut bytes = original.to_vec();
    let count = rng.random_range(1..=3);
    for _ in 0..count {
        let mutation = match rng.random_range(0..4) {
            0 => Mutation::FlipByte,
            1 => Mutation::DeleteSpan,
            2 => Mutation::DuplicateSpan,
            _ => Mutation::Insert,
        };
        apply(&mut bytes, mutation, rng);
    }
    bytes
}

fn apply(bytes: &mut Vec<u8>, mutation: Mutation, rng: &mut ChaCha8Rng) {
    if bytes.is_empty() {
        let insertion = INSERTIONS[rng.random_range(0..INSERTIONS.len())];
        bytes.extend_from_slice(insertion);
        return;
    }
    let at = rng.random_range(0..bytes.len());
    let span = rng.random_range(1..=32usize).min(bytes.len() - at);
    match mutation {
        Mutation::FlipByte => bytes[at] ^= 1u8 << rng.random_range(0..8),
        Mutation::DeleteSpan => {
            bytes.drain(at..at + span);
        }
        Mutation::DuplicateSpan => {
            let copy = bytes[at..at + span].to_vec();
            bytes.splice(at + span..at + span, copy);
        }
        Mutation::Insert => {
            let insertion = INSERTIONS[rng.random_range(0..INSERTIONS.len())];
            bytes.splice(at..at, insertion.iter().copied());
        }
    }
}

fn collect_mlir_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // lit's per-test scratch directories hold outputs, not inputs.
            if path.file_name().is_some_and(|name| name == "Output") {
                continue;
            }
            collect_mlir_files(&path, files);
        } else if path
            .extension()
            .is_some_and(|extension| extension == "mlir")
        {
            files.push(path);
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle)
}

/// Stable across platforms and Rust versions, unlike `DefaultHasher`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
