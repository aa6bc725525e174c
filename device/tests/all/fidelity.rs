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
/// fixed phase cost is fitted to these rows (542, the mean of the measured 530-554 fixed
/// parts), so what remains is the 18-22 cycles tile 32 receives after tile 53 (a route time
/// by position the model does not have): -1.9 % to +2.0 %. Issue 19's target is 5 %.
const MULTICAST_BAND: (f64, f64) = (-0.025, 0.025);

/// Cycles of one exchange phase multicasting `words` words from tile 0 to tiles 32 and 53.
fn simulated_multicast(words: u32) -> u64 {
    let bytes = words * 4;
    let transfer = Transfer {
        source_tile: 0,
        source_address: ADDR_A,
        destinations: vec![32, 53],
        destination_address: ADDR_B,
        bytes,
        slot: 0,
    };
    let mut image = image_with(vec![exchange(0, &[transfer])]);
    image.add_segment(0, ADDR_A, (0..bytes).map(|i| i as u8).collect());
    let mut sim = simulator();
    sim.load(&image).expect("the multicast loads");
    let profile = sim.run("run").expect("the multicast runs");
    let moved = sim
        .read_memory(53, ADDR_B, bytes as usize)
        .expect("tile 53's copy");
    assert_eq!(moved, (0..bytes).map(|i| i as u8).collect::<Vec<_>>());
    profile.cycles_of(StepKind::Exchange)
}

#[test]
fn the_multicast_timing_table_replays_within_its_band() {
    let target = Target::c600();
    let mut rows = Vec::new();
    for (words, _sender, tile_32, tile_53) in MULTICAST {
        let simulated = simulated_multicast(words);
        // The model: the phase's fixed cost plus one cycle per 4-byte word.
        assert_eq!(
            simulated,
            u64::from(target.exchange.phase_cycles.value) + u64::from(words)
        );
        for (tile, hardware) in [(32, tile_32), (53, tile_53)] {
            let error = simulated as f64 / hardware as f64 - 1.0;
            rows.push(format!(
                "{words} words -> tile {tile}: hardware {hardware}, simulated {simulated}, error {:+.1} %",
                100.0 * error
            ));
            assert!(
                (MULTICAST_BAND.0..=MULTICAST_BAND.1).contains(&error),
                "{words} words to tile {tile}: error {:+.2} % left the documented band {:?}\n{}",
                100.0 * error,
                MULTICAST_BAND,
                rows.join("\n")
            );
        }
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
fn the_fitted_phase_cost_is_the_multicast_replays_least_squares_fixed_part() {
    // The model prices a receive at `phase_cycles + words`: the least-squares `phase_cycles`
    // over the eight measured receive times is the mean of `receive - words`.
    let fixed: Vec<f64> = MULTICAST
        .iter()
        .flat_map(|&(words, _, tile_32, tile_53)| {
            [tile_32, tile_53].map(|cycles| cycles as f64 - f64::from(words))
        })
        .collect();
    let fitted = (fixed.iter().sum::<f64>() / fixed.len() as f64).round() as u32;
    let target = Target::c600();
    assert_eq!(target.exchange.phase_cycles.value, fitted);
    assert_eq!(
        target.exchange.phase_cycles.source,
        ipu_device::target::Source::Fitted(ipu_device::target::Replay::Multicast)
    );
}
