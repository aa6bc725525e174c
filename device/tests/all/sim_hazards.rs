//! hardwareTest: the simulator refuses what hardware would punish, naming tile, step and range.

use ipu_device::image::{
    AddressRange, ComputeStep, ImageError, KernelRun, ReceiveRow, SendRow, Step, Transfer,
};
use ipu_device::image::{DeviceImage, ExchangePhase};
use ipu_device::sim::{SimError, Simulator};
use ipu_device::{KernelSpec, Target};

use crate::sim_support::*;

fn transfer(
    source_tile: u32,
    source_address: u32,
    to: &[u32],
    destination_address: u32,
    bytes: u32,
    slot: u32,
) -> Transfer {
    Transfer {
        source_tile,
        source_address,
        destinations: to.to_vec(),
        destination_address,
        bytes,
        slot,
    }
}

/// Loads an image whose program is one sync and then `phase`, expecting a refusal.
fn refused(phase: Step, edit: impl FnOnce(&mut DeviceImage)) -> SimError {
    let mut image = image_with(vec![Step::Sync, phase]);
    edit(&mut image);
    simulator()
        .load(&image)
        .expect_err("the simulator must refuse this image")
}

#[test]
fn two_writes_to_the_same_bytes_are_refused() {
    let error = refused(
        exchange(
            3,
            &[
                transfer(0, ADDR_A, &[9], ADDR_B, 64, 0),
                // After the first ends (cycle 16) and the select latency (112).
                transfer(4, ADDR_A, &[9], ADDR_B + 32, 64, 128),
            ],
        ),
        |_| {},
    );
    let message = error.to_string();
    assert!(
        matches!(error, SimError::OverlappingWrites { tile: 9, .. }),
        "{message}"
    );
    assert!(
        message.contains("step 1") && message.contains("phase 3") && message.contains("tile 9"),
        "{message}"
    );
    assert!(
        message.contains("0x54020..0x54060") && message.contains("0x54000..0x54040"),
        "{message}"
    );
}

#[test]
fn a_physical_pair_sending_at_once_is_refused_where_pairs_share_a_bus() {
    // Logical tiles 2 and 3 land on one physical pair. On the C600 each sends on its own bus:
    // overlapping sends are fine.
    let pair = exchange(
        0,
        &[
            transfer(2, ADDR_A, &[10], ADDR_B, 64, 0),
            transfer(3, ADDR_A, &[11], ADDR_B, 64, 8),
        ],
    );
    simulator()
        .load(&image_with(vec![pair.clone()]))
        .expect("a pair's sends may overlap on the C600");
    // On a table whose pairs share one send bus they are refused.
    let mut shared = Target::c600();
    shared.exchange.send_bus_tiles.value = 2;
    let error = Simulator::new(shared.clone(), std::sync::Arc::new(RustKernels))
        .load(&image_with(vec![pair]))
        .expect_err("one bus, two sends at once");
    assert!(
        matches!(
            error,
            SimError::SenderBusConflict {
                tile: 3,
                other_tile: 2,
                ..
            }
        ),
        "{error}"
    );
    // Tiles 3 and 4 are on different buses there too: the same schedule is fine.
    let image = image_with(vec![exchange(
        0,
        &[
            transfer(3, ADDR_A, &[10], ADDR_B, 64, 0),
            transfer(4, ADDR_A, &[11], ADDR_B, 64, 8),
        ],
    )]);
    Simulator::new(shared, std::sync::Arc::new(RustKernels))
        .load(&image)
        .expect("different buses may overlap");
}

#[test]
fn a_receiver_taking_two_transfers_at_once_is_refused() {
    let error = refused(
        exchange(
            0,
            &[
                transfer(0, ADDR_A, &[9], ADDR_B, 64, 0),
                transfer(4, ADDR_A, &[9], ADDR_C, 64, 15),
            ],
        ),
        |_| {},
    );
    assert!(
        matches!(error, SimError::ReceiverBusy { tile: 9, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("exchange cycles 15..16"),
        "{error}"
    );
}

#[test]
fn a_receiver_switching_source_within_the_select_latency_is_refused() {
    // 64 B take 16 cycles: the next receive from another tile may start at 16 + 112.
    let latency = Target::c600().exchange.latency_events.value;
    let error = refused(
        exchange(
            0,
            &[
                transfer(0, ADDR_A, &[9], ADDR_B, 64, 0),
                transfer(4, ADDR_A, &[9], ADDR_C, 64, 16 + latency - 1),
            ],
        ),
        |_| {},
    );
    assert!(
        matches!(
            error,
            SimError::ReceiveSelectTooSoon { tile: 9, from_tile: 4, other_from: 0, gap, .. }
                if gap == u64::from(latency) - 1
        ),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains("selecting a new source takes 112"),
        "{error}"
    );
    // At the latency it loads; from the same tile no latency is needed.
    for (from, slot) in [(4, 16 + latency), (0, 16)] {
        let image = image_with(vec![exchange(
            0,
            &[
                transfer(0, ADDR_A, &[9], ADDR_B, 64, 0),
                transfer(from, ADDR_A + 64, &[9], ADDR_C, 64, slot),
            ],
        )]);
        Simulator::new(Target::c600(), std::sync::Arc::new(RustKernels))
            .load(&image)
            .unwrap_or_else(|e| panic!("from tile {from} at {slot}: {e}"));
    }
}

#[test]
fn send_read_and_receive_write_on_one_element_at_once_are_refused() {
    // Tile 5 sends from element 0x50000.. while receiving into the same 16 KiB element.
    let phase = exchange(
        0,
        &[
            transfer(5, ADDR_A, &[20], ADDR_B, 64, 0),
            transfer(8, ADDR_A, &[5], ADDR_A + 0x1000, 64, 4),
        ],
    );
    let error = refused(phase, |_| {});
    let message = error.to_string();
    assert!(
        matches!(error, SimError::ElementConflict { tile: 5, .. }),
        "{message}"
    );
    assert!(message.contains("0x50000..0x54000"), "{message}");
    // The same accesses at disjoint cycles are fine.
    let image = image_with(vec![exchange(
        0,
        &[
            transfer(5, ADDR_A, &[20], ADDR_B, 64, 0),
            transfer(8, ADDR_A, &[5], ADDR_A + 0x1000, 64, 16),
        ],
    )]);
    simulator()
        .load(&image)
        .expect("element used at different cycles");
}

#[test]
fn exchange_into_a_code_element_conflicts_with_instruction_fetch() {
    let error = refused(
        exchange(0, &[transfer(0, ADDR_A, &[6], ADDR_C + 0x100, 16, 0)]),
        |image| {
            image
                .tile_mut(6)
                .code
                .push(AddressRange::new(ADDR_C, 0x800));
        },
    );
    assert!(
        matches!(
            error,
            SimError::ElementConflict {
                tile: 6,
                first: "instruction fetch",
                ..
            }
        ),
        "{error}"
    );
}

#[test]
fn a_receiver_without_a_sender_never_completes() {
    let phase = ExchangePhase {
        phase: 2,
        sends: vec![SendRow {
            tile: 1,
            address: ADDR_A,
            bytes: 16,
            slot: 0,
        }],
        receives: vec![ReceiveRow {
            tile: 30,
            from_tile: 1,
            address: ADDR_B,
            bytes: 16,
            slot: 4,
        }],
    };
    let error = refused(Step::Exchange(phase), |_| {});
    assert!(
        matches!(
            error,
            SimError::ReceiveWithoutSender {
                tile: 30,
                from_tile: 1,
                slot: 4,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.to_string().contains("never completes"), "{error}");
}

#[test]
fn sending_bytes_received_in_the_same_phase_is_refused() {
    let phase = exchange(
        0,
        &[
            transfer(5, ADDR_A, &[20], ADDR_B, 64, 0),
            transfer(8, ADDR_A, &[5], ADDR_A + 32, 64, 100),
        ],
    );
    let error = refused(phase, |_| {});
    assert!(
        matches!(error, SimError::SendReceiveOverlap { tile: 5, .. }),
        "{error}"
    );
}

#[test]
fn kernel_operands_outside_sram_are_refused() {
    let mut image = image_with(vec![]);
    let copy = image.kernel_index(KernelSpec::Copy { bytes: 256 });
    let sram = 638_976u32;
    image.programs[0].steps = vec![
        Step::Sync,
        Step::Compute(ComputeStep {
            provenance: "copy".to_string(),
            runs: vec![
                KernelRun {
                    tile: 12,
                    kernel: copy,
                    args: vec![0, 0x100],
                },
                KernelRun {
                    tile: 17,
                    kernel: copy,
                    args: vec![0, sram - 128],
                },
            ],
        }),
    ];
    let error = simulator().load(&image).expect_err("out of range");
    let message = error.to_string();
    assert!(
        matches!(
            error,
            SimError::KernelOutOfRange {
                tile: 17,
                operand: "dst",
                ..
            }
        ),
        "{message}"
    );
    assert!(
        message.contains("step 1") && message.contains("0xe7f80..0xe8080"),
        "{message}"
    );

    image.programs[0].steps[1] = Step::Compute(ComputeStep {
        provenance: "copy".to_string(),
        runs: vec![KernelRun {
            tile: 12,
            kernel: copy,
            args: vec![0],
        }],
    });
    assert!(matches!(
        simulator().load(&image),
        Err(SimError::KernelArguments { tile: 12, .. })
    ));
}

#[test]
fn image_ranges_tiles_and_kernels_are_validated() {
    let outside = refused(
        exchange(0, &[transfer(0, 0x40000, &[1], ADDR_B, 16, 0)]),
        |_| {},
    );
    assert!(
        matches!(
            outside,
            SimError::Image(ImageError::OutsideSram { tile: 0, .. })
        ),
        "{outside}"
    );

    let bad_tile = refused(
        exchange(0, &[transfer(0, ADDR_A, &[1472], ADDR_B, 16, 0)]),
        |_| {},
    );
    assert!(
        matches!(
            bad_tile,
            SimError::Image(ImageError::TileOutOfRange { tile: 1472, .. })
        ),
        "{bad_tile}"
    );

    let unloadable = refused(Step::Sync, |image| {
        image.add_segment(3, 0xe7b00, vec![0; 0x100])
    });
    assert!(
        matches!(
            unloadable,
            SimError::Image(ImageError::BeyondLoadable { tile: 3, .. })
        ),
        "{unloadable}"
    );

    let overlap = refused(Step::Sync, |image| {
        image.add_segment(3, ADDR_A, vec![0; 0x100]);
        image.add_segment(3, ADDR_A + 0x80, vec![0; 0x10]);
    });
    assert!(
        matches!(
            overlap,
            SimError::Image(ImageError::SegmentsOverlap { tile: 3, .. })
        ),
        "{overlap}"
    );

    let code = refused(Step::Sync, |image| {
        image.tile_mut(2).code.push(AddressRange::new(0x90000, 64))
    });
    assert!(
        matches!(
            code,
            SimError::Image(ImageError::CodeNotExecutable { tile: 2, .. })
        ),
        "{code}"
    );

    let kernel = refused(
        Step::Compute(ComputeStep {
            provenance: String::new(),
            runs: vec![KernelRun {
                tile: 1,
                kernel: 4,
                args: vec![],
            }],
        }),
        |_| {},
    );
    assert!(
        matches!(
            kernel,
            SimError::Image(ImageError::KernelIndex {
                step: 1,
                kernel: 4,
                ..
            })
        ),
        "{kernel}"
    );

    let mut image = image_with(vec![]);
    image.target = "bow".to_string();
    assert!(matches!(
        simulator().load(&image),
        Err(SimError::Image(ImageError::TargetMismatch { .. }))
    ));
}
