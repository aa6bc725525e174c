//! The `.ipuprof` cycle profile: what one session's profiled program runs did on every tile.
//!
//! Built from the simulator's [`ipu_device::sim::Profile`] (or, later, from a hardware trace)
//! and the package that ran. Per run it records
//! * the program's static steps (kind, op provenance as an MLIR location, exchange phase),
//! * every executed step with its start and end cycle (exchange, sync and host steps are
//!   global BSP steps: every tile spends them together, so they are stored once),
//! * every kernel run per tile (tile, kernel, start, end) inside its compute step,
//! * per op: the ideal cycles (the kernel model at peak rate over every tile) and the
//!   achieved cycles (wall time of the op's compute steps), so a report can show how far each
//!   op is from its roofline.
//!
//! [`ProgramRun::tile_samples`] expands this into the per-tile, per-step view.
//!
//! ## File layout
//! A [`crate::container`] file (magic "\x89IPUPRF\n") with two postcard sections: `meta`
//! (compiler, application, target, clock, tiles, kernel names) and `runs`. The format owns its
//! types rather than serializing the simulator's, so the simulator can change without
//! changing the files people keep.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use ipu_device::image::{DeviceImage, Step};
use ipu_device::sim::{self, Profile};
use ipu_device::{cost, KernelSpec, Target};
use serde::{Deserialize, Serialize};
use tracing::info;

use crate::container::{self, FormatError, FormatSpec};
use crate::package::{Package, COMPILER_VERSION};

/// Version of the `.ipuprof` layout.
pub const PROFILE_FORMAT_VERSION: u32 = 1;

pub const PROFILE_SPEC: FormatSpec = FormatSpec {
    name: "profile",
    magic: *b"\x89IPUPRF\n",
    version: PROFILE_FORMAT_VERSION,
    sections: &[(1, "meta"), (2, "runs")],
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

/// Ideal and achieved cycles of one op.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpCycles {
    pub provenance: String,
    /// The op name from the package's profile plan, when it has one.
    pub op: Option<String>,
    pub kernel_runs: u64,
    /// The op's work at peak rate spread over every tile: the package plan's figure, or the
    /// kernel models at peak (see [`peak_cycles`]) summed and divided by the tile count.
    pub ideal_cycles: u64,
    /// The planner's estimate, when the package's plan has one.
    pub estimated_cycles: Option<u64>,
    /// Wall time of the op's executed compute steps (first tile start to last tile end).
    pub achieved_cycles: u64,
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

/// Cycles of one call of `spec` at the target's peak rate: an AMP GEMM's MACs at the AMP's
/// MACs per cycle for its input precision (the row count the call selects, argument 3); any
/// other kernel's model cycles without the launch overhead, because the vector models are
/// already written at the calibrated peak rate and only the launch is overhead.
pub fn peak_cycles(spec: &KernelSpec, args: &[u32], target: &Target) -> u64 {
    match spec {
        KernelSpec::Gemm {
            input, k, c, rows, ..
        } => {
            let selected = args
                .get(3)
                .and_then(|&i| rows.get(i as usize))
                .or_else(|| rows.iter().max())
                .copied()
                .unwrap_or(0);
            let macs = u128::from(selected) * u128::from(*k) * u128::from(*c);
            let rate = u128::from(target.amp.macs_per_cycle(*input).max(1));
            u64::try_from(macs.div_ceil(rate)).unwrap_or(u64::MAX)
        }
        _ => cost::kernel_cycles(spec, target)
            .saturating_sub(u64::from(target.kernels.launch_overhead.value)),
    }
}

/// Compute steps of a program by pre-order number.
fn compute_steps(image: &DeviceImage, program: &str) -> BTreeMap<u32, Vec<(u32, Vec<u32>)>> {
    fn walk(steps: &[Step], next: &mut u32, out: &mut BTreeMap<u32, Vec<(u32, Vec<u32>)>>) {
        for step in steps {
            let id = *next;
            *next += 1;
            match step {
                Step::Compute(compute) => {
                    let runs = compute
                        .runs
                        .iter()
                        .map(|r| (r.kernel, r.args.clone()))
                        .collect();
                    out.insert(id, runs);
                }
                Step::Repeat { body, .. } => walk(body, next, out),
                _ => {}
            }
        }
    }
    let mut out = BTreeMap::new();
    if let Some(p) = image.program(program) {
        walk(&p.steps, &mut 0, &mut out);
    }
    out
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

        // Per op: executions of each of its compute steps, kernel runs and wall time.
        let image_steps = compute_steps(&package.image, &profile.program);
        let mut executions: BTreeMap<u32, u64> = BTreeMap::new();
        let mut achieved: BTreeMap<&str, u64> = BTreeMap::new();
        for record in &executed {
            let Some(info) = steps.get(record.step as usize) else {
                continue;
            };
            if let (StepKind::Compute, Some(provenance)) = (info.kind, &info.provenance) {
                *executions.entry(record.step).or_default() += 1;
                *achieved.entry(provenance.as_str()).or_default() +=
                    record.end.saturating_sub(record.start);
            }
        }
        let tiles = u128::from(target.geometry.tiles.value.max(1));
        let mut ops = Vec::new();
        for (provenance, achieved_cycles) in achieved {
            let mut peak_total = 0u128;
            let mut kernel_runs = 0u64;
            for (step, count) in &executions {
                let matches = steps
                    .get(*step as usize)
                    .and_then(|i| i.provenance.as_deref())
                    == Some(provenance);
                if !matches {
                    continue;
                }
                for (kernel, args) in image_steps.get(step).into_iter().flatten() {
                    if let Some(spec) = package.image.kernels.get(*kernel as usize) {
                        peak_total +=
                            u128::from(peak_cycles(spec, args, target)) * u128::from(*count);
                    }
                    kernel_runs += count;
                }
            }
            let planned = package
                .profile_plan
                .ops
                .iter()
                .find(|op| op.provenance == provenance);
            let modelled = u64::try_from(peak_total.div_ceil(tiles)).unwrap_or(u64::MAX);
            ops.push(OpCycles {
                provenance: provenance.to_string(),
                op: planned.map(|p| p.op.clone()),
                kernel_runs,
                ideal_cycles: planned.map_or(modelled, |p| p.ideal_cycles),
                estimated_cycles: planned.map(|p| p.estimated_cycles),
                achieved_cycles,
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
        ];
        Ok(container::encode(spec, &self.compiler, &sections)?)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<ProfileFile, ProfileError> {
        let spec = &PROFILE_SPEC;
        let file = container::decode(spec, bytes)?;
        let [meta, runs] = file.sections[..] else {
            return Err(ProfileError::Invalid {
                detail: "section table size".into(),
            });
        };
        let meta: WireMeta = container::from_section(spec, &meta)?;
        let runs: Vec<ProgramRun> = container::from_section(spec, &runs)?;
        let profile = ProfileFile {
            compiler: file.compiler,
            application: meta.application,
            target: meta.target,
            clock_hz: meta.clock_hz,
            tiles: meta.tiles,
            kernels: meta.kernels,
            runs,
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
