//! Lowering from the (planned) `ipu` graph to tiles and to the runtime's package.
//!
//! Stages, each its own module and each reading and refining one [`program::TileProgram`]:
//! lower to tiles ([`lower_graph`], per op: [`gemm`]), storage placement ([`place`]),
//! exchange lowering ([`exchange`]), package emission ([`package`]). Each stage is a pass
//! ([`passes`]); `ipu-compile` ([`crate::compile`]) is the pipeline of them all.

pub mod exchange;
pub mod gemm;
pub mod graph;
pub mod ir;
pub mod optimize;
pub mod package;
pub mod passes;
pub mod place;
pub use crate::tiling::program;

use std::collections::BTreeMap;

use ipu_device::Target;

use crate::strategies::gemm::{followed_grid as followed_gemm_grid, GemmGrid};
use crate::tiling::{Graph, ValueId};
use ipu_dialects::plan::OperatorPlan;
use program::{TileProgram, TileStep};

/// Errors of the lowering stages.
#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("{op}: {detail}")]
    Unsupported { op: String, detail: String },
    #[error(
        "tile {tile} needs {needed} B of {class} memory for {buffer}, {free} B free \
         (short by {shortfall} B); largest live: {largest}"
    )]
    OutOfMemory {
        tile: u32,
        class: &'static str,
        buffer: String,
        needed: u64,
        free: u64,
        shortfall: u64,
        largest: String,
    },
    #[error(
        "tile {tile} needs {needed} B of {class} memory for {buffer}; {free} B are free but \
         fragmented: no aligned range holds it (a buffer of at most one 16 KiB memory element \
         must not straddle two); largest live: {largest}"
    )]
    Fragmented {
        tile: u32,
        class: &'static str,
        buffer: String,
        needed: u64,
        free: u64,
        largest: String,
    },
    #[error("buffer {buffer} has no address (run storage placement first)")]
    Unplaced { buffer: String },
    #[error("exchange phase {phase}: {detail}")]
    Exchange { phase: u32, detail: String },
    #[error("kernel {kernel}: {detail}")]
    Kernel { kernel: String, detail: String },
    #[error("package: {0}")]
    Package(String),
    #[error("{0}")]
    Input(String),
}

impl From<ipu_dialects::tile::AttributeError> for LowerError {
    fn from(error: ipu_dialects::tile::AttributeError) -> LowerError {
        LowerError::Input(error.to_string())
    }
}

pub(crate) use crate::tiling::candidate::returned_only;
pub use crate::tiling::PrecisionPolicy;

/// What the lowering needs besides the graph.
#[derive(Debug, Clone)]
pub struct LowerOptions {
    pub target: Target,
    pub tiles: u32,
    pub precision: PrecisionPolicy,
    pub fp8_scale: i32,
}

/// Lowers a graph to a tile program. `constants` holds the C-order bytes of every constant
/// value (in its element type).
pub fn lower_graph(
    name: &str,
    graph: &Graph,
    constants: &BTreeMap<ValueId, Vec<u8>>,
    options: &LowerOptions,
) -> Result<TileProgram, LowerError> {
    lower_planned_graph(name, graph, &[], constants, &BTreeMap::new(), options)
}

/// The grid the lowering uses for a matmul: the selected plan's (an output-stationary grid the
/// GEMM lowering implements: no batch or K split, one K panel, normal orientation, equal
/// column blocks); a plan it cannot follow is an error naming the plan and why. Without a
/// plan (a graph lowered unplanned), the lowering's own grid.
fn gemm_grid(
    dims: (u32, u32, u32),
    plan: Option<&OperatorPlan>,
    tiles: u32,
    op: usize,
) -> Result<GemmGrid, LowerError> {
    match plan {
        Some(plan) => {
            followed_gemm_grid(dims, plan, tiles).map_err(|reason| LowerError::Unsupported {
                op: "ipu.matmul".into(),
                detail: format!("op {op}: plan {plan} cannot be followed: {reason}"),
            })
        }
        None => {
            GemmGrid::new(dims.0, dims.1, dims.2, tiles).map_err(|detail| LowerError::Unsupported {
                op: "ipu.matmul".into(),
                detail,
            })
        }
    }
}

/// [`lower_graph`] following the selected plan of each op where the lowering implements it
/// (`plans[i]` for op i; missing entries: no plan).
pub use self::graph::lower as lower_planned_graph;

/// Modelled cycles of one compute step: the busiest tile's sum of its kernels' cycles.
fn step_cycles(program: &TileProgram, runs: &[program::Run], target: &Target) -> u64 {
    let mut per_tile: BTreeMap<u32, u64> = BTreeMap::new();
    for run in runs {
        if let Some(spec) = program.kernels.get(run.kernel as usize) {
            *per_tile.entry(run.tile).or_default() += ipu_device::cost::kernel_cycles(spec, target);
        }
    }
    per_tile.into_values().max().unwrap_or(0)
}

/// Modelled compute cycles of the `run` program: per compute step, the busiest tile's sum of
/// its kernels' cycles (`ipu_device::cost`, the simulator's own table).
pub(crate) fn compute_cycles(program: &TileProgram, target: &Target) -> u64 {
    let times = TileProgram::multiplicities(&program.run);
    program
        .run
        .iter()
        .zip(times)
        .map(|(step, times)| {
            times
                * match step {
                    TileStep::Compute { runs, provenance } => {
                        let cycles = step_cycles(program, runs, target);
                        tracing::debug!(step = %provenance, cycles, "costed compute step");
                        cycles
                    }
                    _ => 0,
                }
        })
        .sum()
}

/// The final program's cycles per op, for comparing with the planner's per-op estimates:
/// `(op, cycles, exchange)` in program order, where an op is a compute step's provenance up
/// to its first `.` (`op4.scores` belongs to `op4`) and an exchange phase belongs to the op of
/// the next compute step (the op whose operands it gathers); phases after the last compute
/// step belong to `(read-back)`. `phase_cycles` maps a phase to its scheduled cycles.
pub(crate) fn op_cycles(
    program: &TileProgram,
    phase_cycles: &BTreeMap<u32, u64>,
    target: &Target,
) -> Vec<(String, u64, u64)> {
    let times = TileProgram::multiplicities(&program.run);
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    let mut pending = 0u64;
    for (step, times) in program.run.iter().zip(times) {
        match step {
            TileStep::Exchange { phase, .. } => {
                pending += times * phase_cycles.get(phase).copied().unwrap_or(0);
            }
            TileStep::Compute { runs, provenance } => {
                let compute = times * step_cycles(program, runs, target);
                let op = provenance.split('.').next().unwrap_or(provenance);
                match out.last_mut() {
                    Some(last) if last.0 == op => {
                        last.1 += compute + pending;
                        last.2 += pending;
                    }
                    _ => out.push((op.to_string(), compute + pending, pending)),
                }
                pending = 0;
            }
            _ => {}
        }
    }
    if pending > 0 {
        out.push(("(read-back)".into(), pending, pending));
    }
    out
}

#[cfg(test)]
mod op_cycles_tests {
    use super::program::{Arg, Move, Place, Run};
    use super::*;
    use ipu_device::{KernelSpec, MemoryClass};

    /// Each op gets its compute steps (`op1.scores` is `op1`'s) and the exchange phases before
    /// them; the per-op cycles add up to the program's compute plus its exchange.
    #[test]
    fn op_cycles_attribute_steps_and_phases_and_add_up() {
        let target = Target::c600();
        let mut program = TileProgram {
            tiles: 4,
            ..TileProgram::default()
        };
        let buffer = program.buffer("b", MemoryClass::Standard, 64, vec![0, 1]);
        let copy = program.kernel(KernelSpec::Copy { bytes: 64 });
        let run = |tile| Run {
            tile,
            kernel: copy,
            args: vec![Arg::Address(Place::at(buffer, 0))],
        };
        let step = |name: &str, runs: Vec<Run>| TileStep::Compute {
            provenance: name.into(),
            runs,
        };
        program.run.push(step("op0", vec![run(0)]));
        program.run.push(TileStep::Exchange {
            phase: 0,
            moves: vec![Move {
                source_tile: 0,
                source: Place::at(buffer, 0),
                destinations: vec![1],
                destination: Place::at(buffer, 0),
                bytes: 64,
            }],
        });
        program.run.push(step("op1.scores", vec![run(1), run(1)]));
        program.run.push(step("op1", vec![run(0)]));
        let one = ipu_device::cost::kernel_cycles(&KernelSpec::Copy { bytes: 64 }, &target);
        let phases = BTreeMap::from([(0, 700)]);
        let ops = op_cycles(&program, &phases, &target);
        assert_eq!(
            ops,
            vec![
                ("op0".to_string(), one, 0),
                ("op1".to_string(), 700 + 3 * one, 700)
            ]
        );
        let total: u64 = ops.iter().map(|o| o.1).sum();
        assert_eq!(total, compute_cycles(&program, &target) + 700);
    }
}
