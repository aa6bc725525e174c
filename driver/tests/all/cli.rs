//! The `ipu` binary end to end on a hand-built package (the runtime tests' `y = roll(x + b)`
//! fixture over four tiles of the C600), with the real kernel compiler behind the session:
//! `run` with its artifacts and final lines, `inspect`, `profile report|trace|query`, the exit
//! codes of each failure, and the HTML report rendered by headless Chromium.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ipu_runtime::npy::{NpyDtype, Tensor};
use ipu_runtime::Package;

#[path = "../../../runtime/tests/all/fixture.rs"]
#[allow(dead_code)]
mod fixture;

const IPU: &str = env!("CARGO_BIN_EXE_ipu");
const CHROMIUM: &str = "/usr/bin/chromium";

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("cli")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// Runs `ipu` in `dir` with a kernel cache shared by the tests.
fn ipu(dir: &Path, args: &[&str]) -> Output {
    Command::new(IPU)
        .args(args)
        .current_dir(dir)
        .env(
            "IPU_KERNEL_CACHE",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-kernel-cache"),
        )
        .env("RUST_LOG", "info")
        .output()
        .expect("the ipu binary starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_exit(output: &Output, code: i32, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// Writes the fixture package and its input `x` into `dir`.
fn package_and_inputs(dir: &Path) {
    fixture::package()
        .write(&dir.join("model.ipuexe"))
        .expect("fixture package writes");
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).expect("inputs directory");
    Tensor::new(
        vec![u64::from(fixture::TILES), u64::from(fixture::COLS)],
        fixture::input(),
    )
    .expect("tensor")
    .write(&inputs.join("x.npy"), NpyDtype::F32)
    .expect("x.npy");
}

/// `ipu run model.ipuexe` in `dir`; returns its output.
fn run_fixture(dir: &Path) -> Output {
    package_and_inputs(dir);
    let output = ipu(
        dir,
        &[
            "run",
            "model.ipuexe",
            "--inputs",
            "inputs",
            "--outputs",
            "outputs",
        ],
    );
    assert_exit(&output, 0, "ipu run");
    output
}

#[test]
fn run_writes_artifacts_and_ends_like_the_seed() {
    let dir = scratch("run");
    let output = run_fixture(&dir);
    let stdout = text(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 4, "final lines:\n{stdout}");
    // A package run reports the simulated cycles split into device program and host exchange.
    assert!(
        lines[1].starts_with("simulatedCycles=") && lines[1].contains(" hostExchangeCycles="),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], "numericalTest=SKIPPED (no reference)");
    assert_eq!(
        lines[3],
        "package=artifacts/model/model-final.ipuexe tiles=1472 hardwareTest=PASS"
    );
    assert!(
        lines[0].starts_with("profile=artifacts/model/profile-final.ipuprof tiles=1472 samples=")
    );
    let stderr = text(&output.stderr);
    for line in [
        "application package written",
        "application package read tiles=1472",
        "acquired hardware ownership path=artifacts/sim-c600/device.lock",
        "opening IPU device path=\"sim:c600\"",
        "replaying device configuration register_writes=1",
        "loading application tile_count=1472 final_mark=23",
        "attaching host exchange pages pages=2",
        "invoking streaming host exchange call call=\"initialize\" command=0",
        "invoking streaming host exchange call call=\"run\" command=0",
    ] {
        assert!(
            stderr.contains(line),
            "missing log line '{line}' in:\n{stderr}"
        );
    }
    let y = Tensor::read(&dir.join("outputs").join("y.npy")).expect("y.npy written");
    assert_eq!(y.data, fixture::expected_output());
    let package = Package::read(&dir.join("artifacts/model/model-final.ipuexe"))
        .expect("the artifact package reads");
    assert_eq!(package.name, "add-roll");
    assert!(dir.join("artifacts/model/profile-final.ipuprof").is_file());
}

#[test]
fn run_refuses_bad_inputs_with_exit_2() {
    let dir = scratch("run-errors");
    package_and_inputs(&dir);
    let cases: &[(&[&str], &str)] = &[
        (&["run", "missing.ipuexe"], "no such file"),
        (&["run", "model.ipuexe", "--device", "sim:nope"], "sim:nope"),
        (
            &["run", "model.ipuexe", "--device", "/dev/ipu0"],
            "no IPU hardware driver",
        ),
        (
            &["run", "model.ipuexe", "--inputs", "nowhere"],
            "not a directory",
        ),
        (
            &["run", "model.ipuexe", "--config", "missing.cfg"],
            "missing.cfg",
        ),
        (
            &["run", "model.ipuexe", "--name", "../up"],
            "one path component",
        ),
        (
            &["run", "model.ipuexe", "--no-such-option"],
            "--no-such-option",
        ),
        (&["frobnicate"], "frobnicate"),
        (&[], "Usage"),
    ];
    for (args, message) in cases {
        let output = ipu(&dir, args);
        assert_exit(&output, 2, &format!("ipu {}", args.join(" ")));
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(message),
            "ipu {args:?}: '{message}' not in:\n{stderr}"
        );
    }
    // A package built for another target loads nowhere else: a usage error, not a failed run.
    let output = ipu(&dir, &["run", "model.ipuexe", "--device", "sim:bow"]);
    assert_exit(&output, 2, "c600 package on sim:bow");
}

#[test]
fn corrupt_and_truncated_packages_are_input_errors() {
    let dir = scratch("corrupt");
    let bytes = fixture::package().to_bytes().expect("package bytes");
    let mut flipped = bytes.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    std::fs::write(dir.join("flipped.ipuexe"), &flipped).unwrap();
    std::fs::write(dir.join("truncated.ipuexe"), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(dir.join("text.ipuexe"), "not a package\n").unwrap();
    for file in ["flipped.ipuexe", "truncated.ipuexe", "text.ipuexe"] {
        for command in ["run", "inspect"] {
            let output = ipu(&dir, &[command, file]);
            assert_exit(&output, 2, &format!("ipu {command} {file}"));
            let stderr = text(&output.stderr);
            assert!(stderr.contains(&format!("'{file}'")), "{stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
    std::fs::write(dir.join("bad.ipuprof"), &bytes).unwrap();
    let output = ipu(
        &dir,
        &["profile", "query", "bad.ipuprof", "--group-by", "op"],
    );
    assert_exit(&output, 2, "a package given as a profile");
}

/// A model that does not exist is a usage error (exit 2) naming the file.
#[test]
fn compile_of_a_missing_model_is_a_usage_error() {
    let dir = scratch("compile-missing");
    let output = ipu(&dir, &["compile", "absent.mlir", "-o", "x.ipuexe"]);
    assert_exit(&output, 2, "compile of a missing file");
    assert!(text(&output.stderr).contains("absent.mlir"));
    assert!(!dir.join("x.ipuexe").exists());
}

#[test]
fn inspect_views_and_a_tile_out_of_range() {
    let dir = scratch("inspect");
    package_and_inputs(&dir);
    let summary = ipu(&dir, &["inspect", "model.ipuexe"]);
    assert_exit(&summary, 0, "inspect");
    assert!(text(&summary.stdout).starts_with("package add-roll"));
    let bindings = ipu(&dir, &["inspect", "model.ipuexe", "--bindings"]);
    assert_exit(&bindings, 0, "inspect --bindings");
    assert!(text(&bindings.stdout).contains('x'));
    let tile = ipu(&dir, &["inspect", "model.ipuexe", "--tile", "1"]);
    assert_exit(&tile, 0, "inspect --tile 1");
    let outside = ipu(&dir, &["inspect", "model.ipuexe", "--tile", "5000"]);
    assert_exit(&outside, 2, "inspect --tile 5000");
    assert!(text(&outside.stderr).contains("tile 5000 is out of range"));
}

#[test]
fn profile_report_trace_and_query() {
    let dir = scratch("profile");
    run_fixture(&dir);
    let profile = "artifacts/model/profile-final.ipuprof";
    let report = ipu(
        &dir,
        &[
            "profile",
            "report",
            profile,
            "-o",
            "report.html",
            "--package",
            "artifacts/model/model-final.ipuexe",
        ],
    );
    assert_exit(&report, 0, "profile report");
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("data-rows=\"23\" data-columns=\"64\""));

    let trace = ipu(&dir, &["profile", "trace", profile, "-o", "trace.json"]);
    assert_exit(&trace, 0, "profile trace");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("trace.json")).unwrap()).unwrap();
    assert!(json.get("traceEvents").is_some_and(|e| e.is_array()));

    for group in ["kernel", "op", "tile", "phase"] {
        let table = ipu(&dir, &["profile", "query", profile, "--group-by", group]);
        assert_exit(&table, 0, &format!("query --group-by {group}"));
        assert!(text(&table.stdout).starts_with("group"));
        let json = ipu(
            &dir,
            &[
                "profile",
                "query",
                profile,
                "--group-by",
                group,
                "--sort",
                "name",
                "--json",
            ],
        );
        assert_exit(&json, 0, &format!("query --group-by {group} --json"));
        let rows: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert!(!rows.as_array().unwrap().is_empty(), "{group}: no rows");
    }
    let op = ipu(
        &dir,
        &["profile", "query", profile, "--group-by", "op", "--json"],
    );
    assert!(text(&op.stdout).contains("model.mlir"));
    let bad = ipu(&dir, &["profile", "query", profile, "--group-by", "colour"]);
    assert_exit(&bad, 2, "query --group-by colour");
}

/// The report renders in headless Chromium: its script ran to the end without an error and the
/// 23 x 64 tile grid is in the page. Chromium comes from scripts/setup.sh; without it this
/// test fails, since a report nobody can open is the failure it guards against.
#[test]
fn report_renders_in_headless_chromium() {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: run scripts/setup.sh (it installs the Debian chromium package)"
    );
    let dir = scratch("chromium");
    run_fixture(&dir);
    let report = ipu(
        &dir,
        &[
            "profile",
            "report",
            "artifacts/model/profile-final.ipuprof",
            "-o",
            "report.html",
            "--package",
            "artifacts/model/model-final.ipuexe",
        ],
    );
    assert_exit(&report, 0, "profile report");
    let page = dir.join("report.html");
    let profile_dir = dir.join("chromium-profile");
    let output = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile_dir.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    let dom = text(&output.stdout);
    let log = text(&output.stderr);
    assert!(
        dom.contains("data-report-status=\"ready\""),
        "the report's script did not finish:\n{}\nchromium log:\n{log}",
        dom.lines()
            .filter(|l| l.contains("report-errors") || l.contains("<body"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        dom.contains("<pre id=\"report-errors\" hidden=\"\"></pre>"),
        "script errors in the page"
    );
    assert!(!log.contains("Uncaught"), "console errors:\n{log}");
    assert!(
        dom.contains("data-grid-cells=\"1472\""),
        "the grid has not 1472 cells"
    );
    assert!(dom.contains("data-rows=\"23\" data-columns=\"64\""));
}

/// A package that ships the compiled Add kernel for this host runs on an empty kernel cache
/// without compiling: `ipu run` installs the packaged object first.
#[test]
fn packaged_kernel_objects_are_installed_instead_of_compiled() {
    use ipu_device::kernels::KernelCache;
    use ipu_runtime::package::KernelObject;

    let dir = scratch("installed-objects");
    let builder = KernelCache::new(dir.join("build-cache"));
    let mut package = fixture::package();
    let add = package.image.kernels[0].clone();
    let entry = builder.ensure(&add).expect("the add kernel compiles");
    package
        .embed_object(0, KernelObject::from_cache_entry(&entry).expect("object"))
        .expect("embed");
    package_and_inputs(&dir);
    package
        .write(&dir.join("model.ipuexe"))
        .expect("package writes");
    let fresh = dir.join("fresh-cache");
    let output = Command::new(IPU)
        .args([
            "run",
            "model.ipuexe",
            "--inputs",
            "inputs",
            "--outputs",
            "outputs",
        ])
        .current_dir(&dir)
        .env("IPU_KERNEL_CACHE", &fresh)
        .env("RUST_LOG", "info")
        .output()
        .expect("the ipu binary starts");
    assert_exit(&output, 0, "ipu run with a packaged object");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("installing packaged kernel object"),
        "{stderr}"
    );
    assert!(!stderr.contains("compiling kernel"), "{stderr}");
    assert!(fresh.join(&entry.metadata.key).join("kernel.so").is_file());
    let y = Tensor::read(&dir.join("outputs").join("y.npy")).expect("y.npy");
    assert_eq!(y.data, fixture::expected_output());
}

/// While another process owns the device, `ipu run` waits; with --lock-timeout it gives up
/// as a failed run (exit 1) naming the lock, and runs once ownership is free.
#[test]
fn run_waits_for_device_ownership() {
    use ipu_runtime::DeviceLock;
    use std::time::Duration;

    let dir = scratch("ownership");
    package_and_inputs(&dir);
    let lock_path = DeviceLock::path_in(&dir.join("artifacts").join("sim-c600"));
    let held = DeviceLock::acquire(&lock_path, Some(Duration::from_secs(5))).expect("lock");
    let args = [
        "run",
        "model.ipuexe",
        "--inputs",
        "inputs",
        "--lock-timeout",
        "0.3",
    ];
    let output = ipu(&dir, &args);
    assert_exit(&output, 1, "ipu run while the device is owned");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("waiting for hardware ownership path=artifacts/sim-c600/device.lock"),
        "{stderr}"
    );
    assert!(stderr.contains("is still held by"), "{stderr}");
    drop(held);
    assert_exit(&ipu(&dir, &args), 0, "ipu run after ownership is released");
}

/// A package whose exchange the simulator refuses (tiles 0 and 2 share a send bus and send in
/// the same slot) fails the hardware test: the final line says so and the exit code is 1.
#[test]
fn a_hazard_fails_the_hardware_test() {
    use ipu_device::image::{ExchangePhase, Step, Transfer};

    let dir = scratch("hazard");
    package_and_inputs(&dir);
    let mut package = fixture::package();
    let base = ipu_device::Target::c600().memory.sram_base.value;
    let row_bytes = fixture::COLS * 4;
    let transfers: Vec<Transfer> = (0..fixture::TILES)
        .map(|tile| Transfer {
            source_tile: tile,
            source_address: base + 0xC000,
            destinations: vec![(tile + 1) % fixture::TILES],
            destination_address: base + 0x10000,
            bytes: row_bytes,
            slot: 0,
        })
        .collect();
    let run = package
        .image
        .programs
        .iter_mut()
        .find(|p| p.name == "run")
        .expect("run program");
    for step in &mut run.steps {
        if let Step::Exchange(phase) = step {
            *phase = ExchangePhase::from_transfers(0, &transfers);
        }
    }
    package
        .write(&dir.join("model.ipuexe"))
        .expect("the package itself is well formed");
    let output = ipu(&dir, &["run", "model.ipuexe", "--inputs", "inputs"]);
    assert_exit(&output, 1, "ipu run of a hazardous package");
    assert_eq!(
        text(&output.stdout).trim_end(),
        "package=artifacts/model/model-final.ipuexe tiles=1472 hardwareTest=FAIL"
    );
    assert!(
        text(&output.stderr).contains("send bus"),
        "{}",
        text(&output.stderr)
    );
}
