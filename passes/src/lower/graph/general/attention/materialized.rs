//! The materialized attention path: each tile computes a block of scores, resharded to
//! whole rows for the softmax and the values product.

use super::*;

impl Lowering<'_> {
    /// Attention materialized on a (batch-head, query block, key block) tile grid, the
    /// planner's `attention_materialized` plan: tile (h, i, j) fetches query block i and key
    /// block j of head h (and all of the head's values) and computes its score block (query
    /// rows x key rows, `S = Q K_j^T`, scaled); one exchange phase reshards the scores to whole
    /// rows (tile (h, i, j) takes row group j of query block i, every key), which the tile runs
    /// through the (causal) row softmax and multiplies by the values. The result is a row grid
    /// of `rows_after` (query rows / key blocks) rows per tile, in tile order. With one key
    /// block (whole score rows per tile, the `attention_blocked` plan) the score block is the
    /// tile's rows: no reshard.
    pub(in crate::lower::graph) fn attention_materialized(
        &mut self,
        shape: &MaterializedAttention,
        operands: &AttentionInputs,
    ) -> Result<(), LowerError> {
        let work = shape.tile();
        let tiles = shape.tiles();
        let result_grid = shape.result_grid();
        let buffers = self.materialized_buffers(shape, &tiles, &result_grid);
        let (scores_scratch, values_scratch) =
            self.attention_scratch(shape.index, (work.scores(), work.values()), &tiles);
        let op = MaterializedOp {
            shape,
            work,
            operands,
            buffers,
        };
        self.materialized_scores(&op, &tiles, &scores_scratch)?;
        let mut runs = self.reshard_score_rows(&op, &tiles);
        for &tile in &tiles {
            self.push_softmax_values(&mut runs, &op, tile, &values_scratch);
        }
        shape.log(tiles.len());
        let blocks = Blocks {
            grid: result_grid,
            buffer: op.buffers.result,
            precision: shape.precision,
        };
        self.finish(shape.index, "ipu.attention", runs, shape.out, blocks);
        Ok(())
    }

    /// Allocates the materialized attention's buffers on `tiles`, the result's on the row
    /// grid `result_grid`.
    fn materialized_buffers(
        &mut self,
        shape: &MaterializedAttention,
        tiles: &[u32],
        result_grid: &GemmGrid,
    ) -> MaterializedBuffers {
        let MaterializedTile {
            rows,
            d: head_size,
            key_rows,
            keys,
            width,
            rows_after,
            precision,
            ..
        } = shape.tile();
        let index = shape.index;
        let element_bytes = precision.bytes();
        let queries = self.op_buffer(index, "q", tiles, rows * head_size * element_bytes);
        let key_block = self.op_buffer(index, "k", tiles, key_rows * head_size * element_bytes);
        let key_block_transposed =
            self.op_buffer(index, "k_t", tiles, head_size * key_rows * element_bytes);
        // The head's values in interleaved memory (the tile-local GEMM packs them from there).
        let values = self.program.buffer(
            format!("{}.v", self.provenance(index)),
            MemoryClass::Interleaved,
            keys * width * element_bytes,
            tiles.to_vec(),
        );
        let scores = self.op_buffer(index, "scores", tiles, rows * key_rows * element_bytes);
        // With one key block a tile's score block is already its whole rows.
        let score_rows = if shape.key_blocks() == 1 {
            scores
        } else {
            self.op_buffer(
                index,
                "score_rows",
                tiles,
                rows_after * keys * element_bytes,
            )
        };
        let probabilities = self.op_buffer(index, "p", tiles, rows_after * keys * element_bytes);
        let result = self.result_buffer(index, result_grid, precision);
        MaterializedBuffers {
            queries,
            key_block,
            key_block_transposed,
            values,
            scores,
            score_rows,
            probabilities,
            result,
        }
    }

    /// The first compute step: every tile fetches its query block, key block and the head's
    /// values, and computes its scaled score block.
    fn materialized_scores(
        &mut self,
        op: &MaterializedOp,
        tiles: &[u32],
        scores_scratch: &GemmScratch,
    ) -> Result<(), LowerError> {
        let MaterializedOp {
            shape,
            work,
            buffers,
            ..
        } = op;
        let (mut transfers, host) = op.fetches();
        let inputs = [&op.operands.queries, &op.operands.keys, &op.operands.values];
        for ((input, fetches), what) in inputs.into_iter().zip(host).zip(["q", "k", "v"]) {
            if let (AttentionInput::Host(value), false) = (input, fetches.is_empty()) {
                let what = format!("{what}_stage");
                self.host_fetches(
                    (shape.index, &what),
                    *value,
                    &fetches,
                    (shape.precision, 0),
                    &mut transfers,
                )?;
            }
        }
        let mut runs = self.flush(transfers);
        for &tile in tiles {
            self.push_scores(
                &mut runs,
                tile,
                (work.key_rows, work.d, shape.precision),
                (
                    buffers.queries,
                    buffers.key_block,
                    buffers.key_block_transposed,
                    buffers.scores,
                ),
                scores_scratch,
            );
            runs.push(Run {
                tile,
                kernel: self.program.kernel(work.scale()),
                args: vec![
                    address(buffers.scores, 0),
                    address(buffers.scores, 0),
                    Arg::Value(shape.scale.to_bits()),
                ],
            });
        }
        let provenance = format!("{}.scores", self.provenance(shape.index));
        self.push_compute(provenance, runs);
        Ok(())
    }

    /// The exchange phase that reshards the score blocks to whole rows (tile (h, i, j) takes
    /// row group j of query block i, every key); returns its local copies. With one key block
    /// nothing moves.
    fn reshard_score_rows(&mut self, op: &MaterializedOp, tiles: &[u32]) -> Vec<Run> {
        let MaterializedOp {
            shape,
            work,
            buffers,
            ..
        } = op;
        let score_blocks = shape.score_blocks(buffers.scores);
        let mut transfers = Transfers::default();
        if shape.key_blocks() > 1 {
            for &tile in tiles {
                let first_row = tile * work.rows_after;
                transfers.gather(
                    &score_blocks,
                    Fetch::rows(
                        tile,
                        (first_row, work.rows_after),
                        work.keys,
                        Place::at(buffers.score_rows, 0),
                    ),
                );
            }
        }
        self.flush(transfers)
    }

    /// Appends the runs of `tile` after the reshard: the (causal) row softmax of its score
    /// rows, then their product with the head's values into the result.
    fn push_softmax_values(
        &mut self,
        runs: &mut Vec<Run>,
        op: &MaterializedOp,
        tile: u32,
        values_scratch: &GemmScratch,
    ) {
        let MaterializedOp {
            shape,
            work,
            buffers,
            ..
        } = op;
        let (queries_per_head, ..) = shape.sizes;
        // The tile's first query row within its batch-head, for the causal mask.
        let row_in_head = (tile * work.rows_after) % queries_per_head;
        runs.push(Run {
            tile,
            kernel: self.program.kernel(work.softmax()),
            args: vec![
                address(buffers.score_rows, 0),
                address(buffers.probabilities, 0),
                Arg::Value(row_in_head),
            ],
        });
        local_gemm(
            self,
            runs,
            tile,
            (
                Place::at(buffers.probabilities, 0),
                Place::at(buffers.values, 0),
                Place::at(buffers.result, 0),
            ),
            values_scratch,
        );
    }
}

impl MaterializedAttention {
    /// Query blocks per batch-head.
    fn query_blocks(&self) -> u32 {
        self.grid.0
    }

    /// Key blocks per batch-head.
    fn key_blocks(&self) -> u32 {
        self.grid.1
    }

    /// One tile's calls, as the strategy lists and prices them.
    fn tile(&self) -> MaterializedTile {
        let (queries, head_size, keys, width) = self.sizes;
        let rows = queries / self.query_blocks();
        MaterializedTile {
            rows,
            d: head_size,
            key_rows: keys / self.key_blocks(),
            keys,
            width,
            rows_after: rows / self.key_blocks(),
            precision: self.precision,
            causal: self.causal,
        }
    }

    /// Every tile of the (batch-head, query block, key block) grid, in tile order.
    fn tiles(&self) -> Vec<u32> {
        (0..self.batches * self.query_blocks() * self.key_blocks()).collect()
    }

    /// The tile of query block `query_block` and key block `key_block` of batch-head `head`.
    fn tile_of(&self, head: u32, query_block: u32, key_block: u32) -> u32 {
        (head * self.query_blocks() + query_block) * self.key_blocks() + key_block
    }

    /// The result's row grid: `rows_after` whole rows per tile, in tile order.
    fn result_grid(&self) -> GemmGrid {
        let (queries, _, _, width) = self.sizes;
        row_grid(self.batches * queries, width, self.tile().rows_after)
    }

    /// The score blocks in `scores` as a value: query block (h, i) x key block j on tile
    /// (h, i, j).
    fn score_blocks(&self, scores: BufferId) -> Blocks {
        let (queries, _, keys, _) = self.sizes;
        let work = self.tile();
        Blocks {
            grid: GemmGrid {
                m: self.batches * queries,
                k: keys,
                n: keys,
                cb: work.key_rows,
                nb: self.key_blocks(),
                mb: self.batches * self.query_blocks(),
                rows_padded: work.rows,
                kb: keys,
                k_steps: 1,
            },
            buffer: scores,
            precision: self.precision,
        }
    }

    /// Logs how the op was lowered, on `tiles` tiles.
    fn log(&self, tiles: usize) {
        let work = self.tile();
        if self.key_blocks() == 1 {
            info!(
                op = self.index,
                tiles,
                query_rows = work.rows,
                "attention lowered with whole score rows, one tile per batch-head query block"
            );
        } else {
            info!(
                op = self.index,
                grid = ?[self.batches, self.query_blocks(), self.key_blocks()],
                query_rows = work.rows,
                key_block = work.key_rows,
                rows_after = work.rows_after,
                "attention lowered materialized on a query x key tile grid"
            );
        }
    }
}

/// The per-tile buffers of the materialized attention.
struct MaterializedBuffers {
    /// The tile's query block.
    queries: BufferId,
    /// The tile's key block and its transpose.
    key_block: BufferId,
    key_block_transposed: BufferId,
    /// All of the head's values.
    values: BufferId,
    /// The tile's score block.
    scores: BufferId,
    /// The tile's whole score rows after the reshard (with one key block, `scores` itself).
    score_rows: BufferId,
    /// The row softmax of the score rows.
    probabilities: BufferId,
    /// The tile's result rows.
    result: BufferId,
}

/// One materialized attention as its steps share it.
struct MaterializedOp<'a> {
    shape: &'a MaterializedAttention,
    /// A tile's calls.
    work: MaterializedTile,
    operands: &'a AttentionInputs,
    buffers: MaterializedBuffers,
}

impl MaterializedOp<'_> {
    /// The fetches of every tile (h, i, j): query block i and key block j of head h, and all
    /// of the head's values: gathered from the device operands' blocks, and for each operand
    /// still on the host (query, key, value) the fetches the host writes.
    fn fetches(&self) -> (Transfers, [Vec<Fetch>; 3]) {
        let (shape, work, buffers) = (self.shape, &self.work, &self.buffers);
        let (queries, head_size, keys, width) = shape.sizes;
        let mut transfers = Transfers::default();
        let mut host: [Vec<Fetch>; 3] = Default::default();
        let mut fetch = |operand: usize, fetch: Fetch| {
            let input = [
                &self.operands.queries,
                &self.operands.keys,
                &self.operands.values,
            ][operand];
            match input {
                AttentionInput::Device(blocks) => transfers.gather(blocks, fetch),
                AttentionInput::Host(_) => host[operand].push(fetch),
            }
        };
        for head in 0..shape.batches {
            for query_block in 0..shape.query_blocks() {
                for key_block in 0..shape.key_blocks() {
                    let tile = shape.tile_of(head, query_block, key_block);
                    let query_rows = (head * queries + query_block * work.rows, work.rows);
                    let key_rows = (head * keys + key_block * work.key_rows, work.key_rows);
                    let value_rows = (head * keys, keys);
                    fetch(
                        0,
                        Fetch::rows(tile, query_rows, head_size, Place::at(buffers.queries, 0)),
                    );
                    fetch(
                        1,
                        Fetch::rows(tile, key_rows, head_size, Place::at(buffers.key_block, 0)),
                    );
                    fetch(
                        2,
                        Fetch::rows(tile, value_rows, width, Place::at(buffers.values, 0)),
                    );
                }
            }
        }
        (transfers, host)
    }
}
