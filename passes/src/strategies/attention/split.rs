//! Keys split over tiles (`attention_flash` on `[batch-heads, query blocks, key splits]`): the
//! tiles of one query block each stream a share of the head's keys (whole 16-key panels) in the
//! column formulation and a cross-tile merge weighs the shares by their maxima and sums
//! ([`KernelSpec::AttentionMerge`]) into the result, homed on a row grid of its own. The merge
//! reads each share's unnormalized output as the formulation leaves it (16-query panels of
//! the partials) when the query blocks are whole panels; else each share is first finished
//! into f32 rows normalized by its own sums. Splitting the keys spreads a head's exps over
//! more tiles than its query blocks (a 1024-query head on 88 tiles, where whole 16-query
//! columns stop at 64) and each tile receives only its share of the keys and values.

use ipu_device::kernels::describe::default_partials;
use ipu_device::{KernelSpec, Precision, Target};

use super::{cost, StreamedTile};
use crate::tiling::candidate::{divisors, generated_phases, InternalPhase, PhaseTransfers};
use crate::tiling::layout::Shards;
use std::sync::Arc;

impl StreamedTile {
    /// `(first key, keys)` of split `split` of [`StreamedTile::splits`]: the head's 16-key
    /// panels split as evenly as they go, split 0 with the most (split `j` starts at panel
    /// `ceil(j * panels / splits)`; the last panel of the keys may be short).
    pub fn split_range(&self, split: u32) -> (u32, u32) {
        let splits = u64::from(self.splits.max(1));
        let panels = u64::from(self.keys.div_ceil(16));
        let start = |j: u64| u32::try_from((j * panels).div_ceil(splits) * 16).unwrap_or(u32::MAX);
        let first = start(u64::from(split)).min(self.keys);
        let end = start(u64::from(split) + 1).min(self.keys);
        (first, end - first)
    }
}

/// The key-split grids `[heads, query blocks, splits]` of `heads` batch-heads of `queries`
/// queries over `keys` keys within `most` tiles: for every exact split of the queries, the most
/// key splits that fit the tiles (at least 2, at most one per 16-key panel).
pub fn split_grids(heads: u32, queries: u32, keys: u32, most: u32) -> Vec<Vec<u32>> {
    let panels = keys.div_ceil(16);
    divisors(queries)
        .into_iter()
        .filter_map(|blocks| {
            let per_head = most / heads.max(1).saturating_mul(blocks).max(1);
            let splits = per_head.min(panels);
            (heads.saturating_mul(blocks) <= most && splits >= 2)
                .then(|| vec![heads, blocks, splits])
        })
        .collect()
}

/// One attention's key split: `heads` batch-heads of `queries` queries in `query_blocks`
/// blocks, each block's keys over `splits` tiles (tile `(head * query_blocks + block) *
/// splits + split`), results of `width` in `precision`. The merged result is a row grid over
/// the stacked heads: [`KeySplit::result_blocks`] blocks per head on tiles `0..`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeySplit {
    pub heads: u32,
    pub queries: u32,
    pub query_blocks: u32,
    pub splits: u32,
    pub width: u32,
    pub precision: Precision,
}

/// Rows of one split's output that its merging tile receives: `rows` rows from row
/// `source_row` of tile `source`'s split `slot`, to row `row` of the merging tile's slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MergePiece {
    pub source: u32,
    pub source_row: u32,
    pub slot: u32,
    pub row: u32,
    pub rows: u32,
}

impl KeySplit {
    /// Query rows per query block (every split of it runs them all).
    pub fn rows(&self) -> u32 {
        self.queries / self.query_blocks.max(1)
    }

    /// Tiles of the attention.
    pub fn tiles(&self) -> u32 {
        self.heads * self.query_blocks * self.splits
    }

    /// Whether the merge reads each split's output as the column formulation leaves it
    /// (unnormalized, in 16-query panels of the partials precision): when the query blocks are
    /// whole panels (else each split first finishes into f32 rows).
    pub fn panels(&self) -> bool {
        self.rows().is_multiple_of(16)
    }

    /// Result blocks per head: the most that split its queries exactly within its tiles (a
    /// row grid over the stacked heads whose blocks stay in one head), in whole 16-query
    /// panels when the merge reads panels (the query blocks themselves are such a split).
    pub fn result_blocks(&self) -> u32 {
        let most = self.query_blocks * self.splits;
        (1..=most.min(self.queries))
            .rev()
            .find(|&blocks| {
                self.queries.is_multiple_of(blocks)
                    && (!self.panels() || (self.queries / blocks).is_multiple_of(16))
            })
            .unwrap_or(1)
    }

    /// Result rows per merging tile.
    pub fn result_rows(&self) -> u32 {
        self.queries / self.result_blocks()
    }

    /// Tiles holding the merged result (`0..`).
    pub fn result_tiles(&self) -> u32 {
        self.heads * self.result_blocks()
    }

    /// Calls `visit` with every piece merging tile `owner` receives, in row order and, per
    /// run of rows of one query block, split by split.
    pub fn for_each_merge_piece(&self, owner: u32, mut visit: impl FnMut(MergePiece)) {
        let (blocks, rows, rp) = (self.result_blocks(), self.rows(), self.result_rows());
        let (head, block) = (owner / blocks, owner % blocks);
        let (start, end) = (block * rp, (block + 1) * rp);
        let mut row = start;
        while row < end {
            let query_block = row / rows;
            let run_end = ((query_block + 1) * rows).min(end);
            for slot in 0..self.splits {
                visit(MergePiece {
                    source: (head * self.query_blocks + query_block) * self.splits + slot,
                    source_row: row - query_block * rows,
                    slot,
                    row: row - start,
                    rows: run_end - row,
                });
            }
            row = run_end;
        }
    }

    /// The merge each result tile runs.
    pub fn merge(&self) -> KernelSpec {
        KernelSpec::AttentionMerge {
            precision: self.precision,
            splits: self.splits,
            rows: self.result_rows(),
            width: self.width,
            panels: self.panels(),
        }
    }

    /// Bytes of one element of a split's output as the merge reads it: the partials in
    /// panels, else f32.
    fn output_bytes(&self) -> u32 {
        if self.panels() {
            default_partials(self.precision).bytes()
        } else {
            4
        }
    }

    /// The three moves of `piece` as `(offset in the source's buffer, offset in the merging
    /// tile's, bytes)`: its output rows (whole 16-query panels in panel order, which are
    /// contiguous, or f32 rows), maxima and sums.
    pub fn piece_moves(&self, piece: &MergePiece) -> [(u32, u32, u32); 3] {
        let (ob, width) = (self.output_bytes(), self.width);
        let at = piece.slot * self.result_rows() + piece.row;
        [
            (
                piece.source_row * width * ob,
                at * width * ob,
                piece.rows * width * ob,
            ),
            (piece.source_row * 4, at * 4, piece.rows * 4),
            (piece.source_row * 4, at * 4, piece.rows * 4),
        ]
    }

    /// Modelled cycles of the busiest merging tile: the merge, after copying the pieces it
    /// holds itself (rows, maxima and sums).
    pub fn merge_cycles(&self, target: &Target) -> u64 {
        let copies = (0..self.result_tiles())
            .map(|owner| {
                let mut cycles = 0;
                self.for_each_merge_piece(owner, |piece| {
                    if piece.source == owner {
                        cycles += self
                            .piece_moves(&piece)
                            .into_iter()
                            .map(|(_, _, bytes)| cost(&KernelSpec::Copy { bytes }, target))
                            .sum::<u64>();
                    }
                });
                cycles
            })
            .max()
            .unwrap_or(0);
        copies + cost(&self.merge(), target)
    }

    /// Bytes of a merging tile's three buffers: every split's output rows, maxima and sums
    /// (as [`KeySplit::piece_moves`] places them).
    pub fn merge_buffer_bytes(&self) -> [u32; 3] {
        let rows = self.splits * self.result_rows();
        [rows * self.width * self.output_bytes(), rows * 4, rows * 4]
    }

    /// Bytes of a merging tile's buffers together.
    pub fn merge_bytes(&self) -> u64 {
        self.merge_buffer_bytes()
            .iter()
            .copied()
            .map(u64::from)
            .sum()
    }

    /// The query rows each tile of `tile` (this split's) fetches, as the planner's need: every
    /// query of its block, or, when its tiles share out the packing
    /// ([`StreamedTile::shares_query_packing`]), only the 16-query groups it packs (group `g`
    /// of a block on its split `g % splits`); `dims` the queries' canonical dims.
    pub fn query_need(&self, tile: &StreamedTile, dims: [u64; 3], bytes: u32) -> Shards {
        let grid = [self.heads, self.query_blocks, self.splits];
        if !tile.shares_query_packing() {
            return Shards::needed_by_grid(dims, bytes, &grid, &[Some(0), Some(1), None]);
        }
        // Blocks of 16 rows when the query blocks are whole 16s, else of one row (a block's
        // groups then do not fall on a grid of the stacked queries).
        let rows = self.rows();
        let block_rows = if rows.is_multiple_of(16) { 16 } else { 1 };
        let owners = (0..self.heads * self.queries / block_rows)
            .map(|block| {
                let row = block * block_rows;
                let (query_block, within) = (row / rows, row % rows);
                smallvec::smallvec![query_block * self.splits + tile.group_packer(within / 16)]
            })
            .collect();
        Shards {
            dims,
            parts: [self.heads, self.queries / block_rows, 1],
            element_bytes: bytes,
            owners,
        }
    }

    /// The merge's exchange phase: its cycles by the endpoint rule and the encoded row bytes of
    /// the tile with the most.
    pub fn exchange_phases(&self, target: &Target) -> (Vec<InternalPhase>, u64, u64) {
        generated_phases(Arc::new(*self), 0..1, self.tiles(), target)
    }
}

impl PhaseTransfers for KeySplit {
    /// Phase 0: every merging tile's pieces from the splits' tiles (a tile's own pieces are
    /// copied, not moved), as three transfers each (rows, maxima, sums).
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        if phase != 0 {
            return;
        }
        for owner in 0..self.result_tiles() {
            self.for_each_merge_piece(owner, |piece| {
                if piece.source != owner {
                    for (_, _, bytes) in self.piece_moves(&piece) {
                        visit(piece.source, &[owner], u64::from(bytes));
                    }
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(keys: u32, splits: u32) -> StreamedTile {
        StreamedTile {
            rows: 64,
            d: 48,
            keys,
            width: 48,
            key_block: 1024,
            precision: Precision::F16,
            causal: false,
            home_keys: Some(16),
            columns: true,
            splits,
        }
    }

    /// The splits cover the keys once in whole panels, in order, split 0 with the most and no
    /// split empty; one split is every key.
    #[test]
    fn splits_cover_the_keys_in_whole_panels() {
        for (keys, splits) in [(1024, 5), (729, 10), (197, 13), (64, 4), (1000, 3)] {
            let tile = tile(keys, splits);
            let mut next = 0;
            let most = tile.split_range(0).1;
            for split in 0..splits {
                let (first, count) = tile.split_range(split);
                assert_eq!(first, next, "{keys} keys in {splits}: split {split}");
                assert!(first.is_multiple_of(16) && count > 0 && count <= most);
                assert!(count.is_multiple_of(16) || first + count == keys);
                next = first + count;
            }
            assert_eq!(next, keys);
        }
        assert_eq!(tile(1024, 5).split_range(0), (0, 208));
        assert_eq!(tile(1024, 5).split_range(4), (832, 192));
        assert_eq!(tile(1024, 1).split_range(0), (0, 1024));
        // Key blocks stay inside their split.
        let blocks = StreamedTile {
            key_block: 96,
            ..tile(1024, 5)
        };
        assert_eq!(
            blocks.split_blocks(1),
            vec![(208, 96), (304, 96), (400, 16)]
        );
        assert_eq!(blocks.key_blocks(), vec![(0, 96), (96, 96), (192, 16)]);
    }

    /// Every merging tile receives each of its rows once from every split, from the tiles of
    /// that row's query block, into distinct places; the result rows cover every head once.
    #[test]
    fn merge_pieces_bring_each_row_from_every_split() {
        for (heads, queries, blocks, splits) in [(2, 1024, 16, 5), (3, 12, 3, 2), (2, 197, 1, 13)] {
            let split = KeySplit {
                heads,
                queries,
                query_blocks: blocks,
                splits,
                width: 8,
                precision: Precision::F16,
            };
            assert!(split.result_tiles() <= split.tiles());
            let rp = split.result_rows();
            assert_eq!(rp * split.result_blocks(), queries);
            let mut covered = vec![0u32; (heads * queries) as usize];
            for owner in 0..split.result_tiles() {
                let mut seen = vec![0u32; (splits * rp) as usize];
                split.for_each_merge_piece(owner, |piece| {
                    let head = owner / split.result_blocks();
                    let row = owner % split.result_blocks() * rp + piece.row;
                    let query_block = piece.source / splits % blocks;
                    assert_eq!(piece.source / splits / blocks, head);
                    assert_eq!(piece.source % splits, piece.slot);
                    assert_eq!(query_block * split.rows() + piece.source_row, row);
                    for r in piece.row..piece.row + piece.rows {
                        seen[(piece.slot * rp + r) as usize] += 1;
                        if piece.slot == 0 {
                            covered[(head * queries + row + r - piece.row) as usize] += 1;
                        }
                    }
                });
                assert!(seen.iter().all(|&n| n == 1), "owner {owner}");
            }
            assert!(covered.iter().all(|&n| n == 1));
        }
        // 1024 queries in blocks of 64 (panels) merge 16 rows per tile, on 64 of the head's
        // 80 tiles; 512 in blocks of 64 over 88 tiles merge 16 rows, not 8.
        let panels = KeySplit {
            heads: 2,
            queries: 1024,
            query_blocks: 16,
            splits: 5,
            width: 48,
            precision: Precision::F16,
        };
        assert!(panels.panels());
        assert_eq!((panels.result_blocks(), panels.result_rows()), (64, 16));
        let half = KeySplit {
            queries: 512,
            query_blocks: 8,
            splits: 11,
            ..panels
        };
        assert_eq!(half.result_rows(), 16);
        // A piece of 16 rows moves one panel of F16 partials (16 x 48 x 2 bytes), contiguous.
        let piece = MergePiece {
            source: 7,
            source_row: 32,
            slot: 2,
            row: 0,
            rows: 16,
        };
        assert_eq!(
            panels.piece_moves(&piece)[0],
            (32 * 96, 2 * 16 * 96, 16 * 96)
        );
        // 12 queries in blocks of 4, merged 2 rows per tile: no run crosses a block.
        let small = KeySplit {
            heads: 1,
            queries: 12,
            query_blocks: 3,
            splits: 2,
            width: 8,
            precision: Precision::F16,
        };
        assert_eq!((small.result_blocks(), small.result_rows()), (6, 2));
    }

    /// A block's tiles pack its 16-query groups in turn (group g on split g % splits): the
    /// busiest packs ceil(groups / splits), the planner's need brings each group raw to its
    /// packer only, and the first key block's phase multicasts every packed group to the
    /// block's other tiles. Query blocks that are not whole 16s are packed by every tile.
    #[test]
    fn query_groups_are_packed_by_the_blocks_tiles_in_turn() {
        let shared = StreamedTile {
            rows: 128,
            key_block: 208,
            ..tile(1024, 5)
        };
        assert!(shared.shares_query_packing());
        assert_eq!(shared.packed_groups(0), [0, 5]);
        assert_eq!(shared.packed_groups(4), [4]);
        assert_eq!(shared.pack_queries_of(0).len(), 2);
        let whole = StreamedTile {
            splits: 1,
            ..shared
        };
        assert_eq!(whole.packed_groups(0), (0..8).collect::<Vec<_>>());
        // 40 queries: groups of 16, 16 and 8, the short one packed through the scratch by
        // split 2, which is then the busiest packer.
        let ragged = StreamedTile { rows: 40, ..shared };
        assert!(ragged.shares_query_packing());
        assert_eq!(
            (ragged.packed_groups(0), ragged.packed_groups(2)),
            (vec![0], vec![2])
        );
        assert!(ragged.packed_groups(3).is_empty());
        let target = Target::c600();
        let pack = |split| -> u64 {
            ragged
                .pack_queries_of(split)
                .iter()
                .map(|(spec, _)| cost(spec, &target))
                .sum()
        };
        assert!(pack(2) > pack(0));
        assert_eq!(ragged.query_pack_cycles(&target), pack(2));
        let ragged_split = KeySplit {
            queries: 40 * 8,
            ..split_of(&ragged)
        };
        // One-row blocks: row 16 + 8 of query block 3 is split 1's (its second group).
        let need = ragged_split.query_need(&ragged, [2, 320, 48], 2);
        assert_eq!(need.parts, [2, 320, 1]);
        assert_eq!(need.owners[3 * 40 + 24].as_slice(), [3 * 5 + 1]);
        let split = KeySplit {
            heads: 2,
            queries: 1024,
            query_blocks: 8,
            splits: 5,
            width: 48,
            precision: Precision::F16,
        };
        let need = split.query_need(&shared, [2, 1024, 48], 2);
        assert_eq!(need.parts, [2, 64, 1]);
        // Head 1, block 3, group 6: on split 1 of block 8 + 3.
        assert_eq!(need.owners[64 + 3 * 8 + 6].as_slice(), [11 * 5 + 1]);
        let keys = crate::strategies::attention::DistributedKeys::of(2, 40, shared)
            .expect("homed")
            .packed();
        let group_bytes = 48 * 16 * 2;
        let mut groups = 0;
        keys.transfers(0, &mut |packer, receivers, bytes| {
            if bytes == group_bytes {
                groups += 1;
                assert_eq!(receivers.len(), 4);
                assert!(receivers
                    .iter()
                    .all(|&r| r / 5 == packer / 5 && r != packer));
            }
        });
        assert_eq!(groups, 2 * 8 * 8);
    }

    /// A split of two heads of `8 x rows` queries over `tile`'s splits.
    fn split_of(tile: &StreamedTile) -> KeySplit {
        KeySplit {
            heads: 2,
            queries: 8 * tile.rows,
            query_blocks: 8,
            splits: tile.splits,
            width: 48,
            precision: Precision::F16,
        }
    }

    /// The grids fill the tiles with key splits for every exact query split that leaves at
    /// least two per block, never more splits than panels.
    #[test]
    fn split_grids_fill_the_tiles() {
        let grids = split_grids(16, 1024, 1024, 1472);
        assert!(grids.contains(&vec![16, 16, 5]));
        assert!(grids.contains(&vec![16, 8, 11]));
        assert!(grids.contains(&vec![16, 1, 64]), "{grids:?}");
        assert!(grids
            .iter()
            .all(|g| g[0] * g[1] * g[2] <= 1472 && g[2] >= 2));
        assert_eq!(split_grids(12, 197, 197, 1472), vec![vec![12, 1, 13]]);
        assert!(split_grids(16, 1024, 16, 1472).is_empty());
    }
}
