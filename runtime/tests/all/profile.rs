//! The profile's derived views: per-tile samples, per-op cycles, the Chrome trace.

use ipu_device::{KernelSpec, Precision, Target};
use ipu_runtime::profile::{peak_cycles, StepKind};
use ipu_runtime::trace::chrome_trace;

use crate::fixture;

#[test]
fn ideal_cycles_fall_back_to_the_kernel_models_at_peak() {
    let mut package = fixture::package();
    package.profile_plan.ops.clear();
    let profile = fixture::profile(&package);
    let op = &profile.runs[0].ops[0];
    assert_eq!(op.op, None);
    assert_eq!(op.estimated_cycles, None);
    // 4 adds of 8 f32 elements at 8 per cycle, spread over 1472 tiles, rounded up.
    assert_eq!(op.ideal_cycles, 1);
    assert!(op.achieved_cycles > op.ideal_cycles);

    let target = Target::c600();
    let gemm = KernelSpec::Gemm {
        input: Precision::F8E4M3,
        partials: Precision::F16,
        weights: ipu_device::MemoryClass::Interleaved,
        k: 32,
        c: 64,
        rows: vec![32, 34],
        accumulate: false,
    };
    // Row entry 1 (34 rows): 34 * 32 * 64 MACs at 128 per cycle.
    assert_eq!(
        peak_cycles(&gemm, &[0, 0, 0, 1, 0, 0], &target),
        34 * 32 * 64 / 128
    );
}

#[test]
fn tiles_without_kernels_still_see_the_global_steps() {
    let package = fixture::package();
    let profile = fixture::profile(&package);
    let run = &profile.runs[0];
    let idle = run.tile_samples(1000, &profile.kernels);
    let kinds: Vec<_> = idle.iter().map(|s| s.kind).collect();
    assert_eq!(
        kinds,
        [StepKind::HostWrite, StepKind::Exchange, StepKind::HostRead]
    );
    assert!(idle.iter().all(|s| s.kernel.is_none()));
    assert_eq!(run.tile_totals.len(), 1472);
    assert_eq!(run.tile_totals[0].kernel_runs, 1);
    assert_eq!(run.tile_totals[1000].kernel_runs, 0);
}

#[test]
fn chrome_trace_has_one_event_per_kernel_run_and_global_step() {
    let profile = fixture::profile(&fixture::package());
    let trace = chrome_trace(&profile);
    let text = serde_json::to_string(&trace).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = parsed["traceEvents"].as_array().unwrap();
    let complete: Vec<_> = events.iter().filter(|e| e["ph"] == "X").collect();
    let compute = complete.iter().filter(|e| e["cat"] == "compute").count();
    assert_eq!(compute, 4);
    assert_eq!(complete.len(), 4 + 3);
    assert!(complete.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.0));
    let add = complete.iter().find(|e| e["cat"] == "compute").unwrap();
    assert_eq!(add["name"], "add_f32_r1_c8_b1");
    assert_eq!(add["args"]["op"], fixture::ADD_LOCATION);
    assert!(complete.iter().any(|e| e["name"] == "exchange phase 0"));
    assert!(complete.iter().any(|e| e["name"] == "host-read y"));
    // Deterministic.
    assert_eq!(
        text,
        serde_json::to_string(&chrome_trace(&profile)).unwrap()
    );
}

#[test]
fn queries_group_kernel_runs_and_phases() {
    use ipu_runtime::query::{query, table, GroupBy, SortBy};
    let profile = fixture::profile(&fixture::package());
    let by_kernel = query(&profile, GroupBy::Kernel, SortBy::Cycles, None);
    assert_eq!(by_kernel.len(), 1);
    assert_eq!(by_kernel[0].group, "add_f32_r1_c8_b1");
    assert_eq!(by_kernel[0].count, 4);
    let by_op = query(&profile, GroupBy::Op, SortBy::Name, None);
    assert_eq!(by_op[0].group, fixture::ADD_LOCATION);
    assert_eq!(by_op[0].total_cycles, by_kernel[0].total_cycles);
    let by_tile = query(&profile, GroupBy::Tile, SortBy::Name, Some(2));
    let names: Vec<_> = by_tile.iter().map(|r| r.group.as_str()).collect();
    assert_eq!(names, ["tile 0", "tile 1"]);
    let phases = query(&profile, GroupBy::Phase, SortBy::Cycles, None);
    let names: Vec<_> = phases.iter().map(|r| r.group.as_str()).collect();
    assert_eq!(names.len(), 3);
    assert!(names.contains(&"exchange phase 0"));
    assert!(phases
        .windows(2)
        .all(|w| w[0].total_cycles >= w[1].total_cycles));
    let text = table(&phases);
    assert!(text.starts_with("group"), "{text}");
    assert_eq!(text.lines().count(), 4);
    let json = serde_json::to_string(&phases).unwrap();
    assert!(json.contains("\"total_cycles\""), "{json}");
}

/// The HTML report: both heat maps cover every tile, the op table is there, and the inline
/// script runs to completion in Node against a minimal stand-in for the page's DOM.
#[test]
fn html_report_is_self_contained_and_its_script_runs() {
    use ipu_runtime::report::html;
    let package = fixture::package();
    let profile = fixture::profile(&package);
    let page = html(&profile, Some(&package));
    assert_eq!(page, html(&profile, Some(&package)), "deterministic");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert_eq!(page.matches("<rect ").count(), 2 * 1472);
    assert!(page.contains("data-rows=\"23\" data-columns=\"64\""));
    assert!(page.contains("<td>ipu.add</td>"), "op table");
    assert!(
        !page.contains("http://") || page.matches("http://").count() == 2,
        "only SVG namespaces"
    );
    assert!(
        !page.contains("src=") && !page.contains("href="),
        "no external resources"
    );

    let data_start = page.find("id=\"profile-data\">").unwrap() + "id=\"profile-data\">".len();
    let data_end = data_start + page[data_start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page[data_start..data_end]).unwrap();
    assert_eq!(data["runs"][0]["kernels"].as_array().unwrap().len(), 4);

    let script_start = page.rfind("<script>").unwrap() + "<script>".len();
    let script_end = script_start + page[script_start..].find("</script>").unwrap();
    let script = &page[script_start..script_end];
    let dir = crate::lock::scratch("report");
    std::fs::write(dir.join("report.html"), &page).unwrap();
    let harness = format!(
        r#"
let filled = 0;
const context = {{ clearRect() {{}}, fillText() {{}}, fillRect() {{ filled++; }}, set font(v) {{}}, set fillStyle(v) {{}}, set globalAlpha(v) {{}} }};
const elements = {{
  "profile-data": {{ textContent: {data} }},
  "timeline": {{ width: 1200, height: 512, getContext() {{ return context; }} }},
  "run": {{ value: "0", options: [], appendChild(o) {{ this.options.push(o); }}, addEventListener() {{}} }},
  "first-tile": {{ value: "0", addEventListener() {{}} }},
}};
const attributes = {{}};
const body = {{ setAttribute(k, v) {{ attributes[k] = v; }}, getAttribute(k) {{ return attributes[k] === undefined ? null : attributes[k]; }} }};
globalThis.document = {{ body, getElementById(id) {{ return elements[id]; }}, createElement() {{ return {{}}; }}, querySelector() {{ return null; }} }};
{script}
if (filled !== 4 + 3) {{ throw new Error("drew " + filled + " boxes"); }}
if (attributes["data-report-status"] !== "ready") {{ throw new Error("status " + attributes["data-report-status"]); }}
console.log("ok");
"#,
        data = serde_json::to_string(&page[data_start..data_end]).unwrap(),
    );
    let path = dir.join("harness.js");
    std::fs::write(&path, harness).unwrap();
    match std::process::Command::new("node").arg(&path).output() {
        Ok(output) => assert!(
            output.status.success() && String::from_utf8_lossy(&output.stdout).contains("ok"),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        ),
        Err(e) => eprintln!("node is not available ({e}); the report script was not executed"),
    }
}

/// The report in a real browser: headless Chromium loads it, the script fills the run
/// selector, and the console shows no error. Chromium is required (scripts/setup.sh installs
/// the Debian package), as for the driver's report test: a missing browser fails the test.
#[test]
fn html_report_loads_in_headless_chromium() {
    let browser = "/usr/bin/chromium";
    assert!(
        std::path::Path::new(browser).exists(),
        "{browser} is missing: run scripts/setup.sh (it installs the Debian chromium package)"
    );
    let package = fixture::package();
    let page = ipu_runtime::report::html(&fixture::profile(&package), Some(&package));
    let dir = crate::lock::scratch("report-chromium");
    let path = dir.join("report.html");
    std::fs::write(&path, page).unwrap();
    let output = std::process::Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", path.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&output.stdout);
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    assert!(
        dom.contains("<option value=\"0\">run</option>"),
        "script did not run:\n{log}"
    );
    assert!(dom.contains("data-rows=\"23\""), "tile grid missing");
    assert!(!log.contains("Uncaught"), "script error:\n{log}");
}
