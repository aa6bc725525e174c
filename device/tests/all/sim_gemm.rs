//! A small F32 GEMM spread over 64 tiles (an 8 x 8 grid of output blocks): host streams in,
//! a broadcast exchange of row and column blocks, one GEMM call per tile, host stream out.
//! Results must equal the host product; cycles must equal the cost model plus the exchange
//! model computed here independently; cycles and bytes must not depend on the thread count.

use ipu_device::image::{
    ComputeStep, DeviceImage, KernelRun, Step, StreamBinding, StreamDirection, StreamSlice,
    Transfer,
};
use ipu_device::sim::{Profile, StepKind};
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::sim_support::*;

const GRID: u32 = 8;
const M: usize = 64;
const N: usize = 64;
const K: usize = 32;
const BM: usize = M / GRID as usize;
const BN: usize = N / GRID as usize;

fn tile(i: u32, j: u32) -> u32 {
    i * GRID + j
}

fn gemm_spec() -> KernelSpec {
    KernelSpec::Gemm {
        input: Precision::F32,
        partials: Precision::F32,
        weights: MemoryClass::Standard,
        k: K as u32,
        c: BN as u32,
        rows: vec![BM as u32],
        accumulate: false,
    }
}

fn stream(
    name: &str,
    direction: StreamDirection,
    tiles: impl Iterator<Item = u32>,
    address: u32,
    bytes: u32,
) -> StreamBinding {
    StreamBinding {
        name: name.to_string(),
        direction,
        slices: tiles
            .map(|tile| StreamSlice {
                tile,
                address,
                bytes,
            })
            .collect(),
    }
}

/// The image and the exchange horizon of its one phase.
fn gemm_image() -> (DeviceImage, u64) {
    let a_bytes = (BM * K * 4) as u32;
    let b_bytes = (K * BN * 4) as u32;
    let c_bytes = (BM * BN * 4) as u32;
    // A row block i starts on tile (i, 0), B column block j on tile (0, j); broadcast them
    // along the grid's rows and columns.
    let mut transfers = Vec::new();
    for i in 0..GRID {
        transfers.push(Transfer {
            source_tile: tile(i, 0),
            source_address: ADDR_A,
            destinations: (1..GRID).map(|j| tile(i, j)).collect(),
            destination_address: ADDR_A,
            bytes: a_bytes,
            slot: 0,
        });
    }
    for j in 0..GRID {
        transfers.push(Transfer {
            source_tile: tile(0, j),
            source_address: ADDR_B,
            destinations: (1..GRID).map(|i| tile(i, j)).collect(),
            destination_address: ADDR_B,
            bytes: b_bytes,
            slot: 0,
        });
    }
    let horizon = assign_slots(&mut transfers, 4);
    let mut image = image_with(vec![]);
    let gemm = image.kernel_index(gemm_spec());
    let runs = (0..GRID * GRID)
        .map(|t| KernelRun {
            tile: t,
            kernel: gemm,
            args: vec![ADDR_A - BASE, ADDR_B - BASE, ADDR_C - BASE, 0, 0, 0],
        })
        .collect();
    image.programs[0].steps = vec![
        Step::HostWrite {
            stream: "a".to_string(),
        },
        Step::HostWrite {
            stream: "b".to_string(),
        },
        exchange(1, &transfers),
        Step::Compute(ComputeStep {
            provenance: "loc(\"gemm.mlir\":4:10)".to_string(),
            runs,
        }),
        Step::HostRead {
            stream: "c".to_string(),
        },
    ];
    image.streams.push(stream(
        "a",
        StreamDirection::HostToDevice,
        (0..GRID).map(|i| tile(i, 0)),
        ADDR_A,
        a_bytes,
    ));
    image.streams.push(stream(
        "b",
        StreamDirection::HostToDevice,
        (0..GRID).map(|j| tile(0, j)),
        ADDR_B,
        b_bytes,
    ));
    image.streams.push(stream(
        "c",
        StreamDirection::DeviceToHost,
        0..GRID * GRID,
        ADDR_C,
        c_bytes,
    ));
    (image, horizon)
}

struct Run {
    profile: Profile,
    c: Vec<f32>,
    a: Vec<f32>,
    b: Vec<f32>,
}

fn run_gemm(threads: usize) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e3d);
    let a: Vec<f32> = (0..M * K).map(|_| rng.random_range(-1.0..1.0)).collect();
    let b: Vec<f32> = (0..K * N).map(|_| rng.random_range(-1.0..1.0)).collect();
    // Host layout of the streams: A row blocks are contiguous already; B column blocks are
    // sliced out row by row.
    let b_blocks: Vec<f32> = (0..GRID as usize)
        .flat_map(|j| (0..K).flat_map(move |x| (0..BN).map(move |y| (j, x, y))))
        .map(|(j, x, y)| b[x * N + j * BN + y])
        .collect();
    let (image, _) = gemm_image();
    let mut sim = simulator();
    sim.load(&image).expect("gemm loads");
    sim.write_stream("a", &f32_bytes(&a)).expect("a");
    sim.write_stream("b", &f32_bytes(&b_blocks)).expect("b");
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool");
    let profile = pool
        .install(|| sim.run("run").map_err(|e| e.to_string()))
        .expect("gemm runs");
    let blocks = f32_values(sim.read_stream("c").expect("c"));
    let mut c = vec![0.0f32; M * N];
    for t in 0..(GRID * GRID) as usize {
        let (i, j) = (t / GRID as usize, t % GRID as usize);
        for r in 0..BM {
            for y in 0..BN {
                c[(i * BM + r) * N + j * BN + y] = blocks[t * BM * BN + r * BN + y];
            }
        }
    }
    Run { profile, c, a, b }
}

#[test]
fn gemm_over_64_tiles_is_correct_and_costs_what_the_models_say() {
    let Run { profile, c, a, b } = run_gemm(2);
    let mut worst = 0.0f32;
    for r in 0..M {
        for y in 0..N {
            let want: f32 = (0..K).map(|x| a[r * K + x] * b[x * N + y]).sum();
            worst = worst.max((c[r * N + y] - want).abs());
        }
    }
    assert!(worst < 1e-5, "largest error {worst}");

    // Exchange model, computed here: tile (0,0) sends A0 and B0, two 1 KiB sends on its own
    // bus (512 cycles; its pair partner (0,1) sends B1 at the same time), and every other
    // row/column source sends one or two. A receiver takes its A block from one tile and its
    // B block from another: one source switch, one select latency.
    let (image, horizon) = gemm_image();
    let target = Target::c600();
    // The last word lands on its farthest receiver 1 folded column away (64 tiles sit in
    // columns 0-6).
    assert_eq!(
        horizon,
        2 * 256 + u64::from(target.exchange.latency_events.value) + 1
    );
    let phase = u64::from(target.exchange.phase_cycles.value);
    // Host steps: the busiest tile's block at the tile rate or the stream's bytes over the
    // host link, whichever is longer.
    let stream_bytes = |name: &str| -> u64 {
        let stream = image
            .streams
            .iter()
            .find(|s| s.name == name)
            .expect("stream");
        stream
            .slices
            .iter()
            .map(|slice| u64::from(slice.bytes))
            .sum()
    };
    let host = |name: &str, block: usize| {
        ipu_device::cost::host_stream_cycles((block * 4) as u64, stream_bytes(name), &target)
    };
    let (host_a, host_b, host_c) = (host("a", BM * K), host("b", K * BN), host("c", BM * BN));
    assert!(host_a > phase + (BM * K * 4) as u64 / 4);
    let gemm = ipu_device::cost::kernel_cycles(&gemm_spec(), &target);
    assert_eq!(profile.cycles_of(StepKind::Compute), gemm);
    assert_eq!(profile.cycles_of(StepKind::Exchange), phase + horizon);
    assert_eq!(
        profile.total_cycles,
        host_a + host_b + phase + horizon + gemm + host_c
    );
    assert_eq!(profile.compute.len(), 64);
    assert_eq!(profile.tile_totals[9].compute_cycles, gemm);
}

#[test]
fn cycles_and_results_do_not_depend_on_thread_count() {
    let one = run_gemm(1);
    let two = run_gemm(2);
    assert_eq!(one.profile, two.profile);
    assert_eq!(f32_bytes(&one.c), f32_bytes(&two.c));
}
