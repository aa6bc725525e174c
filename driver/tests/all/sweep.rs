//! `ipu sweep` end to end on examples/mlp_small.mlir: 2 tile counts x 2 precisions and a
//! pinned grid no lowering builds, run as `ipu run` processes two at a time. Checks the
//! results (JSON lines and CSV), the failed point's diagnostic, the Pareto plot, resuming
//! (a second run does no work), a point stopped by `--timeout`, and bad sweep files (exit 2).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const IPU: &str = env!("CARGO_BIN_EXE_ipu");
const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/mlp_small.mlir");

const SWEEP: &str = r#"
[product]
tiles = [32, 64]
precision = ["f16", "fp8"]

[[point]]
tiles = 64
constraints = { name = "impossible-grid", ops = [{ op = 0, params = { grid = [1, 64, 64, 1] } }] }
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("sweep")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn ipu(dir: &Path, args: &[&str]) -> Output {
    Command::new(IPU)
        .args(args)
        .current_dir(dir)
        .env(
            "IPU_KERNEL_CACHE",
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-kernel-cache"),
        )
        .output()
        .expect("the ipu binary starts")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn expect_exit(output: &Output, code: i32, what: &str) -> (String, String) {
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    (stdout, stderr)
}

fn records(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("results.jsonl")
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is one JSON object"))
        .collect()
}

#[test]
fn sweep_records_points_failures_plot_and_resumes() {
    let dir = scratch("mlp");
    std::fs::write(dir.join("sweep.toml"), SWEEP).expect("sweep file");
    let args = [
        "sweep",
        MODEL,
        "--sweep",
        "sweep.toml",
        "--out",
        "out",
        "--jobs",
        "2",
    ];
    let (stdout, stderr) = expect_exit(&ipu(&dir, &args), 0, "the sweep runs");
    assert!(
        stdout.contains("5 points, 0 already done, 5 to run"),
        "{stdout}"
    );
    assert!(stdout.contains("4 ok, 1 failed"), "{stdout}");
    assert!(stdout.contains("best 4 of 4 ok points"), "{stdout}");
    assert!(
        stderr.contains("[5/5] "),
        "plain progress lines off a terminal: {stderr}"
    );

    let results = records(&dir.join("out/results.jsonl"));
    assert_eq!(results.len(), 5);
    let ok: Vec<&serde_json::Value> = results.iter().filter(|r| r["status"] == "ok").collect();
    assert_eq!(ok.len(), 4);
    for record in &ok {
        let cycles = record["device_program_cycles"]
            .as_u64()
            .expect("simulated cycles");
        assert!(cycles > 0);
        assert!(record["refined_cycles"].as_u64().is_some(), "{record}");
        assert!(record["final_cycles"].as_u64().is_some(), "{record}");
        let total = record["peak_total_bytes"].as_u64().expect("peak memory");
        let standard = record["peak_standard_bytes"].as_u64().expect("standard");
        let interleaved = record["peak_interleaved_bytes"]
            .as_u64()
            .expect("interleaved");
        // Each class's peak, and the peak of both together (not at the same op).
        assert!(total <= standard + interleaved, "{record}");
        assert!(total >= standard.max(interleaved) && total > 0, "{record}");
        assert!(record["compile_seconds"].as_f64().is_some(), "{record}");
        assert_eq!(record["numerical"], "PASS");
        assert!(record["max_abs_error"].as_f64().is_some());
        let plans = record["plans"]["ops"]
            .as_array()
            .expect("the selected plans");
        assert_eq!(plans.len(), 5, "one plan per op of the MLP");
        assert_eq!(plans[0]["params"]["tiles"], record["params"]["tiles"]);
    }
    let precisions: Vec<&str> = ok
        .iter()
        .filter_map(|r| r["params"]["precision"].as_str())
        .collect();
    assert_eq!(precisions.iter().filter(|p| **p == "fp8").count(), 2);
    let failed = results
        .iter()
        .find(|r| r["status"] == "failed")
        .expect("the pinned grid fails");
    assert_eq!(failed["params"]["constraints"]["name"], "impossible-grid");
    let diagnostic = failed["diagnostic"].as_str().expect("a diagnostic");
    assert!(
        diagnostic.contains("no candidate satisfies the constraint on op 0"),
        "{diagnostic}"
    );
    assert!(failed["device_program_cycles"].is_null());

    let csv = std::fs::read_to_string(dir.join("out/results.csv")).expect("results.csv");
    let mut lines = csv.lines();
    let header = lines.next().expect("a header");
    assert!(header.starts_with("id,status,tiles,precision,"), "{header}");
    assert!(header.contains("device_program_cycles") && header.contains("peak_total_bytes"));
    assert_eq!(csv.matches(",ok,").count(), 4, "{csv}");
    assert_eq!(csv.matches(",failed,").count(), 1, "{csv}");

    let svg = std::fs::read_to_string(dir.join("out/pareto.svg")).expect("pareto.svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    let front = svg.matches(r#"class="front""#).count();
    let rest = svg.matches(r#"class="point""#).count();
    assert_eq!(front + rest, 4, "every ok point is plotted");
    assert!(front >= 1);

    // Rerunning the same command does no new work.
    let (stdout, stderr) = expect_exit(&ipu(&dir, &args), 0, "the sweep resumes");
    assert!(
        stdout.contains("all 5 points already done"),
        "{stdout}\n{stderr}"
    );
    assert!(!stderr.contains("[1/"), "no point runs again: {stderr}");
    assert_eq!(records(&dir.join("out/results.jsonl")).len(), 5);
    // Flags extend the sweep; only the new point runs.
    let more = [
        "sweep",
        MODEL,
        "--sweep",
        "sweep.toml",
        "--out",
        "out",
        "--tiles",
        "32,64,16",
        "--precision",
        "f16",
    ];
    let (stdout, _) = expect_exit(&ipu(&dir, &more), 0, "a wider sweep");
    assert!(
        stdout.contains("4 points, 3 already done, 1 to run"),
        "{stdout}"
    );
}

#[test]
fn a_point_past_its_timeout_is_recorded_as_failed() {
    let dir = scratch("timeout");
    let args = [
        "sweep",
        MODEL,
        "--tiles",
        "64",
        "--out",
        "out",
        "--timeout",
        "0.001",
    ];
    let (stdout, _) = expect_exit(&ipu(&dir, &args), 0, "a sweep with a timed-out point");
    assert!(stdout.contains("0 ok, 1 failed"), "{stdout}");
    let results = records(&dir.join("out/results.jsonl"));
    assert_eq!(results.len(), 1);
    let diagnostic = results[0]["diagnostic"].as_str().expect("a diagnostic");
    assert!(diagnostic.contains("timed out"), "{diagnostic}");
}

#[test]
fn bad_sweep_input_is_a_usage_error() {
    let dir = scratch("bad");
    let cases: [(&str, &str, &str); 4] = [
        (
            "unknown.toml",
            "[product]\ntiles = [64]\nbeams = [2]\n",
            "unknown field `beams`",
        ),
        ("malformed.toml", "[product]\ntiles = [64\n", "line 2"),
        ("empty.toml", "# nothing\n", "the sweep is empty"),
        (
            "axis.json",
            r#"{"product": {"tiles": []}}"#,
            "axis 'tiles' is empty",
        ),
    ];
    for (name, content, expected) in cases {
        std::fs::write(dir.join(name), content).expect("sweep file");
        let output = ipu(&dir, &["sweep", MODEL, "--sweep", name, "--out", "out"]);
        let (_, stderr) = expect_exit(&output, 2, name);
        assert!(
            stderr.contains(name) && stderr.contains(expected),
            "{name}: {stderr}"
        );
    }
    let output = ipu(&dir, &["sweep", MODEL, "--out", "out"]);
    let (_, stderr) = expect_exit(&output, 2, "no axes");
    assert!(stderr.contains("nothing to sweep"), "{stderr}");
    let output = ipu(&dir, &["sweep", MODEL, "--sweep", "missing.toml"]);
    let (_, stderr) = expect_exit(&output, 2, "a missing sweep file");
    assert!(stderr.contains("missing.toml"), "{stderr}");
    assert!(!dir.join("out").exists(), "nothing was written");
}
