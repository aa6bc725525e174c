//! Fidelity: the anchor's SigLIP MLP exchange replayed on the simulated C600 (ANCHOR-PLANS.md
//! section 4, commit 5caa8bf: 4 x 729 x 1152 -> 4608 -> 1152, F16, 1,458 tiles = 81 row
//! partitions x 18, measured on a C600: exchange 484,530 cycles over 38 phases, of which the
//! up-projection's 18 phases 159,852).
//!
//! The phases are built from the plan's facts: which tile sends which block to which tiles,
//! how big, in which phase. Within a phase the transfers are ordered as the anchor's scheduler
//! ordered them (most contended tiles first: the sum over a transfer's tiles of how many of
//! the phase's transfers touch each, then receivers, then size, then the lower sender tile),
//! coloured first-fit so no two transfers of a colour share a tile, and timed colour by
//! colour as the anchor timed them (a transfer starts one cycle after the last of its tiles,
//! sender or receiver, and its send bus are free, and holds them until it ends; a receiver
//! switching sender also waits the select latency), each lasting `bytes / 4` cycles by our
//! model. The simulator then runs them; its exchange cycles (each phase its
//! fixed cost plus its horizon) are compared with the measured ones.

use std::collections::BTreeMap;

use ipu_device::image::Transfer;
use ipu_device::sim::{Simulator, StepKind};
use ipu_device::Target;

use crate::sim_support::*;

/// Row partitions and tiles per row partition (tile `r * 18 + c`).
const ROWS: u32 = 81;
const COLUMNS: u32 = 18;
/// Measured on the C600: the whole MLP's exchange and the up-projection's.
const MEASURED_EXCHANGE: u64 = 484_530;
const MEASURED_UP: u64 = 159_852;
/// The anchor's own schedule of the same phases (its exchange model), for comparison.
const SCHEDULED_EXCHANGE: u64 = 472_282;

/// The bands of `simulated / measured - 1` the current model holds (BENCHMARKS.md,
/// "Fidelity"): the up-projection -1.64 %, the whole exchange -2.41 % (issue 19's target: 3 %).
const UP_BAND: (f64, f64) = (-0.03, 0.0);
const WHOLE_BAND: (f64, f64) = (-0.03, 0.03);

/// Standard-memory areas of the replay: senders' blocks and partials, receive buffers.
const WEIGHTS: u32 = 0x50000;
const PARTIALS: u32 = 0x60000;
const PARTIAL_INBOX: u32 = 0x6c000;
const WIDE_INBOX: u32 = 0x80000;

/// One transfer before timing: sender, receivers, bytes, addresses.
#[derive(Clone)]
struct Planned {
    from: u32,
    to: Vec<u32>,
    bytes: u32,
    source: u32,
    destination: u32,
}

/// Orders, colours and times one phase's transfers as described in the module docs, and
/// returns them with their slots. A receiver switching to another sender waits the target's
/// select latency (`exchange.latency_events`) after its previous receive.
fn schedule(planned: Vec<Planned>, target: &Target) -> Vec<Transfer> {
    let mut pressure: BTreeMap<u32, u64> = BTreeMap::new();
    for transfer in &planned {
        for &tile in std::iter::once(&transfer.from).chain(&transfer.to) {
            *pressure.entry(tile).or_default() += 1;
        }
    }
    let weight = |transfer: &Planned| -> u64 {
        std::iter::once(&transfer.from)
            .chain(&transfer.to)
            .map(|tile| pressure[tile])
            .sum()
    };
    let mut order: Vec<usize> = (0..planned.len()).collect();
    order.sort_by_key(|&i| {
        let t = &planned[i];
        (
            std::cmp::Reverse((weight(t), t.to.len(), t.bytes)),
            t.from,
            i,
        )
    });
    // First-fit colouring: the lowest colour no transfer sharing a tile holds.
    let mut colours_of: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    let mut coloured: Vec<(usize, usize)> = Vec::new();
    for &i in &order {
        let t = &planned[i];
        let tiles: Vec<u32> = std::iter::once(t.from)
            .chain(t.to.iter().copied())
            .collect();
        let mut colour = 0;
        while tiles.iter().any(|tile| {
            colours_of
                .get(tile)
                .is_some_and(|used| used.contains(&colour))
        }) {
            colour += 1;
        }
        for tile in tiles {
            colours_of.entry(tile).or_default().push(colour);
        }
        coloured.push((colour, i));
    }
    coloured.sort_by_key(|&(colour, _)| colour);
    // Timed colour by colour as the anchor timed its schedule: a transfer starts one cycle
    // after the last of its tiles (sender and receivers alike) is free, and holds them all
    // until it ends; it lasts `bytes / 4` cycles. A receiver whose last receive came from
    // another tile also waits the select latency. A table whose physical pairs share a send
    // bus also waits for the sender's bus.
    let bus = |tile: u32| target.send_bus(target.logical_to_physical(tile).unwrap().index);
    let latency = target.exchange.latency_events.value;
    let mut bus_free: BTreeMap<u32, u32> = BTreeMap::new();
    let mut free: BTreeMap<u32, u32> = BTreeMap::new();
    let mut last_source: BTreeMap<u32, u32> = BTreeMap::new();
    let cycles = |bytes: u32| bytes.div_ceil(target.exchange.bytes_per_cycle.value);
    coloured
        .into_iter()
        .map(|(_, i)| {
            let t = &planned[i];
            let tiles = || std::iter::once(&t.from).chain(&t.to);
            let sender_bus = bus(t.from);
            let select = |tile: &u32| match last_source.get(tile) {
                Some(&from) if from != t.from => latency,
                _ => 0,
            };
            let busy = tiles()
                .map(|tile| free.get(tile).copied().unwrap_or(0))
                .chain(bus_free.get(&sender_bus).copied())
                .max()
                .unwrap_or(0);
            let selected =
                t.to.iter()
                    .filter_map(|tile| free.get(tile).map(|&end| end + select(tile)))
                    .max()
                    .unwrap_or(0);
            let slot = if busy == 0 {
                0
            } else {
                (busy + 1).max(selected)
            };
            let end = slot + cycles(t.bytes);
            for &tile in tiles() {
                free.insert(tile, end);
            }
            for &tile in &t.to {
                last_source.insert(tile, t.from);
            }
            bus_free.insert(sender_bus, end);
            Transfer {
                source_tile: t.from,
                source_address: t.source,
                destinations: t.to.clone(),
                destination_address: t.destination,
                bytes: t.bytes,
                slot,
            }
        })
        .collect()
}

/// The up-projection: in phase k the 18 tiles `k * 18 + c` each multicast the two 128-column
/// halves (64 x 128 F16 = 16,384 B) of their weight block to the 80 other tiles of column c.
fn up_projection() -> Vec<Vec<Planned>> {
    const HALF: u32 = 16_384;
    (0..COLUMNS)
        .map(|k| {
            let mut phase = Vec::new();
            for c in 0..COLUMNS {
                let to: Vec<u32> = (0..ROWS)
                    .filter(|&r| r != k)
                    .map(|r| r * COLUMNS + c)
                    .collect();
                for half in 0..2 {
                    phase.push(Planned {
                        from: k * COLUMNS + c,
                        to: to.clone(),
                        bytes: HALF,
                        source: WEIGHTS + half * HALF,
                        destination: WIDE_INBOX + half * HALF,
                    });
                }
            }
            phase
        })
        .collect()
}

/// The down-projection's phases, round by round (output column blocks 4j..4j+3, the last
/// round 16 and 17): the weight phase (block (kb, cb), 64 x 64 F16 = 8,192 B on tile
/// `kb * 18 + cb`, multicast to the tiles `r * 18 + kb / 4` holding its K range, the sender
/// excepted), then the three levels of the fan-in-3 reduction of each (row partition, output
/// block): 18 partials of 36 x 64 F16 = 4,608 B listed by K range with the output block's
/// own tile first, each level sending every member of a group of three to the group's first.
fn down_projection() -> Vec<Vec<Planned>> {
    const BLOCK: u32 = 8_192;
    const PARTIAL: u32 = 4_608;
    let mut phases = Vec::new();
    let rounds: Vec<Vec<u32>> = (0..5)
        .map(|j| (4 * j..(4 * j + 4).min(COLUMNS)).collect())
        .collect();
    for panels in rounds {
        let mut weights = Vec::new();
        for kb in 0..72 {
            for (p, &cb) in panels.iter().enumerate() {
                let from = kb * COLUMNS + cb;
                let to: Vec<u32> = (0..ROWS)
                    .map(|r| r * COLUMNS + kb / 4)
                    .filter(|&tile| tile != from)
                    .collect();
                weights.push(Planned {
                    from,
                    to,
                    bytes: BLOCK,
                    source: WEIGHTS,
                    destination: WIDE_INBOX + ((kb % 4) * 4 + p as u32) * BLOCK,
                });
            }
        }
        phases.push(weights);
        // Level l: position i sends to the first of its group; each receiver's inbox holds
        // one buffer per (panel, sender).
        let levels: [&[(u32, u32)]; 3] = [
            &[
                (1, 0),
                (2, 0),
                (4, 3),
                (5, 3),
                (7, 6),
                (8, 6),
                (10, 9),
                (11, 9),
                (13, 12),
                (14, 12),
                (16, 15),
                (17, 15),
            ],
            &[(3, 0), (6, 0), (12, 9), (15, 9)],
            &[(9, 0)],
        ];
        for level in levels {
            let mut phase = Vec::new();
            for r in 0..ROWS {
                for (p, &cb) in panels.iter().enumerate() {
                    // Position i holds K range i, except that 0 and cb trade places.
                    let at = |position: u32| {
                        let range = match position {
                            0 => cb,
                            x if x == cb => 0,
                            x => x,
                        };
                        r * COLUMNS + range
                    };
                    for (n, &(from, to)) in level.iter().enumerate() {
                        let slot_in_inbox = (p as u32) * 2 + (n as u32 % 2);
                        phase.push(Planned {
                            from: at(from),
                            to: vec![at(to)],
                            bytes: PARTIAL,
                            source: PARTIALS + p as u32 * PARTIAL,
                            destination: PARTIAL_INBOX + slot_in_inbox * PARTIAL,
                        });
                    }
                }
            }
            phases.push(phase);
        }
    }
    phases
}

/// Simulated exchange cycles of `phases` on `target`, each scheduled as the module describes.
fn simulate(phases: Vec<Vec<Planned>>, target: &Target) -> u64 {
    let mut steps = Vec::new();
    let mut senders: BTreeMap<u32, ()> = BTreeMap::new();
    for (index, planned) in phases.into_iter().enumerate() {
        for transfer in &planned {
            senders.insert(transfer.from, ());
        }
        steps.push(exchange(index as u32, &schedule(planned, target)));
    }
    let mut image = image_with(steps);
    for &tile in senders.keys() {
        image.add_segment(tile, WEIGHTS, vec![tile as u8; 32_768]);
        image.add_segment(tile, PARTIALS, vec![!(tile as u8); 4 * 4_608]);
    }
    let mut sim = Simulator::new(target.clone(), std::sync::Arc::new(RustKernels));
    sim.load(&image).expect("the replay's phases load");
    let profile = sim.run("run").expect("the replay's phases run");
    profile.cycles_of(StepKind::Exchange)
}

fn error(simulated: u64, measured: u64) -> f64 {
    simulated as f64 / measured as f64 - 1.0
}

#[test]
fn the_phases_are_the_plans() {
    let up = up_projection();
    let down = down_projection();
    assert_eq!(up.len() + down.len(), 38);
    // Every receiver of the up-projection takes 32,768 B per phase.
    let mut received: BTreeMap<u32, u32> = BTreeMap::new();
    for transfer in &up[3] {
        for &tile in &transfer.to {
            *received.entry(tile).or_default() += transfer.bytes;
        }
    }
    assert_eq!(received.len(), 80 * 18);
    assert!(received.values().all(|&bytes| bytes == 32_768));
    // A full round's weight phase: 288 blocks, 131,072 B into every tile of the K ranges.
    let mut received: BTreeMap<u32, u32> = BTreeMap::new();
    for transfer in &down[0] {
        for &tile in &transfer.to {
            *received.entry(tile).or_default() += transfer.bytes;
        }
    }
    assert_eq!(down[0].len(), 288);
    assert_eq!(down[16].len(), 144);
    assert!(received.values().all(|&bytes| bytes <= 131_072));
    assert_eq!(
        received.values().filter(|&&b| b == 131_072).count(),
        18 * 81 - 16
    );
    // The reduction of one round: 12, 4 and 1 partials per (row partition, panel) in its
    // three levels, and every output block's tile ends up with the sum.
    assert_eq!(down[1].len(), 12 * 81 * 4);
    assert_eq!(down[2].len(), 4 * 81 * 4);
    assert_eq!(down[3].len(), 81 * 4);
    for (r, cb) in [(0, 0), (5, 2), (80, 3)] {
        let root = r * 18 + cb;
        assert!(down[3].iter().any(|t| t.to == [root]), "({r}, {cb})");
    }
}

#[test]
fn the_siglip_mlp_exchange_replays_within_its_band() {
    let target = Target::c600();
    let up = simulate(up_projection(), &target);
    let whole = simulate(
        up_projection()
            .into_iter()
            .chain(down_projection())
            .collect(),
        &target,
    );
    let (up_error, whole_error) = (error(up, MEASURED_UP), error(whole, MEASURED_EXCHANGE));
    eprintln!(
        "SigLIP MLP exchange: up-projection hardware {MEASURED_UP}, simulated {up} ({:+.2} %); \
         all 38 phases hardware {MEASURED_EXCHANGE}, simulated {whole} ({:+.2} %), the anchor's \
         own schedule {SCHEDULED_EXCHANGE} ({:+.2} %)",
        100.0 * up_error,
        100.0 * whole_error,
        100.0 * error(SCHEDULED_EXCHANGE, MEASURED_EXCHANGE)
    );
    assert!(
        (UP_BAND.0..=UP_BAND.1).contains(&up_error),
        "up-projection {:+.2} % left {UP_BAND:?}",
        100.0 * up_error
    );
    assert!(
        (WHOLE_BAND.0..=WHOLE_BAND.1).contains(&whole_error),
        "whole exchange {:+.2} % left {WHOLE_BAND:?}",
        100.0 * whole_error
    );
    // What the select latency per source switch is worth: charged once per phase only (inside
    // the fixed cost, the model before it was fitted here), the weight and reduction phases'
    // chains of 4-20 transfers from different senders into one tile come out 5 % short.
    let mut once = Target::c600();
    once.exchange.latency_events.value = 0;
    let once_per_phase = simulate(
        up_projection()
            .into_iter()
            .chain(down_projection())
            .collect(),
        &once,
    );
    let once_error = error(once_per_phase, MEASURED_EXCHANGE);
    eprintln!(
        "with the select latency once per phase: simulated {once_per_phase} ({:+.2} %)",
        100.0 * once_error
    );
    assert!(once_error < -0.04, "{:+.2} %", 100.0 * once_error);
    // Why a physical pair's sends do not share a bus: with them shared, the up-projection's
    // nine sending pairs per phase serialize and the replay is 90 % over the hardware.
    let mut shared = Target::c600();
    shared.exchange.send_bus_tiles.value = 2;
    let serialized = simulate(up_projection(), &shared);
    eprintln!(
        "with pairs sharing a send bus: up-projection simulated {serialized} ({:+.2} %)",
        100.0 * error(serialized, MEASURED_UP)
    );
    assert!(error(serialized, MEASURED_UP) > 0.85);
    assert_eq!(
        target.exchange.send_bus_tiles.source,
        ipu_device::target::Source::Fitted(ipu_device::target::Replay::SiglipMlpUpProjection)
    );
}
