//! `ipu profile report`: one self-contained HTML file (no network, no external files) that
//! shows a profile to a person:
//! * a summary per profiled run: cycles, device time at the profile's clock, and the phase
//!   overview (cycles in compute, exchange, sync and host steps);
//! * per op, its roofline (the op's AMP FLOPs at the AMP peak for their precision over the
//!   tiles it uses, the bytes of the exchange feeding it at the exchange bandwidth; see
//!   [`crate::profile::Roofline`]) next to the kernel-model figure, the planner's estimate and
//!   the achieved cycles, with roofline / achieved in percent; then the same summed per
//!   planned op with its parts (`op0` and `op0.reduce`);
//! * heat maps over the physical tile grid (23 x 64 on the C600) of compute cycles per tile
//!   and memory per tile (total or one category: weights, activations, exchange buffers, code,
//!   support), each with its colour scale and legend, drawn on canvases from per-tile arrays;
//!   the busiest tile's memory as a stacked bar by category;
//! * the liveness of the largest buffers over the `run` program's steps (a Gantt chart);
//! * a timeline over every tile (one row per tile; 1,472 on the C600) with zoom (mouse wheel,
//!   buttons, drag to pan) above a phase-level overview of the executed steps, drawn on a
//!   canvas from compact data: one span per tile per compute step (kernel runs merged), spans
//!   closer than the timeline's resolution merged, global steps once.
//!
//! `<body data-report-status>` is `loading` until the script finished (`ready`) or failed
//! (`error`, with the messages in `#report-errors`). The script also records what it drew,
//! for the headless-browser test: `data-grid-cells` (heat map cells drawn),
//! `data-heat-colours` on each heat map (distinct colours read back from the canvas pixels)
//! `data-timeline-rows` (tile rows drawn on the timeline) and `data-timeline-busy-rows` (rows
//! with compute drawn in the current view).
//!
//! The output is deterministic: the same profile gives the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write;

use ipu_device::Target;
use serde_json::{json, Value};

use crate::package::{MemoryCategory, MemoryPlan, Package};
use crate::profile::{percent, ProfileFile, ProgramRun, StepKind};

/// Escapes text for HTML element content and attribute values.
pub(crate) fn escape(text: &str) -> String {
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

/// Escapes text for HTML (for callers outside the crate).
pub fn escape_text(text: &str) -> String {
    escape(text)
}

/// Seconds in the unit that keeps three significant digits readable.
pub(crate) fn duration(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.3} ms", seconds * 1e3)
    } else {
        format!("{:.3} \u{b5}s", seconds * 1e6)
    }
}

/// An integer with thousands separators (`1,234,567`).
pub(crate) fn grouped(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed integer with thousands separators and an explicit sign.
pub(crate) fn signed(value: i128) -> String {
    let magnitude = grouped(u64::try_from(value.unsigned_abs()).unwrap_or(u64::MAX));
    match value.signum() {
        1 => format!("+{magnitude}"),
        -1 => format!("-{magnitude}"),
        _ => "0".into(),
    }
}

/// The colour of each step kind, shared by the legend, the overview and the timeline.
pub(crate) const KIND_COLOURS: [(&str, &str); 6] = [
    ("compute", "#2b6cb0"),
    ("exchange", "#dd6b20"),
    ("sync", "#718096"),
    ("repeat", "#a0aec0"),
    ("host-write", "#38a169"),
    ("host-read", "#805ad5"),
];

/// The colour of each memory category, by [`MemoryCategory::index`].
pub(crate) const CATEGORY_COLOURS: [&str; 5] =
    ["#6b46c1", "#2b6cb0", "#dd6b20", "#38a169", "#a0aec0"];

fn kind_index(kind: StepKind) -> usize {
    match kind {
        StepKind::Compute => 0,
        StepKind::Exchange => 1,
        StepKind::Sync => 2,
        StepKind::Repeat => 3,
        StepKind::HostWrite => 4,
        StepKind::HostRead => 5,
    }
}

/// Cycles of a run by step kind (compute, exchange, sync, repeat, host-write, host-read).
pub fn kind_cycles(run: &ProgramRun) -> [u64; 6] {
    let mut out = [0u64; 6];
    for record in &run.executed {
        if let Some(info) = run.steps.get(record.step as usize) {
            out[kind_index(info.kind)] += record.end.saturating_sub(record.start);
        }
    }
    out
}

pub(crate) const STYLE: &str = r##"
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1b1b1b; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 32px; } h3 { font-size: 15px; margin-top: 20px; }
table { border-collapse: collapse; margin: 6px 0; } td, th { padding: 2px 8px; border-bottom: 1px solid #ddd; }
th { background: #f4f6f8; text-align: left; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.part td:first-child { padding-left: 22px; }
td.good { color: #276749; } td.bad { color: #9b2c2c; }
figure.pareto { margin: 8px 0; }
figure.heat { display: inline-block; margin: 8px 24px 8px 0; vertical-align: top; }
canvas.heat { border: 1px solid #ccc; }
.scale { display: flex; align-items: center; gap: 6px; font-size: 12px; margin-top: 4px; }
.scale canvas { border: 1px solid #ccc; }
#timeline { border: 1px solid #ccc; cursor: grab; }
.legend span { display: inline-block; padding: 0 8px; margin-right: 6px; color: #fff; border-radius: 2px; }
.note { color: #555; font-size: 12px; max-width: 1100px; }
.scroll { overflow-x: auto; }
"##;

/// Runs first, in the head: any uncaught script error is written into `#report-errors` and
/// `data-report-status="error"` on `<body>`, so a headless browser's DOM dump (and a person)
/// sees it; the main script sets `data-report-status="ready"` when it finished.
pub(crate) const ERROR_CATCHER: &str = r##"
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

/// Heat maps (with their scales) and the all-tile timeline, from `#profile-data`.
const SCRIPT: &str = r##"
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("profile-data").textContent);
  const kindColours = data.kind_colours;
  // Colour ramp for heat maps: dark violet (low) through blue and green to yellow (high).
  const ramp = [[0.0, [40, 22, 96]], [0.25, [40, 92, 170]], [0.5, [30, 150, 150]], [0.75, [130, 200, 70]], [1.0, [250, 228, 40]]];
  function rampColour(f) {
    f = Math.max(0, Math.min(1, isFinite(f) ? f : 0));
    for (let i = 1; i < ramp.length; i++) {
      if (f <= ramp[i][0]) {
        const a = ramp[i - 1], b = ramp[i], t = (f - a[0]) / (b[0] - a[0]);
        const c = [0, 1, 2].map(function (k) { return Math.round(a[1][k] + (b[1][k] - a[1][k]) * t); });
        return "rgb(" + c[0] + "," + c[1] + "," + c[2] + ")";
      }
    }
    return "rgb(250,228,40)";
  }
  const unusedColour = "#e6e6e6";
  function fmt(v) { return Math.round(v).toLocaleString("en-US"); }
  let cellsDrawn = 0;

  // One heat map: values per logical tile on the physical grid, its scale from the smallest
  // non-zero value to the largest; tiles at zero (unused) in grey.
  function drawHeat(figure, values, unit) {
    const canvas = figure.querySelector("canvas.heat");
    const scale = figure.querySelector("canvas.scale-bar");
    const cell = 14, rows = data.grid.rows, columns = data.grid.columns;
    canvas.width = columns * cell; canvas.height = rows * cell;
    const context = canvas.getContext("2d");
    context.fillStyle = "#ffffff"; context.fillRect(0, 0, canvas.width, canvas.height);
    let min = Infinity, max = 0;
    values.forEach(function (v) { if (v > 0) { min = Math.min(min, v); max = Math.max(max, v); } });
    if (!isFinite(min)) { min = 0; }
    let drawn = 0;
    values.forEach(function (v, tile) {
      const place = data.grid.place[tile];
      if (place === undefined || place < 0) { return; }
      const row = Math.floor(place / columns), column = place % columns;
      context.fillStyle = v > 0 ? rampColour(max > min ? (v - min) / (max - min) : 1) : unusedColour;
      context.fillRect(column * cell, row * cell, cell - 1, cell - 1);
      drawn++;
    });
    cellsDrawn = Math.max(cellsDrawn, drawn);
    canvas.setAttribute("data-cells", String(drawn));
    // Read the colours back from the drawn pixels (cell centres): what a person sees.
    const seen = new Set();
    const pixels = context.getImageData(0, 0, canvas.width, canvas.height).data;
    for (let row = 0; row < rows; row++) {
      for (let column = 0; column < columns; column++) {
        const at = ((row * cell + (cell >> 1)) * canvas.width + column * cell + (cell >> 1)) * 4;
        seen.add(pixels[at] + "," + pixels[at + 1] + "," + pixels[at + 2]);
      }
    }
    seen.delete("255,255,255");
    figure.setAttribute("data-heat-colours", String(seen.size));
    const sc = scale.getContext("2d");
    for (let x = 0; x < scale.width; x++) { sc.fillStyle = rampColour(x / (scale.width - 1)); sc.fillRect(x, 0, 1, scale.height); }
    figure.querySelector(".scale-min").textContent = fmt(min) + " " + unit;
    figure.querySelector(".scale-mid").textContent = fmt((min + max) / 2);
    figure.querySelector(".scale-max").textContent = fmt(max) + " " + unit;
    // Hover: the tile under the mouse.
    canvas.onmousemove = function (event) {
      const r = canvas.getBoundingClientRect();
      const column = Math.floor((event.clientX - r.left) / cell), row = Math.floor((event.clientY - r.top) / cell);
      const tile = data.grid.place.indexOf(row * columns + column);
      canvas.title = tile < 0 ? "" : "tile " + tile + " (row " + row + ", column " + column + "): " + fmt(values[tile] || 0) + " " + unit;
    };
  }
  document.querySelectorAll("figure.heat[data-heat]").forEach(function (figure) {
    const map = data.heat[figure.getAttribute("data-heat")];
    const select = figure.querySelector("select");
    const draw = function () {
      const key = select ? select.value : Object.keys(map.layers)[0];
      drawHeat(figure, map.layers[key], map.unit);
    };
    if (select) { select.addEventListener("change", draw); }
    draw();
  });

  // The timeline: a phase overview band, then one row per tile.
  const canvas = document.getElementById("timeline");
  const runSelect = document.getElementById("run");
  const rowSelect = document.getElementById("row-height");
  const info = document.getElementById("timeline-view");
  const left = 64, overview = 46, axis = 16;
  let view = null, runIndex = 0;
  // One pixel per tile row when there are many tiles, so all of them fit on a screen.
  rowSelect.value = data.tiles > 512 ? "1" : "8";
  data.runs.forEach(function (run, index) {
    const option = document.createElement("option");
    option.value = String(index); option.textContent = run.program;
    runSelect.appendChild(option);
  });
  function currentRun() { return data.runs[runIndex]; }
  // With "hide host transfers", time is squeezed: the cycles of host write and read steps are
  // taken out, so the device program's steps sit side by side (a host step shows as a line).
  const hideHost = document.getElementById("hide-host");
  function squeeze(run) {
    const hosts = run.steps.filter(function (s) { return s[0] === 4 || s[0] === 5; });
    if (!hideHost.checked || hosts.length === 0) { return function (c) { return c; }; }
    return function (c) {
      let out = c;
      for (let i = 0; i < hosts.length; i++) {
        const h = hosts[i];
        if (h[1] >= c) { break; }
        out -= Math.min(c, h[2]) - h[1];
      }
      return out;
    };
  }
  function extent(run) { return Math.max(1, squeeze(run)(run.total)); }
  // The first view is the device program (host transfers often take most of a run).
  function reset() {
    const run = currentRun();
    if (!run) { view = [0, 1]; return; }
    const sq = squeeze(run);
    view = [sq(run.device[0]), Math.max(sq(run.device[0]) + 1, sq(run.device[1]))];
  }
  function draw() {
    const run = currentRun();
    const rowHeight = Number(rowSelect.value) || 2;
    canvas.height = overview + axis + data.tiles * rowHeight;
    const context = canvas.getContext("2d");
    context.clearRect(0, 0, canvas.width, canvas.height);
    if (!run) { return; }
    const width = canvas.width - left, span = Math.max(1, view[1] - view[0]);
    const sq = squeeze(run);
    const x = function (c) { return left + (c - view[0]) / span * width; };
    const clip = function (a, b, draw) {
      a = sq(a); b = sq(b);
      if (b < view[0] || a > view[1]) { return; }
      const x0 = Math.max(left, x(a)), x1 = Math.min(canvas.width, x(b));
      draw(x0, Math.max(1, x1 - x0));
    };
    context.font = "11px sans-serif";
    // Overview: every executed step, coloured by kind, named when wide enough.
    context.fillStyle = "#000"; context.fillText("phases", 4, 14); context.fillText("op", 4, 36);
    run.steps.forEach(function (s) {
      clip(s[1], s[2], function (x0, w) {
        context.fillStyle = kindColours[s[0]][1];
        context.fillRect(x0, 4, w, 16);
        if (s[4] >= 0) { context.fillStyle = data.op_colours[s[4] % data.op_colours.length]; context.fillRect(x0, 24, w, 16); }
        if (w > 60) {
          context.fillStyle = "#fff";
          context.fillText(run.names[s[3]].slice(0, Math.floor(w / 6)), x0 + 2, 16);
        }
      });
    });
    // Axis: cycles at a few ticks.
    context.fillStyle = "#333";
    for (let i = 0; i <= 8; i++) {
      const c = view[0] + span * i / 8;
      context.fillText(fmt(c), Math.min(canvas.width - 60, left + width * i / 8), overview + 12);
    }
    const top = overview + axis;
    // Global steps (exchange, sync, host) span every tile row.
    context.globalAlpha = 0.3;
    run.steps.forEach(function (s) {
      if (s[0] === 0) { return; }
      clip(s[1], s[2], function (x0, w) { context.fillStyle = kindColours[s[0]][1]; context.fillRect(x0, top, w, data.tiles * rowHeight); });
    });
    context.globalAlpha = 1;
    context.fillStyle = kindColours[0][1];
    const spans = run.spans;
    const busy = new Set();
    for (let i = 0; i + 2 < spans.length; i += 3) {
      const tile = spans[i];
      clip(spans[i + 1], spans[i + 2], function (x0, w) {
        context.fillRect(x0, top + tile * rowHeight, w, Math.max(1, rowHeight - (rowHeight > 2 ? 1 : 0)));
        busy.add(tile);
      });
    }
    canvas.setAttribute("data-timeline-busy-rows", String(busy.size));
    // Tile labels: every row when there is room, else every 64th.
    context.fillStyle = "#000";
    const every = rowHeight >= 12 ? 1 : Math.max(8, Math.ceil(128 / rowHeight / 8) * 8);
    let rows = 0;
    for (let tile = 0; tile < data.tiles; tile++) {
      const y = top + tile * rowHeight;
      if (y + rowHeight <= canvas.height) { rows++; }
      if (tile % every === 0) { context.fillText("tile " + tile, 2, y + Math.min(rowHeight, 10)); }
    }
    canvas.setAttribute("data-timeline-rows", String(rows));
    info.textContent = (hideHost.checked ? "device cycles " : "cycles ") + fmt(view[0]) + " to " + fmt(view[1]) + " of " + fmt(extent(run));
  }
  function zoom(factor, at) {
    const run = currentRun(); if (!run) { return; }
    const span = view[1] - view[0];
    const centre = at === undefined ? view[0] + span / 2 : at;
    let next = Math.max(8, Math.min(extent(run), span * factor));
    let start = centre - (centre - view[0]) * next / span;
    start = Math.max(0, Math.min(extent(run) - next, start));
    view = [start, start + next];
    draw();
  }
  canvas.addEventListener("wheel", function (event) {
    event.preventDefault();
    const r = canvas.getBoundingClientRect();
    const at = view[0] + (event.clientX - r.left - left) / (canvas.width - left) * (view[1] - view[0]);
    zoom(event.deltaY < 0 ? 0.8 : 1.25, Math.max(view[0], Math.min(view[1], at)));
  }, { passive: false });
  let dragging = null;
  canvas.addEventListener("mousedown", function (event) { dragging = { x: event.clientX, view: view.slice() }; });
  window.addEventListener("mouseup", function () { dragging = null; });
  window.addEventListener("mousemove", function (event) {
    if (!dragging) { return; }
    const run = currentRun(); const span = dragging.view[1] - dragging.view[0];
    let start = dragging.view[0] - (event.clientX - dragging.x) / (canvas.width - left) * span;
    start = Math.max(0, Math.min(extent(run) - span, start));
    view = [start, start + span]; draw();
  });
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(0.5); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(2); });
  document.getElementById("zoom-reset").addEventListener("click", function () { reset(); draw(); });
  document.getElementById("zoom-all").addEventListener("click", function () { const run = currentRun(); if (run) { view = [0, extent(run)]; draw(); } });
  hideHost.addEventListener("change", function () { reset(); draw(); });
  runSelect.addEventListener("change", function () { runIndex = Number(runSelect.value) || 0; reset(); draw(); });
  rowSelect.addEventListener("change", draw);
  reset();
  draw();
  document.body.setAttribute("data-grid-cells", String(cellsDrawn));
  if (document.body.getAttribute("data-report-status") !== "error") {
    document.body.setAttribute("data-report-status", "ready");
  }
})();
"##;

/// Physical grid position (`row * columns + column`) of every logical tile, -1 where the
/// target has none; the grid's rows and columns.
fn grid_places(target: &Target, tiles: u32) -> (u32, u32, Vec<i64>) {
    let columns = target.geometry.physical_columns.value.max(1);
    let places: Vec<i64> = (0..tiles)
        .map(|t| match target.logical_to_physical(t) {
            Ok(place) => i64::from(place.index),
            Err(_) => i64::from(t),
        })
        .collect();
    let rows = target
        .geometry
        .physical_rows
        .value
        .max(tiles.div_ceil(columns));
    (rows, columns, places)
}

/// A heat map figure whose layers (`key -> values per tile`) are in `data.heat[id]`.
fn heat_figure(
    out: &mut String,
    id: &str,
    title: &str,
    layers: &[(String, String)],
    rows: u32,
    columns: u32,
) {
    let _ = write!(
        out,
        "<figure class=\"heat\" data-heat=\"{}\"><figcaption>{}",
        escape(id),
        escape(title)
    );
    if layers.len() > 1 {
        out.push_str(" <select>");
        for (key, label) in layers {
            let _ = write!(
                out,
                "<option value=\"{}\">{}</option>",
                escape(key),
                escape(label)
            );
        }
        out.push_str("</select>");
    }
    let _ = writeln!(
        out,
        "</figcaption><canvas class=\"heat\" data-rows=\"{rows}\" data-columns=\"{columns}\"></canvas><div class=\"scale\"><span class=\"scale-min\"></span><canvas class=\"scale-bar\" width=\"240\" height=\"12\"></canvas><span class=\"scale-mid\" hidden></span><span class=\"scale-max\"></span><span style=\"background:#e6e6e6;padding:0 6px\">0 / unused</span></div></figure>"
    );
}

/// Bytes placed on each tile by the package: initial segments and host stream slices (for
/// profiles without a memory plan).
fn placed_bytes(package: &Package, tiles: usize) -> Vec<u64> {
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

/// An op with its parts: name, roofline, achieved cycles, AMP FLOPs, the parts' provenances.
type OpGroup<'a> = (Option<String>, u64, u64, u64, Vec<&'a str>);

/// The ops table of one run, and the per-planned-op totals.
fn ops_tables(out: &mut String, run: &ProgramRun) {
    out.push_str("<h3>ops against their roofline</h3>\n<p class=\"note\">Roofline: the op's AMP FLOPs at the AMP peak for their precision (MACs per tile per cycle from the target table) spread over the tiles the op runs on, or for an op without AMP work its vector kernels at their models' peak rate; and the busiest tile's bytes of the exchange phases feeding the op at the exchange bandwidth; the larger of the two. Kernel model: the kernel cost models of the op's work spread evenly over every tile of the target (not a roofline). Achieved: the simulated wall time of the op's compute steps plus the exchange and sync steps feeding them.</p>\n");
    out.push_str("<table class=\"ops\"><tr><th>op</th><th class=\"num\">tiles</th><th>AMP precision</th><th class=\"num\">AMP GFLOP</th><th class=\"num\">compute bound</th><th class=\"num\">exchange bytes</th><th class=\"num\">exchange bound</th><th class=\"num\">roofline</th><th>limit</th><th class=\"num\">kernel model</th><th class=\"num\">planner estimate</th><th class=\"num\">achieved compute</th><th class=\"num\">achieved exchange + sync</th><th class=\"num\">achieved</th><th class=\"num\">roofline / achieved</th></tr>\n");
    let mut ops: Vec<_> = run.ops.iter().collect();
    ops.sort_by(|a, b| {
        b.achieved_total()
            .cmp(&a.achieved_total())
            .then_with(|| a.provenance.cmp(&b.provenance))
    });
    for op in &ops {
        let r = &op.roofline;
        let _ = writeln!(
            out,
            "<tr data-op=\"{}\"><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num roofline\">{:.1}%</td></tr>",
            escape(&op.provenance),
            escape(&run.op_name(&op.provenance)),
            r.tiles,
            r.amp_precision.map_or("-", |p| p.short_name()),
            r.amp_flops as f64 / 1e9,
            grouped(r.compute_bound_cycles),
            grouped(r.exchange_bytes),
            grouped(r.exchange_bound_cycles),
            grouped(r.cycles()),
            r.limit(),
            grouped(op.kernel_model_cycles),
            op.estimated_cycles.map_or_else(String::new, grouped),
            grouped(op.achieved_cycles),
            grouped(op.exchange_cycles),
            grouped(op.achieved_total()),
            op.roofline_percent()
        );
    }
    out.push_str("</table>\n");

    // Per planned op: its own row and its parts, summed (parts run one after another, so
    // their rooflines add up).
    let mut groups: BTreeMap<String, OpGroup> = BTreeMap::new();
    for op in &run.ops {
        let key = owner(&op.provenance, run).to_string();
        let entry = groups
            .entry(key)
            .or_insert_with(|| (op.op.clone(), 0, 0, 0, Vec::new()));
        entry.1 += op.roofline.cycles();
        entry.2 += op.achieved_total();
        entry.3 += op.roofline.amp_flops;
        entry.4.push(op.provenance.as_str());
    }
    out.push_str("<h3>per op, with its parts</h3>\n<table class=\"op-totals\"><tr><th>op</th><th>parts</th><th class=\"num\">AMP GFLOP</th><th class=\"num\">roofline</th><th class=\"num\">achieved</th><th class=\"num\">roofline / achieved</th></tr>\n");
    let mut rows: Vec<_> = groups.into_iter().collect();
    rows.sort_by(|a, b| b.1 .2.cmp(&a.1 .2).then_with(|| a.0.cmp(&b.0)));
    for (provenance, (name, roofline, achieved, flops, parts)) in rows {
        let _ = writeln!(
            out,
            "<tr><td>{} {}</td><td>{}</td><td class=\"num\">{:.3}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td></tr>",
            escape(name.as_deref().unwrap_or("")),
            escape(&provenance),
            escape(&parts.join(", ")),
            flops as f64 / 1e9,
            grouped(roofline),
            grouped(achieved),
            percent(roofline, achieved)
        );
    }
    out.push_str("</table>\n");
}

/// The op a provenance is a part of: the longest other provenance of the run it extends by
/// `.part` (`op0.reduce` is part of `op0`), or itself.
pub fn owner<'a>(provenance: &'a str, run: &'a ProgramRun) -> &'a str {
    run.ops
        .iter()
        .map(|op| op.provenance.as_str())
        .filter(|p| {
            provenance
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('.'))
        })
        .max_by_key(|p| p.len())
        .unwrap_or(provenance)
}

/// The phase overview of a run: cycles per step kind, as a table and a stacked bar.
fn phase_overview(out: &mut String, run: &ProgramRun) {
    let cycles = kind_cycles(run);
    let total: u64 = cycles.iter().sum::<u64>().max(1);
    out.push_str("<h3>phases</h3>\n<svg class=\"phase-bar\" width=\"900\" height=\"22\" xmlns=\"http://www.w3.org/2000/svg\">");
    let mut x = 0.0;
    for (i, (name, colour)) in KIND_COLOURS.iter().enumerate() {
        let w = cycles[i] as f64 / total as f64 * 900.0;
        if w > 0.0 {
            let _ = write!(
                out,
                "<rect x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"22\" fill=\"{colour}\"><title>{name}: {} cycles</title></rect>",
                grouped(cycles[i])
            );
        }
        x += w;
    }
    out.push_str("</svg>\n<table class=\"phases\"><tr><th>kind</th><th class=\"num\">steps</th><th class=\"num\">cycles</th><th class=\"num\">share</th></tr>\n");
    let mut counts = [0u64; 6];
    for record in &run.executed {
        if let Some(info) = run.steps.get(record.step as usize) {
            counts[kind_index(info.kind)] += 1;
        }
    }
    for (i, (name, colour)) in KIND_COLOURS.iter().enumerate() {
        if counts[i] == 0 {
            continue;
        }
        let _ = writeln!(
            out,
            "<tr><td><span style=\"color:{colour}\">&#9632;</span> {name}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.1}%</td></tr>",
            counts[i],
            grouped(cycles[i]),
            percent(cycles[i], total)
        );
    }
    out.push_str("</table>\n");
}

/// The memory section: category legend, the busiest tile's stacked bar, category totals.
fn memory_section(out: &mut String, memory: &MemoryPlan, tiles: u32) {
    let per_tile = memory.per_tile(tiles);
    out.push_str("<p class=\"legend\">");
    for category in MemoryCategory::ALL {
        let _ = write!(
            out,
            "<span style=\"background:{}\">{}</span>",
            CATEGORY_COLOURS[category.index()],
            category.name()
        );
    }
    out.push_str("</p>\n");
    if let Some((tile, bytes)) = memory.busiest_tile(tiles) {
        let total: u64 = bytes.iter().sum();
        let _ = writeln!(
            out,
            "<h3>busiest tile: tile {tile}, {} bytes at its peak</h3><svg class=\"busiest\" width=\"900\" height=\"40\" xmlns=\"http://www.w3.org/2000/svg\">",
            grouped(total)
        );
        let mut x = 0.0;
        for category in MemoryCategory::ALL {
            let b = bytes[category.index()];
            let w = b as f64 / total.max(1) as f64 * 900.0;
            if b > 0 {
                let _ = write!(
                    out,
                    "<rect x=\"{x:.1}\" y=\"0\" width=\"{w:.1}\" height=\"24\" fill=\"{}\" data-category=\"{}\"><title>{}: {} bytes</title></rect>",
                    CATEGORY_COLOURS[category.index()],
                    category.name(),
                    category.name(),
                    grouped(b)
                );
                if w > 70.0 {
                    let _ = write!(
                        out,
                        "<text x=\"{:.1}\" y=\"37\" font-size=\"11\">{} {}</text>",
                        x + 2.0,
                        category.name(),
                        grouped(b)
                    );
                }
            }
            x += w;
        }
        out.push_str("</svg>\n");
    }
    out.push_str("<table class=\"memory\"><tr><th>category</th><th class=\"num\">busiest tile</th><th class=\"num\">largest on a tile</th><th class=\"num\">all tiles</th></tr>\n");
    let busiest = memory.busiest_tile(tiles).map(|(_, b)| b).unwrap_or([0; 5]);
    let totals = memory.totals(tiles);
    for category in MemoryCategory::ALL {
        let i = category.index();
        let largest = per_tile.iter().map(|t| t[i]).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "<tr><td><span style=\"color:{}\">&#9632;</span> {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            CATEGORY_COLOURS[i],
            category.name(),
            grouped(busiest[i]),
            grouped(largest),
            grouped(totals[i])
        );
    }
    out.push_str("</table>\n");
}

/// The liveness chart of the `count` largest buffers (bytes per tile, then tiles) over the
/// steps of `run`.
fn liveness(out: &mut String, memory: &MemoryPlan, run: &ProgramRun, count: usize) {
    let mut buffers: Vec<_> = memory.buffers.iter().collect();
    buffers.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| b.tile_count().cmp(&a.tile_count()))
            .then_with(|| a.name.cmp(&b.name))
    });
    buffers.truncate(count);
    let steps = run.steps.len().max(1) as f64;
    let (label, width, row) = (300.0, 760.0, 18.0);
    let height = 30.0 + row * buffers.len() as f64 + 20.0;
    let _ = writeln!(
        out,
        "<h3>liveness of the {} largest buffers over the steps of <code>{}</code></h3><svg class=\"liveness\" data-buffers=\"{}\" width=\"{}\" height=\"{height}\" xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">",
        buffers.len(),
        escape(&run.program),
        buffers.len(),
        label + width + 10.0
    );
    // Step ribbon: each step's kind.
    for (index, info) in run.steps.iter().enumerate() {
        let x = label + index as f64 / steps * width;
        let _ = write!(
            out,
            "<rect x=\"{x:.1}\" y=\"4\" width=\"{:.2}\" height=\"12\" fill=\"{}\"><title>step {index}: {}</title></rect>",
            (width / steps).max(0.5),
            KIND_COLOURS[kind_index(info.kind)].1,
            escape(&run.step_name(index as u32))
        );
    }
    let _ = write!(
        out,
        "<text x=\"4\" y=\"14\">steps 0 to {}</text>",
        run.steps.len().saturating_sub(1)
    );
    for (i, buffer) in buffers.iter().enumerate() {
        let y = 24.0 + row * i as f64;
        let x0 = label + f64::from(buffer.live.0) / steps * width;
        let x1 = label + (f64::from(buffer.live.1) + 1.0).min(steps) / steps * width;
        let _ = write!(
            out,
            "<text x=\"4\" y=\"{:.1}\">{} ({} B x {} tiles)</text><rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {}, {} bytes on each of {} tiles, steps {} to {}</title></rect>",
            y + 12.0,
            escape(&buffer.name),
            grouped(u64::from(buffer.bytes)),
            buffer.tile_count(),
            (x1 - x0).max(1.0),
            row - 4.0,
            CATEGORY_COLOURS[buffer.category.index()],
            escape(&buffer.name),
            buffer.category.name(),
            grouped(u64::from(buffer.bytes)),
            buffer.tile_count(),
            buffer.live.0,
            buffer.live.1
        );
    }
    out.push_str("</svg>\n");
}

/// The timeline data of one run: executed steps `[kind, start, end, name, op]` (op: index of
/// the op the step belongs to or feeds, -1 for none) with the name table, and compute spans
/// `[tile, start, end, ...]`, one per tile per compute step, then merged across gaps shorter
/// than the timeline's resolution (1/20,000 of the run).
fn timeline_data(run: &ProgramRun) -> Value {
    let mut names: Vec<String> = Vec::new();
    let mut name_index: BTreeMap<String, usize> = BTreeMap::new();
    let mut op_index: BTreeMap<&str, usize> = BTreeMap::new();
    for op in &run.ops {
        let next = op_index.len();
        op_index.entry(op.provenance.as_str()).or_insert(next);
    }
    let fed = run.fed_ops();
    let mut steps = Vec::with_capacity(run.executed.len());
    for (index, record) in run.executed.iter().enumerate() {
        let Some(info) = run.steps.get(record.step as usize) else {
            continue;
        };
        let name = run.step_name(record.step);
        let next = names.len();
        let n = *name_index.entry(name.clone()).or_insert_with(|| {
            names.push(name);
            next
        });
        let op = match info.kind {
            StepKind::Compute => info.provenance.as_deref(),
            _ => fed[index],
        };
        let op = op.and_then(|p| op_index.get(p)).map_or(-1, |&i| i as i64);
        steps.push(json!([
            kind_index(info.kind),
            record.start,
            record.end,
            n,
            op
        ]));
    }
    let mut per_tile: BTreeMap<(u32, u32), (u64, u64)> = BTreeMap::new();
    for sample in &run.kernel_samples {
        let entry = per_tile
            .entry((sample.tile, sample.executed))
            .or_insert((sample.start, sample.end));
        entry.0 = entry.0.min(sample.start);
        entry.1 = entry.1.max(sample.end);
    }
    let resolution = run.total_cycles / 20_000;
    let mut spans: Vec<u64> = Vec::new();
    let mut last: Option<(u32, usize)> = None;
    for ((tile, _), (start, end)) in per_tile {
        if let Some((t, at)) = last {
            if t == tile && start <= spans[at + 2].saturating_add(resolution) {
                spans[at + 2] = spans[at + 2].max(end);
                continue;
            }
        }
        last = Some((tile, spans.len()));
        spans.extend([u64::from(tile), start, end]);
    }
    // The device program: from the first to the last step that is not a host transfer.
    let device: Vec<(u64, u64)> = run
        .executed
        .iter()
        .filter(|r| {
            run.steps
                .get(r.step as usize)
                .is_some_and(|i| !matches!(i.kind, StepKind::HostWrite | StepKind::HostRead))
        })
        .map(|r| (r.start, r.end))
        .collect();
    let device = match (device.first(), device.last()) {
        (Some(first), Some(last)) if last.1 > first.0 => [first.0, last.1],
        _ => [0, run.total_cycles],
    };
    json!({ "program": run.program, "total": run.total_cycles, "device": device, "names": names, "steps": steps, "spans": spans })
}

/// The report for `profile`; `package` supplies the memory plan when the profile has none
/// (or the bytes placed per tile when neither has one).
pub fn html(profile: &ProfileFile, package: Option<&Package>) -> String {
    let target = Target::by_name(&profile.target).unwrap_or_else(|_| Target::c600());
    let tiles = profile.tiles;
    let (rows, columns, places) = grid_places(&target, tiles);
    let memory = if profile.memory.is_empty() {
        package.map(|p| &p.memory).filter(|m| !m.is_empty())
    } else {
        Some(&profile.memory)
    };
    let mut heat: BTreeMap<String, Value> = BTreeMap::new();
    let mut out = String::new();
    let title = format!("{} on {}", profile.application, profile.target);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style><script>{ERROR_CATCHER}</script></head><body data-report-status=\"loading\">\n<pre id=\"report-errors\" hidden></pre>",
        escape(&title)
    );
    let _ = writeln!(
        out,
        "<h1>{}</h1><p>compiler {}, {} tiles at {:.3} GHz; AMP peak {} / {} / {} MACs per tile per cycle (f32 / f16 / fp8), exchange {} bytes per tile per cycle (target table)</p>",
        escape(&title),
        escape(&profile.compiler),
        profile.tiles,
        profile.clock_hz / 1e9,
        target.amp.macs_per_cycle_f32.value,
        target.amp.macs_per_cycle_f16.value,
        target.amp.macs_per_cycle_f8.value,
        target.exchange.bytes_per_cycle.value
    );
    let _ = writeln!(
        out,
        "<p class=\"legend\">{}</p>",
        KIND_COLOURS
            .iter()
            .map(|(name, colour)| format!("<span style=\"background:{colour}\">{name}</span>"))
            .collect::<String>()
    );

    for (index, run) in profile.runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "<h2>run of <code>{}</code>: {} cycles ({}), device program {} cycles, host {} cycles</h2>",
            escape(&run.program),
            grouped(run.total_cycles),
            duration(run.total_cycles as f64 / profile.clock_hz),
            grouped(run.device_cycles()),
            grouped(run.host_cycles())
        );
        phase_overview(&mut out, run);
        ops_tables(&mut out, run);
        let compute: Vec<u64> = (0..tiles as usize)
            .map(|t| {
                run.tile_totals
                    .get(t)
                    .map_or(0, |totals| totals.compute_cycles)
            })
            .collect();
        let id = format!("compute-{index}");
        heat.insert(
            id.clone(),
            json!({ "unit": "cycles", "layers": { "compute": compute } }),
        );
        heat_figure(
            &mut out,
            &id,
            &format!("compute cycles per tile ({})", run.program),
            &[("compute".into(), "compute".into())],
            rows,
            columns,
        );
    }

    out.push_str("<h2>memory per tile</h2>\n");
    if let Some(memory) = memory {
        let per_tile = memory.per_tile(tiles);
        let mut layers = serde_json::Map::new();
        layers.insert(
            "total".into(),
            json!(per_tile
                .iter()
                .map(|t| t.iter().sum::<u64>())
                .collect::<Vec<_>>()),
        );
        let mut options = vec![("total".to_string(), "all categories".to_string())];
        for category in MemoryCategory::ALL {
            layers.insert(
                category.name().into(),
                json!(per_tile
                    .iter()
                    .map(|t| t[category.index()])
                    .collect::<Vec<_>>()),
            );
            options.push((category.name().into(), category.name().into()));
        }
        heat.insert(
            "memory".into(),
            json!({ "unit": "bytes", "layers": layers }),
        );
        heat_figure(
            &mut out,
            "memory",
            "peak live bytes per tile (buffers live at the tile's busiest step, with code and support):",
            &options,
            rows,
            columns,
        );
        memory_section(&mut out, memory, tiles);
        if let Some(run) = profile
            .runs
            .iter()
            .find(|r| r.program == "run")
            .or(profile.runs.first())
        {
            liveness(&mut out, memory, run, 20);
        }
    } else if let Some(package) = package {
        out.push_str("<p class=\"note\">The profile and package carry no memory plan (built by an older compiler): bytes placed per tile only, without categories or liveness.</p>\n");
        heat.insert(
            "memory".into(),
            json!({ "unit": "bytes", "layers": { "placed": placed_bytes(package, tiles as usize) } }),
        );
        heat_figure(
            &mut out,
            "memory",
            "bytes placed per tile (segments and host stream slices)",
            &[("placed".into(), "placed".into())],
            rows,
            columns,
        );
    } else {
        out.push_str("<p class=\"note\">The profile carries no memory plan; give the package with <code>--package</code>.</p>\n");
    }

    let _ = writeln!(
        out,
        "<h2>timeline of all {tiles} tiles</h2><p><label>run <select id=\"run\"></select></label> <label>row height <select id=\"row-height\"><option value=\"1\">1 px</option><option value=\"2\">2 px</option><option value=\"4\">4 px</option><option value=\"8\">8 px</option><option value=\"16\">16 px</option></select></label> <button id=\"zoom-in\">zoom in</button> <button id=\"zoom-out\">zoom out</button> <button id=\"zoom-reset\">device program</button> <button id=\"zoom-all\">whole run</button> <label><input type=\"checkbox\" id=\"hide-host\" checked> hide host transfers</label> <span id=\"timeline-view\"></span></p><p class=\"note\">Mouse wheel zooms around the pointer, dragging pans; the first view is the device program (without the host transfers before and after it), and host transfers are hidden (their cycles taken out of the time axis, each shown as a line) unless unticked. The top bands are the executed steps by kind and the op each belongs to or feeds; each row below is one tile's compute (kernel runs merged per step), with the global exchange, sync and host steps shaded across all rows.</p>\n<div class=\"scroll\"><canvas id=\"timeline\" width=\"1400\" height=\"400\"></canvas></div>"
    );

    let runs: Vec<Value> = profile.runs.iter().map(timeline_data).collect();
    let data = json!({
        "tiles": tiles,
        "grid": { "rows": rows, "columns": columns, "place": places },
        "heat": heat,
        "runs": runs,
        "kind_colours": KIND_COLOURS,
        "op_colours": ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"],
    });
    // `</` inside the JSON would end the script element early.
    let data = data.to_string().replace("</", "<\\/");
    let _ = writeln!(
        out,
        "<script type=\"application/json\" id=\"profile-data\">{data}</script>\n<script>{SCRIPT}</script>\n</body></html>"
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_and_signed() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1234567), "1,234,567");
        assert_eq!(signed(-1500), "-1,500");
        assert_eq!(signed(42), "+42");
        assert_eq!(signed(0), "0");
    }
}
