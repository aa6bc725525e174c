//! Fidelity: replays of what the anchor measured on a real C600 (`ANCHOR-PLANS.md`, the only
//! hardware ground truth we have), each compared with the hardware figure. A replay's error
//! must stay inside the band BENCHMARKS.md ("Fidelity") documents for the current model: a
//! change to the exchange model that moves it out fails here, and the band is re-derived and
//! re-documented with it.

use ipu_device::image::Transfer;
use ipu_device::sim::StepKind;
use ipu_device::Target;

use crate::sim_support::*;

/// The anchor's multicast timing (commit e4eb9ab): root tile 0 sends `words` 32-bit words to
/// tiles 32 and 53; cycles until the sender finishes and until each receiver has the data,
/// sampled by worker 0 around the exchange (a fixed worker/supervisor hand-off included).
const MULTICAST: [(u32, u64, u64, u64); 4] = [
    (1, 204, 552, 534),
    (64, 270, 618, 594),
    (1_024, 1_230, 1_578, 1_554),
    (4_148, 4_350, 4_698, 4_680),
];

/// The band of `simulated / hardware - 1` the current model holds for the receivers: its
/// fixed phase cost (521) and route time (one cycle per folded column) are fitted to these
/// rows, and what remains is the table's own jitter (it was sampled by a worker, in steps of
/// about 6 cycles): -0.4 % to +0.2 %. Issue 19's target is 5 %.
const MULTICAST_BAND: (f64, f64) = (-0.005, 0.005);

/// The table's receivers, physical tiles 32 and 53 of row 0, as logical tiles.
fn receivers(target: &Target) -> [(u32, u32); 2] {
    [32, 53].map(|physical| {
        let logical = target.physical_to_logical(physical).expect("on the grid");
        (physical, logical)
    })
}

/// Cycles of one exchange phase sending `words` words from the table's root (physical tile 0)
/// to `destinations` (logical tiles).
fn simulated_multicast(words: u32, destinations: &[u32]) -> u64 {
    let bytes = words * 4;
    let root = Target::c600().physical_to_logical(0).expect("on the grid");
    let transfer = Transfer {
        source_tile: root,
        source_address: ADDR_A,
        destinations: destinations.to_vec(),
        destination_address: ADDR_B,
        bytes,
        slot: 0,
    };
    let mut image = image_with(vec![exchange(0, &[transfer])]);
    image.add_segment(root, ADDR_A, (0..bytes).map(|i| i as u8).collect());
    let mut sim = simulator();
    sim.load(&image).expect("the multicast loads");
    let profile = sim.run("run").expect("the multicast runs");
    for &tile in destinations {
        let moved = sim
            .read_memory(tile, ADDR_B, bytes as usize)
            .expect("a receiver's copy");
        assert_eq!(moved, (0..bytes).map(|i| i as u8).collect::<Vec<_>>());
    }
    profile.cycles_of(StepKind::Exchange)
}

#[test]
fn the_multicast_timing_table_replays_within_its_band() {
    let target = Target::c600();
    let [(_, far), (_, near)] = receivers(&target);
    let mut rows = Vec::new();
    for (words, _sender, tile_32, tile_53) in MULTICAST {
        // A receiver's time is its phase's when it receives alone; the multicast to both
        // lasts until the farther one has the data.
        let both = simulated_multicast(words, &[far, near]);
        let mut alone = Vec::new();
        for (physical, logical, hardware) in [(32, far, tile_32), (53, near, tile_53)] {
            let simulated = simulated_multicast(words, &[logical]);
            // The model: the phase's fixed cost, one cycle per 4-byte word, the route.
            assert_eq!(
                simulated,
                u64::from(target.exchange.phase_cycles.value)
                    + u64::from(words)
                    + target.route_cycles(0, logical)
            );
            let error = simulated as f64 / hardware as f64 - 1.0;
            rows.push(format!(
                "{words} words -> physical tile {physical}: hardware {hardware}, simulated {simulated}, error {:+.2} %",
                100.0 * error
            ));
            assert!(
                (MULTICAST_BAND.0..=MULTICAST_BAND.1).contains(&error),
                "{words} words to physical tile {physical}: error {:+.2} % left the documented band {:?}\n{}",
                100.0 * error,
                MULTICAST_BAND,
                rows.join("\n")
            );
            alone.push(simulated);
        }
        assert_eq!(both, alone[0].max(alone[1]));
        assert!(alone[0] > alone[1], "physical tile 32 receives after 53");
    }
    eprintln!("{}", rows.join("\n"));
    // What the table says about the model: receive time grows by one cycle per word (the
    // table's slope between its rows), as ours does; the error is the fixed part.
    for pair in MULTICAST.windows(2) {
        let ((w0, _, r0, _), (w1, _, r1, _)) = (pair[0], pair[1]);
        let slope = (r1 - r0) as f64 / f64::from(w1 - w0);
        assert!(
            (slope - 1.0).abs() < 0.05,
            "slope {slope} between {w0} and {w1} words"
        );
    }
}

#[test]
fn the_fitted_phase_cost_and_route_time_are_the_multicast_replays_least_squares_fit() {
    // The model prices a receive at `phase_cycles + words + per_column * folded distance`.
    // Each receiver's fixed part is the mean of its four `receive - words`; the route
    // constant is the two receivers' difference over their folded distances (31 and 10
    // columns from the root's 0), and the least-squares phase cost the mean of what remains.
    let target = Target::c600();
    let [(_, far), (_, near)] = receivers(&target);
    let mean = |pick: fn(&(u32, u64, u64, u64)) -> u64| {
        MULTICAST
            .iter()
            .map(|row| pick(row) as f64 - f64::from(row.0))
            .sum::<f64>()
            / MULTICAST.len() as f64
    };
    let (fixed_far, fixed_near) = (mean(|r| r.2), mean(|r| r.3));
    let folded = |tile| {
        let column = target
            .logical_to_physical(tile)
            .expect("on the grid")
            .column;
        f64::from(target.folded_column(column))
    };
    let per_column = (fixed_far - fixed_near) / (folded(far) - folded(near));
    assert_eq!((folded(far), folded(near)), (31.0, 10.0));
    assert_eq!(
        target.exchange.route_cycles_per_column.value,
        per_column.round() as u32
    );
    let fitted = ((fixed_far - per_column * folded(far) + fixed_near - per_column * folded(near))
        / 2.0)
        .round() as u32;
    assert_eq!(target.exchange.phase_cycles.value, fitted);
    for source in [
        target.exchange.phase_cycles.source,
        target.exchange.route_cycles_per_column.source,
    ] {
        assert_eq!(
            source,
            ipu_device::target::Source::Fitted(ipu_device::target::Replay::Multicast)
        );
    }
}
