//! Shared helpers for the simulator tests: a plain-Rust `KernelRunner` test double (Copy, Fill,
//! Add and Gemm in F32) so these tests do not depend on the kernel compiler, and a greedy
//! exchange slot assigner written independently of the simulator's hazard checker.

use std::collections::BTreeMap;
use std::sync::Arc;

use ipu_device::image::{DeviceImage, ExchangePhase, Program, Step, Transfer};
use ipu_device::kernels::spec::KernelRunError;
use ipu_device::sim::Simulator;
use ipu_device::{KernelRunner, KernelSpec, Precision, Target};

/// Runs Copy, Fill, Add (F32) and Gemm (F32) in plain Rust.
pub struct RustKernels;

fn bad(spec: &KernelSpec, detail: &str) -> KernelRunError {
    KernelRunError::Other {
        kernel: format!("{spec:?}"),
        detail: detail.to_string(),
    }
}

fn f32_at(memory: &[u8], offset: usize) -> f32 {
    f32::from_le_bytes([
        memory[offset],
        memory[offset + 1],
        memory[offset + 2],
        memory[offset + 3],
    ])
}

fn put_f32(memory: &mut [u8], offset: usize, value: f32) {
    memory[offset..offset + 4].copy_from_slice(&value.to_le_bytes());
}

impl KernelRunner for RustKernels {
    fn run(
        &self,
        spec: &KernelSpec,
        memory: &mut [u8],
        args: &[u32],
    ) -> Result<(), KernelRunError> {
        let arg = |i: usize| {
            args.get(i)
                .map(|&a| a as usize)
                .ok_or_else(|| bad(spec, "missing argument"))
        };
        match spec {
            KernelSpec::Copy { bytes } => {
                let (src, dst, n) = (arg(0)?, arg(1)?, *bytes as usize);
                memory.copy_within(src..src + n, dst);
            }
            KernelSpec::Fill {
                precision,
                elements,
            } => {
                let (dst, width) = (arg(0)?, precision.bytes() as usize);
                let value = args.get(1).copied().unwrap_or(0).to_le_bytes();
                for e in 0..*elements as usize {
                    memory[dst + e * width..dst + (e + 1) * width].copy_from_slice(&value[..width]);
                }
            }
            KernelSpec::Add {
                precision: Precision::F32,
                rows,
                cols,
                b_rows,
            } => {
                let (a, b, out) = (arg(0)?, arg(1)?, arg(2)?);
                for r in 0..*rows as usize {
                    let b_row = if *b_rows == 1 { 0 } else { r };
                    for c in 0..*cols as usize {
                        let i = r * *cols as usize + c;
                        let value = f32_at(memory, a + 4 * i)
                            + f32_at(memory, b + 4 * (b_row * *cols as usize + c));
                        put_f32(memory, out + 4 * i, value);
                    }
                }
            }
            KernelSpec::Gemm {
                input: Precision::F32,
                k,
                c,
                rows,
                accumulate,
                ..
            } => {
                let (a, b, out) = (arg(0)?, arg(1)?, arg(2)?);
                let rows = *rows.get(arg(3)?).ok_or_else(|| bad(spec, "row index"))? as usize;
                let (k, c) = (*k as usize, *c as usize);
                for r in 0..rows {
                    for j in 0..c {
                        let mut sum = if *accumulate {
                            f32_at(memory, out + 4 * (r * c + j))
                        } else {
                            0.0
                        };
                        for x in 0..k {
                            sum += f32_at(memory, a + 4 * (r * k + x))
                                * f32_at(memory, b + 4 * (x * c + j));
                        }
                        put_f32(memory, out + 4 * (r * c + j), sum);
                    }
                }
            }
            _ => return Err(bad(spec, "not implemented by the test double")),
        }
        Ok(())
    }
}

pub fn simulator() -> Simulator {
    Simulator::new(Target::c600(), Arc::new(RustKernels))
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

pub fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Send bus of a logical tile under the C600 table (its own: pairs do not share one).
pub fn bus_of(tile: u32) -> u32 {
    let target = Target::c600();
    let physical = target.logical_to_physical(tile).expect("a C600 tile");
    target.send_bus(physical.index)
}

/// Gives each transfer the earliest slot at which its sender's bus and all its receivers are
/// free (in list order; a receiver switching source waits the C600's select latency).
/// Returns the horizon: the last busy exchange cycle, or the last landing of a word on a
/// receiver (its route time after the send ends).
pub fn assign_slots(transfers: &mut [Transfer], bytes_per_cycle: u64) -> u64 {
    let target = Target::c600();
    let latency = u64::from(target.exchange.latency_events.value);
    let mut bus_free: BTreeMap<u32, u64> = BTreeMap::new();
    // Per receiver: when its last receive ends, and from which tile.
    let mut receiver_free: BTreeMap<u32, (u64, u32)> = BTreeMap::new();
    let mut horizon = 0;
    for transfer in transfers.iter_mut() {
        let mut slot = bus_free
            .get(&bus_of(transfer.source_tile))
            .copied()
            .unwrap_or(0);
        for d in &transfer.destinations {
            if let Some(&(end, from)) = receiver_free.get(d) {
                let select = if from == transfer.source_tile {
                    0
                } else {
                    latency
                };
                slot = slot.max(end + select);
            }
        }
        let end = slot + u64::from(transfer.bytes).div_ceil(bytes_per_cycle);
        bus_free.insert(bus_of(transfer.source_tile), end);
        for d in &transfer.destinations {
            receiver_free.insert(*d, (end, transfer.source_tile));
        }
        transfer.slot = slot as u32;
        let route = transfer
            .destinations
            .iter()
            .map(|&d| target.route_cycles(transfer.source_tile, d))
            .max()
            .unwrap_or(0);
        horizon = horizon.max(end + route);
    }
    horizon
}

/// An image with one program named "run".
pub fn image_with(steps: Vec<Step>) -> DeviceImage {
    let mut image = DeviceImage::new("c600");
    image.programs.push(Program {
        name: "run".to_string(),
        steps,
    });
    image
}

pub fn exchange(phase: u32, transfers: &[Transfer]) -> Step {
    Step::Exchange(ExchangePhase::from_transfers(phase, transfers))
}

/// Standard-memory addresses in distinct 16 KiB elements.
pub const BASE: u32 = 0x4c000;
pub const ADDR_A: u32 = 0x50000;
pub const ADDR_B: u32 = 0x54000;
pub const ADDR_C: u32 = 0x58000;
