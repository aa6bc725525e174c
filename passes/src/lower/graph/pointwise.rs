//! Elementwise adds and GeLUs: in place on their operand's blocks or on the reduced ranges
//! of a split GEMM (a grid plan: [`grid`]).

use super::*;

mod grid;

impl Lowering<'_> {
    /// `ipu.add` without a plan: on a split GEMM's ranges when an operand is held so, else in
    /// place on the first full-size operand on the device (one is streamed into a row grid
    /// first when none is).
    pub(super) fn add(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        for &x in &op.operands {
            if self.ranged.contains_key(&x) {
                if let Some(bias) = split_gemm::bias_operand(self.graph, index, x) {
                    return self.ranged_add(index, x, bias);
                }
            }
        }
        let on_device = |v: ValueId| self.placed.contains_key(&v);
        let position =
            match crate::strategies::pointwise::in_place_position(self.graph, op, on_device) {
                Some(position) => position,
                None => {
                    let full =
                        crate::strategies::pointwise::in_place_position(self.graph, op, |_| true)
                            .ok_or_else(|| {
                            unsupported(
                                "ipu.add",
                                format!("op {index}: no operand has the result's shape"),
                            )
                        })?;
                    self.on_device(op.operands[full])?;
                    full
                }
            };
        self.in_place_add(index, position)
    }

    pub(super) fn gelu(&mut self, index: usize, tanh: bool) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (x, out) = (op.operands[0], op.results[0]);
        if self.ranged.contains_key(&x) {
            return self.ranged_gelu(index, x, out, tanh);
        }
        let provenance = self.provenance(index);
        let blocks = self.on_device(x)?;
        let grid = blocks.grid.clone();
        let result = self.pointwise_result(&provenance, &blocks);
        let form = if tanh { GeluForm::Tanh } else { GeluForm::Erf };
        let mut runs = Vec::new();
        for (i, j) in grid.grid() {
            let spec = KernelSpec::Gelu {
                precision: blocks.precision,
                form,
                elements: grid.rows(i) * grid.cb,
            };
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(spec),
                args: vec![
                    Arg::Address(Place::at(blocks.buffer, 0)),
                    Arg::Address(Place::at(result, 0)),
                ],
            });
        }
        self.pointwise_step(provenance, "ipu.gelu", runs, out, &blocks, result);
        Ok(())
    }

    /// The result of a pointwise op over ranged value `x`: `x`'s own buffer when nothing
    /// else reads `x` afterwards (the op works in place), else a new buffer like it.
    pub(super) fn ranged_result(&mut self, x: ValueId, provenance: &str) -> Ranged {
        let mut value = self.ranged[&x].clone();
        let uses = self
            .graph
            .ops
            .iter()
            .flat_map(|op| &op.operands)
            .filter(|&&v| v == x)
            .count();
        if uses > 1 || self.graph.outputs.contains(&x) {
            let mut tiles: Vec<u32> = value.ranges.iter().map(|r| r.tile).collect();
            tiles.sort_unstable();
            value.buffer = self.program.buffer(
                format!("{provenance}.out"),
                value.class,
                value.bytes(),
                tiles,
            );
        }
        value
    }

    /// `ipu.add` of ranged value `x` and host bias vector `bias`: each owner gets the bias of
    /// the 16-column groups its range touches from the host and adds it in AMP order
    /// ([`KernelSpec::AddGroupBias`]); the result is ranged like `x`.
    pub(super) fn ranged_add(
        &mut self,
        index: usize,
        x: ValueId,
        bias: ValueId,
    ) -> Result<(), LowerError> {
        let out = self.graph.ops[index].results[0];
        let provenance = self.provenance(index);
        let source = self.ranged[&x].clone();
        let value = self.ranged_result(x, &provenance);
        let eb = source.precision.bytes();
        // The bias groups of each range: (first group, groups).
        let groups = |r: &split_gemm::OwnedRange| {
            let first = r.first / 16 / r.rows;
            let last = ((r.first + r.len) / 16 - 1) / r.rows;
            (r.origin.1 / 16 + first, last - first + 1)
        };
        let most = source.ranges.iter().map(|r| groups(r).1).max().unwrap_or(1);
        let mut tiles: Vec<u32> = source.ranges.iter().map(|r| r.tile).collect();
        tiles.sort_unstable();
        let bias_buffer = self.program.buffer(
            format!("{provenance}.bias"),
            MemoryClass::Standard,
            most * 16 * eb,
            tiles,
        );
        let pieces = source
            .ranges
            .iter()
            .map(|r| {
                let (group, count) = groups(r);
                HostPiece::contiguous(
                    r.tile,
                    Place::at(bias_buffer, 0),
                    u64::from(group * 16 * eb),
                    count * 16 * eb,
                )
            })
            .collect();
        self.stream(bias, pieces)?;
        let runs = self.range_runs(&source, |r| {
            (
                KernelSpec::AddGroupBias {
                    precision: source.precision,
                    rows: r.rows,
                    elements: r.len,
                },
                vec![
                    Arg::Address(Place::at(source.buffer, 0)),
                    Arg::Address(Place::at(bias_buffer, 0)),
                    Arg::Address(Place::at(value.buffer, 0)),
                    Arg::Value(r.first / 16 % r.rows),
                ],
            )
        });
        self.ranged_step(provenance, "ipu.add", runs, out, value);
        Ok(())
    }

    /// `ipu.gelu` of ranged value `x`: per owner over its range.
    pub(super) fn ranged_gelu(
        &mut self,
        index: usize,
        x: ValueId,
        out: ValueId,
        tanh: bool,
    ) -> Result<(), LowerError> {
        let provenance = self.provenance(index);
        let source = self.ranged[&x].clone();
        let value = self.ranged_result(x, &provenance);
        let form = if tanh { GeluForm::Tanh } else { GeluForm::Erf };
        let runs = self.range_runs(&source, |r| {
            (
                KernelSpec::Gelu {
                    precision: source.precision,
                    form,
                    elements: r.len,
                },
                vec![
                    Arg::Address(Place::at(source.buffer, 0)),
                    Arg::Address(Place::at(value.buffer, 0)),
                ],
            )
        });
        self.ranged_step(provenance, "ipu.gelu", runs, out, value);
        Ok(())
    }

    /// One kernel run per range of `value` on its owner, `run(range)` giving the kernel and
    /// its arguments; in tile order.
    pub(super) fn range_runs(
        &mut self,
        value: &Ranged,
        run: impl Fn(&split_gemm::OwnedRange) -> (KernelSpec, Vec<Arg>),
    ) -> Vec<Run> {
        let mut runs: Vec<Run> = value
            .ranges
            .iter()
            .map(|r| {
                let (spec, args) = run(r);
                Run {
                    tile: r.tile,
                    kernel: self.program.kernel(spec),
                    args,
                }
            })
            .collect();
        runs.sort_by_key(|run| run.tile);
        runs
    }

    /// Records a pointwise op over a ranged value: its compute step ([`Self::range_runs`]),
    /// its profile entry, and its result `out`.
    pub(super) fn ranged_step(
        &mut self,
        provenance: String,
        op: &str,
        runs: Vec<Run>,
        out: ValueId,
        value: Ranged,
    ) {
        self.program.run.push(TileStep::Compute {
            provenance: provenance.clone(),
            runs,
        });
        self.program.ops.push((provenance, op.into(), 0));
        self.ranged.insert(out, value);
    }

    /// The result buffer of a pointwise op over `blocks`: one block's bytes on every tile.
    pub(super) fn pointwise_result(&mut self, provenance: &str, blocks: &Blocks) -> BufferId {
        let grid = &blocks.grid;
        self.program.buffer(
            format!("{provenance}.out"),
            MemoryClass::Standard,
            grid.rows_padded * grid.cb * blocks.precision.bytes(),
            grid.tiles(),
        )
    }

    /// Records a pointwise op: its compute step, its profile entry, and its result `out` in
    /// `result`, distributed like its input `blocks`.
    pub(super) fn pointwise_step(
        &mut self,
        provenance: String,
        op: &str,
        runs: Vec<Run>,
        out: ValueId,
        blocks: &Blocks,
        result: BufferId,
    ) {
        self.program.run.push(TileStep::Compute {
            provenance: provenance.clone(),
            runs,
        });
        self.program.ops.push((provenance, op.into(), 0));
        self.placed.insert(
            out,
            Blocks {
                grid: blocks.grid.clone(),
                buffer: result,
                precision: blocks.precision,
            },
        );
    }
}
