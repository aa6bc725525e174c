//! The streamed attention in the column formulation (`strategies::attention::columns`): keys
//! as the AMP's rows, queries as its columns, keys and values packed once per 16-key panel by
//! one tile of the head and multicast packed in every key block.

use super::streamed::{update_args, KeyBlock, QueryWaves, WaveSlot};
use super::*;

impl Lowering<'_> {
    /// Attention with the keys streamed in blocks, column formulation: the panels packed (after
    /// one exchange phase that gathers each panel's keys and values to its tile, when the
    /// homes are not whole panels), then per key block one exchange phase multicasting the
    /// block's packed panels (with the first, the queries) and a compute step of `S^T = K_blk
    /// Q^T`, the update and `O^T += V_blk^T P^T`; the finish divides into the result rows.
    pub(super) fn attention_columns(
        &mut self,
        attention: &StreamedAttention,
        grid: &GemmGrid,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let waves = QueryWaves {
            grid,
            rows: attention.query_rows,
            queries_per_head: attention.padded_queries,
        };
        if waves.count() != 1 {
            return Err(unsupported(
                "ipu.attention",
                format!(
                    "op {}: the column formulation runs one query block per tile, not {} waves",
                    attention.index,
                    waves.count()
                ),
            ));
        }
        let result = self.result_buffer(attention.index, grid, attention.precision);
        let slots = waves.slots(0);
        let inputs = ColumnInputs {
            queries: QuerySource::Device(operands.queries),
            keys: operands.keys,
            values: operands.values,
        };
        let op = self.column_op(attention, inputs, (&grid.tiles(), &slots), Some(result))?;
        if attention.is_ragged() {
            self.fetch_ragged_queries(attention, operands, op.buffers.queries, grid);
        }
        let runs = self.column_blocks(&op, &slots);
        attention.log(grid, 1, op.work.key_blocks().len());
        self.finish_streamed(attention, grid, result, runs);
        Ok(())
    }

    /// The column formulation's buffers on `tiles` (the finish's rows into `result`, when it
    /// has one) and its panels packed (see [`Self::pack_column_panels`]).
    pub(super) fn column_op<'a>(
        &mut self,
        attention: &'a StreamedAttention,
        inputs: ColumnInputs<'a>,
        (tiles, slots): (&[u32], &[WaveSlot]),
        result: Option<BufferId>,
    ) -> Result<ColumnOp<'a>, LowerError> {
        let work = attention.tile();
        let Some(keys_home) = attention.keys_home else {
            return Err(unsupported(
                "ipu.attention",
                format!(
                    "op {}: the column formulation needs the keys homed over each head's tiles",
                    attention.index
                ),
            ));
        };
        let buffers = self.column_buffers(attention, &work, tiles, result);
        let op = ColumnOp {
            attention,
            work,
            keys_home,
            inputs,
            buffers,
            split_blocks: (0..work.splits.max(1))
                .map(|split| work.split_blocks(split))
                .collect(),
        };
        if matches!(inputs.queries, QuerySource::Host(_)) && !op.work.shares_query_packing() {
            return Err(unsupported(
                "ipu.attention",
                format!(
                    "op {}: queries left on the host are written to the tiles that pack them, which needs a key split's tiles sharing out more than one 16-query group",
                    attention.index
                ),
            ));
        }
        self.pack_column_panels(&op, slots)?;
        Ok(op)
    }

    /// Every key block of the tiles of `slots` (each over its split's keys), after their fills
    /// and query packing; returns the finish runs (each tile's output divided into its result
    /// rows; none when a split's merge reads the output as it is).
    pub(super) fn column_blocks(&mut self, op: &ColumnOp, slots: &[WaveSlot]) -> Vec<Run> {
        let mut leading = self.column_start(op, slots);
        for step in 0..op.work.key_blocks().len() {
            let start = std::mem::take(&mut leading);
            self.column_key_block(op, slots, step, start);
        }
        let (Some(finish), Some(result)) = (op.work.column_finish(), op.buffers.result) else {
            return Vec::new();
        };
        let finish = self.program.kernel(finish);
        slots
            .iter()
            .map(|slot| Run {
                tile: slot.tile,
                kernel: finish,
                args: vec![
                    address(op.buffers.output, 0),
                    address(op.buffers.row_sum, 0),
                    address(result, 0),
                ],
            })
            .collect()
    }

    /// Allocates the column formulation's buffers on `tiles`.
    fn column_buffers(
        &mut self,
        attention: &StreamedAttention,
        work: &StreamedTile,
        tiles: &[u32],
        result: Option<BufferId>,
    ) -> ColumnBuffers {
        let index = attention.index;
        let (rows, d, width) = (work.rows, work.d, work.width);
        let most = work.split_range(0).1;
        let (qp, dp, block) = (pad16(rows), pad16(d), pad16(work.key_block.min(most)));
        let (e, pe) = (work.precision.bytes(), work.partials().bytes());
        let panels = work.panels_per_packer();
        let mut buffer = |what: &str, bytes: u32| self.op_buffer(index, what, tiles, bytes);
        ColumnBuffers {
            queries: buffer("q", rows * d * e),
            queries_t: buffer("q_t", d * rows * e),
            queries_packed: buffer("q_packed", dp * qp * e),
            key_block: buffer("k_block", dp * block * e),
            value_block: buffer("v_block", width * block * e),
            scores: buffer("scores_t", block * qp * pe),
            probabilities: buffer("p_t", block * qp * e),
            row_max: buffer("row_max", rows * 4),
            row_sum: buffer("row_sum", rows * 4),
            output: buffer("acc_t", width * qp * pe),
            key_panel: buffer("k_panel", 16 * d * e),
            value_panel: buffer("v_panel", 16 * width * e),
            value_panel_t: buffer("v_panel_t", width * 16 * e),
            keys_packed: buffer("k_packed", panels * 16 * dp * e),
            values_packed: buffer("v_packed", panels * width * 16 * e),
            result,
        }
    }

    /// Packs every panel of keys and values on its tile (a compute step of its own), after,
    /// in 16-key panels, one exchange phase gathering each panel's raw keys and values there.
    fn pack_column_panels(&mut self, op: &ColumnOp, slots: &[WaveSlot]) -> Result<(), LowerError> {
        let (work, home, b) = (&op.work, &op.keys_home, &op.buffers);
        let e = work.precision.bytes();
        let (d, width) = (work.d, work.width);
        let (queries, ..) = op.attention.sizes;
        // (packer tile, slot, keys, raw keys at, raw values at).
        let mut packs = Vec::new();
        let mut transfers = Transfers::default();
        // Query groups packed by one tile of their block arrive raw here first.
        let shared = work.shares_query_packing();
        if shared {
            let mut fetches = Vec::new();
            for slot in slots {
                for group in work.packed_groups(slot.split) {
                    let count = 16.min(work.rows - 16 * group);
                    let rows = (slot.head * queries + slot.first_query + 16 * group, count);
                    let at = Place::at(b.queries, group * 16 * d * e);
                    fetches.push(Fetch::rows(slot.tile, rows, d, at));
                }
            }
            match op.inputs.queries {
                QuerySource::Device(blocks) => {
                    for fetch in fetches {
                        transfers.gather(blocks, fetch);
                    }
                }
                // Written by the host to the tiles that pack them.
                QuerySource::Host(value) => {
                    let stage = (op.attention.index, "q_stage");
                    let encoding = (work.precision, 0);
                    self.host_fetches(stage, value, &fetches, encoding, &mut transfers)?;
                }
            }
        }
        if home.panels {
            for head in 0..home.heads {
                for (panel, first, keys) in home.panels_of_head() {
                    let packer = head * home.tiles_per_head + panel;
                    let rows = (head * work.keys + first, keys);
                    let fetch =
                        |width, buffer| Fetch::rows(packer, rows, width, Place::at(buffer, 0));
                    transfers.gather(op.inputs.keys, fetch(d, b.key_panel));
                    transfers.gather(op.inputs.values, fetch(width, b.value_panel));
                    packs.push((
                        packer,
                        0,
                        keys,
                        Place::at(b.key_panel, 0),
                        Place::at(b.value_panel, 0),
                    ));
                }
            }
        } else {
            let home_keys = home.rows_per_tile();
            for tile in 0..home.heads * home.home_tiles {
                for slot in 0..home_keys / 16 {
                    let (keys_at, values_at) = (
                        Place::at(op.inputs.keys.buffer, slot * 16 * d * e),
                        Place::at(op.inputs.values.buffer, slot * 16 * width * e),
                    );
                    packs.push((tile, slot, 16, keys_at, values_at));
                }
            }
        }
        if home.panels || shared {
            let copies = self.flush(transfers);
            let provenance = format!("{}.panels", self.provenance(op.attention.index));
            self.push_compute(provenance, copies);
        }
        let dp = pad16(d);
        let mut runs = Vec::new();
        if shared {
            for slot in slots {
                runs.extend(self.query_pack_runs(op, slot));
            }
        }
        for (tile, slot, keys, keys_at, values_at) in packs {
            let keys_packed = Place::at(b.keys_packed, slot * 16 * dp * e);
            let values_packed = Place::at(b.values_packed, slot * width * 16 * e);
            // A whole panel's values transpose straight into their packed order.
            let transposed = if keys < 16 {
                Place::at(b.value_panel_t, 0)
            } else {
                values_packed
            };
            let places = [
                (keys_at, keys_packed),
                (values_at, transposed),
                (transposed, values_packed),
            ];
            for (spec, (from, to)) in work.pack_panel(keys).into_iter().zip(places) {
                runs.push(Run {
                    tile,
                    kernel: self.program.kernel(spec),
                    args: vec![Arg::Address(from), Arg::Address(to)],
                });
            }
        }
        let provenance = format!("{}.pack_panels", self.provenance(op.attention.index));
        self.push_compute(provenance, runs);
        Ok(())
    }

    /// The runs every tile starts its first key block with: the state's fills and the packing
    /// of its queries as the score GEMM's weights (unless its block's tiles packed them
    /// together, with the panels).
    fn column_start(&mut self, op: &ColumnOp, slots: &[WaveSlot]) -> Vec<Run> {
        let (work, b) = (&op.work, &op.buffers);
        let mut runs = self.state_fills(&work.column_fills(), &[b.row_max, b.row_sum], slots);
        if !work.shares_query_packing() {
            for slot in slots {
                runs.extend(self.query_pack_runs(op, slot));
            }
        }
        runs
    }

    /// The runs that pack `slot`'s queries (its share of them, when its block's tiles share
    /// the packing) as the score GEMM's weights.
    fn query_pack_runs(&mut self, op: &ColumnOp, slot: &WaveSlot) -> Vec<Run> {
        let (work, b) = (&op.work, &op.buffers);
        let (d, e) = (work.d, work.precision.bytes());
        work.pack_queries_of(slot.split)
            .into_iter()
            .map(|(spec, step)| {
                let args = match step {
                    QueryPack::Zero => vec![address(b.queries_packed, 0), Arg::Value(0)],
                    QueryPack::Group(g) => vec![
                        address(b.queries, g * 16 * d * e),
                        address(b.queries_packed, g * pad16(d) * 16 * e),
                    ],
                    QueryPack::ShortTranspose(g) => {
                        vec![address(b.queries, g * 16 * d * e), address(b.queries_t, 0)]
                    }
                    QueryPack::ShortPack(g) => vec![
                        address(b.queries_t, 0),
                        address(b.queries_packed, g * pad16(d) * 16 * e),
                    ],
                };
                Run {
                    tile: slot.tile,
                    kernel: self.program.kernel(spec),
                    args,
                }
            })
            .collect()
    }

    /// Key block `step`: an exchange phase bringing each tile its split's block of packed
    /// panels (and, with the first block, the queries), then a compute step of `start`, the
    /// transposed scores, the update and the products with the values (a tile whose split has
    /// no block `step` waits).
    fn column_key_block(
        &mut self,
        op: &ColumnOp,
        slots: &[WaveSlot],
        step: usize,
        start: Vec<Run>,
    ) {
        let (attention, work, b) = (op.attention, &op.work, &op.buffers);
        let mut runs = self.flush(op.block_fetches(slots, step));
        runs.extend(start);
        let gemm = |a, weights, c| {
            vec![
                address(a, 0),
                address(weights, 0),
                address(c, 0),
                Arg::Value(0),
                Arg::Value(0),
                Arg::Value(0),
            ]
        };
        for slot in slots {
            let Some(block) = op.block(slot, step) else {
                continue;
            };
            let [scores, update, values] = [
                work.column_scores(block.width),
                work.column_update(block.width),
                work.column_values(block.width, step == 0),
            ]
            .map(|spec| self.program.kernel(spec));
            runs.push(Run {
                tile: slot.tile,
                kernel: scores,
                args: gemm(b.key_block, b.queries_packed, b.scores),
            });
            runs.push(Run {
                tile: slot.tile,
                kernel: update,
                args: update_args(
                    [b.scores, b.probabilities],
                    [b.row_max, b.row_sum, b.output],
                    attention.scale,
                    (slot, &block),
                ),
            });
            runs.push(Run {
                tile: slot.tile,
                kernel: values,
                args: gemm(b.value_block, b.probabilities, b.output),
            });
        }
        let provenance = format!("{}.key_block{step}", self.provenance(attention.index));
        self.push_compute(provenance, runs);
    }
}

/// The column formulation's per-tile buffers.
pub(super) struct ColumnBuffers {
    /// The tile's query rows, their transpose and `Q^T` packed as AMP weights.
    queries: BufferId,
    queries_t: BufferId,
    queries_packed: BufferId,
    /// The current key block (AMP-left, `[d/16][kp][16]`) and value block (`V^T`, AMP-left,
    /// `[kp/16][width][16]`).
    key_block: BufferId,
    value_block: BufferId,
    /// The block's transposed scores and probabilities (panel order, queries as columns).
    scores: BufferId,
    probabilities: BufferId,
    /// The running maxima and sums (f32) and the transposed unnormalized output (partials).
    row_max: BufferId,
    row_sum: BufferId,
    output: BufferId,
    /// A packer's raw panel (gathered in 16-key panels), its values' transpose, and its packed
    /// panels.
    key_panel: BufferId,
    value_panel: BufferId,
    value_panel_t: BufferId,
    keys_packed: BufferId,
    values_packed: BufferId,
    /// The tile's result block (row-major), when it finishes one.
    result: Option<BufferId>,
}

/// Where a column attention's queries come from.
#[derive(Clone, Copy)]
pub(super) enum QuerySource<'a> {
    /// Blocks on the device.
    Device(&'a Blocks),
    /// A host argument the host writes to the tiles that pack it (a key split's tiles
    /// sharing out the packing, [`StreamedTile::shares_query_packing`]).
    Host(ValueId),
}

/// A column attention's operands: its queries, and its keys and values on the device.
#[derive(Clone, Copy)]
pub(super) struct ColumnInputs<'a> {
    pub(super) queries: QuerySource<'a>,
    pub(super) keys: &'a Blocks,
    pub(super) values: &'a Blocks,
}

/// One column-formulation attention as its steps share it.
pub(super) struct ColumnOp<'a> {
    attention: &'a StreamedAttention,
    work: StreamedTile,
    keys_home: DistributedKeys,
    inputs: ColumnInputs<'a>,
    buffers: ColumnBuffers,
    /// Each split's key blocks (`StreamedTile::split_blocks`), computed once.
    split_blocks: Vec<Vec<(u32, u32)>>,
}

impl ColumnOp<'_> {
    /// The running maxima and sums (f32, one per query row of the tile) and the transposed
    /// unnormalized output (the partials, panel order).
    pub(super) fn state(&self) -> [BufferId; 3] {
        let b = &self.buffers;
        [b.row_max, b.row_sum, b.output]
    }

    /// Key block `step` of `slot`'s split, if it has one.
    fn block(&self, slot: &WaveSlot, step: usize) -> Option<KeyBlock> {
        let blocks = self.split_blocks.get(slot.split as usize)?;
        blocks.get(step).map(|&(first_key, width)| KeyBlock {
            step,
            first_key,
            width,
        })
    }

    /// The fetches of key block `step` to every tile of the head (of its split's keys): each
    /// of its panels from the tile that packed it (the keys one run per 16 head columns, the
    /// values one run), and with the first block (query blocks that split exactly) the tile's
    /// queries.
    fn block_fetches(&self, slots: &[WaveSlot], step: usize) -> Transfers {
        let (attention, work, b) = (self.attention, &self.work, &self.buffers);
        let (queries, d, ..) = attention.sizes;
        let e = work.precision.bytes();
        let (dp, width) = (pad16(d), work.width);
        let mut transfers = Transfers::default();
        for slot in slots {
            let Some(block) = self.block(slot, step) else {
                continue;
            };
            let kp = pad16(block.width);
            if step == 0 && work.shares_query_packing() {
                // Every packed group from the tile of the block that packed it.
                let group_bytes = dp * 16 * e;
                for group in 0..work.rows.div_ceil(16) {
                    let packer = slot.tile - slot.split + work.group_packer(group);
                    if packer != slot.tile {
                        let at = Place::at(b.queries_packed, group * group_bytes);
                        transfers.add(packer, at, slot.tile, at, group_bytes);
                    }
                }
            } else if step == 0 && !attention.is_ragged() {
                let rows = (slot.head * queries + slot.first_query, attention.query_rows);
                // Queries left on the host only reach tiles that share the packing (above).
                if let QuerySource::Device(queries) = self.inputs.queries {
                    let fetch = Fetch::rows(slot.tile, rows, d, Place::at(b.queries, 0));
                    transfers.gather(queries, fetch);
                }
            }
            let range = (block.first_key, block.width);
            self.keys_home
                .for_each_key_piece(slot.head, range, |piece| {
                    for panel in 0..piece.keys.div_ceil(16) {
                        let slot_in_owner = piece.offset_in_owner / 16 + panel;
                        let in_block = piece.offset_in_block / 16 + panel;
                        for group in 0..dp / 16 {
                            transfers.add(
                                piece.owner,
                                Place::at(
                                    b.keys_packed,
                                    (slot_in_owner * dp + group * 16) * 16 * e,
                                ),
                                slot.tile,
                                Place::at(b.key_block, (group * kp + in_block * 16) * 16 * e),
                                256 * e,
                            );
                        }
                        transfers.add(
                            piece.owner,
                            Place::at(b.values_packed, slot_in_owner * width * 16 * e),
                            slot.tile,
                            Place::at(b.value_block, in_block * width * 16 * e),
                            width * 16 * e,
                        );
                    }
                });
        }
        transfers
    }
}
