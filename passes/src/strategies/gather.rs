//! The gather strategy: `ipu.slice` and `ipu.concat` as a row gather (and the broadcasts the
//! pointwise strategy has no kernel for).
//!
//! The result lives on a `[batch, rows, 1]` grid over its canonical shape (whole rows per
//! tile, as a row copy). Each result row is made of pieces of operand rows: a slice's row is
//! one input row's window (its columns from the last axis' offset by its stride), a concat's
//! row is a row of one operand (joined on a leading axis) or a row of each, side by side
//! (joined on the last axis). [`row_pieces`] says which, for the planner and the lowering
//! alike; each tile fetches its rows' pieces in one exchange phase.
//!
//! The planner prices what each tile reads with a block need of each operand: exact where the
//! slice takes an aligned chunk of a canonical axis (a `q`/`k`/`v` split of a fused
//! projection), otherwise each operand split like the result (right in volume for a concat,
//! an overestimate by the sliced fraction for an unaligned slice).

use ipu_device::kernels::spec::KernelSpec;
use ipu_device::{cost, Target};
use ipu_dialects::plan::{GatherPlan, OperatorPlan};
use smallvec::SmallVec;

use crate::strategies::blocks::BlockGrid;
use crate::strategies::rearrange::whole_matrix_counts;
use crate::tiling::candidate::{grid3, grids, Candidate, Need};
use crate::tiling::layout::{canonical_dims, Owners, Shards};
use crate::tiling::{Graph, Op, OpKind, Origin, ValueFormat};

/// A piece of a result row: `width` elements of row `row` of operand `operand` (its 2-D view),
/// from column `col` by `col_stride`, written from column `dest` of the result row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    pub operand: usize,
    pub row: u64,
    pub col: u64,
    pub col_stride: u64,
    pub width: u64,
    pub dest: u64,
}

/// Row-major strides of `shape`'s leading axes (all but the last), in rows.
fn row_strides(shape: &[u64]) -> Vec<u64> {
    let lead = shape.len().saturating_sub(1);
    let mut strides = vec![1u64; lead];
    for a in (0..lead.saturating_sub(1)).rev() {
        strides[a] = strides[a + 1] * shape[a + 1];
    }
    strides
}

/// Result row `row`'s multi-index over the leading axes of `shape`.
fn leading_index(shape: &[u64], row: u64) -> SmallVec<[u64; 6]> {
    let lead = shape.len().saturating_sub(1);
    let mut index: SmallVec<[u64; 6]> = smallvec::smallvec![0; lead];
    let mut rest = row;
    for a in (0..lead).rev() {
        index[a] = rest % shape[a].max(1);
        rest /= shape[a].max(1);
    }
    index
}

/// The pieces of result row `row` of `op` (an `ipu.slice` or `ipu.concat` of `graph`), in
/// order of their result columns. Rank-0 values are one row of one element.
pub fn row_pieces(graph: &Graph, op: &Op, row: u64) -> SmallVec<[Piece; 2]> {
    let out_shape = &graph.values[op.results[0]].shape;
    let rank = out_shape.len();
    let width = |shape: &[u64]| shape.last().copied().unwrap_or(1);
    let index = leading_index(out_shape, row);
    match &op.kind {
        OpKind::Slice { offsets, strides } => {
            let in_shape = &graph.values[op.operands[0]].shape;
            let in_strides = row_strides(in_shape);
            let source: u64 = (0..rank.saturating_sub(1))
                .map(|a| (offsets[a] + index[a] * strides[a]) * in_strides[a])
                .sum();
            let (col, col_stride) = match rank {
                0 => (0, 1),
                _ => (offsets[rank - 1], strides[rank - 1]),
            };
            smallvec::smallvec![Piece {
                operand: 0,
                row: source,
                col,
                col_stride,
                width: width(out_shape),
                dest: 0,
            }]
        }
        OpKind::Concat { axis } => {
            let lhs = &graph.values[op.operands[0]].shape;
            let rhs = &graph.values[op.operands[1]].shape;
            if *axis + 1 == rank {
                // Side by side: row `row` of each.
                let whole = |operand: usize, shape: &[u64], dest: u64| Piece {
                    operand,
                    row,
                    col: 0,
                    col_stride: 1,
                    width: width(shape),
                    dest,
                };
                return smallvec::smallvec![whole(0, lhs, 0), whole(1, rhs, width(lhs))];
            }
            let (operand, shape, shift) = if index[*axis] < lhs[*axis] {
                (0, lhs, 0)
            } else {
                (1, rhs, lhs[*axis])
            };
            let strides = row_strides(shape);
            let source: u64 = (0..rank - 1)
                .map(|a| (index[a] - if a == *axis { shift } else { 0 }) * strides[a])
                .sum();
            smallvec::smallvec![Piece {
                operand,
                row: source,
                col: 0,
                col_stride: 1,
                width: width(shape),
                dest: 0,
            }]
        }
        OpKind::Broadcast => {
            // NumPy broadcasting: the input's axes align with the result's last ones; a size-1
            // axis reads index 0 (a broadcast last axis reads its one element `width` times).
            let in_shape = &graph.values[op.operands[0]].shape;
            let skip = rank - in_shape.len();
            let strides = row_strides(in_shape);
            let source: u64 = (skip..rank.saturating_sub(1))
                .filter(|&a| in_shape[a - skip] != 1)
                .map(|a| index[a] * strides[a - skip])
                .sum();
            let repeated = in_shape.last().copied().unwrap_or(1) == 1 && width(out_shape) != 1;
            smallvec::smallvec![Piece {
                operand: 0,
                row: source,
                col: 0,
                col_stride: if repeated { 0 } else { 1 },
                width: width(out_shape),
                dest: 0,
            }]
        }
        _ => SmallVec::new(),
    }
}

/// The fetches of result rows `[first, end)` of `op` (result rows `width` wide):
/// `(result row, piece, rows)`, a piece of `rows > 1` being that many consecutive whole rows of
/// one operand (one fetch). What the lowering fetches and the planner prices, block by block.
pub fn block_fetches(
    graph: &Graph,
    op: &Op,
    (first, end): (u64, u64),
    width: u64,
) -> Vec<(u64, Piece, u64)> {
    let mut out = Vec::new();
    let mut row = first;
    while row < end {
        let pieces = row_pieces(graph, op, row);
        if let [piece] = pieces.as_slice() {
            if piece.col == 0 && piece.col_stride == 1 && piece.width == width {
                let mut count = 1;
                while row + count < end {
                    match row_pieces(graph, op, row + count).as_slice() {
                        [p] if p.operand == piece.operand
                            && p.row == piece.row + count
                            && p.col == 0
                            && p.width == width =>
                        {
                            count += 1
                        }
                        _ => break,
                    }
                }
                out.push((row, *piece, count));
                row += count;
                continue;
            }
        }
        out.extend(pieces.into_iter().map(|piece| (row, piece, 1)));
        row += 1;
    }
    out
}

/// The copies the busiest tile (the first block, the largest) of `blocks` runs if its pieces
/// are on the tile already: one per fetch, one per element of a strided window. An upper
/// bound: pieces that arrive by exchange are received in place.
pub fn block_copies(
    graph: &Graph,
    op: &Op,
    blocks: &BlockGrid,
    element_bytes: u32,
) -> Vec<KernelSpec> {
    let rows = u64::from(blocks.rows(0));
    let mut copies = Vec::new();
    for (_, piece, count) in block_fetches(graph, op, (0, rows), u64::from(blocks.n)) {
        let bytes =
            u32::try_from(piece.width * count * u64::from(element_bytes)).unwrap_or(u32::MAX);
        if piece.col_stride == 1 {
            copies.push(KernelSpec::Copy { bytes });
        } else {
            copies.extend((0..piece.width).map(|_| KernelSpec::Copy {
                bytes: element_bytes,
            }));
        }
    }
    copies
}

/// The blocks of a gather plan over the result's canonical dims, or why the lowering cannot
/// follow it (whole rows on a `[batch, rows, 1]` grid whose blocks are the plan's tiles).
pub fn planned_blocks(dims: [u64; 3], plan: &GatherPlan) -> Result<BlockGrid, String> {
    if plan.grid[2] != 1 {
        return Err(format!(
            "a row gather holds whole rows on a [batch, rows, 1] grid, not {:?}",
            plan.grid
        ));
    }
    BlockGrid::of_plan_with_tiles(dims, plan.grid, plan.tiles)
}

/// For a slice whose window on canonical axis `axis` is the aligned chunk `k` of `chunks`
/// (the input axis `chunks` times the result's, the window contiguous and starting at a
/// multiple of its size), `Some((k, chunks))`.
fn aligned_chunk(graph: &Graph, op: &Op, axis: usize) -> Option<(u64, u64)> {
    let OpKind::Slice { offsets, strides } = &op.kind else {
        return None;
    };
    let in_shape = &graph.values[op.operands[0]].shape;
    let out_shape = &graph.values[op.results[0]].shape;
    let (in_dims, out_dims) = (canonical_dims(in_shape), canonical_dims(out_shape));
    let (size, whole) = (out_dims[axis], in_dims[axis]);
    if size == 0 || !whole.is_multiple_of(size) || whole == size {
        return None;
    }
    // The input axes folded into canonical axis `axis` (the tensor's own axes from the end).
    let rank = in_shape.len();
    let axes: Vec<usize> = match (rank, axis) {
        (0, _) => return None,
        (_, 2) => vec![rank - 1],
        (1, _) => return None,
        (_, 1) => vec![rank - 2],
        (2, 0) => return None,
        (_, _) => (0..rank - 2).collect(),
    };
    // Contiguous: along the folded axes, the axes outside the outermost sliced one have size
    // 1, the ones inside are whole, and it is unit-strided (then the window is `size`
    // consecutive indices).
    let outer = axes.iter().position(|&a| out_shape[a] != in_shape[a])?;
    let contiguous = axes[..outer].iter().all(|&a| in_shape[a] == 1)
        && axes[outer + 1..]
            .iter()
            .all(|&a| out_shape[a] == in_shape[a])
        && (strides[axes[outer]] == 1 || out_shape[axes[outer]] == 1);
    if !contiguous {
        return None;
    }
    let inner: u64 = axes[outer + 1..].iter().map(|&a| in_shape[a]).product();
    let start = offsets[axes[outer]] * inner;
    start
        .is_multiple_of(size)
        .then_some((start / size, whole / size))
}

/// What the tiles of `grid` (over the result's canonical dims) read of operand `position`: see
/// the module docs.
pub fn operand_need(graph: &Graph, op: &Op, position: usize, grid: [u32; 3]) -> Shards {
    let value = &graph.values[op.operands[position]];
    let dims = canonical_dims(&value.shape);
    let bytes = value.element.bytes();
    let mut need = Shards::needed_by_grid(dims, bytes, &grid, &[Some(0), Some(1), Some(2)]);
    // A host operand is homed where it is needed: every block must have a reader (a slice's
    // host input is streamed whole).
    let on_device = matches!(value.origin, Origin::Op(_));
    let Some((axis, (chunk, chunks))) = (0..3)
        .find_map(|axis| aligned_chunk(graph, op, axis).map(|c| (axis, c)))
        .filter(|_| on_device)
    else {
        return need;
    };
    // The chunk's blocks are the result's blocks; the other chunks are read by no tile.
    let mut parts = need.parts;
    parts[axis] = parts[axis].max(1) * chunks as u32;
    let blocks = parts.iter().map(|&p| p.max(1)).product::<u32>() as usize;
    let mut owners = vec![Owners::new(); blocks];
    for (block, readers) in need.owners.iter().enumerate() {
        let mut c = need.block_coordinates(block);
        c[axis] += chunk as u32 * need.parts[axis].max(1);
        let index = ((c[0] * parts[1].max(1) + c[1]) * parts[2].max(1) + c[2]) as usize;
        owners[index] = readers.clone();
    }
    need = Shards {
        parts,
        owners: owners.into(),
        ..need
    };
    need
}

/// The candidates of `op` (an `ipu.slice`, `ipu.concat`, or an `ipu.broadcast` the pointwise
/// strategy cannot run, e.g. a matrix over a new batch axis): a row gather on every row grid of
/// the result over the active tile counts, and whole matrices spread over any number of tiles.
pub fn candidates(graph: &Graph, op: &Op, active: &[u32], target: &Target) -> Vec<Candidate> {
    if !matches!(
        op.kind,
        OpKind::Slice { .. } | OpKind::Concat { .. } | OpKind::Broadcast
    ) {
        return Vec::new();
    }
    let result = &graph.values[op.results[0]];
    let precision = result.element;
    let format = ValueFormat::row_major(precision);
    let out_dims = canonical_dims(&result.shape);
    if out_dims.contains(&0) {
        return Vec::new();
    }
    let mut candidate_grids = grids(active, &[out_dims[0], out_dims[1], 1]);
    for tiles in whole_matrix_counts(out_dims[0], active) {
        let grid = vec![tiles, 1, 1];
        if !candidate_grids.contains(&grid) {
            candidate_grids.push(grid);
        }
    }
    let mut out = Vec::new();
    for grid in candidate_grids {
        let plan = GatherPlan {
            grid: grid3(&grid),
            tiles: grid.iter().product(),
        };
        let Ok(blocks) = planned_blocks(out_dims, &plan) else {
            continue;
        };
        let copies = block_copies(graph, op, &blocks, precision.bytes());
        let compute_cycles = copies
            .iter()
            .map(|spec| cost::kernel_cycles(spec, target))
            .sum();
        let mut kernels = copies;
        kernels.sort_unstable_by_key(|spec| format!("{spec:?}"));
        kernels.dedup();
        let needs = (0..op.operands.len())
            .map(|position| Need {
                shards: operand_need(graph, op, position, plan.grid),
                format,
            })
            .collect();
        out.push(Candidate {
            compute_cycles,
            kernels,
            ..Candidate::new(
                OperatorPlan::Gather(plan),
                blocks.tiles(),
                needs,
                Need::on_grid(&result.shape, out_dims, &grid, format),
            )
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipu_device::Precision;

    /// `[3, 16, 64] -> [1, 16, 64]` at `offset` of a device value (the PyTorch q/k/v split),
    /// and the graph's ops.
    fn qkv_split(offset: u64) -> (Graph, usize) {
        let mut graph = Graph::default();
        let x = graph.add_value(vec![3, 16, 64], Precision::F16, Origin::Argument);
        let fused = graph.add_op(
            OpKind::Gelu { tanh: true },
            vec![x],
            vec![3, 16, 64],
            Precision::F16,
        );
        let kind = OpKind::Slice {
            offsets: vec![offset, 0, 0],
            strides: vec![1, 1, 1],
        };
        let y = graph.add_op(kind, vec![fused], vec![1, 16, 64], Precision::F16);
        graph.outputs.push(y);
        (graph, 1)
    }

    #[test]
    fn an_aligned_chunk_is_read_by_the_result_tiles_only() {
        let (graph, index) = qkv_split(2);
        let op = &graph.ops[index];
        // Canonical [3, 16, 64] -> [1, 16, 64]: chunk 2 of 3 on the batch axis.
        assert_eq!(aligned_chunk(&graph, op, 0), Some((2, 3)));
        assert_eq!(aligned_chunk(&graph, op, 1), None);
        let need = operand_need(&graph, op, 0, [1, 4, 1]);
        assert_eq!(need.parts, [3, 4, 1]);
        for (block, owners) in need.owners.iter().enumerate() {
            let expected: Vec<u32> = if block >= 8 {
                vec![block as u32 - 8]
            } else {
                vec![]
            };
            assert_eq!(owners.to_vec(), expected, "block {block}");
        }
        // Each tile receives exactly its block of the window: 4 of the 16 rows of 64.
        let source = Shards::homed([3, 16, 64], [1, 1, 1], 2, 100);
        let mut received = vec![0u64; 4];
        crate::tiling::layout::for_each_transfer(&source, &need, |_, tiles, bytes| {
            for &tile in tiles {
                received[tile as usize] += bytes;
            }
        });
        assert_eq!(received, vec![4 * 64 * 2; 4]);
    }

    #[test]
    fn row_pieces_follow_the_window_and_the_join() {
        let (graph, index) = qkv_split(1);
        let op = &graph.ops[index];
        let piece = row_pieces(&graph, op, 5)[0];
        assert_eq!((piece.row, piece.col, piece.width), (21, 0, 64));
        // A strided window of columns and a join on the last axis.
        let mut graph = Graph::default();
        let x = graph.add_value(vec![8, 96], Precision::F32, Origin::Argument);
        let kind = OpKind::Slice {
            offsets: vec![1, 3],
            strides: vec![2, 5],
        };
        let s = graph.add_op(kind, vec![x], vec![4, 18], Precision::F32);
        let c = graph.add_op(
            OpKind::Concat { axis: 1 },
            vec![s, s],
            vec![4, 36],
            Precision::F32,
        );
        graph.outputs.push(c);
        let piece = row_pieces(&graph, &graph.ops[0], 2)[0];
        assert_eq!(
            (piece.row, piece.col, piece.col_stride, piece.width),
            (5, 3, 5, 18)
        );
        let pieces = row_pieces(&graph, &graph.ops[1], 3);
        assert_eq!(pieces.len(), 2);
        assert_eq!(
            (pieces[1].operand, pieces[1].row, pieces[1].dest),
            (1, 3, 18)
        );
        // A strided window is fetched element by element: 18 copies of one element.
        let blocks = planned_blocks(
            [1, 4, 18],
            &GatherPlan {
                grid: [1, 2, 1],
                tiles: 2,
            },
        )
        .unwrap();
        let copies = block_copies(&graph, &graph.ops[0], &blocks, 4);
        assert_eq!(copies, vec![KernelSpec::Copy { bytes: 4 }; 36]);
    }

    #[test]
    fn whole_rows_of_one_operand_are_one_fetch() {
        // [1, 32] and [24, 32] joined on rows: rows 1..24 of a block come from the second part.
        let mut graph = Graph::default();
        let a = graph.add_value(vec![1, 32], Precision::F16, Origin::Argument);
        let b = graph.add_value(vec![24, 32], Precision::F16, Origin::Argument);
        let c = graph.add_op(
            OpKind::Concat { axis: 0 },
            vec![a, b],
            vec![25, 32],
            Precision::F16,
        );
        graph.outputs.push(c);
        let fetches = block_fetches(&graph, &graph.ops[0], (0, 13), 32);
        let rows: Vec<(u64, usize, u64, u64)> = fetches
            .iter()
            .map(|(row, piece, count)| (*row, piece.operand, piece.row, *count))
            .collect();
        assert_eq!(rows, vec![(0, 0, 0, 1), (1, 1, 0, 12)]);
        let target = Target::c600();
        let candidates = candidates(&graph, &graph.ops[0], &[4], &target);
        assert!(!candidates.is_empty());
        assert!(candidates.iter().all(|c| matches!(
            c.plan,
            OperatorPlan::Gather(GatherPlan {
                grid: [_, _, 1],
                ..
            })
        )));
    }
}
