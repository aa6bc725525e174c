//! The output-stationary GEMM in waves (`gemm_waves`): the one owner of how a plain product of
//! two host operands runs as the hardware-measured GEMM and MLP runs did
//! (`docs/design/ANCHOR-PLANS.md` sections 1 and 2), for the planner and the lowering
//! (`lower/graph/waves.rs`) alike.
//!
//! ## Decomposition
//! C[M x N] = A[M x K] B[K x N] in `gm x gn` result blocks: rows balanced into `gm` blocks of
//! whole rows (the larger first), columns into `gn` blocks of `cb = N / gn` (a multiple of
//! 16). A wave is `R = tiles / gn` whole row groups: block (r, c) runs on tile
//! `(r mod R) * gn + c` in wave `r / R`, so a plan may have more blocks than tiles. K runs in
//! `S` panels of `kb` (the last one what is left, padded to whole 16-element groups).
//!
//! ## Homes
//! The host writes every operand element once, straight into its AMP order, where one tile
//! holds it for the whole run (outside the device program, as host writes are):
//! * A's panel (r, s) (rows x kb, AMP-left) on tile `(r mod R) * gn + (s mod gn)`: a tile of
//!   the row group that reads it;
//! * B's panel (s, c) (kb x cb, AMP-right) on tile `(s mod R) * gn + c`: a tile of the column
//!   that reads it.
//!
//! ## Steps
//! Per wave and K panel s: one exchange phase multicasts every A panel (r, s) of the wave from
//! its home to the other tiles of its row group and every B panel (s, c) from its home to the
//! wave's other tiles of column c; a home reads its own panel in place. Then one compute step:
//! one GEMM call per tile (the first panel initializes the F16 / F32 accumulator, the others
//! add to it). After the wave's last panel one exchange phase moves every accumulator to the
//! tile `shift` places on (modulo the wave's tiles), and one compute step copies it into the
//! result's home there, slot `wave`, where the host reads it (AMP-output order).
//!
//! ## Chains (the measured MLP)
//! A product whose result is read only by a GeLU whose result is read only as the left
//! operand of another product in waves with the same grid, tiles and rows, whose K panels are
//! this one's column blocks ([`chainable`]), keeps its result where it ran: one wave, no
//! evacuation ([`WavesResult::Kept`]). The GeLU runs in place on the accumulators, and the next
//! product's A panel (r, s) is then the block (r, s) on the tile of its home (AMP output and
//! AMP-left are the same 16-column panel order). A result a GeLU reads last is evacuated and
//! converted to row-major on its home ("transition back", [`WavesResult::Evacuated`] with
//! `row_major`), where the GeLU runs and the host reads it.

use std::sync::Arc;

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{cost, KernelSpec, MemoryClass, Precision, Target};
use ipu_dialects::plan::{GemmWavesPlan, OperatorPlan};

use crate::element;
use crate::tiling::candidate::{Candidate, Need, PhaseTransfers};
use crate::tiling::layout::{Owners, Shards};
use crate::tiling::{Graph, MemoryUse, OpKind, Origin, PlannerOptions, ValueFormat};

/// What a waves product leaves its result as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WavesResult {
    /// Evacuated after each wave to its home, in AMP-output order (the host reads it there)
    /// or converted to row-major on the home (a GeLU reads it there).
    Evacuated { row_major: bool },
    /// Left in the accumulators of its one wave for the next product of a chain.
    Kept,
}

/// How a `gemm_waves` plan lays out one `m x k x n` product (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WavesGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub gm: u32,
    pub gn: u32,
    pub cb: u32,
    /// Row groups of a wave (`tiles / gn`).
    pub groups: u32,
    pub waves: u32,
    /// K panel length (a multiple of 16) and the panel count.
    pub kb: u32,
    pub panels: u32,
    pub shift: u32,
    pub input: Precision,
    pub weights: MemoryClass,
    pub left: MemoryClass,
    pub result: WavesResult,
    /// Every tile holds its row block's whole left operand (written by the host): no A
    /// exchange.
    pub replicated: bool,
    /// Columns of one GEMM call (divides `cb`).
    pub call_columns: u32,
    /// First row and rows of every row block.
    row_blocks: Vec<(u32, u32)>,
}

impl WavesGrid {
    /// The layout `plan` means for an `m x k x n` product in `input` elements, or why the plan
    /// cannot be followed.
    pub fn planned(
        (m, k, n): (u32, u32, u32),
        plan: &GemmWavesPlan,
        tiles: u32,
    ) -> Result<WavesGrid, String> {
        let [gm, gn] = plan.grid;
        if m == 0 || k == 0 || n == 0 {
            return Err(format!("empty product {m} x {k} x {n}"));
        }
        if gm == 0 || gn == 0 || gm > m || !n.is_multiple_of(gn) || !(n / gn).is_multiple_of(16) {
            return Err(format!(
                "grid [{gm}, {gn}] does not split {m} rows into non-empty blocks and N = {n} into equal blocks of whole 16-column groups"
            ));
        }
        if plan.tiles > tiles {
            return Err(format!(
                "a wave takes {} tiles, the lowering may use {tiles}",
                plan.tiles
            ));
        }
        if plan.tiles == 0 || !plan.tiles.is_multiple_of(gn) {
            return Err(format!(
                "tiles = {} is not a positive multiple of the {gn} column blocks",
                plan.tiles
            ));
        }
        let cb = n / gn;
        let call_columns = plan.c_block.unwrap_or(cb);
        if !call_columns.is_multiple_of(16) || !cb.is_multiple_of(call_columns) {
            return Err(format!(
                "c_block = {call_columns} does not split the column blocks of {cb} into whole 16-column groups"
            ));
        }
        let kb = plan.k_block;
        if kb == 0 || !kb.is_multiple_of(16) || kb * call_columns > GEMM_MAX_WEIGHT_ELEMENTS {
            return Err(format!(
                "k_block = {kb} is not a positive multiple of 16 whose {kb} x {call_columns} weight panel fits the GEMM kernel's {GEMM_MAX_WEIGHT_ELEMENTS} elements"
            ));
        }
        let input = plan.precision;
        if input.is_fp8() {
            return Err(
                "FP8 waves are not built (the host would need the operands' scales)".into(),
            );
        }
        let groups = plan.tiles / gn;
        let k16 = k.div_ceil(16) * 16;
        let row_blocks = balanced_rows(m, gm);
        Ok(WavesGrid {
            m,
            k,
            n,
            gm,
            gn,
            cb,
            groups,
            waves: gm.div_ceil(groups),
            kb,
            panels: k16.div_ceil(kb),
            shift: plan.output_shift,
            input,
            weights: element::memory_class(plan.weights),
            left: element::memory_class(plan.left),
            result: WavesResult::Evacuated { row_major: false },
            replicated: plan.left_replicated,
            call_columns,
            row_blocks,
        })
    }

    /// The layout with its result left as `result`; a kept result needs one wave.
    pub fn with_result(self, result: WavesResult) -> Result<WavesGrid, String> {
        if result == WavesResult::Kept && self.waves != 1 {
            return Err(format!(
                "its result is kept for the next product of the chain, which needs one wave, not {}",
                self.waves
            ));
        }
        Ok(WavesGrid { result, ..self })
    }

    /// Exchange phases per wave: its panels and, for an evacuated result, the evacuation.
    fn wave_phases(&self) -> u32 {
        self.panels + u32::from(self.result != WavesResult::Kept)
    }

    /// Tiles of one wave.
    pub fn tiles(&self) -> u32 {
        self.groups * self.gn
    }

    /// First row and rows of row block `r`.
    pub fn row_block(&self, r: u32) -> (u32, u32) {
        self.row_blocks[r as usize]
    }

    /// The most rows of a block.
    pub fn max_rows(&self) -> u32 {
        self.row_blocks.iter().map(|b| b.1).max().unwrap_or(0)
    }

    /// The distinct row counts of the blocks, the GEMM kernel's entries (largest first).
    pub fn row_counts(&self) -> Vec<u32> {
        let mut counts: Vec<u32> = self.row_blocks.iter().map(|b| b.1).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts.dedup();
        counts
    }

    /// The row blocks of wave `w`.
    pub fn wave_rows(&self, w: u32) -> std::ops::Range<u32> {
        w * self.groups..((w + 1) * self.groups).min(self.gm)
    }

    /// The tile of result block (r, c).
    pub fn tile(&self, r: u32, c: u32) -> u32 {
        (r % self.groups) * self.gn + c
    }

    /// K rows of panel `s` (padded to whole 16-element groups).
    pub fn panel_rows(&self, s: u32) -> u32 {
        let k16 = self.k.div_ceil(16) * 16;
        self.kb.min(k16 - s * self.kb)
    }

    /// Home tile and slot of A's panel (r, s) (replicated: the slot on every tile of the row
    /// group, the tile its first).
    pub fn a_home(&self, r: u32, s: u32) -> (u32, u32) {
        if self.replicated {
            return (self.tile(r, 0), (r / self.groups) * self.panels + s);
        }
        (
            self.tile(r, s % self.gn),
            (r / self.groups) * self.panels.div_ceil(self.gn) + s / self.gn,
        )
    }

    /// The tiles holding A's panel (r, s) from the host: its home, or (replicated) every
    /// tile of the row group.
    pub fn a_holders(&self, r: u32, s: u32) -> Vec<u32> {
        if self.replicated {
            (0..self.gn).map(|c| self.tile(r, c)).collect()
        } else {
            vec![self.a_home(r, s).0]
        }
    }

    /// GEMM calls per tile and panel (column chunks of `call_columns`).
    pub fn calls_per_panel(&self) -> u32 {
        self.cb / self.call_columns
    }

    /// Home tile and slot of B's panel (s, c).
    pub fn b_home(&self, s: u32, c: u32) -> (u32, u32) {
        ((s % self.groups) * self.gn + c, s / self.groups)
    }

    /// Home tile and slot of result block (r, c): `shift` tiles on from where it runs, in the
    /// slot of its wave.
    pub fn out_home(&self, r: u32, c: u32) -> (u32, u32) {
        (
            (self.tile(r, c) + self.shift) % self.tiles(),
            r / self.groups,
        )
    }

    /// Slots of each home per tile: A, B and the result.
    pub fn home_slots(&self) -> [u32; 3] {
        [
            if self.replicated {
                self.waves * self.panels
            } else {
                self.waves * self.panels.div_ceil(self.gn)
            },
            self.panels.div_ceil(self.groups),
            self.waves,
        ]
    }

    /// Bytes of one slot of each home (and of the panel buffers): A, B and the result.
    pub fn slot_bytes(&self) -> [u32; 3] {
        let eb = self.input.bytes();
        [
            self.max_rows() * self.kb * eb,
            self.kb * self.cb * eb,
            self.max_rows() * self.cb * self.partials().bytes(),
        ]
    }

    pub fn partials(&self) -> Precision {
        default_partials(self.input)
    }

    /// The GEMM call of panel `s` (the first initializes the accumulator).
    pub fn call(&self, s: u32) -> KernelSpec {
        KernelSpec::Gemm {
            input: self.input,
            partials: self.partials(),
            weights: self.weights,
            k: self.panel_rows(s),
            c: self.call_columns,
            rows: self.row_counts(),
            accumulate: s > 0,
        }
    }

    /// The copy of an accumulator into the result's home.
    pub fn copy(&self) -> KernelSpec {
        KernelSpec::Copy {
            bytes: self.slot_bytes()[2],
        }
    }

    /// The conversion of an evacuated block of `rows` rows from AMP-output order to row-major
    /// on its home (the "transition back" before a GeLU).
    pub fn transition(&self, rows: u32) -> KernelSpec {
        KernelSpec::Rearrange {
            order: ElementOrder::AmpOutput,
            to_amp: false,
            precision: self.partials(),
            offset: 0,
            rows,
            rows_padded: rows,
            cols: self.cb,
            cols_padded: self.cb,
        }
    }

    /// The kernels that finish a wave on the result's homes: the copy and, for a row-major
    /// result, the transition of each row count.
    fn finish_kernels(&self) -> Vec<KernelSpec> {
        match self.result {
            WavesResult::Kept => Vec::new(),
            WavesResult::Evacuated { row_major } => {
                let mut kernels = vec![self.copy()];
                if row_major {
                    kernels.extend(
                        self.row_counts()
                            .into_iter()
                            .map(|rows| self.transition(rows)),
                    );
                }
                kernels
            }
        }
    }

    /// Every kernel the program calls.
    pub fn kernels(&self) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = (0..self.panels).map(|s| self.call(s)).collect();
        kernels.dedup();
        kernels.extend(self.finish_kernels());
        kernels
    }

    /// Modelled cycles of the compute steps: per wave and panel the slowest tile's call (the
    /// wave's most rows), and per wave the copy.
    pub fn compute_cycles(&self, target: &Target) -> u64 {
        let counts = self.row_counts();
        (0..self.waves)
            .map(|w| {
                let rows = self
                    .wave_rows(w)
                    .map(|r| self.row_block(r).1)
                    .max()
                    .unwrap_or(0);
                let entry = counts.iter().position(|&c| c == rows).unwrap_or(0) as u32;
                let calls: u64 = (0..self.panels)
                    .map(|s| {
                        u64::from(self.calls_per_panel())
                            * cost::kernel_call_cycles(&self.call(s), &[0, 0, 0, entry], target)
                                .unwrap_or(u64::MAX / 4)
                    })
                    .sum();
                // The copy and the transition of the wave's largest block.
                let finish = match self.result {
                    WavesResult::Kept => 0,
                    WavesResult::Evacuated { row_major } => {
                        cost::kernel_cycles(&self.copy(), target)
                            + if row_major {
                                cost::kernel_cycles(&self.transition(rows), target)
                            } else {
                                0
                            }
                    }
                };
                calls + finish
            })
            .sum()
    }

    /// Exchange phases: per wave, one per panel and the evacuation (none when kept).
    pub fn phases(&self) -> u32 {
        self.waves * self.wave_phases()
    }

    /// Phase number of wave `w`'s panel `s` (`s == panels`: the evacuation).
    pub fn phase(&self, w: u32, s: u32) -> u32 {
        w * self.wave_phases() + s
    }

    /// The wave and panel of phase `phase` (`panel == panels`: the evacuation).
    pub fn phase_of(&self, phase: u32) -> (u32, u32) {
        (phase / self.wave_phases(), phase % self.wave_phases())
    }

    /// Every transfer of phase `phase`: `(source tile, destinations, bytes, what)` where what
    /// names the moved block: `A(r, s)`, `B(s, c)` or the accumulator of (r, c).
    pub fn for_each_move(&self, phase: u32, mut visit: impl FnMut(u32, &[u32], u32, Moved)) {
        let (w, s) = self.phase_of(phase);
        let eb = self.input.bytes();
        let rows = self.wave_rows(w);
        if s == self.panels {
            let pb = self.partials().bytes();
            for r in rows {
                for c in 0..self.gn {
                    // (A shift of a whole wave leaves the block where it is: its home
                    // copies it from the accumulator.)
                    let (from, to) = (self.tile(r, c), self.out_home(r, c).0);
                    if from != to {
                        let bytes = self.row_block(r).1 * self.cb * pb;
                        visit(from, &[to], bytes, Moved::Result { r, c });
                    }
                }
            }
            return;
        }
        let kp = self.panel_rows(s);
        let mut destinations = Vec::with_capacity(self.gn.max(self.groups) as usize);
        for r in rows.clone().filter(|_| !self.replicated) {
            let (home, _) = self.a_home(r, s);
            destinations.clear();
            destinations.extend((0..self.gn).map(|c| self.tile(r, c)).filter(|&t| t != home));
            visit(
                home,
                &destinations,
                self.row_block(r).1 * kp * eb,
                Moved::A { r, s },
            );
        }
        for c in 0..self.gn {
            let (home, _) = self.b_home(s, c);
            destinations.clear();
            destinations.extend(rows.clone().map(|r| self.tile(r, c)).filter(|&t| t != home));
            if !destinations.is_empty() {
                visit(home, &destinations, kp * self.cb * eb, Moved::B { s, c });
            }
        }
    }

    /// Where each operand's panels and the result live: A's and B's homes (one block per
    /// panel) and the result's (one block per result block).
    pub fn homes(&self) -> [Shards; 3] {
        let eb = self.input.bytes();
        let shards = block_shards;
        [
            shards([self.m, self.k], [self.gm, self.panels], eb, &|r, s| {
                let mut holders: Owners = self.a_holders(r, s).into_iter().collect();
                holders.sort_unstable();
                holders
            }),
            shards([self.k, self.n], [self.panels, self.gn], eb, &|s, c| {
                smallvec::smallvec![self.b_home(s, c).0]
            }),
            shards(
                [self.m, self.n],
                [self.gm, self.gn],
                self.partials().bytes(),
                &|r, c| {
                    smallvec::smallvec![match self.result {
                        WavesResult::Kept => self.tile(r, c),
                        WavesResult::Evacuated { .. } => self.out_home(r, c).0,
                    }]
                },
            ),
        ]
    }

    /// The result's format where it is left.
    pub fn result_format(&self) -> ValueFormat {
        let order = match self.result {
            WavesResult::Evacuated { row_major: true } => ElementOrder::RowMajor,
            _ => ElementOrder::AmpOutput,
        };
        ValueFormat::operand(self.partials(), order, MemoryClass::Standard, 0)
    }

    /// Per-tile working bytes beside the homes: the A panel, the B panel, the accumulator and
    /// the evacuation's landing buffer, by memory class.
    pub fn working(&self) -> MemoryUse {
        let [a, b, out] = self.slot_bytes();
        // The accumulator, and for an evacuated result its landing buffer and (row-major)
        // the AMP-order copy on the home.
        // (A kept result is its accumulator.)
        let out_buffers = match self.result {
            WavesResult::Kept => 0,
            WavesResult::Evacuated { row_major } => {
                2 + u64::from(row_major) * u64::from(self.waves)
            }
        };
        // (A replicated left operand has no panel buffer: its homes are read in place.)
        let a_panel = if self.replicated { 0 } else { u64::from(a) };
        MemoryUse::of(a_panel, self.left)
            .plus(MemoryUse::of(u64::from(b), self.weights))
            .plus(MemoryUse::of(
                out_buffers * u64::from(out),
                MemoryClass::Standard,
            ))
    }
}

/// What a transfer of a waves program moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Moved {
    A { r: u32, s: u32 },
    B { s: u32, c: u32 },
    Result { r: u32, c: u32 },
}

impl PhaseTransfers for WavesGrid {
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        self.for_each_move(phase, |from, to, bytes, _| {
            visit(from, to, u64::from(bytes))
        });
    }
}

/// Whether `consumer` can take `producer`'s kept result as its A homes: one wave of the same
/// tiles, rows and column blocks, K panels that are the producer's column blocks.
pub fn chainable(producer: &WavesGrid, consumer: &WavesGrid) -> Result<(), String> {
    let same = producer.waves == 1
        && consumer.waves == 1
        && producer.m == consumer.m
        && producer.gm == consumer.gm
        && producer.gn == consumer.gn
        && producer.groups == consumer.groups
        && producer.n == consumer.k
        && producer.cb == consumer.kb
        && producer.partials() == consumer.input;
    if same {
        Ok(())
    } else {
        Err(format!(
            "the left operand is a product in waves kept on its tiles ({} x {} blocks of {} columns, {} wave(s)), which this plan ({} x {} blocks, K panels of {}, {} wave(s)) does not read in place",
            producer.gm, producer.gn, producer.cb, producer.waves, consumer.gm, consumer.gn, consumer.kb, consumer.waves
        ))
    }
}

/// The one reader of value `v`, if exactly one op reads it (once) and the host does not.
fn only_reader(graph: &Graph, v: usize) -> Option<usize> {
    if graph.outputs.contains(&v) {
        return None;
    }
    let mut readers = graph
        .ops
        .iter()
        .enumerate()
        .filter(|(_, op)| op.operands.contains(&v));
    let (index, op) = readers.next()?;
    (readers.next().is_none() && op.operands.iter().filter(|&&o| o == v).count() == 1)
        .then_some(index)
}

/// Where matmul `index`'s left operand comes from in a chain: the matmul whose result it is,
/// directly or through a GeLU that nothing else reads. `None` for any other operand.
pub fn chained_producer(graph: &Graph, index: usize) -> Option<usize> {
    let a = graph.ops[index].operands[0];
    let Origin::Op(producer) = graph.values[a].origin else {
        return None;
    };
    if only_reader(graph, a) != Some(index) {
        return None;
    }
    match graph.ops[producer].kind {
        OpKind::Matmul { .. } => Some(producer),
        OpKind::Gelu { .. } => {
            let x = graph.ops[producer].operands[0];
            match graph.values[x].origin {
                Origin::Op(matmul)
                    if matches!(graph.ops[matmul].kind, OpKind::Matmul { .. })
                        && only_reader(graph, x) == Some(producer) =>
                {
                    Some(matmul)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The matmul that reads matmul `index`'s result as its left operand, directly or through a
/// GeLU, in a chain ([`chained_producer`] of it is `index`).
pub fn chained_consumer(graph: &Graph, index: usize) -> Option<usize> {
    let c = graph.ops[index].results[0];
    let reader = only_reader(graph, c)?;
    let consumer = match graph.ops[reader].kind {
        OpKind::Gelu { .. } => only_reader(graph, graph.ops[reader].results[0])?,
        _ => reader,
    };
    (matches!(graph.ops[consumer].kind, OpKind::Matmul { .. })
        && chained_producer(graph, consumer) == Some(index))
    .then_some(consumer)
}

/// How matmul `index` leaves its result when it runs in waves, `consumer_in_waves` saying
/// whether its chained consumer (if any) runs in waves: kept for that one, evacuated for the
/// host, or evacuated row-major for a GeLU whose result only the host reads; `Err` (why) for
/// any other reader.
pub fn result_role(
    graph: &Graph,
    index: usize,
    consumer_in_waves: impl Fn(usize) -> bool,
) -> Result<WavesResult, String> {
    let c = graph.ops[index].results[0];
    if chained_consumer(graph, index).is_some_and(consumer_in_waves) {
        return Ok(WavesResult::Kept);
    }
    if crate::tiling::candidate::returned_only(graph, c) {
        return Ok(WavesResult::Evacuated { row_major: false });
    }
    match only_reader(graph, c) {
        Some(gelu)
            if matches!(graph.ops[gelu].kind, OpKind::Gelu { .. })
                && crate::tiling::candidate::returned_only(graph, graph.ops[gelu].results[0]) =>
        {
            Ok(WavesResult::Evacuated { row_major: true })
        }
        _ => Err(
            "its result is read by another op (the waves leave it for the host, a GeLU the host reads, or the next product in waves of a chain)"
                .into(),
        ),
    }
}

/// The whole plan of kind `kind` a constraint pins for op `index`, if it pins that kind (a
/// malformed one is `Err` with why): the GEMMs that are only planned when pinned (a replay's).
pub fn pinned(
    options: &PlannerOptions,
    index: usize,
    kind: &str,
) -> Option<Result<OperatorPlan, String>> {
    let constraint = options
        .constraints
        .ops
        .get(&crate::tiling::constraints::op_key("", index))?;
    if constraint.kind.as_deref() != Some(kind) {
        return None;
    }
    Some(
        OperatorPlan::from_generic(&ipu_dialects::format::Plan {
            kind: kind.into(),
            params: constraint.params.clone(),
        })
        .map_err(|e| format!("the constraint is not a whole plan: {e}")),
    )
}

/// The `gemm_waves` plan a constraint pins whole for op `index`, if any.
pub fn pinned_plan(
    options: &PlannerOptions,
    index: usize,
) -> Option<Result<GemmWavesPlan, String>> {
    pinned(options, index, "gemm_waves").map(|plan| match plan? {
        OperatorPlan::GemmWaves(plan) => Ok(plan),
        other => Err(format!("not a gemm_waves plan: {other}")),
    })
}

/// `m` rows in `gm` blocks of whole rows, sizes differing by at most one, the larger first:
/// `(first row, rows)` each.
pub fn balanced_rows(m: u32, gm: u32) -> Vec<(u32, u32)> {
    let (base, extra) = (m / gm.max(1), m % gm.max(1));
    let mut first = 0;
    (0..gm)
        .map(|r| {
            let rows = base + u32::from(r < extra);
            let block = (first, rows);
            first += rows;
            block
        })
        .collect()
}

/// The blocks `parts` of a `dims` matrix of `bytes`-byte elements, block (i, j) held by
/// `owner(i, j)`.
pub fn block_shards(
    dims: [u32; 2],
    parts: [u32; 2],
    bytes: u32,
    owner: &dyn Fn(u32, u32) -> Owners,
) -> Shards {
    let owners: Vec<Owners> = (0..parts[0])
        .flat_map(|i| (0..parts[1]).map(move |j| (i, j)))
        .map(|(i, j)| owner(i, j))
        .collect();
    Shards {
        dims: [1, u64::from(dims[0]), u64::from(dims[1])],
        parts: [1, parts[0], parts[1]],
        element_bytes: bytes,
        owners: owners.into(),
    }
}

/// The candidate of a pinned `gemm_waves` plan for an `m x k x n` product on at most `tiles`
/// tiles that leaves its result as `result` and, with `chained`, reads its left operand where
/// the chain's previous product left it: priced as the lowering builds it, or why the plan
/// cannot be followed.
pub fn candidate(
    dims: (u32, u32, u32),
    plan: &GemmWavesPlan,
    tiles: u32,
    (result, chained): (WavesResult, bool),
    target: &Target,
) -> Result<Candidate, String> {
    let grid = WavesGrid::planned(dims, plan, tiles)?.with_result(result)?;

    let kernels = grid.kernels();
    if let Some(refused) = kernels.iter().find_map(|spec| spec.validate().err()) {
        return Err(format!("a kernel it calls is not supported: {refused}"));
    }
    let [a, b, out] = grid.homes();
    let format = |order, memory| ValueFormat::operand(grid.input, order, memory, 0);
    let output_format = grid.result_format();
    let source = Arc::new(grid.clone());
    let candidate = Candidate {
        compute_cycles: grid.compute_cycles(target),
        transient: grid.working(),
        kernels,
        // A chained A is read where the previous product and its GeLU left it.
        follows: chained.then_some((0, None)),
        ..Candidate::new(
            OperatorPlan::GemmWaves(plan.clone()),
            grid.tiles(),
            vec![
                Need {
                    shards: a,
                    format: format(ElementOrder::AmpLeft, grid.left),
                },
                Need {
                    shards: b,
                    format: format(ElementOrder::AmpRight, grid.weights),
                },
            ],
            Need {
                shards: out,
                format: output_format,
            },
        )
    };
    Ok(candidate.with_generated_phases(source, 0..grid.phases(), target))
}

#[cfg(test)]
mod tests;
