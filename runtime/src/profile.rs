//! The `.ipuprof` cycle profile: what one session's profiled program runs did on every tile.
//!
//! Built from the simulator's [`ipu_device::sim::Profile`] (or, later, from a hardware trace)
//! and the package that ran. Per run it records
//! * the program's static steps (kind, op provenance as an MLIR location, exchange phase),
//! * every executed step with its start and end cycle (exchange, sync and host steps are
//!   global BSP steps: every tile spends them together, so they are stored once),
//! * every kernel run per tile (tile, kernel, start, end) inside its compute step,
//! * per op: its roofline ([`Roofline`]: the op's AMP FLOPs at the AMP peak for their
//!   precision over the tiles the op runs on, and the bytes its exchange phases move at the
//!   exchange bandwidth), the kernel-model figure, the planner's estimate and the achieved
//!   cycles (wall time of the op's compute steps, and of the exchange and sync steps that
//!   feed it), so a report can show how far each op is from its roofline;
//! * the package's memory plan (buffers by category with their lifetimes, support memory).
//!
//! [`ProgramRun::tile_samples`] expands this into the per-tile, per-step view, and
//! [`ProgramRun::step_name`] names steps the same way in every view (report, trace, query).
//!
//! ## File layout
//! A [`crate::container`] file (magic "\x89IPUPRF\n") with three postcard sections: `meta`
//! (compiler, application, target, clock, tiles, kernel names), `runs` and `memory`. The
//! format owns its types rather than serializing the simulator's, so the simulator can change
//! without changing the files people keep. Version 1 files (no `memory`, no rooflines) are
//! still read: their ops carry an empty roofline and the memory plan is empty.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ipu_device::image::{DeviceImage, ExchangePhase, Step};
use ipu_device::sim::{self, Profile};
use ipu_device::{cost, KernelSpec, Precision, Target};
use serde::{Deserialize, Serialize};
use tracing::info;

use crate::container::{self, FormatError, FormatSpec};
use crate::package::{MemoryPlan, Package, COMPILER_VERSION};

/// Version of the `.ipuprof` layout. Version 2 added the ops' rooflines and the `memory`
/// section.
pub const PROFILE_FORMAT_VERSION: u32 = 2;

pub const PROFILE_SPEC: FormatSpec = FormatSpec {
    name: "profile",
    magic: *b"\x89IPUPRF\n",
    version: PROFILE_FORMAT_VERSION,
    sections: &[(1, "meta"), (2, "runs"), (3, "memory")],
};

/// Version 1: `meta` and `runs` (ops without rooflines).
const PROFILE_SPEC_V1: FormatSpec = FormatSpec {
    version: 1,
    sections: PROFILE_SPEC.sections.split_at(2).0,
    ..PROFILE_SPEC
};

/// Largest profile file a reader accepts (refused by size before reading). A profile grows
/// with executed kernel runs (a few bytes each), so this allows billions of samples while
/// keeping a huge or sparse file from being read into memory.
pub const MAX_PROFILE_BYTES: u64 = 16 << 30;

/// Largest tile count a profile may declare (the per-tile tables are dense).
const MAX_TILES: u32 = 1 << 16;

/// What a step does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum StepKind {
    Compute,
    Exchange,
    Sync,
    Repeat,
    HostWrite,
    HostRead,
}

impl StepKind {
    pub const fn name(self) -> &'static str {
        match self {
            StepKind::Compute => "compute",
            StepKind::Exchange => "exchange",
            StepKind::Sync => "sync",
            StepKind::Repeat => "repeat",
            StepKind::HostWrite => "host-write",
            StepKind::HostRead => "host-read",
        }
    }

    fn from_sim(kind: sim::StepKind) -> StepKind {
        match kind {
            sim::StepKind::Compute => StepKind::Compute,
            sim::StepKind::Exchange => StepKind::Exchange,
            sim::StepKind::Sync => StepKind::Sync,
            sim::StepKind::Repeat => StepKind::Repeat,
            sim::StepKind::HostWrite => StepKind::HostWrite,
            sim::StepKind::HostRead => StepKind::HostRead,
        }
    }
}

/// A program step (indexed by its pre-order number).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepInfo {
    pub kind: StepKind,
    /// The op location (compute) or the stream name (host steps).
    pub provenance: Option<String>,
    /// Exchange phase id.
    pub phase: Option<u32>,
}

/// One executed step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecutedStep {
    pub step: u32,
    pub start: u64,
    pub end: u64,
}

/// One kernel run on one tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSample {
    /// Index into [`ProgramRun::executed`] (a compute step).
    pub executed: u32,
    pub tile: u32,
    /// Index into [`ProfileFile::kernels`].
    pub kernel: u32,
    pub start: u64,
    pub end: u64,
}

/// Per-tile totals of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileTotals {
    pub compute_cycles: u64,
    pub kernel_runs: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// The roofline of one op: the least time its work could take on the tiles it uses.
///
/// * Compute: when the op runs AMP GEMM kernels, their FLOPs (2 per MAC) at the AMP's peak
///   rate for the kernels' input precision (`Target::amp`, MACs per tile per cycle), spread
///   evenly over the tiles the op runs kernels on; the kernels around them (casts, copies,
///   zeroing) are overhead the roofline leaves out. An op with no AMP work (vector ops) is
///   bounded by its kernels' cycles at the vector models' peak rate instead ([`peak_cycles`]),
///   over the same tiles.
/// * Exchange: the bytes of the exchange phases that feed the op (the phases executed since
///   the previous compute step), counting for each phase the busiest tile's larger direction
///   (sent or received), at the exchange bandwidth (`Target::exchange.bytes_per_cycle` per
///   tile per cycle).
///
/// The roofline is the larger of the two ([`Roofline::cycles`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roofline {
    /// Tiles the op runs kernels on.
    pub tiles: u32,
    /// Input precision of the op's AMP work (the one with most MACs); `None`: no AMP work,
    /// the compute bound is the vector models' peak.
    pub amp_precision: Option<Precision>,
    /// FLOPs of the op's AMP kernels (2 per MAC).
    pub amp_flops: u64,
    pub compute_bound_cycles: u64,
    /// Bytes of the op's exchange phases, the busiest tile's per phase, summed.
    pub exchange_bytes: u64,
    pub exchange_bound_cycles: u64,
}

impl Roofline {
    /// The roofline cycles: the larger of the compute and exchange bounds.
    pub fn cycles(&self) -> u64 {
        self.compute_bound_cycles.max(self.exchange_bound_cycles)
    }

    /// Which bound sets the roofline.
    pub fn limit(&self) -> &'static str {
        if self.exchange_bound_cycles > self.compute_bound_cycles {
            "exchange"
        } else if self.amp_precision.is_some() {
            "AMP"
        } else {
            "vector"
        }
    }
}

/// The work of one op that its roofline is computed from (see [`Roofline`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpWork {
    pub tiles: BTreeSet<u32>,
    /// AMP MACs by input precision.
    pub amp_macs: BTreeMap<Precision, u128>,
    /// Cycles of the op's non-AMP kernel runs at the vector models' peak, summed over tiles.
    pub vector_peak_cycles: u128,
    /// Per exchange phase, the busiest tile's bytes.
    pub exchange_bytes: u64,
}

impl OpWork {
    /// The roofline of this work on `target` (see [`Roofline`]).
    pub fn roofline(&self, target: &Target) -> Roofline {
        let tiles = self.tiles.len().max(1) as u128;
        let amp_tile_cycles: u128 = self
            .amp_macs
            .iter()
            .map(|(&precision, &macs)| {
                macs.div_ceil(u128::from(target.amp.macs_per_cycle(precision).max(1)))
            })
            .sum();
        let amp_precision = self
            .amp_macs
            .iter()
            .filter(|(_, &macs)| macs > 0)
            .max_by_key(|(&precision, &macs)| (macs, std::cmp::Reverse(precision)))
            .map(|(&precision, _)| precision);
        let compute = if amp_precision.is_some() {
            amp_tile_cycles
        } else {
            self.vector_peak_cycles
        };
        let macs: u128 = self.amp_macs.values().sum();
        let bandwidth = u64::from(target.exchange.bytes_per_cycle.value.max(1));
        Roofline {
            tiles: self.tiles.len() as u32,
            amp_precision,
            amp_flops: u64::try_from(macs * 2).unwrap_or(u64::MAX),
            compute_bound_cycles: u64::try_from(compute.div_ceil(tiles)).unwrap_or(u64::MAX),
            exchange_bytes: self.exchange_bytes,
            exchange_bound_cycles: self.exchange_bytes.div_ceil(bandwidth),
        }
    }
}

/// The roofline, model and achieved cycles of one op (one provenance of compute steps).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCycles {
    pub provenance: String,
    /// The op name from the package's profile plan: the op planned at this provenance, or
    /// the one it is a part of (`op0.reduce` belongs to `op0`).
    pub op: Option<String>,
    pub kernel_runs: u64,
    /// The kernel models' cycles of the op's work spread evenly over every tile of the
    /// target: the package plan's figure, or the kernel models at peak (see
    /// [`peak_cycles`]) summed and divided by the tile count. A model figure, not a roofline.
    pub kernel_model_cycles: u64,
    /// The planner's estimate, when the package's plan has one.
    pub estimated_cycles: Option<u64>,
    /// Wall time of the op's executed compute steps (first tile start to last tile end).
    pub achieved_cycles: u64,
    /// Wall time of the exchange and sync steps that feed the op (those executed since the
    /// previous compute step).
    pub exchange_cycles: u64,
    pub roofline: Roofline,
}

impl OpCycles {
    /// Achieved cycles of the op: its compute steps and the exchange feeding them.
    pub fn achieved_total(&self) -> u64 {
        self.achieved_cycles.saturating_add(self.exchange_cycles)
    }

    /// Roofline over achieved, in percent (0 when nothing was achieved).
    pub fn roofline_percent(&self) -> f64 {
        percent(self.roofline.cycles(), self.achieved_total())
    }
}

/// `part / whole` in percent; 0 for an empty whole.
pub fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

/// One profiled program run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRun {
    pub program: String,
    pub total_cycles: u64,
    pub steps: Vec<StepInfo>,
    pub executed: Vec<ExecutedStep>,
    pub kernel_samples: Vec<KernelSample>,
    /// Dense, one per tile.
    pub tile_totals: Vec<TileTotals>,
    pub ops: Vec<OpCycles>,
}

/// A per-tile view of one executed step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileSample<'a> {
    pub executed: u32,
    pub step: u32,
    pub kind: StepKind,
    pub provenance: Option<&'a str>,
    pub kernel: Option<&'a str>,
    pub start: u64,
    pub end: u64,
}

/// A `.ipuprof` file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileFile {
    pub compiler: String,
    /// The application (package name).
    pub application: String,
    pub target: String,
    pub clock_hz: f64,
    pub tiles: u32,
    /// Kernel names by kernel table index.
    pub kernels: Vec<String>,
    pub runs: Vec<ProgramRun>,
    /// The profiled package's memory plan (empty when it has none).
    pub memory: MemoryPlan,
}

/// An op of a version 1 profile.
#[derive(Deserialize)]
struct OpCyclesV1 {
    provenance: String,
    op: Option<String>,
    kernel_runs: u64,
    ideal_cycles: u64,
    estimated_cycles: Option<u64>,
    achieved_cycles: u64,
}

/// A run of a version 1 profile.
#[derive(Deserialize)]
struct ProgramRunV1 {
    program: String,
    total_cycles: u64,
    steps: Vec<StepInfo>,
    executed: Vec<ExecutedStep>,
    kernel_samples: Vec<KernelSample>,
    tile_totals: Vec<TileTotals>,
    ops: Vec<OpCyclesV1>,
}

impl From<ProgramRunV1> for ProgramRun {
    fn from(run: ProgramRunV1) -> ProgramRun {
        ProgramRun {
            program: run.program,
            total_cycles: run.total_cycles,
            steps: run.steps,
            executed: run.executed,
            kernel_samples: run.kernel_samples,
            tile_totals: run.tile_totals,
            ops: run
                .ops
                .into_iter()
                .map(|op| OpCycles {
                    provenance: op.provenance,
                    op: op.op,
                    kernel_runs: op.kernel_runs,
                    kernel_model_cycles: op.ideal_cycles,
                    estimated_cycles: op.estimated_cycles,
                    achieved_cycles: op.achieved_cycles,
                    exchange_cycles: 0,
                    roofline: Roofline::default(),
                })
                .collect(),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireMeta {
    application: String,
    target: String,
    clock_hz: f64,
    tiles: u32,
    kernels: Vec<String>,
}

/// Why a profile cannot be built, written or read.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(transparent)]
    Format(#[from] FormatError),
    #[error("profile: {detail}")]
    Invalid { detail: String },
    #[error("profile: run of program '{program}': {detail}")]
    InvalidRun { program: String, detail: String },
}

fn invalid_run(run: &ProgramRun, detail: String) -> ProfileError {
    ProfileError::InvalidRun {
        program: run.program.clone(),
        detail,
    }
}

/// MACs of one call of an AMP GEMM kernel: the row count the call selects (argument 3, or
/// the largest entry) times K times C; 0 for any other kernel.
pub fn gemm_macs(spec: &KernelSpec, args: &[u32]) -> u128 {
    match spec {
        KernelSpec::Gemm { k, c, rows, .. } | KernelSpec::GemmRowMajor { k, c, rows, .. } => {
            let selected = args
                .get(3)
                .and_then(|&i| rows.get(i as usize))
                .or_else(|| rows.iter().max())
                .copied()
                .unwrap_or(0);
            u128::from(selected) * u128::from(*k) * u128::from(*c)
        }
        _ => 0,
    }
}

/// Cycles of one call of `spec` at the target's peak rate: an AMP GEMM's MACs at the AMP's
/// MACs per cycle for its input precision (the row count the call selects, argument 3); any
/// other kernel's model cycles without the launch overhead, because the vector models are
/// already written at the calibrated peak rate and only the launch is overhead.
pub fn peak_cycles(spec: &KernelSpec, args: &[u32], target: &Target) -> u64 {
    match spec {
        KernelSpec::Gemm { input, .. } | KernelSpec::GemmRowMajor { input, .. } => {
            let macs = gemm_macs(spec, args);
            let rate = u128::from(target.amp.macs_per_cycle(*input).max(1));
            u64::try_from(macs.div_ceil(rate)).unwrap_or(u64::MAX)
        }
        _ => cost::kernel_cycles(spec, target)
            .saturating_sub(u64::from(target.kernels.launch_overhead.value)),
    }
}

/// What the roofline needs of a program's static steps, by pre-order number: each compute
/// step's kernel runs (tile, kernel, arguments) and each exchange phase's busiest tile's bytes.
#[derive(Default)]
struct StaticSteps {
    compute: BTreeMap<u32, Vec<(u32, u32, Vec<u32>)>>,
    exchange_bytes: BTreeMap<u32, u64>,
}

/// The busiest tile's bytes of an exchange phase: per tile the larger of what it sends and
/// what it receives, the largest over tiles.
pub fn phase_busiest_bytes(phase: &ExchangePhase) -> u64 {
    let mut per_tile: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for send in &phase.sends {
        per_tile.entry(send.tile).or_default().0 += u64::from(send.bytes);
    }
    for receive in &phase.receives {
        per_tile.entry(receive.tile).or_default().1 += u64::from(receive.bytes);
    }
    per_tile.values().map(|&(s, r)| s.max(r)).max().unwrap_or(0)
}

fn static_steps(image: &DeviceImage, program: &str) -> StaticSteps {
    fn walk(steps: &[Step], next: &mut u32, out: &mut StaticSteps) {
        for step in steps {
            let id = *next;
            *next += 1;
            match step {
                Step::Compute(compute) => {
                    let runs = compute
                        .runs
                        .iter()
                        .map(|r| (r.tile, r.kernel, r.args.clone()))
                        .collect();
                    out.compute.insert(id, runs);
                }
                Step::Exchange(phase) => {
                    out.exchange_bytes.insert(id, phase_busiest_bytes(phase));
                }
                Step::Repeat { body, .. } => walk(body, next, out),
                _ => {}
            }
        }
    }
    let mut out = StaticSteps::default();
    if let Some(p) = image.program(program) {
        walk(&p.steps, &mut 0, &mut out);
    }
    out
}

/// The planned op a provenance belongs to: the one planned at it, or else the longest planned
/// provenance it extends by `.part` (`op0.reduce` is part of `op0`).
pub fn owning_op<'a>(
    provenance: &str,
    planned: &'a [crate::package::PlannedOp],
) -> Option<&'a crate::package::PlannedOp> {
    planned
        .iter()
        .filter(|p| {
            provenance == p.provenance
                || provenance
                    .strip_prefix(p.provenance.as_str())
                    .is_some_and(|rest| rest.starts_with('.'))
        })
        .max_by_key(|p| p.provenance.len())
}

impl ProgramRun {
    /// Cycles of the run's host steps (the host writes and reads of its streams).
    pub fn host_cycles(&self) -> u64 {
        self.executed
            .iter()
            .filter(|e| {
                self.steps.get(e.step as usize).is_some_and(|info| {
                    matches!(info.kind, StepKind::HostWrite | StepKind::HostRead)
                })
            })
            .map(|e| e.end.saturating_sub(e.start))
            .sum()
    }

    /// Cycles of the run's exchange steps (sync, fixed cost and transfers of each phase).
    pub fn exchange_cycles(&self) -> u64 {
        self.executed
            .iter()
            .filter(|e| {
                self.steps
                    .get(e.step as usize)
                    .is_some_and(|info| matches!(info.kind, StepKind::Exchange))
            })
            .map(|e| e.end.saturating_sub(e.start))
            .sum()
    }

    /// Cycles of the device program alone: the run without its host steps, the quantity the
    /// compiler's `final_cycles` and refined estimate describe.
    pub fn device_cycles(&self) -> u64 {
        self.total_cycles.saturating_sub(self.host_cycles())
    }

    /// Converts one simulator profile of `package`'s program.
    pub fn from_sim(profile: &Profile, package: &Package, target: &Target) -> ProgramRun {
        let steps: Vec<StepInfo> = profile
            .program_steps
            .iter()
            .map(|info| StepInfo {
                kind: StepKind::from_sim(info.kind),
                provenance: info.provenance.clone(),
                phase: info.phase,
            })
            .collect();
        let executed: Vec<ExecutedStep> = profile
            .steps
            .iter()
            .map(|r| ExecutedStep {
                step: r.step,
                start: r.start,
                end: r.end,
            })
            .collect();
        let kernel_samples = profile
            .compute
            .iter()
            .map(|c| KernelSample {
                executed: c.record,
                tile: c.tile,
                kernel: c.kernel,
                start: c.start,
                end: c.end,
            })
            .collect();
        let tile_totals = profile
            .tile_totals
            .iter()
            .map(|t| TileTotals {
                compute_cycles: t.compute_cycles,
                kernel_runs: t.kernel_runs,
                bytes_sent: t.bytes_sent,
                bytes_received: t.bytes_received,
            })
            .collect();

        // Per op: its work (kernel runs of its executed compute steps, exchange phases
        // feeding them), kernel runs and wall times.
        let image_steps = static_steps(&package.image, &profile.program);
        let mut achieved: BTreeMap<&str, u64> = BTreeMap::new();
        let mut fed: BTreeMap<&str, u64> = BTreeMap::new();
        let mut work: BTreeMap<&str, OpWork> = BTreeMap::new();
        let mut runs_of: BTreeMap<&str, u64> = BTreeMap::new();
        let mut modelled: BTreeMap<&str, u128> = BTreeMap::new();
        // Exchange and sync steps since the last compute step: cycles and busiest bytes.
        let mut pending = (0u64, 0u64);
        for record in &executed {
            let Some(info) = steps.get(record.step as usize) else {
                continue;
            };
            let cycles = record.end.saturating_sub(record.start);
            match (info.kind, &info.provenance) {
                (StepKind::Exchange | StepKind::Sync, _) => {
                    pending.0 += cycles;
                    pending.1 += image_steps
                        .exchange_bytes
                        .get(&record.step)
                        .copied()
                        .unwrap_or(0);
                }
                (StepKind::Compute, Some(provenance)) => {
                    let provenance = provenance.as_str();
                    *achieved.entry(provenance).or_default() += cycles;
                    *fed.entry(provenance).or_default() += pending.0;
                    let op = work.entry(provenance).or_default();
                    op.exchange_bytes += pending.1;
                    pending = (0, 0);
                    for (tile, kernel, args) in
                        image_steps.compute.get(&record.step).into_iter().flatten()
                    {
                        let Some(spec) = package.image.kernels.get(*kernel as usize) else {
                            continue;
                        };
                        op.tiles.insert(*tile);
                        *runs_of.entry(provenance).or_default() += 1;
                        let peak = peak_cycles(spec, args, target);
                        *modelled.entry(provenance).or_default() += u128::from(peak);
                        match spec {
                            KernelSpec::Gemm { input, .. }
                            | KernelSpec::GemmRowMajor { input, .. } => {
                                *op.amp_macs.entry(*input).or_default() += gemm_macs(spec, args);
                            }
                            _ => op.vector_peak_cycles += u128::from(peak),
                        }
                    }
                }
                _ => {}
            }
        }
        let tiles = u128::from(target.geometry.tiles.value.max(1));
        let planned_ops = &package.profile_plan.ops;
        let mut ops = Vec::new();
        for (provenance, achieved_cycles) in achieved {
            let planned = planned_ops.iter().find(|op| op.provenance == provenance);
            let model = modelled.get(provenance).copied().unwrap_or(0);
            let model = u64::try_from(model.div_ceil(tiles)).unwrap_or(u64::MAX);
            ops.push(OpCycles {
                provenance: provenance.to_string(),
                op: owning_op(provenance, planned_ops).map(|p| p.op.clone()),
                kernel_runs: runs_of.get(provenance).copied().unwrap_or(0),
                kernel_model_cycles: planned.map_or(model, |p| p.ideal_cycles),
                estimated_cycles: planned.map(|p| p.estimated_cycles),
                achieved_cycles,
                exchange_cycles: fed.get(provenance).copied().unwrap_or(0),
                roofline: work
                    .get(provenance)
                    .map(|w| w.roofline(target))
                    .unwrap_or_default(),
            });
        }
        ProgramRun {
            program: profile.program.clone(),
            total_cycles: profile.total_cycles,
            steps,
            executed,
            kernel_samples,
            tile_totals,
            ops,
        }
    }

    /// The name of static step `step` in every view of a profile (report, trace, query):
    /// a compute step by its op and provenance (`ipu.matmul op0`, or the provenance alone
    /// when no op is known), an exchange step by its phase (`exchange phase 3`), a host step
    /// by its stream (`host-write arg0`), others by their kind.
    pub fn step_name(&self, step: u32) -> String {
        let Some(info) = self.steps.get(step as usize) else {
            return format!("step {step}");
        };
        match (info.kind, info.phase, &info.provenance) {
            (StepKind::Compute, _, Some(provenance)) => self.op_name(provenance),
            (StepKind::Exchange, Some(phase), _) => format!("exchange phase {phase}"),
            (StepKind::HostWrite | StepKind::HostRead, _, Some(stream)) => {
                format!("{} {stream}", info.kind.name())
            }
            _ => info.kind.name().to_string(),
        }
    }

    /// An op's name in every view: `ipu.matmul op0`, or the provenance alone when the
    /// profile knows no op for it.
    pub fn op_name(&self, provenance: &str) -> String {
        match self
            .ops
            .iter()
            .find(|op| op.provenance == provenance)
            .and_then(|op| op.op.as_deref())
        {
            Some(op) => format!("{op} {provenance}"),
            None => provenance.to_string(),
        }
    }

    /// The op each executed exchange or sync step feeds (the provenance of the next executed
    /// compute step), by executed index; `None` for steps after the last compute step and for
    /// other kinds.
    pub fn fed_ops(&self) -> Vec<Option<&str>> {
        let mut out = vec![None; self.executed.len()];
        let mut next: Option<&str> = None;
        for (index, record) in self.executed.iter().enumerate().rev() {
            let Some(info) = self.steps.get(record.step as usize) else {
                continue;
            };
            match info.kind {
                StepKind::Compute => next = info.provenance.as_deref(),
                StepKind::Exchange | StepKind::Sync => out[index] = next,
                _ => {}
            }
        }
        out
    }

    /// Every sample of `tile`, in execution order: its kernel runs inside compute steps, and
    /// the global steps (exchange, sync, host) it took part in. Compute steps in which the
    /// tile ran nothing contribute no sample.
    pub fn tile_samples<'a>(&'a self, tile: u32, kernels: &'a [String]) -> Vec<TileSample<'a>> {
        let mut by_record: BTreeMap<u32, Vec<&KernelSample>> = BTreeMap::new();
        for sample in self.kernel_samples.iter().filter(|s| s.tile == tile) {
            by_record.entry(sample.executed).or_default().push(sample);
        }
        let mut out = Vec::new();
        for (index, record) in self.executed.iter().enumerate() {
            let Some(info) = self.steps.get(record.step as usize) else {
                continue;
            };
            let provenance = info.provenance.as_deref();
            if info.kind == StepKind::Compute {
                for sample in by_record.get(&(index as u32)).into_iter().flatten() {
                    out.push(TileSample {
                        executed: index as u32,
                        step: record.step,
                        kind: info.kind,
                        provenance,
                        kernel: kernels.get(sample.kernel as usize).map(String::as_str),
                        start: sample.start,
                        end: sample.end,
                    });
                }
            } else {
                out.push(TileSample {
                    executed: index as u32,
                    step: record.step,
                    kind: info.kind,
                    provenance,
                    kernel: None,
                    start: record.start,
                    end: record.end,
                });
            }
        }
        out
    }

    /// Per-tile samples of the run: one per tile per global step, one per tile per compute
    /// step the tile ran kernels in.
    pub fn sample_count(&self, tiles: u32) -> u64 {
        let mut compute_tiles: BTreeSet<(u32, u32)> = BTreeSet::new();
        for sample in &self.kernel_samples {
            compute_tiles.insert((sample.executed, sample.tile));
        }
        let global = self
            .executed
            .iter()
            .filter(|r| {
                self.steps
                    .get(r.step as usize)
                    .is_some_and(|i| i.kind != StepKind::Compute)
            })
            .count() as u64;
        global * u64::from(tiles) + compute_tiles.len() as u64
    }

    fn validate(&self, tiles: u32, kernels: usize) -> Result<(), ProfileError> {
        if self.tile_totals.len() != tiles as usize {
            return Err(invalid_run(
                self,
                format!("{} tile totals for {tiles} tiles", self.tile_totals.len()),
            ));
        }
        for (index, record) in self.executed.iter().enumerate() {
            if record.step as usize >= self.steps.len() {
                return Err(invalid_run(
                    self,
                    format!(
                        "executed step {index} is step {}, the program has {}",
                        record.step,
                        self.steps.len()
                    ),
                ));
            }
            if record.start > record.end || record.end > self.total_cycles {
                return Err(invalid_run(
                    self,
                    format!(
                        "executed step {index} spans cycles {}..{}, the run has {}",
                        record.start, record.end, self.total_cycles
                    ),
                ));
            }
        }
        for (index, sample) in self.kernel_samples.iter().enumerate() {
            let record = self.executed.get(sample.executed as usize).ok_or_else(|| {
                invalid_run(
                    self,
                    format!(
                        "kernel sample {index} refers to executed step {}, there are {}",
                        sample.executed,
                        self.executed.len()
                    ),
                )
            })?;
            if self.steps[record.step as usize].kind != StepKind::Compute {
                return Err(invalid_run(
                    self,
                    format!("kernel sample {index} lies in a non-compute step"),
                ));
            }
            if sample.tile >= tiles || sample.kernel as usize >= kernels {
                return Err(invalid_run(
                    self,
                    format!(
                        "kernel sample {index}: tile {} kernel {} (profile has {tiles} tiles, {kernels} kernels)",
                        sample.tile, sample.kernel
                    ),
                ));
            }
            if sample.start > sample.end || sample.end > self.total_cycles {
                return Err(invalid_run(
                    self,
                    format!(
                        "kernel sample {index} spans cycles {}..{}, the run has {}",
                        sample.start, sample.end, self.total_cycles
                    ),
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for op in &self.ops {
            if !seen.insert(op.provenance.as_str()) {
                return Err(invalid_run(
                    self,
                    format!("op '{}' is listed twice", op.provenance),
                ));
            }
        }
        Ok(())
    }
}

impl ProfileFile {
    /// A profile of `runs` (simulator profiles of `package`'s programs).
    pub fn from_sim(package: &Package, target: &Target, runs: &[Profile]) -> ProfileFile {
        ProfileFile {
            compiler: COMPILER_VERSION.to_string(),
            application: package.name.clone(),
            target: target.name.clone(),
            clock_hz: target.clock_hz.value,
            tiles: target.geometry.tiles.value,
            kernels: package.image.kernels.iter().map(KernelSpec::name).collect(),
            runs: runs
                .iter()
                .map(|p| ProgramRun::from_sim(p, package, target))
                .collect(),
            memory: package.memory.clone(),
        }
    }

    /// Samples over all runs (see [`ProgramRun::sample_count`]).
    pub fn sample_count(&self) -> u64 {
        self.runs.iter().map(|r| r.sample_count(self.tiles)).sum()
    }

    pub fn validate(&self) -> Result<(), ProfileError> {
        if self.tiles == 0 || self.tiles > MAX_TILES {
            return Err(ProfileError::Invalid {
                detail: format!("tile count {} is outside 1..={MAX_TILES}", self.tiles),
            });
        }
        if !(self.clock_hz.is_finite() && self.clock_hz > 0.0) {
            return Err(ProfileError::Invalid {
                detail: format!("clock {} Hz is not a positive number", self.clock_hz),
            });
        }
        for run in &self.runs {
            run.validate(self.tiles, self.kernels.len())?;
        }
        self.memory
            .validate(self.tiles)
            .map_err(|detail| ProfileError::Invalid {
                detail: format!("memory plan: {detail}"),
            })?;
        Ok(())
    }

    pub fn to_bytes(&self) -> Result<Vec<u8>, ProfileError> {
        self.validate()?;
        let spec = &PROFILE_SPEC;
        let meta = WireMeta {
            application: self.application.clone(),
            target: self.target.clone(),
            clock_hz: self.clock_hz,
            tiles: self.tiles,
            kernels: self.kernels.clone(),
        };
        let sections = vec![
            container::to_section(spec, "meta", &meta)?,
            container::to_section(spec, "runs", &self.runs)?,
            container::to_section(spec, "memory", &self.memory)?,
        ];
        Ok(container::encode(spec, &self.compiler, &sections)?)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ProfileFile, ProfileError> {
        // The layout version the file declares picks the spec: version 1 has no memory
        // section and ops without rooflines; any other goes to the current spec (which names
        // a version it does not read).
        let declared = bytes
            .get(8..12)
            .filter(|_| bytes.starts_with(&PROFILE_SPEC.magic))
            .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]));
        let spec = if declared == Some(1) {
            &PROFILE_SPEC_V1
        } else {
            &PROFILE_SPEC
        };
        let file = container::decode(spec, bytes)?;
        let (meta, runs, memory) = match file.sections[..] {
            [meta, runs] if spec.version == 1 => {
                let legacy: Vec<ProgramRunV1> = container::from_section(spec, &runs)?;
                (
                    meta,
                    legacy.into_iter().map(ProgramRun::from).collect(),
                    None,
                )
            }
            [meta, runs, memory] => (
                meta,
                container::from_section::<Vec<ProgramRun>>(spec, &runs)?,
                Some(memory),
            ),
            _ => {
                return Err(ProfileError::Invalid {
                    detail: "section table size".into(),
                })
            }
        };
        let meta: WireMeta = container::from_section(spec, &meta)?;
        let memory: MemoryPlan = match memory {
            Some(section) => container::from_section(spec, &section)?,
            None => MemoryPlan::default(),
        };
        let profile = ProfileFile {
            compiler: file.compiler,
            application: meta.application,
            target: meta.target,
            clock_hz: meta.clock_hz,
            tiles: meta.tiles,
            kernels: meta.kernels,
            runs,
            memory,
        };
        profile.validate()?;
        Ok(profile)
    }

    /// Writes atomically (temporary file, then rename).
    pub fn write(&self, path: &Path) -> Result<(), ProfileError> {
        let bytes = self.to_bytes()?;
        container::write_atomic(PROFILE_SPEC.name, path, &bytes)?;
        info!(
            path = %path.display(),
            tiles = self.tiles,
            samples = self.sample_count(),
            "profile written"
        );
        Ok(())
    }

    pub fn read(path: &Path) -> Result<ProfileFile, ProfileError> {
        let bytes = container::read_file(PROFILE_SPEC.name, path, MAX_PROFILE_BYTES)?;
        Self::from_bytes(&bytes)
    }
}
