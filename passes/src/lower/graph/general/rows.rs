//! Row ops, permutations, casts and elementwise adds on the general path: whole rows or
//! matching blocks per tile.

use super::*;

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
                Some((gamma, beta, (epsilon * 1e9).round() as u32))
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
    pub(in crate::lower::graph) fn rearrange(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let OpKind::Rearrange { permutation } = &op.kind else {
            unreachable!("rearrange() is called for ipu.rearrange")
        };
        let permutation = permutation.clone();
        let (x, out) = (op.operands[0], op.results[0]);
        let in_shape = self.graph.values[x].shape.clone();
        let source = self.on_device(x)?;
        let Some(permutation) = permutation.filter(|p| p.iter().enumerate().any(|(i, &a)| i != a))
        else {
            self.alias(index, "ipu.rearrange", out, source);
            return Ok(());
        };
        let rank = in_shape.len();
        let swaps_last_two = rank >= 2
            && permutation.len() == rank
            && permutation[..rank - 2]
                .iter()
                .enumerate()
                .all(|(i, &a)| i == a)
            && permutation[rank - 2..] == [rank - 1, rank - 2];
        if swaps_last_two {
            return self.batched_transpose(index, &in_shape, source, out);
        }
        if permutation.len() != rank || permutation.last() != Some(&(rank - 1)) {
            return Err(unsupported(
                "ipu.rearrange",
                format!(
                    "op {index}: permutation {permutation:?} of shape {in_shape:?} moves the last axis; only permutations of the leading axes and swaps of the last two axes are lowered"
                ),
            ));
        }
        let out_shape: Vec<u64> = permutation.iter().map(|&a| in_shape[a]).collect();
        let (m, n) = (source.grid.m, source.grid.n);
        let grid = row_grid(m, n, m.div_ceil(self.tiles.min(m)));
        let result = self.result_buffer(index, &grid, source.precision);
        let e = source.precision.bytes();
        // Row-major strides of the input's leading axes.
        let lead = rank - 1;
        let mut in_strides = vec![1u64; lead];
        for a in (0..lead.saturating_sub(1)).rev() {
            in_strides[a] = in_strides[a + 1] * in_shape[a + 1];
        }
        let mut transfers = Transfers::default();
        for row in 0..m {
            // Output row `row` as a multi-index over the output's leading axes.
            let mut rest = u64::from(row);
            let mut source_row = 0u64;
            for a in (0..lead).rev() {
                let index_a = rest % out_shape[a];
                rest /= out_shape[a];
                source_row += index_a * in_strides[permutation[a]];
            }
            let i = row / grid.rows_padded;
            transfers.gather(
                &source,
                Fetch::rows(
                    grid.tile(i, 0),
                    (to_u32(source_row)?, 1),
                    n,
                    Place::at(result, (row - grid.first_row(i)) * n * e),
                ),
            );
        }
        let runs = self.flush(transfers);
        let blocks = Blocks {
            grid,
            buffer: result,
            precision: source.precision,
        };
        self.finish(index, "ipu.rearrange", runs, out, blocks);
        Ok(())
    }

    /// A rearrange swapping the last two axes: each tile fetches its matrices (one, or with
    /// more matrices than tiles `ceil(matrices / tiles)` consecutive ones) and transposes them.
    pub(in crate::lower::graph) fn batched_transpose(
        &mut self,
        index: usize,
        in_shape: &[u64],
        source: Blocks,
        out: ValueId,
    ) -> Result<(), LowerError> {
        let rank = in_shape.len();
        let (rows, cols) = (to_u32(in_shape[rank - 2])?, to_u32(in_shape[rank - 1])?);
        let batches = to_u32(in_shape[..rank - 2].iter().product())?;
        let per_tile = batches.div_ceil(self.tiles.max(1)).max(1);
        let precision = source.precision;
        let bytes = rows * cols * precision.bytes();
        let grid = row_grid(batches * cols, rows, per_tile * cols);
        let tiles = grid.tiles();
        let matrix = self.op_buffer(index, "in", &tiles, per_tile * bytes);
        let result = self.result_buffer(index, &grid, precision);
        let mut transfers = Transfers::default();
        for b in 0..batches {
            transfers.gather(
                &source,
                Fetch::rows(
                    grid.tile(b / per_tile, 0),
                    (b * rows, rows),
                    cols,
                    Place::at(matrix, (b % per_tile) * bytes),
                ),
            );
        }
        let mut runs = self.flush(transfers);
        for b in 0..batches {
            let at = (b % per_tile) * bytes;
            let run = self.transpose_run(
                grid.tile(b / per_tile, 0),
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
