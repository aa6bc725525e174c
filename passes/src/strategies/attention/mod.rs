//! The attention strategies: `ipu.attention` (`softmax(q k^T) v` per batch-head) run as
//! whole score rows per tile (`attention_blocked`), materialized on a (batch-head, query block,
//! key block) grid with the scores resharded to whole rows (`attention_materialized`), or with
//! the keys streamed through in blocks and an online softmax (`attention_flash`), whole heads
//! per tile in waves when there are more batch-heads than tiles. This module owns the shapes
//! each takes, the memory a tile needs, and each tile's kernel calls: [`StreamedTile`] and
//! [`MaterializedTile`] list them, the lowering (`lower::graph::general::attention`) emits
//! them and [`candidates`] prices them with the device cost model.

mod candidates;
mod columns;
mod keys;
mod split;

pub use candidates::candidates;
pub use columns::{columns_key_block, query_packing_shared, QueryPack};
pub use keys::{home_tiles, BlockPiece, DistributedKeys};
pub use split::{split_grids, KeySplit, MergePiece};

use ipu_device::{KernelSpec, MemoryClass, Precision, Target};

use super::local_gemm::{pad16, LocalGemm};
use crate::tiling::candidate::{generated_phases, InternalPhase, PhaseTransfers};
use crate::tiling::layout::split_is_exact_cover;
use ipu_device::kernels::spec::ElementOrder;
use std::sync::Arc;

/// Whole batch-heads per tile when an attention has more of them than `tiles` (the lowering
/// then runs them one after the other); `None` while each gets its own tile or grid row.
pub fn heads_per_tile(batches: u32, tiles: u32) -> Option<u32> {
    (batches > tiles).then(|| batches.div_ceil(tiles.max(1)))
}

/// A tile's working-set budget for attention: above it, keys stream through in blocks.
const ATTENTION_TILE_BYTES: u64 = 96 * 1024;

/// The key block of an attention tile with `qr` query rows, head size `d`, `t` keys and value
/// width `ev` in `precision` when its whole score rows, keys and values exceed
/// [`ATTENTION_TILE_BYTES`] (the keys then stream through in blocks); `None` when they fit.
pub fn streamed_key_block(
    (qr, d, t, ev): (u32, u32, u32, u32),
    precision: Precision,
) -> Option<u32> {
    let e = u64::from(precision.bytes());
    let (qr, d, t, ev) = (u64::from(qr), u64::from(d), u64::from(t), u64::from(ev));
    let whole = (qr * d + 2 * t * d + t * ev + 2 * qr * t) * e;
    if whole <= ATTENTION_TILE_BYTES {
        return None;
    }
    let per_key = (2 * d + ev + qr) * e + qr * e;
    let fixed = qr * d * e + qr * ev * 4 + 8 * qr;
    let fits = ATTENTION_TILE_BYTES.saturating_sub(fixed) / per_key.max(1);
    let key_block = (fits / 16 * 16).clamp(16, t.div_ceil(16) * 16);
    Some(u32::try_from(key_block).unwrap_or(u32::MAX))
}

/// The key block of an attention run in whole heads per tile: the streamed block when a
/// head's whole rows do not fit ([`streamed_key_block`]), else all keys in one block.
pub fn wave_key_block(sizes: (u32, u32, u32, u32), precision: Precision) -> u32 {
    streamed_key_block(sizes, precision).unwrap_or_else(|| sizes.2.next_multiple_of(16))
}

/// The tile-local GEMM attention runs (`(rows, k, n)` in `precision`, weights in standard
/// memory, no conversions).
pub fn standard_local_gemm((rows, k, n): (u32, u32, u32), precision: Precision) -> LocalGemm {
    LocalGemm {
        rows,
        k,
        n,
        host: precision,
        input: precision,
        b_packed: false,
        weights: MemoryClass::Standard,
    }
}

fn cost(spec: &KernelSpec, target: &Target) -> u64 {
    ipu_device::cost::kernel_cycles(spec, target)
}

/// One tile of the streamed attention (`attention_flash`): `rows` query rows of head size `d`
/// against `keys` keys of value width `width`, in key blocks of `key_block`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamedTile {
    pub rows: u32,
    pub d: u32,
    pub keys: u32,
    pub width: u32,
    pub key_block: u32,
    pub precision: Precision,
    pub causal: bool,
    /// `Some(h)`: the tile holds `h` of its head's keys ([`DistributedKeys`]) and packs them
    /// once, transposed into AMP-right order ([`StreamedTile::pack_home`]), so each key block
    /// arrives ready for the score GEMM (no transpose or rearrange per block).
    pub home_keys: Option<u32>,
    /// The column formulation ([`columns`]): keys as the AMP's rows, queries as its columns,
    /// the products with the values on the AMP, keys and values packed in panels by the head.
    pub columns: bool,
    /// The head's keys split over this many tiles per query block ([`KeySplit`]): the tile
    /// streams only its split's keys ([`StreamedTile::split_range`]) and leaves its output to
    /// the cross-tile merge; 1 when each tile sees every key.
    pub splits: u32,
}

impl StreamedTile {
    /// `(first key, keys)` of every key block of split 0, the split with the most keys (of
    /// all keys without a split): the blocks the tile is priced by.
    pub fn key_blocks(&self) -> Vec<(u32, u32)> {
        self.split_blocks(0)
    }

    /// `(first key, keys)` of every key block of split `split` ([`StreamedTile::split_range`]).
    pub fn split_blocks(&self, split: u32) -> Vec<(u32, u32)> {
        let (first, keys) = self.split_range(split);
        let block = self.key_block.min(keys).max(1);
        (0..keys.div_ceil(block))
            .map(|index| (first + index * block, block.min(keys - index * block)))
            .collect()
    }

    /// The fills that start the state empty: the row maxima, the row sums (`rows` f32 each)
    /// and the unnormalized output (`rows x width` f32), in that order.
    pub fn fills(&self) -> [KernelSpec; 3] {
        let fill = |elements| KernelSpec::Fill {
            precision: Precision::F32,
            elements,
        };
        [
            fill(self.rows),
            fill(self.rows),
            fill(self.rows * self.width),
        ]
    }

    /// The transpose of a key block of `keys` rows.
    pub fn transpose(&self, keys: u32) -> KernelSpec {
        KernelSpec::Transpose {
            precision: self.precision,
            rows: keys,
            cols: self.d,
        }
    }

    /// The scores of a key block of `keys` keys: `Q K_blk^T` (the block already packed when
    /// the keys are packed at home).
    pub fn scores(&self, keys: u32) -> LocalGemm {
        LocalGemm {
            b_packed: self.home_keys.is_some(),
            ..standard_local_gemm((self.rows, self.d, keys), self.precision)
        }
    }

    /// The one-time packing of the tile's home keys (`home_keys` of them): the transpose of
    /// its `[h, d]` block, then `K^T` into AMP-right order with the head dimension padded to
    /// whole 16-row groups (each 16-key group one contiguous panel, so any 16-aligned key
    /// range is one contiguous run of bytes).
    pub fn pack_home(&self) -> Option<[KernelSpec; 2]> {
        let home = self.home_keys?;
        Some(self.transposed_weights(home, home))
    }

    /// The packing of a `[rows, d]` block of this tile's precision as AMP weights: its
    /// transpose, then into AMP-right order with `d` padded to whole 16-row groups and the
    /// `rows` as `cols_padded` columns.
    pub fn transposed_weights(&self, rows: u32, cols_padded: u32) -> [KernelSpec; 2] {
        [
            KernelSpec::Transpose {
                precision: self.precision,
                rows,
                cols: self.d,
            },
            KernelSpec::Rearrange {
                order: ElementOrder::AmpRight,
                to_amp: true,
                precision: self.precision,
                offset: 0,
                rows: self.d,
                rows_padded: pad16(self.d),
                cols: rows,
                cols_padded,
            },
        ]
    }

    /// Bytes of one packed key of a key block (its head dimension padded to 16).
    pub fn packed_key_bytes(&self) -> u32 {
        pad16(self.d) * self.precision.bytes()
    }

    /// The online-softmax update with a key block of `keys` keys.
    pub fn update(&self, keys: u32) -> KernelSpec {
        KernelSpec::AttentionBlock {
            precision: self.precision,
            rows: self.rows,
            keys,
            width: self.width,
            causal: self.causal,
        }
    }

    /// The division by the row sums into the result.
    pub fn finish(&self) -> KernelSpec {
        KernelSpec::AttentionFinish {
            precision: self.precision,
            rows: self.rows,
            width: self.width,
        }
    }

    /// Modelled cycles of the tile's calls: the fills, per key block its transpose, scores and
    /// update, then the finish.
    pub fn cycles(&self, target: &Target) -> u64 {
        if self.columns {
            return self.column_cycles(target);
        }
        let fills: u64 = self.fills().iter().map(|spec| cost(spec, target)).sum();
        let pack: u64 = self
            .pack_home()
            .iter()
            .flatten()
            .map(|spec| cost(spec, target))
            .sum();
        let blocks: u64 = self
            .key_blocks()
            .iter()
            .map(|&(_, keys)| {
                let transpose = match self.home_keys {
                    Some(_) => 0,
                    None => cost(&self.transpose(keys), target),
                };
                transpose + self.scores(keys).cycles(target) + cost(&self.update(keys), target)
            })
            .sum();
        pack + fills + blocks + cost(&self.finish(), target)
    }

    /// Bytes of the tile's working buffers besides its queries (an operand block) and the
    /// tile-local GEMM's scratch: the score block, the key block and its transpose, the value
    /// block, the f32 unnormalized output, row maxima and row sums.
    /// Packed at home: the key block packed (no transpose), the home keys packed and their
    /// transpose.
    pub fn working_bytes(&self) -> u64 {
        if self.columns {
            return self.column_working_bytes();
        }
        let [rows, d, width, block] =
            [self.rows, self.d, self.width, self.key_block].map(u64::from);
        let e = u64::from(self.precision.bytes());
        let keys = match self.home_keys {
            None => block * 2 * d * e,
            Some(home) => {
                let packed = u64::from(self.packed_key_bytes());
                let transpose = if self.pack_scratch_in_output() {
                    0
                } else {
                    u64::from(home) * d * e
                };
                block * packed + u64::from(home) * packed + transpose
            }
        };
        (rows * block + block * width) * e + keys + rows * width * 4 + 8 * rows
    }

    /// Whether the one-time packing's transposed home keys fit the f32 accumulator (`rows x
    /// width`), which is filled only after the packing: the lowering then transposes into it
    /// instead of a buffer of its own.
    pub fn pack_scratch_in_output(&self) -> bool {
        self.home_keys.is_some_and(|home| {
            u64::from(home) * u64::from(self.d) * u64::from(self.precision.bytes())
                <= u64::from(self.rows) * u64::from(self.width) * 4
        })
    }

    /// Modelled cycles of a tile running `heads` whole heads one after the other: per head its
    /// copies of the queries and of each key and value block from the tile's home into the
    /// working buffers, then [`StreamedTile::cycles`].
    pub fn waves_cycles(&self, heads: u32, target: &Target) -> u64 {
        let e = u64::from(self.precision.bytes());
        let copy = |bytes: u64| ipu_device::cost::copy_cycles(bytes, target);
        let width = u64::from(self.key_block.min(self.keys));
        let blocks = u64::from(self.keys.div_ceil(self.key_block.max(1)));
        let copies = copy(u64::from(self.rows) * u64::from(self.d) * e)
            + blocks
                * (copy(width * u64::from(self.d) * e) + copy(width * u64::from(self.width) * e));
        u64::from(heads) * (copies + self.cycles(target))
    }
}

/// Whether `blocks` query blocks per head split `queries` as the query-block lowerings take
/// them: exactly, or, streamed, in ragged blocks with none empty ([`RaggedHeads`]). The
/// planner offers and the lowering follows exactly these.
pub fn query_blocks_allowed(queries: u32, blocks: u32, streamed: bool) -> bool {
    blocks > 0
        && (queries.is_multiple_of(blocks)
            || (streamed && split_is_exact_cover(u64::from(queries), blocks)))
}

/// Query blocks that do not split a head's queries exactly: blocks of `ceil(S / tiles per
/// head)` rows, the last one shorter. Each head's queries and result are homed whole on tile
/// `head` (a layout the lowering's row grids express); one exchange phase before the first key
/// block brings each query tile its rows from there (phase 0), and one after the finish brings
/// every block's result rows home (phase 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RaggedHeads {
    pub heads: u32,
    pub tiles_per_head: u32,
    pub queries: u32,
    pub d: u32,
    pub width: u32,
    pub precision: Precision,
}

impl RaggedHeads {
    /// Query rows per block (the last block may hold fewer).
    pub fn rows(&self) -> u32 {
        self.queries.div_ceil(self.tiles_per_head.max(1))
    }

    /// `(first query, rows)` of block `block` of a head (`rows` 0 past the end).
    pub fn block(&self, block: u32) -> (u32, u32) {
        let first = (block * self.rows()).min(self.queries);
        (first, self.rows().min(self.queries - first))
    }

    /// The tile of block `block` of head `head`.
    pub fn tile(&self, head: u32, block: u32) -> u32 {
        head * self.tiles_per_head + block
    }

    /// The two phases (queries out, results home), their cycles by the endpoint rule and the
    /// encoded row bytes of the tile with the most over both.
    pub fn exchange_phases(&self, target: &Target) -> (Vec<InternalPhase>, u64, u64) {
        let tiles = self.heads * self.tiles_per_head;
        generated_phases(Arc::new(*self), 0..2, tiles, target)
    }
}

impl PhaseTransfers for RaggedHeads {
    /// Phase 0: each block's query rows from tile `head` to the block's tile; phase 1: each
    /// block's result rows back (a block on tile `head` itself copies instead).
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        let e = u64::from(self.precision.bytes());
        for head in 0..self.heads {
            for block in 0..self.tiles_per_head {
                let (_, rows) = self.block(block);
                let tile = self.tile(head, block);
                if rows == 0 || tile == head {
                    continue;
                }
                match phase {
                    0 => visit(head, &[tile], u64::from(rows) * u64::from(self.d) * e),
                    1 => visit(tile, &[head], u64::from(rows) * u64::from(self.width) * e),
                    _ => {}
                }
            }
        }
    }
}

/// One tile of the materialized attention (`attention_materialized`, or `attention_blocked`
/// with one key block): `rows` query rows against a key block of `key_rows` keys, then, after
/// the reshard, `rows_after` whole score rows over all `keys` keys multiplied by the values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaterializedTile {
    pub rows: u32,
    pub d: u32,
    pub key_rows: u32,
    pub keys: u32,
    pub width: u32,
    pub rows_after: u32,
    pub precision: Precision,
    pub causal: bool,
}

impl MaterializedTile {
    /// The transpose of the tile's key block.
    pub fn transpose(&self) -> KernelSpec {
        KernelSpec::Transpose {
            precision: self.precision,
            rows: self.key_rows,
            cols: self.d,
        }
    }

    /// The score block `Q K_j^T`.
    pub fn scores(&self) -> LocalGemm {
        standard_local_gemm((self.rows, self.d, self.key_rows), self.precision)
    }

    /// The scaling of the score block.
    pub fn scale(&self) -> KernelSpec {
        KernelSpec::Scale {
            precision: self.precision,
            elements: self.rows * self.key_rows,
        }
    }

    /// The (causal) softmax of the tile's whole score rows.
    pub fn softmax(&self) -> KernelSpec {
        KernelSpec::Softmax {
            precision: self.precision,
            rows: self.rows_after,
            cols: self.keys,
            causal: self.causal,
        }
    }

    /// The probabilities times the head's values.
    pub fn values(&self) -> LocalGemm {
        standard_local_gemm((self.rows_after, self.keys, self.width), self.precision)
    }

    /// Every kernel the tile runs, in order.
    pub fn kernels(&self) -> Vec<KernelSpec> {
        let mut kernels = vec![self.transpose()];
        kernels.extend(self.scores().calls().iter().map(|call| call.spec().clone()));
        kernels.push(self.scale());
        kernels.push(self.softmax());
        kernels.extend(self.values().calls().iter().map(|call| call.spec().clone()));
        kernels
    }

    /// Modelled cycles of [`MaterializedTile::kernels`].
    pub fn cycles(&self, target: &Target) -> u64 {
        cost(&self.transpose(), target)
            + self.scores().cycles(target)
            + cost(&self.scale(), target)
            + cost(&self.softmax(), target)
            + self.values().cycles(target)
    }

    /// Per-tile bytes `(standard, interleaved)` of the buffers: queries, key block and its
    /// transpose, score block, score rows, probabilities, result and both tile-local GEMMs'
    /// scratch in standard memory; the head's values in interleaved memory.
    pub fn bytes(&self) -> (u64, u64) {
        let e = u64::from(self.precision.bytes());
        let [rows, d, key_rows, keys, width, rows_after] = [
            self.rows,
            self.d,
            self.key_rows,
            self.keys,
            self.width,
            self.rows_after,
        ]
        .map(u64::from);
        let standard = (rows * d
            + 2 * key_rows * d
            + rows * key_rows
            + 2 * rows_after * keys
            + rows_after * width)
            * e
            + self.scores().scratch_bytes()
            + self.values().scratch_bytes();
        (standard, keys * width * e)
    }

    /// Whether the buffers fit a tile's planned budgets (with room for the operands' homes and
    /// the 16 KiB element rule).
    pub fn fits(&self, target: &Target) -> bool {
        let (standard, interleaved) = self.bytes();
        standard * 10 <= u64::from(target.memory.standard_budget.value) * 8
            && interleaved * 10 <= u64::from(target.memory.interleaved_budget.value) * 8
    }
}

/// Whether the materialized attention takes grid `(gb, gs, gt)` for `batches` batch-heads of
/// `s` queries and `t` keys on `tiles` tiles: one batch-head per grid row, the queries split
/// exactly into `gs` blocks of `gt` row groups, the keys into `gt` blocks.
pub fn materialized_fits(
    (batches, s, t): (u32, u32, u32),
    (gb, gs, gt): (u32, u32, u32),
    tiles: u32,
) -> bool {
    gb == batches
        && gs > 0
        && gt > 0
        && s.is_multiple_of(gs * gt)
        && t.is_multiple_of(gt)
        && u64::from(gb) * u64::from(gs) * u64::from(gt) <= u64::from(tiles)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ragged blocks cover each head's queries once (the last block shorter), and the phase
    /// that brings results home moves every row to tile `head` exactly once (a block on that
    /// tile copies instead).
    #[test]
    fn ragged_blocks_cover_the_queries_and_bring_results_home() {
        let ragged = RaggedHeads {
            heads: 3,
            tiles_per_head: 17,
            queries: 50,
            d: 16,
            width: 24,
            precision: Precision::F16,
        };
        assert_eq!(ragged.rows(), 3);
        let blocks: Vec<(u32, u32)> = (0..17).map(|block| ragged.block(block)).collect();
        assert_eq!(blocks[16], (48, 2));
        assert_eq!(blocks.iter().map(|&(_, rows)| rows).sum::<u32>(), 50);
        assert!(blocks.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        let mut home = vec![0u64; 3];
        ragged.transfers(1, &mut |source, destinations, bytes| {
            assert_eq!(destinations.len(), 1);
            let head = destinations[0];
            assert_eq!(source / 17, head, "a block goes to its own head");
            assert_ne!(source, head);
            home[head as usize] += bytes;
        });
        // Every row of width 24 in f16, except the block already on tile `head` (head 0's
        // first block: 3 rows).
        assert_eq!(home, [(50 - 3) * 24 * 2, 50 * 24 * 2, 50 * 24 * 2]);
        let (phases, cycles, _) = ragged.exchange_phases(&Target::c600());
        assert_eq!(phases.len(), 2);
        assert!(cycles > u64::from(Target::c600().exchange.phase_cycles.value));
    }
}
