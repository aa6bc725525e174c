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
    let output = chromium(&dir, &page, &["--dump-dom".to_string()]);
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

/// A package whose exchange the simulator refuses (tile 0 receives from every other tile in
/// the same slot) fails the hardware test: the final line says so and the exit code is 1.
#[test]
fn a_hazard_fails_the_hardware_test() {
    use ipu_device::image::{ExchangePhase, Step, Transfer};

    let dir = scratch("hazard");
    package_and_inputs(&dir);
    let mut package = fixture::package();
    let base = ipu_device::Target::c600().memory.sram_base.value;
    let row_bytes = fixture::COLS * 4;
    // Every other tile sends to tile 0 at slot 0: tile 0 would receive them all at once.
    let transfers: Vec<Transfer> = (1..fixture::TILES)
        .map(|tile| Transfer {
            source_tile: tile,
            source_address: base + 0xC000,
            destinations: vec![0],
            destination_address: base + 0x10000 + (tile - 1) * row_bytes,
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
        text(&output.stderr).contains("tile 0 receives from tiles"),
        "{}",
        text(&output.stderr)
    );
}

/// The repository's `artifacts/` directory (git-ignored): where the browser tests leave their
/// screenshots for people to look at.
fn artifacts(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the driver crate lies in the repository")
        .join("artifacts")
        .join(name);
    std::fs::create_dir_all(&dir).expect("artifacts directory");
    dir
}

/// Headless Chromium with the flags of the report test; `extra` adds the action
/// (`--dump-dom`, `--screenshot=...`).
fn chromium(dir: &Path, page: &Path, extra: &[String]) -> Output {
    Command::new(CHROMIUM)
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
            "--virtual-time-budget=10000",
            "--hide-scrollbars",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.join("chromium-profile").display()
        ))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts")
}

/// The value of `attribute` on the element whose start tag contains `marker`, from a DOM dump.
fn attribute_of(dom: &str, marker: &str, attribute: &str) -> Option<String> {
    let at = dom.find(marker)?;
    let tag_start = dom[..at].rfind('<')?;
    let tag_end = at + dom[at..].find('>')?;
    let tag = &dom[tag_start..tag_end];
    let key = format!("{attribute}=\"");
    let value_start = tag.find(&key)? + key.len();
    let value_end = value_start + tag[value_start..].find('"')?;
    Some(tag[value_start..value_end].to_string())
}

/// The report's views on a real profile: the SigLIP MLP compiled for and run on all 1472
/// tiles of the C600. Headless Chromium renders the page; the DOM it leaves says that the
/// script finished, that the heat maps are not one colour (the colours are read back from the
/// canvases' pixels), that the timeline has a row for every one of the 1472 tiles and drew
/// compute on exactly the tiles that ran kernels, and that the roofline puts the matmuls well
/// below the kernel model's ~100 %. Screenshots of the report and of a comparison page go to
/// `artifacts/profile-report/`.
#[test]
fn report_views_of_the_siglip_mlp_render_in_headless_chromium() {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is missing: run scripts/setup.sh (it installs the Debian chromium package)"
    );
    let dir = scratch("siglip-report");
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("examples/siglip_mlp.mlir");
    let model = model.to_str().unwrap();
    assert_exit(
        &ipu(&dir, &["run", model, "--artifacts", "a"]),
        0,
        "ipu run siglip_mlp",
    );
    assert_exit(
        &ipu(
            &dir,
            &["run", model, "--precision", "fp8", "--artifacts", "b"],
        ),
        0,
        "ipu run siglip_mlp --precision fp8",
    );
    let profile_path = dir.join("a/siglip_mlp/profile-final.ipuprof");
    let profile = ipu_runtime::ProfileFile::read(&profile_path).expect("the profile reads");
    let run = &profile.runs[0];
    assert_eq!(profile.tiles, 1472);

    // The roofline of each matmul: its FLOPs at the F16 AMP peak over the tiles it uses, well
    // below what was achieved, while the kernel-model column stays near the achieved cycles.
    let target = ipu_device::Target::c600();
    for op in run.ops.iter().filter(|o| !o.provenance.contains('.')) {
        if op.op.as_deref() != Some("ipu.matmul") {
            continue;
        }
        let r = &op.roofline;
        let per_tile_cycle = 2 * u64::from(target.amp.macs_per_cycle_f16.value);
        assert_eq!(
            r.compute_bound_cycles,
            r.amp_flops.div_ceil(per_tile_cycle * u64::from(r.tiles)),
            "{}",
            op.provenance
        );
        let percent = op.roofline_percent();
        assert!(
            (40.0..90.0).contains(&percent),
            "{}: roofline / achieved {percent:.1} %",
            op.provenance
        );
        let model = op.kernel_model_cycles as f64 / op.achieved_cycles as f64 * 100.0;
        assert!(
            model > percent,
            "{}: kernel model {model:.1} %",
            op.provenance
        );
    }

    let report = ipu(
        &dir,
        &[
            "profile",
            "report",
            "a/siglip_mlp/profile-final.ipuprof",
            "-o",
            "report.html",
        ],
    );
    assert_exit(&report, 0, "profile report");
    let page = dir.join("report.html");
    let size = std::fs::metadata(&page).unwrap().len();
    assert!(size < 4 << 20, "the report is {size} bytes");

    let output = chromium(&dir, &page, &["--dump-dom".to_string()]);
    let dom = text(&output.stdout);
    let log = text(&output.stderr);
    assert!(
        dom.contains("data-report-status=\"ready\""),
        "the report's script did not finish:\n{}\n{log}",
        dom.lines()
            .filter(|l| l.contains("report-errors") || l.contains("<body"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(!log.contains("Uncaught"), "console errors:\n{log}");
    for map in ["data-heat=\"memory\"", "data-heat=\"compute-0\""] {
        let colours: u32 = attribute_of(&dom, map, "data-heat-colours")
            .unwrap_or_else(|| panic!("{map}: no colour count"))
            .parse()
            .unwrap();
        assert!(colours > 1, "{map}: the heat map is one colour");
    }
    assert_eq!(
        attribute_of(&dom, "id=\"timeline\"", "data-timeline-rows").as_deref(),
        Some("1472"),
        "the timeline has not a row per tile"
    );
    let busy = run.tile_totals.iter().filter(|t| t.kernel_runs > 0).count();
    assert_eq!(
        attribute_of(&dom, "id=\"timeline\"", "data-timeline-busy-rows"),
        Some(busy.to_string()),
        "the timeline drew compute on other tiles than those that ran kernels"
    );
    assert!(dom.contains("data-grid-cells=\"1472\""));
    assert!(dom.contains("<svg class=\"liveness\" data-buffers=\""));

    // Screenshots for people: the report, and the comparison of F16 and FP8 AMP inputs.
    let shots = artifacts("profile-report");
    let shot = shots.join("siglip-report.png");
    let _ = std::fs::remove_file(&shot);
    let output = chromium(
        &dir,
        &page,
        &[
            "--window-size=1500,4300".to_string(),
            format!("--screenshot={}", shot.display()),
        ],
    );
    let png =
        std::fs::read(&shot).unwrap_or_else(|_| panic!("no screenshot: {}", text(&output.stderr)));
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 50_000);

    let compare = ipu(
        &dir,
        &[
            "profile",
            "compare",
            "a/siglip_mlp/profile-final.ipuprof",
            "b/siglip_mlp/profile-final.ipuprof",
            "-o",
            "compare.html",
        ],
    );
    assert_exit(&compare, 0, "profile compare");
    let compare_page = dir.join("compare.html");
    let dom = text(&chromium(&dir, &compare_page, &["--dump-dom".to_string()]).stdout);
    assert!(
        dom.contains("data-report-status=\"ready\""),
        "comparison page"
    );
    assert!(dom.contains("<tr data-op=\"op0\"><td>ipu.matmul op0</td>"));
    let shot = shots.join("siglip-compare.png");
    let _ = std::fs::remove_file(&shot);
    chromium(
        &dir,
        &compare_page,
        &[
            "--window-size=1300,2000".to_string(),
            format!("--screenshot={}", shot.display()),
        ],
    );
    assert!(shot.is_file(), "no comparison screenshot");
}
