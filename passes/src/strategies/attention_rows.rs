//! Flash attention in the rows formulation (`attention_flash_rows`): the one owner of how
//! `ipu.attention` runs as the hardware-measured flash attention runs did
//! (`docs/design/ANCHOR-PLANS.md` section 3), for the planner and the lowering
//! (`lower/graph/attention_rows.rs`) alike. Planned only when a constraint pins it whole (a
//! replay's plan): on our cost model the column formulation
//! ([`crate::strategies::attention`]) is cheaper, since it feeds the AMP a tile's few query
//! columns per key block where this one feeds it the block's keys and values.
//!
//! ## Decomposition
//! `softmax(scale * Q K^T) V` per batch-head h of `[S, D]` queries, `[T, D]` keys and `[T, E]`
//! values, on a `[batch-heads, query blocks]` grid: tile `h * query_blocks + i` holds query
//! block i of head h, `rows = ceil(S / query_blocks)` rows (the last block of a head what is
//! left). The keys run in blocks of `key_block` (the last what is left), `kp` = the block
//! padded to whole 16-key groups; `dp`, `ep` = D, E padded the same way.
//!
//! ## Homes (written by the host, outside the device program)
//! * each tile's queries in AMP-left order (`rows x dp`, zero padding);
//! * key block b of head h on the head's tile `b mod query_blocks` (slot `b / query_blocks`):
//!   its keys transposed in AMP-right order (`dp x kp`: the weights of `Q K_b^T`) and its
//!   values in AMP-right order (`kp x ep`: the weights of `P V_b`), zero padding;
//!
//! ## Steps, per key block b
//! 1. an exchange phase: every head's block b multicast from its home to the head's other
//!    tiles, keys then values (the home reads its own in place);
//! 2. `S = Q K_b^T` (one AMP GEMM call: rows, K = dp, C = kp; AMP-output order);
//! 3. the block's softmax ([`KernelSpec::AttentionRows`]): the probabilities `P` relative to
//!    the block's own row maxima, in AMP-left order, with those maxima and the rows' sums;
//! 4. `PV = P V_b` (one AMP GEMM call: rows, K = kp, C = ep);
//! 5. the merge into the running f32 state ([`KernelSpec::AttentionRowsMerge`]): the first
//!    block's taken as it is, each later one rescaled in, the last divided by the sums.
//!
//! After the last block a conversion ([`KernelSpec::Cast`]) writes the tile's result rows in
//! the op's precision, row-major, where the host reads them.

use std::sync::Arc;

use ipu_device::kernels::describe::default_partials;
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{cost, KernelSpec, MemoryClass, Precision, Target};
use ipu_dialects::plan::{AttentionPlan, AttentionSchedule, OperatorPlan};

use crate::tiling::candidate::{Candidate, Need, PhaseTransfers};
use crate::tiling::layout::{Owners, Shards};
use crate::tiling::{Graph, MemoryUse, Op, PlannerOptions, ValueFormat};

/// The AMP's column group.
const GROUP: u32 = 16;

fn pad16(n: u32) -> u32 {
    n.div_ceil(GROUP) * GROUP
}

/// `(batch-heads, S, D, T, E)`: queries and head dim, keys and value width per batch-head.
pub type Sizes = (u32, u32, u32, u32, u32);

/// How an `attention_flash_rows` plan lays out one attention (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsGrid {
    /// Batch-heads.
    pub heads: u32,
    /// Queries, head dim, keys and value width per head.
    pub s: u32,
    pub d: u32,
    pub t: u32,
    pub e: u32,
    pub query_blocks: u32,
    /// Query rows of every block but a head's last.
    pub rows: u32,
    pub key_block: u32,
    pub precision: Precision,
    pub causal: bool,
}

/// What a transfer of the rows formulation moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    Keys { head: u32, block: u32 },
    Values { head: u32, block: u32 },
}

impl RowsGrid {
    /// The layout `plan` means for `heads` batch-heads of `[s, d]` queries, `[t, d]` keys and
    /// `[t, e]` values in `precision` (causal or not), on at most `tiles` tiles, or why it
    /// cannot be followed.
    pub fn planned(
        (heads, s, d, t, e): Sizes,
        (precision, causal): (Precision, bool),
        plan: &AttentionPlan,
        tiles: u32,
    ) -> Result<RowsGrid, String> {
        let AttentionSchedule::FlashRows { key_block } = plan.schedule else {
            return Err(format!(
                "{} is not an attention_flash_rows plan",
                plan.schedule.kind()
            ));
        };
        let &[grid_heads, query_blocks] = plan.grid.as_slice() else {
            return Err(format!(
                "grid {:?} is not [batch-heads, query blocks]",
                plan.grid
            ));
        };
        if [heads, s, d, t, e].contains(&0) {
            return Err(format!(
                "empty attention: {heads} batch-heads of {s} x {d} queries, {t} keys, width {e}"
            ));
        }
        if grid_heads != heads {
            return Err(format!(
                "grid [{grid_heads}, {query_blocks}] does not have the op's {heads} batch-heads"
            ));
        }
        if query_blocks == 0 || query_blocks > s {
            return Err(format!(
                "{query_blocks} query blocks do not split {s} queries into non-empty blocks"
            ));
        }
        let rows = s.div_ceil(query_blocks);
        if (query_blocks - 1) * rows >= s {
            return Err(format!(
                "{query_blocks} blocks of {rows} rows leave the last of {s} queries empty"
            ));
        }
        let used = u64::from(heads) * u64::from(query_blocks);
        if u64::from(plan.tiles) != used || plan.tiles > tiles {
            return Err(format!(
                "tiles = {} is not the grid's {used} tiles within the {tiles} the lowering may use",
                plan.tiles
            ));
        }
        if key_block == 0 || key_block > pad16(t) || !key_block.is_multiple_of(GROUP) {
            return Err(format!(
                "key_block = {key_block} is not a positive multiple of 16 up to the {t} keys (padded to 16)"
            ));
        }
        if precision != Precision::F16 && precision != Precision::F32 {
            return Err(format!(
                "{precision:?} is not lowered in the rows formulation (f16 and f32 are)"
            ));
        }
        if plan.causal != causal {
            return Err(format!(
                "the plan is {}causal, the op is {}",
                if plan.causal { "" } else { "not " },
                if causal { "causal" } else { "not" }
            ));
        }
        if plan.precision != precision {
            return Err(format!(
                "the plan computes in {:?}, the op's elements are {precision:?}",
                plan.precision
            ));
        }
        let grid = RowsGrid {
            heads,
            s,
            d,
            t,
            e,
            query_blocks,
            rows,
            key_block,
            precision,
            causal: plan.causal,
        };
        if let Some(refused) = grid.kernels().iter().find_map(|spec| spec.validate().err()) {
            return Err(format!("a kernel it calls is not supported: {refused}"));
        }
        Ok(grid)
    }

    pub fn tiles(&self) -> u32 {
        self.heads * self.query_blocks
    }

    pub fn tile(&self, head: u32, block: u32) -> u32 {
        head * self.query_blocks + block
    }

    /// First query and rows of query block `i`.
    pub fn query_block(&self, i: u32) -> (u32, u32) {
        let first = i * self.rows;
        (first, self.rows.min(self.s - first))
    }

    /// The row counts of the blocks (the GEMM entries): the full blocks', then a shorter
    /// last block's.
    pub fn row_counts(&self) -> Vec<u32> {
        let last = self.query_block(self.query_blocks - 1).1;
        if last == self.rows {
            vec![self.rows]
        } else {
            vec![self.rows, last]
        }
    }

    /// First key and keys of every key block.
    pub fn key_blocks(&self) -> Vec<(u32, u32)> {
        (0..self.key_block_count())
            .map(|b| {
                let first = b * self.key_block;
                (first, self.key_block.min(self.t - first))
            })
            .collect()
    }

    /// Home tile and slot of head `head`'s key block `block`.
    pub fn home(&self, head: u32, block: u32) -> (u32, u32) {
        (
            self.tile(head, block % self.query_blocks),
            block / self.query_blocks,
        )
    }

    /// How many key blocks there are.
    pub fn key_block_count(&self) -> u32 {
        self.t.div_ceil(self.key_block)
    }

    /// Key blocks a tile holds at most.
    pub fn home_slots(&self) -> u32 {
        self.key_block_count().div_ceil(self.query_blocks)
    }

    pub fn dp(&self) -> u32 {
        pad16(self.d)
    }

    pub fn ep(&self) -> u32 {
        pad16(self.e)
    }

    /// Bytes of one home slot of keys and of values (a whole padded key block).
    pub fn slot_bytes(&self) -> [u32; 2] {
        let kp = pad16(self.key_block);
        let eb = self.precision.bytes();
        [self.dp() * kp * eb, kp * self.ep() * eb]
    }

    pub fn partials(&self) -> Precision {
        default_partials(self.precision)
    }

    /// `S = Q K_b^T` for a block of `keys` keys.
    pub fn scores(&self, keys: u32) -> KernelSpec {
        self.gemm(self.dp(), pad16(keys))
    }

    /// `PV = P V_b` for a block of `keys` keys.
    pub fn products(&self, keys: u32) -> KernelSpec {
        self.gemm(pad16(keys), self.ep())
    }

    fn gemm(&self, k: u32, c: u32) -> KernelSpec {
        KernelSpec::Gemm {
            input: self.precision,
            partials: self.partials(),
            weights: MemoryClass::Standard,
            k,
            c,
            rows: self.row_counts(),
            accumulate: false,
        }
    }

    pub fn update(&self, rows: u32, keys: u32) -> KernelSpec {
        KernelSpec::AttentionRows {
            precision: self.precision,
            rows,
            keys,
            causal: self.causal,
        }
    }

    /// The merge of key block `block` for `rows` rows (the first takes the block's state, the
    /// last divides).
    pub fn merge(&self, rows: u32, block: usize) -> KernelSpec {
        KernelSpec::AttentionRowsMerge {
            precision: self.precision,
            rows,
            width: self.e,
            first: block == 0,
            last: block + 1 == self.key_block_count() as usize,
        }
    }

    /// The conversion of `rows` f32 result rows into the op's precision.
    pub fn finish(&self, rows: u32) -> KernelSpec {
        KernelSpec::Cast {
            from: Precision::F32,
            to: self.precision,
            elements: rows * self.e,
        }
    }

    /// Every kernel the plan calls.
    pub fn kernels(&self) -> Vec<KernelSpec> {
        let mut widths: Vec<u32> = self.key_blocks().iter().map(|&(_, keys)| keys).collect();
        widths.sort_unstable();
        widths.dedup();
        let mut out = Vec::new();
        for &keys in &widths {
            out.push(self.scores(keys));
            out.push(self.products(keys));
        }
        let blocks = self.key_block_count() as usize;
        for rows in self.row_counts() {
            out.extend(widths.iter().map(|&keys| self.update(rows, keys)));
            out.extend((0..blocks).map(|block| self.merge(rows, block)));
            out.push(self.finish(rows));
        }
        out.sort();
        out.dedup();
        out
    }

    /// Cycles of the busiest tile's calls (a full block's rows): per key block the two GEMM
    /// calls, the softmax and the merge, and the conversion.
    pub fn compute_cycles(&self, target: &Target) -> u64 {
        let rows = self.rows;
        // The full blocks' rows are the GEMMs' first entry.
        let call = |spec: &KernelSpec| {
            cost::kernel_call_cycles(spec, &[0, 0, 0, 0], target)
                .unwrap_or_else(|_| cost::kernel_cycles(spec, target))
        };
        let blocks: u64 = self
            .key_blocks()
            .iter()
            .enumerate()
            .map(|(block, &(_, keys))| {
                call(&self.scores(keys))
                    + cost::kernel_cycles(&self.update(rows, keys), target)
                    + call(&self.products(keys))
                    + cost::kernel_cycles(&self.merge(rows, block), target)
            })
            .sum();
        blocks + cost::kernel_cycles(&self.finish(rows), target)
    }

    /// Per-tile buffers beside the operand homes: the received key and value block, the
    /// scores, probabilities and products, the block's maxima and sums and the state.
    pub fn working(&self) -> MemoryUse {
        let (rows, kp) = (u64::from(self.rows), u64::from(pad16(self.key_block)));
        let (eb, pb) = (
            u64::from(self.precision.bytes()),
            u64::from(self.partials().bytes()),
        );
        let [k, v] = self.slot_bytes();
        let bytes = u64::from(k)
            + u64::from(v)
            + rows * kp * (pb + eb)
            + rows * u64::from(self.ep()) * pb
            + rows * u64::from(self.e) * 4
            + 4 * rows * 4;
        MemoryUse::of(bytes, MemoryClass::Standard)
    }

    /// The homes: queries per tile, key and value blocks on their home tiles, the result per
    /// tile. (Key blocks are counted as equal parts of the keys, the host writes the exact
    /// blocks.)
    pub fn homes(&self) -> [Shards; 4] {
        let eb = self.precision.bytes();
        let per_tile = |width: u32| Shards {
            dims: [u64::from(self.heads), u64::from(self.s), u64::from(width)],
            parts: [self.heads, self.query_blocks, 1],
            element_bytes: eb,
            owners: (0..self.tiles())
                .map(|tile| smallvec::smallvec![tile])
                .collect::<Vec<Owners>>()
                .into(),
        };
        let blocks = self.key_block_count();
        let key_homes = |width: u32| Shards {
            dims: [u64::from(self.heads), u64::from(self.t), u64::from(width)],
            parts: [self.heads, blocks, 1],
            element_bytes: eb,
            owners: (0..self.heads)
                .flat_map(|head| (0..blocks).map(move |b| (head, b)))
                .map(|(head, b)| smallvec::smallvec![self.home(head, b).0])
                .collect::<Vec<Owners>>()
                .into(),
        };
        [
            per_tile(self.d),
            key_homes(self.d),
            key_homes(self.e),
            per_tile(self.e),
        ]
    }

    /// Exchange phases: one per key block.
    pub fn phases(&self) -> u32 {
        self.key_block_count()
    }

    /// Every transfer of phase `phase` (key block `phase`): per head, its keys then its
    /// values from their home to the head's other tiles.
    pub fn for_each_move(&self, phase: u32, mut visit: impl FnMut(u32, &[u32], u32, Moved)) {
        if phase >= self.key_block_count() {
            return;
        }
        let keys = self.key_block.min(self.t - phase * self.key_block);
        if self.query_blocks < 2 {
            return;
        }
        let kp = pad16(keys);
        let eb = self.precision.bytes();
        for head in 0..self.heads {
            let (home, _) = self.home(head, phase);
            let others: Vec<u32> = (0..self.query_blocks)
                .map(|i| self.tile(head, i))
                .filter(|&tile| tile != home)
                .collect();
            visit(
                home,
                &others,
                self.dp() * kp * eb,
                Moved::Keys { head, block: phase },
            );
            visit(
                home,
                &others,
                kp * self.ep() * eb,
                Moved::Values { head, block: phase },
            );
        }
    }
}

impl PhaseTransfers for RowsGrid {
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        self.for_each_move(phase, |from, to, bytes, _| {
            visit(from, to, u64::from(bytes))
        });
    }
}

/// `(batch-heads, S, D, T, E)` and the element type of attention `op`, when the rows
/// formulation can run it: `[B, S, D]` queries, `[B, T, D]` keys and `[B, T, E]` values of one
/// element type that the host writes, a result only the host reads; else why not.
pub fn operand_sizes(graph: &Graph, op: &Op) -> Result<(Sizes, Precision), String> {
    let dims = |v: usize| crate::tiling::layout::canonical_dims(&graph.values[v].shape);
    let (q, k, v) = (
        dims(op.operands[0]),
        dims(op.operands[1]),
        dims(op.operands[2]),
    );
    if k[0] != q[0] || v[0] != q[0] || k[2] != q[2] || v[1] != k[1] {
        return Err(format!(
            "query {q:?}, key {k:?} and value {v:?} are not [B, S, D], [B, T, D], [B, T, E]"
        ));
    }
    if let Some(&operand) = op.operands.iter().find(|&&o| !graph.from_host(o)) {
        return Err(format!(
            "operand value {operand} is computed on the device; the rows formulation reads host-written operands"
        ));
    }
    if !crate::tiling::candidate::returned_only(graph, op.results[0]) {
        return Err("its result is read by another op (only the host reads it)".into());
    }
    let precision = graph.values[op.operands[0]].element;
    if op.operands[1..]
        .iter()
        .chain(&op.results)
        .any(|&value| graph.values[value].element != precision)
    {
        return Err("query, key, value and result must share one element type".into());
    }
    let fit = |n: u64| u32::try_from(n).map_err(|_| format!("a size {n} beyond 2^32"));
    let sizes = (fit(q[0])?, fit(q[1])?, fit(q[2])?, fit(k[1])?, fit(v[2])?);
    Ok((sizes, precision))
}

/// The `attention_flash_rows` plan a constraint pins whole for op `index`, if any.
pub fn pinned_plan(
    options: &PlannerOptions,
    index: usize,
) -> Option<Result<AttentionPlan, String>> {
    crate::strategies::gemm_waves::pinned(options, index, "attention_flash_rows").map(|plan| {
        match plan? {
            OperatorPlan::Attention(plan) => Ok(plan),
            other => Err(format!("not an attention_flash_rows plan: {other}")),
        }
    })
}

/// The plans offered for an attention of these sizes on the `active` tile counts: on each, the
/// most query blocks of a head whose blocks are all non-empty (one [batch-head, query block]
/// per tile), and the same rows doubled; keys in blocks of 64, 128 and 256 (those within the
/// keys, or the keys padded to 16 when fewer). None when the batch-heads outnumber the tiles.
pub fn offered(
    (heads, s, _, t, _): Sizes,
    (precision, causal): (Precision, bool),
    active: &[u32],
) -> Vec<AttentionPlan> {
    let mut key_blocks: Vec<u32> = [64, 128, 256]
        .into_iter()
        .filter(|&block| block <= t)
        .collect();
    if key_blocks.is_empty() {
        key_blocks.push(pad16(t));
    }
    let mut grids = Vec::new();
    for &tiles in active {
        let most = (tiles / heads.max(1)).min(s);
        if heads == 0 || most == 0 {
            continue;
        }
        let rows = s.div_ceil(most);
        for rows in [rows, 2 * rows] {
            let blocks = s.div_ceil(rows);
            if !grids.contains(&blocks) {
                grids.push(blocks);
            }
        }
    }
    let mut out = Vec::new();
    for &blocks in &grids {
        for &key_block in &key_blocks {
            out.push(AttentionPlan {
                schedule: AttentionSchedule::FlashRows { key_block },
                grid: vec![heads, blocks],
                tiles: heads * blocks,
                causal,
                precision,
            });
        }
    }
    out
}

/// The candidate of a pinned `attention_flash_rows` plan for `heads` batch-heads of the given
/// sizes on at most `tiles` tiles.
pub fn candidate(
    sizes: Sizes,
    (precision, causal): (Precision, bool),
    plan: &AttentionPlan,
    tiles: u32,
    target: &Target,
) -> Result<Candidate, String> {
    let grid = RowsGrid::planned(sizes, (precision, causal), plan, tiles)?;
    let [q, k, v, out] = grid.homes();
    let format = |order| ValueFormat::operand(precision, order, MemoryClass::Standard, 0);
    let source = Arc::new(grid.clone());
    let candidate = Candidate {
        compute_cycles: grid.compute_cycles(target),
        transient: grid.working(),
        kernels: grid.kernels(),
        ..Candidate::new(
            OperatorPlan::Attention(plan.clone()),
            grid.tiles(),
            vec![
                Need {
                    shards: q,
                    format: format(ElementOrder::AmpLeft),
                },
                Need {
                    shards: k,
                    format: format(ElementOrder::AmpRight),
                },
                Need {
                    shards: v,
                    format: format(ElementOrder::AmpRight),
                },
            ],
            Need {
                shards: out,
                format: format(ElementOrder::RowMajor),
            },
        )
    };
    Ok(candidate.with_generated_phases(source, 0..grid.phases(), target))
}

#[cfg(test)]
mod tests;
