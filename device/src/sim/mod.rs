//! The BSP simulator of a whole IPU: it loads a [`DeviceImage`] into lazily allocated tile
//! SRAMs, refuses what hardware would punish (`hardwareTest`), runs programs superstep by
//! superstep and returns a cycle [`Profile`].
//!
//! ## Use
//! ```ignore
//! let mut sim = Simulator::new(Target::c600(), runner);
//! sim.load(&image)?;                  // validation + hazard analysis + initial segments
//! sim.write_stream("weights", &w)?;   // staged; copied in by the program's HostWrite step
//! sim.run("initialize")?;
//! sim.write_stream("x", &x)?;
//! let profile = sim.run("run")?;
//! let y = sim.read_stream("y")?;      // captured by the program's HostRead step
//! ```
//! Host data is staged per stream and stays staged until replaced; a HostWrite step without
//! staged data is an error. `read_memory`/`write_memory` give direct access for tests and
//! debugging.
//!
//! ## Hazards are found at load
//! Every hazard depends only on the image, not on memory contents: kernel operand ranges come
//! from specs and arguments, exchange conflicts from the encoded schedules. [`Simulator::load`]
//! therefore analyses every step once (a repeat body once, however often it runs) and refuses
//! the image with an error naming program, step, phase, tile and address range. A program
//! whose repeats would execute more steps than [`SimOptions::max_executed_steps`] is refused
//! as one that never completes.
//!
//! ## Timing (cycles from the same target table the planner uses)
//! Each tile has its own clock. A compute step advances each listed tile's clock by
//! `cost::kernel_cycles` of each of its runs; tiles not listed do not move. A `Sync` brings
//! every tile to the latest clock plus `exchange.sync_cycles`. An exchange phase starts when
//! the last tile arrives (its fixed cost includes the global sync) and ends
//! `exchange.phase_cycles` + horizon later for every tile (see `exchange`). Host steps are
//! charged like an exchange phase whose receivers (or senders) are the bound tiles: the host
//! link's own bandwidth is not in the target table, so this is a stand-in.
//! All arithmetic is integer and parallel results are combined in tile order, so cycles and
//! memory are identical with any thread count.

mod error;
mod exchange;
mod memory;
mod plan;
mod profile;

use std::collections::BTreeMap;
use std::sync::Arc;

pub use error::{Cycles, SimError, StepAt};
pub use profile::{ComputeRecord, Profile, ProgramStepInfo, StepKind, StepRecord, TileTotals};

use exchange::CodeElements;
use memory::TileMemories;
use plan::{LoadedProgram, Node, Planner};

use crate::image::{
    AddressRange, DeviceImage, ExchangePhase, ImageSummary, StreamBinding, StreamDirection,
};
use crate::kernels::spec::{KernelRunner, KernelSpec};
use crate::target::Target;

/// Simulator limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Largest number of steps one program run may execute (repeat iterations included)
    /// before it is refused as never completing.
    pub max_executed_steps: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            max_executed_steps: 10_000_000,
        }
    }
}

/// What [`Simulator::load`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadReport {
    pub summary: ImageSummary,
    /// Tiles whose SRAM got allocated by loading segments.
    pub tiles_allocated: usize,
    /// Executed steps per program, by program name.
    pub executed_steps: BTreeMap<String, u64>,
}

struct Loaded {
    kernels: Vec<KernelSpec>,
    streams: Vec<StreamBinding>,
    programs: Vec<LoadedProgram>,
}

/// A simulated IPU. See the module docs.
pub struct Simulator {
    target: Target,
    runner: Arc<dyn KernelRunner>,
    options: SimOptions,
    memory: TileMemories,
    loaded: Option<Loaded>,
    host_inputs: BTreeMap<String, Vec<u8>>,
    host_outputs: BTreeMap<String, Vec<u8>>,
    /// Exchange payload buffer, reused across phases and runs.
    staging: Vec<u8>,
}

impl Simulator {
    pub fn new(target: Target, runner: Arc<dyn KernelRunner>) -> Self {
        let memory = TileMemories::new(&target);
        Simulator {
            target,
            runner,
            options: SimOptions::default(),
            memory,
            loaded: None,
            host_inputs: BTreeMap::new(),
            host_outputs: BTreeMap::new(),
            staging: Vec::new(),
        }
    }

    pub fn with_options(mut self, options: SimOptions) -> Self {
        self.options = options;
        self
    }

    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Validates `image` against the target, checks every hazard, then resets the device and
    /// writes the initial segments. On error the device is left as it was.
    pub fn load(&mut self, image: &DeviceImage) -> Result<LoadReport, SimError> {
        let summary = image.validate(&self.target)?;
        let code = code_elements(&self.target, image);
        let planner = Planner::new(&self.target, image, &code, self.options.max_executed_steps);
        let programs = image
            .programs
            .iter()
            .map(|program| planner.program(&program.name, &program.steps))
            .collect::<Result<Vec<_>, _>>()?;
        let mut memory = TileMemories::new(&self.target);
        for tile in &image.tiles {
            for segment in &tile.segments {
                memory.write(tile.tile, segment.address, &segment.bytes)?;
            }
        }
        let executed_steps = programs
            .iter()
            .map(|p| (p.name.clone(), plan::executed_steps(&p.nodes)))
            .collect();
        self.memory = memory;
        self.host_inputs.clear();
        self.host_outputs.clear();
        tracing::debug!(
            target = %self.target.name,
            tiles_allocated = self.memory.allocated_tiles(),
            segment_bytes = summary.segment_bytes,
            kernel_runs = summary.kernel_runs,
            transfers = summary.transfers,
            "simulator image loaded"
        );
        self.loaded = Some(Loaded {
            kernels: image.kernels.clone(),
            streams: image.streams.clone(),
            programs,
        });
        Ok(LoadReport {
            summary,
            tiles_allocated: self.memory.allocated_tiles(),
            executed_steps,
        })
    }

    fn loaded(&self) -> Result<&Loaded, SimError> {
        self.loaded.as_ref().ok_or(SimError::NoImage)
    }

    fn stream(&self, name: &str) -> Result<&StreamBinding, SimError> {
        self.loaded()?
            .streams
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| SimError::UnknownStream {
                stream: name.to_string(),
            })
    }

    /// Stages host bytes for a host-to-device stream; the program's `HostWrite` step copies
    /// them into tile memory. The length must equal the stream's.
    pub fn write_stream(&mut self, name: &str, bytes: &[u8]) -> Result<(), SimError> {
        let stream = self.stream(name)?;
        if stream.direction != StreamDirection::HostToDevice {
            return Err(SimError::StreamDirection {
                stream: name.to_string(),
                direction: "device-to-host",
                operation: "write_stream",
            });
        }
        // One slice per write, or several (a stack written once per repeat iteration: the
        // e-th write of a run streams slice e).
        let slice = stream.bytes();
        let whole = bytes.len() as u64;
        let whole_slices = if slice == 0 {
            whole == 0
        } else {
            whole != 0 && whole.is_multiple_of(slice)
        };
        if !whole_slices {
            return Err(SimError::StreamLength {
                stream: name.to_string(),
                expected: slice,
                found: whole,
            });
        }
        self.host_inputs.insert(name.to_string(), bytes.to_vec());
        Ok(())
    }

    /// The bytes the last `HostRead` step of this device-to-host stream captured.
    pub fn read_stream(&self, name: &str) -> Result<&[u8], SimError> {
        let stream = self.stream(name)?;
        if stream.direction != StreamDirection::DeviceToHost {
            return Err(SimError::StreamDirection {
                stream: name.to_string(),
                direction: "host-to-device",
                operation: "read_stream",
            });
        }
        self.host_outputs
            .get(name)
            .map(Vec::as_slice)
            .ok_or_else(|| SimError::StreamNotRead {
                stream: name.to_string(),
            })
    }

    /// Reads tile memory directly (untouched tiles read as zeros and stay unallocated).
    pub fn read_memory(&self, tile: u32, address: u32, bytes: usize) -> Result<Vec<u8>, SimError> {
        self.memory.read(tile, address, bytes)
    }

    /// Writes tile memory directly, outside any program.
    pub fn write_memory(&mut self, tile: u32, address: u32, bytes: &[u8]) -> Result<(), SimError> {
        self.memory.write(tile, address, bytes)
    }

    /// Tiles that own simulated SRAM.
    pub fn allocated_tiles(&self) -> usize {
        self.memory.allocated_tiles()
    }

    /// Bytes of simulated SRAM allocated (address space; the OS commits pages on write).
    pub fn allocated_bytes(&self) -> u64 {
        self.memory.allocated_bytes()
    }

    pub fn is_tile_allocated(&self, tile: u32) -> bool {
        self.memory.is_allocated(tile)
    }

    /// Runs the named program from cycle 0 and returns its profile.
    pub fn run(&mut self, program: &str) -> Result<Profile, SimError> {
        let loaded = self.loaded.take().ok_or(SimError::NoImage)?;
        let result = self.run_loaded(&loaded, program);
        self.loaded = Some(loaded);
        result
    }

    fn run_loaded(&mut self, loaded: &Loaded, name: &str) -> Result<Profile, SimError> {
        let _span = tracing::debug_span!("ipu.sim.run", program = name).entered();
        let program = loaded
            .programs
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| SimError::UnknownProgram {
                name: name.to_string(),
                known: loaded
                    .programs
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        let tiles = self.target.geometry.tiles.value;
        let mut run = Run {
            sim: self,
            loaded,
            program,
            clocks: vec![0; tiles as usize],
            profile: Profile {
                target: String::new(),
                program: name.to_string(),
                clock_hz: 0.0,
                tiles,
                total_cycles: 0,
                program_steps: program.infos.clone(),
                steps: Vec::new(),
                compute: Vec::new(),
                tile_totals: vec![TileTotals::default(); tiles as usize],
            },
            writes: BTreeMap::new(),
        };
        run.nodes(&program.nodes)?;
        let total = run.latest();
        let mut profile = run.profile;
        profile.target = self.target.name.clone();
        profile.clock_hz = self.target.clock_hz.value;
        profile.total_cycles = total;
        tracing::debug!(
            total_cycles = total,
            device_cycles = profile.device_cycles(),
            host_cycles = profile.host_cycles(),
            executed_steps = profile.steps.len(),
            tiles_allocated = self.memory.allocated_tiles(),
            "simulator run finished"
        );
        Ok(profile)
    }
}

/// Checks one encoded exchange phase exactly as loading would: sender buses, receiver
/// occupancy, overlapping writes and memory-element hazards (send-read vs receive-write, and
/// exchange access to elements holding code, from `code`: per tile, its code ranges).
/// The compiler uses it to validate a schedule whose rows were relocated.
pub fn check_exchange_phase(
    target: &Target,
    phase: &ExchangePhase,
    code: &[(u32, AddressRange)],
    program: &str,
    step: u32,
) -> Result<(), SimError> {
    let mut image = DeviceImage::new(target.name.clone());
    for &(tile, range) in code {
        image.tile_mut(tile).code.push(range);
    }
    let elements = code_elements(target, &image);
    let at = StepAt {
        program: program.to_string(),
        step,
        phase: Some(phase.phase),
    };
    exchange::analyse(target, phase, &elements, &at).map(|_| ())
}

/// Memory-element indices that hold declared code, per tile.
fn code_elements(target: &Target, image: &DeviceImage) -> CodeElements {
    let mut code = CodeElements::new();
    for tile in image.tiles.iter().filter(|t| !t.code.is_empty()) {
        let mut elements = Vec::new();
        for range in &tile.code {
            let mut cursor = u64::from(range.start);
            while cursor < range.end() {
                let Ok(element) = target.element_of(cursor as u32) else {
                    break;
                };
                elements.push(element.index);
                cursor = u64::from(element.start) + u64::from(element.bytes);
            }
        }
        elements.sort_unstable();
        elements.dedup();
        code.insert(tile.tile, elements);
    }
    code
}

/// State of one program run.
struct Run<'a> {
    sim: &'a mut Simulator,
    loaded: &'a Loaded,
    program: &'a LoadedProgram,
    clocks: Vec<u64>,
    profile: Profile,
    /// Writes of each host-to-device stream so far in this run (write e streams slice e).
    writes: BTreeMap<usize, u64>,
}

impl Run<'_> {
    fn latest(&self) -> u64 {
        self.clocks.iter().copied().max().unwrap_or(0)
    }

    fn at(&self, step: u32) -> StepAt {
        StepAt {
            program: self.program.name.clone(),
            step,
            phase: None,
        }
    }

    /// Brings every tile to `end` and records a global step that began at `start`.
    fn global_step(&mut self, step: u32, start: u64, end: u64) {
        self.clocks.fill(end);
        self.profile.steps.push(StepRecord { step, start, end });
    }

    fn nodes(&mut self, nodes: &[Node]) -> Result<(), SimError> {
        for node in nodes {
            match node {
                Node::Compute { step, runs, groups } => self.compute(*step, runs, groups)?,
                Node::Exchange { step, plan } => {
                    let start = self.latest();
                    plan.apply(&mut self.sim.memory, &mut self.sim.staging)?;
                    for (tile, sent, received) in plan.traffic() {
                        let totals = &mut self.profile.tile_totals[tile as usize];
                        totals.bytes_sent += sent;
                        totals.bytes_received += received;
                    }
                    let end = start
                        + u64::from(self.sim.target.exchange.phase_cycles.value)
                        + plan.horizon;
                    self.global_step(*step, start, end);
                }
                Node::Sync { step } => {
                    let start = self.latest();
                    self.global_step(
                        *step,
                        start,
                        start + u64::from(self.sim.target.exchange.sync_cycles.value),
                    );
                }
                Node::Repeat { count, body } => {
                    for _ in 0..*count {
                        self.nodes(body)?;
                    }
                }
                Node::Host {
                    step,
                    write,
                    stream,
                } => self.host(*step, *write, *stream)?,
            }
        }
        Ok(())
    }

    fn compute(
        &mut self,
        step: u32,
        runs: &[plan::PlannedRun],
        groups: &[memory::TileGroup],
    ) -> Result<(), SimError> {
        let kernels = &self.loaded.kernels;
        let runner = &self.sim.runner;
        let results = self
            .sim
            .memory
            .par_for_groups(groups, |tile, tile_memory, rows| {
                for run in &runs[rows] {
                    let spec = &kernels[run.kernel as usize];
                    if let Err(error) = runner.run(spec, tile_memory, &run.args) {
                        return Err((tile, spec.name(), error.to_string()));
                    }
                }
                Ok(())
            });
        // Report the lowest failing tile, whatever the thread count.
        if let Some(Err((tile, kernel, detail))) = results.into_iter().find(|r| r.is_err()) {
            return Err(SimError::KernelFailed {
                at: self.at(step),
                tile,
                kernel,
                detail,
            });
        }
        let record = self.profile.steps.len() as u32;
        let (mut first, mut last) = (u64::MAX, 0);
        for run in runs {
            let clock = &mut self.clocks[run.tile as usize];
            let start = *clock;
            *clock += run.cycles;
            first = first.min(start);
            last = last.max(*clock);
            self.profile.compute.push(ComputeRecord {
                record,
                tile: run.tile,
                kernel: run.kernel,
                start,
                end: *clock,
            });
            let totals = &mut self.profile.tile_totals[run.tile as usize];
            totals.compute_cycles += run.cycles;
            totals.kernel_runs += 1;
        }
        if runs.is_empty() {
            first = self.latest();
            last = first;
        }
        self.profile.steps.push(StepRecord {
            step,
            start: first,
            end: last,
        });
        Ok(())
    }

    fn host(&mut self, step: u32, write: bool, stream_index: usize) -> Result<(), SimError> {
        let stream = &self.loaded.streams[stream_index];
        let mut per_tile: BTreeMap<u32, u64> = BTreeMap::new();
        if write {
            let data = self.sim.host_inputs.get(&stream.name).ok_or_else(|| {
                SimError::StreamNotWritten {
                    at: self.at(step),
                    stream: stream.name.clone(),
                }
            })?;
            // The e-th write of the run streams slice e of the host data; data of one slice
            // is streamed by every write.
            let write = self.writes.entry(stream_index).or_default();
            let slices = (data.len() as u64)
                .checked_div(stream.bytes())
                .unwrap_or(1)
                .max(1);
            if slices > 1 && *write >= slices {
                return Err(SimError::StreamExhausted {
                    at: self.at(step),
                    stream: stream.name.clone(),
                    slices,
                });
            }
            let mut offset = if slices > 1 {
                (*write * stream.bytes()) as usize
            } else {
                0
            };
            *write += 1;
            for slice in &stream.slices {
                let end = offset + slice.bytes as usize;
                self.sim
                    .memory
                    .write(slice.tile, slice.address, &data[offset..end])?;
                offset = end;
                *per_tile.entry(slice.tile).or_default() += u64::from(slice.bytes);
                self.profile.tile_totals[slice.tile as usize].bytes_received +=
                    u64::from(slice.bytes);
            }
        } else {
            let mut data = vec![0u8; stream.bytes() as usize];
            let mut offset = 0usize;
            for slice in &stream.slices {
                let end = offset + slice.bytes as usize;
                self.sim
                    .memory
                    .read_into(slice.tile, slice.address, &mut data[offset..end])?;
                offset = end;
                *per_tile.entry(slice.tile).or_default() += u64::from(slice.bytes);
                self.profile.tile_totals[slice.tile as usize].bytes_sent += u64::from(slice.bytes);
            }
            self.sim.host_outputs.insert(stream.name.clone(), data);
        }
        let busiest = per_tile.values().copied().max().unwrap_or(0);
        let total = per_tile.values().sum();
        let start = self.latest();
        let end = start + crate::cost::host_stream_cycles(busiest, total, &self.sim.target);
        self.global_step(step, start, end);
        Ok(())
    }
}
