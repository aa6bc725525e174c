//! Attention on the general path: whole score rows per tile, keys streamed in blocks with the
//! online softmax, or materialized on a query x key grid; the plan decides which.

use super::*;

impl Lowering<'_> {
    /// `ipu.attention` as its plan says (see the module docs): whole heads per tile in waves
    /// when there are more batch-heads than tiles, materialized on a query x key grid, or in
    /// query blocks with whole score rows or streamed keys. A plan it cannot follow is an
    /// error; unplanned, the lowering chooses.
    pub(in crate::lower::graph) fn attention(
        &mut self,
        index: usize,
        causal: bool,
        scale: Option<f64>,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (q, kv, vv, out) = (
            op.operands[0],
            op.operands[1],
            op.operands[2],
            op.results[0],
        );
        let fail = |detail: String| unsupported("ipu.attention", format!("op {index}: {detail}"));
        let shape = |v: ValueId| self.graph.values[v].shape.clone();
        let (sq, sk, sv) = (shape(q), shape(kv), shape(vv));
        if sq.len() < 2 || sq.len() != sk.len() || sq.len() != sv.len() {
            return Err(fail(format!(
                "shapes {sq:?}, {sk:?}, {sv:?} need one rank >= 2"
            )));
        }
        let r = sq.len();
        let lead = &sq[..r - 2];
        if sk[..r - 2] != *lead
            || sv[..r - 2] != *lead
            || sk[r - 1] != sq[r - 1]
            || sv[r - 2] != sk[r - 2]
        {
            return Err(fail(format!(
                "query {sq:?}, key {sk:?} and value {sv:?} are not [..., S, D], [..., T, D], [..., T, E] with equal batch axes"
            )));
        }
        let batches = to_u32(lead.iter().product())?;
        let (s, d, t, ev) = (
            to_u32(sq[r - 2])?,
            to_u32(sq[r - 1])?,
            to_u32(sk[r - 2])?,
            to_u32(sv[r - 1])?,
        );
        // With more batch-heads than tiles, whole heads per tile (see below): host operands
        // are streamed in those blocks, so the tiles read them where they are.
        let heads_per_tile = attention_heads_per_tile(batches, self.tiles);
        let qb = self.on_device_in(q, heads_per_tile.map(|h| h * s))?;
        let kb = self.on_device_in(kv, heads_per_tile.map(|h| h * t))?;
        let vb = self.on_device_in(vv, heads_per_tile.map(|h| h * t))?;
        let precision = qb.precision;
        if kb.precision != precision
            || vb.precision != precision
            || self.graph.values[out].element != precision
        {
            return Err(fail(
                "query, key, value and result must share one element type".into(),
            ));
        }
        if default_partials(precision) != precision {
            return Err(fail(format!(
                "{precision:?} attention is not lowered (f16 and f32 are)"
            )));
        }
        let plan = match plan {
            None => None,
            Some(OperatorPlan::Attention(plan)) => Some(plan),
            Some(other) => return Err(fail(format!("plan {other} is not an attention plan"))),
        };
        let attention = AttentionOp {
            index,
            out,
            batches,
            sizes: (s, d, t, ev),
            precision,
            causal,
            scale: scale.unwrap_or(1.0 / f64::from(d).sqrt()) as f32,
        };
        let operands = AttentionOperands {
            queries: &qb,
            keys: &kb,
            values: &vb,
        };
        if let Some(heads) = heads_per_tile {
            return self.attention_in_waves(&attention, heads, plan, operands);
        }
        match plan {
            Some(
                plan @ AttentionPlan {
                    schedule: AttentionSchedule::Materialized,
                    ..
                },
            ) => self.attention_on_plan_grid(&attention, plan, operands),
            _ => self.attention_in_query_blocks(&attention, plan, operands),
        }
    }

    /// More batch-heads than tiles: whole heads, several per tile, one after the other (the
    /// streamed lowering's waves); a plan must be `attention_flash` on `[ceil(heads / per
    /// tile), 1]`.
    fn attention_in_waves(
        &mut self,
        attention: &AttentionOp,
        heads: u32,
        plan: Option<&AttentionPlan>,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let AttentionOp {
            index,
            batches,
            sizes: (s, d, t, ev),
            precision,
            ..
        } = *attention;
        // More batch-heads than tiles: whole heads, several per tile, one after the other
        // (the streamed lowering's waves).
        let mut key_block = wave_key_block((s, d, t, ev), precision);
        if let Some(plan) = plan {
            let rows = batches.div_ceil(heads);
            if !matches!(plan.schedule, AttentionSchedule::Flash { .. }) || plan.grid != [rows, 1] {
                return Err(attention_not_followed(index, plan,
                    format!("{batches} batch-heads on {} tiles run {heads} whole heads per tile in waves (attention_flash on grid [{rows}, 1])", self.tiles),
                ));
            }
            if let Some(planned) = planned_key_block(index, plan, Some(key_block))? {
                key_block = planned;
            }
        }
        let grid = row_grid(batches * s, ev, heads * s);
        let shape = attention.streamed(s, key_block);
        self.attention_streamed(&shape, &grid, operands)
    }

    /// The `attention_materialized` plan's (batch-head, query block, key block) grid, when the
    /// materialized lowering takes it and its blocks fit a tile.
    fn attention_on_plan_grid(
        &mut self,
        attention: &AttentionOp,
        plan: &AttentionPlan,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let AttentionOp {
            index,
            batches,
            sizes: (s, d, t, ev),
            precision,
            causal,
            ..
        } = *attention;
        let g = &plan.grid;
        let target = &self.options.target;
        let fits = g.len() == 3 && {
            let (qr, tk) = (s / g[1], t / g[2]);
            materialized_fits((batches, s, t), (g[0], g[1], g[2]), self.tiles)
                && MaterializedTile {
                    rows: qr,
                    d,
                    key_rows: tk,
                    keys: t,
                    width: ev,
                    rows_after: qr / g[2],
                    precision,
                    causal,
                }
                .fits(target)
        };
        if !fits {
            return Err(attention_not_followed(index, plan,
                "it needs one batch-head per grid row, queries split exactly over the query x key grid, keys over the key blocks, and its blocks within a tile's budget".into(),
            ));
        }
        let shape = attention.materialized((g[1], g[2]));
        self.attention_materialized(&shape, operands)
    }

    /// Query blocks of whole batch-heads (`attention_blocked` / `attention_flash` on
    /// `[heads, query blocks]`; unplanned, the fewest query rows per tile that fit): whole
    /// score rows per tile when they fit, else the keys streamed in blocks.
    fn attention_in_query_blocks(
        &mut self,
        attention: &AttentionOp,
        plan: Option<&AttentionPlan>,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let AttentionOp {
            index,
            batches,
            sizes: (s, d, t, ev),
            precision,
            ..
        } = *attention;
        let fail = |detail: String| unsupported("ipu.attention", format!("op {index}: {detail}"));
        let tiles = self.tiles;
        // The planned query blocks (`attention_blocked` / `attention_flash`, grid [heads, gs]:
        // one batch-head per grid row, the queries split exactly); unplanned, the fewest query
        // rows per tile that fit the tiles.
        let qr = match plan {
            Some(plan) => match plan.grid.as_slice() {
                &[gb, gs]
                    if gb == batches
                        && s.is_multiple_of(gs)
                        && u64::from(batches) * u64::from(gs) <= u64::from(tiles) =>
                {
                    s / gs
                }
                _ => {
                    return Err(attention_not_followed(
                        index,
                        plan,
                        format!(
                            "its grid must be [{batches}, a divisor of {s}] within {tiles} tiles"
                        ),
                    ))
                }
            },
            None => smallest_divisor(s, |dv| {
                u64::from(batches) * u64::from(s / dv) <= u64::from(tiles)
            })
            .ok_or_else(|| fail(format!("{batches} batch-heads do not fit on {tiles} tiles")))?,
        };
        let per_head = s / qr;
        let grid = row_grid(batches * s, ev, qr);
        // A tile's whole score rows, keys and values when they fit the budget; else the keys
        // stream through in blocks with the online softmax. A plan says which, and its key
        // block.
        let fitting = streamed_key_block((qr, d, t, ev), precision);
        let key_block = match plan {
            None => fitting,
            Some(plan) => match planned_key_block(index, plan, fitting)? {
                Some(block) => Some(block),
                None if fitting.is_some() => {
                    return Err(attention_not_followed(index, plan,
                        format!("whole score rows of {qr} queries over {t} keys do not fit a tile (stream the keys: attention_flash)"),
                    ))
                }
                None => None,
            },
        };
        if let Some(key_block) = key_block {
            let shape = attention.streamed(qr, key_block);
            return self.attention_streamed(&shape, &grid, operands);
        }
        // Whole score rows per tile: the materialized attention with one key block.
        let shape = attention.materialized((per_head, 1));
        self.attention_materialized(&shape, operands)
    }
}

/// One attention op's sizes and settings, as the lowering paths share them.
struct AttentionOp {
    index: usize,
    out: ValueId,
    batches: u32,
    /// (queries S, head size D, keys T, value width E).
    sizes: (u32, u32, u32, u32),
    precision: Precision,
    causal: bool,
    scale: f32,
}

impl AttentionOp {
    /// The streamed lowering's view: `rows` query rows per tile, keys in blocks of `key_block`.
    fn streamed(&self, rows: u32, key_block: u32) -> StreamedAttention {
        StreamedAttention {
            index: self.index,
            out: self.out,
            sizes: self.sizes,
            query_rows: rows,
            key_block,
            precision: self.precision,
            causal: self.causal,
            scale: self.scale,
        }
    }

    /// The materialized lowering's view: `grid` = (query blocks, key blocks) per batch-head.
    fn materialized(&self, grid: (u32, u32)) -> MaterializedAttention {
        MaterializedAttention {
            index: self.index,
            out: self.out,
            batches: self.batches,
            sizes: self.sizes,
            grid,
            precision: self.precision,
            causal: self.causal,
            scale: self.scale,
        }
    }
}

/// The error for an attention plan the lowering cannot follow, and why.
fn attention_not_followed(index: usize, plan: &AttentionPlan, why: String) -> LowerError {
    let plan = OperatorPlan::Attention(plan.clone());
    super::not_followed("ipu.attention", index, Some(&plan), why)
}

/// A plan's key block, when it streams the keys: it must fit where the lowering's own (the
/// largest that fits, `fitting`) does.
fn planned_key_block(
    index: usize,
    plan: &AttentionPlan,
    fitting: Option<u32>,
) -> Result<Option<u32>, LowerError> {
    match plan.schedule {
        AttentionSchedule::Flash { key_block } => match fitting {
            Some(largest) if key_block > largest => Err(attention_not_followed(
                index,
                plan,
                format!("key blocks of {key_block} do not fit a tile (at most {largest})"),
            )),
            _ => Ok(Some(key_block)),
        },
        AttentionSchedule::Blocked | AttentionSchedule::Materialized => Ok(None),
    }
}

/// What [`Lowering::attention_materialized`] needs of one attention op.
pub(in crate::lower::graph) struct MaterializedAttention {
    index: usize,
    out: ValueId,
    batches: u32,
    /// (queries S, head size D, keys T, value width E).
    sizes: (u32, u32, u32, u32),
    /// Query blocks and key blocks per batch-head.
    grid: (u32, u32),
    precision: Precision,
    causal: bool,
    scale: f32,
}

/// What [`Lowering::attention_streamed`] needs of one attention op.
pub(in crate::lower::graph) struct StreamedAttention {
    index: usize,
    out: ValueId,
    /// (queries S, head size D, keys T, value width E).
    sizes: (u32, u32, u32, u32),
    /// Query rows per tile.
    query_rows: u32,
    key_block: u32,
    precision: Precision,
    causal: bool,
    scale: f32,
}

impl Lowering<'_> {
    /// The run on `tile` that writes the transpose of the `rows x cols` block at `from`
    /// (row-major) to `to`.
    pub(in crate::lower::graph) fn transpose_run(
        &mut self,
        tile: u32,
        precision: Precision,
        (rows, cols): (u32, u32),
        (from, to): (Place, Place),
    ) -> Run {
        Run {
            tile,
            kernel: self.program.kernel(KernelSpec::Transpose {
                precision,
                rows,
                cols,
            }),
            args: vec![Arg::Address(from), Arg::Address(to)],
        }
    }

    /// The scratch of an attention op's two tile-local GEMMs, `Q K^T` and `P V`, on `tiles`.
    pub(super) fn attention_scratch(
        &mut self,
        index: usize,
        (qk, pv): (LocalGemm, LocalGemm),
        tiles: &[u32],
    ) -> (GemmScratch, GemmScratch) {
        let name = self.provenance(index);
        (
            self.gemm_scratch(&format!("{name}.qk"), qk, tiles),
            self.gemm_scratch(&format!("{name}.pv"), pv, tiles),
        )
    }

    /// Appends to `runs` the scores of one tile: the `keys x d` key rows at `k` transposed
    /// into `k_t`, then `scores = q k_t` (tile-local GEMM).
    pub(super) fn push_scores(
        &mut self,
        runs: &mut Vec<Run>,
        tile: u32,
        (keys, d, precision): (u32, u32, Precision),
        (q, k, k_t, scores): (BufferId, BufferId, BufferId, BufferId),
        scratch: &GemmScratch,
    ) {
        let transpose = self.transpose_run(
            tile,
            precision,
            (keys, d),
            (Place::at(k, 0), Place::at(k_t, 0)),
        );
        runs.push(transpose);
        local_gemm(
            self,
            runs,
            tile,
            (Place::at(q, 0), Place::at(k_t, 0), Place::at(scores, 0)),
            scratch,
        );
    }

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
        operands: AttentionOperands,
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
        self.materialized_scores(&op, &tiles, &scores_scratch);
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
    ) {
        let MaterializedOp {
            shape,
            work,
            buffers,
            ..
        } = op;
        let transfers = op.fetches();
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
            queries_per_head: attention.sizes.0,
        };
        let name = self.provenance(attention.index);
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
        let blocks = Blocks {
            grid: grid.clone(),
            buffer: op.buffers.result,
            precision: attention.precision,
        };
        self.finish(
            attention.index,
            "ipu.attention",
            finish_runs,
            attention.out,
            blocks,
        );
        Ok(())
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
        StreamedBuffers {
            queries: self.op_buffer(index, "q", &tiles, rows * head_size * element_bytes),
            key_block: self.op_buffer(index, "k_block", &tiles, block * head_size * element_bytes),
            key_block_transposed: self.op_buffer(
                index,
                "k_block_t",
                &tiles,
                head_size * block * element_bytes,
            ),
            value_block: self.op_buffer(index, "v_block", &tiles, block * width * element_bytes),
            scores: self.op_buffer(index, "scores", &tiles, rows * block * element_bytes),
            row_max: self.op_buffer(index, "row_max", &tiles, rows * 4),
            row_sum: self.op_buffer(index, "row_sum", &tiles, rows * 4),
            output: self.op_buffer(index, "acc", &tiles, rows * width * 4),
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
        let [fill_max, fill_sum, fill_output] = op.work.fills();
        let starts = [
            (fill_max, buffers.row_max, f32::NEG_INFINITY.to_bits()),
            (fill_sum, buffers.row_sum, 0),
            (fill_output, buffers.output, 0),
        ];
        let mut runs = Vec::new();
        for slot in slots {
            for (spec, buffer, bits) in &starts {
                runs.push(Run {
                    tile: slot.tile,
                    kernel: self.program.kernel(spec.clone()),
                    args: vec![address(*buffer, 0), Arg::Value(*bits)],
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
            runs.push(Run {
                tile: slot.tile,
                kernel: self.program.kernel(work.update(block.width)),
                args: vec![
                    address(buffers.scores, 0),
                    address(buffers.value_block, 0),
                    address(buffers.row_max, 0),
                    address(buffers.row_sum, 0),
                    address(buffers.output, 0),
                    Arg::Value(attention.scale.to_bits()),
                    Arg::Value(slot.first_query),
                    Arg::Value(block.first_key),
                ],
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

    /// Pushes a compute step of `runs` in tile order (stable: a tile's runs keep their order).
    fn push_compute(&mut self, provenance: String, mut runs: Vec<Run>) {
        runs.sort_by_key(|run| run.tile);
        self.program
            .run
            .push(TileStep::Compute { provenance, runs });
    }
}

/// The query, key and value operands of an attention op, on the device.
#[derive(Clone, Copy)]
pub(in crate::lower::graph) struct AttentionOperands<'a> {
    queries: &'a Blocks,
    keys: &'a Blocks,
    values: &'a Blocks,
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
    operands: AttentionOperands<'a>,
    buffers: MaterializedBuffers,
}

impl MaterializedOp<'_> {
    /// The fetches of every tile (h, i, j): query block i and key block j of head h, and all
    /// of the head's values.
    fn fetches(&self) -> Transfers {
        let (shape, work, buffers) = (self.shape, &self.work, &self.buffers);
        let (queries, head_size, keys, width) = shape.sizes;
        let mut transfers = Transfers::default();
        for head in 0..shape.batches {
            for query_block in 0..shape.query_blocks() {
                for key_block in 0..shape.key_blocks() {
                    let tile = shape.tile_of(head, query_block, key_block);
                    let query_rows = (head * queries + query_block * work.rows, work.rows);
                    let key_rows = (head * keys + key_block * work.key_rows, work.key_rows);
                    let value_rows = (head * keys, keys);
                    transfers.gather(
                        self.operands.queries,
                        Fetch::rows(tile, query_rows, head_size, Place::at(buffers.queries, 0)),
                    );
                    transfers.gather(
                        self.operands.keys,
                        Fetch::rows(tile, key_rows, head_size, Place::at(buffers.key_block, 0)),
                    );
                    transfers.gather(
                        self.operands.values,
                        Fetch::rows(tile, value_rows, width, Place::at(buffers.values, 0)),
                    );
                }
            }
        }
        transfers
    }
}

impl StreamedAttention {
    /// One tile's calls, as the strategy lists and prices them.
    fn tile(&self) -> StreamedTile {
        let (_, head_size, keys, width) = self.sizes;
        StreamedTile {
            rows: self.query_rows,
            d: head_size,
            keys,
            width,
            key_block: self.key_block,
            precision: self.precision,
            causal: self.causal,
        }
    }

    /// Logs how the op was lowered on `grid`, `waves` heads per tile and `key_blocks` blocks.
    fn log(&self, grid: &GemmGrid, waves: u32, key_blocks: usize) {
        let (_, _, keys, _) = self.sizes;
        info!(
            op = self.index,
            tiles = grid.mb,
            query_rows = self.query_rows,
            heads_per_tile = waves,
            key_block = self.key_block.min(keys),
            key_blocks,
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
            if block.step == 0 {
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
            transfers.gather(
                self.operands.keys,
                Fetch::rows(
                    slot.tile,
                    key_rows,
                    head_size,
                    Place::at(buffers.key_block, 0),
                ),
            );
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

/// One key block of the streamed attention: the `step`-th, keys `[first_key, first_key +
/// width)` of every head.
struct KeyBlock {
    step: usize,
    first_key: u32,
    width: u32,
}

/// The streamed attention's waves: tile i of the row `grid` holds rows `[i * rows_padded,
/// (i + 1) * rows_padded)` of the batch-heads' stacked queries: one query block of `rows`
/// rows, or, with more batch-heads than tiles, several whole heads (`rows` = the queries of
/// a head), run one after the other ("waves", reusing the tile's buffers) into their places
/// in the result block.
struct QueryWaves<'a> {
    grid: &'a GemmGrid,
    /// Query rows of a tile in one wave.
    rows: u32,
    queries_per_head: u32,
}

impl QueryWaves<'_> {
    /// How many waves the tiles run.
    fn count(&self) -> u32 {
        (self.grid.rows_padded / self.rows).max(1)
    }

    /// The tiles that have rows in wave `wave`, in tile order, and where their rows are.
    fn slots(&self, wave: u32) -> Vec<WaveSlot> {
        let grid = self.grid;
        (0..grid.mb)
            .filter_map(|i| {
                let first_row = i * grid.rows_padded + wave * self.rows;
                (first_row < grid.m).then_some(WaveSlot {
                    tile: grid.tile(i, 0),
                    head: first_row / self.queries_per_head,
                    first_query: first_row % self.queries_per_head,
                })
            })
            .collect()
    }
}

/// One tile's rows in one wave: query rows from `first_query` of batch-head `head`.
struct WaveSlot {
    tile: u32,
    head: u32,
    first_query: u32,
}
