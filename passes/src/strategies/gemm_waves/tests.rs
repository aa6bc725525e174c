//! Tests of the GEMM in waves' layout, phases and refusals.

use super::*;
use ipu_dialects::format::Memory;

/// The hardware-measured GEMM's plan (ANCHOR-PLANS.md section 1).
fn anchor_plan() -> GemmWavesPlan {
    GemmWavesPlan {
        grid: [46, 64],
        tiles: 1472,
        k_block: 64,
        weights: Memory::Standard,
        left: Memory::Standard,
        precision: Precision::F16,
        output_shift: 1,
        left_replicated: false,
        c_block: None,
    }
}

#[test]
fn the_anchor_gemm_layout() {
    let grid = WavesGrid::planned((4096, 4096, 4096), &anchor_plan(), 1472).unwrap();
    assert_eq!(
        (grid.groups, grid.waves, grid.panels, grid.cb),
        (23, 2, 64, 64)
    );
    // 2 row blocks of 90, 44 of 89.
    assert_eq!(grid.row_block(0), (0, 90));
    assert_eq!(grid.row_block(1), (90, 90));
    assert_eq!(grid.row_block(2), (180, 89));
    assert_eq!(grid.row_block(45), (4096 - 89, 89));
    assert_eq!(grid.row_counts(), vec![90, 89]);
    // Block i on tile i mod 1472; A (r, k) homed on (r * 64 + k) mod 1472, B (k, c) on
    // (k mod 23) * 64 + c, the result of block i on (i + 1) mod 1472.
    for (r, c) in [(0, 0), (22, 63), (23, 0), (45, 63), (30, 7)] {
        let block = r * 64 + c;
        assert_eq!(grid.tile(r, c), block % 1472);
        assert_eq!(grid.a_home(r, c).0, block % 1472);
        assert_eq!(grid.b_home(r, c).0, (r % 23) * 64 + c);
        assert_eq!(grid.out_home(r, c).0, (block + 1) % 1472);
    }
    // 2 waves x (64 panels + the evacuation).
    assert_eq!(grid.phases(), 130);
    assert_eq!(grid.home_slots(), [2, 3, 2]);
}

/// Every panel phase moves each A panel of the wave once to the other 63 tiles of its row
/// group and each B panel to the other 22 tiles of its column: about 19.5 KB received per
/// tile, from two senders; every slot of every home is distinct.
#[test]
fn panel_phases_multicast_each_panel_once_from_its_home() {
    let grid = WavesGrid::planned((4096, 4096, 4096), &anchor_plan(), 1472).unwrap();
    for phase in [0, 17, 64, 65, 100, 129] {
        let mut received = vec![0u64; 1472];
        let mut senders = vec![Vec::new(); 1472];
        let mut moves = 0;
        grid.for_each_move(phase, |from, to, bytes, moved| {
            moves += 1;
            for &t in to {
                received[t as usize] += u64::from(bytes);
                senders[t as usize].push(from);
            }
            if let Moved::A { .. } = moved {
                assert_eq!(to.len(), 63);
            }
            if let Moved::B { .. } = moved {
                assert_eq!(to.len(), 22);
            }
            if let Moved::Result { .. } = moved {
                assert_eq!(to.len(), 1);
            }
        });
        let (_, s) = grid.phase_of(phase);
        if s == 64 {
            assert_eq!(moves, 1472, "phase {phase}");
            assert!(received
                .iter()
                .all(|&b| b == 90 * 64 * 2 || b == 89 * 64 * 2));
        } else {
            assert_eq!(moves, 23 + 64, "phase {phase}");
            let most = *received.iter().max().unwrap();
            // Wave 0 holds the two 90-row blocks.
            let rows = if phase < 65 { 90 } else { 89 };
            assert_eq!(most, rows * 64 * 2 + 64 * 64 * 2, "phase {phase}");
            assert!(senders.iter().all(|s| s.len() <= 2));
        }
    }
    let mut slots = std::collections::BTreeSet::new();
    for r in 0..46 {
        for s in 0..64 {
            assert!(slots.insert(grid.a_home(r, s)), "A ({r}, {s})");
        }
    }
    slots.clear();
    for s in 0..64 {
        for c in 0..64 {
            let home = grid.b_home(s, c);
            assert!(home.1 < grid.home_slots()[1]);
            assert!(slots.insert(home), "B ({s}, {c})");
        }
    }
}

#[test]
fn plans_that_cannot_be_followed_say_why() {
    let plan = anchor_plan();
    let refused =
        |dims, plan: &GemmWavesPlan, tiles| WavesGrid::planned(dims, plan, tiles).unwrap_err();
    assert!(refused((4096, 4096, 4000), &plan, 1472).contains("equal blocks"));
    assert!(refused((4096, 4096, 4096), &plan, 1216).contains("the lowering may use 1216"));
    for k_block in [4096, 40, 0] {
        let wide = GemmWavesPlan {
            k_block,
            ..plan.clone()
        };
        let why = refused((4096, 4096, 4096), &wide, 1472);
        assert!(why.contains(&format!("k_block = {k_block} ")), "{why}");
    }
    let fp8 = GemmWavesPlan {
        precision: Precision::F8E4M3,
        ..plan
    };
    assert!(refused((4096, 4096, 4096), &fp8, 1472).contains("FP8"));
}

/// A K that is not a multiple of the panel (nor of 16): the last panel is what is left,
/// padded to whole 16-groups.
#[test]
fn the_last_panel_is_what_is_left() {
    let plan = GemmWavesPlan {
        grid: [5, 2],
        tiles: 4,
        k_block: 64,
        ..anchor_plan()
    };
    let grid = WavesGrid::planned((37, 150, 64), &plan, 16).unwrap();
    assert_eq!(
        (grid.panels, grid.panel_rows(0), grid.panel_rows(2)),
        (3, 64, 32)
    );
    assert_eq!((grid.groups, grid.waves), (2, 3));
    assert_eq!(grid.wave_rows(2), 4..5);
    assert_eq!(grid.row_counts(), vec![8, 7]);
}

/// Seeded property (xorshift, fixed seed): for random products and plans, every block of a
/// wave runs on its own tile, every home slot holds one panel, the panels cover K, and in
/// every panel phase each tile of the wave gets A (r, s) and B (s, c) of its block exactly
/// once unless it is their home; the evacuation moves every block once to its home.
#[test]
fn random_layouts_cover_every_block_and_panel_once() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |bound: u32| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % u64::from(bound)) as u32
    };
    let mut checked = 0;
    for _ in 0..300 {
        let gn = 1 + next(6);
        let (m, k, n) = (1 + next(200), 1 + next(300), gn * 16 * (1 + next(3)));
        let gm = 1 + next(m.min(12));
        let groups = 1 + next(gm);
        let plan = GemmWavesPlan {
            grid: [gm, gn],
            tiles: groups * gn,
            k_block: 16 * (1 + next(6)),
            ..anchor_plan()
        };
        let Ok(grid) = WavesGrid::planned((m, k, n), &plan, 64) else {
            continue;
        };
        checked += 1;
        assert_eq!(
            (0..grid.panels).map(|s| grid.panel_rows(s)).sum::<u32>(),
            k.div_ceil(16) * 16
        );
        let [a_slots, b_slots, out_slots] = grid.home_slots();
        let mut homes = std::collections::BTreeSet::new();
        for r in 0..gm {
            for s in 0..grid.panels {
                let home = grid.a_home(r, s);
                assert!(home.0 < grid.tiles() && home.1 < a_slots);
                assert!(homes.insert(home), "{plan:?}: A ({r}, {s})");
            }
        }
        homes.clear();
        for s in 0..grid.panels {
            for c in 0..gn {
                let home = grid.b_home(s, c);
                assert!(home.0 < grid.tiles() && home.1 < b_slots);
                assert!(homes.insert(home), "{plan:?}: B ({s}, {c})");
            }
        }
        homes.clear();
        for r in 0..gm {
            for c in 0..gn {
                let home = grid.out_home(r, c);
                assert!(home.1 < out_slots);
                assert!(homes.insert(home), "{plan:?}: result ({r}, {c})");
            }
        }
        for phase in 0..grid.phases() {
            let (w, s) = grid.phase_of(phase);
            let mut got = std::collections::BTreeMap::new();
            grid.for_each_move(phase, |from, to, _, moved| {
                assert!(!to.contains(&from));
                for &t in to {
                    *got.entry((t, moved)).or_insert(0) += 1;
                }
            });
            assert!(got.values().all(|&n| n == 1), "{plan:?} phase {phase}");
            let mut tiles = std::collections::BTreeSet::new();
            for r in grid.wave_rows(w) {
                for c in 0..gn {
                    let tile = grid.tile(r, c);
                    assert!(tiles.insert(tile), "{plan:?}: two blocks on tile {tile}");
                    if s == grid.panels {
                        let home = grid.out_home(r, c).0;
                        let moved = got.contains_key(&(home, Moved::Result { r, c }));
                        assert_eq!(moved, home != tile, "{plan:?}: result ({r}, {c})");
                        continue;
                    }
                    let a = got.contains_key(&(tile, Moved::A { r, s }));
                    assert_eq!(a, grid.a_home(r, s).0 != tile, "{plan:?}: A ({r}, {s})");
                    let b = got.contains_key(&(tile, Moved::B { s, c }));
                    assert_eq!(b, grid.b_home(s, c).0 != tile, "{plan:?}: B ({s}, {c})");
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} layouts checked");
}
