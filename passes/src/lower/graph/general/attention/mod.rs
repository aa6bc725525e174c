//! Attention on the general path: whole score rows per tile, keys streamed in blocks with the
//! online softmax, or materialized on a query x key grid; the plan decides which.

use super::*;

mod columns;
mod materialized;
mod split;
mod streamed;

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
        // A planned streamed attention with one batch-head per grid row reads its operands
        // split over each head's tiles: host operands are streamed in those blocks.
        let (query_rows, key_rows) = flash_split(plan, batches, (s, t));
        // A materialized or blocked plan's host operands are written by the host where its
        // tiles read them, as the planner homes host values (`host_fetches`); every other
        // operand is brought onto the device first.
        let materialized = heads_per_tile.is_none()
            && matches!(
                plan,
                Some(OperatorPlan::Attention(AttentionPlan {
                    schedule: AttentionSchedule::Materialized | AttentionSchedule::Blocked,
                    ..
                }))
            );
        // A key split whose tiles share out the query packing has the host write each query
        // group to the tile that packs it (as the planner homes it).
        let split_queries = heads_per_tile.is_none() && split_shares_query_packing(plan, s);
        let deferred = |this: &Self, v: ValueId| {
            (materialized || (split_queries && v == q))
                && !this.placed.contains_key(&v)
                && !matches!(this.graph.values[v].origin, crate::tiling::Origin::Op(_))
        };
        let input = |this: &mut Self, v: ValueId, rows: Option<u32>| {
            if deferred(this, v) {
                Ok(AttentionInput::Host(v))
            } else {
                this.on_device_in(v, rows).map(AttentionInput::Device)
            }
        };
        let qb = input(self, q, heads_per_tile.map(|h| h * s).or(query_rows))?;
        let kb = input(self, kv, heads_per_tile.map(|h| h * t).or(key_rows))?;
        let vb = input(self, vv, heads_per_tile.map(|h| h * t).or(key_rows))?;
        // Device keys and values a distributing plan reads homed over each head's tiles are
        // moved there first when their producer left them elsewhere (the conversion the
        // planner priced before the op).
        let (kb, vb) = match (heads_per_tile, key_rows, kb, vb) {
            (None, Some(rows), AttentionInput::Device(kb), AttentionInput::Device(vb)) => {
                let [kb, vb] = self.homed_rows(index, [("keys", kb), ("values", vb)], rows);
                (AttentionInput::Device(kb), AttentionInput::Device(vb))
            }
            (_, _, kb, vb) => (kb, vb),
        };
        let precision_of = |input: &AttentionInput| match input {
            AttentionInput::Device(blocks) => blocks.precision,
            AttentionInput::Host(v) => self.graph.values[*v].element,
        };
        let precision = precision_of(&qb);
        if precision_of(&kb) != precision
            || precision_of(&vb) != precision
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
        let operands = AttentionInputs {
            queries: qb,
            keys: kb,
            values: vb,
        };
        if let Some(heads) = heads_per_tile {
            return self.attention_in_waves(&attention, heads, plan, operands.device(index)?);
        }
        match plan {
            Some(
                plan @ AttentionPlan {
                    schedule: AttentionSchedule::Materialized,
                    ..
                },
            ) => self.attention_on_plan_grid(&attention, plan, &operands),
            _ => self.attention_in_query_blocks(&attention, plan, &operands),
        }
    }

    /// Each of `operands` (named, with its blocks) as a row grid of `rows` rows per tile:
    /// itself when it is one, else gathered into buffer `<op>.<name>`. The gathers share one
    /// exchange phase and the local copies one compute step (`<op>.homed`), as the planner
    /// prices the conversion before the op: keys and values gathered in two phases cost a
    /// second phase and a second wait on every sender.
    fn homed_rows<const N: usize>(
        &mut self,
        index: usize,
        operands: [(&str, Blocks); N],
        rows: u32,
    ) -> [Blocks; N] {
        let mut transfers = Transfers::default();
        let homed = operands.map(|(what, blocks)| {
            let g = &blocks.grid;
            if g.nb == 1 && g.rows_padded == rows && g.mb == g.m.div_ceil(rows) {
                blocks
            } else {
                self.rows_into(index, what, &blocks, rows, &mut transfers)
            }
        });
        let mut copies = self.flush(transfers);
        if !copies.is_empty() {
            copies.sort_by_key(|run| run.tile);
            self.program.run.push(TileStep::Compute {
                provenance: format!("{}.homed", self.provenance(index)),
                runs: copies,
            });
        }
        homed
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
        operands: &AttentionInputs,
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
        inputs: &AttentionInputs,
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
        if let Some(plan) = plan.filter(|plan| plan.grid.len() == 3) {
            return self.attention_split_keys(attention, plan, inputs);
        }
        // The planned query blocks (`attention_blocked` / `attention_flash`, grid [heads, gs]:
        // one batch-head per grid row, the queries split exactly); unplanned, the fewest query
        // rows per tile that fit the tiles.
        // Streamed plans may split the queries in ragged blocks (the last one shorter).
        let streamed =
            |plan: &AttentionPlan| matches!(plan.schedule, AttentionSchedule::Flash { .. });
        let qr = match plan {
            Some(plan) => match plan.grid.as_slice() {
                &[gb, gs]
                    if gb == batches
                        && query_blocks_allowed(s, gs, streamed(plan))
                        && u64::from(batches) * u64::from(gs) <= u64::from(tiles) =>
                {
                    s.div_ceil(gs)
                }
                _ => {
                    return Err(attention_not_followed(
                        index,
                        plan,
                        format!(
                            "its grid must be [{batches}, query blocks] within {tiles} tiles, the blocks a divisor of {s} (or, streamed, ragged blocks with none empty)"
                        ),
                    ))
                }
            },
            None => smallest_divisor(s, |dv| {
                u64::from(batches) * u64::from(s / dv) <= u64::from(tiles)
            })
            .ok_or_else(|| fail(format!("{batches} batch-heads do not fit on {tiles} tiles")))?,
        };
        let per_head = s.div_ceil(qr);
        // One row block per (batch-head, query block) of the heads' queries padded to whole
        // blocks (the same rows when they split exactly).
        let grid = row_grid(batches * per_head * qr, ev, qr);
        // A tile's whole score rows, keys and values when they fit the budget; else the keys
        // stream through in blocks with the online softmax. A plan says which, and its key
        // block.
        let fitting = streamed_key_block((qr, d, t, ev), precision);
        let key_block = match plan {
            None => fitting,
            // A planned block may be as large as the column formulation's.
            Some(plan) => match planned_key_block(index, plan, widest(fitting, (qr, d, t, ev), precision))? {
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
            let operands = inputs.device(index)?;
            let mut shape = attention.streamed(qr, key_block);
            shape.padded_queries = per_head * qr;
            shape.keys_home =
                distributed_keys(&shape, batches, per_head, (operands.keys, operands.values));
            if let (Some(plan), None) = (plan, &shape.keys_home) {
                if let Some(keys) = DistributedKeys::of(batches, per_head, shape.tile()) {
                    return Err(attention_not_followed(index, plan,
                        format!("its keys and values must be homed over {} tiles per head ({} keys per tile)", keys.home_tiles, keys.rows_per_tile()),
                    ));
                }
            }
            return self.attention_streamed(&shape, &grid, operands);
        }
        // Whole score rows per tile: the materialized attention with one key block.
        let shape = attention.materialized((per_head, 1));
        self.attention_materialized(&shape, inputs)
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
            keys_home: None,
            padded_queries: self.sizes.0,
            splits: 1,
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

/// The host rows per tile of the queries and of the keys and values of an `attention_flash`
/// plan on `[batches, gs]`: queries split exactly in `s / gs` rows, or in ragged blocks homed
/// whole per head (`s` rows, [`RaggedHeads`]); keys and values `t / home` rows over the
/// head's home tiles ([`DistributedKeys`], [`home_tiles`]). `None` where the plan says nothing
/// of it.
fn flash_split(
    plan: Option<&OperatorPlan>,
    batches: u32,
    (s, t): (u32, u32),
) -> (Option<u32>, Option<u32>) {
    let Some(OperatorPlan::Attention(plan)) = plan else {
        return (None, None);
    };
    match (&plan.schedule, plan.grid.as_slice()) {
        (AttentionSchedule::Flash { .. }, &[rows, gs]) if rows == batches && gs > 0 => {
            let queries = if s.is_multiple_of(gs) { s / gs } else { s };
            (Some(queries), home_tiles(t, gs).map(|home| t / home))
        }
        // Keys split over `gk` tiles per query block: homed over all the head's tiles.
        (AttentionSchedule::Flash { .. }, &[rows, gs, gk])
            if rows == batches && gs > 0 && s.is_multiple_of(gs) =>
        {
            (Some(s / gs), home_tiles(t, gs * gk).map(|home| t / home))
        }
        _ => (None, None),
    }
}

/// Whether `plan` splits the keys of `s` queries' blocks over tiles that share out the
/// packing of the queries ([`query_packing_shared`]).
fn split_shares_query_packing(plan: Option<&OperatorPlan>, s: u32) -> bool {
    match plan {
        Some(OperatorPlan::Attention(AttentionPlan {
            schedule: AttentionSchedule::Flash { .. },
            grid,
            ..
        })) => match grid.as_slice() {
            &[_, gs, gk] => gs > 0 && s.is_multiple_of(gs) && query_packing_shared(s / gs, gk),
            _ => false,
        },
        _ => false,
    }
}

/// The keys' and values' home over each head's `per_head` tiles when both operands are laid
/// out that way (row blocks of `keys / per_head` rows, tile `i` holding block `i`), with the
/// keys packed there when the strategy packs them.
fn distributed_keys(
    shape: &StreamedAttention,
    heads: u32,
    per_head: u32,
    (keys_in, values_in): (&Blocks, &Blocks),
) -> Option<DistributedKeys> {
    let keys = DistributedKeys::of(heads, per_head, shape.tile())?;
    let homed = |blocks: &Blocks| {
        let grid = &blocks.grid;
        grid.nb == 1
            && grid.rows_padded == keys.rows_per_tile()
            && grid.mb == heads * keys.home_tiles
    };
    (homed(keys_in) && homed(values_in)).then(|| keys.packed())
}

/// The largest key block a streamed plan may pin: the lowering's own (`fitting`) or the column
/// formulation's, when streamed at all.
fn widest(fitting: Option<u32>, sizes: (u32, u32, u32, u32), precision: Precision) -> Option<u32> {
    fitting.map(|own| own.max(columns_key_block(sizes, precision).unwrap_or(0)))
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
        // (Lowered by `attention_rows`, never here.)
        AttentionSchedule::FlashRows { .. } => Err(attention_not_followed(
            index,
            plan,
            "the rows formulation is not a streamed plan of this lowering".into(),
        )),
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
    /// The keys and values homed over each head's tiles, and whether the keys are packed there
    /// (`strategies::attention::DistributedKeys`); `None`: fetched from wherever they are.
    keys_home: Option<DistributedKeys>,
    /// A head's queries padded to whole query blocks: `S` when the blocks split it exactly;
    /// more in ragged blocks, whose results are then brought home whole per head
    /// ([`RaggedHeads`]).
    padded_queries: u32,
    /// Key splits per query block (`strategies::attention::KeySplit`); 1: every tile streams
    /// every key.
    splits: u32,
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

    /// Pushes a compute step of `runs` in tile order (stable: a tile's runs keep their order).
    pub(in crate::lower::graph) fn push_compute(&mut self, provenance: String, mut runs: Vec<Run>) {
        runs.sort_by_key(|run| run.tile);
        self.program
            .run
            .push(TileStep::Compute { provenance, runs });
    }

    /// Pushes one exchange phase of `moves`; nothing when there are none.
    pub(in crate::lower::graph) fn push_exchange(
        &mut self,
        moves: Vec<crate::lower::program::Move>,
    ) {
        if !moves.is_empty() {
            let phase = self.program.exchange_phases() as u32;
            self.program.run.push(TileStep::Exchange { phase, moves });
        }
    }
}

/// The query, key and value operands of an attention op, on the device.
#[derive(Clone, Copy)]
pub(in crate::lower::graph) struct AttentionOperands<'a> {
    queries: &'a Blocks,
    keys: &'a Blocks,
    values: &'a Blocks,
}

/// An attention operand: on the device, or still on the host (a materialized plan's, written
/// where its tiles read it).
pub(in crate::lower::graph) enum AttentionInput {
    Device(Blocks),
    Host(ValueId),
}

/// The query, key and value operands of an attention op.
pub(in crate::lower::graph) struct AttentionInputs {
    queries: AttentionInput,
    keys: AttentionInput,
    values: AttentionInput,
}

impl AttentionInputs {
    /// The keys and values on the device (the queries may stay on the host for a key split's
    /// tiles, [`QuerySource`](columns::QuerySource)).
    fn keys_and_values(&self, index: usize) -> Result<(&Blocks, &Blocks), LowerError> {
        Ok((
            on_device(&self.keys, index)?,
            on_device(&self.values, index)?,
        ))
    }

    /// The operands on the device (every path but the materialized one reads them there;
    /// only a materialized plan leaves them on the host).
    fn device<'a>(&'a self, index: usize) -> Result<AttentionOperands<'a>, LowerError> {
        let device = |input: &'a AttentionInput| on_device(input, index);
        Ok(AttentionOperands {
            queries: device(&self.queries)?,
            keys: device(&self.keys)?,
            values: device(&self.values)?,
        })
    }
}

/// `input` on the device, or the error for an operand left on the host.
fn on_device(input: &AttentionInput, index: usize) -> Result<&Blocks, LowerError> {
    match input {
        AttentionInput::Device(blocks) => Ok(blocks),
        AttentionInput::Host(value) => Err(LowerError::Input(format!(
            "op {index}: attention operand {value} was left on the host, but this lowering reads it on the device"
        ))),
    }
}
