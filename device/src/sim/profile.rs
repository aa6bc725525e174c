//! The cycle profile of one program run, in a form the runtime serializes (`.ipuprof`).
//!
//! Compute is recorded per tile per kernel run (start, end, kernel); exchange, sync and host
//! steps are global BSP steps that every tile spends together, so they are recorded once per
//! executed step rather than 1472 times. A per-tile sample of any step is therefore: the tile's
//! compute records inside it, or the step's own start and end.

use serde::{Deserialize, Serialize};

/// What a program step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StepKind {
    Compute,
    Exchange,
    Sync,
    Repeat,
    HostWrite,
    HostRead,
}

/// Static description of one program step (indexed by pre-order step number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramStepInfo {
    pub step: u32,
    pub kind: StepKind,
    /// The op location for compute steps, the stream name for host steps.
    pub provenance: Option<String>,
    /// Exchange phase id.
    pub phase: Option<u32>,
}

/// One executed step (repeat bodies appear once per iteration; repeats themselves do not).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    pub step: u32,
    pub start: u64,
    pub end: u64,
}

/// One kernel run on one tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ComputeRecord {
    /// Index into [`Profile::steps`].
    pub record: u32,
    pub tile: u32,
    /// Index into the image's kernel table.
    pub kernel: u32,
    pub start: u64,
    pub end: u64,
}

/// Per-tile totals over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileTotals {
    pub compute_cycles: u64,
    pub kernel_runs: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// The cycle profile of one program run. Cycles count from the start of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub target: String,
    pub program: String,
    pub clock_hz: f64,
    pub tiles: u32,
    pub total_cycles: u64,
    pub program_steps: Vec<ProgramStepInfo>,
    pub steps: Vec<StepRecord>,
    pub compute: Vec<ComputeRecord>,
    /// Dense, one entry per tile.
    pub tile_totals: Vec<TileTotals>,
}

impl Profile {
    /// Cycles spent in steps of `kind` (summed over executed steps, wall time of the step).
    pub fn cycles_of(&self, kind: StepKind) -> u64 {
        self.steps
            .iter()
            .filter(|r| self.program_steps.get(r.step as usize).map(|i| i.kind) == Some(kind))
            .map(|r| r.end - r.start)
            .sum()
    }

    /// Cycles of the run's host steps (host writes and reads: the host exchange).
    pub fn host_cycles(&self) -> u64 {
        self.cycles_of(StepKind::HostWrite) + self.cycles_of(StepKind::HostRead)
    }

    /// Cycles of the device program alone: the run without its host steps (what the
    /// compiler's `final_cycles` and refined estimate describe).
    pub fn device_cycles(&self) -> u64 {
        self.total_cycles.saturating_sub(self.host_cycles())
    }

    /// Device time of the run in seconds at the target clock.
    pub fn seconds(&self) -> f64 {
        self.total_cycles as f64 / self.clock_hz
    }
}
