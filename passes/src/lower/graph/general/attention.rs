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
            qr: rows,
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
    qr: u32,
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
        a: &StreamedAttention,
        grid: &GemmGrid,
        operands: AttentionOperands,
    ) -> Result<(), LowerError> {
        let AttentionOperands {
            queries: qb,
            keys: kb,
            values: vb,
        } = operands;
        let index = a.index;
        let (s, d, t, ev) = a.sizes;
        let (qr, tb, precision) = (a.qr, a.key_block.min(t), a.precision);
        let op_tiles = grid.tiles();
        let e = precision.bytes();
        let q_rm = self.op_buffer(index, "q", &op_tiles, qr * d * e);
        let k_blk = self.op_buffer(index, "k_block", &op_tiles, tb * d * e);
        let k_t = self.op_buffer(index, "k_block_t", &op_tiles, d * tb * e);
        let v_blk = self.op_buffer(index, "v_block", &op_tiles, tb * ev * e);
        let scores = self.op_buffer(index, "scores", &op_tiles, qr * tb * e);
        let row_max = self.op_buffer(index, "row_max", &op_tiles, qr * 4);
        let row_sum = self.op_buffer(index, "row_sum", &op_tiles, qr * 4);
        let acc = self.op_buffer(index, "acc", &op_tiles, qr * ev * 4);
        let result = self.result_buffer(index, grid, precision);
        let name = self.provenance(index);
        // One GEMM scratch per distinct key-block width (the last block may be narrower).
        let work = StreamedTile {
            rows: qr,
            d,
            keys: t,
            width: ev,
            key_block: a.key_block,
            precision,
            causal: a.causal,
        };
        let mut scratches: BTreeMap<u32, GemmScratch> = BTreeMap::new();
        let blocks = work.key_blocks();
        for &(_, width) in &blocks {
            if let std::collections::btree_map::Entry::Vacant(slot) = scratches.entry(width) {
                slot.insert(self.gemm_scratch(
                    &format!("{name}.qk{width}"),
                    work.scores(width),
                    &op_tiles,
                ));
            }
        }
        // The state starts empty: m = -inf, l = 0, o = 0.
        let fill =
            |lowering: &mut Self, tile: u32, spec: &KernelSpec, buffer: BufferId, bits| Run {
                tile,
                kernel: lowering.program.kernel(spec.clone()),
                args: vec![address(buffer, 0), Arg::Value(bits)],
            };
        let [fill_max, fill_sum, fill_acc] = work.fills();
        // Tile i holds rows [i * rows_padded, (i + 1) * rows_padded) of the batch-heads'
        // stacked queries: one query block of `qr` rows, or, with more batch-heads than tiles,
        // several whole heads (qr = S), run one after the other ("waves", reusing the
        // tile's buffers) into their places in the result block.
        let waves = (grid.rows_padded / qr).max(1);
        let rows_total = grid.m;
        let chunk = |i: u32, wave: u32| {
            let r0 = i * grid.rows_padded + wave * qr;
            (r0 < rows_total).then_some((grid.tile(i, 0), r0 / s, r0 % s))
        };
        let mut runs = Vec::new();
        for wave in 0..waves {
            if wave > 0 {
                // The previous wave's finish runs before this wave's fetches.
                runs.sort_by_key(|r: &Run| r.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{name}.wave{}", wave - 1),
                    runs: std::mem::take(&mut runs),
                });
            }
            let mut init = Vec::new();
            for i in 0..grid.mb {
                let Some((tile, _, _)) = chunk(i, wave) else {
                    continue;
                };
                init.push(fill(
                    self,
                    tile,
                    &fill_max,
                    row_max,
                    f32::NEG_INFINITY.to_bits(),
                ));
                init.push(fill(self, tile, &fill_sum, row_sum, 0));
                init.push(fill(self, tile, &fill_acc, acc, 0));
            }
            for (step, &(k0, width)) in blocks.iter().enumerate() {
                let mut transfers = Transfers::default();
                for i in 0..grid.mb {
                    let Some((tile, head, q0)) = chunk(i, wave) else {
                        continue;
                    };
                    if step == 0 {
                        let r0 = head * s + q0;
                        transfers.gather(qb, Fetch::rows(tile, (r0, qr), d, Place::at(q_rm, 0)));
                    }
                    let keys = (head * t + k0, width);
                    transfers.gather(kb, Fetch::rows(tile, keys, d, Place::at(k_blk, 0)));
                    transfers.gather(vb, Fetch::rows(tile, keys, ev, Place::at(v_blk, 0)));
                }
                let mut step_runs = self.flush(transfers);
                if step == 0 {
                    step_runs.append(&mut init);
                }
                let scratch = &scratches[&width];
                for i in 0..grid.mb {
                    let Some((tile, _, q0)) = chunk(i, wave) else {
                        continue;
                    };
                    self.push_scores(
                        &mut step_runs,
                        tile,
                        (width, d, precision),
                        (q_rm, k_blk, k_t, scores),
                        scratch,
                    );
                    step_runs.push(Run {
                        tile,
                        kernel: self.program.kernel(work.update(width)),
                        args: vec![
                            address(scores, 0),
                            address(v_blk, 0),
                            address(row_max, 0),
                            address(row_sum, 0),
                            address(acc, 0),
                            Arg::Value(a.scale.to_bits()),
                            Arg::Value(q0),
                            Arg::Value(k0),
                        ],
                    });
                }
                step_runs.sort_by_key(|r| r.tile);
                self.program.run.push(TileStep::Compute {
                    provenance: format!("{name}.key_block{step}"),
                    runs: step_runs,
                });
            }
            for i in 0..grid.mb {
                let Some((tile, _, _)) = chunk(i, wave) else {
                    continue;
                };
                runs.push(Run {
                    tile,
                    kernel: self.program.kernel(work.finish()),
                    args: vec![
                        address(acc, 0),
                        address(row_sum, 0),
                        address(result, wave * qr * ev * precision.bytes()),
                    ],
                });
            }
        }
        info!(
            op = index,
            tiles = grid.mb,
            query_rows = qr,
            heads_per_tile = waves,
            key_block = tb,
            key_blocks = blocks.len(),
            "attention lowered with keys streamed in blocks (online softmax), one tile per batch-head query block"
        );
        let blocks = Blocks {
            grid: grid.clone(),
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.attention", runs, a.out, blocks);
        Ok(())
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
