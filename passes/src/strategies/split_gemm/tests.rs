//! Unit tests of the split GEMM: splits, the model against the target table, chains.

use crate::tiling::program::HostPiece;

/// Every device element a list of pieces writes, by element offset in the place's
/// buffer: `Some(tensor element)` or `None` for a zero of the padding.
pub(crate) fn written(
    pieces: &[HostPiece],
    eb: u32,
) -> std::collections::BTreeMap<u32, Option<u64>> {
    let mut out = std::collections::BTreeMap::new();
    for piece in pieces {
        let run = piece.bytes / piece.runs / eb;
        let tensor = piece.tensor_run_bytes() / eb;
        for r in 0..piece.runs {
            for x in 0..run {
                let at = piece.place.offset / eb + r * run + x;
                let element = (x < tensor).then(|| {
                    (piece.tensor_offset + u64::from(r) * piece.stride) / u64::from(eb)
                        + u64::from(x)
                });
                assert!(
                    out.insert(at, element).is_none(),
                    "element {at} written twice"
                );
            }
        }
    }
    out
}

mod splits {
    use super::super::*;
    use super::written;

    #[test]
    fn splits_cover_their_axis_once() {
        // 4096 = 23 * 178 + 2: two blocks of 179, then 178s.
        let split = Split::new(4096, 23, 1).unwrap();
        assert_eq!(split.blocks.len(), 23);
        assert_eq!(split.blocks[0], (0, 179));
        assert_eq!(split.blocks[2], (358, 178));
        assert_eq!(split.blocks[22], (4096 - 178, 178));
        let mut next = 0;
        for &(first, len) in &split.blocks {
            assert_eq!(first, next);
            assert!(len > 0);
            next += len;
        }
        assert_eq!(next, 4096);
        // 16-column groups: 256 groups over 9 parts: four of 29, five of 28.
        let split = Split::new(4096, 9, 16).unwrap();
        assert_eq!(split.blocks[3], (3 * 29 * 16, 29 * 16));
        assert_eq!(split.blocks[4], (4 * 29 * 16, 28 * 16));
        assert_eq!(split.largest(), 29 * 16);
        assert!(Split::new(32, 3, 16).is_none());
    }

    #[test]
    fn panel_pieces_map_amp_order_to_tensor_elements() {
        // A 5-row panel with 2 groups (32 columns) of a tensor with 100 columns, from row 7
        // and column 48; elements [48, 112) are rows 3..5 of group 0 and 0..2 of group 1.
        let mut out = Vec::new();
        panel_pieces(
            3,
            Place::at(0, 64),
            (48, 64),
            5,
            (7, 48),
            (100, 100),
            2,
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].runs, 2);
        assert_eq!(out[0].tensor_offset, ((7 + 3) * 100 + 48) * 2);
        assert_eq!(out[0].place.offset, 64);
        assert_eq!(out[1].runs, 2);
        assert_eq!(out[1].tensor_offset, (7 * 100 + 48 + 16) * 2);
        assert_eq!(out[1].place.offset, 64 + 32 * 2);
        assert!(out
            .iter()
            .all(|p| p.stride == 200 && p.bytes == p.runs * 32));
    }

    /// A panel over the edge of a 9 x 20 tensor (rows 7.. of a 5-row panel, columns 0..32):
    /// rows 7 and 8 are tensor rows, their second group 4 tensor columns and 12 zeros; rows
    /// 9 to 11 are zeros (K padding). Every panel element is written once, as the tensor
    /// element at its AMP place or a zero, for every cut of the panel.
    #[test]
    fn panel_pieces_pad_partial_groups_and_rows_with_zeros() {
        let (rows, cols, panel_rows, origin) = (9u32, 20u32, 5u32, (7u32, 0u32));
        for (first, len) in [(0, 160), (16, 128), (48, 64), (80, 80)] {
            let mut out = Vec::new();
            panel_pieces(
                2,
                Place::at(0, first * 2),
                (first, len),
                panel_rows,
                origin,
                (rows, cols),
                2,
                &mut out,
            );
            let written = written(&out, 2);
            assert_eq!(written.len() as u32, len, "({first}, {len})");
            for e in first..first + len {
                let (g, r, x) = (e / (16 * panel_rows), (e / 16) % panel_rows, e % 16);
                let (row, col) = (origin.0 + r, origin.1 + g * 16 + x);
                let expected = (row < rows && col < cols).then(|| u64::from(row * cols + col));
                assert_eq!(written[&e], expected, "({first}, {len}): element {e}");
            }
        }
    }
}

mod model_tests {
    use super::super::*;
    use crate::tiling::layout::PhaseLoad;

    /// Every non-empty exchange phase's transfers, `(source, destinations, bytes)`.
    fn exchange_phases(grid: &SplitGrid, precision: Precision) -> Vec<Vec<(u32, Vec<u32>, u64)>> {
        (0..=grid.panels)
            .map(|phase| {
                let mut transfers = Vec::new();
                grid.for_each_exchange_transfer(precision, phase, |source, destinations, bytes| {
                    transfers.push((source, destinations.to_vec(), bytes))
                });
                transfers
            })
            .filter(|phase| !phase.is_empty())
            .collect()
    }

    /// The split model of the F16 4096^3 GEMM on the C600's 1472 tiles: the cheapest grid
    /// uses at least 90 % of the tiles, K is split, and its modelled cycles (receive-bound
    /// exchange) are within 1.6x of the ideal AMP cycles; one exchange phase per K panel plus
    /// the reduction, each phase's transfers covering every receive once.
    #[test]
    fn gemm_4096_on_1472_tiles() {
        let target = Target::c600();
        let dims = (4096, 4096, 4096);
        let grid = SplitGrid::best(dims, 1472, Precision::F16, &target).expect("a grid fits");
        assert!(grid.tiles() * 10 >= 1472 * 9 && grid.tiles() <= 1472);
        assert!(grid.gk > 1, "{grid:?}");
        let ideal = cost::ideal_gemm_cycles(4096, 4096, 4096, Precision::F16, 1472, &target);
        let modelled = grid.estimate(Precision::F16, &target).total();
        assert!(
            modelled >= ideal && modelled * 5 <= ideal * 8,
            "{modelled} vs {ideal}"
        );
        let phases = exchange_phases(&grid, Precision::F16);
        assert_eq!(phases.len() as u32, grid.panels + 1);
        // Every tile receives its whole A and B panel minus its own ranges, once.
        let (r, c) = (grid.rows.largest(), grid.cols.largest());
        let mut received = vec![0u64; grid.tiles() as usize];
        for (_, destinations, bytes) in &phases[0] {
            for &d in destinations {
                received[d as usize] += bytes;
            }
        }
        let (_, kp) = grid.panels_of(0)[0];
        let whole = u64::from((r * kp + kp * c) * 2);
        assert!(
            received[0] < whole && received[0] * 10 > whole * 8,
            "{} of {whole} ({grid:?})",
            received[0]
        );
    }

    /// The program the lowering emits for `grid` with F16 host operands.
    fn lowered_f16(grid: &SplitGrid) -> TileProgram {
        let mut program = TileProgram::default();
        let homes = inputs(&mut program, grid, Precision::F16, "op0");
        lower(
            &mut program,
            grid,
            (Precision::F16, [0, 0]),
            &homes,
            None,
            "op0",
        );
        program
    }

    /// The estimate prices the GEMM and reduce calls the lowering emits: with the B panel in
    /// standard memory the calls read standard weights in the program and in the estimate
    /// (which priced every call as interleaved before), and the busiest tile's GEMM cycles in
    /// the program are the estimate's.
    #[test]
    fn the_estimate_prices_the_emitted_calls() {
        let target = Target::c600();
        let mut gemm_cycles = Vec::new();
        for class in [MemoryClass::Interleaved, MemoryClass::Standard] {
            let grid = SplitGrid::new((64, 512, 96), (2, 2, 2), Precision::F16, class, &target)
                .expect("fits");
            assert_eq!(grid.weights_class(), class);
            let program = lowered_f16(&grid);
            let mut per_tile = std::collections::BTreeMap::<u32, (u64, u64)>::new();
            for step in &program.run {
                let TileStep::Compute { runs, .. } = step else {
                    continue;
                };
                for run in runs {
                    let spec = &program.kernels[run.kernel as usize];
                    let cycles = cost::kernel_cycles(spec, &target);
                    let entry = per_tile.entry(run.tile).or_default();
                    match spec {
                        KernelSpec::Gemm { weights, rows, .. } => {
                            assert_eq!((*weights, rows), (class, &grid.row_entries()));
                            entry.0 += cycles;
                        }
                        KernelSpec::ReduceAdd { .. } | KernelSpec::Add { .. } => entry.1 += cycles,
                        _ => {}
                    }
                }
            }
            let estimate = grid.estimate(Precision::F16, &target);
            let busiest = |part: fn(&(u64, u64)) -> u64| per_tile.values().map(part).max();
            assert_eq!(busiest(|t| t.0), Some(estimate.gemm), "{grid:?}");
            assert_eq!(busiest(|t| t.1), Some(estimate.reduce), "{grid:?}");
            gemm_cycles.push(estimate.gemm);
        }
        // Standard weights feed the AMP more slowly.
        assert!(gemm_cycles[1] > gemm_cycles[0], "{gemm_cycles:?}");
    }

    /// A candidate's exchange and copies are priced from what the lowering emits: its exchange
    /// cycles are the endpoint rule over the emitted moves of each phase, and the estimate's
    /// candidate's copies are the busiest tile's emitted copy calls.
    #[test]
    fn exchange_and_copies_are_priced_from_the_emitted_program() {
        let target = Target::c600();
        for (dims, split) in [
            ((64, 512, 96), (2, 2, 2)),
            ((96, 384, 128), (3, 2, 3)),
            ((256, 1024, 192), (4, 3, 2)),
        ] {
            let grid = SplitGrid::new(
                dims,
                split,
                Precision::F16,
                MemoryClass::Interleaved,
                &target,
            )
            .expect("fits");
            let program = lowered_f16(&grid);
            let mut emitted_exchange = 0;
            let mut copies = std::collections::BTreeMap::<u32, u64>::new();
            for step in &program.run {
                match step {
                    TileStep::Exchange { moves, .. } => {
                        let mut load = PhaseLoad::new(grid.tiles());
                        for m in moves {
                            load.add_transfer(m.source_tile, &m.destinations, u64::from(m.bytes));
                        }
                        emitted_exchange += load.cycles(&target);
                    }
                    TileStep::Compute { runs, .. } => {
                        for run in runs {
                            let spec = &program.kernels[run.kernel as usize];
                            if matches!(spec, KernelSpec::Copy { .. }) {
                                *copies.entry(run.tile).or_default() +=
                                    cost::kernel_cycles(spec, &target);
                            }
                        }
                    }
                    _ => {}
                }
            }
            let (_, priced_exchange, _) =
                super::super::candidates::exchange_phases(&grid, Precision::F16, &target);
            assert_eq!(priced_exchange, emitted_exchange, "{grid:?}");
            let busiest = copies.values().copied().max().unwrap_or(0);
            assert_eq!(
                grid.home_copy_cycles(Precision::F16, &target),
                busiest,
                "{grid:?}"
            );
            // The ranking estimate's closed form bounds them (a tile with the largest A and
            // the largest B range).
            let ranking = grid.estimate(Precision::F16, &target).copies;
            assert!(
                busiest <= ranking && ranking * 100 <= busiest * 105,
                "{ranking} vs {busiest}"
            );
        }
    }

    /// Resident weights: the host writes every tile's whole B block (its K slice by its
    /// column block, in AMP-right order panel by panel) exactly once per tile, the panel
    /// phases move only A, and the model drops B's exchange and copies.
    #[test]
    fn resident_weights_are_written_where_read_and_never_exchanged() {
        let target = Target::c600();
        let (m, k, n) = (40, 256, 48);
        let resident = SplitEnv {
            b_resident: true,
            ..SplitEnv::host(MemoryClass::Interleaved)
        };
        for shape in [(2, 1, 2), (2, 3, 1), (3, 1, 4), (1, 3, 2)] {
            let grid = SplitGrid::within((m, k, n), shape, Precision::F16, &resident, &target)
                .expect("fits");
            let streamed = SplitGrid::new(
                (m, k, n),
                shape,
                Precision::F16,
                MemoryClass::Interleaved,
                &target,
            )
            .expect("fits");
            assert_eq!(grid.classes.b_home, MemoryClass::Interleaved);
            let mut program = TileProgram::default();
            let inputs = inputs(&mut program, &grid, Precision::F16, "op0");
            // (tile, K row, column) of every B element written.
            let mut written = std::collections::BTreeMap::new();
            for piece in &inputs.b_pieces {
                for range in piece.tensor_ranges() {
                    for byte in range.step_by(2) {
                        let e = (byte / 2) as u32;
                        *written.entry((piece.tile, e / n, e % n)).or_insert(0) += 1;
                    }
                }
            }
            for l in 0..grid.gk {
                for (j, &(col0, cols)) in grid.cols.blocks.iter().enumerate() {
                    let (k0, kt) = grid.ks.blocks[l as usize];
                    for i in 0..grid.gm {
                        let tile = grid.tile(i, j as u32, l);
                        for kk in k0..k0 + kt {
                            for col in col0..col0 + cols {
                                assert_eq!(
                                    written.remove(&(tile, kk, col)),
                                    Some(1),
                                    "{shape:?}: tile {tile} B[{kk}][{col}]"
                                );
                            }
                        }
                    }
                }
            }
            assert!(written.is_empty(), "{shape:?}: stray writes {written:?}");
            // Only A moves in the panel phases (there are none with one column block), then
            // the reduction with a K split.
            let phases = exchange_phases(&grid, Precision::F16);
            let panel_phases = if grid.gn > 1 { grid.panels } else { 0 };
            assert_eq!(
                phases.len() as u32,
                panel_phases + u32::from(grid.gk > 1),
                "{shape:?}"
            );
            for phase in phases.iter().take(panel_phases as usize) {
                for (source, destinations, _) in phase {
                    let (l, ij) = (source % grid.gk, source / grid.gk);
                    assert!(destinations
                        .iter()
                        .all(|&d| d % grid.gk == l && d / grid.gk / grid.gn == ij / grid.gn));
                }
            }
            let (a, b) = (
                grid.estimate(Precision::F16, &target),
                streamed.estimate(Precision::F16, &target),
            );
            assert!(
                a.exchange <= b.exchange && a.copies <= b.copies,
                "{shape:?}"
            );
            if grid.gm > 1 {
                assert!(a.exchange < b.exchange, "{shape:?}");
            }
        }
    }

    #[test]
    fn grids_that_do_not_fit_say_why() {
        let target = Target::c600();
        let error = SplitGrid::new(
            (4096, 4096, 4096),
            (2, 2, 2),
            Precision::F16,
            MemoryClass::Interleaved,
            &target,
        )
        .unwrap_err();
        assert!(error.contains("does not fit"), "{error}");
        // K and N padded to whole 16-groups where the host writes the operands and reads the
        // result, K also for an A gathered from row-major blocks (zeroed where it pads); not
        // for an A gathered from ranges, nor an N whose result is read on the device.
        let padded = SplitGrid::new(
            (64, 40, 19),
            (1, 2, 2),
            Precision::F16,
            MemoryClass::Interleaved,
            &target,
        )
        .expect("a padded grid fits");
        assert_eq!(
            (padded.k, padded.n, padded.k_real, padded.n_real),
            (48, 32, 40, 19)
        );
        let host = SplitEnv::host(MemoryClass::Interleaved);
        for (env, dims, expected) in [
            (
                SplitEnv {
                    a_device: true,
                    ..host
                },
                (64, 40, 32),
                "K = 40 is not a multiple of 16 and A is gathered from another split GEMM's ranges",
            ),
            (
                SplitEnv {
                    row_major: true,
                    ..host
                },
                (64, 32, 19),
                "N = 19 is not a multiple of 16 and the result is read on the device",
            ),
            (
                SplitEnv {
                    result: Some(MemoryClass::Standard),
                    ..host
                },
                (64, 32, 19),
                "N = 19 is not a multiple of 16",
            ),
        ] {
            let error =
                SplitGrid::within(dims, (1, 1, 1), Precision::F16, &env, &target).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
    }

    /// A left operand gathered from row-major blocks with K = 21 (padded to 32): on every
    /// tile and panel, the gathered pieces and the padding fills together write each A panel
    /// element exactly once, the fills only the padded columns of the last group, and only
    /// on the tiles whose panel holds that group.
    #[test]
    fn gathered_padding_is_filled_once_and_only_there() {
        let target = Target::c600();
        let (m, k, n) = (37u32, 21u32, 32u32);
        let env = SplitEnv {
            a_device: true,
            row_major: true,
            ..SplitEnv::host(MemoryClass::Interleaved)
        };
        let blocks = crate::strategies::gemm::GemmGrid {
            m,
            k,
            n: k,
            cb: 11,
            nb: 2,
            mb: m.div_ceil(5),
            rows_padded: 5,
            kb: k,
            k_steps: 1,
        };
        for shape in [(1, 1, 1), (2, 2, 2), (3, 1, 2), (2, 2, 1)] {
            let grid = SplitGrid::within((m, k, n), shape, Precision::F16, &env, &target)
                .expect("a gathered padded K fits");
            assert_eq!((grid.k, grid.k_real), (32, 21));
            let mut filled_tiles = 0;
            for p in 0..grid.panels {
                let fills = grid.pad_fills(p);
                for l in 0..grid.gk {
                    let (k0, kp) = grid.panels_of(l)[p as usize];
                    for (i, &(row0, rows)) in grid.rows.blocks.iter().enumerate() {
                        for j in 0..grid.gn {
                            let tile = grid.tile(i as u32, j, l);
                            let size = (rows * kp) as usize;
                            let (mut gathered, mut filled) = (vec![0u32; size], vec![0u32; size]);
                            rows::block_panel_pieces(
                                &blocks,
                                (row0, rows),
                                (k0, kp),
                                false,
                                |piece| {
                                    for e in piece.destination..piece.destination + piece.len {
                                        gathered[e as usize] += 1;
                                    }
                                },
                            );
                            for &(_, first, elements) in fills.iter().filter(|f| f.0 == tile) {
                                filled_tiles += 1;
                                for e in first..first + elements {
                                    filled[e as usize] += 1;
                                }
                            }
                            // Real columns are gathered once (over the fill, which runs
                            // first); padded ones are filled once and never gathered.
                            for e in 0..size {
                                let column = k0 + e as u32 / (16 * rows) * 16 + e as u32 % 16;
                                let ok = if column < k {
                                    gathered[e] == 1 && filled[e] <= 1
                                } else {
                                    gathered[e] == 0 && filled[e] == 1
                                };
                                assert!(ok, "{shape:?} tile {tile} panel {p} element {e}");
                            }
                        }
                    }
                }
            }
            assert!(filled_tiles > 0, "{shape:?}");
        }
    }

    /// A padded grid's host pieces write every element of A and B once to its home, and the
    /// padding (the partial last K and N groups, K rows past the tensor) as zeros: the homes
    /// hold exactly the padded operands' AMP panels' bytes.
    #[test]
    fn padded_operands_are_homed_once_with_zeros() {
        let target = Target::c600();
        let (m, k, n) = (37, 21, 19);
        for shape in [(1, 1, 1), (2, 2, 2), (3, 1, 2), (1, 2, 1)] {
            let grid = SplitGrid::new(
                (m, k, n),
                shape,
                Precision::F16,
                MemoryClass::Interleaved,
                &target,
            )
            .expect("fits");
            let mut program = TileProgram::default();
            let inputs = inputs(&mut program, &grid, Precision::F16, "op0");
            for (pieces, elements, padded) in [
                (&inputs.a_pieces, m * k, m * grid.k),
                (&inputs.b_pieces, k * n, grid.k * grid.n),
            ] {
                let mut seen = vec![0u32; elements as usize];
                let mut zeros = 0u32;
                for piece in pieces.iter() {
                    for range in piece.tensor_ranges() {
                        for byte in range.step_by(2) {
                            seen[(byte / 2) as usize] += 1;
                        }
                    }
                    let runs_bytes = piece.bytes - piece.runs * piece.tensor_run_bytes();
                    zeros += runs_bytes / 2;
                }
                assert!(seen.iter().all(|&c| c == 1), "{shape:?}: {seen:?}");
                assert_eq!(elements + zeros, padded, "{shape:?}");
            }
        }
    }
}

mod chain_tests {
    use super::super::*;
    use crate::tiling::{Graph, OpKind, Origin};
    use std::collections::BTreeMap;

    /// A small xorshift for seeded shapes.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, below: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(below)) as u32
        }
    }

    fn chained_env(a_device: bool, result: bool) -> SplitEnv {
        SplitEnv {
            a_device,
            result: result.then_some(MemoryClass::Standard),
            ..SplitEnv::host(MemoryClass::Interleaved)
        }
    }

    /// The tensor element `(row, column)` of element `e` of a 16-column panel order with
    /// `rows` rows starting at tensor element `origin`.
    fn panel_element(e: u32, rows: u32, origin: (u32, u32)) -> (u32, u32) {
        (
            origin.0 + (e / 16) % rows,
            origin.1 + e / (16 * rows) * 16 + e % 16,
        )
    }

    /// Seeded chains of two split GEMMs (random sizes and grids): every element of the
    /// value is in exactly one segment at the right tensor element; every A panel element of
    /// every tile of the second GEMM arrives exactly once (a move or its owner's local
    /// copy), from the owner's element of the same tensor element; the read-back pieces
    /// cover the value once.
    #[test]
    fn gathered_panels_take_every_element_once_from_its_owner() {
        let target = Target::c600();
        let mut rng = Rng(0x5eed_0005);
        let mut checked = 0;
        while checked < 40 {
            let m = 1 + rng.next(120);
            let (k1, n1, n2) = (
                16 * (1 + rng.next(12)),
                16 * (1 + rng.next(12)),
                16 * (1 + rng.next(6)),
            );
            let g1 = (1 + rng.next(5), 1 + rng.next(5), 1 + rng.next(4));
            let g2 = (1 + rng.next(5), 1 + rng.next(5), 1 + rng.next(6));
            let (Ok(first), Ok(second)) = (
                SplitGrid::within(
                    (m, k1, n1),
                    g1,
                    Precision::F16,
                    &chained_env(false, true),
                    &target,
                ),
                SplitGrid::within(
                    (m, n1, n2),
                    g2,
                    Precision::F16,
                    &chained_env(true, false),
                    &target,
                ),
            ) else {
                continue;
            };
            checked += 1;
            let scales = (Precision::F16, [0, 0]);
            let mut program = TileProgram {
                tiles: 1472,
                ..TileProgram::default()
            };
            let homes = inputs(&mut program, &first, Precision::F16, "op0");
            let value = lower(&mut program, &first, scales, &homes, None, "op0");
            assert_eq!(value.class, MemoryClass::Standard, "{first:?}");

            // Segments: every element once, at its tensor element.
            let mut seen = vec![0u8; (m * n1) as usize];
            value.segments(|seg| {
                let range = value.ranges.iter().find(|r| r.tile == seg.tile).unwrap();
                for r in 0..seg.rows {
                    for x in 0..16 {
                        let e = range.first + seg.offset + r * 16 + x;
                        let (row, col) = panel_element(e, range.rows, range.origin);
                        assert_eq!((row, col), (seg.row + r, seg.group * 16 + x));
                        seen[(row * n1 + col) as usize] += 1;
                    }
                }
            });
            assert!(seen.iter().all(|&s| s == 1), "segments of {first:?}");
            let mut read = vec![0u8; (m * n1) as usize];
            for piece in value.read_pieces() {
                for range in piece.tensor_ranges() {
                    for byte in range.step_by(2) {
                        read[(byte / 2) as usize] += 1;
                    }
                }
            }
            assert!(read.iter().all(|&s| s == 1), "read-back of {first:?}");

            let steps = program.run.len();
            let homes2 = inputs(&mut program, &second, Precision::F16, "op1");
            assert!(homes2.a_home.is_none() && homes2.a_pieces.is_empty());
            lower(
                &mut program,
                &second,
                scales,
                &homes2,
                Some(DeviceA::Ranged(&value)),
                "op1",
            );
            let a_panel = program
                .buffers
                .iter()
                .position(|b| b.name == "op1.a.amp_left")
                .unwrap();
            // Panel p's exchange, then its compute step (the owners' copies first).
            let mut panel = 0;
            let mut index = steps;
            while panel < second.panels {
                let mut arrived: BTreeMap<u32, Vec<u8>> = BTreeMap::new();
                let mut land = |tile: u32, source_tile: u32, src: u32, dst: u32, bytes: u32| {
                    let l = tile % second.gk;
                    let i = tile / second.gk / second.gn;
                    let (row0, rows) = second.rows.blocks[i as usize];
                    let (k0, kp) = second.panels_of(l)[panel as usize];
                    let range = value.ranges.iter().find(|r| r.tile == source_tile).unwrap();
                    let slots = arrived
                        .entry(tile)
                        .or_insert_with(|| vec![0; (rows * kp) as usize]);
                    for x in 0..bytes / 2 {
                        let want = panel_element(dst / 2 + x, rows, (row0, k0));
                        let have =
                            panel_element(range.first + src / 2 + x, range.rows, range.origin);
                        assert_eq!(want, have, "tile {tile} from {source_tile}");
                        slots[(dst / 2 + x) as usize] += 1;
                    }
                };
                let TileStep::Exchange { moves, .. } = &program.run[index] else {
                    panic!("step {index} is not the panel's exchange");
                };
                for mv in moves.iter().filter(|mv| mv.source.buffer == value.buffer) {
                    assert_eq!(mv.destination.buffer, a_panel);
                    assert!(!mv.destinations.contains(&mv.source_tile));
                    for &d in &mv.destinations {
                        land(
                            d,
                            mv.source_tile,
                            mv.source.offset,
                            mv.destination.offset,
                            mv.bytes,
                        );
                    }
                }
                let TileStep::Compute { runs, .. } = &program.run[index + 1] else {
                    panic!("step {} is not the panel's compute", index + 1);
                };
                for run in runs {
                    if let [Arg::Address(src), Arg::Address(dst)] = run.args[..] {
                        if src.buffer == value.buffer {
                            let KernelSpec::Copy { bytes } = program.kernels[run.kernel as usize]
                            else {
                                panic!("a gather copy is a copy");
                            };
                            land(run.tile, run.tile, src.offset, dst.offset, bytes);
                        }
                    }
                }
                for tile in 0..second.tiles() {
                    let l = tile % second.gk;
                    let (_, kp) = second.panels_of(l)[panel as usize];
                    if kp == 0 {
                        continue;
                    }
                    let slots = arrived
                        .get(&tile)
                        .unwrap_or_else(|| panic!("tile {tile} got nothing"));
                    assert!(
                        slots.iter().all(|&s| s == 1),
                        "tile {tile} panel {panel}: {first:?} -> {second:?}"
                    );
                }
                panel += 1;
                index += 2;
            }
        }
    }

    fn matmul(graph: &mut Graph, a: usize, b: usize, shape: Vec<u64>) -> usize {
        graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false,
            },
            vec![a, b],
            shape,
            Precision::F16,
        )
    }

    /// An MLP block (matmul, bias add, GeLU, matmul, bias add) is split end to end, in F16
    /// and under FP8; any other use of the hidden value keeps the chain off the split
    /// lowering; a single FP8 GEMM of host tensors is split (the host encodes them).
    #[test]
    fn chains_split_only_when_every_use_stays_ranged() {
        let build = |tail: &dyn Fn(&mut Graph, usize) -> usize| {
            let mut graph = Graph::default();
            let x = graph.add_value(vec![2, 40, 64], Precision::F16, Origin::Argument);
            let w1 = graph.add_value(vec![64, 96], Precision::F16, Origin::Argument);
            let b1 = graph.add_value(vec![96], Precision::F16, Origin::Argument);
            let w2 = graph.add_value(vec![96, 32], Precision::F16, Origin::Constant);
            let h = matmul(&mut graph, x, w1, vec![2, 40, 96]);
            let hb = graph.add_op(OpKind::Add, vec![b1, h], vec![2, 40, 96], Precision::F16);
            let g = graph.add_op(
                OpKind::Gelu { tanh: true },
                vec![hb],
                vec![2, 40, 96],
                Precision::F16,
            );
            let out = tail(&mut graph, g);
            let y = matmul(&mut graph, out, w2, vec![2, 40, 32]);
            graph.outputs.push(y);
            graph
        };
        let plain = build(&|_, g| g);
        assert_eq!(split_dims(&plain, 0, Precision::F16), Some((80, 64, 96)));
        assert_eq!(split_dims(&plain, 3, Precision::F16), Some((80, 96, 32)));
        assert!(ranged_value(&plain, 6, Precision::F16));
        assert_eq!(bias_operand(&plain, 1, 4), Some(2));
        // Under FP8 too: the host encodes x and the weights, the device casts the hidden
        // value's ranges before the second GEMM gathers them.
        assert_eq!(split_dims(&plain, 0, Precision::F8E4M3), Some((80, 64, 96)));
        assert_eq!(split_dims(&plain, 3, Precision::F8E4M3), Some((80, 96, 32)));
        // The hidden value also feeds a softmax: nothing upstream of it is split.
        let other_use = build(&|graph, g| {
            let s = graph.add_op(OpKind::Softmax, vec![g], vec![2, 40, 96], Precision::F16);
            graph.outputs.push(s);
            g
        });
        assert!(split_dims(&other_use, 0, Precision::F16).is_none());
        assert!(split_dims(&other_use, 4, Precision::F16).is_none());
        // The hidden value returned too: still ranged (read back from the ranges).
        let returned = build(&|graph, g| {
            graph.outputs.push(g);
            g
        });
        assert!(split_dims(&returned, 0, Precision::F16).is_some());
        // A single GEMM of host F16 tensors under FP8: split, the host encodes.
        let mut single = Graph::default();
        let a = single.add_value(vec![50, 64], Precision::F16, Origin::Argument);
        let b = single.add_value(vec![64, 48], Precision::F16, Origin::Constant);
        let c = matmul(&mut single, a, b, vec![50, 48]);
        single.outputs.push(c);
        assert_eq!(
            split_dims(&single, 0, Precision::F8E4M3),
            Some((50, 64, 48))
        );
        // K and N that are not whole 16-groups: split while the host writes A and reads
        // the result; a padded result read on the device (a GeLU) is not, nor a padded K
        // gathered from a ranged value.
        let padded = |gelu: bool| {
            let mut graph = Graph::default();
            let a = graph.add_value(vec![50, 21], Precision::F16, Origin::Argument);
            let b = graph.add_value(vec![21, 19], Precision::F16, Origin::Constant);
            let c = matmul(&mut graph, a, b, vec![50, 19]);
            let out = if gelu {
                graph.add_op(
                    OpKind::Gelu { tanh: true },
                    vec![c],
                    vec![50, 19],
                    Precision::F16,
                )
            } else {
                c
            };
            graph.outputs.push(out);
            graph
        };
        assert_eq!(
            split_dims(&padded(false), 0, Precision::F16),
            Some((50, 21, 19))
        );
        assert_eq!(split_dims(&padded(true), 0, Precision::F16), None);
        let mut chained = Graph::default();
        let a = chained.add_value(vec![50, 32], Precision::F16, Origin::Argument);
        let b1 = chained.add_value(vec![32, 21], Precision::F16, Origin::Constant);
        let b2 = chained.add_value(vec![21, 32], Precision::F16, Origin::Constant);
        let h = matmul(&mut chained, a, b1, vec![50, 21]);
        let y = matmul(&mut chained, h, b2, vec![50, 32]);
        chained.outputs.push(y);
        assert_eq!(split_dims(&chained, 0, Precision::F16), None);
        assert_eq!(split_dims(&chained, 1, Precision::F16), None);
    }

    /// The definitions `split_dims` and `ranged_value` answer from one whole-graph analysis,
    /// written as the per-value recursions they replace.
    fn ranged_by_recursion(graph: &Graph, v: usize, input: Precision) -> bool {
        let Origin::Op(producer) = graph.values[v].origin else {
            return false;
        };
        let op = &graph.ops[producer];
        match op.kind {
            OpKind::Matmul { .. } => split_by_recursion(graph, producer, input).is_some(),
            OpKind::Gelu { .. } => ranged_by_recursion(graph, op.operands[0], input),
            OpKind::Add => op.operands.iter().any(|&x| {
                bias_operand(graph, producer, x).is_some() && ranged_by_recursion(graph, x, input)
            }),
            _ => false,
        }
    }

    fn uses_by_recursion(graph: &Graph, v: usize, input: Precision) -> bool {
        graph.ops.iter().enumerate().all(|(index, op)| {
            if !op.operands.contains(&v) {
                return true;
            }
            let out = op.results[0];
            let follows = match op.kind {
                OpKind::Gelu { .. } => true,
                OpKind::Add => bias_operand(graph, index, v).is_some(),
                // A ranged A: K in whole 16-groups (only the host pads).
                OpKind::Matmul { .. } => {
                    op.operands[0] == v
                        && op.operands[1] != v
                        && split_local(graph, index, input).is_some_and(|(_, k, _)| k % 16 == 0)
                }
                _ => false,
            };
            follows && uses_by_recursion(graph, out, input)
        })
    }

    fn split_by_recursion(
        graph: &Graph,
        index: usize,
        input: Precision,
    ) -> Option<(u32, u32, u32)> {
        let dims = split_local(graph, index, input)?;
        let (a, c) = (graph.ops[index].operands[0], graph.ops[index].results[0]);
        (is_host(graph, a) || ranged_by_recursion(graph, a, input)).then_some(())?;
        // Padding: a host A and a result nothing reads on the device.
        let (_, k, n) = dims;
        let unread = !graph.ops.iter().any(|op| op.operands.contains(&c));
        ((k % 16 == 0 && n % 16 == 0) || (is_host(graph, a) && unread)).then_some(())?;
        uses_by_recursion(graph, c, input).then_some(dims)
    }

    /// Seeded random DAGs of matmuls, bias adds, GeLUs and softmaxes (some values used
    /// twice, some returned): the one-pass analysis agrees with the recursive definition on
    /// every op and value, in F16 and FP8.
    #[test]
    fn the_split_analysis_agrees_with_its_recursive_definition() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1621);
        for case in 0..200 {
            let mut graph = Graph::default();
            // Widths that are not whole 16-groups are padded where the host allows it.
            let width = [32u64, 48, 64, 21, 40][rng.random_range(0..5)];
            let mut live = vec![graph.add_value(vec![40, width], Precision::F16, Origin::Argument)];
            for _ in 0..rng.random_range(1..12) {
                let x = live[rng.random_range(0..live.len())];
                let y = match rng.random_range(0..5) {
                    0 | 1 => {
                        let origin = [Origin::Argument, Origin::Constant][rng.random_range(0..2)];
                        let w = graph.add_value(vec![width, width], Precision::F16, origin);
                        matmul(&mut graph, x, w, vec![40, width])
                    }
                    2 => {
                        let b = graph.add_value(vec![width], Precision::F16, Origin::Argument);
                        let operands = if rng.random_bool(0.5) {
                            vec![x, b]
                        } else {
                            vec![b, x]
                        };
                        graph.add_op(OpKind::Add, operands, vec![40, width], Precision::F16)
                    }
                    3 => graph.add_op(
                        OpKind::Gelu { tanh: true },
                        vec![x],
                        vec![40, width],
                        Precision::F16,
                    ),
                    _ => graph.add_op(OpKind::Softmax, vec![x], vec![40, width], Precision::F16),
                };
                live.push(y);
            }
            graph.outputs.push(*live.last().unwrap());
            if rng.random_bool(0.3) {
                graph.outputs.push(live[rng.random_range(0..live.len())]);
            }
            for input in [Precision::F16, Precision::F8E4M3] {
                for index in 0..graph.ops.len() {
                    assert_eq!(
                        split_dims(&graph, index, input),
                        split_by_recursion(&graph, index, input),
                        "case {case}: op {index} under {input:?}"
                    );
                }
                for v in 0..graph.values.len() {
                    assert_eq!(
                        ranged_value(&graph, v, input),
                        ranged_by_recursion(&graph, v, input),
                        "case {case}: value {v} under {input:?}"
                    );
                }
            }
        }
    }
}
