//! `ipu.slice` and `ipu.concat`: the result's rows gathered from pieces of operand rows
//! ([`row_pieces`], the strategy's rule), on the plan's row grid.

use super::*;
use crate::strategies::gather::{block_fetches, planned_blocks};
use crate::tiling::layout::canonical_dims;

impl Lowering<'_> {
    /// A row gather (op `index`): the result on its plan's row grid (without a plan, row
    /// blocks over every tile); every result row's pieces fetched into place in one exchange
    /// phase (a piece already on the tile copied) or, from a host operand of a planned concat,
    /// written there by the host. Consecutive whole rows of one operand move as one fetch; a
    /// strided window moves element by element (the host writes it as strided runs).
    pub(in crate::lower::graph) fn gather(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let name = op.kind.name();
        let out = op.results[0];
        let out_shape = self.graph.values[out].shape.clone();
        let planned = match plan {
            None => None,
            Some(OperatorPlan::Gather(gather)) if gather.tiles > self.tiles => Some(Err(format!(
                "it needs {} tiles, the lowering has {}",
                gather.tiles, self.tiles
            ))),
            Some(OperatorPlan::Gather(gather)) => {
                Some(planned_blocks(canonical_dims(&out_shape), gather))
            }
            Some(_) => Some(Err("not a row gather plan".to_string())),
        }
        .transpose()
        .map_err(|why| not_followed(name, index, plan, why))?;
        let (m, n) = view_2d(&out_shape)?;
        if m == 0 || n == 0 {
            return Err(unsupported(
                name,
                format!("op {index}: an empty result {out_shape:?} is not lowered"),
            ));
        }
        let grid = match &planned {
            Some(blocks) => gemm_grid(blocks),
            None => row_grid(m, n, m.div_ceil(self.tiles.min(m))),
        };
        let precision = self.graph.values[out].element;
        let e = precision.bytes();
        // A host operand of a planned concat is written by the host where the result holds
        // it (the planner homes host values where their reader reads them); a slice reads
        // part of its input, and a host value is streamed whole, so it is streamed onto the
        // device first.
        let concat = matches!(op.kind, OpKind::Concat { .. });
        let mut sources = Vec::new();
        for &v in &op.operands {
            let host = !self.placed.contains_key(&v) && planned.is_some();
            sources.push(match (host, concat) {
                (true, true) => None,
                // A slice's host input in row blocks matching the result's (each tile then
                // holds the rows of its window, for a window of whole or aligned rows).
                (true, false) => {
                    let (rows, _) = view_2d(&self.graph.values[v].shape)?;
                    Some(self.on_device_in(v, Some(rows.div_ceil(grid.mb)))?)
                }
                (false, _) => Some(self.on_device(v)?),
            });
        }
        let widths: Vec<u64> = op
            .operands
            .iter()
            .map(|&v| self.graph.values[v].shape.last().copied().unwrap_or(1))
            .collect();
        let result = self.result_buffer(index, &grid, precision);
        let mut transfers = Transfers::default();
        let mut host: Vec<Vec<HostPiece>> = vec![Vec::new(); sources.len()];
        for i in 0..grid.mb {
            let (tile, first) = (grid.tile(i, 0), grid.first_row(i));
            let rows = (u64::from(first), u64::from(first + grid.rows(i)));
            for (row, piece, count) in block_fetches(self.graph, op, rows, u64::from(n)) {
                let at = (to_u32(row)? - first) * n * e;
                let (from, count) = (to_u32(piece.row)?, to_u32(count)?);
                let (col, width, dest) = (
                    to_u32(piece.col)?,
                    to_u32(piece.width)?,
                    to_u32(piece.dest)?,
                );
                let stride = to_u32(piece.col_stride)?;
                let place = Place::at(result, at + dest * e);
                let Some(source) = &sources[piece.operand] else {
                    let start = (piece.row * widths[piece.operand] + piece.col) * u64::from(e);
                    host[piece.operand].push(if stride == 1 {
                        HostPiece::contiguous(tile, place, start, count * width * e)
                    } else {
                        HostPiece {
                            tile,
                            place,
                            tensor_offset: start,
                            bytes: width * e,
                            runs: width,
                            stride: u64::from(stride * e),
                            pad: 0,
                        }
                    });
                    continue;
                };
                if stride == 1 {
                    transfers.gather(
                        source,
                        Fetch {
                            tile,
                            rows: (from, from + count),
                            cols: (col, col + width),
                            place,
                        },
                    );
                } else {
                    for k in 0..width {
                        let c = col + k * stride;
                        transfers.gather(
                            source,
                            Fetch {
                                tile,
                                rows: (from, from + 1),
                                cols: (c, c + 1),
                                place: Place::at(result, at + (dest + k) * e),
                            },
                        );
                    }
                }
            }
        }
        for (k, pieces) in host.into_iter().enumerate() {
            if !pieces.is_empty() {
                self.stream(op.operands[k], pieces)?;
            }
        }
        let runs = self.flush(transfers);
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, name, runs, out, blocks);
        Ok(())
    }
}
