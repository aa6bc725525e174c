//! Matmuls on the split GEMM lowering ([`crate::strategies::split_gemm`]): whether it takes a
//! matmul, the planned grid it follows, its surroundings, and the lowering of the op.

use super::*;

/// A split GEMM's device left operand: held as ranges, else in row-major blocks.
fn device_a<'v>(ranged: Option<&'v Ranged>, blocks: Option<&'v Blocks>) -> Option<DeviceA<'v>> {
    match (ranged, blocks) {
        (Some(ranged), _) => Some(DeviceA::Ranged(ranged)),
        (None, Some(blocks)) => Some(DeviceA::Blocks {
            grid: &blocks.grid,
            buffer: blocks.buffer,
            precision: blocks.precision,
        }),
        (None, None) => None,
    }
}

impl Lowering<'_> {
    /// The grid of the split GEMM lowering ([`crate::strategies::split_gemm`]) for matmul
    /// `index`, when it applies: a ranged chain's product ([`split_gemm::split_dims`]: the
    /// plan's grid when it is a batch-free, normal `gemm_output_stationary` /
    /// `gemm_k_split` grid that fits, else the cheapest grid by the lowering's own model),
    /// or a product the plan runs split beside the other strategies
    /// ([`split_gemm::device_split_dims`]: a row-major device value or a host operand as its
    /// left operand, its result converted to a row grid).
    pub(super) fn split_grid(
        &self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<Option<SplitGrid>, LowerError> {
        let op = &self.graph.ops[index];
        let (a, b) = (op.operands[0], op.operands[1]);
        // A host operand an earlier op already streamed is on the device, not the host's:
        // a ranged chain does not take it; a product of a row-major value gathers it.
        let streamed =
            self.placed.contains_key(&a) && !matches!(self.graph.values[a].origin, Origin::Op(_));
        if self.placed.contains_key(&b) {
            return Ok(None);
        }
        let input = self.split_input(index);
        let (dims, row_major) = match split_gemm::split_dims(self.graph, index, input) {
            Some(_) if streamed => return Ok(None),
            Some(dims) => (dims, false),
            None => match split_gemm::device_split_dims(self.graph, index, input) {
                // Offered beside the general matmul and the output-stationary GEMM: split
                // only where the plan is the split GEMM's (streamed in host order; the
                // output-stationary GEMM's plans are not).
                Some(dims) if matches!(plan, Some(OperatorPlan::Gemm(gemm)) if gemm.host_order) => {
                    (dims, true)
                }
                _ => return Ok(None),
            },
        };
        let precision = input;
        let a_value = device_a(self.ranged.get(&a), self.placed.get(&a));
        if a_value.is_none()
            && !matches!(
                self.graph.values[a].origin,
                Origin::Argument | Origin::Constant
            )
        {
            return Ok(None);
        }
        // A constant B may stay resident (written at initialization where it is read).
        let b_constant = self.graph.values[op.operands[1]].origin == Origin::Constant;
        let env = |weights: MemoryClass, b_resident: bool| {
            let around = self.split_env(index, weights, a_value);
            SplitEnv {
                b_resident: b_resident && b_constant,
                row_major,
                // Converted, the ranges are read by the conversion alone.
                result: around.result.filter(|_| !row_major),
                ..around
            }
        };
        let target = &self.options.target;
        if let Some(plan) = plan {
            let not_followed = |reason: String| {
                unsupported(
                    "ipu.matmul",
                    format!("op {index}: the split GEMM lowering takes this matmul; plan {plan} cannot be followed: {reason}"),
                )
            };
            let gemm = match plan {
                OperatorPlan::Gemm(
                    gemm @ GemmPlan {
                        grid: GemmTileGrid { batch: 1, .. },
                        orientation: Orientation::Normal,
                        ..
                    },
                ) => gemm,
                _ => {
                    return Err(not_followed(
                        "not a batch-free, normal-orientation GEMM plan".into(),
                    ))
                }
            };
            if gemm.grid.tiles() > u64::from(self.tiles) {
                return Err(not_followed(format!(
                    "its grid needs {} tiles, the lowering may use {}",
                    gemm.grid.tiles(),
                    self.tiles
                )));
            }
            let weights = crate::element::memory_class(gemm.weights);
            let shape = (gemm.grid.rows, gemm.grid.cols, gemm.grid.k_split);
            let resident = gemm.weights_resident;
            return SplitGrid::within(dims, shape, precision, &env(weights, resident), target)
                .map(Some)
                .map_err(|reason| not_followed(reason.to_string()));
        }
        // Unplanned: the cheapest grid by the lowering's model, B resident or streamed.
        Ok([false, true]
            .into_iter()
            .filter(|&resident| !resident || b_constant)
            .flat_map(|resident| {
                let env = env(MemoryClass::Interleaved, resident);
                SplitGrid::ranked(dims, self.tiles, precision, &env, target, 1)
            })
            .min_by_key(|grid| {
                (
                    grid.estimate(precision, target).total(),
                    grid.env.b_resident,
                )
            }))
    }

    /// The surroundings of split matmul `index` with its B panel in `weights`: A gathered
    /// from `a_value` (whose bytes stay live across the op: a ranged value's own, row-major
    /// blocks' as the planner takes them, [`split_gemm::device_a_share`]), and a result in
    /// the class a later split GEMM can send from when anything uses it.
    pub(super) fn split_env(
        &self,
        index: usize,
        weights: MemoryClass,
        a_value: Option<DeviceA<'_>>,
    ) -> SplitEnv {
        let c = self.graph.ops[index].results[0];
        let used = self.graph.ops.iter().any(|op| op.operands.contains(&c));
        let mut reserved = [0u32; 2];
        // Every ranged value still used later (A included) stays live across the op.
        for (&v, value) in &self.ranged {
            let later = self.graph.ops[index..]
                .iter()
                .any(|op| op.operands.contains(&v))
                || self.graph.outputs.contains(&v);
            if later {
                reserved[usize::from(value.class == MemoryClass::Interleaved)] += value.bytes();
            }
        }
        let input = self.split_input(index);
        match a_value {
            // A left operand cast to the input precision first (FP8) adds its cast copy.
            Some(DeviceA::Ranged(value)) if value.precision != input => {
                let longest = value.ranges.iter().map(|r| r.len).max().unwrap_or(0);
                reserved[usize::from(value.class == MemoryClass::Interleaved)] +=
                    longest * input.bytes();
            }
            // Planned as a device value (a host operand another op put on the device was
            // planned as the host's, without this reservation).
            Some(DeviceA::Blocks {
                grid, precision, ..
            }) if matches!(
                self.graph.values[self.graph.ops[index].operands[0]].origin,
                Origin::Op(_)
            ) =>
            {
                let dims = (grid.m, grid.n, 0);
                reserved[0] += split_gemm::device_a_share(dims, self.tiles, (precision, input));
            }
            _ => {}
        }
        SplitEnv {
            weights,
            a_device: a_value.is_some(),
            result: used.then(|| SplitEnv::chained_result_class(weights)),
            reserved,
            b_resident: false,
            row_major: false,
        }
    }

    /// The AMP input precision of split matmul `index`: the policy's for its right operand
    /// (a host tensor, which the host encodes in FP8 under the FP8 policy).
    pub(super) fn split_input(&self, index: usize) -> Precision {
        let op = &self.graph.ops[index];
        let (b, c) = (op.operands[1], op.results[0]);
        self.options.precision.input_for(
            self.graph.values[b].element,
            self.graph.values[c].element,
            super::super::returned_only(self.graph, c),
        )
    }

    /// The FP8 scale exponents of split matmul `index`'s operands: the plan's (`lhs_scale`,
    /// `rhs_scale`: chosen from the data ranges, calibrated or pinned), else the lowering's
    /// `fp8_scale`; 0 for other precisions.
    /// A left operand the device casts (a ranged value) is cast at the policy's `fp8_scale`,
    /// as the reference casts device values.
    pub(super) fn split_scales(
        &self,
        input: Precision,
        plan: Option<&OperatorPlan>,
        a_device: bool,
    ) -> [i32; 2] {
        if !input.is_fp8() {
            return [0, 0];
        }
        let mut scales = match plan.and_then(OperatorPlan::scales) {
            Some(scales) => [scales.lhs, scales.rhs],
            None => [self.options.fp8_scale; 2],
        };
        if a_device {
            scales[0] = self.options.fp8_scale;
        }
        scales
    }

    /// Ranged value `value` cast to `precision` (FP8 at `scale_exp`) range by range on its
    /// owners, into a new buffer of its class (one compute step).
    pub(super) fn cast_ranged(
        &mut self,
        value: &Ranged,
        (precision, scale_exp): (Precision, i32),
        provenance: &str,
    ) -> Ranged {
        let mut tiles: Vec<u32> = value.ranges.iter().map(|r| r.tile).collect();
        tiles.sort_unstable();
        let longest = value.ranges.iter().map(|r| r.len).max().unwrap_or(0);
        let buffer = self.program.buffer(
            format!("{provenance}.a.cast"),
            value.class,
            (longest * precision.bytes()).max(1),
            tiles,
        );
        let runs = self.range_runs(value, |r| {
            (
                KernelSpec::Cast {
                    from: value.precision,
                    to: precision,
                    elements: r.len,
                },
                vec![
                    Arg::Address(Place::at(value.buffer, 0)),
                    Arg::Address(Place::at(buffer, 0)),
                    Arg::Value(scale_exp as u32),
                ],
            )
        });
        self.program.run.push(TileStep::Compute {
            provenance: format!("{provenance}.cast"),
            runs,
        });
        Ranged {
            precision,
            buffer,
            ..value.clone()
        }
    }

    /// Lowers matmul `index` with the split GEMM lowering on `grid`.
    pub(super) fn split_matmul(
        &mut self,
        index: usize,
        grid: &SplitGrid,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (a, b, c) = (op.operands[0], op.operands[1], op.results[0]);
        let precision = self.split_input(index);
        let a_device = self.ranged.contains_key(&a) || self.placed.contains_key(&a);
        let scales = self.split_scales(precision, plan, a_device);
        if self.graph.values[c].element
            != ipu_device::kernels::describe::default_partials(precision)
        {
            return Err(unsupported(
                "ipu.matmul",
                format!(
                    "op {index}: the result must be {:?} (the GEMM partials), not {:?}",
                    ipu_device::kernels::describe::default_partials(precision),
                    self.graph.values[c].element
                ),
            ));
        }
        let provenance = self.provenance(index);
        info!(
            op = index,
            grid = ?[1, grid.gm, grid.gn, grid.gk],
            panels = grid.panels,
            k_panel = grid.kp,
            "split GEMM grid"
        );
        let inputs = split_gemm::inputs(&mut self.program, grid, precision, &provenance);
        // A device left operand not in the input precision (F16 under the FP8 policy) is
        // cast where it is first.
        let a_ranged = self.ranged.get(&a).cloned().map(|value| {
            if value.precision == precision {
                value
            } else {
                self.cast_ranged(&value, (precision, scales[0]), &provenance)
            }
        });
        let a_blocks = match (&a_ranged, self.placed.get(&a).cloned()) {
            (None, Some(blocks)) if blocks.precision != precision => {
                Some(self.cast_blocks(index, "a.cast", &blocks, (precision, scales[0])))
            }
            (None, blocks) => blocks,
            _ => None,
        };
        let a_value = device_a(a_ranged.as_ref(), a_blocks.as_ref());
        // The host streams each operand in the AMP input precision (FP8 at its scale).
        if a_value.is_none() {
            self.stream_encoded(a, inputs.a_pieces.clone(), (precision, scales[0]))?;
        }
        self.stream_encoded(b, inputs.b_pieces.clone(), (precision, scales[1]))?;
        let value = split_gemm::lower(
            &mut self.program,
            grid,
            (precision, scales),
            &inputs,
            a_value,
            &provenance,
        );
        if grid.env.row_major {
            // Read by other ops as row-major blocks: converted to the row grid.
            let buffer = split_gemm::convert_to_rows(
                &mut self.program,
                grid,
                &value,
                grid.rows_class(),
                &provenance,
            );
            self.program.ops.push((provenance, "ipu.matmul".into(), 0));
            self.placed.insert(
                c,
                Blocks {
                    grid: grid.rows_grid(),
                    buffer,
                    precision: value.precision,
                },
            );
            return Ok(());
        }
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        self.ranged.insert(c, value);
        Ok(())
    }
}
