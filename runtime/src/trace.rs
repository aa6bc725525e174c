//! Chrome trace JSON (the format Perfetto and `chrome://tracing` open) from a profile, for
//! `ipu profile trace`.
//!
//! Each profiled run is a process; each tile that ran kernels is a thread with one complete
//! (`X`) event per kernel run, named after the kernel and carrying the op location. The
//! global BSP steps (exchange, sync, host) are spent by every tile together, so they appear
//! once, on a `bsp` thread placed before the tiles, instead of 1,472 times. Timestamps are
//! microseconds at the profile's clock; cycles are in each event's arguments.

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
        // tid 0 is the BSP row; tile t is tid t + 1 so it sorts after it.
        events.push(json!({
            "ph": "M", "pid": pid, "tid": 0, "name": "thread_name", "args": { "name": "bsp" },
        }));
        let mut named = std::collections::BTreeSet::new();
        for sample in &run.kernel_samples {
            if named.insert(sample.tile) {
                events.push(json!({
                    "ph": "M", "pid": pid, "tid": sample.tile + 1, "name": "thread_name",
                    "args": { "name": format!("tile {}", sample.tile) },
                }));
            }
        }
        for record in &run.executed {
            let Some(info) = run.steps.get(record.step as usize) else {
                continue;
            };
            if info.kind == StepKind::Compute {
                continue;
            }
            let name = match (info.kind, info.phase, &info.provenance) {
                (StepKind::Exchange, Some(phase), _) => format!("exchange phase {phase}"),
                (_, _, Some(stream)) => format!("{} {stream}", info.kind.name()),
                _ => info.kind.name().to_string(),
            };
            events.push(json!({
                "ph": "X", "pid": pid, "tid": 0, "name": name, "cat": info.kind.name(),
                "ts": micros(record.start), "dur": micros(record.end - record.start),
                "args": { "step": record.step, "start_cycle": record.start, "cycles": record.end - record.start },
            }));
        }
        for sample in &run.kernel_samples {
            let provenance = run
                .executed
                .get(sample.executed as usize)
                .and_then(|r| run.steps.get(r.step as usize))
                .and_then(|i| i.provenance.clone());
            let kernel = profile
                .kernels
                .get(sample.kernel as usize)
                .cloned()
                .unwrap_or_else(|| format!("kernel {}", sample.kernel));
            events.push(json!({
                "ph": "X", "pid": pid, "tid": sample.tile + 1, "name": kernel, "cat": "compute",
                "ts": micros(sample.start), "dur": micros(sample.end - sample.start),
                "args": { "op": provenance, "start_cycle": sample.start, "cycles": sample.end - sample.start },
            }));
        }
    }
    json!({ "traceEvents": events, "displayTimeUnit": "ns" })
}
