//! The rearrange strategy: a user-written `ipu.rearrange`.
//!
//! * A swap of the last two axes (a batched transpose) runs whole matrices per tile on a
//!   `[tiles, 1, 1]` grid: each tile receives its matrices and runs the transpose kernel once
//!   per matrix ([`transpose_work`], what the planner prices and the lowering emits).
//! * A permutation of the leading axes (or none: a layout change) copies whole rows: each tile
//!   of the result's grid reads the rows its block takes from wherever they are; for a rank-3
//!   value the planner reads the permuted blocks.

use ipu_device::kernels::spec::KernelSpec;
use ipu_device::{cost, Precision, Target};
use ipu_dialects::plan::{OperatorPlan, RearrangePlan};

use crate::strategies::blocks::BlockGrid;
use crate::tiling::candidate::{grid3, grids, Candidate, Need};
use crate::tiling::layout::{canonical_dims, split_is_exact_cover, Owners, Shards};
use crate::tiling::{Graph, Op, OpKind, Origin, ValueFormat};

/// Whether `permutation` of a rank-`rank` value swaps its last two axes (and only those).
pub fn swaps_last_two(permutation: &[usize], rank: usize) -> bool {
    rank >= 2
        && permutation.len() == rank
        && permutation[..rank - 2]
            .iter()
            .enumerate()
            .all(|(i, &a)| i == a)
        && permutation[rank - 2..] == [rank - 1, rank - 2]
}

/// The work of a batched transpose of `batches` matrices of `rows x cols` on `tiles` tiles:
/// whole matrices per tile, `per_tile` of them on each (the last tile may hold fewer), one
/// transpose kernel call per matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct TransposeWork {
    pub batches: u32,
    pub rows: u32,
    pub cols: u32,
    pub per_tile: u32,
    pub tiles: u32,
    pub kernel: KernelSpec,
}

impl TransposeWork {
    /// The tile that transposes matrix `batch`.
    pub fn tile_of(&self, batch: u32) -> u32 {
        batch / self.per_tile
    }

    /// Cycles of the busiest tile: `per_tile` transpose calls (the device cost model).
    pub fn compute_cycles(&self, target: &Target) -> u64 {
        u64::from(self.per_tile) * cost::kernel_cycles(&self.kernel, target)
    }
}

/// The transpose work of `[batches, rows, cols]` (`precision`) on `tiles` tiles, or why not:
/// the tiles must each get at least one matrix, and the kernel must exist.
pub fn transpose_work(
    (batches, rows, cols): (u64, u64, u64),
    precision: Precision,
    tiles: u32,
) -> Result<TransposeWork, String> {
    if tiles == 0 || !split_is_exact_cover(batches, tiles) {
        return Err(format!(
            "{tiles} tiles for {batches} matrices leave a tile without one"
        ));
    }
    let to_u32 = |x: u64| u32::try_from(x).map_err(|_| format!("dimension {x} is too large"));
    // The lowering addresses the whole value's 2-D view in 32-bit element counts.
    to_u32(batches.saturating_mul(rows).saturating_mul(cols))?;
    let (batches, rows, cols) = (to_u32(batches)?, to_u32(rows)?, to_u32(cols)?);
    let kernel = KernelSpec::Transpose {
        precision,
        rows,
        cols,
    };
    kernel
        .validate()
        .map_err(|e| format!("no transpose kernel for {rows} x {cols}: {e}"))?;
    Ok(TransposeWork {
        batches,
        rows,
        cols,
        per_tile: batches.div_ceil(tiles),
        tiles,
        kernel,
    })
}

/// The transpose work plan `plan` means for a transpose of a value of `shape`, or why the
/// lowering cannot follow it (it runs whole matrices per tile: a `[tiles, 1, 1]` grid).
pub fn planned_transpose(
    shape: &[u64],
    precision: Precision,
    plan: &RearrangePlan,
) -> Result<TransposeWork, String> {
    if !plan.transpose || plan.grid[1] != 1 || plan.grid[2] != 1 || plan.grid[0] != plan.tiles {
        return Err(format!(
            "a batched transpose runs whole matrices per tile: its plan is a transpose on a [tiles, 1, 1] grid, not {:?}{}",
            plan.grid,
            if plan.transpose { "" } else { " without transpose" }
        ));
    }
    let [batches, rows, cols] = canonical_dims(shape);
    transpose_work((batches, rows, cols), precision, plan.tiles)
}

/// The blocks of a row-copy plan over the result's canonical dims `dims`, or why the
/// lowering cannot follow it (it copies whole rows into contiguous row ranges).
pub fn row_copy_grid(dims: [u64; 3], plan: &RearrangePlan) -> Result<BlockGrid, String> {
    if plan.transpose || plan.grid[2] != 1 {
        return Err(format!(
            "a row copy holds whole rows on a [batch, rows, 1] grid, not {:?}{}",
            plan.grid,
            if plan.transpose {
                " with transpose"
            } else {
                ""
            }
        ));
    }
    BlockGrid::of_plan_with_tiles(dims, plan.grid, plan.tiles)
}

/// The candidates of `op` (an `ipu.rearrange`) over the active tile counts.
pub fn candidates(graph: &Graph, op: &Op, active: &[u32], target: &Target) -> Vec<Candidate> {
    let OpKind::Rearrange { permutation } = &op.kind else {
        return Vec::new();
    };
    let input = &graph.values[op.operands[0]];
    let rank = input.shape.len();
    let transposes = permutation
        .as_deref()
        .is_some_and(|p| swaps_last_two(p, rank));
    if transposes {
        transpose_candidates(graph, op, active, target)
    } else {
        row_copy_candidates(graph, op, active, permutation.as_deref(), target)
    }
}

/// Every way of spreading `batches` whole matrices over at most the device's tiles (not only
/// divisors of an active count): for t tiles, ceil(B / t) matrices per tile, which take
/// ceil(B / ceil(B / t)) tiles.
pub(crate) fn whole_matrix_counts(batches: u64, active: &[u32]) -> Vec<u32> {
    let most = active.iter().copied().max().unwrap_or(1);
    let batches = batches.max(1);
    let mut counts: Vec<u32> = (1..=batches.min(u64::from(most)))
        .map(|t| batches.div_ceil(batches.div_ceil(t)))
        .filter_map(|tiles| u32::try_from(tiles).ok())
        .collect();
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// A batched transpose on `[tiles, 1, 1]` grids (whole matrices per tile), priced from its
/// work.
fn transpose_candidates(graph: &Graph, op: &Op, active: &[u32], target: &Target) -> Vec<Candidate> {
    let input = &graph.values[op.operands[0]];
    let precision = input.element;
    let format = ValueFormat::row_major(precision);
    let in_dims = canonical_dims(&input.shape);
    let out_shape = &graph.values[op.results[0]].shape;
    let out_dims = canonical_dims(out_shape);
    let mut out = Vec::new();
    for tiles in whole_matrix_counts(out_dims[0], active) {
        let grid = [tiles, 1, 1];
        let plan = RearrangePlan {
            grid,
            tiles,
            transpose: true,
        };
        let Ok(work) = planned_transpose(&input.shape, precision, &plan) else {
            continue;
        };
        // Each tile reads its matrices whole (the input's last two axes are the result's
        // swapped).
        let need = Shards::needed_by_grid(
            in_dims,
            precision.bytes(),
            &grid,
            &[Some(0), Some(2), Some(1)],
        );
        out.push(Candidate {
            compute_cycles: work.compute_cycles(target),
            kernels: vec![work.kernel.clone()],
            ..Candidate::new(
                OperatorPlan::Rearrange(plan),
                work.tiles,
                vec![Need {
                    shards: need,
                    format,
                }],
                Need::on_grid(out_shape, out_dims, &grid, format),
            )
        });
    }
    out
}

/// A row copy (a permutation of the leading axes, or a layout change) on every grid of the
/// result: each tile copies its block's rows.
fn row_copy_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    permutation: Option<&[usize]>,
    target: &Target,
) -> Vec<Candidate> {
    let input = &graph.values[op.operands[0]];
    let rank = input.shape.len();
    let precision = input.element;
    let format = ValueFormat::row_major(precision);
    let in_dims = canonical_dims(&input.shape);
    let out_shape = &graph.values[op.results[0]].shape;
    let out_dims = canonical_dims(out_shape);
    // The input axis each grid (output) axis reads: a permutation of a rank-3 value's leading
    // axes swaps the first two (the canonical axes are the tensor's own).
    let axes = match permutation {
        Some(&[a, b, 2]) if rank == 3 => [Some(a), Some(b), Some(2)],
        _ => [Some(0), Some(1), Some(2)],
    };
    // A host input is written row by row where the result holds it: no copy on the tiles.
    let host = !matches!(input.origin, Origin::Op(_));
    let mut out = Vec::new();
    // Besides the grids of the active counts, whole matrices spread over any number of tiles
    // up to the device's (as the batched transpose spreads them).
    let mut candidate_grids = grids(active, &[out_dims[0], out_dims[1], 1]);
    for tiles in whole_matrix_counts(out_dims[0], active) {
        let grid = vec![tiles, 1, 1];
        if !candidate_grids.contains(&grid) {
            candidate_grids.push(grid);
        }
    }
    // And every matrix on its own tiles, its rows split in any exact way, on at most the
    // device's tiles (12 heads x 64 row blocks on 1472 tiles, where 12 divides no active
    // count): a head split at a real model's size needs its rows spread.
    let most = active.iter().copied().max().unwrap_or(1);
    if let (Ok(batches), Ok(rows)) = (u32::try_from(out_dims[0]), u32::try_from(out_dims[1])) {
        for split in (2..=rows).filter(|&r| {
            split_is_exact_cover(u64::from(rows), r)
                && (rows.is_multiple_of(r) || r.is_power_of_two())
        }) {
            let Some(tiles) = batches.checked_mul(split).filter(|&t| t <= most) else {
                break;
            };
            let grid = vec![batches, split, 1];
            if tiles > 1 && !candidate_grids.contains(&grid) {
                candidate_grids.push(grid);
            }
        }
    }
    for grid in candidate_grids {
        let plan = RearrangePlan {
            grid: grid3(&grid),
            tiles: grid.iter().product(),
            transpose: false,
        };
        let Ok(blocks) = row_copy_grid(out_dims, &plan) else {
            continue;
        };
        let row_bytes = blocks.n.saturating_mul(precision.bytes());
        let block_copy = KernelSpec::Copy {
            bytes: blocks.rows_per_block.saturating_mul(row_bytes),
        };
        let (need, (compute, kernels)) = match permutation {
            // Leading axes of a rank above 3 permuted: each input row goes to the tile of the
            // result row that reads it (not the block at its own position), and the rows a
            // tile holds are copied in runs of consecutive source rows (one call each).
            Some(p) if rank > 3 && p.iter().enumerate().any(|(i, &a)| a != i) => {
                match permuted_rows_need(&input.shape, p, (in_dims, &blocks), precision.bytes()) {
                    Some((need, runs)) => (need, run_copies(&runs, row_bytes, target)),
                    None => continue,
                }
            }
            _ => (
                Shards::needed_by_grid(in_dims, precision.bytes(), &grid, &axes),
                (cost::kernel_cycles(&block_copy, target), vec![block_copy]),
            ),
        };
        out.push(Candidate {
            compute_cycles: if host { 0 } else { compute },
            kernels: if host { Vec::new() } else { kernels },
            ..Candidate::new(
                OperatorPlan::Rearrange(plan),
                blocks.tiles(),
                vec![Need {
                    shards: need,
                    format,
                }],
                Need::on_grid(out_shape, out_dims, &grid, format),
            )
        });
    }
    out
}

/// The busiest tile's copy calls for `runs` (per tile, the row counts of its runs of
/// consecutive source rows, each one copy of `row_bytes` per row), and the calls' kernels.
fn run_copies(runs: &[Vec<u32>], row_bytes: u32, target: &Target) -> (u64, Vec<KernelSpec>) {
    let copy = |rows: u32| KernelSpec::Copy {
        bytes: rows.saturating_mul(row_bytes),
    };
    let cycles = runs
        .iter()
        .map(|tile| {
            tile.iter()
                .map(|&rows| cost::kernel_cycles(&copy(rows), target))
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0);
    let mut sizes: Vec<u32> = runs.iter().flatten().copied().collect();
    sizes.sort_unstable();
    sizes.dedup();
    (cycles, sizes.into_iter().map(copy).collect())
}

/// The rows of an input of `shape` a row copy permuting its axes by `permutation` (the last
/// axis kept) reads on each tile of the result's `blocks`: one block per input row (of the
/// canonical `in_dims`), owned by the tile holding the result row that reads it; and per tile
/// the lengths of its runs of consecutive source rows. `None` when the rows are too many to
/// list.
fn permuted_rows_need(
    shape: &[u64],
    permutation: &[usize],
    (in_dims, blocks): ([u64; 3], &BlockGrid),
    element_bytes: u32,
) -> Option<(Shards, Vec<Vec<u32>>)> {
    const MAX_ROWS: u64 = 1 << 20;
    let rank = shape.len();
    let lead = &shape[..rank - 1];
    let rows: u64 = lead.iter().product();
    if rows > MAX_ROWS || permutation.len() != rank || permutation[rank - 1] != rank - 1 {
        return None;
    }
    let out_lead: Vec<u64> = permutation[..rank - 1].iter().map(|&a| shape[a]).collect();
    // Row-major strides of the input's leading axes.
    let mut strides = vec![1u64; rank - 1];
    for a in (0..rank.saturating_sub(2)).rev() {
        strides[a] = strides[a + 1] * lead[a + 1];
    }
    let per_block = u64::from(blocks.rows_per_block.max(1));
    let mut owners = vec![Owners::new(); usize::try_from(rows).ok()?];
    let mut runs: Vec<Vec<u32>> = vec![Vec::new(); blocks.tiles() as usize];
    let mut previous: Option<(u32, u64)> = None;
    let mut index = vec![0u64; rank - 1];
    for out_row in 0..rows {
        // Output row `out_row` (multi-index `index` over the result's leading axes) reads
        // the input row whose axis permutation[k] is index[k].
        let in_row: u64 = (0..rank - 1)
            .map(|k| index[k] * strides[permutation[k]])
            .sum();
        let tile = u32::try_from(out_row / per_block).ok()?;
        owners[in_row as usize] = smallvec::smallvec![tile];
        let tile_runs = runs.get_mut(tile as usize)?;
        match (previous, tile_runs.last_mut()) {
            (Some((t, row)), Some(run)) if t == tile && row + 1 == in_row => *run += 1,
            _ => tile_runs.push(1),
        }
        previous = Some((tile, in_row));
        for k in (0..rank - 1).rev() {
            index[k] += 1;
            if index[k] < out_lead[k] {
                break;
            }
            index[k] = 0;
        }
    }
    let need = Shards {
        dims: in_dims,
        parts: [
            u32::try_from(in_dims[0]).ok()?,
            u32::try_from(in_dims[1]).ok()?,
            1,
        ],
        element_bytes,
        owners: owners.into(),
    };
    Some((need, runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Heads split out of a rank-4 value, `[1, 4, 3, 8] -> [1, 3, 4, 8]`: result row
    /// (h, s) reads input row (s, h), so the tile holding result rows 4h..4h+3 needs input
    /// rows h, 3 + h, 6 + h and 9 + h, not the rows at its own position.
    #[test]
    fn a_leading_axis_permutation_needs_the_rows_it_reads() {
        let plan = RearrangePlan {
            grid: [3, 1, 1],
            tiles: 3,
            transpose: false,
        };
        let out_dims = canonical_dims(&[1, 3, 4, 8]);
        let blocks = row_copy_grid(out_dims, &plan).expect("a row grid");
        let in_dims = canonical_dims(&[1, 4, 3, 8]);
        let (need, runs) = permuted_rows_need(&[1, 4, 3, 8], &[0, 2, 1, 3], (in_dims, &blocks), 4)
            .expect("a need");
        // Each tile's four rows come from four places: four one-row copies.
        assert_eq!(runs, vec![vec![1, 1, 1, 1]; 3]);
        assert_eq!(need.parts, [4, 3, 1]);
        let owners: Vec<u32> = need.owners.iter().map(|o| o[0]).collect();
        // Input row (s, h) = 3 s + h is read by the tile of head h.
        assert_eq!(owners, vec![0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2]);
        // The identity-position need (the rank-3 rule) would have said rows 0-3 on tile 0.
        let naive = Shards::needed_by_grid(in_dims, 4, &[3, 1, 1], &[Some(0), Some(1), Some(2)]);
        assert_ne!(naive.owners, need.owners);
    }

    /// BERT-base's head split, `[512, 12, 64] -> [12, 512, 64]` on 1472 tiles (12 divides no
    /// active count): besides whole heads per tile, grids of every head on its own tiles with
    /// its rows split, within the tile count.
    #[test]
    fn a_head_split_spreads_each_heads_rows() {
        use crate::tiling::OpKind;
        let mut graph = Graph::default();
        let x = graph.add_value(vec![512, 12, 64], Precision::F16, Origin::Argument);
        let y = graph.add_op(
            OpKind::Rearrange {
                permutation: Some(vec![1, 0, 2]),
            },
            vec![x],
            vec![12, 512, 64],
            Precision::F16,
        );
        graph.outputs.push(y);
        let found = candidates(&graph, &graph.ops[0], &[1472], &Target::c600());
        let grids: Vec<[u32; 3]> = found
            .iter()
            .map(|c| match &c.plan {
                OperatorPlan::Rearrange(plan) => plan.grid,
                other => panic!("not a rearrange plan: {other:?}"),
            })
            .collect();
        assert!(grids.contains(&[12, 64, 1]), "{grids:?}");
        assert!(found.iter().all(|c| c.tiles <= 1472));
    }

    #[test]
    fn transpose_work_puts_whole_matrices_on_every_tile() {
        let work = transpose_work((6, 8, 16), Precision::F32, 3).unwrap();
        assert_eq!((work.per_tile, work.tile_of(5)), (2, 2));
        let target = Target::c600();
        assert_eq!(
            work.compute_cycles(&target),
            2 * cost::kernel_cycles(&work.kernel, &target)
        );
        // 6 matrices on 4 or 5 tiles: 2 per tile leaves a tile without one.
        assert!(transpose_work((6, 8, 16), Precision::F32, 4).is_err());
        assert!(transpose_work((6, 8, 16), Precision::F32, 5).is_err());
        assert!(swaps_last_two(&[0, 2, 1], 3) && !swaps_last_two(&[1, 0, 2], 3));
    }

    #[test]
    fn a_transpose_plan_on_split_matrices_is_refused_with_the_reason() {
        let plan = RearrangePlan {
            grid: [2, 8, 2],
            tiles: 32,
            transpose: true,
        };
        let err = planned_transpose(&[2, 8, 16], Precision::F32, &plan).unwrap_err();
        assert!(err.contains("whole matrices per tile"), "{err}");
    }
}
