//! Simulator: exchange, broadcast, repeats, host streams and lazy allocation.

use std::time::Instant;

use ipu_device::image::{
    ComputeStep, KernelRun, Step, StreamBinding, StreamDirection, StreamSlice, Transfer,
};
use ipu_device::sim::{SimError, StepKind};
use ipu_device::{KernelSpec, Precision, Target};

use crate::sim_support::*;

const TILES: u32 = 1472;

/// Every tile sends 64 bytes to its successor: data arrives and the phase costs the fixed
/// phase cost plus one 16-cycle transfer (every tile sends and receives one at once).
fn ring_image() -> (ipu_device::image::DeviceImage, u64) {
    let mut transfers: Vec<Transfer> = (0..TILES)
        .map(|t| Transfer {
            source_tile: t,
            source_address: ADDR_A,
            destinations: vec![(t + 1) % TILES],
            destination_address: ADDR_B,
            bytes: 64,
            slot: 0,
        })
        .collect();
    let horizon = assign_slots(&mut transfers, 4);
    let mut image = image_with(vec![exchange(7, &transfers)]);
    for t in 0..TILES {
        image.add_segment(
            t,
            ADDR_A,
            (0..64)
                .map(|i| (t as u8).wrapping_mul(7).wrapping_add(i))
                .collect(),
        );
    }
    (image, horizon)
}

#[test]
fn ring_exchange_over_all_tiles() {
    let (image, horizon) = ring_image();
    // Each tile sends on its own bus: every 16-cycle send runs at once; the last word lands
    // 2 cycles later on the farthest neighbour (a pair's two columns are 2 apart).
    assert_eq!(
        horizon,
        16 + 2,
        "each tile sends on its own bus: every 16-cycle send runs at once"
    );
    let mut sim = simulator();
    let started = Instant::now();
    sim.load(&image).expect("ring loads");
    let loaded = started.elapsed();
    let profile = sim.run("run").expect("ring runs");
    eprintln!(
        "ring 1472 tiles: load {:?}, run {:?}",
        loaded,
        started.elapsed() - loaded
    );
    for t in [0, 1, 2, 733, 1470, 1471] {
        let got = sim.read_memory(t, ADDR_B, 64).expect("read");
        let from = (t + TILES - 1) % TILES;
        let want: Vec<u8> = (0..64)
            .map(|i| (from as u8).wrapping_mul(7).wrapping_add(i))
            .collect();
        assert_eq!(got, want, "tile {t} holds tile {from}'s bytes");
    }
    let target = Target::c600();
    assert_eq!(
        profile.total_cycles,
        u64::from(target.exchange.phase_cycles.value) + horizon
    );
    assert_eq!(profile.cycles_of(StepKind::Exchange), profile.total_cycles);
    assert_eq!(profile.tile_totals[5].bytes_sent, 64);
    assert_eq!(profile.tile_totals[5].bytes_received, 64);
    assert_eq!(sim.allocated_tiles(), TILES as usize);
}

#[test]
fn broadcast_reaches_every_destination_once() {
    let destinations: Vec<u32> = (1..1000).collect();
    let payload: Vec<u8> = (0..256u32).map(|i| (i * 3) as u8).collect();
    let transfers = [Transfer {
        source_tile: 0,
        source_address: ADDR_A,
        destinations: destinations.clone(),
        destination_address: ADDR_C,
        bytes: 256,
        slot: 10,
    }];
    let mut image = image_with(vec![exchange(0, &transfers)]);
    image.add_segment(0, ADDR_A, payload.clone());
    let mut sim = simulator();
    sim.load(&image).expect("broadcast loads");
    let profile = sim.run("run").expect("broadcast runs");
    for t in [1, 2, 500, 999] {
        assert_eq!(sim.read_memory(t, ADDR_C, 256).expect("read"), payload);
    }
    assert_eq!(
        sim.read_memory(1000, ADDR_C, 256).expect("read"),
        vec![0; 256]
    );
    assert!(!sim.is_tile_allocated(1000));
    // One send, heard by all: the phase lasts slot + 256 / 4 after the fixed cost, and the
    // farthest receiver's route (tiles 1..1000 reach folded column 31 from tile 0's 0).
    let target = Target::c600();
    let fixed = u64::from(target.exchange.phase_cycles.value);
    let route = destinations
        .iter()
        .map(|&d| target.route_cycles(0, d))
        .max()
        .unwrap_or(0);
    assert_eq!(route, 31);
    assert_eq!(profile.total_cycles, fixed + 10 + 64 + route);
    assert_eq!(profile.tile_totals[0].bytes_sent, 256);
}

fn add_one_spec() -> KernelSpec {
    KernelSpec::Add {
        precision: Precision::F32,
        rows: 1,
        cols: 4,
        b_rows: 1,
    }
}

#[test]
fn repeat_loop_runs_its_body_count_times() {
    let mut image = image_with(vec![]);
    let add = image.kernel_index(add_one_spec());
    let body = vec![
        Step::Compute(ComputeStep {
            provenance: "loc(\"model.mlir\":3:5)".to_string(),
            runs: vec![KernelRun {
                tile: 3,
                kernel: add,
                args: vec![ADDR_A - BASE, ADDR_B - BASE, ADDR_A - BASE],
            }],
        }),
        Step::Sync,
    ];
    image.programs[0].steps = vec![Step::Repeat { count: 10, body }];
    image.add_segment(3, ADDR_A, f32_bytes(&[0.0, 1.0, 2.0, 3.0]));
    image.add_segment(3, ADDR_B, f32_bytes(&[1.0, 1.0, 1.0, 1.0]));
    let mut sim = simulator();
    let report = sim.load(&image).expect("loads");
    assert_eq!(report.executed_steps["run"], 1 + 10 * 2);
    let profile = sim.run("run").expect("runs");
    assert_eq!(
        f32_values(&sim.read_memory(3, ADDR_A, 16).expect("read")),
        vec![10.0, 11.0, 12.0, 13.0]
    );
    let target = Target::c600();
    let add_cycles = ipu_device::cost::kernel_cycles(&add_one_spec(), &target);
    let sync = u64::from(target.exchange.sync_cycles.value);
    assert_eq!(profile.total_cycles, 10 * (add_cycles + sync));
    assert_eq!(profile.compute.len(), 10);
    assert_eq!(profile.steps.len(), 20);
    assert_eq!(
        profile.program_steps[1].provenance.as_deref(),
        Some("loc(\"model.mlir\":3:5)")
    );
}

#[test]
fn repeat_without_exit_is_refused_as_never_completing() {
    let mut image = image_with(vec![]);
    let add = image.kernel_index(add_one_spec());
    let body = vec![Step::Compute(ComputeStep {
        provenance: "loop".to_string(),
        runs: vec![KernelRun {
            tile: 0,
            kernel: add,
            args: vec![0, 16, 0],
        }],
    })];
    image.programs[0].steps = vec![
        Step::Sync,
        Step::Repeat {
            count: u32::MAX,
            body,
        },
    ];
    let error = simulator().load(&image).expect_err("must be refused");
    assert!(
        matches!(error, SimError::NeverCompletes { ref at, .. } if at.step == 1),
        "{error}"
    );
    assert!(error.to_string().contains("step 1"), "{error}");
}

#[test]
fn host_streams_write_inputs_and_read_outputs() {
    let mut image = image_with(vec![
        Step::HostWrite {
            stream: "x".to_string(),
        },
        Step::Exchange(ipu_device::image::ExchangePhase::from_transfers(
            0,
            &[Transfer {
                source_tile: 4,
                source_address: ADDR_A,
                destinations: vec![9],
                destination_address: ADDR_B,
                bytes: 8,
                slot: 0,
            }],
        )),
        Step::HostRead {
            stream: "y".to_string(),
        },
    ]);
    image.streams.push(StreamBinding {
        name: "x".to_string(),
        direction: StreamDirection::HostToDevice,
        slices: vec![StreamSlice {
            tile: 4,
            address: ADDR_A,
            bytes: 8,
        }],
    });
    image.streams.push(StreamBinding {
        name: "y".to_string(),
        direction: StreamDirection::DeviceToHost,
        slices: vec![StreamSlice {
            tile: 9,
            address: ADDR_B,
            bytes: 8,
        }],
    });
    let mut sim = simulator();
    sim.load(&image).expect("loads");
    assert!(matches!(
        sim.run("run"),
        Err(SimError::StreamNotWritten { .. })
    ));
    assert!(matches!(
        sim.write_stream("x", &[1, 2, 3]),
        Err(SimError::StreamLength {
            expected: 8,
            found: 3,
            ..
        })
    ));
    sim.write_stream("x", &[1, 2, 3, 4, 5, 6, 7, 8])
        .expect("stage");
    let profile = sim.run("run").expect("runs");
    assert_eq!(
        sim.read_stream("y").expect("captured"),
        &[1, 2, 3, 4, 5, 6, 7, 8]
    );
    // Host write, exchange, host read: each a phase after its fixed cost; the exchange moves
    // its 8 bytes at 4 B/cycle (2 cycles), the host steps over the host link (8 B at 3.9 GB/s
    // and 1.5 GHz: 4 cycles).
    let link = ipu_device::cost::host_link_cycles(8, &Target::c600());
    assert_eq!(link, 4);
    let fixed = u64::from(Target::c600().exchange.phase_cycles.value);
    let route = Target::c600().route_cycles(4, 9);
    assert_eq!(route, 2, "tile 4 at column 0, tile 9 at column 2");
    assert_eq!(profile.total_cycles, 3 * fixed + 2 + route + 2 * link);
    assert!(matches!(
        sim.run("initialize"),
        Err(SimError::UnknownProgram { .. })
    ));
}

/// A stream given several slices of host data streams slice e on its e-th write of a run:
/// a write in a repeat of 3 gets the 3 slices in turn, the next run starts again at slice
/// 0, and a write past the slices given is refused; data of one slice is streamed by every
/// write.
#[test]
fn sliced_streams_give_one_slice_per_write() {
    let write_and_read = || {
        vec![
            Step::HostWrite {
                stream: "x".to_string(),
            },
            Step::Exchange(ipu_device::image::ExchangePhase::from_transfers(
                0,
                &[Transfer {
                    source_tile: 4,
                    source_address: ADDR_A,
                    destinations: vec![9],
                    destination_address: ADDR_B,
                    bytes: 8,
                    slot: 0,
                }],
            )),
        ]
    };
    let mut image = image_with(vec![Step::Repeat {
        count: 3,
        body: write_and_read(),
    }]);
    image.streams.push(StreamBinding {
        name: "x".to_string(),
        direction: StreamDirection::HostToDevice,
        slices: vec![StreamSlice {
            tile: 4,
            address: ADDR_A,
            bytes: 8,
        }],
    });
    let mut sim = simulator();
    sim.load(&image).expect("loads");
    assert!(matches!(
        sim.write_stream("x", &[0; 20]),
        Err(SimError::StreamLength {
            expected: 8,
            found: 20,
            ..
        })
    ));
    let slices: Vec<u8> = (0..24).collect();
    sim.write_stream("x", &slices).expect("three slices");
    for _ in 0..2 {
        let profile = sim.run("run").expect("runs");
        // Three host writes, each of one 8-byte slice.
        let written: u64 = profile.tile_totals[4].bytes_received;
        assert_eq!(written, 24);
    }
    // The last write left slice 2 on tile 4 and the last exchange moved it to tile 9.
    let landed = sim.read_memory(9, ADDR_B, 8).expect("reads");
    assert_eq!(landed, (16..24).collect::<Vec<u8>>());
    // Only two slices for three writes.
    sim.write_stream("x", &slices[..16]).expect("two slices");
    assert!(matches!(
        sim.run("run"),
        Err(SimError::StreamExhausted { slices: 2, .. })
    ));
    // One slice is streamed by every write.
    sim.write_stream("x", &slices[8..16]).expect("one slice");
    sim.run("run").expect("runs");
    let landed = sim.read_memory(9, ADDR_B, 8).expect("reads");
    assert_eq!(landed, (8..16).collect::<Vec<u8>>());
}

#[test]
fn untouched_tiles_allocate_nothing() {
    let mut image = image_with(vec![]);
    let fill = image.kernel_index(KernelSpec::Fill {
        precision: Precision::F32,
        elements: 4,
    });
    image.programs[0].steps = vec![Step::Compute(ComputeStep {
        provenance: "fill".to_string(),
        runs: vec![KernelRun {
            tile: 7,
            kernel: fill,
            args: vec![0x100, 0x3f80_0000],
        }],
    })];
    image.add_segment(5, ADDR_A, vec![1, 2, 3]);
    let mut sim = simulator();
    let report = sim.load(&image).expect("loads");
    assert_eq!(report.tiles_allocated, 1);
    assert_eq!(sim.allocated_tiles(), 1);
    sim.run("run").expect("runs");
    assert_eq!(sim.allocated_tiles(), 2);
    assert_eq!(sim.read_memory(100, ADDR_A, 16).expect("read"), vec![0; 16]);
    assert_eq!(sim.allocated_tiles(), 2, "reads do not allocate");
    assert!(sim.is_tile_allocated(5) && sim.is_tile_allocated(7) && !sim.is_tile_allocated(6));
    assert_eq!(
        f32_values(&sim.read_memory(7, BASE + 0x100, 16).expect("read")),
        vec![1.0; 4]
    );
    assert_eq!(
        sim.allocated_bytes(),
        2 * u64::from(Target::c600().memory.sram_bytes.value)
    );
}

#[test]
fn image_round_trips_through_serde() {
    let (image, _) = ring_image();
    let text = serde_json::to_string(&image).expect("serializes");
    let back: ipu_device::image::DeviceImage = serde_json::from_str(&text).expect("parses");
    assert_eq!(back, image);
}

/// A whole-chip program: every tile runs a small F32 GEMM (small so that the test double's
/// arithmetic does not hide the simulator's own cost) and a 16 KiB copy, then a 16 KiB ring
/// exchange, ten times over. Prints wall times for load and run with 1 and 2 threads.
#[test]
fn whole_chip_program_loads_and_runs_fast() {
    let bytes = 16 * 1024u32;
    let mut transfers: Vec<Transfer> = (0..TILES)
        .map(|t| Transfer {
            source_tile: t,
            source_address: ADDR_B,
            destinations: vec![(t + 1) % TILES],
            destination_address: ADDR_C,
            bytes,
            slot: 0,
        })
        .collect();
    let horizon = assign_slots(&mut transfers, 4);
    let mut image = image_with(vec![]);
    let copy = image.kernel_index(KernelSpec::Copy { bytes });
    let gemm_spec = KernelSpec::Gemm {
        input: Precision::F32,
        partials: Precision::F32,
        weights: ipu_device::MemoryClass::Interleaved,
        k: 16,
        c: 16,
        rows: vec![8],
        accumulate: true,
    };
    let gemm = image.kernel_index(gemm_spec.clone());
    let runs = (0..TILES)
        .flat_map(|tile| {
            [
                KernelRun {
                    tile,
                    kernel: gemm,
                    args: vec![0x80000 - BASE, 0x88000 - BASE, 0x90000 - BASE, 0, 0, 0],
                },
                KernelRun {
                    tile,
                    kernel: copy,
                    args: vec![ADDR_A - BASE, ADDR_B - BASE],
                },
            ]
        })
        .collect();
    let body = vec![
        Step::Compute(ComputeStep {
            provenance: "chip".to_string(),
            runs,
        }),
        exchange(0, &transfers),
    ];
    image.programs[0].steps = vec![Step::Repeat { count: 10, body }];
    for t in 0..TILES {
        image.add_segment(t, ADDR_A, vec![t as u8; bytes as usize]);
        image.add_segment(t, 0x80000, f32_bytes(&[0.5; 8 * 16]));
        image.add_segment(t, 0x88000, f32_bytes(&[0.25; 16 * 16]));
    }
    let mut profiles = Vec::new();
    for threads in [1, 2] {
        let mut sim = simulator();
        let started = Instant::now();
        sim.load(&image).expect("loads");
        let loaded = started.elapsed();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        let profile = pool
            .install(|| sim.run("run").map_err(|e| e.to_string()))
            .expect("runs");
        eprintln!(
            "whole chip ({} tiles, 10 x (gemm 8x16x16 + copy 16 KiB + ring 16 KiB)), {threads} thread(s): load {:?}, run {:?}",
            TILES,
            loaded,
            started.elapsed() - loaded
        );
        assert_eq!(sim.read_memory(9, ADDR_C, 4).expect("read"), vec![8; 4]);
        // Accumulated ten times: 16 * 0.5 * 0.25 per iteration.
        assert_eq!(
            f32_values(&sim.read_memory(77, 0x90000, 4).expect("read")),
            vec![20.0]
        );
        profiles.push(profile);
    }
    assert_eq!(profiles[0], profiles[1]);
    let target = Target::c600();
    let per_iteration = ipu_device::cost::kernel_cycles(&gemm_spec, &target)
        + ipu_device::cost::kernel_cycles(&KernelSpec::Copy { bytes }, &target)
        + u64::from(target.exchange.phase_cycles.value)
        + horizon;
    assert_eq!(profiles[0].total_cycles, 10 * per_iteration);
}
