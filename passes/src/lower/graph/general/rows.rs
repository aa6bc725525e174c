//! Row ops without a plan, permutations and batched transposes, casts without a plan.

use super::*;
use crate::strategies::blocks::BlockGrid;
use crate::strategies::rearrange::{
    planned_transpose, row_copy_grid, swaps_last_two, transpose_work,
};
use crate::strategies::reshape::{planned_view, relabels};
use crate::tiling::layout::canonical_dims;

impl Lowering<'_> {
    /// `ipu.layer_norm` and `ipu.softmax`: per tile over whole rows.
    pub(in crate::lower::graph) fn row_op(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let kind = op.kind.clone();
        let (x, out) = (op.operands[0], op.results[0]);
        let operands = op.operands.clone();
        let (input, mut runs) = self.as_rows(index, x)?;
        let grid = input.grid.clone();
        let precision = input.precision;
        let result = self.result_buffer(index, &grid, precision);
        let tiles = grid.tiles();
        let mut transfers = Transfers::default();
        let params = match &kind {
            OpKind::LayerNorm { epsilon } => {
                let gamma = self.broadcast_vector(
                    index,
                    "gamma",
                    operands[1],
                    grid.n,
                    &tiles,
                    &mut transfers,
                )?;
                let beta = self.broadcast_vector(
                    index,
                    "beta",
                    operands[2],
                    grid.n,
                    &tiles,
                    &mut transfers,
                )?;
                Some((gamma, beta, crate::strategies::rows::epsilon_nano(*epsilon)))
            }
            _ => None,
        };
        runs.extend(self.flush(transfers));
        for i in 0..grid.mb {
            let rows = grid.rows(i);
            let tile = grid.tile(i, 0);
            let (spec, args) = match params {
                Some((gamma, beta, epsilon_nano)) => (
                    KernelSpec::LayerNorm {
                        precision,
                        rows,
                        cols: grid.n,
                        epsilon_nano,
                    },
                    vec![
                        address(input.buffer, 0),
                        address(gamma, 0),
                        address(beta, 0),
                        address(result, 0),
                    ],
                ),
                None => (
                    KernelSpec::Softmax {
                        precision,
                        rows,
                        cols: grid.n,
                        causal: false,
                    },
                    vec![address(input.buffer, 0), address(result, 0), Arg::Value(0)],
                ),
            };
            runs.push(Run {
                tile,
                kernel: self.program.kernel(spec),
                args,
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, kind.name(), runs, out, blocks);
        Ok(())
    }

    /// `ipu.rearrange`: a layout-only rearrange keeps the value; a permutation that keeps the
    /// last axis gathers rows.
    /// `ipu.reshape` as its plan's view ([`reshape_view`]): the input on the planned row grid
    /// (a host input is streamed in those blocks), the result the same buffers read with the
    /// result's row width. Unplanned, the input's own row blocks (gathered to whole rows first
    /// if it has column blocks) when they are whole rows of the result.
    pub(in crate::lower::graph) fn reshape(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, out) = (op.operands[0], op.results[0]);
        let (_, width) = view_2d(&self.graph.values[out].shape)?;
        let dims = |v: usize| canonical_dims(&self.graph.values[v].shape);
        if relabels(dims(x), dims(out)) {
            // Unit axes added or dropped: the input's blocks as they are (a host input streamed
            // in the plan's row blocks when it has them).
            let rows = match plan {
                None => None,
                Some(OperatorPlan::Reshape(reshape)) if reshape.tiles <= self.tiles => {
                    let blocks =
                        BlockGrid::of_plan_with_tiles(dims(out), reshape.grid, reshape.tiles)
                            .map_err(|why| not_followed("ipu.reshape", index, plan, why))?;
                    (reshape.grid[2] == 1).then_some(blocks.rows_per_block)
                }
                Some(OperatorPlan::Reshape(reshape)) => {
                    return Err(not_followed(
                        "ipu.reshape",
                        index,
                        plan,
                        format!(
                            "it needs {} tiles, the lowering has {}",
                            reshape.tiles, self.tiles
                        ),
                    ))
                }
                Some(_) => {
                    return Err(not_followed(
                        "ipu.reshape",
                        index,
                        plan,
                        "not a reshape plan".to_string(),
                    ))
                }
            };
            let source = self.on_device_in(x, rows)?;
            self.alias(index, "ipu.reshape", out, source);
            self.push_compute(self.provenance(index), Vec::new());
            return Ok(());
        }
        let view = match plan {
            None => None,
            Some(OperatorPlan::Reshape(reshape)) if reshape.tiles > self.tiles => {
                Some(Err(format!(
                    "it needs {} tiles, the lowering has {}",
                    reshape.tiles, self.tiles
                )))
            }
            Some(OperatorPlan::Reshape(reshape)) => Some(planned_view(self.graph, op, reshape)),
            Some(_) => Some(Err("not a reshape plan".to_string())),
        }
        .transpose()
        .map_err(|why| not_followed("ipu.reshape", index, plan, why))?;
        let source = match view {
            Some(view) => {
                let source = self.on_device_in(x, Some(view.input.rows_per_block))?;
                let grid = &source.grid;
                let on_plan = grid.nb == 1
                    && grid.rows_padded == view.input.rows_per_block
                    && grid.mb == view.input.row_blocks;
                if on_plan {
                    source
                } else {
                    // The producer left it in another layout: converted into the planned row
                    // grid first (the conversion the planner priced for this operand).
                    let rows = view.input.rows_per_block;
                    let (source, copies) = self.rows_of(index, "rows", source, rows)?;
                    if !copies.is_empty() {
                        self.push_compute(format!("{}.rows", self.provenance(index)), copies);
                    }
                    source
                }
            }
            None => {
                let (source, copies) = self.as_rows(index, x)?;
                if !copies.is_empty() {
                    self.push_compute(format!("{}.rows", self.provenance(index)), copies);
                }
                source
            }
        };
        let elements = source.grid.rows_padded * source.grid.n;
        if !elements.is_multiple_of(width) {
            return Err(unsupported(
                "ipu.reshape",
                format!("op {index}: blocks of {elements} elements are not whole rows of {width}"),
            ));
        }
        let grid = row_grid(
            source.grid.m * source.grid.n / width,
            width,
            elements / width,
        );
        let blocks = Blocks {
            grid,
            buffer: source.buffer,
            precision: source.precision,
        };
        self.alias(index, "ipu.reshape", out, blocks);
        // No work; an empty step gives the op its (zero-cycle) profile entry.
        self.push_compute(self.provenance(index), Vec::new());
        Ok(())
    }

    pub(in crate::lower::graph) fn rearrange(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let OpKind::Rearrange { permutation } = &op.kind else {
            unreachable!("rearrange() is called for ipu.rearrange")
        };
        let permutation = permutation.clone();
        let (x, out) = (op.operands[0], op.results[0]);
        let in_shape = self.graph.values[x].shape.clone();
        let rank = in_shape.len();
        if permutation
            .as_deref()
            .is_some_and(|p| swaps_last_two(p, rank))
        {
            return self.batched_transpose(index, plan);
        }
        // The rows plan's blocks (a planned rearrange is a row copy, an identity one too).
        let planned = match plan {
            None => None,
            Some(OperatorPlan::Rearrange(rearrange)) => {
                let dims = canonical_dims(&self.graph.values[out].shape);
                Some(row_copy_grid(dims, rearrange))
            }
            Some(_) => Some(Err("not a rearrange plan".to_string())),
        }
        .transpose()
        .map_err(|why| not_followed("ipu.rearrange", index, plan, why))?;
        let identity = (0..rank).collect::<Vec<_>>();
        let permutation = match permutation.filter(|p| *p != identity) {
            Some(permutation) => permutation,
            None if planned.is_some() => identity,
            None => {
                let source = self.on_device(x)?;
                self.alias(index, "ipu.rearrange", out, source);
                return Ok(());
            }
        };
        if permutation.len() != rank || permutation.last() != Some(&(rank - 1)) {
            return Err(unsupported(
                "ipu.rearrange",
                format!(
                    "op {index}: permutation {permutation:?} of shape {in_shape:?} moves the last axis; only permutations of the leading axes and swaps of the last two axes are lowered"
                ),
            ));
        }
        let out_shape: Vec<u64> = permutation.iter().map(|&a| in_shape[a]).collect();
        let precision = self.graph.values[x].element;
        let (m, n) = view_2d(&in_shape)?;
        let grid = match &planned {
            Some(blocks) => gemm_grid(blocks),
            None => row_grid(m, n, m.div_ceil(self.tiles.min(m))),
        };
        let result = self.result_buffer(index, &grid, precision);
        let e = precision.bytes();
        // Row-major strides of the input's leading axes.
        let lead = rank - 1;
        let mut in_strides = vec![1u64; lead];
        for a in (0..lead.saturating_sub(1)).rev() {
            in_strides[a] = in_strides[a + 1] * in_shape[a + 1];
        }
        let source_row = |row: u32| {
            // Output row `row` as a multi-index over the output's leading axes.
            let mut rest = u64::from(row);
            let mut source_row = 0u64;
            for a in (0..lead).rev() {
                let index_a = rest % out_shape[a];
                rest /= out_shape[a];
                source_row += index_a * in_strides[permutation[a]];
            }
            source_row
        };
        // A host input is written by the host row by row where the result holds it (the
        // planner homes host values where their reader reads them); a device value's rows
        // are gathered.
        let host = !self.placed.contains_key(&x) && planned.is_some();
        let mut transfers = Transfers::default();
        let mut pieces = Vec::new();
        let source = if host { None } else { Some(self.on_device(x)?) };
        for row in 0..m {
            let i = row / grid.rows_padded;
            let place = Place::at(result, (row - grid.first_row(i)) * n * e);
            let from = source_row(row);
            match &source {
                None => pieces.push(HostPiece::contiguous(
                    grid.tile(i, 0),
                    place,
                    from * u64::from(n * e),
                    n * e,
                )),
                Some(source) => transfers.gather(
                    source,
                    Fetch::rows(grid.tile(i, 0), (to_u32(from)?, 1), n, place),
                ),
            }
        }
        if host {
            self.stream(x, pieces)?;
        }
        let runs = self.flush(transfers);
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.rearrange", runs, out, blocks);
        Ok(())
    }

    /// A batched transpose (op `index`): whole matrices per tile as its plan's work
    /// ([`planned_transpose`]) says, or without a plan as many per tile as spread them over
    /// every tile. Each tile's matrices are brought into one buffer (a host input written there,
    /// a device value gathered) and transposed one call per matrix; the result is whole
    /// transposed matrices per tile.
    pub(in crate::lower::graph) fn batched_transpose(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, out) = (op.operands[0], op.results[0]);
        let value = &self.graph.values[x];
        let (shape, precision) = (value.shape.clone(), value.element);
        let [batches, rows, cols] = crate::tiling::layout::canonical_dims(&shape);
        let work = match plan {
            Some(OperatorPlan::Rearrange(rearrange)) => {
                planned_transpose(&shape, precision, rearrange)
            }
            Some(_) => Err("not a rearrange plan".into()),
            None => {
                let per_tile = batches.div_ceil(batches.min(u64::from(self.tiles)).max(1));
                transpose_work(
                    (batches, rows, cols),
                    precision,
                    to_u32(batches.div_ceil(per_tile.max(1)))?,
                )
            }
        }
        .map_err(|why| not_followed("ipu.rearrange", index, plan, why))?;
        let (rows, cols, per_tile) = (work.rows, work.cols, work.per_tile);
        let bytes = rows * cols * precision.bytes();
        let in_grid = row_grid(work.batches * rows, cols, per_tile * rows);
        let grid = row_grid(work.batches * cols, rows, per_tile * cols);
        let mut transfers = Transfers::default();
        let matrix = self.blocks_on(index, "in", x, &in_grid, &mut transfers)?;
        let result = self.result_buffer(index, &grid, precision);
        let mut runs = self.flush(transfers);
        for b in 0..work.batches {
            let at = (b % per_tile) * bytes;
            let run = self.transpose_run(
                work.tile_of(b),
                precision,
                (rows, cols),
                (Place::at(matrix, at), Place::at(result, at)),
            );
            runs.push(run);
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.rearrange", runs, out, blocks);
        Ok(())
    }

    /// `ipu.cast`: per block, the `Cast` kernel into the result's element type, on the
    /// operand's grid. FP8 sides read and write at scale 0 (the formats' own scale); a cast
    /// naming another scale is refused.
    pub(in crate::lower::graph) fn cast(
        &mut self,
        index: usize,
        scale: i64,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, out) = (op.operands[0], op.results[0]);
        let to = self.graph.values[out].element;
        let source = self.on_device(x)?;
        let from = source.precision;
        if scale != 0 && (from.is_fp8() || to.is_fp8()) {
            return Err(unsupported(
                "ipu.cast",
                format!("op {index}: a cast with FP8 scale {scale} is not lowered (scale 0 is)"),
            ));
        }
        if from == to {
            self.alias(index, "ipu.cast", out, source);
            return Ok(());
        }
        let grid = source.grid.clone();
        let result = self.result_buffer(index, &grid, to);
        let mut runs = Vec::new();
        for (i, j) in grid.grid() {
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(KernelSpec::Cast {
                    from,
                    to,
                    elements: grid.rows(i) * grid.cb,
                }),
                args: vec![address(source.buffer, 0), address(result, 0), Arg::Value(0)],
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: to,
        };
        self.finish(index, "ipu.cast", runs, out, blocks);
        Ok(())
    }
}
