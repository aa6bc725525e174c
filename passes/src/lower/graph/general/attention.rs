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
        let blocks = (&qb, &kb, &vb);
        if let Some(heads) = heads_per_tile {
            return self.attention_in_waves(&attention, heads, plan, blocks);
        }
        match plan {
            Some(
                plan @ AttentionPlan {
                    schedule: AttentionSchedule::Materialized,
                    ..
                },
            ) => self.attention_on_plan_grid(&attention, plan, blocks),
            _ => self.attention_in_query_blocks(&attention, plan, blocks),
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
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
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
        self.attention_streamed(&shape, &grid, (qb, kb, vb))
    }

    /// The `attention_materialized` plan's (batch-head, query block, key block) grid, when the
    /// materialized lowering takes it and its blocks fit a tile.
    fn attention_on_plan_grid(
        &mut self,
        attention: &AttentionOp,
        plan: &AttentionPlan,
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
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
        self.attention_materialized(&shape, batches, (qb, kb, vb))
    }

    /// Query blocks of whole batch-heads (`attention_blocked` / `attention_flash` on
    /// `[heads, query blocks]`; unplanned, the fewest query rows per tile that fit): whole
    /// score rows per tile when they fit, else the keys streamed in blocks.
    fn attention_in_query_blocks(
        &mut self,
        attention: &AttentionOp,
        plan: Option<&AttentionPlan>,
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
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
            return self.attention_streamed(&shape, &grid, (qb, kb, vb));
        }
        // Whole score rows per tile: the materialized attention with one key block.
        let shape = attention.materialized((per_head, 1));
        self.attention_materialized(&shape, batches, (qb, kb, vb))
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
    /// block j of head h (and all of the head's values) and computes its `qr x tk` score block
    /// (`S = Q K_j^T`, scaled); one exchange phase reshards the scores to whole rows (tile
    /// (h, i, j) takes row group j of query block i, every key), which the tile runs through
    /// the (causal) row softmax and multiplies by the values. The result is a row grid of
    /// `qr / gt` rows per tile, in tile order. With one key block (`gt = 1`: whole score rows
    /// per tile, the `attention_blocked` plan) the score block is the tile's rows: no reshard.
    pub(in crate::lower::graph) fn attention_materialized(
        &mut self,
        shape: &MaterializedAttention,
        batches: u32,
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
    ) -> Result<(), LowerError> {
        let MaterializedAttention {
            index,
            out,
            sizes: (s, d, t, ev),
            grid: (gs, gt),
            precision,
            causal,
            scale,
        } = *shape;
        let (qr, tk) = (s / gs, t / gt);
        let rs = qr / gt;
        // The tile's calls, as the strategy lists and prices them.
        let work = MaterializedTile {
            rows: qr,
            d,
            key_rows: tk,
            keys: t,
            width: ev,
            rows_after: rs,
            precision,
            causal,
        };
        let e = precision.bytes();
        let tiles: Vec<u32> = (0..batches * gs * gt).collect();
        let q_rm = self.op_buffer(index, "q", &tiles, qr * d * e);
        let k_rm = self.op_buffer(index, "k", &tiles, tk * d * e);
        let k_t = self.op_buffer(index, "k_t", &tiles, d * tk * e);
        // The head's values in interleaved memory (the tile-local GEMM packs them from there).
        let v_rm = self.program.buffer(
            format!("{}.v", self.provenance(index)),
            MemoryClass::Interleaved,
            t * ev * e,
            tiles.clone(),
        );
        let scores = self.op_buffer(index, "scores", &tiles, qr * tk * e);
        // With one key block a tile's score block is already its whole rows.
        let rows = if gt == 1 {
            scores
        } else {
            self.op_buffer(index, "score_rows", &tiles, rs * t * e)
        };
        let probabilities = self.op_buffer(index, "p", &tiles, rs * t * e);
        let grid = row_grid(batches * s, ev, rs);
        let result = self.result_buffer(index, &grid, precision);
        let name = self.provenance(index);
        let (qk, pv) = self.attention_scratch(index, (work.scores(), work.values()), &tiles);
        let tile_of = |h: u32, i: u32, j: u32| (h * gs + i) * gt + j;
        let mut transfers = Transfers::default();
        for h in 0..batches {
            for i in 0..gs {
                for j in 0..gt {
                    let tile = tile_of(h, i, j);
                    let fetches = [
                        (qb, (h * s + i * qr, qr), d, q_rm),
                        (kb, (h * t + j * tk, tk), d, k_rm),
                        (vb, (h * t, t), ev, v_rm),
                    ];
                    for (source, (r0, count), cols, buffer) in fetches {
                        transfers.gather(
                            source,
                            Fetch::rows(tile, (r0, count), cols, Place::at(buffer, 0)),
                        );
                    }
                }
            }
        }
        let mut runs = self.flush(transfers);
        for &tile in &tiles {
            self.push_scores(
                &mut runs,
                tile,
                (tk, d, precision),
                (q_rm, k_rm, k_t, scores),
                &qk,
            );
            runs.push(Run {
                tile,
                kernel: self.program.kernel(work.scale()),
                args: vec![
                    address(scores, 0),
                    address(scores, 0),
                    Arg::Value(scale.to_bits()),
                ],
            });
        }
        runs.sort_by_key(|r| r.tile);
        self.program.run.push(TileStep::Compute {
            provenance: format!("{name}.scores"),
            runs,
        });
        // The score blocks as a value: query block (h, i) x key block j on tile (h, i, j).
        let score_blocks = Blocks {
            grid: GemmGrid {
                m: batches * s,
                k: t,
                n: t,
                cb: tk,
                nb: gt,
                mb: batches * gs,
                rows_padded: qr,
                kb: t,
                k_steps: 1,
            },
            buffer: scores,
            precision,
        };
        let mut transfers = Transfers::default();
        for &tile in tiles.iter().filter(|_| gt > 1) {
            let r0 = tile * rs;
            transfers.gather(
                &score_blocks,
                Fetch::rows(tile, (r0, rs), t, Place::at(rows, 0)),
            );
        }
        let mut runs = self.flush(transfers);
        for &tile in &tiles {
            // The tile's first query row within its batch-head, for the causal mask.
            let row_in_head = (tile * rs) % s;
            runs.push(Run {
                tile,
                kernel: self.program.kernel(work.softmax()),
                args: vec![
                    address(rows, 0),
                    address(probabilities, 0),
                    Arg::Value(row_in_head),
                ],
            });
            local_gemm(
                self,
                &mut runs,
                tile,
                (
                    Place::at(probabilities, 0),
                    Place::at(v_rm, 0),
                    Place::at(result, 0),
                ),
                &pv,
            );
        }
        if gt == 1 {
            info!(
                op = index,
                tiles = tiles.len(),
                query_rows = qr,
                "attention lowered with whole score rows, one tile per batch-head query block"
            );
        } else {
            info!(
                op = index,
                grid = ?[batches, gs, gt],
                query_rows = qr,
                key_block = tk,
                rows_after = rs,
                "attention lowered materialized on a query x key tile grid"
            );
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.attention", runs, out, blocks);
        Ok(())
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
        (qb, kb, vb): (&Blocks, &Blocks, &Blocks),
    ) -> Result<(), LowerError> {
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
}
