//! The activation-stationary GEMM with the K split over tiles (`gemm_activation_stationary`):
//! the one owner of how the hardware-measured SigLIP MLP's down-projection runs
//! (`docs/design/ANCHOR-PLANS.md` section 4), for the planner and the lowering
//! (`lower/graph/stationary.rs`).
//!
//! ## Decomposition
//! C[M x N] = A[M x K] W[K x N]. A stays where the previous product in waves left it
//! ([`chainable`]): tile `r * gk + q` holds rows block r (balanced rows, the larger first)
//! over K range q (`K / gk` columns, AMP-output order = AMP-left). C runs in `N / cb` output
//! panels of `cb` columns, `round` panels at a time.
//!
//! ## Weights
//! W is resident in 64-row blocks (64 x cb, AMP-right), block (b, j) on tile
//! `(b * panels + j) mod tiles`, written by the host. In a round's weights phase every block of
//! the round's panels is multicast to the `gm` tiles of its K range (its home excepted), one
//! 16-column group at a time into the group's place of a `kb`-row AMP-right panel; then each
//! tile runs `K range / kb` GEMM calls per panel into that panel's partial.
//!
//! ## Reduction
//! The `gk` partials of (r, j) are summed by a tree of fan-in `fan_in`: position 0 is the
//! panel's root, tile `r * gk + (j mod gk)`, which trades places with the tile of K range 0
//! (positions are K ranges otherwise). At level l (stride `fan_in^(l-1)`) every position that
//! is a multiple of the stride but not of `fan_in` strides sends its partial to the first of
//! its group, which adds each received partial with one reduce-add. The root's last add
//! writes the panel into the result's slot on it, where the host reads it.

use std::sync::Arc;

use ipu_device::kernels::describe::{default_partials, GEMM_MAX_WEIGHT_ELEMENTS};
use ipu_device::kernels::spec::ElementOrder;
use ipu_device::{cost, KernelSpec, MemoryClass, Precision, Target};
use ipu_dialects::plan::{GemmActivationStationaryPlan, OperatorPlan};

use super::gemm_waves::WavesGrid;
use crate::element;
use crate::tiling::candidate::{Candidate, Need, PhaseTransfers};
use crate::tiling::layout::Shards;
use crate::tiling::{MemoryUse, ValueFormat};

/// K rows of a resident weight block.
pub const WEIGHT_ROWS: u32 = 64;

/// How a `gemm_activation_stationary` plan lays out one `m x k x n` product.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StationaryGrid {
    pub m: u32,
    pub k: u32,
    pub n: u32,
    pub gm: u32,
    pub gk: u32,
    pub cb: u32,
    pub kb: u32,
    pub round: u32,
    pub fan_in: u32,
    pub input: Precision,
    pub weights: MemoryClass,
    /// K columns per tile, output panels, reduction levels.
    pub k_range: u32,
    pub panels: u32,
    pub levels: u32,
    row_blocks: Vec<(u32, u32)>,
}

/// What a transfer of the program moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Moved {
    /// Group `g` of weight block (b, j).
    Weight { b: u32, j: u32, g: u32 },
    /// The partial of (r, j) at tree position `pos` (from its slot `from` into the receiver's
    /// slot `to`, [`StationaryGrid::tree`]).
    Partial {
        r: u32,
        j: u32,
        pos: u32,
        from: u32,
        to: u32,
    },
}

/// Partial slots per panel on a tile: two running sums, each followed by the slot a received
/// partial lands in (a reduce-add reads two adjacent partials and writes elsewhere).
pub const TREE_SLOTS: u32 = 4;

/// One level of the reduction tree, the same for every (row block, panel): the sends
/// `(position, root position, from slot, to slot)` and each receiving root's reduce-adds
/// `(root position, [(first of the two slots read, slot written)], final slot)`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeLevel {
    pub sends: Vec<(u32, u32, u32, u32)>,
    pub adds: Vec<(u32, Vec<(u32, u32)>)>,
}

impl StationaryGrid {
    /// The layout `plan` means for an `m x k x n` product, or why it cannot be followed.
    pub fn planned(
        (m, k, n): (u32, u32, u32),
        plan: &GemmActivationStationaryPlan,
        tiles: u32,
    ) -> Result<StationaryGrid, String> {
        let [gm, gk] = plan.grid;
        let (cb, kb) = (plan.c_block, plan.k_block);
        if plan.tiles > tiles {
            return Err(format!(
                "its grid takes {} tiles, the lowering may use {tiles}",
                plan.tiles
            ));
        }
        if gm == 0 || gm > m || gk < 2 || !k.is_multiple_of(gk) {
            return Err(format!(
                "grid [{gm}, {gk}] does not split {m} rows into non-empty blocks and K = {k} into at least two equal ranges"
            ));
        }
        let k_range = k / gk;
        if cb == 0 || !cb.is_multiple_of(16) || !n.is_multiple_of(cb) {
            return Err(format!(
                "c_block = {cb} does not split N = {n} into panels of whole 16-column groups"
            ));
        }
        if kb == 0
            || !kb.is_multiple_of(WEIGHT_ROWS)
            || !k_range.is_multiple_of(kb)
            || kb * cb > GEMM_MAX_WEIGHT_ELEMENTS
        {
            return Err(format!(
                "k_block = {kb} is not a multiple of the {WEIGHT_ROWS}-row weight blocks that splits the K range of {k_range} with a {kb} x {cb} weight panel the GEMM kernel takes"
            ));
        }
        if plan.round == 0 || !(2..=3).contains(&plan.fan_in) {
            return Err(format!(
                "round = {} must be at least 1 and fan_in = {} 2 or 3 (the two running sums a tile alternates between take two received partials per level)",
                plan.round, plan.fan_in
            ));
        }
        if plan.precision.is_fp8() {
            return Err("FP8 is not built (the host would need the operands' scales)".into());
        }
        let row_blocks = super::gemm_waves::balanced_rows(m, gm);
        let mut levels = 0;
        let mut reach = 1u64;
        while reach < u64::from(gk) {
            reach *= u64::from(plan.fan_in);
            levels += 1;
        }
        Ok(StationaryGrid {
            m,
            k,
            n,
            gm,
            gk,
            cb,
            kb,
            round: plan.round,
            fan_in: plan.fan_in,
            input: plan.precision,
            weights: element::memory_class(plan.weights),
            k_range,
            panels: n / cb,
            levels,
            row_blocks,
        })
    }

    pub fn tiles(&self) -> u32 {
        self.gm * self.gk
    }

    pub fn tile(&self, r: u32, q: u32) -> u32 {
        r * self.gk + q
    }

    pub fn row_block(&self, r: u32) -> (u32, u32) {
        self.row_blocks[r as usize]
    }

    pub fn max_rows(&self) -> u32 {
        self.row_blocks.iter().map(|b| b.1).max().unwrap_or(0)
    }

    /// The distinct row counts (largest first): the GEMM kernel's entries.
    pub fn row_counts(&self) -> Vec<u32> {
        let mut counts: Vec<u32> = self.row_blocks.iter().map(|b| b.1).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        counts.dedup();
        counts
    }

    pub fn partials(&self) -> Precision {
        default_partials(self.input)
    }

    pub fn rounds(&self) -> u32 {
        self.panels.div_ceil(self.round)
    }

    /// The output panels of round `t`.
    pub fn round_panels(&self, t: u32) -> std::ops::Range<u32> {
        t * self.round..((t + 1) * self.round).min(self.panels)
    }

    /// Weight blocks per K range and GEMM calls per tile and panel.
    pub fn blocks_per_range(&self) -> u32 {
        self.k_range / WEIGHT_ROWS
    }

    pub fn calls_per_panel(&self) -> u32 {
        self.k_range / self.kb
    }

    /// Home tile and slot of weight block (b, j).
    pub fn w_home(&self, b: u32, j: u32) -> (u32, u32) {
        let index = b * self.panels + j;
        (index % self.tiles(), index / self.tiles())
    }

    /// Weight home slots per tile and bytes of one (a 64 x cb block).
    pub fn w_slots(&self) -> (u32, u32) {
        (
            (self.k / WEIGHT_ROWS * self.panels).div_ceil(self.tiles()),
            WEIGHT_ROWS * self.cb * self.input.bytes(),
        )
    }

    /// Bytes of one received weight panel (`kb x cb`) and of one partial (`rows x cb`).
    pub fn panel_bytes(&self) -> u32 {
        self.kb * self.cb * self.input.bytes()
    }

    pub fn partial_bytes(&self) -> u32 {
        self.max_rows() * self.cb * self.partials().bytes()
    }

    /// Byte offset in the inbox of group `g` of weight block `b` for round panel `p`.
    pub fn inbox_offset(&self, b: u32, p: u32, g: u32) -> u32 {
        let within = b % self.blocks_per_range();
        let per_call = self.kb / WEIGHT_ROWS;
        let call = within / per_call;
        let half = within % per_call;
        (p * self.calls_per_panel() + call) * self.panel_bytes()
            + (g * self.kb + half * WEIGHT_ROWS) * 16 * self.input.bytes()
    }

    /// The tile at tree position `pos` of (r, j).
    pub fn at(&self, r: u32, j: u32, pos: u32) -> u32 {
        let root = j % self.gk;
        let range = match pos {
            0 => root,
            x if x == root => 0,
            x => x,
        };
        self.tile(r, range)
    }

    /// The result slot of panel j on its root.
    pub fn result_slot(&self, j: u32) -> u32 {
        j / self.gk
    }

    pub fn result_slots(&self) -> u32 {
        self.panels.div_ceil(self.gk)
    }

    /// The reduction tree, level by level (see the module docs): a position's running sum is
    /// in slot 0 or 2; the n-th partial a root receives lands after its running sum, and each
    /// reduce-add writes the other running-sum slot (the last one of a level stays there).
    pub fn tree(&self) -> Vec<TreeLevel> {
        let mut current = vec![0u32; self.gk as usize];
        let other = |slot: u32| 2 - slot;
        (1..=self.levels)
            .map(|level| {
                let stride = self.fan_in.pow(level - 1);
                let mut tree = TreeLevel::default();
                let roots = (0..self.gk).filter(|&p| p % (stride * self.fan_in) == 0);
                for root in roots {
                    let mut running = current[root as usize];
                    let mut adds = Vec::new();
                    for member in 1..self.fan_in {
                        let pos = root + member * stride;
                        if pos >= self.gk {
                            break;
                        }
                        tree.sends
                            .push((pos, root, current[pos as usize], running + 1));
                        adds.push((running, other(running)));
                        running = other(running);
                    }
                    if !adds.is_empty() {
                        current[root as usize] = running;
                        tree.adds.push((root, adds));
                    }
                }
                tree
            })
            .collect()
    }

    /// Phases per round: the weights and the reduction's levels.
    pub fn phases(&self) -> u32 {
        self.rounds() * (1 + self.levels)
    }

    pub fn phase(&self, t: u32, level: u32) -> u32 {
        t * (1 + self.levels) + level
    }

    /// Every transfer of phase `phase`: `(source, destinations, bytes, what)`.
    pub fn for_each_move(&self, phase: u32, mut visit: impl FnMut(u32, &[u32], u32, Moved)) {
        let (t, level) = (phase / (1 + self.levels), phase % (1 + self.levels));
        let eb = self.input.bytes();
        let mut to = Vec::with_capacity(self.gm as usize);
        if level == 0 {
            for j in self.round_panels(t) {
                for b in 0..self.k / WEIGHT_ROWS {
                    let q = b / self.blocks_per_range();
                    let (home, _) = self.w_home(b, j);
                    to.clear();
                    to.extend((0..self.gm).map(|r| self.tile(r, q)).filter(|&x| x != home));
                    if to.is_empty() {
                        continue;
                    }
                    for g in 0..self.cb / 16 {
                        visit(home, &to, WEIGHT_ROWS * 16 * eb, Moved::Weight { b, j, g });
                    }
                }
            }
            return;
        }
        let tree = self.tree();
        let pb = self.partials().bytes();
        for r in 0..self.gm {
            let bytes = self.row_block(r).1 * self.cb * pb;
            for j in self.round_panels(t) {
                for &(pos, root, from, to) in &tree[level as usize - 1].sends {
                    let moved = Moved::Partial {
                        r,
                        j,
                        pos,
                        from,
                        to,
                    };
                    visit(self.at(r, j, pos), &[self.at(r, j, root)], bytes, moved);
                }
            }
        }
    }

    /// The GEMM call of a panel's call `i` (the first initializes the partial).
    pub fn call(&self, i: u32) -> KernelSpec {
        KernelSpec::Gemm {
            input: self.input,
            partials: self.partials(),
            weights: self.weights,
            k: self.kb,
            c: self.cb,
            rows: self.row_counts(),
            accumulate: i > 0,
        }
    }

    /// The reduce-add of one received partial of `rows` rows into the running sum.
    pub fn reduce(&self, rows: u32) -> KernelSpec {
        KernelSpec::ReduceAdd {
            partials_precision: self.partials(),
            output: self.partials(),
            elements: rows * self.cb,
            partials: 2,
        }
    }

    /// The copy of one 16-column group of a weight block into its home's own panel (a home
    /// that reads its block is not among the multicast's receivers).
    pub fn home_copy(&self) -> KernelSpec {
        KernelSpec::Copy {
            bytes: WEIGHT_ROWS * 16 * self.input.bytes(),
        }
    }

    /// Whether weight block (b, j)'s home reads it (is a tile of its K range).
    pub fn home_reads(&self, b: u32, j: u32) -> bool {
        self.w_home(b, j).0 % self.gk == b / self.blocks_per_range()
    }

    pub fn kernels(&self) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = (0..self.calls_per_panel().min(2))
            .map(|i| self.call(i))
            .collect();
        kernels.push(self.reduce(self.max_rows()));
        kernels.push(self.home_copy());
        kernels
    }

    /// Modelled cycles of the compute steps: per round the slowest tile's calls, per level
    /// the tile with the most received partials.
    pub fn compute_cycles(&self, target: &Target) -> u64 {
        let calls: u64 = (0..self.calls_per_panel())
            .map(|i| {
                cost::kernel_call_cycles(&self.call(i), &[0, 0, 0, 0], target)
                    .unwrap_or(u64::MAX / 4)
            })
            .sum();
        let reduce = cost::kernel_cycles(&self.reduce(self.max_rows()), target);
        let copy = cost::kernel_cycles(&self.home_copy(), target) * u64::from(self.cb / 16);
        (0..self.rounds())
            .map(|t| {
                let panels = u64::from(self.round_panels(t).len() as u32);
                // The homes that read their own blocks copy them first (the busiest).
                let mut copies = vec![0u64; self.tiles() as usize];
                for j in self.round_panels(t) {
                    for b in (0..self.k / WEIGHT_ROWS).filter(|&b| self.home_reads(b, j)) {
                        copies[self.w_home(b, j).0 as usize] += copy;
                    }
                }
                let copies = copies.into_iter().max().unwrap_or(0);
                let adds: u64 = (1..=self.levels)
                    .map(|level| {
                        let mut received = vec![0u64; self.tiles() as usize];
                        self.for_each_move(self.phase(t, level), |_, to, _, _| {
                            received[to[0] as usize] += 1;
                        });
                        received.into_iter().max().unwrap_or(0) * reduce
                    })
                    .sum();
                copies + panels * calls + adds
            })
            .sum()
    }

    /// The weights' homes and the result's (one block per panel of each row block, on its
    /// root), and the left operand's blocks where the chain left them.
    pub fn homes(&self) -> [Shards; 3] {
        let shards = |dims, parts, bytes, owner: &dyn Fn(u32, u32) -> u32| {
            super::gemm_waves::block_shards(dims, parts, bytes, &|i, j| {
                smallvec::smallvec![owner(i, j)]
            })
        };
        let eb = self.input.bytes();
        [
            shards([self.m, self.k], [self.gm, self.gk], eb, &|r, q| {
                self.tile(r, q)
            }),
            shards(
                [self.k, self.n],
                [self.k / WEIGHT_ROWS, self.panels],
                eb,
                &|b, j| self.w_home(b, j).0,
            ),
            shards(
                [self.m, self.n],
                [self.gm, self.panels],
                self.partials().bytes(),
                &|r, j| self.at(r, j, 0),
            ),
        ]
    }

    /// Per-tile working bytes: a round's received weight panels and its partials with their
    /// received slots.
    pub fn working(&self) -> MemoryUse {
        let inbox = u64::from(self.round * self.calls_per_panel() * self.panel_bytes());
        let partials = u64::from(self.round * TREE_SLOTS * self.partial_bytes());
        MemoryUse::of(inbox, self.weights).plus(MemoryUse::of(partials, MemoryClass::Standard))
    }
}

impl PhaseTransfers for StationaryGrid {
    fn transfers(&self, phase: u32, visit: &mut dyn FnMut(u32, &[u32], u64)) {
        self.for_each_move(phase, |from, to, bytes, _| {
            visit(from, to, u64::from(bytes))
        });
    }
}

/// Whether `consumer` reads `producer`'s kept result in place: one wave of the same rows, row
/// blocks and tiles, the producer's column blocks its K ranges.
pub fn chainable(producer: &WavesGrid, consumer: &StationaryGrid) -> Result<(), String> {
    let same = producer.waves == 1
        && producer.m == consumer.m
        && producer.gm == consumer.gm
        && producer.groups == consumer.gm
        && producer.gn == consumer.gk
        && producer.cb == consumer.k_range
        && producer.n == consumer.k
        && producer.partials() == consumer.input;
    if same {
        Ok(())
    } else {
        Err(format!(
            "the left operand is a product in waves kept on its tiles ({} x {} blocks of {} columns, {} wave(s)), which this plan ({} x {} tiles, K ranges of {}) does not read in place",
            producer.gm, producer.gn, producer.cb, producer.waves, consumer.gm, consumer.gk, consumer.k_range
        ))
    }
}

/// The `gemm_activation_stationary` plan a constraint pins whole for op `index`, if any.
pub fn pinned_plan(
    options: &crate::tiling::PlannerOptions,
    index: usize,
) -> Option<Result<GemmActivationStationaryPlan, String>> {
    super::gemm_waves::pinned(options, index, "gemm_activation_stationary").map(
        |plan| match plan? {
            OperatorPlan::GemmActivationStationary(plan) => Ok(plan),
            other => Err(format!("not a gemm_activation_stationary plan: {other}")),
        },
    )
}

/// The candidate of a pinned plan for an `m x k x n` product on at most `tiles` tiles, its
/// left operand read where the chain's product in waves left it (the candidate follows it).
pub fn candidate(
    dims: (u32, u32, u32),
    plan: &GemmActivationStationaryPlan,
    tiles: u32,
    target: &Target,
) -> Result<Candidate, String> {
    let grid = StationaryGrid::planned(dims, plan, tiles)?;
    let kernels = grid.kernels();
    if let Some(refused) = kernels.iter().find_map(|spec| spec.validate().err()) {
        return Err(format!("a kernel it calls is not supported: {refused}"));
    }
    let [a, w, out] = grid.homes();
    let format = |order, memory| ValueFormat::operand(grid.input, order, memory, 0);
    let source = Arc::new(grid.clone());
    let candidate = Candidate {
        compute_cycles: grid.compute_cycles(target),
        transient: grid.working(),
        kernels,
        follows: Some((0, None)),
        ..Candidate::new(
            OperatorPlan::GemmActivationStationary(plan.clone()),
            grid.tiles(),
            vec![
                Need {
                    shards: a,
                    format: format(ElementOrder::AmpLeft, MemoryClass::Standard),
                },
                Need {
                    shards: w,
                    format: format(ElementOrder::AmpRight, grid.weights),
                },
            ],
            Need {
                shards: out,
                format: ValueFormat::operand(
                    grid.partials(),
                    ElementOrder::AmpOutput,
                    MemoryClass::Standard,
                    0,
                ),
            },
        )
    };
    Ok(candidate.with_generated_phases(source, 0..grid.phases(), target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_dialects::format::Memory;

    /// The SigLIP MLP's down-projection (ANCHOR-PLANS.md section 4).
    fn siglip() -> StationaryGrid {
        let plan = GemmActivationStationaryPlan {
            grid: [81, 18],
            tiles: 1458,
            c_block: 64,
            k_block: 128,
            round: 4,
            fan_in: 3,
            weights: Memory::Interleaved,
            precision: Precision::F16,
        };
        StationaryGrid::planned((2916, 4608, 1152), &plan, 1472).unwrap()
    }

    /// The anchor's numbers: 18 panels in 5 rounds (4, 4, 4, 4, 2), each round's weights phase
    /// 288 blocks (144 in the last) of 8,192 B to the 80-81 tiles of their K range, 131,072 B
    /// received per tile; three levels of 4,608-byte partials, 18 -> 6 -> 2 -> 1; weights on
    /// 1,296 tiles; 38 phases with the up-projection's 18.
    #[test]
    fn the_siglip_down_projection() {
        let grid = siglip();
        assert_eq!((grid.rounds(), grid.levels, grid.phases()), (5, 3, 20));
        assert_eq!(grid.round_panels(4), 16..18);
        for t in [0, 4] {
            let mut blocks = std::collections::BTreeSet::new();
            let mut received = vec![0u64; 1458];
            grid.for_each_move(grid.phase(t, 0), |from, to, bytes, moved| {
                if let Moved::Weight { b, j, .. } = moved {
                    blocks.insert((b, j));
                    assert!(to.len() == 80 || to.len() == 81);
                    assert!(from < 1296);
                }
                for &x in to {
                    received[x as usize] += u64::from(bytes);
                }
            });
            assert_eq!(blocks.len(), if t == 0 { 288 } else { 144 });
            let most = *received.iter().max().unwrap();
            assert_eq!(most, if t == 0 { 131_072 } else { 65_536 });
        }
        let sends = |level| {
            let mut count = 0;
            grid.for_each_move(grid.phase(0, level), |_, to, bytes, _| {
                assert_eq!((to.len(), bytes), (1, 4608));
                count += 1;
            });
            count
        };
        // Per (row block, panel): 12, 4 and 1 sends.
        assert_eq!(
            (sends(1), sends(2), sends(3)),
            (81 * 4 * 12, 81 * 4 * 4, 81 * 4)
        );
        // Panel 5's root is tile r * 18 + 5; K range 0's partial sits at position 5.
        assert_eq!(grid.at(2, 5, 0), 2 * 18 + 5);
        assert_eq!(grid.at(2, 5, 5), 2 * 18);
        // Block 7 is its K range's fourth: the second call's second half.
        assert_eq!(
            grid.inbox_offset(7, 1, 2),
            (2 + 1) * 16_384 + (2 * 128 + 64) * 32
        );
    }

    /// Every partial reaches its root exactly once through the tree, for any fan-in.
    #[test]
    fn the_tree_sums_every_partial_once() {
        for (gk, fan_in) in [(18, 3), (5, 2), (7, 3), (2, 3), (16, 2), (10, 3)] {
            let plan = GemmActivationStationaryPlan {
                grid: [2, gk],
                tiles: 2 * gk,
                c_block: 16,
                k_block: 64,
                round: 3,
                fan_in,
                weights: Memory::Standard,
                precision: Precision::F16,
            };
            let grid = StationaryGrid::planned((5, 64 * gk, 48), &plan, 64).unwrap();
            for t in 0..grid.rounds() {
                for j in grid.round_panels(t) {
                    // Which original partials each tile holds, by position.
                    let mut held: Vec<Vec<u32>> = (0..gk).map(|q| vec![q]).collect();
                    for level in 1..=grid.levels {
                        let mut moves = Vec::new();
                        grid.for_each_move(grid.phase(t, level), |from, to, _, moved| {
                            if let Moved::Partial { r: 0, j: pj, .. } = moved {
                                if pj == j {
                                    moves.push((from, to[0]));
                                }
                            }
                        });
                        for (from, to) in moves {
                            let taken = std::mem::take(&mut held[from as usize]);
                            assert!(!taken.is_empty(), "tile {from} sent twice");
                            held[to as usize].extend(taken);
                        }
                    }
                    let root = grid.at(0, j, 0) as usize;
                    held[root].sort_unstable();
                    assert_eq!(
                        held[root],
                        (0..gk).collect::<Vec<_>>(),
                        "gk {gk} fan-in {fan_in}"
                    );
                }
            }
        }
    }
}
