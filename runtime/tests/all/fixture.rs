//! A hand-built package for the C600 and a plain-Rust kernel runner, so the runtime's tests
//! need neither the compiler nor the kernel compiler.
//!
//! The application computes `y = roll(x + b)`: four tiles each hold one row of `x` (f32
//! [4, 8]) and a replica of the bias `b` (f32 [8], a weight streamed by `initialize`); each
//! adds (inside a repeat, to exercise nested programs), then sends its row to the next tile,
//! and `y` (f32 [4, 8]) is read back from where the rows landed. Every buffer sits in its own
//! 16 KiB memory element so that no exchange access contends with another.

use std::sync::Arc;

use ipu_device::image::{
    ComputeStep, DeviceImage, ExchangePhase, KernelRun, Program, Step, StreamBinding,
    StreamDirection, StreamSlice, Transfer,
};
use ipu_device::kernels::spec::KernelRunError;
use ipu_device::sim::Simulator;
use ipu_device::{KernelRunner, KernelSpec, Precision, Target};
use ipu_runtime::package::{KernelObject, PlannedOp, ProfilePlan};
use ipu_runtime::ProfileFile;
use ipu_runtime::{
    Binding, BindingPiece, BindingRole, DeviceConfig, HostCall, Package, Register, RegisterWrite,
};

pub const TILES: u32 = 4;
pub const COLS: u32 = 8;
const ROW_BYTES: u32 = COLS * 4;
/// Offsets from the SRAM base (kernel ABI) of the four buffers, one memory element each.
const X: u32 = 0x4000;
const B: u32 = 0x8000;
const SUM: u32 = 0xC000;
const Y: u32 = 0x10000;
pub const ADD_LOCATION: &str = "loc(\"model.mlir\":3:10)";

fn sram_base() -> u32 {
    Target::c600().memory.sram_base.value
}

/// Adds F32 rows with a broadcast bias and copies bytes, in plain Rust.
pub struct RustKernels;

impl KernelRunner for RustKernels {
    fn run(
        &self,
        spec: &KernelSpec,
        memory: &mut [u8],
        args: &[u32],
    ) -> Result<(), KernelRunError> {
        // The spec's own operand check: every range below lies inside `memory`.
        spec.check_call(memory.len(), args)?;
        let at = |i: usize| args[i] as usize;
        let read = |memory: &[u8], offset: usize| {
            f32::from_le_bytes([
                memory[offset],
                memory[offset + 1],
                memory[offset + 2],
                memory[offset + 3],
            ])
        };
        match spec {
            KernelSpec::Add {
                precision: Precision::F32,
                rows,
                cols,
                b_rows,
            } => {
                let (a, b, out) = (at(0), at(1), at(2));
                let cols = *cols as usize;
                for row in 0..*rows as usize {
                    let b_row = if *b_rows == 1 { 0 } else { row };
                    for col in 0..cols {
                        let value = read(memory, a + 4 * (row * cols + col))
                            + read(memory, b + 4 * (b_row * cols + col));
                        let o = out + 4 * (row * cols + col);
                        memory[o..o + 4].copy_from_slice(&value.to_le_bytes());
                    }
                }
                Ok(())
            }
            KernelSpec::Copy { bytes } => {
                let (src, dst) = (at(0), at(1));
                memory.copy_within(src..src + *bytes as usize, dst);
                Ok(())
            }
            other => Err(KernelRunError::Other {
                kernel: other.name(),
                detail: "not implemented by the test runner".into(),
            }),
        }
    }
}

pub fn runner() -> Arc<dyn KernelRunner> {
    Arc::new(RustKernels)
}

fn slices(tiles: u32, address: u32) -> Vec<StreamSlice> {
    (0..tiles)
        .map(|tile| StreamSlice {
            tile,
            address: sram_base() + address,
            bytes: ROW_BYTES,
        })
        .collect()
}

/// The image described in the module docs, over `tiles` tiles.
pub fn image(tiles: u32) -> DeviceImage {
    let base = sram_base();
    let mut image = DeviceImage::new("c600");
    let add = image.kernel_index(KernelSpec::Add {
        precision: Precision::F32,
        rows: 1,
        cols: COLS,
        b_rows: 1,
    });
    // A second kernel that is never run, to give the kernel table two entries.
    image.kernel_index(KernelSpec::Copy { bytes: ROW_BYTES });
    for tile in 0..tiles {
        // A constant segment per tile (zeros where the sum will go), so tile images exist.
        image.add_segment(tile, base + SUM, vec![0; ROW_BYTES as usize]);
    }
    image.streams = vec![
        StreamBinding {
            name: "x".into(),
            direction: StreamDirection::HostToDevice,
            slices: slices(tiles, X),
        },
        StreamBinding {
            name: "b".into(),
            direction: StreamDirection::HostToDevice,
            slices: slices(tiles, B),
        },
        StreamBinding {
            name: "y".into(),
            direction: StreamDirection::DeviceToHost,
            slices: slices(tiles, Y),
        },
    ];
    let runs = (0..tiles)
        .map(|tile| KernelRun {
            tile,
            kernel: add,
            args: vec![X, B, SUM],
        })
        .collect();
    // Sends in separate slots, one after the other (valid on any table, also one whose
    // physical pairs share a send bus).
    let transfers: Vec<Transfer> = (0..tiles)
        .map(|tile| Transfer {
            source_tile: tile,
            source_address: base + SUM,
            destinations: vec![(tile + 1) % tiles],
            destination_address: base + Y,
            bytes: ROW_BYTES,
            slot: tile * (ROW_BYTES / 4),
        })
        .collect();
    image.programs = vec![
        Program {
            name: "initialize".into(),
            steps: vec![Step::HostWrite { stream: "b".into() }],
        },
        Program {
            name: "run".into(),
            steps: vec![
                Step::HostWrite { stream: "x".into() },
                Step::Repeat {
                    count: 1,
                    body: vec![Step::Compute(ComputeStep {
                        provenance: ADD_LOCATION.into(),
                        runs,
                    })],
                },
                Step::Exchange(ExchangePhase::from_transfers(0, &transfers)),
                Step::HostRead { stream: "y".into() },
            ],
        },
    ];
    image
}

fn pieces(tiles: u32, address: u32, offset_of_tile: impl Fn(u32) -> u64) -> Vec<BindingPiece> {
    (0..tiles)
        .map(|tile| BindingPiece {
            tile,
            address: sram_base() + address,
            offset: offset_of_tile(tile),
            bytes: ROW_BYTES,
            runs: 1,
            stride: 0,
            pad: 0,
        })
        .collect()
}

pub fn bias() -> Vec<f32> {
    (0..COLS).map(|c| 0.5 * c as f32 - 1.0).collect()
}

/// The complete package over [`TILES`] tiles.
pub fn package() -> Package {
    package_with(TILES)
}

/// The complete package over `tiles` tiles, with a weight and one embedded (fake) kernel
/// object.
pub fn package_with(tiles: u32) -> Package {
    let mut package = Package::new("add-roll", image(tiles));
    let bias_bytes = bias().iter().flat_map(|v| v.to_le_bytes()).collect();
    package.bindings = vec![
        Binding {
            name: "x".into(),
            role: BindingRole::Input,
            stream: "x".into(),
            precision: Precision::F32,
            scale_exp: 0,
            shape: vec![u64::from(tiles), u64::from(COLS)],
            iterations: 1,
            pieces: pieces(tiles, X, |tile| u64::from(tile * ROW_BYTES)),
            data: Vec::new(),
        },
        Binding {
            name: "b".into(),
            role: BindingRole::Weight,
            stream: "b".into(),
            precision: Precision::F32,
            scale_exp: 0,
            shape: vec![u64::from(COLS)],
            iterations: 1,
            // Replicated: every tile's slice holds the whole bias.
            pieces: pieces(tiles, B, |_| 0),
            data: bias_bytes,
        },
        Binding {
            name: "y".into(),
            role: BindingRole::Output,
            stream: "y".into(),
            precision: Precision::F32,
            scale_exp: 0,
            shape: vec![u64::from(tiles), u64::from(COLS)],
            iterations: 1,
            // Tile t received the row of tile t - 1.
            pieces: pieces(tiles, Y, |tile| {
                u64::from((tile + tiles - 1) % tiles * ROW_BYTES)
            }),
            data: Vec::new(),
        },
    ];
    package.calls = vec![
        HostCall {
            name: "initialize".into(),
            command: 0,
            program: "initialize".into(),
        },
        HostCall {
            name: "run".into(),
            command: 0,
            program: "run".into(),
        },
    ];
    package.profile_plan = ProfilePlan {
        programs: vec!["run".into()],
        ops: vec![PlannedOp {
            provenance: ADD_LOCATION.into(),
            op: "ipu.add".into(),
            ideal_cycles: 1,
            estimated_cycles: 20,
        }],
    };
    package.device_config = DeviceConfig {
        writes: vec![RegisterWrite {
            register: Register::ExchangeSyncCycles,
            value: 90,
        }],
    };
    package
        .embed_object(
            1,
            KernelObject {
                bytes: b"\x7fELF not really an object".to_vec(),
                cache_key: "0".repeat(64),
                kernel_compiler: "test".into(),
                llvm: "22".into(),
                triple: "x86_64-unknown-linux-gnu".into(),
                cpu: "generic".into(),
            },
        )
        .expect("kernel 1 exists");
    package
}

/// [`package`] with `x` and `y` bound transposed ([`COLS`, `TILES`]): tile t's slice of `x`
/// is column t of the bound tensor and its slice of `y` is column t - 1, each gathered by
/// the host as [`COLS`] strided runs of one element (what streaming an operand straight into
/// a tile's AMP order looks like). The device program is unchanged.
pub fn transposed_package() -> Package {
    let mut package = package();
    let row = u64::from(TILES) * 4;
    let columns = |binding: &mut Binding, column_of_tile: &dyn Fn(u32) -> u32| {
        binding.shape = vec![u64::from(COLS), u64::from(TILES)];
        for piece in &mut binding.pieces {
            piece.offset = u64::from(column_of_tile(piece.tile)) * 4;
            piece.runs = COLS;
            piece.stride = row;
        }
    };
    columns(&mut package.bindings[0], &|tile| tile);
    columns(&mut package.bindings[2], &|tile| (tile + TILES - 1) % TILES);
    package
}

/// `data` (`rows` x `cols`, C order) transposed.
pub fn transpose<T: Copy>(data: &[T], rows: usize, cols: usize) -> Vec<T> {
    (0..rows * cols)
        .map(|i| data[(i % rows) * cols + i / rows])
        .collect()
}

/// `x[r][c] = r * 10 + c` over [`TILES`] rows.
pub fn input() -> Vec<f32> {
    input_with(TILES)
}

pub fn input_with(tiles: u32) -> Vec<f32> {
    (0..tiles * COLS)
        .map(|i| (i / COLS * 10 + i % COLS) as f32)
        .collect()
}

/// What the device must return for [`input`].
pub fn expected_output() -> Vec<f32> {
    expected_output_with(TILES)
}

pub fn expected_output_with(tiles: u32) -> Vec<f32> {
    let x = input_with(tiles);
    let b = bias();
    (0..tiles * COLS)
        .map(|i| x[i as usize] + b[(i % COLS) as usize])
        .collect()
}

/// The profile of `initialize` then `run` of `package` on a bare simulator (no session).
pub fn profile(package: &Package) -> ProfileFile {
    let target = Target::c600();
    let mut sim = Simulator::new(target.clone(), runner());
    sim.load(&package.image).expect("fixture loads");
    let bias: Vec<u8> = bias().iter().flat_map(|v| v.to_le_bytes()).collect();
    let stream = package.binding("b").unwrap().to_stream(&bias).unwrap();
    sim.write_stream("b", &stream).unwrap();
    sim.run("initialize").unwrap();
    let x: Vec<u8> = input().iter().flat_map(|v| v.to_le_bytes()).collect();
    let stream = package.binding("x").unwrap().to_stream(&x).unwrap();
    sim.write_stream("x", &stream).unwrap();
    let run = sim.run("run").unwrap();
    ProfileFile::from_sim(package, &target, &[run])
}
