//! The loaded form of a program: every step checked and pre-digested once at load (kernel
//! footprints and cycles, exchange hazards, tile grouping, executed-step budget), so that a
//! repeat body costs its analysis once and a run only moves data and adds cycles.

use super::error::{SimError, StepAt};
use super::exchange::{analyse, CodeElements, PhasePlan};
use super::memory::{group_by_tile, TileGroup};
use super::profile::{ProgramStepInfo, StepKind};
use crate::cost::kernel_call_cycles;
use crate::image::{DeviceImage, Step};
use crate::target::Target;

/// One kernel run, ready to call.
#[derive(Debug)]
pub(crate) struct PlannedRun {
    pub tile: u32,
    pub kernel: u32,
    pub args: Vec<u32>,
    pub cycles: u64,
}

#[derive(Debug)]
pub(crate) enum Node {
    Compute {
        step: u32,
        /// Runs sorted by tile, each tile's runs in program order.
        runs: Vec<PlannedRun>,
        groups: Vec<TileGroup>,
    },
    Exchange {
        step: u32,
        plan: PhasePlan,
    },
    Sync {
        step: u32,
    },
    Repeat {
        count: u32,
        body: Vec<Node>,
    },
    Host {
        step: u32,
        write: bool,
        stream: usize,
    },
}

pub(crate) struct LoadedProgram {
    pub name: String,
    pub nodes: Vec<Node>,
    pub infos: Vec<ProgramStepInfo>,
}

pub(crate) struct Planner<'a> {
    pub target: &'a Target,
    pub image: &'a DeviceImage,
    pub code: &'a CodeElements,
    pub max_executed_steps: u64,
}

impl Planner<'_> {
    pub fn new<'a>(
        target: &'a Target,
        image: &'a DeviceImage,
        code: &'a CodeElements,
        max_executed_steps: u64,
    ) -> Planner<'a> {
        Planner {
            target,
            image,
            code,
            max_executed_steps,
        }
    }

    pub fn program(&self, name: &str, steps: &[Step]) -> Result<LoadedProgram, SimError> {
        let mut infos = Vec::new();
        let nodes = self.steps(name, steps, &mut infos)?;
        let executed = executed_steps(&nodes);
        if executed > self.max_executed_steps {
            // Name the outermost repeat that pushes the count over the budget.
            let step = worst_repeat(&nodes, &infos).unwrap_or(0);
            return Err(SimError::NeverCompletes {
                at: StepAt {
                    program: name.to_string(),
                    step,
                    phase: None,
                },
                executed,
                budget: self.max_executed_steps,
            });
        }
        Ok(LoadedProgram {
            name: name.to_string(),
            nodes,
            infos,
        })
    }

    fn steps(
        &self,
        program: &str,
        steps: &[Step],
        infos: &mut Vec<ProgramStepInfo>,
    ) -> Result<Vec<Node>, SimError> {
        let mut nodes = Vec::with_capacity(steps.len());
        for step in steps {
            let id = infos.len() as u32;
            let at = StepAt {
                program: program.to_string(),
                step: id,
                phase: None,
            };
            let info = |kind, provenance: Option<String>, phase| ProgramStepInfo {
                step: id,
                kind,
                provenance,
                phase,
            };
            let node = match step {
                Step::Compute(compute) => {
                    infos.push(info(
                        StepKind::Compute,
                        Some(compute.provenance.clone()),
                        None,
                    ));
                    let tiles: Vec<u32> = compute.runs.iter().map(|r| r.tile).collect();
                    let (order, groups) = group_by_tile(&tiles);
                    let mut runs = Vec::with_capacity(order.len());
                    for index in order {
                        let run = &compute.runs[index];
                        let cycles = self.check_run(&at, run.tile, run.kernel, &run.args)?;
                        runs.push(PlannedRun {
                            tile: run.tile,
                            kernel: run.kernel,
                            args: run.args.clone(),
                            cycles,
                        });
                    }
                    Node::Compute {
                        step: id,
                        runs,
                        groups,
                    }
                }
                Step::Exchange(phase) => {
                    infos.push(info(StepKind::Exchange, None, Some(phase.phase)));
                    let at = StepAt {
                        phase: Some(phase.phase),
                        ..at
                    };
                    Node::Exchange {
                        step: id,
                        plan: analyse(self.target, phase, self.code, &at)?,
                    }
                }
                Step::Sync => {
                    infos.push(info(StepKind::Sync, None, None));
                    Node::Sync { step: id }
                }
                Step::Repeat { count, body } => {
                    infos.push(info(StepKind::Repeat, None, None));
                    Node::Repeat {
                        count: *count,
                        body: self.steps(program, body, infos)?,
                    }
                }
                Step::HostWrite { stream } | Step::HostRead { stream } => {
                    let write = matches!(step, Step::HostWrite { .. });
                    let kind = if write {
                        StepKind::HostWrite
                    } else {
                        StepKind::HostRead
                    };
                    infos.push(info(kind, Some(stream.clone()), None));
                    let index = self
                        .image
                        .streams
                        .iter()
                        .position(|s| s.name == *stream)
                        .ok_or_else(|| SimError::UnknownStream {
                            stream: stream.clone(),
                        })?;
                    Node::Host {
                        step: id,
                        write,
                        stream: index,
                    }
                }
            };
            nodes.push(node);
        }
        Ok(nodes)
    }

    /// Refuses a run whose operands leave SRAM (compiled kernels do not bounds-check) and
    /// returns its cycles from the shared cost model (the GEMM row entry the call selects).
    /// Operand layouts come from the kernel contract (`KernelSpec::operand_ranges`).
    fn check_run(
        &self,
        at: &StepAt,
        tile: u32,
        kernel: u32,
        args: &[u32],
    ) -> Result<u64, SimError> {
        let spec = &self.image.kernels[kernel as usize];
        let bad_arguments = |detail: String| SimError::KernelArguments {
            at: at.clone(),
            tile,
            kernel: spec.name(),
            detail,
        };
        let ranges = spec
            .operand_ranges(args)
            .map_err(|e| bad_arguments(e.to_string()))?;
        let base = u64::from(self.target.memory.sram_base.value);
        let size = self.target.memory.sram_bytes.value;
        for range in &ranges {
            if range.bytes.end > size {
                return Err(SimError::KernelOutOfRange {
                    at: at.clone(),
                    tile,
                    kernel: spec.name(),
                    operand: range.what,
                    arg: range.arg,
                    range_start: base + u64::from(range.bytes.start),
                    range_end: base + u64::from(range.bytes.end),
                    sram_start: self.target.memory.sram_base.value,
                    sram_end: self.target.sram_end(),
                });
            }
        }
        // Aliasing between a written operand and another one.
        spec.check_call(size as usize, args)
            .map_err(|e| bad_arguments(e.to_string()))?;
        kernel_call_cycles(spec, args, self.target).map_err(|e| bad_arguments(e.to_string()))
    }
}

/// Steps a run executes (a repeat counts once per iteration, plus its body's steps).
pub(crate) fn executed_steps(nodes: &[Node]) -> u64 {
    nodes
        .iter()
        .map(|node| match node {
            Node::Repeat { count, body } => {
                1u64.saturating_add(u64::from(*count).saturating_mul(executed_steps(body).max(1)))
            }
            _ => 1,
        })
        .fold(0u64, u64::saturating_add)
}

fn worst_repeat(nodes: &[Node], infos: &[ProgramStepInfo]) -> Option<u32> {
    // Repeats appear in `infos` in pre-order, as the nodes do; pick the one with most steps.
    let mut repeats = infos
        .iter()
        .filter(|i| i.kind == StepKind::Repeat)
        .map(|i| i.step);
    let mut best: Option<(u64, u32)> = None;
    fn walk(nodes: &[Node], ids: &mut dyn Iterator<Item = u32>, best: &mut Option<(u64, u32)>) {
        for node in nodes {
            if let Node::Repeat { body, .. } = node {
                let id = ids.next().unwrap_or(0);
                let executed = executed_steps(std::slice::from_ref(node));
                if best.is_none_or(|(b, _)| executed > b) {
                    *best = Some((executed, id));
                }
                walk(body, ids, best);
            }
        }
    }
    walk(nodes, &mut repeats, &mut best);
    best.map(|(_, id)| id)
}
