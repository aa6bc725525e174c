//! Work on blocks of a grid: the shared vocabulary of the strategies that run one kernel call
//! per block of their result (pointwise on a grid, row-wise ops). [`GridWork`] is what the
//! planner prices ([`GridWork::compute_cycles`], the device cost model over the runs) and what
//! the lowering emits, so the two cannot disagree about blocks or kernels.

use ipu_device::kernels::spec::KernelSpec;
use ipu_device::{cost, Precision, Target};

use crate::tiling::layout::{canonical_dims, split_is_exact_cover};
use crate::tiling::{Graph, Op};

/// The blocks of a grid plan over the result's 2-D view `[m, n]` (every leading axis folded
/// into the rows): `row_blocks` contiguous ranges of `rows_per_block` rows (the last may be
/// shorter) by `col_blocks` equal column blocks. Tile `row_block * col_blocks + col_block`
/// holds block `(row_block, col_block)`: the planner's row-major numbering of the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockGrid {
    pub m: u32,
    pub n: u32,
    pub rows_per_block: u32,
    pub row_blocks: u32,
    pub col_blocks: u32,
}

impl BlockGrid {
    /// The block grid of plan grid `grid` (batch, row and column parts) over canonical result
    /// dims `dims`, or why the grid's blocks are not contiguous row ranges of the 2-D view by
    /// equal column blocks (the only blocks the lowering writes).
    /// [`BlockGrid::of_plan`] of a plan that also states its tile count (checked).
    pub fn of_plan_with_tiles(
        dims: [u64; 3],
        grid: [u32; 3],
        tiles: u32,
    ) -> Result<BlockGrid, String> {
        let blocks = BlockGrid::of_plan(dims, grid)?;
        if blocks.tiles() != tiles {
            return Err(format!(
                "grid {grid:?} has {} blocks, the plan says {tiles} tiles",
                blocks.tiles()
            ));
        }
        Ok(blocks)
    }

    pub fn of_plan(dims: [u64; 3], grid: [u32; 3]) -> Result<BlockGrid, String> {
        let [batches, rows, cols] = dims;
        let [batch_parts, row_parts, col_parts] = grid;
        for (axis, (&size, &parts)) in dims.iter().zip(&grid).enumerate() {
            if parts == 0 || !split_is_exact_cover(size, parts) {
                return Err(format!(
                    "grid {grid:?} leaves a block of axis {axis} (size {size}) empty"
                ));
            }
        }
        if cols % u64::from(col_parts) != 0 {
            return Err(format!(
                "grid {grid:?}: {col_parts} column blocks do not divide {cols} columns"
            ));
        }
        let whole_matrices = row_parts == 1;
        let one_matrix_per_block =
            u64::from(batch_parts) == batches && rows % u64::from(row_parts) == 0;
        let (rows_per_block, row_blocks) = if whole_matrices {
            (
                batches.div_ceil(u64::from(batch_parts)) * rows,
                u64::from(batch_parts),
            )
        } else if batches == 1 {
            (rows.div_ceil(u64::from(row_parts)), u64::from(row_parts))
        } else if one_matrix_per_block {
            (rows / u64::from(row_parts), batches * u64::from(row_parts))
        } else {
            return Err(format!(
                "grid {grid:?} over {dims:?}: a block of several matrices' partial rows is not a contiguous row range"
            ));
        };
        let to_u32 = |x: u64| {
            u32::try_from(x).map_err(|_| format!("dimension {x} of {dims:?} is too large"))
        };
        Ok(BlockGrid {
            m: to_u32(batches * rows)?,
            n: to_u32(cols)?,
            rows_per_block: to_u32(rows_per_block)?,
            row_blocks: to_u32(row_blocks)?,
            col_blocks: col_parts,
        })
    }

    pub fn cols_per_block(&self) -> u32 {
        self.n / self.col_blocks
    }

    pub fn tiles(&self) -> u32 {
        self.row_blocks * self.col_blocks
    }

    pub fn tile(&self, row_block: u32, col_block: u32) -> u32 {
        row_block * self.col_blocks + col_block
    }

    pub fn first_row(&self, row_block: u32) -> u32 {
        row_block * self.rows_per_block
    }

    /// Real rows of row block `row_block`.
    pub fn rows(&self, row_block: u32) -> u32 {
        self.rows_per_block.min(self.m - self.first_row(row_block))
    }

    /// Every `(row block, column block)`, in tile order.
    pub fn blocks(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.row_blocks).flat_map(move |i| (0..self.col_blocks).map(move |j| (i, j)))
    }
}

/// How a grid plan reads an operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperandRole {
    /// The result's shape: each tile reads its own block.
    Full,
    /// A `[n]` row (every leading axis 1): each tile reads its column block of it, broadcast
    /// over its rows.
    RowVector,
    /// A `[.., rows, 1]` column (the result's leading axes, one column): each tile reads its
    /// rows of it, broadcast over its columns.
    ColumnVector,
    /// One element, broadcast everywhere.
    Scalar,
}

/// The roles of an `ipu.map`'s inputs: each broadcasts to the result as a full-size block, a
/// row vector, a column vector or a scalar (over the canonical `[batch, rows, cols]` view);
/// or why an input broadcasts some other way (over some leading axes only).
pub fn map_roles(graph: &Graph, op: &Op) -> Result<Vec<OperandRole>, String> {
    let out = canonical_dims(&graph.values[op.results[0]].shape);
    op.operands
        .iter()
        .enumerate()
        .map(|(k, &v)| {
            let shape = &graph.values[v].shape;
            let dims = canonical_dims(shape);
            if dims == out {
                Ok(OperandRole::Full)
            } else if dims.iter().product::<u64>() == 1 {
                Ok(OperandRole::Scalar)
            } else if dims[0] * dims[1] == 1 && dims[2] == out[2] {
                Ok(OperandRole::RowVector)
            } else if dims[2] == 1 && dims[0] * dims[1] == out[0] * out[1] && out_aligned(shape, &graph.values[op.results[0]].shape) {
                Ok(OperandRole::ColumnVector)
            } else {
                Err(format!(
                    "input #{k} of shape {shape:?} broadcasts to the result {:?} over some of its leading axes only; a map reads full-size inputs, [n] rows, [.., rows, 1] columns and scalars",
                    graph.values[op.results[0]].shape
                ))
            }
        })
        .collect()
}

/// Whether `shape` equals `result` but for its last axis (1): a column of the result's rows.
fn out_aligned(shape: &[u64], result: &[u64]) -> bool {
    let strip = |s: &[u64]| -> Vec<u64> {
        let mut s = s.to_vec();
        s.pop();
        while s.first() == Some(&1) {
            s.remove(0);
        }
        s
    };
    shape.last() == Some(&1) && strip(shape) == strip(result)
}

/// The roles of `op`'s operands under a grid plan, or why the grid lowering cannot read them
/// (an add needs a full-size operand and another full-size one or a row vector; a GeLU or a
/// cast reads one full-size operand).
pub fn operand_roles(graph: &Graph, op: &Op) -> Result<Vec<OperandRole>, String> {
    let out = canonical_dims(&graph.values[op.results[0]].shape);
    let role = |v: usize| {
        let dims = canonical_dims(&graph.values[v].shape);
        if dims == out {
            Some(OperandRole::Full)
        } else if dims[0] * dims[1] == 1 && dims[2] == out[2] {
            Some(OperandRole::RowVector)
        } else {
            None
        }
    };
    let roles: Vec<Option<OperandRole>> = op.operands.iter().map(|&v| role(v)).collect();
    let any_full = roles.contains(&Some(OperandRole::Full));
    match roles.iter().copied().collect::<Option<Vec<_>>>() {
        Some(roles) if any_full && (op.operands.len() == 2 || roles[0] == OperandRole::Full) => {
            Ok(roles)
        }
        _ => Err(format!(
            "operands of shapes {:?} for a result of {:?}: only full-size operands and [{}] row vectors are read, at least one full-size",
            op.operands
                .iter()
                .map(|&v| &graph.values[v].shape)
                .collect::<Vec<_>>(),
            graph.values[op.results[0]].shape,
            out[2]
        )),
    }
}

/// An error unless every operand of `op` is of the type it computes in: work on blocks
/// converts no operands (a conversion is a plan of its own, an `ipu.cast`).
pub fn operands_of_type(graph: &Graph, op: &Op, precision: Precision) -> Result<(), String> {
    match op
        .operands
        .iter()
        .find(|&&v| graph.values[v].element != precision)
    {
        Some(&v) => Err(format!(
            "operand of type {:?} computed in {precision:?}: work on blocks converts no operands",
            graph.values[v].element
        )),
        None => Ok(()),
    }
}

/// One tile's share of a grid plan: the block it computes and the kernel call.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockRun {
    pub tile: u32,
    pub row_block: u32,
    pub col_block: u32,
    pub kernel: KernelSpec,
}

/// Everything a grid plan runs: one kernel call per block.
#[derive(Debug, Clone, PartialEq)]
pub struct GridWork {
    pub grid: BlockGrid,
    pub roles: Vec<OperandRole>,
    pub runs: Vec<BlockRun>,
}

impl GridWork {
    /// Cycles of the busiest tile's kernel calls: the device cost model over [`Self::runs`].
    pub fn compute_cycles(&self, target: &Target) -> u64 {
        let mut per_tile = vec![0u64; self.grid.tiles() as usize];
        for run in &self.runs {
            per_tile[run.tile as usize] += cost::kernel_cycles(&run.kernel, target);
        }
        per_tile.into_iter().max().unwrap_or(0)
    }

    /// The distinct kernels of the work, in first-use order.
    pub fn kernels(&self) -> Vec<KernelSpec> {
        let mut kernels: Vec<KernelSpec> = Vec::new();
        for run in &self.runs {
            if !kernels.contains(&run.kernel) {
                kernels.push(run.kernel.clone());
            }
        }
        kernels
    }
}

impl GridWork {
    /// The work of `op` on plan grid `grid` (`tiles` tiles) reading its operands as `roles`:
    /// one call of `kernel_of(rows, cols)` per block, each a kernel that exists; or why not.
    pub fn on_blocks(
        graph: &Graph,
        op: &Op,
        (grid, tiles): ([u32; 3], u32),
        roles: Vec<OperandRole>,
        kernel_of: impl Fn(u32, u32) -> Option<KernelSpec>,
    ) -> Result<GridWork, String> {
        let dims = canonical_dims(&graph.values[op.results[0]].shape);
        let blocks = BlockGrid::of_plan(dims, grid)?;
        if blocks.tiles() != tiles {
            return Err(format!(
                "grid {grid:?} has {} blocks, the plan says {tiles} tiles",
                blocks.tiles()
            ));
        }
        let mut runs = Vec::with_capacity(blocks.tiles() as usize);
        for (row_block, col_block) in blocks.blocks() {
            let shape = (blocks.rows(row_block), blocks.cols_per_block());
            let kernel = kernel_of(shape.0, shape.1)
                .ok_or_else(|| format!("block {shape:?} is too large"))?;
            kernel
                .validate()
                .map_err(|e| format!("no kernel for block {shape:?}: {e}"))?;
            runs.push(BlockRun {
                tile: blocks.tile(row_block, col_block),
                row_block,
                col_block,
                kernel,
            });
        }
        Ok(GridWork {
            grid: blocks,
            roles,
            runs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_grids_are_contiguous_row_ranges_in_planner_tile_order() {
        // One matrix: row blocks of ceil(R / parts).
        let g = BlockGrid::of_plan([1, 10, 64], [1, 4, 2]).unwrap();
        assert_eq!(
            (g.rows_per_block, g.row_blocks, g.cols_per_block()),
            (3, 4, 32)
        );
        assert_eq!((g.rows(3), g.tile(3, 1)), (1, 7));
        // Whole matrices per block.
        let g = BlockGrid::of_plan([5, 3, 16], [3, 1, 1]).unwrap();
        assert_eq!((g.m, g.rows_per_block, g.row_blocks), (15, 6, 3));
        assert_eq!(g.rows(2), 3);
        // One matrix per row of blocks, rows split evenly.
        let g = BlockGrid::of_plan([2, 4, 16], [2, 2, 1]).unwrap();
        assert_eq!((g.rows_per_block, g.row_blocks), (2, 4));
        // Every block and tile exactly once.
        let tiles: Vec<u32> = g.blocks().map(|(i, j)| g.tile(i, j)).collect();
        assert_eq!(tiles, (0..g.tiles()).collect::<Vec<_>>());
    }

    #[test]
    fn grids_the_lowering_cannot_write_are_refused_with_the_reason() {
        let err = BlockGrid::of_plan([2, 6, 16], [1, 2, 1]).unwrap_err();
        assert!(err.contains("not a contiguous row range"), "{err}");
        let err = BlockGrid::of_plan([1, 4, 24], [1, 1, 5]).unwrap_err();
        assert!(
            err.contains("empty") || err.contains("do not divide"),
            "{err}"
        );
        let err = BlockGrid::of_plan([1, 4, 48], [1, 1, 32]).unwrap_err();
        assert!(err.contains("empty"), "{err}");
        // One matrix per block row, but rows that do not split evenly.
        let err = BlockGrid::of_plan([2, 5, 16], [2, 2, 1]).unwrap_err();
        assert!(err.contains("not a contiguous"), "{err}");
    }
}
