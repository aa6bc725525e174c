//! `ipu profile report`: one self-contained HTML file (no network, no external files) that
//! shows a profile to a person:
//! * a summary per profiled run (cycles, device time at the profile's clock);
//! * the per-op table: ideal cycles (roofline), the planner's estimate, achieved cycles and
//!   the ratio, worst first;
//! * heat maps over the physical tile grid (23 x 64 on the C600) of compute cycles per tile
//!   and, when the package is given, of bytes placed per tile (segments and host stream
//!   slices), drawn as SVG by this module so they need no script;
//! * a per-tile timeline (compute, exchange, sync, host) drawn on a canvas by a small inline
//!   script from the profile data embedded as JSON, 32 tiles at a time.
//!
//! `<body data-report-status>` is `loading` until the script finished (`ready`) or failed
//! (`error`, with the messages in `#report-errors`), which is what the headless-browser test
//! reads from the rendered DOM.
//!
//! The output is deterministic: the same profile gives the same bytes.

use std::fmt::Write;

use ipu_device::Target;
use serde_json::json;

use crate::package::Package;
use crate::profile::{ProfileFile, StepKind};

/// Escapes text for HTML element content and attribute values.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Seconds in the unit that keeps three significant digits readable.
fn duration(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.3} \u{b5}s", seconds * 1e6)
    }
}

/// A light-to-dark blue ramp; `fraction` in 0..=1.
fn color(fraction: f64) -> String {
    let f = if fraction.is_finite() {
        fraction.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (light, dark) = ([0xf7, 0xfb, 0xff], [0x08, 0x30, 0x6b]);
    let channel = |i: usize| {
        (f64::from(light[i]) + (f64::from(dark[i]) - f64::from(light[i])) * f).round() as u8
    };
    format!("#{:02x}{:02x}{:02x}", channel(0), channel(1), channel(2))
}

/// An SVG heat map of one value per logical tile, laid out on the physical grid.
fn heat_map(title: &str, unit: &str, values: &[u64], target: &Target) -> String {
    const CELL: u32 = 12;
    let rows = target.geometry.physical_rows.value;
    let columns = target.geometry.physical_columns.value;
    let max = values.iter().copied().max().unwrap_or(0);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<figure class=\"heat\"><figcaption>{} (max {} {})</figcaption>",
        escape(title),
        max,
        escape(unit)
    );
    let _ = writeln!(
        svg,
        "<svg class=\"grid\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" data-rows=\"{rows}\" data-columns=\"{columns}\">",
        columns * CELL,
        rows * CELL
    );
    for (tile, &value) in values.iter().enumerate() {
        let Ok(place) = target.logical_to_physical(tile as u32) else {
            continue;
        };
        let fraction = if max == 0 {
            0.0
        } else {
            value as f64 / max as f64
        };
        let _ = writeln!(
            svg,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>tile {tile} (row {}, column {}): {value} {}</title></rect>",
            place.column * CELL,
            place.row * CELL,
            CELL - 1,
            CELL - 1,
            color(fraction),
            place.row,
            place.column,
            escape(unit)
        );
    }
    svg.push_str("</svg></figure>\n");
    svg
}

/// Bytes placed on each tile by the package: initial segments and host stream slices.
fn memory_per_tile(package: &Package, tiles: usize) -> Vec<u64> {
    let mut bytes = vec![0u64; tiles];
    for tile in &package.image.tiles {
        if let Some(slot) = bytes.get_mut(tile.tile as usize) {
            *slot += tile
                .segments
                .iter()
                .map(|s| s.bytes.len() as u64)
                .sum::<u64>();
        }
    }
    for stream in &package.image.streams {
        for slice in &stream.slices {
            if let Some(slot) = bytes.get_mut(slice.tile as usize) {
                *slot += u64::from(slice.bytes);
            }
        }
    }
    bytes
}

const STYLE: &str = r##"
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1b1b1b; }
h1 { font-size: 20px; } h2 { font-size: 16px; margin-top: 28px; }
table { border-collapse: collapse; } td, th { padding: 2px 10px; border-bottom: 1px solid #ddd; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
figure.heat { display: inline-block; margin: 8px 24px 8px 0; }
#timeline { border: 1px solid #ccc; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 6px; color: #fff; }
"##;

/// Runs first, in the head: any uncaught script error is written into `#report-errors` and
/// `data-report-status="error"` on `<body>`, so a headless browser's DOM dump (and a person)
/// sees it; the main script sets `data-report-status="ready"` when it finished.
const ERROR_CATCHER: &str = r##"
"use strict";
window.addEventListener("error", function (event) {
  const report = function () {
    const box = document.getElementById("report-errors");
    if (box) { box.hidden = false; box.textContent += "script error: " + event.message + " (line " + event.lineno + ")\n"; }
    if (document.body) { document.body.setAttribute("data-report-status", "error"); }
  };
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", report); } else { report(); }
});
"##;

/// Draws `data.runs[run]` for tiles `first..first+32` on the canvas. Kernel runs are drawn
/// per tile; global steps span every row.
const SCRIPT: &str = r##"
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("profile-data").textContent);
  const canvas = document.getElementById("timeline");
  const runSelect = document.getElementById("run");
  const firstInput = document.getElementById("first-tile");
  const colors = { compute: "#2b6cb0", exchange: "#dd6b20", sync: "#718096", "host-write": "#38a169", "host-read": "#805ad5" };
  const rowsShown = 32, rowHeight = 16, left = 70;
  data.runs.forEach(function (run, index) {
    const option = document.createElement("option");
    option.value = String(index);
    option.textContent = run.program;
    runSelect.appendChild(option);
  });
  function draw() {
    const run = data.runs[Number(runSelect.value) || 0];
    const context = canvas.getContext("2d");
    context.clearRect(0, 0, canvas.width, canvas.height);
    if (!run) { return; }
    const first = Math.max(0, Math.min(data.tiles - 1, Number(firstInput.value) || 0));
    const scale = (canvas.width - left) / Math.max(1, run.total_cycles);
    context.font = "11px sans-serif";
    for (let row = 0; row < rowsShown && first + row < data.tiles; row++) {
      context.fillStyle = "#000";
      context.fillText("tile " + (first + row), 4, row * rowHeight + 12);
    }
    run.global.forEach(function (step) {
      context.fillStyle = colors[step.kind] || "#999";
      context.globalAlpha = 0.35;
      context.fillRect(left + step.start * scale, 0, Math.max(1, (step.end - step.start) * scale), rowsShown * rowHeight);
    });
    context.globalAlpha = 1;
    run.kernels.forEach(function (sample) {
      const row = sample.tile - first;
      if (row < 0 || row >= rowsShown) { return; }
      context.fillStyle = colors.compute;
      context.fillRect(left + sample.start * scale, row * rowHeight + 2, Math.max(1, (sample.end - sample.start) * scale), rowHeight - 4);
    });
  }
  runSelect.addEventListener("change", draw);
  firstInput.addEventListener("input", draw);
  draw();
  const grid = document.querySelector("svg.grid");
  document.body.setAttribute("data-grid-cells", String(grid ? grid.querySelectorAll("rect").length : 0));
  if (document.body.getAttribute("data-report-status") !== "error") {
    document.body.setAttribute("data-report-status", "ready");
  }
})();
"##;

/// The report for `profile`; `package` adds the memory heat map.
pub fn html(profile: &ProfileFile, package: Option<&Package>) -> String {
    let target = Target::by_name(&profile.target).unwrap_or_else(|_| Target::c600());
    let tiles = profile.tiles as usize;
    let mut out = String::new();
    let title = format!("{} on {}", profile.application, profile.target);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style><script>{ERROR_CATCHER}</script></head><body data-report-status=\"loading\">\n<pre id=\"report-errors\" hidden></pre>",
        escape(&title)
    );
    let _ = writeln!(
        out,
        "<h1>{}</h1><p>compiler {}, {} tiles at {:.3} GHz</p>",
        escape(&title),
        escape(&profile.compiler),
        profile.tiles,
        profile.clock_hz / 1e9
    );

    for run in &profile.runs {
        let _ = writeln!(
            out,
            "<h2>run of <code>{}</code>: {} cycles ({})</h2>",
            escape(&run.program),
            run.total_cycles,
            duration(run.total_cycles as f64 / profile.clock_hz)
        );
        let _ = writeln!(out, "<table class=\"ops\"><tr><th>op</th><th>location</th><th class=\"num\">kernel runs</th><th class=\"num\">ideal</th><th class=\"num\">estimated</th><th class=\"num\">achieved</th><th class=\"num\">ideal / achieved</th></tr>");
        let mut ops: Vec<_> = run.ops.iter().collect();
        // Worst first: the largest gap between achieved and ideal.
        ops.sort_by_key(|op| std::cmp::Reverse(op.achieved_cycles.saturating_sub(op.ideal_cycles)));
        for op in ops {
            let ratio = if op.achieved_cycles == 0 {
                0.0
            } else {
                op.ideal_cycles as f64 / op.achieved_cycles as f64 * 100.0
            };
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{ratio:.1}%</td></tr>",
                escape(op.op.as_deref().unwrap_or("")),
                escape(&op.provenance),
                op.kernel_runs,
                op.ideal_cycles,
                op.estimated_cycles.map_or_else(String::new, |c| c.to_string()),
                op.achieved_cycles
            );
        }
        out.push_str("</table>\n");
        let compute: Vec<u64> = (0..tiles)
            .map(|t| {
                run.tile_totals
                    .get(t)
                    .map_or(0, |totals| totals.compute_cycles)
            })
            .collect();
        out.push_str(&heat_map(
            &format!("compute cycles per tile ({})", run.program),
            "cycles",
            &compute,
            &target,
        ));
    }
    if let Some(package) = package {
        out.push_str(&heat_map(
            "bytes placed per tile (segments and host stream slices)",
            "bytes",
            &memory_per_tile(package, tiles),
            &target,
        ));
    }

    out.push_str("<h2>timeline</h2><p><label>run <select id=\"run\"></select></label> <label>first tile <input id=\"first-tile\" type=\"number\" min=\"0\" value=\"0\"></label></p>\n<p class=\"legend\"><span style=\"background:#2b6cb0\">compute</span><span style=\"background:#dd6b20\">exchange</span><span style=\"background:#718096\">sync</span><span style=\"background:#38a169\">host write</span><span style=\"background:#805ad5\">host read</span></p>\n<canvas id=\"timeline\" width=\"1200\" height=\"512\"></canvas>\n");

    let runs: Vec<_> = profile
        .runs
        .iter()
        .map(|run| {
            let global: Vec<_> = run
                .executed
                .iter()
                .filter_map(|record| {
                    let info = run.steps.get(record.step as usize)?;
                    (info.kind != StepKind::Compute).then(|| {
                        json!({ "kind": info.kind.name(), "start": record.start, "end": record.end })
                    })
                })
                .collect();
            let kernels: Vec<_> = run
                .kernel_samples
                .iter()
                .map(|s| json!({ "tile": s.tile, "start": s.start, "end": s.end }))
                .collect();
            json!({ "program": run.program, "total_cycles": run.total_cycles, "global": global, "kernels": kernels })
        })
        .collect();
    let data = json!({ "tiles": profile.tiles, "runs": runs });
    // `</` inside the JSON would end the script element early.
    let data = data.to_string().replace("</", "<\\/");
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"profile-data\">{data}</script>\n<script>{SCRIPT}</script>\n</body></html>"
    );
    out
}
