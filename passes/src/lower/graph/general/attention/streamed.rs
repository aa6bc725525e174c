//! The streamed attention paths: keys streamed to the query tiles in key blocks (flash, online
//! softmax), or whole heads in waves.

use super::*;

impl Lowering<'_> {
    /// Attention with the keys streamed through in blocks (flash-style): per tile (batch-head,
    /// query block) the running row maximum, row sum and unnormalized output start empty;
    /// each key block is one exchange phase bringing that block's keys and values to every
    /// tile of the head, then `S = Q K_blk^T` (transpose, tile-local GEMM) and the
    /// online-softmax update (`AttentionBlock`); `AttentionFinish` divides by the row sums.
    /// A tile holds its queries, one key block and its output: the S x T scores never exist.
    pub(in crate::lower::graph) fn attention_streamed(
        &mut self,
        attention: &StreamedAttention,
        grid: &GemmGrid,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let work = attention.tile();
        if work.columns {
            return self.attention_columns(attention, grid, operands);
        }
        let buffers = self.streamed_buffers(attention, grid);
        let key_blocks = work.key_blocks();
        let scratches = self.key_block_scratches(attention.index, &work, &grid.tiles());
        let op = StreamedOp {
            attention,
            work,
            operands,
            buffers,
        };
        let waves = QueryWaves {
            grid,
            rows: attention.query_rows,
            queries_per_head: attention.padded_queries,
        };
        let name = self.provenance(attention.index);
        self.pack_home_keys(&op, &grid.tiles());
        if attention.is_ragged() {
            self.fetch_ragged_queries(attention, op.operands, op.buffers.queries, grid);
        }
        let mut finish_runs = Vec::new();
        for wave in 0..waves.count() {
            if wave > 0 {
                // The previous wave's finish runs before this wave's fetches.
                let finished = std::mem::take(&mut finish_runs);
                self.push_compute(format!("{name}.wave{}", wave - 1), finished);
            }
            let slots = waves.slots(wave);
            let mut fills = self.streamed_fills(&op, &slots);
            for (step, &(first_key, width)) in key_blocks.iter().enumerate() {
                let block = KeyBlock {
                    step,
                    first_key,
                    width,
                };
                let fills = std::mem::take(&mut fills);
                self.streamed_key_block(&op, &slots, block, &scratches[&width], fills);
            }
            finish_runs = self.streamed_finish(&op, &slots, wave);
        }
        attention.log(grid, waves.count(), key_blocks.len());
        self.finish_streamed(attention, grid, op.buffers.result, finish_runs);
        Ok(())
    }

    /// Ends a streamed attention: the finish runs (a compute step) leave the tiles' result
    /// blocks as the op's result, brought home whole per head when the query blocks are ragged.
    pub(super) fn finish_streamed(
        &mut self,
        attention: &StreamedAttention,
        grid: &GemmGrid,
        result: BufferId,
        runs: Vec<Run>,
    ) {
        let blocks = Blocks {
            grid: grid.clone(),
            buffer: result,
            precision: attention.precision,
        };
        self.finish(
            attention.index,
            "ipu.attention",
            runs,
            attention.out,
            blocks,
        );
        if attention.is_ragged() {
            self.bring_ragged_results_home(attention, result, grid);
        }
    }

    /// Packs every tile's home keys once (transpose, then AMP-right order), in a compute step of
    /// its own before the first key block moves them; nothing when the keys are not packed.
    /// Packed in panels, one exchange phase first gathers each panel's keys to its tile, and
    /// only those tiles pack.
    fn pack_home_keys(&mut self, op: &StreamedOp, tiles: &[u32]) {
        let (Some(packed), Some([transpose, rearrange])) =
            (op.buffers.home_packed, op.work.pack_home())
        else {
            return;
        };
        // The home tiles pack their keys (the head's query tiles, or fewer: `home_tiles`).
        let homes = op
            .attention
            .keys_home
            .map_or(tiles.len() as u32, |home| home.heads * home.home_tiles);
        let (mut keys, mut packers) = (op.operands.keys.buffer, (0..homes).collect::<Vec<u32>>());
        if let (Some(home), Some(panel)) = (op.attention.keys_home, op.buffers.key_panel) {
            let (_, head_size, total, _) = op.attention.sizes;
            let mut transfers = Transfers::default();
            packers.clear();
            let panels = home.panels_of_head();
            for head in 0..home.heads {
                for &(p, first, count) in &panels {
                    let packer = head * home.tiles_per_head + p;
                    packers.push(packer);
                    transfers.gather(
                        op.operands.keys,
                        Fetch::rows(
                            packer,
                            (head * total + first, count),
                            head_size,
                            Place::at(panel, 0),
                        ),
                    );
                }
            }
            let copies = self.flush(transfers);
            let provenance = format!("{}.key_panels", self.provenance(op.attention.index));
            self.push_compute(provenance, copies);
            keys = panel;
        }
        let transposed = op.buffers.key_block_transposed;
        let mut runs = Vec::new();
        for &tile in &packers {
            runs.push(Run {
                tile,
                kernel: self.program.kernel(transpose.clone()),
                args: vec![address(keys, 0), address(transposed, 0)],
            });
            runs.push(Run {
                tile,
                kernel: self.program.kernel(rearrange.clone()),
                args: vec![address(transposed, 0), address(packed, 0)],
            });
        }
        let provenance = format!("{}.pack_keys", self.provenance(op.attention.index));
        self.push_compute(provenance, runs);
    }

    /// Ragged query blocks ([`RaggedHeads`]): one exchange phase brings every query tile its
    /// rows (the last block of a head fewer) from the head's queries, before the key blocks.
    pub(super) fn fetch_ragged_queries(
        &mut self,
        attention: &StreamedAttention,
        operands: AttentionOperands,
        queries: BufferId,
        grid: &GemmGrid,
    ) {
        let ragged = attention.ragged(grid);
        let mut transfers = Transfers::default();
        for head in 0..ragged.heads {
            for block in 0..ragged.tiles_per_head {
                let (first, rows) = ragged.block(block);
                if rows > 0 {
                    transfers.gather(
                        operands.queries,
                        Fetch::rows(
                            ragged.tile(head, block),
                            (head * ragged.queries + first, rows),
                            ragged.d,
                            Place::at(queries, 0),
                        ),
                    );
                }
            }
        }
        let copies = self.flush(transfers);
        let provenance = format!("{}.queries", self.provenance(attention.index));
        self.push_compute(provenance, copies);
    }

    /// Ragged query blocks ([`RaggedHeads`]): one exchange phase brings every block's result
    /// rows to its head's whole result on tile `head` (a block on that tile copies), which
    /// becomes the op's result.
    pub(super) fn bring_ragged_results_home(
        &mut self,
        attention: &StreamedAttention,
        result: BufferId,
        grid: &GemmGrid,
    ) {
        let ragged = attention.ragged(grid);
        let (queries, width) = (ragged.queries, ragged.width);
        let e = attention.precision.bytes();
        let home = row_grid(ragged.heads * queries, width, queries);
        let buffer = self.op_buffer(attention.index, "home", &home.tiles(), queries * width * e);
        let mut transfers = Transfers::default();
        for head in 0..ragged.heads {
            for block in 0..ragged.tiles_per_head {
                let (first, rows) = ragged.block(block);
                if rows > 0 {
                    transfers.add(
                        ragged.tile(head, block),
                        Place::at(result, 0),
                        head,
                        Place::at(buffer, first * width * e),
                        rows * width * e,
                    );
                }
            }
        }
        let copies = self.flush(transfers);
        let provenance = format!("{}.home", self.provenance(attention.index));
        self.push_compute(provenance, copies);
        let blocks = Blocks {
            grid: home,
            buffer,
            precision: attention.precision,
        };
        self.placed.insert(attention.out, blocks);
    }

    /// Allocates the streamed attention's buffers on the tiles of `grid`.
    fn streamed_buffers(
        &mut self,
        attention: &StreamedAttention,
        grid: &GemmGrid,
    ) -> StreamedBuffers {
        let index = attention.index;
        let (_, head_size, keys, width) = attention.sizes;
        let rows = attention.query_rows;
        let block = attention.key_block.min(keys);
        let element_bytes = attention.precision.bytes();
        let tiles = grid.tiles();
        // Packed at home: the key block arrives packed (head size padded to 16), the transpose
        // buffer serves the one-time packing of the tile's home keys.
        let home_keys = attention.tile().home_keys;
        let (key_bytes, transposed_keys) = match home_keys {
            Some(home) => (attention.tile().packed_key_bytes(), home),
            None => (head_size * element_bytes, block),
        };
        // The one-time packing's transpose writes into the f32 accumulator when it fits there
        // (the accumulator is first filled after the packing).
        let aliased = attention.tile().pack_scratch_in_output();
        let queries = self.op_buffer(index, "q", &tiles, rows * head_size * element_bytes);
        let key_block = self.op_buffer(index, "k_block", &tiles, block * key_bytes);
        let transposed = (!aliased).then(|| {
            let bytes = head_size * transposed_keys * element_bytes;
            self.op_buffer(index, "k_block_t", &tiles, bytes)
        });
        let home_packed =
            home_keys.map(|home| self.op_buffer(index, "k_home", &tiles, home * key_bytes));
        let panels = attention.keys_home.is_some_and(|keys| keys.panels);
        let key_panel = panels
            .then(|| self.op_buffer(index, "k_panel", &tiles, 16 * head_size * element_bytes));
        let value_block = self.op_buffer(index, "v_block", &tiles, block * width * element_bytes);
        let scores = self.op_buffer(index, "scores", &tiles, rows * block * element_bytes);
        let row_max = self.op_buffer(index, "row_max", &tiles, rows * 4);
        let row_sum = self.op_buffer(index, "row_sum", &tiles, rows * 4);
        let output = self.op_buffer(index, "acc", &tiles, rows * width * 4);
        StreamedBuffers {
            queries,
            key_block,
            key_block_transposed: transposed.unwrap_or(output),
            home_packed,
            key_panel,
            value_block,
            scores,
            row_max,
            row_sum,
            output,
            result: self.result_buffer(index, grid, attention.precision),
        }
    }

    /// One GEMM scratch per distinct key-block width (the last block may be narrower), in the
    /// order the widths first appear.
    fn key_block_scratches(
        &mut self,
        index: usize,
        work: &StreamedTile,
        tiles: &[u32],
    ) -> BTreeMap<u32, GemmScratch> {
        let name = self.provenance(index);
        let mut scratches = BTreeMap::new();
        for (_, width) in work.key_blocks() {
            if let std::collections::btree_map::Entry::Vacant(slot) = scratches.entry(width) {
                slot.insert(self.gemm_scratch(
                    &format!("{name}.qk{width}"),
                    work.scores(width),
                    tiles,
                ));
            }
        }
        scratches
    }

    /// The runs that start the state of every tile of a wave empty: row maxima -inf, row sums
    /// and output 0.
    fn streamed_fills(&mut self, op: &StreamedOp, slots: &[WaveSlot]) -> Vec<Run> {
        let buffers = &op.buffers;
        let state = [buffers.row_max, buffers.row_sum, buffers.output];
        self.state_fills(&op.work.fills(), &state, slots)
    }

    /// The runs of `fills` (the maxima's, the sums' and, when it has one, the output's) that
    /// start every slot's `state` (those buffers) empty: maxima -inf, sums and output 0.
    pub(super) fn state_fills(
        &mut self,
        fills: &[KernelSpec],
        state: &[BufferId],
        slots: &[WaveSlot],
    ) -> Vec<Run> {
        let values = [f32::NEG_INFINITY.to_bits(), 0, 0];
        let starts: Vec<_> = fills.iter().zip(state).zip(values).collect();
        let mut runs = Vec::new();
        for slot in slots {
            for &((spec, buffer), bits) in &starts {
                runs.push(Run {
                    tile: slot.tile,
                    kernel: self.program.kernel(spec.clone()),
                    args: vec![address(*buffer, 0), Arg::Value(bits)],
                });
            }
        }
        runs
    }

    /// Emits one key block of one wave: an exchange phase bringing the block's keys and values
    /// (with the first block, the queries too) to every tile of the wave, then a compute step
    /// of `leading` (the wave's fills), the scores and the online-softmax update.
    fn streamed_key_block(
        &mut self,
        op: &StreamedOp,
        slots: &[WaveSlot],
        block: KeyBlock,
        scratch: &GemmScratch,
        mut leading: Vec<Run>,
    ) {
        let StreamedOp {
            attention,
            work,
            buffers,
            ..
        } = op;
        let (_, head_size, ..) = attention.sizes;
        let mut runs = self.flush(op.key_block_fetches(slots, &block));
        runs.append(&mut leading);
        for slot in slots {
            if buffers.home_packed.is_some() {
                // The block arrived packed: the score GEMM reads it as its weights.
                let places = (
                    Place::at(buffers.queries, 0),
                    Place::at(buffers.key_block, 0),
                    Place::at(buffers.scores, 0),
                );
                local_gemm(self, &mut runs, slot.tile, places, scratch);
            } else {
                self.push_scores(
                    &mut runs,
                    slot.tile,
                    (block.width, head_size, attention.precision),
                    (
                        buffers.queries,
                        buffers.key_block,
                        buffers.key_block_transposed,
                        buffers.scores,
                    ),
                    scratch,
                );
            }
            runs.push(Run {
                tile: slot.tile,
                kernel: self.program.kernel(work.update(block.width)),
                args: update_args(
                    [buffers.scores, buffers.value_block],
                    [buffers.row_max, buffers.row_sum, buffers.output],
                    attention.scale,
                    (slot, &block),
                ),
            });
        }
        let provenance = format!(
            "{}.key_block{}",
            self.provenance(attention.index),
            block.step
        );
        self.push_compute(provenance, runs);
    }

    /// The runs that divide every tile's output of wave `wave` by its row sums, into the
    /// wave's place in the tile's result block.
    fn streamed_finish(&mut self, op: &StreamedOp, slots: &[WaveSlot], wave: u32) -> Vec<Run> {
        let StreamedOp {
            attention,
            work,
            buffers,
            ..
        } = op;
        let (.., width) = attention.sizes;
        let offset = wave * attention.query_rows * width * attention.precision.bytes();
        let kernel = work.finish();
        slots
            .iter()
            .map(|slot| Run {
                tile: slot.tile,
                kernel: self.program.kernel(kernel.clone()),
                args: vec![
                    address(buffers.output, 0),
                    address(buffers.row_sum, 0),
                    address(buffers.result, offset),
                ],
            })
            .collect()
    }
}

impl StreamedAttention {
    /// Whether the query blocks are ragged ([`RaggedHeads`]).
    pub(super) fn is_ragged(&self) -> bool {
        self.padded_queries != self.sizes.0
    }

    /// The ragged query blocks of the op on its padded row grid `grid`.
    fn ragged(&self, grid: &GemmGrid) -> RaggedHeads {
        let (queries, d, _, width) = self.sizes;
        RaggedHeads {
            heads: grid.m / self.padded_queries.max(1),
            tiles_per_head: self.padded_queries / self.query_rows.max(1),
            queries,
            d,
            width,
            precision: self.precision,
        }
    }

    /// One tile's calls, as the strategy lists and prices them.
    pub(super) fn tile(&self) -> StreamedTile {
        let (_, head_size, keys, width) = self.sizes;
        StreamedTile {
            rows: self.query_rows,
            d: head_size,
            keys,
            width,
            key_block: self.key_block,
            precision: self.precision,
            causal: self.causal,
            home_keys: self.keys_home.and_then(|keys| keys.tile.home_keys),
            columns: self.keys_home.is_some_and(|keys| keys.tile.columns),
            splits: self.splits,
        }
    }

    /// Logs how the op was lowered on `grid`, `waves` heads per tile and `key_blocks` blocks.
    pub(super) fn log(&self, grid: &GemmGrid, waves: u32, key_blocks: usize) {
        let (_, _, keys, _) = self.sizes;
        info!(
            op = self.index,
            tiles = grid.mb,
            query_rows = self.query_rows,
            heads_per_tile = waves,
            key_block = self.key_block.min(keys),
            key_blocks,
            keys_packed = match self.keys_home {
                Some(home) if home.tile.columns && home.panels => "in panels, columns",
                Some(home) if home.tile.columns => "at home, columns",
                Some(home) if home.panels => "in panels",
                Some(home) if home.tile.home_keys.is_some() => "at home",
                _ => "per block",
            },
            "attention lowered with keys streamed in blocks (online softmax), one tile per batch-head query block"
        );
    }
}

/// The per-tile buffers of the streamed attention.
struct StreamedBuffers {
    /// The tile's query rows.
    queries: BufferId,
    /// The current key block and its transpose.
    key_block: BufferId,
    key_block_transposed: BufferId,
    /// The current value block.
    value_block: BufferId,
    /// The scores of the queries against the key block.
    scores: BufferId,
    /// The running row maxima and row sums (f32).
    row_max: BufferId,
    row_sum: BufferId,
    /// The unnormalized output (f32).
    output: BufferId,
    /// The tile's result block.
    result: BufferId,
    /// The tile's home keys packed (when the strategy packs them there).
    home_packed: Option<BufferId>,
    /// Packed in panels: the panel's raw keys, gathered to its tile before the packing.
    key_panel: Option<BufferId>,
}

/// One streamed attention as its steps share it.
struct StreamedOp<'a> {
    attention: &'a StreamedAttention,
    /// A tile's calls.
    work: StreamedTile,
    operands: AttentionOperands<'a>,
    buffers: StreamedBuffers,
}

impl StreamedOp<'_> {
    /// The fetches of one key block to every tile of a wave: its keys and values, and with the
    /// first block the tile's queries.
    fn key_block_fetches(&self, slots: &[WaveSlot], block: &KeyBlock) -> Transfers {
        let (attention, buffers) = (self.attention, &self.buffers);
        let (queries, head_size, keys, width) = attention.sizes;
        let mut transfers = Transfers::default();
        for slot in slots {
            // Ragged blocks fetched their queries in a phase of their own.
            if block.step == 0 && !attention.is_ragged() {
                let query_rows = (slot.head * queries + slot.first_query, attention.query_rows);
                transfers.gather(
                    self.operands.queries,
                    Fetch::rows(
                        slot.tile,
                        query_rows,
                        head_size,
                        Place::at(buffers.queries, 0),
                    ),
                );
            }
            let key_rows = (slot.head * keys + block.first_key, block.width);
            match (buffers.home_packed, self.attention.keys_home) {
                (Some(packed), Some(home)) => {
                    home.for_each_key_piece(slot.head, (block.first_key, block.width), |piece| {
                        let key_bytes = self.work.packed_key_bytes();
                        let bytes =
                            u32::try_from(home.packed_piece_bytes(piece.keys)).unwrap_or(u32::MAX);
                        transfers.add(
                            piece.owner,
                            Place::at(packed, piece.offset_in_owner * key_bytes),
                            slot.tile,
                            Place::at(buffers.key_block, piece.offset_in_block * key_bytes),
                            bytes,
                        )
                    })
                }
                _ => transfers.gather(
                    self.operands.keys,
                    Fetch::rows(
                        slot.tile,
                        key_rows,
                        head_size,
                        Place::at(buffers.key_block, 0),
                    ),
                ),
            }
            transfers.gather(
                self.operands.values,
                Fetch::rows(
                    slot.tile,
                    key_rows,
                    width,
                    Place::at(buffers.value_block, 0),
                ),
            );
        }
        transfers
    }
}

/// The run-time arguments both online-softmax updates share (`AttentionBlock`,
/// `AttentionColumns`): the block's scores and its second operand (the values, or where the
/// probabilities go), the running maxima, sums and output, the scale's bits, and the offsets
/// of the slot's first query and the block's first key.
pub(super) fn update_args(
    [scores, second]: [BufferId; 2],
    [row_max, row_sum, output]: [BufferId; 3],
    scale: f32,
    (slot, block): (&WaveSlot, &KeyBlock),
) -> Vec<Arg> {
    vec![
        address(scores, 0),
        address(second, 0),
        address(row_max, 0),
        address(row_sum, 0),
        address(output, 0),
        Arg::Value(scale.to_bits()),
        Arg::Value(slot.first_query),
        Arg::Value(block.first_key),
    ]
}

/// One key block of the streamed attention: the `step`-th, keys `[first_key, first_key +
/// width)` of every head.
pub(super) struct KeyBlock {
    pub(super) step: usize,
    pub(super) first_key: u32,
    pub(super) width: u32,
}

/// The streamed attention's waves: tile i of the row `grid` holds rows `[i * rows_padded,
/// (i + 1) * rows_padded)` of the batch-heads' stacked queries: one query block of `rows`
/// rows, or, with more batch-heads than tiles, several whole heads (`rows` = the queries of
/// a head), run one after the other ("waves", reusing the tile's buffers) into their places
/// in the result block.
pub(super) struct QueryWaves<'a> {
    pub(super) grid: &'a GemmGrid,
    /// Query rows of a tile in one wave.
    pub(super) rows: u32,
    pub(super) queries_per_head: u32,
}

impl QueryWaves<'_> {
    /// How many waves the tiles run.
    pub(super) fn count(&self) -> u32 {
        (self.grid.rows_padded / self.rows).max(1)
    }

    /// The tiles that have rows in wave `wave`, in tile order, and where their rows are.
    pub(super) fn slots(&self, wave: u32) -> Vec<WaveSlot> {
        let grid = self.grid;
        (0..grid.mb)
            .filter_map(|i| {
                let first_row = i * grid.rows_padded + wave * self.rows;
                (first_row < grid.m).then_some(WaveSlot {
                    tile: grid.tile(i, 0),
                    head: first_row / self.queries_per_head,
                    first_query: first_row % self.queries_per_head,
                    split: 0,
                })
            })
            .collect()
    }
}

/// One tile's rows in one wave: query rows from `first_query` of batch-head `head`, against
/// the keys of split `split` (`StreamedTile::split_range`; 0 when the keys are not split).
pub(super) struct WaveSlot {
    pub(super) tile: u32,
    pub(super) head: u32,
    pub(super) first_query: u32,
    pub(super) split: u32,
}
