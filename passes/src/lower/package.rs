//! Package emission: a placed, exchange-lowered tile program becomes the runtime's
//! [`Package`] (device image, bindings, host calls, profile plan, kernel objects).

use std::collections::BTreeMap;

use ipu_device::image::{
    AddressRange, ComputeStep, DeviceImage, KernelRun, Program, Step, StreamBinding, StreamSlice,
};
use ipu_device::kernels::KernelCache;
use ipu_device::Target;
use ipu_runtime::package::memory::tile_ranges;
use ipu_runtime::package::{
    Binding, BindingPiece, BindingRole, HostCall, KernelObject, MemoryCategory, MemoryPlan,
    Package, PlacedBuffer, PlannedOp, ProfilePlan, SupportItem,
};

use super::exchange::LoweredPhase;
use super::place::{SupportMemory, RUNTIME_BYTES};
use super::program::{Arg, Place, TileProgram, TileStep};
use super::LowerError;

fn address(program: &TileProgram, place: Place) -> Result<u32, LowerError> {
    let buffer = &program.buffers[place.buffer];
    buffer
        .address
        .map(|a| a + place.offset)
        .ok_or_else(|| LowerError::Unplaced {
            buffer: buffer.name.clone(),
        })
}

fn steps(
    program: &TileProgram,
    steps: &[TileStep],
    phases: &BTreeMap<u32, &LoweredPhase>,
    target: &Target,
) -> Result<Vec<Step>, LowerError> {
    let base = target.memory.sram_base.value;
    let mut out = Vec::with_capacity(steps.len());
    let mut index = 0;
    while index < steps.len() {
        let step = &steps[index];
        index += 1;
        out.push(match step {
            TileStep::Repeat { count, steps: body } => {
                let end = index + body;
                let nested =
                    self::steps(program, &steps[index..end.min(steps.len())], phases, target)?;
                index = end;
                Step::Repeat {
                    count: *count,
                    body: nested,
                }
            }
            TileStep::HostWrite { binding } => Step::HostWrite {
                stream: program.bindings[*binding].name.clone(),
            },
            TileStep::HostRead { binding } => Step::HostRead {
                stream: program.bindings[*binding].name.clone(),
            },
            TileStep::Compute { provenance, runs } => {
                let mut lowered = Vec::with_capacity(runs.len());
                for run in runs {
                    let args = run
                        .args
                        .iter()
                        .map(|arg| match *arg {
                            Arg::Address(place) => address(program, place).map(|a| a - base),
                            Arg::Value(value) => Ok(value),
                        })
                        .collect::<Result<_, _>>()?;
                    lowered.push(KernelRun {
                        tile: run.tile,
                        kernel: run.kernel,
                        args,
                    });
                }
                Step::Compute(ComputeStep {
                    provenance: provenance.clone(),
                    runs: lowered,
                })
            }
            TileStep::Sync => Step::Sync,
            TileStep::Exchange { phase, .. } => {
                let lowered = phases.get(phase).ok_or_else(|| LowerError::Exchange {
                    phase: *phase,
                    detail: "phase was not lowered".into(),
                })?;
                Step::Exchange(lowered.phase.clone())
            }
        });
    }
    Ok(out)
}

/// The kernel model's cycles of the `run` program's compute steps, summed over every kernel
/// run (times the repeats around the step), by step provenance.
fn step_kernel_cycles<'p>(program: &'p TileProgram, target: &Target) -> BTreeMap<&'p str, u64> {
    let times = TileProgram::multiplicities(&program.run);
    let mut out: BTreeMap<&str, u64> = BTreeMap::new();
    for (step, times) in program.run.iter().zip(times) {
        if let TileStep::Compute { provenance, runs } = step {
            let cycles: u64 = runs
                .iter()
                .filter_map(|run| program.kernels.get(run.kernel as usize))
                .map(|spec| ipu_device::cost::kernel_cycles(spec, target))
                .sum();
            *out.entry(provenance.as_str()).or_default() += cycles * times;
        }
    }
    out
}

/// The kernel-model cycles of the op with `provenance` (the profile plan's `ideal_cycles`, not
/// a roofline): the kernel model's cycles of all its compute steps (the op's own and its
/// `provenance.*` conversion, output and repeat-body steps, from [`step_kernel_cycles`]),
/// spread perfectly over all the target's tiles.
fn ideal_cycles(steps: &BTreeMap<&str, u64>, provenance: &str, target: &Target) -> u64 {
    let prefix = format!("{provenance}.");
    let total: u64 = steps
        .iter()
        .filter(|(p, _)| **p == provenance || p.starts_with(&prefix))
        .map(|(_, cycles)| cycles)
        .sum();
    total.div_ceil(u64::from(target.geometry.tiles.value.max(1)))
}

/// The memory plan of a placed program: each buffer with its category (from the bindings
/// and exchange moves that land in it, [`MemoryCategory::of_buffer`]) and the support memory
/// of the loaded tiles `used`.
fn memory_plan(program: &TileProgram, support: &SupportMemory, used: &[u32]) -> MemoryPlan {
    let count = program.buffers.len();
    let (mut weight, mut host, mut received) =
        (vec![false; count], vec![false; count], vec![false; count]);
    for binding in &program.bindings {
        for piece in &binding.pieces {
            if let Some(slot) = host.get_mut(piece.place.buffer) {
                *slot = true;
            }
            if binding.role == BindingRole::Weight {
                if let Some(slot) = weight.get_mut(piece.place.buffer) {
                    *slot = true;
                }
            }
        }
    }
    for (_, moves) in program.exchange_steps() {
        for m in moves {
            if let Some(slot) = received.get_mut(m.destination.buffer) {
                *slot = true;
            }
        }
    }
    let mut buffers = Vec::with_capacity(count);
    for (index, buffer) in program.buffers.iter().enumerate() {
        // A buffer placement left without an address occupies nothing.
        let Some(address) = buffer.address else {
            continue;
        };
        buffers.push(PlacedBuffer {
            name: buffer.name.clone(),
            category: MemoryCategory::of_buffer(weight[index], host[index], received[index]),
            class: buffer.class,
            bytes: buffer.bytes,
            address,
            tiles: tile_ranges(&buffer.tiles),
            live: (
                u32::try_from(buffer.live.0).unwrap_or(u32::MAX),
                u32::try_from(buffer.live.1).unwrap_or(u32::MAX),
            ),
        });
    }
    let item = |name: &str, category, bytes| SupportItem {
        name: name.into(),
        category,
        bytes,
    };
    MemoryPlan {
        buffers,
        support: vec![
            item("tile runtime", MemoryCategory::Code, RUNTIME_BYTES),
            item(
                "host exchange code",
                MemoryCategory::Code,
                support.host_code_bytes,
            ),
            item(
                "generated step code",
                MemoryCategory::Code,
                support.generated_code_bytes,
            ),
            item(
                "profile counters",
                MemoryCategory::Support,
                support.profile_bytes,
            ),
            item(
                "exchange tables",
                MemoryCategory::Support,
                support.exchange_table_bytes,
            ),
        ],
        support_tiles: tile_ranges(used),
    }
}

/// Builds the package. With `cache`, every kernel is compiled through it (the `compiling
/// kernel` / `kernel artifact created` lines come from the device crate) and its object is
/// embedded; without, kernels are referenced by spec and compiled where the package loads.
pub fn build_package(
    program: &TileProgram,
    support: &SupportMemory,
    phases: &[LoweredPhase],
    target: &Target,
    cache: Option<&KernelCache>,
) -> Result<Package, LowerError> {
    let by_phase: BTreeMap<u32, &LoweredPhase> =
        phases.iter().map(|p| (p.phase.phase, p)).collect();
    let mut image = DeviceImage::new(target.name.clone());
    image.kernels = program.kernels.clone();
    let code = AddressRange::new(support.code_address, support.generated_code_bytes.max(1));
    let mut used: Vec<u32> = program
        .buffers
        .iter()
        .flat_map(|b| b.tiles.iter().copied())
        .collect();
    used.sort_unstable();
    used.dedup();
    for &tile in &used {
        image.tile_mut(tile).code.push(code);
    }
    let memory = memory_plan(program, support, &used);
    let mut bindings = Vec::with_capacity(program.bindings.len());
    for binding in &program.bindings {
        let mut slices = Vec::with_capacity(binding.pieces.len());
        let mut pieces = Vec::with_capacity(binding.pieces.len());
        for piece in &binding.pieces {
            let at = address(program, piece.place)?;
            slices.push(StreamSlice {
                tile: piece.tile,
                address: at,
                bytes: piece.bytes,
            });
            pieces.push(BindingPiece {
                tile: piece.tile,
                address: at,
                offset: piece.tensor_offset,
                bytes: piece.bytes,
                runs: piece.runs,
                stride: piece.stride,
                pad: piece.pad,
            });
        }
        image.streams.push(StreamBinding {
            name: binding.name.clone(),
            direction: binding.role.direction(),
            slices,
        });
        bindings.push(Binding {
            name: binding.name.clone(),
            role: binding.role,
            stream: binding.name.clone(),
            precision: binding.precision,
            scale_exp: binding.scale_exp,
            shape: binding.shape.clone(),
            iterations: binding.iterations,
            pieces,
            data: binding.data.clone(),
        });
    }
    let mut calls = Vec::new();
    if !program.initialize.is_empty() {
        image.programs.push(Program {
            name: "initialize".into(),
            steps: steps(program, &program.initialize, &by_phase, target)?,
        });
        calls.push(HostCall {
            name: "initialize".into(),
            command: 0,
            program: "initialize".into(),
        });
    }
    image.programs.push(Program {
        name: "run".into(),
        steps: steps(program, &program.run, &by_phase, target)?,
    });
    calls.push(HostCall {
        name: "run".into(),
        command: 0,
        program: "run".into(),
    });
    let mut package = Package::new(program.name.clone(), image);
    package.bindings = bindings;
    package.calls = calls;
    package.memory = memory;
    let step_cycles = step_kernel_cycles(program, target);
    package.profile_plan = ProfilePlan {
        programs: vec!["run".into()],
        ops: program
            .ops
            .iter()
            .map(|(provenance, op, estimated)| PlannedOp {
                provenance: provenance.clone(),
                op: op.clone(),
                ideal_cycles: ideal_cycles(&step_cycles, provenance, target),
                estimated_cycles: *estimated,
            })
            .collect(),
    };
    if let Some(cache) = cache {
        for (index, spec) in program.kernels.iter().enumerate() {
            let entry = cache.ensure(spec).map_err(|e| LowerError::Kernel {
                kernel: spec.name(),
                detail: e.to_string(),
            })?;
            let object =
                KernelObject::from_cache_entry(&entry).map_err(|e| LowerError::Kernel {
                    kernel: spec.name(),
                    detail: e.to_string(),
                })?;
            package
                .embed_object(index, object)
                .map_err(|e| LowerError::Package(e.to_string()))?;
        }
    }
    package
        .validate()
        .map_err(|e| LowerError::Package(e.to_string()))?;
    Ok(package)
}
