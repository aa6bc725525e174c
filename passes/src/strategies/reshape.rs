//! The reshape strategy: `ipu.reshape` as a view.
//!
//! A value laid out as whole rows per tile (a row grid over its 2-D view) holds one contiguous
//! range of its row-major elements on each tile. Where every such range is also whole rows of
//! the result's 2-D view, the result is the same buffers read with another row width: no
//! kernel, no exchange. The candidates are the result's `[batch, rows, 1]` grids whose blocks
//! are the blocks of an input row grid the lowering lays out ([`BlockGrid`]); that grid is the
//! operand's need, so the planner prices any conversion into it as it prices every other
//! operand's. [`reshape_view`] is the one rule: the planner offers its views and the lowering
//! follows the plan's. A reshape that only adds or drops unit axes ([`relabels`]) is a view on
//! every grid: the input's blocks, whatever they are, are the result's.

use ipu_dialects::plan::{OperatorPlan, ReshapePlan};

use crate::strategies::blocks::BlockGrid;
use crate::tiling::candidate::{grid3, grids, Candidate, Need};
use crate::tiling::layout::canonical_dims;
use crate::tiling::{Graph, Op, ValueFormat};

/// A reshape view: the input's row grid and the result's, block for block the same elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReshapeView {
    /// The input's plan grid (`[batch, rows, 1]` over its canonical shape) and its blocks.
    pub input_grid: [u32; 3],
    pub input: BlockGrid,
    pub output: BlockGrid,
}

/// The view of a reshape from canonical dims `input` to `output` on the result's grid `grid`,
/// or why there is none: the result's blocks must be whole rows (`grid[2] == 1`), each block's
/// elements whole rows of the input, and those rows a row grid of the input the lowering lays
/// out (whole matrices per block, one matrix's row range, or row ranges of a single matrix).
pub fn reshape_view(
    input: [u64; 3],
    output: [u64; 3],
    grid: [u32; 3],
) -> Result<ReshapeView, String> {
    if grid[2] != 1 {
        return Err(format!(
            "grid {grid:?} splits the result's rows; a reshape view holds whole rows"
        ));
    }
    let out = BlockGrid::of_plan(output, grid)?;
    let elements = u64::from(out.rows_per_block) * u64::from(out.n);
    let width = input[2].max(1);
    if !elements.is_multiple_of(width) {
        return Err(format!(
            "a block of {} rows of {} elements is not whole rows of {width}",
            out.rows_per_block, out.n
        ));
    }
    let rows = elements / width;
    let [batches, matrix_rows, _] = input;
    let row_blocks = u64::from(out.row_blocks);
    // The input grids whose blocks are `rows` rows each, `row_blocks` of them.
    let mut options = Vec::new();
    if batches == 1 {
        options.push([1, row_blocks, 1]);
    }
    if rows.is_multiple_of(matrix_rows) {
        options.push([batches.div_ceil(rows / matrix_rows), 1, 1]);
    }
    if matrix_rows.is_multiple_of(rows) {
        options.push([batches, matrix_rows / rows, 1]);
    }
    for option in options {
        let Ok(input_grid) = option
            .iter()
            .map(|&parts| u32::try_from(parts))
            .collect::<Result<Vec<u32>, _>>()
        else {
            continue;
        };
        let input_grid = grid3(&input_grid);
        let Ok(blocks) = BlockGrid::of_plan(input, input_grid) else {
            continue;
        };
        if u64::from(blocks.rows_per_block) == rows && blocks.row_blocks == out.row_blocks {
            return Ok(ReshapeView {
                input_grid,
                input: blocks,
                output: out,
            });
        }
    }
    Err(format!(
        "blocks of {rows} rows of the input {input:?} ({row_blocks} of them) are not a row grid the lowering lays out"
    ))
}

/// Whether a reshape from canonical dims `input` to `output` only relabels axes (adds or drops
/// unit axes, `[1, S, D] -> [S, D]`): the canonical `[batch, rows, columns]` views are equal, so
/// the value's blocks on any grid, columns split or not, are the result's blocks.
pub fn relabels(input: [u64; 3], output: [u64; 3]) -> bool {
    input == output
}

/// The view a reshape plan means for `op` of `graph`, or why the lowering cannot follow it.
pub fn planned_view(graph: &Graph, op: &Op, plan: &ReshapePlan) -> Result<ReshapeView, String> {
    let input = canonical_dims(&graph.values[op.operands[0]].shape);
    let output = canonical_dims(&graph.values[op.results[0]].shape);
    let view = reshape_view(input, output, plan.grid)?;
    if view.output.tiles() != plan.tiles {
        return Err(format!(
            "grid {:?} has {} blocks, the plan says {} tiles",
            plan.grid,
            view.output.tiles(),
            plan.tiles
        ));
    }
    Ok(view)
}

/// The candidates of `op` (an `ipu.reshape`): a view on every result grid over the active tile
/// counts that has one; no work, the input needed on the matching row grid.
pub fn candidates(graph: &Graph, op: &Op, active: &[u32]) -> Vec<Candidate> {
    let input = &graph.values[op.operands[0]];
    let result = &graph.values[op.results[0]];
    let format = ValueFormat::row_major(input.element);
    let (in_dims, out_dims) = (canonical_dims(&input.shape), canonical_dims(&result.shape));
    let mut out = Vec::new();
    if relabels(in_dims, out_dims) {
        // Any blocks of the input are the same blocks of the result.
        for grid in grids(active, &out_dims) {
            let grid = grid3(&grid);
            let Ok(blocks) = BlockGrid::of_plan(out_dims, grid) else {
                continue;
            };
            let plan = ReshapePlan {
                grid,
                tiles: blocks.tiles(),
            };
            out.push(Candidate::new(
                OperatorPlan::Reshape(plan),
                blocks.tiles(),
                vec![Need::on_grid(&input.shape, in_dims, &grid, format)],
                Need::on_grid(&result.shape, out_dims, &grid, format),
            ));
        }
        return out;
    }
    for grid in grids(active, &[out_dims[0], out_dims[1], 1]) {
        let grid = grid3(&grid);
        let Ok(view) = reshape_view(in_dims, out_dims, grid) else {
            continue;
        };
        let plan = ReshapePlan {
            grid,
            tiles: view.output.tiles(),
        };
        out.push(Candidate::new(
            OperatorPlan::Reshape(plan),
            view.output.tiles(),
            vec![Need::on_grid(
                &input.shape,
                in_dims,
                &view.input_grid,
                format,
            )],
            Need::on_grid(&result.shape, out_dims, &grid, format),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splitting heads, `[197, 768] -> [197, 12, 64]`: a block of whole tokens (12 result rows
    /// each) is the same tokens' rows of the input.
    #[test]
    fn a_head_split_is_a_view_of_whole_tokens() {
        let view = reshape_view([1, 197, 768], [197, 12, 64], [50, 1, 1]).expect("a view");
        assert_eq!(view.input_grid, [1, 50, 1]);
        assert_eq!(
            (
                view.input.rows_per_block,
                view.input.row_blocks,
                view.input.n
            ),
            (4, 50, 768)
        );
        assert_eq!(
            (
                view.output.rows_per_block,
                view.output.row_blocks,
                view.output.n
            ),
            (48, 50, 64)
        );
        // Merging them back: the tokens' 12 x 64 rows are whole matrices of the input.
        let merge = reshape_view([197, 12, 64], [1, 197, 768], [1, 50, 1]).expect("a view");
        assert_eq!(merge.input_grid, [50, 1, 1]);
        assert_eq!(merge.input.rows_per_block, 48);
    }

    /// `[16, 32] -> [1, 16, 32]` only adds a unit axis: a view on every grid of the result,
    /// column splits included, each needing the input on the same blocks; a head split is no
    /// relabeling.
    #[test]
    fn a_unit_axis_reshape_is_a_view_on_every_grid() {
        use crate::tiling::{OpKind, Origin};
        use ipu_device::Precision;
        assert!(relabels(
            canonical_dims(&[16, 32]),
            canonical_dims(&[1, 16, 32])
        ));
        assert!(!relabels(
            canonical_dims(&[1, 16, 64]),
            canonical_dims(&[16, 4, 16])
        ));
        let mut graph = Graph::default();
        let x = graph.add_value(vec![16, 32], Precision::F32, Origin::Argument);
        let y = graph.add_op(OpKind::Reshape, vec![x], vec![1, 16, 32], Precision::F32);
        graph.outputs.push(y);
        let found = candidates(&graph, &graph.ops[0], &[32]);
        let grid_of = |c: &Candidate| match &c.plan {
            OperatorPlan::Reshape(plan) => plan.grid,
            other => panic!("not a reshape plan: {other:?}"),
        };
        let grids: Vec<[u32; 3]> = found.iter().map(grid_of).collect();
        assert!(
            grids.contains(&[1, 16, 2]) && grids.contains(&[1, 2, 16]),
            "{grids:?}"
        );
        for candidate in &found {
            assert_eq!(candidate.tiles, grid_of(candidate).iter().product::<u32>());
            assert_eq!(candidate.needs[0].shards, candidate.output.shards);
        }
    }

    /// Every view covers the same elements block for block, on seeded shapes and grids.
    #[test]
    fn views_cover_the_same_elements_block_for_block() {
        let shapes: [([u64; 3], [u64; 3]); 4] = [
            ([1, 24, 36], [24, 6, 6]),
            ([4, 6, 10], [1, 24, 10]),
            ([1, 6, 4], [1, 4, 6]),
            ([3, 8, 16], [6, 4, 16]),
        ];
        let mut views = 0;
        for (input, output) in shapes {
            for batch in 1..=8u32 {
                for rows in 1..=8u32 {
                    let Ok(view) = reshape_view(input, output, [batch, rows, 1]) else {
                        continue;
                    };
                    views += 1;
                    for block in 0..view.output.row_blocks {
                        let elements = |grid: &BlockGrid| {
                            (
                                u64::from(grid.first_row(block)) * u64::from(grid.n),
                                u64::from(grid.rows(block)) * u64::from(grid.n),
                            )
                        };
                        assert_eq!(elements(&view.input), elements(&view.output));
                    }
                }
            }
        }
        assert!(views >= 8, "{views} views found");
        // Blocks that are not whole input rows are refused.
        assert!(reshape_view([1, 6, 4], [1, 4, 6], [1, 4, 1]).is_err());
        assert!(reshape_view([1, 6, 4], [1, 4, 6], [1, 2, 2]).is_err());
    }
}
