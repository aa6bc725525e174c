//! The pointwise ops as their plans say: a grid plan runs exactly the work
//! [`strategies::pointwise::grid::grid_work`] gives (the work the planner priced), an in-place
//! plan on the blocks of the operand it follows, a ranged plan on a split GEMM's ranges. A
//! plan the lowering cannot follow is an error at the op naming the plan and why.

use ipu_dialects::plan::{OperatorPlan, PointwisePlacement, PointwisePlan};

use super::super::general::{Fetch, Transfers};
use super::super::*;
use crate::strategies::blocks::{operand_roles, GridWork, OperandRole};
use crate::strategies::pointwise::grid::grid_work;
use crate::strategies::pointwise::in_place_position;
use crate::strategies::rows::rows_work;
use crate::tiling::layout::host_home;
use crate::tiling::Shards;

impl Lowering<'_> {
    /// `ipu.add`, `ipu.gelu` or `ipu.cast` (op `index`) by its selected plan; without one
    /// (a graph lowered without planning), where its operands are.
    pub(in crate::lower::graph) fn pointwise(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let name = op.kind.name();
        let cannot = |plan: &OperatorPlan, why: String| not_followed(name, index, Some(plan), why);
        // A product in waves left its result on its tiles or homes: a GeLU runs there.
        if op.operands.iter().any(|v| self.waves.contains_key(v)) {
            return match plan {
                Some(plan @ OperatorPlan::Pointwise(p))
                    if p.placement != PointwisePlacement::InPlace =>
                {
                    Err(cannot(
                        plan,
                        "its operand is a product in waves, which a GeLU reads in place".into(),
                    ))
                }
                _ => self.waves_gelu(index),
            };
        }
        let plan = match plan {
            None => return self.unplanned_pointwise(index),
            Some(OperatorPlan::Pointwise(plan)) => plan,
            Some(other) => return Err(cannot(other, "not a pointwise plan".into())),
        };
        match plan.placement {
            PointwisePlacement::Grid { .. } => self.pointwise_grid(index, plan),
            PointwisePlacement::Ranged => {
                let ranged = op.operands.iter().any(|v| self.ranged.contains_key(v));
                if !ranged || matches!(op.kind, OpKind::Cast { .. }) {
                    return Err(cannot(
                        &OperatorPlan::Pointwise(plan.clone()),
                        "no operand is a split GEMM's reduced ranges".into(),
                    ));
                }
                self.unplanned_pointwise(index)
            }
            PointwisePlacement::InPlace => {
                let on_device = |v: usize| self.placed.contains_key(&v);
                let position = in_place_position(self.graph, op, on_device)
                    .filter(|_| !op.operands.iter().any(|v| self.ranged.contains_key(v)))
                    .ok_or_else(|| {
                        cannot(
                            &OperatorPlan::Pointwise(plan.clone()),
                            "no full-size operand is on the device in blocks".into(),
                        )
                    })?;
                match op.kind {
                    OpKind::Add => self.in_place_add(index, position),
                    _ => self.unplanned_pointwise(index),
                }
            }
        }
    }

    /// `ipu.softmax` or `ipu.layer_norm` (op `index`) by its selected rows plan: exactly the
    /// work [`rows_work`] gives; without a plan, on whole rows where its input is.
    pub(in crate::lower::graph) fn rows(
        &mut self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let name = op.kind.name();
        let work = match plan {
            None => return self.row_op(index),
            Some(OperatorPlan::Rows(rows)) => rows_work(self.graph, op, rows),
            Some(_) => Err("not a rows plan".into()),
        }
        .map_err(|why| not_followed(name, index, plan, why))?;
        self.emit_grid_work(index, &work, |k| {
            ["input", "gamma", "beta"][k.min(2)].to_string()
        })
    }

    fn unplanned_pointwise(&mut self, index: usize) -> Result<(), LowerError> {
        match self.graph.ops[index].kind {
            OpKind::Add => self.add(index),
            OpKind::Gelu { tanh } => self.gelu(index, tanh),
            OpKind::Cast { scale } => self.cast(index, scale),
            _ => unreachable!("pointwise is called for elementwise ops only"),
        }
    }

    /// A grid plan: each operand brought onto the plan's blocks (a host value written there
    /// by the host, a device value gathered in one exchange phase, a row vector's column
    /// blocks to every tile of the column), then one kernel call per block.
    fn pointwise_grid(&mut self, index: usize, plan: &PointwisePlan) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let work = grid_work(self.graph, op, plan).map_err(|why| {
            let plan = OperatorPlan::Pointwise(plan.clone());
            not_followed(op.kind.name(), index, Some(&plan), why)
        })?;
        self.emit_grid_work(index, &work, |k| format!("operand{k}"))
    }

    /// Emits `work` for op `index`: each operand brought onto the work's blocks (a full-size
    /// one by [`Self::blocks_on`], a row vector by [`Self::row_on`] into buffer
    /// `<op>.<name_of(k)>`) in one exchange phase, then the work's kernel calls, reading the
    /// full-size operand first, then the others in order, then writing the result (a cast
    /// and a softmax take a trailing 0: the FP8 scale, the causal offset).
    pub(in crate::lower::graph) fn emit_grid_work(
        &mut self,
        index: usize,
        work: &GridWork,
        name_of: impl Fn(usize) -> String,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let name = op.kind.name();
        let grid = gemm_grid(&work.grid);
        let (operands, out) = (op.operands.clone(), op.results[0]);
        let mut transfers = Transfers::default();
        let mut inputs = Vec::new();
        let map = matches!(op.kind, OpKind::Map { .. } | OpKind::Broadcast);
        for (k, (&value, role)) in operands.iter().zip(&work.roles).enumerate() {
            let what = name_of(k);
            inputs.push(match role {
                OperandRole::Full => {
                    // A reduction reads whole rows of its input: the result's row blocks,
                    // the input's columns.
                    let cols =
                        crate::tiling::layout::canonical_dims(&self.graph.values[value].shape)[2]
                            as u32;
                    let input_grid = if cols == grid.n {
                        grid.clone()
                    } else {
                        GemmGrid {
                            n: cols,
                            k: cols,
                            kb: cols,
                            cb: cols,
                            ..grid.clone()
                        }
                    };
                    self.blocks_on(index, &what, value, &input_grid, &mut transfers)?
                }
                OperandRole::RowVector => {
                    self.row_on(index, &what, value, &grid, &mut transfers)?
                }
                OperandRole::ColumnVector | OperandRole::Scalar => {
                    self.small_on(index, &what, value, &grid, *role, &mut transfers)?
                }
            });
        }
        // The fixed-operand kernels read the full-size operand first; a map's inputs keep
        // their order (its body numbers them).
        if let Some(full) = work.roles.iter().position(|&r| r == OperandRole::Full) {
            if !map {
                let first = inputs.remove(full);
                inputs.insert(0, first);
            }
        }
        let precision = self.graph.values[out].element;
        let result = self.result_buffer(index, &grid, precision);
        let mut runs = self.flush(transfers);
        for run in &work.runs {
            let mut args: Vec<Arg> = inputs
                .iter()
                .map(|&buffer| Arg::Address(Place::at(buffer, 0)))
                .collect();
            args.push(Arg::Address(Place::at(result, 0)));
            if matches!(
                run.kernel,
                KernelSpec::Cast { .. } | KernelSpec::Softmax { .. }
            ) {
                args.push(Arg::Value(0));
            }
            if map {
                // The block's first row (leading axes folded) and column, for element indices.
                args.push(Arg::Value(grid.first_row(run.row_block)));
                args.push(Arg::Value(run.col_block * grid.cb));
            }
            runs.push(Run {
                tile: run.tile,
                kernel: self.program.kernel(run.kernel.clone()),
                args,
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, name, runs, out, blocks);
        Ok(())
    }

    /// An in-place add: on the blocks of operand `position` (on the device), the other
    /// operand brought onto them ([`Self::blocks_on`], [`Self::row_on`]), one kernel call per
    /// block; the result is distributed like the followed operand.
    pub(in crate::lower::graph) fn in_place_add(
        &mut self,
        index: usize,
        position: usize,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (followed, other, out) = (
            op.operands[position],
            op.operands[1 - position],
            op.results[0],
        );
        let roles = operand_roles(self.graph, op)
            .map_err(|why| unsupported("ipu.add", format!("op {index}: {why}")))?;
        let source = self.placed[&followed].clone();
        let grid = source.grid.clone();
        let precision = source.precision;
        if self.graph.values[other].element != precision {
            return Err(unsupported(
                "ipu.add",
                format!(
                    "op {index}: operands of types {precision:?} and {:?}",
                    self.graph.values[other].element
                ),
            ));
        }
        let mut transfers = Transfers::default();
        let (second, b_rows) = match roles[1 - position] {
            OperandRole::ColumnVector | OperandRole::Scalar => {
                return Err(unsupported(
                    "ipu.add",
                    format!(
                        "op {index}: an in-place add reads a full-size operand or a row vector"
                    ),
                ))
            }
            OperandRole::Full => (
                self.blocks_on(index, "rhs", other, &grid, &mut transfers)?,
                None,
            ),
            OperandRole::RowVector => (
                self.row_on(index, "bias", other, &grid, &mut transfers)?,
                Some(1),
            ),
        };
        let result = self.result_buffer(index, &grid, precision);
        let mut runs = self.flush(transfers);
        for (i, j) in grid.grid() {
            let rows = grid.rows(i);
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(KernelSpec::Add {
                    precision,
                    rows,
                    cols: grid.cb,
                    b_rows: b_rows.unwrap_or(rows),
                }),
                args: vec![
                    Arg::Address(Place::at(source.buffer, 0)),
                    Arg::Address(Place::at(second, 0)),
                    Arg::Address(Place::at(result, 0)),
                ],
            });
        }
        let blocks = Blocks {
            grid,
            buffer: result,
            precision,
        };
        self.finish(index, "ipu.add", runs, out, blocks);
        Ok(())
    }

    /// Full-size operand `value` of op `index` in `grid`'s blocks: where it already is in
    /// them, else gathered from its blocks on the device into buffer `<op>.<what>` (added to
    /// `transfers`), else (a host value) written by the host block by block, which makes that
    /// its home.
    pub(in crate::lower::graph) fn blocks_on(
        &mut self,
        index: usize,
        what: &str,
        value: ValueId,
        grid: &GemmGrid,
        transfers: &mut Transfers,
    ) -> Result<BufferId, LowerError> {
        self.not_ranged(index, value)?;
        let precision = self.graph.values[value].element;
        let e = precision.bytes();
        let bytes = grid.rows_padded * grid.cb * e;
        if let Some(source) = self.placed.get(&value).cloned() {
            if source.grid == *grid && source.precision == precision {
                return Ok(source.buffer);
            }
            let buffer = self.op_buffer(index, what, &grid.tiles(), bytes);
            let target = Blocks {
                grid: grid.clone(),
                buffer,
                precision,
            };
            transfers.gather_blocks(&source, &target);
            return Ok(buffer);
        }
        let name = format!("{}.home", self.binding_name(value));
        let buffer = self
            .program
            .buffer(name, MemoryClass::Standard, bytes, grid.tiles());
        let pieces = grid
            .grid()
            .map(|(i, j)| {
                // Whole rows are one contiguous run; a column block is one run per row.
                let runs = if grid.nb == 1 { 1 } else { grid.rows(i) };
                HostPiece {
                    tile: grid.tile(i, j),
                    place: Place::at(buffer, 0),
                    tensor_offset: (u64::from(grid.first_row(i)) * u64::from(grid.n)
                        + u64::from(j * grid.cb))
                        * u64::from(e),
                    bytes: grid.rows(i) * grid.cb * e,
                    runs,
                    stride: if runs > 1 { u64::from(grid.n * e) } else { 0 },
                    pad: 0,
                }
            })
            .collect();
        self.stream(value, pieces)?;
        self.placed.insert(
            value,
            Blocks {
                grid: grid.clone(),
                buffer,
                precision,
            },
        );
        Ok(buffer)
    }

    /// Row-vector operand `value` of op `index`: its column block on every tile of that
    /// column of `grid` (buffer `<op>.<what>`), written there by the host or gathered from
    /// the device.
    fn row_on(
        &mut self,
        index: usize,
        what: &str,
        value: ValueId,
        grid: &GemmGrid,
        transfers: &mut Transfers,
    ) -> Result<BufferId, LowerError> {
        self.not_ranged(index, value)?;
        let e = self.graph.values[value].element.bytes();
        let tiles = grid.tiles();
        if let Some(source) = self.placed.get(&value).cloned() {
            let buffer = self.op_buffer(index, what, &tiles, grid.cb * e);
            for (i, j) in grid.grid() {
                transfers.gather(
                    &source,
                    Fetch {
                        tile: grid.tile(i, j),
                        rows: (0, 1),
                        cols: (j * grid.cb, (j + 1) * grid.cb),
                        place: Place::at(buffer, 0),
                    },
                );
            }
            return Ok(buffer);
        }
        let buffer = self.op_buffer(index, what, &tiles, grid.cb * e);
        // Every tile of column `j` reads column block `j`: the planner's need of the vector.
        let need = Shards {
            dims: [1, 1, u64::from(grid.n)],
            parts: [1, 1, grid.nb],
            element_bytes: e,
            owners: (0..grid.nb)
                .map(|j| (0..grid.mb).map(|i| grid.tile(i, j)).collect())
                .collect(),
        };
        // A constant vector is written by the host wherever it is read (at initialization);
        // an argument where the planner homes it ([`host_home`]: each column block once, cut
        // into one piece per reader where it splits), the readers exchanging their pieces.
        // A piece a tile sends is written into a staging buffer (`<op>.<what>_stage`), sent
        // from there and copied locally into place (as `host_fetches` stages): sent from the
        // buffer the other pieces arrive in, its reads and their writes would share a memory
        // element, and the device serializes them.
        let home = if self.graph.values[value].written_where_read() {
            need.clone()
        } else {
            host_home(&need, e)
        };
        let column_bytes = u64::from(grid.cb * e);
        let stage = (home != need)
            .then(|| self.op_buffer(index, &format!("{what}_stage"), &tiles, grid.cb * e));
        let mut pieces = Vec::new();
        for (block, owners) in home.owners.iter().enumerate() {
            let [_, _, (first, end)] = home.block_ranges(block);
            let (first, end) = (first * u64::from(e), end * u64::from(e));
            let at = to_u32(first % column_bytes)?;
            let bytes = to_u32(end - first)?;
            let column = first / column_bytes;
            for &tile in owners {
                let readers = &need.owners[column as usize];
                let mut others = readers.iter().filter(|&&r| !owners.contains(&r)).peekable();
                let (Some(stage), Some(_)) = (stage, others.peek()) else {
                    pieces.push(HostPiece::contiguous(
                        tile,
                        Place::at(buffer, at),
                        first,
                        bytes,
                    ));
                    continue;
                };
                pieces.push(HostPiece::contiguous(
                    tile,
                    Place::at(stage, at),
                    first,
                    bytes,
                ));
                let from = Place::at(stage, at);
                for &reader in others.chain(readers.contains(&tile).then_some(&tile)) {
                    transfers.add(tile, from, reader, Place::at(buffer, at), bytes);
                }
            }
        }
        self.stream(value, pieces)?;
        Ok(buffer)
    }

    /// A column vector's rows (or a scalar) of each block of `grid` on its tile, in buffer
    /// `<op>.<what>`: gathered from where the device holds it, or written by the host to
    /// every reader (a few bytes per tile).
    fn small_on(
        &mut self,
        index: usize,
        what: &str,
        value: ValueId,
        grid: &GemmGrid,
        role: OperandRole,
        transfers: &mut Transfers,
    ) -> Result<BufferId, LowerError> {
        self.not_ranged(index, value)?;
        let e = self.graph.values[value].element.bytes();
        let column = role == OperandRole::ColumnVector;
        let bytes = if column { grid.rows_padded * e } else { e };
        let buffer = self.op_buffer(index, what, &grid.tiles(), bytes);
        let rows_of = |i: u32| {
            if column {
                (grid.first_row(i), grid.first_row(i) + grid.rows(i))
            } else {
                (0, 1)
            }
        };
        if let Some(source) = self.placed.get(&value).cloned() {
            for (i, j) in grid.grid() {
                transfers.gather(
                    &source,
                    Fetch {
                        tile: grid.tile(i, j),
                        rows: rows_of(i),
                        cols: (0, 1),
                        place: Place::at(buffer, 0),
                    },
                );
            }
            return Ok(buffer);
        }
        let pieces = grid
            .grid()
            .map(|(i, j)| {
                let (first, end) = rows_of(i);
                HostPiece::contiguous(
                    grid.tile(i, j),
                    Place::at(buffer, 0),
                    u64::from(first) * u64::from(e),
                    (end - first) * e,
                )
            })
            .collect();
        self.stream(value, pieces)?;
        Ok(buffer)
    }

    /// An error when `value` is held as a split GEMM's reduced ranges (only a ranged plan
    /// reads those).
    fn not_ranged(&self, index: usize, value: ValueId) -> Result<(), LowerError> {
        if self.ranged.contains_key(&value) {
            let name = self.graph.ops[index].kind.name();
            return Err(unsupported(
                name,
                format!(
                    "op {index}: value {value} is a split GEMM's reduced ranges, which only a ranged plan reads"
                ),
            ));
        }
        Ok(())
    }
}
