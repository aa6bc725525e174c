//! The column formulation of the streamed attention (`attention_flash` with
//! [`StreamedTile::columns`]): keys are the AMP's rows and queries its columns. Per key block
//! a tile computes the transposed scores `S^T = K_blk Q^T` (the key block the AMP's left
//! operand, the tile's queries packed once as its weights), the online-softmax update leaves
//! the probabilities `P^T` in the AMP's weight order ([`KernelSpec::AttentionColumns`]) and the
//! AMP adds `V_blk^T P^T` into the transposed output. The weights fed per block are the tile's
//! few query columns, not the block's keys and values, and the products with the values run on
//! the AMP instead of the vector units.
//!
//! Keys and values move packed: each 16-key panel of a head is packed once by one tile of the
//! head (its home, or its panel tile, see [`DistributedKeys`]), keys into AMP-left order
//! (`[d/16][16][16]`, the head dimension padded to 16, missing keys zero) and values
//! transposed into AMP-left order (`[1][width][16]`), and every key block multicasts whole
//! packed panels: a block of `kp` keys (padded to 16) arrives as the AMP-left operands
//! `K_blk` (`[d/16][kp][16]`: each panel one run per 16 head columns) and `V_blk^T`
//! (`[kp/16][width][16]`: each panel one run).

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{KernelSpec, MemoryClass, Precision, Target};

use super::{cost, pad16, StreamedTile};

/// Whether a key split's `splits` tiles of a query block of `rows` queries share out the
/// packing of its 16-query groups: when there are several tiles and more than one group (one
/// group each tile packs itself rather than receive it). The planner and the lowering (which
/// decides from a plan whether the host writes the queries to their packers) ask this.
pub fn query_packing_shared(rows: u32, splits: u32) -> bool {
    splits > 1 && rows > 16
}

/// Where one call of a column tile's query packing ([`StreamedTile::pack_queries_of`]) reads
/// and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryPack {
    /// Zero the packed queries (their padded head rows).
    Zero,
    /// Transpose queries `[16 g, 16 g + 16)` (`[16][d]`, row-major) into column group `g` of
    /// the packed queries.
    Group(u32),
    /// Transpose the short last group's queries (from `16 g`) into the scratch.
    ShortTranspose(u32),
    /// The scratch's transposed short group into AMP-right order, into column group `g`.
    ShortPack(u32),
}

/// A tile's working-set budget for the column formulation's larger key blocks (see
/// [`columns_key_block`]); the planner checks the tile's memory either way.
const COLUMN_TILE_BYTES: u64 = 192 * 1024;

/// The column formulation's key block for a tile of `qr` queries of head size `d` against `t`
/// keys of value width `ev` in `precision`: the most whole 16-key panels, up to the keys, whose
/// probabilities are one call's AMP weights and whose working bytes fit [`COLUMN_TILE_BYTES`]
/// (larger blocks feed the score GEMM its query weights fewer times and take fewer phases);
/// `None` for precisions the formulation does not take.
pub fn columns_key_block(
    (qr, d, t, ev): (u32, u32, u32, u32),
    precision: Precision,
) -> Option<u32> {
    if !matches!(precision, Precision::F16 | Precision::F32) || qr == 0 {
        return None;
    }
    let weights = GEMM_MAX_WEIGHT_ELEMENTS / pad16(qr) / 16 * 16;
    (1..=pad16(t).min(weights) / 16)
        .rev()
        .map(|panels| panels * 16)
        .find(|&block| {
            probe((qr, d, t, ev), precision, block).column_working_bytes() <= COLUMN_TILE_BYTES
        })
}

/// The column tile [`columns_key_block`] sizes a key block by (one panel per packer).
fn probe(
    (qr, d, t, ev): (u32, u32, u32, u32),
    precision: Precision,
    key_block: u32,
) -> StreamedTile {
    StreamedTile {
        rows: qr,
        d,
        keys: t,
        width: ev,
        key_block,
        precision,
        causal: false,
        home_keys: Some(16),
        columns: true,
        splits: 1,
    }
}

impl StreamedTile {
    /// Whether the column formulation takes this tile: F16 or F32 elements (the AMP's inputs
    /// are the elements; FP8 probabilities would lose too much), keys packed by the head's
    /// tiles, and both GEMMs' weights (the packed queries, a block's probabilities) within one
    /// call's weight buffer.
    pub fn columns_fit(&self) -> bool {
        let weights = |k: u32| u64::from(k) * u64::from(pad16(self.rows));
        matches!(self.precision, Precision::F16 | Precision::F32)
            && self.home_keys.is_some()
            && weights(pad16(self.d)) <= u64::from(GEMM_MAX_WEIGHT_ELEMENTS)
            && weights(pad16(self.key_block.min(self.keys))) <= u64::from(GEMM_MAX_WEIGHT_ELEMENTS)
    }

    /// The precision of the transposed scores and output (the AMP's partials).
    pub fn partials(&self) -> Precision {
        default_partials(self.precision)
    }

    /// The fills that start the column state: the maxima (-inf) and sums (0), `rows` f32
    /// each. The transposed output needs none: the first block's products with the values
    /// write it ([`StreamedTile::column_values`]) and the update before them does not keep
    /// what it held (it zeroes a column's output where the maximum was -inf, and leaves a
    /// column without a visible key, whose probabilities are all 0).
    pub fn column_fills(&self) -> [KernelSpec; 2] {
        let fill = KernelSpec::Fill {
            precision: Precision::F32,
            elements: self.rows,
        };
        [fill.clone(), fill]
    }

    /// The query packing of split `split`'s tile, group by group: AMP-right order keeps each
    /// 16-query column group a row-major `[pad16(d)][16]` block, so a whole group transposes
    /// straight into it (after zeroing the padded head rows when `d` is not whole 16s), and a
    /// short last group transposes into the scratch, then rearranges into its block (its
    /// missing queries and head rows zero). With the keys split over tiles, the tiles of a
    /// query block share the groups out ([`StreamedTile::packed_groups`]) and multicast them
    /// packed.
    pub fn pack_queries_of(&self, split: u32) -> Vec<(KernelSpec, QueryPack)> {
        let groups = self.packed_groups(split);
        let mut calls = Vec::new();
        let whole = |group: u32| 16 * (group + 1) <= self.rows;
        if !self.d.is_multiple_of(16) && groups.iter().any(|&group| whole(group)) {
            let fill = KernelSpec::Fill {
                precision: self.precision,
                elements: pad16(self.d) * pad16(self.rows),
            };
            calls.push((fill, QueryPack::Zero));
        }
        for group in groups {
            let queries = 16.min(self.rows - 16 * group);
            if whole(group) {
                let transpose = KernelSpec::Transpose {
                    precision: self.precision,
                    rows: 16,
                    cols: self.d,
                };
                calls.push((transpose, QueryPack::Group(group)));
            } else {
                let [transpose, pack] = self.transposed_weights(queries, 16);
                calls.push((transpose, QueryPack::ShortTranspose(group)));
                calls.push((pack, QueryPack::ShortPack(group)));
            }
        }
        calls
    }

    /// Modelled cycles of the busiest tile's query packing (a shared-out short group can cost
    /// more than split 0's whole one).
    pub fn query_pack_cycles(&self, target: &Target) -> u64 {
        (0..self.packing_splits())
            .map(|split| {
                self.pack_queries_of(split)
                    .iter()
                    .map(|(spec, _)| cost(spec, target))
                    .sum::<u64>()
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether the tiles of a query block share out the packing of its 16-query groups (the
    /// keys split over tiles, and more than one group: one group each tile packs itself rather
    /// than receive it): group `g` is packed by split `g % splits`'s tile and multicast from
    /// there to the block's other tiles with the first key block.
    pub fn shares_query_packing(&self) -> bool {
        query_packing_shared(self.rows, self.splits)
    }

    /// The splits whose tiles pack different groups: those with a group when the packing is
    /// shared out, else split 0 (every tile packs the same).
    fn packing_splits(&self) -> u32 {
        if self.shares_query_packing() {
            self.splits.min(self.rows.div_ceil(16))
        } else {
            1
        }
    }

    /// The split whose tile packs 16-query group `group` when the packing is shared out.
    pub fn group_packer(&self, group: u32) -> u32 {
        group % self.splits.max(1)
    }

    /// The 16-query groups (the last one short when the queries are not whole 16s) split
    /// `split`'s tile packs: every group, or, shared out, those `g` with `g % splits ==
    /// split`.
    pub fn packed_groups(&self, split: u32) -> Vec<u32> {
        let groups = self.rows.div_ceil(16);
        if !self.shares_query_packing() {
            return (0..groups).collect();
        }
        (0..groups)
            .filter(|&group| self.group_packer(group) == split)
            .collect()
    }

    /// The query packing's distinct calls over the tiles that pack.
    pub fn query_pack_kernels(&self) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = Vec::new();
        for split in 0..self.packing_splits() {
            for (spec, _) in self.pack_queries_of(split) {
                if !kernels.contains(&spec) {
                    kernels.push(spec);
                }
            }
        }
        kernels
    }

    /// The packing of one panel of `keys` keys (16, or fewer for the last panel of a head):
    /// its keys into AMP-left order (16 rows, missing ones zero), and its values transposed
    /// (a whole panel's `[width, 16]` transpose is its AMP-left order already; a short one's
    /// then goes into AMP-left order with the keys as 16 zero-padded columns).
    pub fn pack_panel(&self, keys: u32) -> Vec<KernelSpec> {
        let mut specs = vec![
            KernelSpec::Rearrange {
                order: ElementOrder::AmpLeft,
                to_amp: true,
                precision: self.precision,
                offset: 0,
                rows: keys,
                rows_padded: 16,
                cols: self.d,
                cols_padded: pad16(self.d),
            },
            KernelSpec::Transpose {
                precision: self.precision,
                rows: keys,
                cols: self.width,
            },
        ];
        if keys < 16 {
            specs.push(KernelSpec::Rearrange {
                order: ElementOrder::AmpLeft,
                to_amp: true,
                precision: self.precision,
                offset: 0,
                rows: self.width,
                rows_padded: self.width,
                cols: keys,
                cols_padded: 16,
            });
        }
        specs
    }

    /// Keys in the last panel of a head when it is short (`None` when the keys are whole
    /// panels).
    fn short_panel(&self) -> Option<u32> {
        Some(self.keys % 16).filter(|&keys| keys > 0)
    }

    /// Modelled cycles of the busiest packing tile: its panels, each priced as the dearer of a
    /// whole panel and the head's short last panel.
    pub fn packer_cycles(&self, target: &Target) -> u64 {
        let pack = |keys| {
            self.pack_panel(keys)
                .iter()
                .map(|spec| cost(spec, target))
                .sum::<u64>()
        };
        let panel = self
            .short_panel()
            .map_or(pack(16), |short| pack(16).max(pack(short)));
        u64::from(self.panels_per_packer()) * panel
    }

    /// The transposed scores of a block of `keys` keys: `S^T = K_blk Q^T`, the block's
    /// `pad16(keys)` packed keys as the AMP rows.
    pub fn column_scores(&self, keys: u32) -> KernelSpec {
        self.column_gemm(pad16(self.d), vec![pad16(keys)], false)
    }

    /// The products with the block's values: `O^T += V_blk^T P^T`, the `width` value columns
    /// as the AMP rows and the block's padded keys as K; the tile's `first` block writes
    /// `O^T = V_blk^T P^T` (no fill before it).
    pub fn column_values(&self, keys: u32, first: bool) -> KernelSpec {
        self.column_gemm(pad16(keys), vec![self.width], !first)
    }

    fn column_gemm(&self, k: u32, rows: Vec<u32>, accumulate: bool) -> KernelSpec {
        KernelSpec::Gemm {
            input: self.precision,
            partials: self.partials(),
            weights: MemoryClass::Standard,
            k,
            c: pad16(self.rows),
            rows,
            accumulate,
        }
    }

    /// The online-softmax update of a block of `keys` keys in the column layout.
    pub fn column_update(&self, keys: u32) -> KernelSpec {
        KernelSpec::AttentionColumns {
            precision: self.precision,
            keys,
            queries: self.rows,
            width: self.width,
            causal: self.causal,
        }
    }

    /// The division by the sums into the tile's row-major result; with the keys split over
    /// tiles, into f32 rows the merge weighs ([`KernelSpec::AttentionSplitFinish`]), or
    /// nothing when the merge takes the tile's output as it is, in whole 16-query panels
    /// ([`StreamedTile::merges_panels`]).
    pub fn column_finish(&self) -> Option<KernelSpec> {
        let (precision, queries, width) = (self.precision, self.rows, self.width);
        if self.merges_panels() {
            return None;
        }
        Some(if self.splits > 1 {
            KernelSpec::AttentionSplitFinish {
                precision,
                queries,
                width,
            }
        } else {
            KernelSpec::AttentionFinishColumns {
                precision,
                queries,
                width,
            }
        })
    }

    /// Whether the keys are split and the merge reads each tile's unnormalized output in its
    /// panel order: the tile's queries are whole 16-query panels (the merged rows then are
    /// too, [`super::KeySplit::result_rows`]).
    pub fn merges_panels(&self) -> bool {
        self.splits > 1 && self.rows.is_multiple_of(16)
    }

    /// Panels a packing tile packs: its home's whole panels, or one in 16-key panels.
    pub fn panels_per_packer(&self) -> u32 {
        self.home_keys.map_or(0, |home| home.div_ceil(16))
    }

    /// Every kernel a tile of the column formulation calls.
    pub fn column_kernels(&self) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = self.column_fills().into();
        kernels.extend(self.query_pack_kernels());
        kernels.extend(self.pack_panel(16));
        if let Some(short) = self.short_panel() {
            kernels.extend(self.pack_panel(short));
        }
        for (step, (_, keys)) in self.key_blocks().into_iter().enumerate() {
            kernels.push(self.column_scores(keys));
            kernels.push(self.column_update(keys));
            kernels.push(self.column_values(keys, step == 0));
        }
        kernels.extend(self.column_finish());
        kernels
    }

    /// Modelled cycles of a tile of the column formulation: the fills, the query packing, its
    /// panels' packing (the busiest packer's, every panel priced whole), per key block the two
    /// GEMMs and the update, then the finish.
    pub fn column_cycles(&self, target: &Target) -> u64 {
        let sum = |specs: &[KernelSpec]| specs.iter().map(|spec| cost(spec, target)).sum::<u64>();
        let blocks: u64 = self
            .key_blocks()
            .iter()
            .enumerate()
            .map(|(step, &(_, keys))| {
                sum(&[
                    self.column_scores(keys),
                    self.column_update(keys),
                    self.column_values(keys, step == 0),
                ]) + self.own_panel_copies(keys, target)
            })
            .sum();
        sum(&self.column_fills())
            + self.query_pack_cycles(target)
            + self.packer_cycles(target)
            + blocks
            + self
                .column_finish()
                .map_or(0, |finish| cost(&finish, target))
    }

    /// Modelled cycles of a tile copying the panels it packed that a block of `keys` keys holds
    /// (they reach it by copy, not exchange): at most its panels, each one copy per 16 head
    /// columns (the key block's layout) and one of its values.
    pub fn own_panel_copies(&self, keys: u32, target: &Target) -> u64 {
        let e = self.precision.bytes();
        let copy = |bytes| cost(&KernelSpec::Copy { bytes }, target);
        let panel = u64::from(pad16(self.d) / 16) * copy(256 * e) + copy(16 * self.width * e);
        u64::from(self.panels_per_packer().min(pad16(keys) / 16)) * panel
    }

    /// Bytes of a column tile's working buffers besides its queries: the packed queries and
    /// their transpose, a key block and a value block packed, the transposed scores and
    /// probabilities of a block, the transposed output, maxima and sums, a packer's raw
    /// panel, its values' transpose and its packed panels, and with the keys split the f32
    /// rows of its split's output.
    pub fn column_working_bytes(&self) -> u64 {
        let [rows, d, width, block] = [
            pad16(self.rows),
            pad16(self.d),
            self.width,
            pad16(self.key_block.min(self.keys)),
        ]
        .map(u64::from);
        let (e, pe) = (
            u64::from(self.precision.bytes()),
            u64::from(self.partials().bytes()),
        );
        let queries = (d * rows + u64::from(self.d) * u64::from(self.rows)) * e;
        let blocks = (d + width) * block * e;
        let scores = block * rows * (pe + e);
        let state = width * rows * pe + 8 * u64::from(self.rows);
        let panel = 16 * (u64::from(self.d) + 2 * width) * e;
        let packed = u64::from(self.panels_per_packer()) * 16 * (d + width) * e;
        let split_rows = if self.splits > 1 && !self.merges_panels() {
            u64::from(self.rows) * width * 4
        } else {
            0
        };
        queries + blocks + scores + state + panel + packed + split_rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(precision: Precision) -> StreamedTile {
        StreamedTile {
            rows: 16,
            d: 48,
            keys: 1024,
            width: 48,
            key_block: 256,
            precision,
            causal: false,
            home_keys: Some(16),
            columns: true,
            splits: 1,
        }
    }

    /// The column formulation is priced from its own calls: at the anchor's head size (16
    /// queries, 1024 keys of 48 in blocks of 256) it is well under half the row formulation
    /// with the same packed keys (its score GEMM feeds 16 query columns per block, not 256
    /// keys, and the values run on the AMP), and every call it lists is one a tile can run.
    #[test]
    fn columns_cost_less_than_rows_at_the_anchor_head() {
        let target = Target::c600();
        let columns = tile(Precision::F16);
        let rows = StreamedTile {
            columns: false,
            ..columns
        };
        assert!(columns.columns_fit());
        let (c, r) = (columns.cycles(&target), rows.cycles(&target));
        assert!(2 * c < r, "columns {c} against rows {r}");
        assert!(crate::tiling::candidate::all_valid(
            &columns.column_kernels()
        ));
        // A whole panel packs in two calls (the values' transpose is their AMP-left order), a
        // short one in three, and the packer is priced for the dearer.
        assert_eq!(columns.pack_panel(16).len(), 2);
        assert_eq!(columns.pack_panel(9).len(), 3);
        let pack = |keys| {
            columns
                .pack_panel(keys)
                .iter()
                .map(|s| cost(s, &target))
                .sum::<u64>()
        };
        assert_eq!(columns.packer_cycles(&target), pack(16));
        let short = StreamedTile {
            keys: 1017,
            ..columns
        };
        assert_eq!(short.packer_cycles(&target), pack(16).max(pack(9)));
        assert!(pack(9) > pack(16));
        // 16 queries of 48 transpose straight into the weights' order, 64 group by group; a
        // head size of 40 zeroes the padded rows first; 15 need the whole transpose and the
        // rearrange.
        let steps = |tile: StreamedTile| -> Vec<QueryPack> {
            tile.pack_queries_of(0)
                .into_iter()
                .map(|(_, step)| step)
                .collect()
        };
        assert_eq!(steps(columns), [QueryPack::Group(0)]);
        let groups = (0..4).map(QueryPack::Group).collect::<Vec<_>>();
        assert_eq!(
            steps(StreamedTile {
                rows: 64,
                ..columns
            }),
            groups
        );
        assert_eq!(
            steps(StreamedTile { d: 40, ..columns }),
            [QueryPack::Zero, QueryPack::Group(0)]
        );
        assert_eq!(
            steps(StreamedTile {
                rows: 15,
                ..columns
            }),
            [QueryPack::ShortTranspose(0), QueryPack::ShortPack(0)]
        );
        // 21 queries of a head size of 40: the zero fill, the whole group, the short one.
        assert_eq!(
            steps(StreamedTile {
                rows: 21,
                d: 40,
                ..columns
            }),
            [
                QueryPack::Zero,
                QueryPack::Group(0),
                QueryPack::ShortTranspose(1),
                QueryPack::ShortPack(1)
            ]
        );
        let wide = StreamedTile {
            rows: 64,
            ..columns
        };
        let pack_cost: u64 = wide
            .query_pack_kernels()
            .iter()
            .map(|s| cost(s, &target))
            .sum();
        let [transpose, rearrange] = wide.transposed_weights(64, 64);
        assert!(2 * pack_cost < cost(&transpose, &target) + cost(&rearrange, &target) + 100);
        // Per block: the score GEMM's one 16-column group of weights (48 deep), the update,
        // and the values GEMM's one group 256 deep; four blocks.
        let block = cost(&columns.column_scores(256), &target)
            + cost(&columns.column_update(256), &target)
            + cost(&columns.column_values(256, false), &target)
            + columns.own_panel_copies(256, &target);
        // Its own panel (one of 16 keys) reaches it by copy: three copies of 16 keys x 16
        // head columns and one of 16 x 48 values.
        let copy = |bytes| cost(&KernelSpec::Copy { bytes }, &target);
        assert_eq!(
            columns.own_panel_copies(256, &target),
            3 * copy(512) + copy(1536)
        );
        let once = columns
            .column_fills()
            .iter()
            .map(|s| cost(s, &target))
            .sum::<u64>()
            + columns
                .query_pack_kernels()
                .iter()
                .map(|s| cost(s, &target))
                .sum::<u64>()
            + columns.packer_cycles(&target)
            + cost(&columns.column_finish().expect("a finish"), &target);
        assert_eq!(c, 4 * block + once);
    }

    /// The column key block is the most whole panels within the keys, one call's weights
    /// (65,536 / padded queries) and the working-set budget.
    #[test]
    fn column_key_blocks_are_the_most_panels_that_fit() {
        for (sizes, precision) in [
            ((16, 48, 1024, 48), Precision::F16),
            ((94, 72, 1024, 72), Precision::F16),
            ((32, 64, 1024, 64), Precision::F32),
            ((12, 72, 100, 72), Precision::F16),
        ] {
            let block = columns_key_block(sizes, precision).expect("a block");
            let (qr, _, t, _) = sizes;
            let tile = |key_block| probe(sizes, precision, key_block);
            assert!(block.is_multiple_of(16) && block <= pad16(t));
            assert!(block * pad16(qr) <= GEMM_MAX_WEIGHT_ELEMENTS);
            assert!(tile(block).column_working_bytes() <= COLUMN_TILE_BYTES);
            let next = block + 16;
            assert!(
                next > pad16(t)
                    || next * pad16(qr) > GEMM_MAX_WEIGHT_ELEMENTS
                    || tile(next).column_working_bytes() > COLUMN_TILE_BYTES
            );
        }
        // 94 queries (96 padded): at most 672 keys of weights per call; 100 keys: 112.
        assert!(columns_key_block((94, 72, 1024, 72), Precision::F16).unwrap() <= 672);
        assert_eq!(
            columns_key_block((12, 72, 100, 72), Precision::F16),
            Some(112)
        );
        assert_eq!(
            columns_key_block((16, 48, 1024, 48), Precision::F8E4M3),
            None
        );
    }

    /// FP8 elements, keys not packed by the head, or probabilities wider than one call's
    /// weights keep the row formulation.
    #[test]
    fn columns_need_f16_or_f32_packed_keys_and_one_call_of_weights() {
        assert!(tile(Precision::F32).columns_fit());
        assert!(!tile(Precision::F8E4M3).columns_fit());
        let unpacked = StreamedTile {
            home_keys: None,
            ..tile(Precision::F16)
        };
        assert!(!unpacked.columns_fit());
        // 64 query columns x 1040 padded keys exceed 65,536 weights.
        let wide = StreamedTile {
            rows: 64,
            key_block: 1040,
            keys: 2048,
            ..tile(Precision::F16)
        };
        assert!(!wide.columns_fit());
        assert!(StreamedTile {
            key_block: 1024,
            ..wide
        }
        .columns_fit());
    }
}
