//! `ipu profile query`: where did the cycles go, grouped by kernel, op, tile or BSP phase.
//!
//! Groups are named as in every view of a profile ([`crate::profile::ProgramRun::step_name`]):
//! ops as `ipu.matmul op0`, phases as `exchange phase 3`. Kernel, op and tile groups aggregate kernel runs (one per tile per kernel call); the phase
//! group aggregates the global steps (exchange phases, syncs, host transfers), which every
//! tile spends together. Rows are sorted by the chosen key with the group name as the final
//! tie-break, so the output is the same on every run.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::profile::{ProfileFile, StepKind};

/// What to group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupBy {
    Kernel,
    Op,
    Tile,
    Phase,
}

impl GroupBy {
    pub fn parse(text: &str) -> Option<GroupBy> {
        Some(match text {
            "kernel" => GroupBy::Kernel,
            "op" => GroupBy::Op,
            "tile" => GroupBy::Tile,
            "phase" => GroupBy::Phase,
            _ => return None,
        })
    }
}

/// How to order the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortBy {
    /// Total cycles, largest first.
    Cycles,
    /// Number of runs or steps, largest first.
    Count,
    /// Group name, ascending.
    Name,
}

impl SortBy {
    pub fn parse(text: &str) -> Option<SortBy> {
        Some(match text {
            "cycles" => SortBy::Cycles,
            "count" => SortBy::Count,
            "name" => SortBy::Name,
            _ => return None,
        })
    }
}

/// One group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueryRow {
    pub group: String,
    pub count: u64,
    pub total_cycles: u64,
    pub max_cycles: u64,
    pub mean_cycles: f64,
}

#[derive(Default)]
struct Totals {
    count: u64,
    total: u64,
    max: u64,
}

impl Totals {
    fn add(&mut self, cycles: u64) {
        self.count += 1;
        self.total = self.total.saturating_add(cycles);
        self.max = self.max.max(cycles);
    }
}

/// Groups every run of `profile` (see the module docs); `limit` keeps the first rows.
pub fn query(
    profile: &ProfileFile,
    group: GroupBy,
    sort: SortBy,
    limit: Option<usize>,
) -> Vec<QueryRow> {
    let mut groups: BTreeMap<String, Totals> = BTreeMap::new();
    for run in &profile.runs {
        match group {
            GroupBy::Phase => {
                for record in &run.executed {
                    let Some(info) = run.steps.get(record.step as usize) else {
                        continue;
                    };
                    if info.kind == StepKind::Compute {
                        continue;
                    }
                    let key = run.step_name(record.step);
                    groups
                        .entry(key)
                        .or_default()
                        .add(record.end.saturating_sub(record.start));
                }
            }
            GroupBy::Kernel | GroupBy::Op | GroupBy::Tile => {
                for sample in &run.kernel_samples {
                    let key = match group {
                        GroupBy::Kernel => profile
                            .kernels
                            .get(sample.kernel as usize)
                            .cloned()
                            .unwrap_or_else(|| format!("kernel {}", sample.kernel)),
                        GroupBy::Op => run
                            .executed
                            .get(sample.executed as usize)
                            .and_then(|r| run.steps.get(r.step as usize))
                            .and_then(|i| i.provenance.as_deref())
                            .map_or_else(|| "(unknown op)".to_string(), |p| run.op_name(p)),
                        _ => format!("tile {}", sample.tile),
                    };
                    groups
                        .entry(key)
                        .or_default()
                        .add(sample.end.saturating_sub(sample.start));
                }
            }
        }
    }
    let mut rows: Vec<QueryRow> = groups
        .into_iter()
        .map(|(group, t)| QueryRow {
            group,
            count: t.count,
            total_cycles: t.total,
            max_cycles: t.max,
            mean_cycles: if t.count == 0 {
                0.0
            } else {
                t.total as f64 / t.count as f64
            },
        })
        .collect();
    // The map already ordered names; a stable sort keeps that as the tie-break.
    match sort {
        SortBy::Cycles => rows.sort_by_key(|row| std::cmp::Reverse(row.total_cycles)),
        SortBy::Count => rows.sort_by_key(|row| std::cmp::Reverse(row.count)),
        SortBy::Name => {}
    }
    if let Some(limit) = limit {
        rows.truncate(limit);
    }
    rows
}

/// The rows as an aligned text table.
pub fn table(rows: &[QueryRow]) -> String {
    let width = rows
        .iter()
        .map(|r| r.group.len())
        .max()
        .unwrap_or(0)
        .max("group".len());
    let mut out = format!(
        "{:<width$}  {:>10}  {:>14}  {:>12}  {:>12}\n",
        "group", "count", "total cycles", "max", "mean"
    );
    for row in rows {
        out.push_str(&format!(
            "{:<width$}  {:>10}  {:>14}  {:>12}  {:>12.1}\n",
            row.group, row.count, row.total_cycles, row.max_cycles, row.mean_cycles
        ));
    }
    out
}
