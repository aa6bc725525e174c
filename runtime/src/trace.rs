//! Chrome trace JSON (the format Perfetto and `chrome://tracing` open) from a profile, for
//! `ipu profile trace`.
//!
//! Each profiled run is a process. Its first thread, `phases`, has one complete (`X`) event
//! per executed step (compute steps named after their op, exchange phases, syncs, host
//! transfers), named exactly as `ipu profile report` and `ipu profile query` name them
//! ([`crate::profile::ProgramRun::step_name`]); an exchange or sync step's arguments name the
//! op it feeds. The global BSP steps are spent by every tile together, so they appear once
//! there instead of 1,472 times. Each tile that ran kernels is a thread with one event per
//! kernel run, named after its op (`ipu.matmul op0`) with the kernel in its arguments.
//! Timestamps are microseconds at the profile's clock; cycles are in each event's arguments.

use serde_json::{json, Value};

use crate::profile::{ProfileFile, StepKind};

/// The trace as a JSON value (serialize with `serde_json::to_writer`).
pub fn chrome_trace(profile: &ProfileFile) -> Value {
    let micros = |cycles: u64| cycles as f64 / profile.clock_hz * 1e6;
    let mut events = Vec::new();
    for (pid, run) in profile.runs.iter().enumerate() {
        events.push(json!({
            "ph": "M", "pid": pid, "name": "process_name",
            "args": { "name": format!("{} {} ({})", profile.application, run.program, profile.target) },
        }));
        // tid 0 is the phase row; tile t is tid t + 1 so it sorts after it.
        events.push(json!({
            "ph": "M", "pid": pid, "tid": 0, "name": "thread_name", "args": { "name": "phases" },
        }));
        let fed = run.fed_ops();
        let mut named = std::collections::BTreeSet::new();
        for sample in &run.kernel_samples {
            if named.insert(sample.tile) {
                events.push(json!({
                    "ph": "M", "pid": pid, "tid": sample.tile + 1, "name": "thread_name",
                    "args": { "name": format!("tile {}", sample.tile) },
                }));
            }
        }
        for (index, record) in run.executed.iter().enumerate() {
            let Some(info) = run.steps.get(record.step as usize) else {
                continue;
            };
            let mut args = json!({ "step": record.step, "start_cycle": record.start, "cycles": record.end - record.start });
            let op = match info.kind {
                StepKind::Compute => info.provenance.as_deref(),
                _ => fed[index],
            };
            if let Some(op) = op {
                args["op"] = json!(run.op_name(op));
            }
            events.push(json!({
                "ph": "X", "pid": pid, "tid": 0, "name": run.step_name(record.step), "cat": info.kind.name(),
                "ts": micros(record.start), "dur": micros(record.end - record.start),
                "args": args,
            }));
        }
        for sample in &run.kernel_samples {
            let op = run
                .executed
                .get(sample.executed as usize)
                .and_then(|r| run.steps.get(r.step as usize))
                .and_then(|i| i.provenance.as_deref())
                .map_or_else(|| "(unknown op)".to_string(), |p| run.op_name(p));
            let kernel = profile
                .kernels
                .get(sample.kernel as usize)
                .cloned()
                .unwrap_or_else(|| format!("kernel {}", sample.kernel));
            events.push(json!({
                "ph": "X", "pid": pid, "tid": sample.tile + 1, "name": op, "cat": "compute",
                "ts": micros(sample.start), "dur": micros(sample.end - sample.start),
                "args": { "kernel": kernel, "start_cycle": sample.start, "cycles": sample.end - sample.start },
            }));
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}
