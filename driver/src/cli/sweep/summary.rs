//! The end of a sweep: the table of the best points and the Pareto plot.

use std::path::Path;

use anyhow::Context;

use super::pareto::{self, Sample};
use super::results::{Record, Status};

/// Prints the `top` ok points by simulated device-program cycles, then the failed points
/// with the first line of their diagnostic.
pub fn print(records: &[&Record], top: usize) {
    let mut ok: Vec<&&Record> = records
        .iter()
        .filter(|r| r.status == Status::Ok && r.result.device_program_cycles.is_some())
        .collect();
    ok.sort_by_key(|r| (r.result.device_program_cycles, r.id.clone()));
    if !ok.is_empty() {
        println!(
            "best {} of {} ok points by simulated device-program cycles:",
            top.min(ok.len()),
            ok.len()
        );
        println!(
            "{:<16} {:>12} {:>12} {:>10} {:>10} {:>9}  parameters",
            "id", "device", "refined", "peak KiB", "compile s", "max err"
        );
        for record in ok.iter().take(top) {
            let r = &record.result;
            let kib =
                |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1024.0));
            println!(
                "{:<16} {:>12} {:>12} {:>10} {:>10} {:>9}  {}",
                record.id,
                r.device_program_cycles
                    .map_or("-".into(), |c| c.to_string()),
                r.refined_cycles.map_or("-".into(), |c| c.to_string()),
                kib(r.peak_total_bytes),
                r.compile_seconds.map_or("-".into(), |s| format!("{s:.2}")),
                r.max_abs_error.map_or("-".into(), |e| format!("{e:.4}")),
                record.params.label()
            );
        }
    }
    let failed: Vec<&&Record> = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .collect();
    if !failed.is_empty() {
        println!("{} failed points:", failed.len());
        for record in failed {
            let first = record
                .diagnostic
                .as_deref()
                .and_then(|d| d.lines().next())
                .unwrap_or("(no diagnostic)");
            println!("{:<16} {}: {first}", record.id, record.params.label());
        }
    }
}

/// Writes the Pareto plot of the ok points (simulated cycles against peak memory per
/// tile).
pub fn write_plot(path: &Path, model: &Path, records: &[&Record]) -> anyhow::Result<()> {
    let samples: Vec<Sample> = records
        .iter()
        .filter(|record| record.status == Status::Ok)
        .filter_map(|record| {
            let r = &record.result;
            Some(Sample {
                memory: r.peak_total_bytes? as f64,
                cycles: r.device_program_cycles? as f64,
                label: format!(
                    "{} {}: {} cycles, {} B/tile",
                    record.id,
                    record.params.label(),
                    r.device_program_cycles?,
                    r.peak_total_bytes?,
                ),
            })
        })
        .collect();
    let title = format!(
        "{}: simulated cycles vs peak memory per tile",
        model.file_name().map_or_else(
            || model.display().to_string(),
            |n| n.to_string_lossy().into_owned()
        )
    );
    std::fs::write(path, pareto::svg(&title, &samples))
        .with_context(|| format!("writing '{}'", path.display()))
}
