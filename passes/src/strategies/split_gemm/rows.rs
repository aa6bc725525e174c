//! Row-major blocks around a split GEMM ("Row-major neighbours" in the module docs): a left
//! operand gathered from another op's row-major blocks (the general lowering's distribution:
//! block `(i, j)` of a [`GemmGrid`], row-major on tile `i * nb + j`), and a result converted
//! from its ranges to a row grid for the ops the ranges do not serve.

use std::collections::BTreeMap;

use super::*;
use crate::strategies::gemm::GemmGrid;
use crate::tiling::layout::split_is_exact_cover;

/// The row grid a split GEMM's `m x n` result is converted to when it runs on `tiles` tiles:
/// whole rows per tile, as many row blocks as rows and tiles allow, each of `ceil(m /
/// blocks)` rows and none empty (the blocks a grid plan `[1, blocks, 1]` means).
pub fn result_rows(m: u32, n: u32, tiles: u32) -> GemmGrid {
    let most = m.min(tiles).max(1);
    let blocks = (1..=most)
        .rev()
        .find(|&b| split_is_exact_cover(u64::from(m), b))
        .unwrap_or(1);
    let rows_padded = m.div_ceil(blocks).max(1);
    GemmGrid {
        m,
        k: n,
        n,
        cb: n,
        nb: 1,
        mb: blocks,
        rows_padded,
        kb: n,
        k_steps: 1,
    }
}

/// A run of elements a transfer moves: `len` elements from element `source` of `owner`'s
/// buffer to element `destination` of `tile`'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub owner: u32,
    pub source: u32,
    pub tile: u32,
    pub destination: u32,
    pub len: u32,
}

/// Merges a stream of pieces into the fewest runs contiguous on both sides (same owner and
/// destination tile), handing each finished run to `emit`.
pub(super) struct Merge<F: FnMut(Piece)> {
    pending: Option<Piece>,
    emit: F,
}

impl<F: FnMut(Piece)> Merge<F> {
    pub(super) fn new(emit: F) -> Self {
        Merge {
            pending: None,
            emit,
        }
    }

    pub(super) fn push(&mut self, piece: Piece) {
        match &mut self.pending {
            Some(run)
                if run.owner == piece.owner
                    && run.tile == piece.tile
                    && run.source + run.len == piece.source
                    && run.destination + run.len == piece.destination =>
            {
                run.len += piece.len;
            }
            pending => {
                if let Some(done) = pending.replace(piece) {
                    (self.emit)(done);
                }
            }
        }
    }

    pub(super) fn finish(mut self) {
        if let Some(done) = self.pending.take() {
            (self.emit)(done);
        }
    }
}

/// The pieces of an A panel gathered from row-major `blocks`: rows `[row0, row0 + rows)` and
/// K columns `[k0, k0 + kp)` (whole 16-column groups), in panel order. With `row_major` the
/// panel is a row-major `rows x kp` block (the `GemmRowMajor` kernels' A): one piece per row and
/// source column block. Otherwise it is AMP-left (16-column group after group, each
/// `rows x 16`): one piece per row and 16-column group. `tile` of each piece is 0 (the
/// panel's group of tiles is the caller's). Columns past the blocks' own (a K padded to
/// whole groups) are left out: the padding is zeroed by a fill instead
/// ([`super::SplitGrid::pad_fills`], AMP-left panels only).
pub(super) fn block_panel_pieces(
    blocks: &GemmGrid,
    (row0, rows): (u32, u32),
    (k0, kp): (u32, u32),
    row_major: bool,
    mut visit: impl FnMut(Piece),
) {
    if row_major {
        for row in row0..row0 + rows {
            block_row_runs(blocks, row, (k0, k0 + kp), |owner, source, c, len| {
                visit(Piece {
                    owner,
                    source,
                    tile: 0,
                    destination: (row - row0) * kp + (c - k0),
                    len,
                })
            });
        }
        return;
    }
    for g in k0 / 16..(k0 + kp) / 16 {
        let column = g - k0 / 16;
        for row in row0..row0 + rows {
            block_row_runs(
                blocks,
                row,
                (g * 16, (g + 1) * 16),
                |owner, source, c, len| {
                    visit(Piece {
                        owner,
                        source,
                        tile: 0,
                        destination: (column * rows + (row - row0)) * 16 + (c - g * 16),
                        len,
                    })
                },
            );
        }
    }
}

/// Columns `[from, to)` of tensor row `row` (cut at the blocks' own columns) as runs of
/// `blocks`: `visit(owner, element in the owner's block, first column, length)` per block
/// the columns cross.
fn block_row_runs(
    blocks: &GemmGrid,
    row: u32,
    (from, to): (u32, u32),
    mut visit: impl FnMut(u32, u32, u32, u32),
) {
    let i = row / blocks.rows_padded;
    let local = row - blocks.first_row(i);
    let end = to.min(blocks.n);
    let mut c = from;
    while c < end {
        let j = c / blocks.cb;
        let run_end = ((j + 1) * blocks.cb).min(end);
        visit(
            blocks.tile(i, j),
            local * blocks.cb + (c - j * blocks.cb),
            c,
            run_end - c,
        );
        c = run_end;
    }
}

/// The pieces that move a value held as `ranges` ([`OwnedRange`]: of AMP-output blocks, or
/// with `row_major` of row-major ones) of an `[m x n]` result into the row grid `rows`
/// (row-major, whole rows per tile), merged where they are contiguous on both sides: one
/// per row and 16-column group of an AMP-output range, one per row of a row-major one.
pub fn ranges_to_rows(
    ranges: &[OwnedRange],
    n: u32,
    rows: &GemmGrid,
    row_major: bool,
    visit: impl FnMut(Piece),
) {
    let mut merge = Merge::new(visit);
    for range in ranges {
        if row_major {
            let (end, cols) = (range.first + range.len, range.cols.max(1));
            let mut e = range.first;
            while e < end {
                let (r, c) = (e / cols, e % cols);
                let len = (cols - c).min(end - e);
                let row = range.origin.0 + r;
                let i = row / rows.rows_padded;
                merge.push(Piece {
                    owner: range.tile,
                    source: e - range.first,
                    tile: rows.tile(i, 0),
                    destination: (row - rows.first_row(i)) * n + range.origin.1 + c,
                    len,
                });
                e += len;
            }
            continue;
        }
        range_segments(range, |seg| {
            for r in 0..seg.rows {
                let row = seg.row + r;
                let i = row / rows.rows_padded;
                merge.push(Piece {
                    owner: seg.tile,
                    source: seg.offset + r * 16,
                    tile: rows.tile(i, 0),
                    destination: (row - rows.first_row(i)) * n + seg.group * 16,
                    len: 16,
                });
            }
        });
    }
    merge.finish();
}

/// Bytes each (owner, row tile) pair moves converting `ranges` (row-major blocks with
/// `row_major`) to the row grid `rows` ([`ranges_to_rows`]), at `element_bytes` an element.
pub fn rows_traffic(
    ranges: &[OwnedRange],
    n: u32,
    rows: &GemmGrid,
    row_major: bool,
    element_bytes: u32,
) -> BTreeMap<(u32, u32), u64> {
    let mut bytes = BTreeMap::new();
    ranges_to_rows(ranges, n, rows, row_major, |piece| {
        if piece.owner != piece.tile {
            *bytes.entry((piece.owner, piece.tile)).or_insert(0) +=
                u64::from(piece.len) * u64::from(element_bytes);
        }
    });
    bytes
}

/// The runs of rows of one 16-column group in `range` (AMP-output order: group after group,
/// each `rows x 16`), in range order.
pub(super) fn range_segments(range: &OwnedRange, mut visit: impl FnMut(Segment)) {
    let end = range.first + range.len;
    let mut e = range.first;
    while e < end {
        let g = e / (16 * range.rows);
        let r = (e / 16) % range.rows;
        let rows = (range.rows - r).min((end - e) / 16);
        visit(Segment {
            tile: range.tile,
            offset: e - range.first,
            row: range.origin.0 + r,
            rows,
            group: range.origin.1 / 16 + g,
        });
        e += rows * 16;
    }
}

/// The exchange code bytes (held for the whole program) split GEMM candidate `candidate` of
/// product `op` adds to its busiest tile when it follows a row-major left operand:
/// [`gather_code_rows`] of its plan and that operand's home, 16 B each
/// (`lower::place::EXCHANGE_ROW_BYTES`). `None` for any other candidate.
pub fn gather_code(
    graph: &crate::tiling::Graph,
    op: &crate::tiling::Op,
    candidate: &crate::tiling::candidate::Candidate,
) -> Option<u64> {
    candidate.follows.as_ref()?;
    let a_home = candidate.needs.first()?;
    if a_home.format.order != ipu_device::kernels::spec::ElementOrder::RowMajor {
        return None;
    }
    let dims = crate::tiling::graph::MatmulDims::of(graph, op).ok()?;
    let m = u32::try_from(dims.batch * dims.m).ok()?;
    let k = u32::try_from(dims.k).ok()?;
    let rows = gather_code_rows(&candidate.plan, &a_home.shards, (m, k))?;
    Some(rows * u64::from(crate::lower::place::EXCHANGE_ROW_BYTES))
}

/// The exchange rows (16 B each of a tile's exchange code, for the whole program) a split
/// GEMM planned as `plan` for an `m x k` left operand adds to its busiest tile when it gathers
/// that operand from row-major blocks homed as `a_home`: the runs the busiest owner sends
/// plus the runs a tile of the grid receives. Into row-major panels (K a multiple of 16,
/// [`super::SplitGrid::a_row_major`]) a run is a row's part in one K panel and source column
/// block; into AMP-left panels (a padded K) every 16-column run of a row. `None` for other
/// plans.
pub fn gather_code_rows(
    plan: &ipu_dialects::plan::OperatorPlan,
    a_home: &crate::tiling::layout::Shards,
    (m, k): (u32, u32),
) -> Option<u64> {
    let ipu_dialects::plan::OperatorPlan::Gemm(gemm) = plan else {
        return None;
    };
    let (gm, gk) = (gemm.grid.rows.max(1), gemm.grid.k_split.max(1));
    let elements = a_home.max_tile_bytes() / u64::from(a_home.element_bytes.max(1));
    let rows = u64::from(m.div_ceil(gm));
    if k % 16 != 0 {
        let k_groups = u64::from((k / 16).div_ceil(gk));
        return Some(elements.div_ceil(16) + rows * k_groups);
    }
    // The K panels of every slice, and the source blocks' column windows.
    let slices = Split::new(k, gk, 16)?;
    let panels: Vec<Vec<(u32, u32)>> = slices
        .blocks
        .iter()
        .map(|&slice| slice_panels(slice, gemm.k_steps.max(1)))
        .collect();
    let cb = crate::tiling::layout::block_size(a_home.dims[2], a_home.parts[2]).max(1);
    let cb = u32::try_from(cb).ok()?;
    let crossing = |(c0, c1): (u32, u32), (p0, p1): (u32, u32)| c0 < p1 && p0 < c1;
    // A row of a source block sends one run per K panel its columns cross.
    let sent_per_row = (0..k.div_ceil(cb))
        .map(|j| {
            let window = (j * cb, ((j + 1) * cb).min(k));
            panels
                .iter()
                .flatten()
                .filter(|&&(p0, len)| len > 0 && crossing(window, (p0, p0 + len)))
                .count() as u64
        })
        .max()
        .unwrap_or(0);
    // A tile receives one run per row, K panel of its slice and source block crossed.
    let received_per_row = panels
        .iter()
        .map(|slice| {
            slice
                .iter()
                .filter(|p| p.1 > 0)
                .map(|&(p0, len)| u64::from((p0 + len - 1) / cb - p0 / cb + 1))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    Some(elements.div_ceil(u64::from(cb)) * sent_per_row + rows * received_per_row)
}

impl SplitGrid {
    /// Calls `visit(source, destinations, bytes)` for the A transfers of panel phase `phase`
    /// when A is gathered from row-major blocks homed as `home` (`[1, m, k]`): each block's
    /// part in an A group's rows and the panel's K columns, sent by the block's first owner to
    /// the group's other tiles (bytes as the lowering moves them, one transfer per block and
    /// group).
    pub fn for_each_gather_transfer(
        &self,
        home: &crate::tiling::layout::Shards,
        precision: Precision,
        phase: u32,
        visit: &mut dyn FnMut(u32, &[u32], u64),
    ) {
        let eb = u64::from(precision.bytes());
        let blocks: Vec<([(u64, u64); 3], u32)> = (0..home.owners.len())
            .filter_map(|b| Some((home.block_ranges(b), *home.owners[b].first()?)))
            .collect();
        let mut others = Vec::with_capacity(self.gn as usize);
        for l in 0..self.gk {
            let Some(&(k0, kp)) = self.panels_of(l).get(phase as usize) else {
                continue;
            };
            if kp == 0 {
                continue;
            }
            let (k0, k1) = (u64::from(k0), u64::from(k0 + kp));
            for (i, &(row0, rows)) in self.rows.blocks.iter().enumerate() {
                let (r0, r1) = (u64::from(row0), u64::from(row0 + rows));
                for &(ranges, owner) in &blocks {
                    let [_, (b0, b1), (c0, c1)] = ranges;
                    let rows = r1.min(b1).saturating_sub(r0.max(b0));
                    let cols = k1.min(c1).saturating_sub(k0.max(c0));
                    if rows == 0 || cols == 0 {
                        continue;
                    }
                    others.clear();
                    others.extend(
                        (0..self.gn)
                            .map(|j| self.tile(i as u32, j, l))
                            .filter(|&t| t != owner),
                    );
                    if !others.is_empty() {
                        visit(owner, &others, rows * cols * eb);
                    }
                }
            }
        }
    }

    /// The ranges C is left in: without a K split each tile's whole partial block, else the
    /// reduced ranges ([`SplitGrid::reduce_ranges`]), in the lowering's order.
    pub fn result_ranges(&self) -> Vec<OwnedRange> {
        let mut ranges = Vec::new();
        if self.gk > 1 {
            self.reduce_ranges(|range| {
                ranges.push(OwnedRange {
                    tile: range.owner,
                    first: range.first,
                    len: range.len,
                    rows: range.rows,
                    cols: range.cols,
                    origin: range.origin,
                })
            });
        } else {
            for (i, &(row0, rows)) in self.rows.blocks.iter().enumerate() {
                for (j, &(col0, cols)) in self.cols.blocks.iter().enumerate() {
                    ranges.push(OwnedRange {
                        tile: self.tile(i as u32, j as u32, 0),
                        first: 0,
                        len: rows * cols,
                        rows,
                        cols,
                        origin: (row0, col0),
                    });
                }
            }
        }
        ranges
    }

    /// The row grid the result is converted to ([`result_rows`] on this grid's tiles).
    pub fn rows_grid(&self) -> GemmGrid {
        result_rows(self.m, self.n, self.tiles())
    }

    /// The memory class of the row grid's buffer: the one the result's ranges are not in
    /// (the conversion phase sends from those while it receives into it).
    pub fn rows_class(&self) -> MemoryClass {
        let ranges = if self.gk > 1 {
            self.classes.reduced
        } else {
            self.classes.partials
        };
        SplitEnv::chained_result_class(ranges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::graph::Graph;

    /// The row grid covers every row exactly once with no empty block, on at most the
    /// grid's tiles and as many as rows and tiles allow.
    #[test]
    fn the_row_grid_covers_every_row_once() {
        for (m, tiles) in [(512, 1472), (729, 1344), (40, 6), (9, 4), (197, 96), (1, 8)] {
            let rows = result_rows(m, 64, tiles);
            assert!(rows.mb <= tiles.min(m), "{m} on {tiles}");
            assert!(
                rows.mb >= tiles.min(m) / 2,
                "{m} on {tiles}: {} blocks",
                rows.mb
            );
            let covered: u32 = (0..rows.mb).map(|i| rows.rows(i)).sum();
            assert_eq!(covered, m, "{m} on {tiles}");
            assert!((0..rows.mb).all(|i| rows.rows(i) > 0));
        }
    }

    /// Gathering an A panel from row-major blocks takes every panel element once, from the
    /// block and offset that hold it, into AMP-left or row-major panels: column blocks of 24
    /// (groups straddle two blocks), 48 and 16, row blocks of 7 with a short last one. A
    /// row-major panel takes one piece per row and source column block, an AMP-left one one
    /// per row and 16-column group (or part of one).
    #[test]
    fn block_panels_take_every_element_once_from_its_owner() {
        for (cb, row_major) in [24u32, 48, 16]
            .into_iter()
            .flat_map(|cb| [(cb, false), (cb, true)])
        {
            let (m, n) = (40u32, 96u32);
            let blocks = GemmGrid {
                m,
                k: n,
                n,
                cb,
                nb: n / cb,
                mb: m.div_ceil(7),
                rows_padded: 7,
                kb: n,
                k_steps: 1,
            };
            let (row0, rows, k0, kp) = (5u32, 17u32, 32u32, 48u32);
            let mut seen = vec![0u32; (rows * kp) as usize];
            let mut pieces = 0;
            block_panel_pieces(&blocks, (row0, rows), (k0, kp), row_major, |piece| {
                pieces += 1;
                for e in 0..piece.len {
                    let d = piece.destination + e;
                    seen[d as usize] += 1;
                    // Panel element d is tensor element (row, col) in the panel's order.
                    let (row, col) = if row_major {
                        (row0 + d / kp, k0 + d % kp)
                    } else {
                        let (column, within) = (d / (16 * rows), d % (16 * rows));
                        (row0 + within / 16, k0 + column * 16 + within % 16)
                    };
                    let (i, j) = (row / 7, col / cb);
                    assert_eq!(piece.owner, blocks.tile(i, j), "cb {cb} element {d}");
                    let source = piece.source + e;
                    assert_eq!(
                        source,
                        (row - 7 * i) * cb + col - j * cb,
                        "cb {cb} element {d}"
                    );
                }
            });
            assert!(seen.iter().all(|&s| s == 1), "cb {cb}: {seen:?}");
            // Column blocks the panel's columns [32, 80) cross, and the runs per row.
            let crossed = (k0 + kp - 1) / cb - k0 / cb + 1;
            let inside_groups = (k0 + 1..k0 + kp)
                .filter(|b| b % cb == 0 && b % 16 != 0)
                .count() as u32;
            let per_row = if row_major {
                crossed
            } else {
                kp / 16 + inside_groups
            };
            assert_eq!(pieces, rows * per_row, "cb {cb} row-major {row_major}");
        }
    }

    /// Converting a split GEMM's result ranges to its row grid writes every result element
    /// once, on the tile of its row, from the owner and offset that hold it, with and without
    /// a K split, from AMP-output and from row-major blocks; the traffic sums the moved bytes
    /// per (owner, tile) pair. Row-major blocks move in one piece
    /// per row of a range, AMP-output ones in one per row and 16-column group.
    #[test]
    fn result_ranges_convert_to_rows_element_by_element() {
        let target = Target::c600();
        let shapes = [(3, 1, 2), (2, 3, 4), (5, 1, 1), (1, 2, 6)];
        for (shape, row_major) in shapes.into_iter().flat_map(|s| [(s, false), (s, true)]) {
            let grid = SplitGrid::new(
                (40, 96, 48),
                shape,
                Precision::F16,
                MemoryClass::Interleaved,
                &target,
            )
            .unwrap();
            let ranges = grid.result_ranges();
            let rows = grid.rows_grid();
            // (tile, element of the owner's buffer) of every result element, by the blocks'
            // order; and the rows each range touches.
            let mut owner_of = std::collections::HashMap::new();
            let mut row_runs = 0;
            for range in &ranges {
                let mut touched = std::collections::BTreeSet::new();
                for e in 0..range.len {
                    let at = range.first + e;
                    let element = if row_major {
                        (
                            range.origin.0 + at / range.cols,
                            range.origin.1 + at % range.cols,
                        )
                    } else {
                        let g = at / (16 * range.rows);
                        let r = (at / 16) % range.rows;
                        (range.origin.0 + r, range.origin.1 + g * 16 + at % 16)
                    };
                    touched.insert(element.0);
                    owner_of.insert(element, (range.tile, e));
                }
                row_runs += touched.len();
            }
            assert_eq!(owner_of.len(), 40 * 48, "{shape:?}");
            let mut written = vec![0u32; 40 * 48];
            let mut moved = BTreeMap::new();
            let mut pieces = 0;
            ranges_to_rows(&ranges, 48, &rows, row_major, |piece| {
                pieces += 1;
                for e in 0..piece.len {
                    let within = piece.destination + e;
                    let i = piece.tile;
                    let (row, col) = (rows.first_row(i) + within / 48, within % 48);
                    written[(row * 48 + col) as usize] += 1;
                    assert_eq!(owner_of[&(row, col)], (piece.owner, piece.source + e));
                }
                if piece.owner != piece.tile {
                    *moved.entry((piece.owner, piece.tile)).or_insert(0u64) +=
                        u64::from(piece.len) * 2;
                }
            });
            assert!(written.iter().all(|&w| w == 1), "{shape:?}");
            assert_eq!(
                rows_traffic(&ranges, 48, &rows, row_major, 2),
                moved,
                "{shape:?}"
            );
            if row_major {
                assert!(
                    pieces <= row_runs,
                    "{shape:?}: {pieces} pieces, {row_runs} row runs"
                );
            }
        }
    }

    /// A row-major left operand is gathered in runs, one exchange row each: into AMP-left
    /// panels (a padded K) one per 16 columns of a row, into row-major panels one per row and
    /// K panel. Grids whose tiles would take more than [`MAX_GATHER_ROWS`] of them are
    /// refused with the count; the same grid with A held as ranges is not limited so.
    #[test]
    fn row_major_gathers_are_limited_in_exchange_rows() {
        let target = Target::c600();
        let env = |row_major| SplitEnv {
            a_device: true,
            row_major,
            ..SplitEnv::host(MemoryClass::Interleaved)
        };
        let within = |dims, shape, row_major| {
            SplitGrid::within(dims, shape, Precision::F16, &env(row_major), &target)
        };
        // 64 rows x K 760 (padded to 768, AMP-left panels) on one row block: 64 x 48 = 3072
        // runs per tile; K 768 takes row-major panels: 64 runs per K panel.
        let error = within((64, 760, 64), (1, 1, 1), true).unwrap_err();
        assert!(error.contains("3072 exchange rows per tile"), "{error}");
        let grid = within((64, 768, 64), (1, 1, 1), true).unwrap();
        assert!(grid.a_row_major() && 64 * grid.panels <= MAX_GATHER_ROWS);
        assert!(!within((64, 768, 64), (1, 1, 1), false)
            .unwrap()
            .a_row_major());
        // 8 row blocks of 8 rows and 4 K slices of 190 (AMP-left): 8 x 12 = 96 runs.
        assert!(within((64, 760, 64), (8, 1, 4), true).is_ok());
        // K 16384 in panels of at most 1024 (the kernel's 65,536 weights over 64 columns):
        // 128 rows x 16 panels = 2048 runs; over 16 K slices of 1024, 128 a panel.
        let error = within((128, 16384, 64), (1, 1, 1), true).unwrap_err();
        assert!(error.contains("2048 exchange rows per tile"), "{error}");
        let grid = within((128, 16384, 64), (1, 1, 16), true).unwrap();
        assert!(grid.a_row_major() && 128 * grid.panels <= MAX_GATHER_ROWS);
    }

    /// The exchange code a row-major gather adds: the runs the busiest owner sends and the
    /// runs each tile receives; into row-major panels one per row, K panel and source block,
    /// into AMP-left ones (a padded K) one per 16 columns.
    #[test]
    fn gather_code_counts_sent_and_received_runs() {
        use ipu_dialects::plan::{GemmPlan, GemmTileGrid, OperatorPlan, Orientation};
        let plan = OperatorPlan::Gemm(GemmPlan {
            grid: GemmTileGrid {
                batch: 1,
                rows: 4,
                cols: 1,
                k_split: 2,
            },
            tiles: 8,
            k_block: 48,
            c_block: 64,
            orientation: Orientation::Normal,
            weights: crate::element::memory(MemoryClass::Interleaved),
            left: crate::element::memory(MemoryClass::Standard),
            precision: Precision::F16,
            k_steps: 1,
            weights_resident: false,
            host_order: true,
            scales: None,
        });
        // A 40 x 96 F16 value in 5 row blocks of 8 rows, K in 2 slices of one 48-panel each:
        // an owner sends 8 rows x 2 panels; a tile receives 10 rows x 1 panel.
        let homed = |dims, parts| crate::tiling::layout::Shards::homed(dims, parts, 2, 0);
        let home = homed([1, 40, 96], [1, 5, 1]);
        assert_eq!(gather_code_rows(&plan, &home, (40, 96)), Some(8 * 2 + 10));
        // Column blocks of 48: each owner's rows cross one panel.
        let columns = homed([1, 40, 96], [1, 5, 2]);
        assert_eq!(gather_code_rows(&plan, &columns, (40, 96)), Some(8 + 10));
        // K 90 (padded, AMP-left panels): 8 x 90 / 16 runs sent, 10 rows x 3 groups received.
        let padded = homed([1, 40, 90], [1, 5, 1]);
        assert_eq!(gather_code_rows(&plan, &padded, (40, 90)), Some(45 + 30));
        let other = OperatorPlan::Gemm(GemmPlan {
            grid: GemmTileGrid {
                batch: 1,
                rows: 1,
                cols: 1,
                k_split: 1,
            },
            ..match plan {
                OperatorPlan::Gemm(gemm) => gemm,
                _ => unreachable!(),
            }
        });
        // One slice, one panel of 96: a row is one run on both sides.
        assert_eq!(gather_code_rows(&other, &home, (40, 96)), Some(8 + 40));
    }

    /// A left operand gathered from row-major blocks, priced where it is: every tile of the
    /// grid gets its A panel (rows x panel columns) whole, from the blocks' owners, a tile
    /// owning a block keeping its part; with K split over 3 slices and row blocks that cut
    /// the home's blocks. The owners' sends replace the model's sends from outside each group.
    #[test]
    fn a_gathered_from_its_home_reaches_every_tile_of_its_group() {
        let target = Target::c600();
        let env = SplitEnv {
            a_device: true,
            row_major: true,
            ..SplitEnv::host(MemoryClass::Interleaved)
        };
        let grid =
            SplitGrid::within((40, 96, 64), (3, 2, 3), Precision::F16, &env, &target).unwrap();
        // Five blocks of 8 rows, on tiles 4, 5, .., 8 (inside and outside the grid).
        let home = crate::tiling::layout::Shards::homed([1, 40, 96], [1, 5, 1], 2, 4);
        for phase in 0..grid.panels {
            let mut received = vec![0u64; grid.tiles() as usize + 8];
            grid.for_each_gather_transfer(&home, Precision::F16, phase, &mut |from, to, bytes| {
                assert!((4..9).contains(&from), "sent by {from}, not an owner");
                for &t in to {
                    assert_ne!(t, from);
                    received[t as usize] += bytes;
                }
            });
            for l in 0..grid.gk {
                let (_, kp) = grid.panels_of(l)[phase as usize];
                for (i, &(row0, rows)) in grid.rows.blocks.iter().enumerate() {
                    for j in 0..grid.gn {
                        let tile = grid.tile(i as u32, j, l);
                        // The rows of the panel the tile owns itself (home block tile - 4).
                        let own = if (4..9).contains(&tile) {
                            let (b0, b1) = ((tile - 4) * 8, (tile - 3) * 8);
                            (row0 + rows).min(b1).saturating_sub(row0.max(b0))
                        } else {
                            0
                        };
                        assert_eq!(
                            received[tile as usize],
                            u64::from((rows - own) * kp * 2),
                            "tile {tile} phase {phase}"
                        );
                    }
                }
            }
            // Without A, the panel phase keeps only B's transfers.
            let mut with_a = 0;
            let mut without_a = 0;
            grid.exchange_transfers(Precision::F16, phase, true, &mut |_, _, _| with_a += 1);
            grid.exchange_transfers(Precision::F16, phase, false, &mut |_, _, _| without_a += 1);
            assert!(without_a < with_a);
        }
    }

    /// A product of a value another op computed, or of a host operand whose result another
    /// op reads, is offered to the split GEMM beside the other strategies (its result
    /// converted to rows); the ranged chains keep theirs, and a ranged left operand is never
    /// a row-major one.
    #[test]
    fn device_products_are_offered_beside_the_ranged_chains() {
        let mut graph = Graph::default();
        let x = graph.add_value(vec![40, 64], Precision::F16, Origin::Argument);
        let w = graph.add_value(vec![64, 64], Precision::F16, Origin::Constant);
        let product = |graph: &mut Graph, a: usize| {
            graph.add_op(
                OpKind::Matmul {
                    transpose_lhs: false,
                    transpose_rhs: false,
                },
                vec![a, w],
                vec![40, 64],
                Precision::F16,
            )
        };
        let s = graph.add_op(OpKind::Softmax, vec![x], vec![40, 64], Precision::F16);
        let from_rows = product(&mut graph, s); // op 1
        let ranged = product(&mut graph, x); // op 2: returned only
        let chained = product(&mut graph, ranged); // op 3: of a ranged value
        let host = product(&mut graph, x); // op 4: of the host's x, read by a softmax
        let read = graph.add_op(OpKind::Softmax, vec![host], vec![40, 64], Precision::F16);
        graph.outputs.extend([from_rows, chained, read]);
        let input = Precision::F16;
        for (op, value) in [(1, from_rows), (4, host)] {
            assert_eq!(
                device_split_dims(&graph, op, input),
                Some((40, 64, 64)),
                "op {op}"
            );
            assert_eq!(split_dims(&graph, op, input), None, "op {op}");
            assert!(!ranged_value(&graph, value, input), "op {op}");
        }
        for op in [2, 3] {
            assert!(split_dims(&graph, op, input).is_some(), "op {op}");
            assert_eq!(device_split_dims(&graph, op, input), None, "op {op}");
        }
        // Under FP8 a host operand the host would encode for the product is taken only when
        // products alone read it: x also feeds the softmax (op 0).
        assert_eq!(device_split_dims(&graph, 4, Precision::F8E4M3), None);
        let mut alone = Graph::default();
        let x = alone.add_value(vec![40, 64], Precision::F16, Origin::Argument);
        // Value 1, the weight `product` reads.
        alone.add_value(vec![64, 64], Precision::F16, Origin::Constant);
        let y = product(&mut alone, x);
        let z = alone.add_op(OpKind::Softmax, vec![y], vec![40, 64], Precision::F16);
        alone.outputs.push(z);
        assert_eq!(
            device_split_dims(&alone, 0, Precision::F8E4M3),
            Some((40, 64, 64))
        );
        // A K that is not whole 16-groups is gathered padded (the grid zeroes the padding);
        // an N that is not cannot be converted to a row grid, so that product is not offered.
        let odd = |k: u64, n: u64| {
            let mut odd = Graph::default();
            let x = odd.add_value(vec![40, k], Precision::F16, Origin::Argument);
            let w = odd.add_value(vec![k, n], Precision::F16, Origin::Constant);
            let s = odd.add_op(OpKind::Softmax, vec![x], vec![40, k], Precision::F16);
            let y = odd.add_op(
                OpKind::Matmul {
                    transpose_lhs: false,
                    transpose_rhs: false,
                },
                vec![s, w],
                vec![40, n],
                Precision::F16,
            );
            odd.outputs.push(y);
            odd
        };
        assert_eq!(
            device_split_dims(&odd(60, 64), 1, input),
            Some((40, 60, 64))
        );
        assert_eq!(device_split_dims(&odd(64, 60), 1, input), None);
    }
}
