//! The profile's derived views: per-tile samples, per-op cycles, the Chrome trace.

use ipu_device::{KernelSpec, Precision, Target};
use ipu_runtime::profile::{peak_cycles, StepKind};
use ipu_runtime::trace::chrome_trace;

use crate::fixture;

#[test]
fn kernel_model_cycles_fall_back_to_the_kernel_models_at_peak() {
    let mut package = fixture::package();
    package.profile_plan.ops.clear();
    let profile = fixture::profile(&package);
    let op = &profile.runs[0].ops[0];
    assert_eq!(op.op, None);
    assert_eq!(op.estimated_cycles, None);
    // 4 adds of 8 f32 elements at 8 per cycle, spread over 1472 tiles, rounded up.
    assert_eq!(op.kernel_model_cycles, 1);
    assert!(op.achieved_cycles > op.kernel_model_cycles);

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
    let compute = complete
        .iter()
        .filter(|e| e["cat"] == "compute" && e["tid"] != 0)
        .count();
    assert_eq!(compute, 4);
    assert_eq!(complete.len(), 4 + 4);
    assert!(complete.iter().all(|e| e["dur"].as_f64().unwrap() >= 0.0));
    let add = complete
        .iter()
        .find(|e| e["cat"] == "compute" && e["tid"] != 0)
        .unwrap();
    // Kernel runs are named after their op, as the report names it; the kernel is an argument.
    let op_name = format!("ipu.add {}", fixture::ADD_LOCATION);
    assert_eq!(add["name"], op_name.as_str());
    assert_eq!(add["args"]["kernel"], "add_f32_r1_c8_b1");
    assert!(complete.iter().any(|e| e["name"] == "exchange phase 0"));
    // The phase row: every executed step, compute steps by op name.
    let phases: Vec<_> = complete.iter().filter(|e| e["tid"] == 0).collect();
    assert_eq!(phases.len(), profile.runs[0].executed.len());
    assert!(phases.iter().any(|e| e["name"] == op_name.as_str()));
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
    assert_eq!(by_op[0].group, format!("ipu.add {}", fixture::ADD_LOCATION));
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

/// The HTML report: self-contained and deterministic, the op table with its roofline and
/// kernel-model columns, and the embedded data the script draws from: per-tile layers for the
/// heat maps, one compute span per tile that ran, every executed step for the overview.
#[test]
fn html_report_is_self_contained_and_carries_its_data() {
    use ipu_runtime::report::html;
    let package = fixture::package();
    let profile = fixture::profile(&package);
    let page = html(&profile, Some(&package));
    assert_eq!(page, html(&profile, Some(&package)), "deterministic");
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.contains("data-rows=\"23\" data-columns=\"64\""));
    assert!(
        page.contains("<td>ipu.add loc(&quot;model.mlir&quot;:3:10)</td>"),
        "op table"
    );
    for column in [
        "roofline",
        "kernel model",
        "planner estimate",
        "roofline / achieved",
    ] {
        assert!(page.contains(&format!(">{column}</th>")), "column {column}");
    }
    assert!(
        !page.contains("src=") && !page.contains("href="),
        "no external resources"
    );
    let data_start = page.find("id=\"profile-data\">").unwrap() + "id=\"profile-data\">".len();
    let data_end = data_start + page[data_start..].find("</script>").unwrap();
    let data: serde_json::Value = serde_json::from_str(&page[data_start..data_end]).unwrap();
    let run = &data["runs"][0];
    // Four tiles ran one add each: four spans of (tile, start, end).
    assert_eq!(run["spans"].as_array().unwrap().len(), 4 * 3);
    assert_eq!(
        run["steps"].as_array().unwrap().len(),
        profile.runs[0].executed.len()
    );
    assert_eq!(data["grid"]["place"].as_array().unwrap().len(), 1472);
    let compute = data["heat"]["compute-0"]["layers"]["compute"]
        .as_array()
        .unwrap();
    assert_eq!(compute.len(), 1472);
    assert!(compute[0].as_u64().unwrap() > 0 && compute[1000].as_u64() == Some(0));
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
    assert!(dom.contains("data-report-status=\"ready\""), "{log}");
    assert!(dom.contains("data-rows=\"23\""), "tile grid missing");
    assert!(!log.contains("Uncaught"), "script error:\n{log}");
}

/// The roofline of an op's work: AMP MACs at the AMP peak of their precision over the tiles
/// used (vector work left out when there is AMP work), else the vector work at peak; the
/// exchange bytes at the exchange bandwidth; the larger wins.
#[test]
fn roofline_bounds_follow_the_target_table() {
    use ipu_runtime::profile::OpWork;
    let target = Target::c600();
    let f16 = target.amp.macs_per_cycle(Precision::F16) as u128; // 64, PopLibs
    let fp8 = target.amp.macs_per_cycle(Precision::F8E4M3) as u128; // 128, derived
    let bandwidth = u64::from(target.exchange.bytes_per_cycle.value); // 4, PopLibs
    let mut work = OpWork {
        tiles: (0..4).collect(),
        vector_peak_cycles: 5_000,
        exchange_bytes: 400,
        ..OpWork::default()
    };
    work.amp_macs.insert(Precision::F16, 4 * f16 * 1000);
    let r = work.roofline(&target);
    assert_eq!(r.tiles, 4);
    assert_eq!(r.amp_precision, Some(Precision::F16));
    assert_eq!(r.amp_flops, 2 * 4 * 64 * 1000);
    // 4 tiles x 1000 cycles of AMP work each; the vector work is not part of it.
    assert_eq!(r.compute_bound_cycles, 1000);
    assert_eq!(r.exchange_bound_cycles, 400 / bandwidth);
    assert_eq!(r.cycles(), 1000);
    assert_eq!(r.limit(), "AMP");
    // The same MACs in FP8 take half the cycles; on twice the tiles half again.
    work.amp_macs = [(Precision::F8E4M3, 4 * f16 * 1000)].into();
    assert_eq!(
        work.roofline(&target).compute_bound_cycles,
        4 * f16 as u64 * 1000 / fp8 as u64 / 4
    );
    work.tiles = (0..8).collect();
    assert_eq!(work.roofline(&target).compute_bound_cycles, 250);
    // No AMP work: the vector kernels at peak over the tiles, here below the exchange bound.
    work.amp_macs.clear();
    work.exchange_bytes = 4 * 1000;
    let r = work.roofline(&target);
    assert_eq!(r.amp_precision, None);
    assert_eq!(r.amp_flops, 0);
    assert_eq!(r.compute_bound_cycles, 5_000 / 8);
    assert_eq!(r.exchange_bound_cycles, 1000);
    assert_eq!(r.cycles(), 1000);
    assert_eq!(r.limit(), "exchange");
}

/// A phase's exchange bytes are its busiest tile's larger direction: a multicast counts once
/// for its sender and once for each receiver.
#[test]
fn phase_bytes_are_the_busiest_tiles() {
    use ipu_device::image::{ExchangePhase, Transfer};
    use ipu_runtime::profile::phase_busiest_bytes;
    let base = Target::c600().memory.sram_base.value;
    let transfer = |source_tile, destinations: Vec<u32>, bytes, slot| Transfer {
        source_tile,
        source_address: base,
        destinations,
        destination_address: base + 0x1000,
        bytes,
        slot,
    };
    // Tile 0 multicasts 64 bytes to 1, 2, 3; tile 1 sends 32 to tile 2: tile 2 receives 96.
    let phase = ExchangePhase::from_transfers(
        0,
        &[
            transfer(0, vec![1, 2, 3], 64, 0),
            transfer(1, vec![2], 32, 1),
        ],
    );
    assert_eq!(phase_busiest_bytes(&phase), 96);
}

/// The fixture's add runs on 4 tiles at the vector peak; its exchange comes after it, so it
/// feeds no op and the op's exchange figures are zero.
#[test]
fn fixture_op_roofline_and_fed_steps() {
    let package = fixture::package();
    let profile = fixture::profile(&package);
    let run = &profile.runs[0];
    let op = &run.ops[0];
    assert_eq!(op.roofline.tiles, fixture::TILES);
    assert_eq!(op.roofline.amp_precision, None);
    assert_eq!(op.roofline.exchange_bytes, 0);
    assert_eq!(op.exchange_cycles, 0);
    let target = Target::c600();
    let add = &package.image.kernels[0];
    // One add per tile at the vector model's peak.
    assert_eq!(
        op.roofline.compute_bound_cycles,
        peak_cycles(add, &[], &target)
    );
    assert!(op.roofline_percent() > 0.0 && op.roofline_percent() <= 100.0);
    let fed = run.fed_ops();
    assert!(fed.iter().all(Option::is_none), "{fed:?}");
    assert_eq!(
        run.step_name(run.executed[1].step),
        format!("ipu.add {}", fixture::ADD_LOCATION)
    );
}
