//! `ipu profile compare`: two profiles side by side in one self-contained HTML page (for
//! instance two sweep points, or a model before and after a compiler change).
//!
//! Runs are matched by program name; within a run
//! * the run's total, device-program and host cycles;
//! * cycles per step kind (compute, exchange, sync, host) and per phase (each exchange phase,
//!   sync and host transfer, named as every view names them);
//! * per op (matched by provenance, named `ipu.matmul op0`): roofline, achieved cycles and
//!   roofline / achieved of each, and the difference;
//!
//! and for the whole profile the memory plans' peak live bytes per category on the busiest
//! tile and over all tiles. Deltas are B - A (negative: B is smaller); a row present in one
//! profile only shows `-` for the other.
//!
//! The output is deterministic: the same profiles give the same bytes.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::package::MemoryCategory;
use crate::profile::{percent, ProfileFile, ProgramRun, StepKind};
use crate::report::{escape, grouped, kind_cycles, signed, ERROR_CATCHER, KIND_COLOURS, STYLE};

/// Cycles per phase name (every executed step that is not a compute step).
pub fn phase_cycles(run: &ProgramRun) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    for record in &run.executed {
        let Some(info) = run.steps.get(record.step as usize) else {
            continue;
        };
        if info.kind == StepKind::Compute {
            continue;
        }
        *out.entry(run.step_name(record.step)).or_default() +=
            record.end.saturating_sub(record.start);
    }
    out
}

/// A memory row: category, busiest tile A and B, all tiles A and B.
type CategoryRow = (String, Option<u64>, Option<u64>, Option<u64>, Option<u64>);

/// `b - a` with its percentage of `a`.
fn delta_cells(a: Option<u64>, b: Option<u64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => {
            let delta = i128::from(b) - i128::from(a);
            let class = match delta.signum() {
                -1 => " good",
                1 => " bad",
                _ => "",
            };
            let relative = if a == 0 {
                String::new()
            } else {
                format!("{:+.1}%", delta as f64 / a as f64 * 100.0)
            };
            format!(
                "<td class=\"num delta{class}\">{}</td><td class=\"num{class}\">{relative}</td>",
                signed(delta)
            )
        }
        _ => "<td class=\"num\">-</td><td class=\"num\"></td>".into(),
    }
}

fn cell(value: Option<u64>) -> String {
    format!(
        "<td class=\"num\">{}</td>",
        value.map_or_else(|| "-".into(), grouped)
    )
}

/// One comparison row: a label, A, B and the delta.
fn row(out: &mut String, label: &str, a: Option<u64>, b: Option<u64>) {
    let _ = writeln!(
        out,
        "<tr><td>{}</td>{}{}{}</tr>",
        label,
        cell(a),
        cell(b),
        delta_cells(a, b)
    );
}

const HEAD: &str = "<th class=\"num\">A</th><th class=\"num\">B</th><th class=\"num\">B - A</th><th class=\"num\">change</th>";

/// The comparison page of `a` and `b`, labelled with the names given (their file names).
pub fn html(a: &ProfileFile, a_name: &str, b: &ProfileFile, b_name: &str) -> String {
    let mut out = String::new();
    let title = format!("{} vs {}", a_name, b_name);
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style><script>{ERROR_CATCHER}</script></head><body data-report-status=\"loading\">\n<pre id=\"report-errors\" hidden></pre>",
        escape(&title)
    );
    let _ = writeln!(out, "<h1>profile comparison</h1><table class=\"profiles\"><tr><th></th><th>file</th><th>application</th><th>target</th><th class=\"num\">tiles</th><th>compiler</th></tr>");
    for (label, profile, name) in [("A", a, a_name), ("B", b, b_name)] {
        let _ = writeln!(
            out,
            "<tr><td>{label}</td><td><code>{}</code></td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            escape(name),
            escape(&profile.application),
            escape(&profile.target),
            profile.tiles,
            escape(&profile.compiler)
        );
    }
    out.push_str("</table>\n<p class=\"note\">Deltas are B - A: negative (green) where B takes fewer cycles or bytes.</p>\n");

    let mut programs: Vec<&str> = a.runs.iter().map(|r| r.program.as_str()).collect();
    for run in &b.runs {
        if !programs.contains(&run.program.as_str()) {
            programs.push(&run.program);
        }
    }
    for program in programs {
        let run_a = a.runs.iter().find(|r| r.program == program);
        let run_b = b.runs.iter().find(|r| r.program == program);
        let _ = writeln!(
            out,
            "<h2>run of <code>{}</code></h2>\n<table class=\"totals\"><tr><th>cycles</th>{HEAD}</tr>",
            escape(program)
        );
        row(
            &mut out,
            "total",
            run_a.map(|r| r.total_cycles),
            run_b.map(|r| r.total_cycles),
        );
        row(
            &mut out,
            "device program",
            run_a.map(ProgramRun::device_cycles),
            run_b.map(ProgramRun::device_cycles),
        );
        row(
            &mut out,
            "host transfers",
            run_a.map(ProgramRun::host_cycles),
            run_b.map(ProgramRun::host_cycles),
        );
        out.push_str("</table>\n");

        // Step kinds.
        let kinds_a = run_a.map(kind_cycles);
        let kinds_b = run_b.map(kind_cycles);
        let _ = writeln!(
            out,
            "<h3>cycles per step kind</h3><table class=\"kinds\"><tr><th>kind</th>{HEAD}</tr>"
        );
        for (i, (name, colour)) in KIND_COLOURS.iter().enumerate() {
            let (x, y) = (kinds_a.map(|k| k[i]), kinds_b.map(|k| k[i]));
            if x.unwrap_or(0) == 0 && y.unwrap_or(0) == 0 {
                continue;
            }
            row(
                &mut out,
                &format!("<span style=\"color:{colour}\">&#9632;</span> {name}"),
                x,
                y,
            );
        }
        out.push_str("</table>\n");

        // Phases.
        let phases_a = run_a.map(phase_cycles).unwrap_or_default();
        let phases_b = run_b.map(phase_cycles).unwrap_or_default();
        let mut names: Vec<&String> = phases_a.keys().chain(phases_b.keys()).collect();
        names.sort();
        names.dedup();
        let _ = writeln!(
            out,
            "<h3>cycles per phase</h3><table class=\"phases\"><tr><th>phase</th>{HEAD}</tr>"
        );
        for name in names {
            row(
                &mut out,
                &escape(name),
                phases_a.get(name).copied(),
                phases_b.get(name).copied(),
            );
        }
        out.push_str("</table>\n");

        // Ops.
        let mut provenances: Vec<&str> = Vec::new();
        for run in run_a.iter().chain(run_b.iter()) {
            for op in &run.ops {
                if !provenances.contains(&op.provenance.as_str()) {
                    provenances.push(&op.provenance);
                }
            }
        }
        let find = |run: Option<&'_ ProgramRun>, p: &str| {
            run.and_then(|r| r.ops.iter().find(|o| o.provenance == p).cloned())
        };
        let mut rows: Vec<_> = provenances
            .into_iter()
            .map(|p| (p, find(run_a, p), find(run_b, p)))
            .collect();
        let achieved =
            |o: &Option<crate::profile::OpCycles>| o.as_ref().map_or(0, |o| o.achieved_total());
        rows.sort_by(|x, y| {
            achieved(&y.1)
                .max(achieved(&y.2))
                .cmp(&achieved(&x.1).max(achieved(&x.2)))
                .then_with(|| x.0.cmp(y.0))
        });
        let _ = writeln!(
            out,
            "<h3>per op</h3><table class=\"ops\"><tr><th>op</th><th class=\"num\">roofline A</th><th class=\"num\">roofline B</th><th class=\"num\">achieved A</th><th class=\"num\">achieved B</th><th class=\"num\">B - A</th><th class=\"num\">change</th><th class=\"num\">roofline / achieved A</th><th class=\"num\">roofline / achieved B</th></tr>"
        );
        for (provenance, x, y) in rows {
            let name = run_a
                .filter(|_| x.is_some())
                .or(run_b)
                .map_or_else(|| provenance.to_string(), |r| r.op_name(provenance));
            let ratio = |o: &Option<crate::profile::OpCycles>| {
                o.as_ref()
                    .map_or_else(|| "-".into(), |o| format!("{:.1}%", o.roofline_percent()))
            };
            let _ = writeln!(
                out,
                "<tr data-op=\"{}\"><td>{}</td>{}{}{}{}{}<td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                escape(provenance),
                escape(&name),
                cell(x.as_ref().map(|o| o.roofline.cycles())),
                cell(y.as_ref().map(|o| o.roofline.cycles())),
                cell(x.as_ref().map(|o| o.achieved_total())),
                cell(y.as_ref().map(|o| o.achieved_total())),
                delta_cells(x.as_ref().map(|o| o.achieved_total()), y.as_ref().map(|o| o.achieved_total())),
                ratio(&x),
                ratio(&y)
            );
        }
        out.push_str("</table>\n");
    }

    // Memory.
    out.push_str("<h2>memory</h2>\n");
    if a.memory.is_empty() && b.memory.is_empty() {
        out.push_str("<p class=\"note\">Neither profile carries a memory plan.</p>\n");
    } else {
        let busiest = |p: &ProfileFile| {
            (!p.memory.is_empty())
                .then(|| p.memory.busiest_tile(p.tiles))
                .flatten()
        };
        let totals = |p: &ProfileFile| (!p.memory.is_empty()).then(|| p.memory.totals(p.tiles));
        let (busy_a, busy_b) = (busiest(a), busiest(b));
        let (total_a, total_b) = (totals(a), totals(b));
        let _ = writeln!(
            out,
            "<p class=\"note\">Peak live bytes: per tile the buffers live at its busiest step, with code and support. Busiest tile: A tile {}, B tile {}.</p><table class=\"memory\"><tr><th>category</th><th class=\"num\">busiest tile A</th><th class=\"num\">busiest tile B</th><th class=\"num\">B - A</th><th class=\"num\">change</th><th class=\"num\">all tiles A</th><th class=\"num\">all tiles B</th><th class=\"num\">B - A</th><th class=\"num\">change</th></tr>",
            busy_a.map_or_else(|| "-".into(), |(t, _)| t.to_string()),
            busy_b.map_or_else(|| "-".into(), |(t, _)| t.to_string())
        );
        let mut categories: Vec<CategoryRow> = MemoryCategory::ALL
            .iter()
            .map(|c| {
                let i = c.index();
                (
                    c.name().to_string(),
                    busy_a.map(|(_, b)| b[i]),
                    busy_b.map(|(_, b)| b[i]),
                    total_a.map(|t| t[i]),
                    total_b.map(|t| t[i]),
                )
            })
            .collect();
        let sum = |f: fn(&CategoryRow) -> Option<u64>, rows: &[CategoryRow]| {
            rows.iter().map(f).try_fold(0u64, |s, v| v.map(|v| s + v))
        };
        let all = (
            "all categories".to_string(),
            sum(|r| r.1, &categories),
            sum(|r| r.2, &categories),
            sum(|r| r.3, &categories),
            sum(|r| r.4, &categories),
        );
        categories.push(all);
        for (name, ba, bb, ta, tb) in categories {
            let _ = writeln!(
                out,
                "<tr data-category=\"{}\"><td>{}</td>{}{}{}{}{}{}</tr>",
                escape(&name),
                escape(&name),
                cell(ba),
                cell(bb),
                delta_cells(ba, bb),
                cell(ta),
                cell(tb),
                delta_cells(ta, tb)
            );
        }
        out.push_str("</table>\n");
    }
    let _ = writeln!(
        out,
        "<script>document.body.setAttribute(\"data-report-status\", document.body.getAttribute(\"data-report-status\") === \"error\" ? \"error\" : \"ready\");</script>\n</body></html>"
    );
    out
}

/// The device-program cycles of each profile's `run` program (or first run), for the
/// command's summary line.
pub fn device_cycles(profile: &ProfileFile) -> Option<u64> {
    profile
        .runs
        .iter()
        .find(|r| r.program == "run")
        .or(profile.runs.first())
        .map(ProgramRun::device_cycles)
}

/// `part / whole` in percent, for the summary line.
pub fn change_percent(a: u64, b: u64) -> f64 {
    if a == 0 {
        0.0
    } else {
        percent(b, a) - 100.0
    }
}
