//! Lowering a graph op by op, keeping track of where each value lives.
//!
//! ## Distributions
//! A value is either still on the host (a function argument or a constant, streamed in where
//! an op needs it) or on the device as [`Blocks`]: the 2-D view `[M x N]` of the tensor (every
//! leading axis folded into the rows) cut into `mb` row blocks of `rows_padded` rows and `nb`
//! column blocks of `cb` columns, block (i, j) row-major on tile `i * nb + j` (the
//! [`GemmGrid`] of the matmul that produced it).
//!
//! ## Ops
//! * `ipu.matmul` with host operands: [`super::gemm`] (home tiles, broadcast, AMP).
//! * `ipu.matmul` whose left operand is on the device: the product's row blocks split the
//!   producer's evenly (as finely as the tiles allow) and it contracts over the producer's
//!   column blocks, a K panel being as many of them as fit
//!   ([`super::gemm::ASource::Gathered`]): each panel's exchange phase gathers row block i's
//!   blocks of the panel onto every tile of grid row i of the product (a tile that already
//!   holds one copies it), which rearranges them into the AMP-left panel.
//! * `ipu.add` of a device value and a bias vector (`[N]`, broadcast over rows): the bias
//!   column block j is streamed to a home tile and broadcast down grid column j; or of two
//!   device values on the same grid: elementwise.
//! * `ipu.gelu` of a device value: per tile, in the value's precision.
//!
//! * Every other op, and these ops when their operands do not fit the fast paths above:
//!   the general lowering ([`general`]: layer norm, softmax, attention, batched / transposed
//!   matmuls, permutations, casts, adds of any layout).
//! * `ipu.repeat`: the body function lowered once inside a structured repeat step
//!   ([`Lowering::repeat`]).
//!
//! Results returned by the function are read back per row of every block.

use std::collections::BTreeMap;

use ipu_device::kernels::describe::GEMM_MAX_WEIGHT_ELEMENTS;
use ipu_device::kernels::spec::GeluForm;
use ipu_device::{KernelSpec, MemoryClass, Precision};
use ipu_dialects::plan::{GemmPlan, GemmTileGrid, OperatorPlan, Orientation};
use ipu_runtime::package::BindingRole;
use tracing::info;

use super::gemm::{self, ASource, GemmGrid, GemmPrecision};
use super::gemm_split::{self, Ranged, SplitEnv, SplitGrid};
use super::program::{
    Arg, BufferId, HostBinding, HostPiece, Move, Place, Run, TileProgram, TileStep,
};
use super::{LowerError, LowerOptions};
use crate::planner::{Graph, OpKind, Origin, ValueId};

pub(crate) mod general;

/// A device value: row-major blocks over a grid (see the module docs).
#[derive(Debug, Clone)]
struct Blocks {
    grid: GemmGrid,
    buffer: BufferId,
    precision: Precision,
}

fn unsupported(op: &str, detail: impl Into<String>) -> LowerError {
    LowerError::Unsupported {
        op: op.into(),
        detail: detail.into(),
    }
}

fn to_u32(d: u64) -> Result<u32, LowerError> {
    u32::try_from(d).map_err(|_| LowerError::Input(format!("dimension {d} too large")))
}

/// `[M, N]` of a tensor shape: every leading axis folded into the rows.
fn view_2d(shape: &[u64]) -> Result<(u32, u32), LowerError> {
    let Some((&n, rows)) = shape.split_last() else {
        return Err(LowerError::Input("a scalar has no 2-D view".into()));
    };
    Ok((to_u32(rows.iter().product())?, to_u32(n)?))
}

/// A repeat body function's constants and the selected plans of its ops (by op index).
#[derive(Debug, Clone, Default)]
pub struct Body {
    pub constants: BTreeMap<ValueId, Vec<u8>>,
    pub plans: Vec<Option<OperatorPlan>>,
}

/// Each repeat body function, by body name.
pub type BodyConstants = BTreeMap<String, Body>;

/// `[K, N]` of a shape that is one matrix: rank 2, or leading axes of size 1 (`[1, K, N]`).
fn single_matrix(shape: &[u64]) -> Option<(u64, u64)> {
    let rank = shape.len();
    (rank >= 2 && shape[..rank - 2].iter().all(|&d| d == 1))
        .then(|| (shape[rank - 2], shape[rank - 1]))
}

struct Lowering<'g> {
    graph: &'g Graph,
    constants: &'g BTreeMap<ValueId, Vec<u8>>,
    bodies: &'g BodyConstants,
    options: &'g LowerOptions,
    tiles: u32,
    program: TileProgram,
    placed: BTreeMap<ValueId, Blocks>,
    /// Prefix of provenances and stream names: empty for the function, `op3.layer.` for the
    /// body of repeat op 3 calling `@layer`.
    prefix: String,
    /// Values held as a split GEMM's result ranges ([`gemm_split::Ranged`]) instead of
    /// row-major [`Blocks`].
    ranged: BTreeMap<ValueId, Ranged>,
}

impl<'g> Lowering<'g> {
    fn binding_name(&self, value: ValueId) -> String {
        match self.graph.values[value].origin {
            // Arguments are the first values, in order: the id is the argument number.
            Origin::Argument => format!("{}arg{value}", self.prefix),
            _ => format!("{}const{value}", self.prefix),
        }
    }

    /// The provenance of op `index` (profiles, step names).
    fn provenance(&self, index: usize) -> String {
        format!("{}op{index}", self.prefix)
    }

    /// Streams host value `value` into the given pieces (a host write in `initialize` for
    /// constants, in `run` for arguments).
    fn stream(&mut self, value: ValueId, pieces: Vec<HostPiece>) -> Result<(), LowerError> {
        let element = self.graph.values[value].element;
        self.stream_encoded(value, pieces, (element, 0))
    }

    /// [`Self::stream`] with the host encoding the values as `precision` (FP8 at scale
    /// `scale_exp`): the pieces' offsets count bytes of that encoding.
    fn stream_encoded(
        &mut self,
        value: ValueId,
        pieces: Vec<HostPiece>,
        (precision, scale_exp): (Precision, i32),
    ) -> Result<(), LowerError> {
        // A value streamed again in the same encoding (a constant vector several ops read,
        // an argument two general matmuls fetch) extends its binding: one stream, written
        // where its first write is (the placement extends the buffers' lifetimes to it).
        let name = self.binding_name(value);
        if let Some(binding) = self.program.bindings.iter_mut().find(|b| {
            b.name == name
                && b.precision == precision
                && b.scale_exp == scale_exp
                && b.role != BindingRole::Output
        }) {
            binding.pieces.extend(pieces);
            return Ok(());
        }
        if self.program.bindings.iter().any(|b| b.name == name) {
            return Err(unsupported(
                "host stream",
                format!(
                    "{name} (value {value}) is streamed as {precision:?} at scale {scale_exp} and in another encoding; one encoding per host value is lowered"
                ),
            ));
        }
        let v = &self.graph.values[value];
        let weight = v.origin == Origin::Constant;
        let data = if weight {
            let data =
                self.constants.get(&value).cloned().ok_or_else(|| {
                    LowerError::Input(format!("constant value {value} has no data"))
                })?;
            if precision == v.element {
                data
            } else {
                // Constants are encoded once, here, as the host would encode an argument.
                let encode = || {
                    let values = ipu_device::numerics::decode_bytes(&data, v.element, 0)?;
                    ipu_device::numerics::encode_bytes(
                        &values,
                        precision,
                        scale_exp,
                        ipu_device::numerics::Rounding::NearestEvenSaturating,
                    )
                };
                encode().map_err(|e| {
                    LowerError::Input(format!(
                        "constant value {value}: cannot encode as {precision:?} at scale {scale_exp}: {e}"
                    ))
                })?
            }
        } else {
            Vec::new()
        };
        self.program.bindings.push(HostBinding {
            name,
            role: if weight {
                BindingRole::Weight
            } else {
                BindingRole::Input
            },
            precision,
            scale_exp,
            shape: v.shape.clone(),
            pieces,
            data,
        });
        let step = TileStep::HostWrite {
            binding: self.program.bindings.len() - 1,
        };
        if weight {
            self.program.initialize.push(step);
        } else {
            self.program.run.push(step);
        }
        Ok(())
    }

    /// Checks that `value` (the `role` operand of `op`) comes from the host.
    fn host(&self, index: usize, value: ValueId, op: &str, role: &str) -> Result<(), LowerError> {
        match self.graph.values[value].origin {
            Origin::Argument | Origin::Constant => Ok(()),
            Origin::Op(producer) => Err(unsupported(
                op,
                format!(
                    "op {index}: the {role} is computed on the device (by op {producer}); only function arguments and constants are lowered in that position yet"
                ),
            )),
        }
    }

    /// Whether matmul `index` takes the GEMM fast path ([`super::gemm`]): no transposes, a
    /// right operand from the host that is one matrix (`[K, N]` or `[1, K, N]`) with a grid
    /// the GEMM lowering can build, and a left operand from the host or on a grid whose column
    /// blocks are whole 16-column groups. Everything else takes the general path.
    fn fast_matmul(&self, index: usize) -> bool {
        let op = &self.graph.ops[index];
        let (a, b) = (op.operands[0], op.operands[1]);
        let plain = matches!(
            op.kind,
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs: false
            }
        );
        let host = |v: ValueId| {
            !self.placed.contains_key(&v) && !matches!(self.graph.values[v].origin, Origin::Op(_))
        };
        let left = match self.placed.get(&a) {
            Some(blocks) => blocks.grid.cb.is_multiple_of(16),
            None => host(a),
        };
        // The GEMM lowering's column blocks need N in whole 16-column groups and one tile per
        // column block; the general path pads and splits otherwise.
        let vb = &self.graph.values[b];
        let grid_fits = single_matrix(&vb.shape).is_some_and(|(_, n)| {
            view_2d(&self.graph.values[a].shape).is_ok_and(|(m, k)| {
                u32::try_from(n).is_ok_and(|n| GemmGrid::new(m, k, n, self.tiles).is_ok())
            })
        });
        plain && grid_fits && host(b) && left
    }

    fn matmul(&mut self, index: usize, plan: Option<&OperatorPlan>) -> Result<(), LowerError> {
        if let Some(grid) = self.split_grid(index, plan)? {
            return self.split_matmul(index, &grid, plan);
        }
        let general_plan = plan.filter(|p| matches!(p, OperatorPlan::GeneralMatmul(_)));
        if general_plan.is_some() || !self.fast_matmul(index) {
            return self.general_matmul(index, general_plan);
        }
        let op = &self.graph.ops[index];
        let (a, b, c) = (op.operands[0], op.operands[1], op.results[0]);
        let (va, vb, vc) = (
            &self.graph.values[a],
            &self.graph.values[b],
            &self.graph.values[c],
        );
        let Some((_, n)) = single_matrix(&vb.shape) else {
            return Err(unsupported(
                "ipu.matmul",
                format!("op {index}: batched right operands take the general path"),
            ));
        };
        self.host(index, b, "ipu.matmul", "right operand")?;
        let (m, k) = view_2d(&va.shape)?;
        let n = to_u32(n)?;
        let provenance = self.provenance(index);
        let chained = self.placed.get(&a).cloned();
        let host_precision = chained
            .as_ref()
            .map_or(va.element, |blocks| blocks.precision);
        if vb.element != host_precision {
            return Err(unsupported(
                "ipu.matmul",
                format!(
                    "op {index}: operand types {:?} and {:?} differ",
                    host_precision, vb.element
                ),
            ));
        }
        let precision = GemmPrecision {
            host: host_precision,
            input: self.options.precision.input_for(
                host_precision,
                vc.element,
                super::returned_only(self.graph, self.graph.ops[index].results[0]),
            ),
            scale_exp: self.options.fp8_scale,
        };
        if vc.element != precision.partials() {
            return Err(unsupported(
                "ipu.matmul",
                format!(
                    "op {index}: the result must be {:?} (the GEMM partials), not {:?}",
                    precision.partials(),
                    vc.element
                ),
            ));
        }
        let hb = precision.host.bytes();
        let (grid, a_source) = match &chained {
            None => {
                self.host(index, a, "ipu.matmul", "left operand")?;
                let grid = super::gemm_grid((m, k, n), plan, self.tiles, index)?;
                let (chunk, b_rm) =
                    gemm::input_buffers(&mut self.program, &grid, precision, &provenance, true);
                let chunk = chunk.expect("A comes from the host");
                let pieces = gemm::a_chunk_pieces(&grid, chunk, hb);
                self.stream(a, pieces)?;
                (grid, (ASource::Chunks(chunk), b_rm))
            }
            Some(producer) => {
                if plan.is_some() {
                    info!(
                        op = index,
                        "the product of a device value splits its producer's row blocks; the plan's grid is not followed"
                    );
                }
                let grid = self.chained_grid(producer, n, index)?;
                let (_, b_rm) =
                    gemm::input_buffers(&mut self.program, &grid, precision, &provenance, false);
                let source = ASource::Gathered {
                    buffer: producer.buffer,
                    grid: producer.grid.clone(),
                };
                (grid, (source, b_rm))
            }
        };
        let (a_source, b_rm) = a_source;
        let b_pieces = gemm::b_chunk_pieces(&grid, b_rm, hb);
        self.stream(b, b_pieces)?;
        let c_rm = gemm::lower_matmul(
            &mut self.program,
            &grid,
            precision,
            (a_source, b_rm),
            &provenance,
        );
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        self.placed.insert(
            c,
            Blocks {
                grid,
                buffer: c_rm,
                precision: precision.partials(),
            },
        );
        Ok(())
    }

    /// The grid of the split GEMM lowering ([`super::gemm_split`]) for matmul `index`, when it
    /// applies: both operands from the host in the AMP input precision (nothing to convert),
    /// K and N in whole 16-groups, and a result that is only returned (its C ranges are read
    /// back where they are reduced). The plan's grid when it is a batch-free, normal
    /// `gemm_output_stationary` / `gemm_k_split` grid that fits, else the cheapest grid by the
    /// lowering's own model.
    fn split_grid(
        &self,
        index: usize,
        plan: Option<&OperatorPlan>,
    ) -> Result<Option<SplitGrid>, LowerError> {
        let op = &self.graph.ops[index];
        // A host operand an earlier op already streamed is on the device, not the host's.
        if !self.prefix.is_empty() || op.operands.iter().any(|v| self.placed.contains_key(v)) {
            return Ok(None);
        }
        let input = self.split_input(index);
        let Some(dims) = gemm_split::split_dims(self.graph, index, input) else {
            return Ok(None);
        };
        let precision = input;
        let a_value = self.ranged.get(&op.operands[0]);
        if a_value.is_none()
            && !matches!(
                self.graph.values[op.operands[0]].origin,
                Origin::Argument | Origin::Constant
            )
        {
            return Ok(None);
        }
        // A constant B may stay resident (written at initialization where it is read).
        let b_constant = self.graph.values[op.operands[1]].origin == Origin::Constant;
        let env = |weights: MemoryClass, b_resident: bool| SplitEnv {
            b_resident: b_resident && b_constant,
            ..self.split_env(index, weights, a_value)
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
    /// from `a_value` (whose bytes stay live across the op), and a result in the class a
    /// later split GEMM can send from when anything uses it.
    fn split_env(&self, index: usize, weights: MemoryClass, a_value: Option<&Ranged>) -> SplitEnv {
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
        // A left operand cast to the input precision first (FP8) adds its cast copy.
        if let Some(value) = a_value {
            let input = self.split_input(index);
            if value.precision != input {
                let longest = value.ranges.iter().map(|r| r.len).max().unwrap_or(0);
                reserved[usize::from(value.class == MemoryClass::Interleaved)] +=
                    longest * input.bytes();
            }
        }
        SplitEnv {
            weights,
            a_device: a_value.is_some(),
            result: used.then(|| SplitEnv::chained_result_class(weights)),
            reserved,
            b_resident: false,
        }
    }

    /// The AMP input precision of split matmul `index`: the policy's for its right operand
    /// (a host tensor, which the host encodes in FP8 under the FP8 policy).
    fn split_input(&self, index: usize) -> Precision {
        let op = &self.graph.ops[index];
        let (b, c) = (op.operands[1], op.results[0]);
        self.options.precision.input_for(
            self.graph.values[b].element,
            self.graph.values[c].element,
            super::returned_only(self.graph, c),
        )
    }

    /// The FP8 scale exponents of split matmul `index`'s operands: the plan's (`lhs_scale`,
    /// `rhs_scale`: chosen from the data ranges, calibrated or pinned), else the lowering's
    /// `fp8_scale`; 0 for other precisions.
    /// A left operand the device casts (a ranged value) is cast at the policy's `fp8_scale`,
    /// as the reference casts device values.
    fn split_scales(
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
    fn cast_ranged(
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
    fn split_matmul(
        &mut self,
        index: usize,
        grid: &SplitGrid,
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (a, b, c) = (op.operands[0], op.operands[1], op.results[0]);
        let precision = self.split_input(index);
        let scales = self.split_scales(precision, plan, self.ranged.contains_key(&a));
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
        let inputs = gemm_split::inputs(&mut self.program, grid, precision, &provenance);
        // A ranged left operand not in the input precision (F16 partials under the FP8
        // policy) is cast where it is first.
        let a_value = self.ranged.get(&a).cloned().map(|value| {
            if value.precision == precision {
                value
            } else {
                self.cast_ranged(&value, (precision, scales[0]), &provenance)
            }
        });
        // The host streams each operand in the AMP input precision (FP8 at its scale).
        if a_value.is_none() {
            self.stream_encoded(a, inputs.a_pieces.clone(), (precision, scales[0]))?;
        }
        self.stream_encoded(b, inputs.b_pieces.clone(), (precision, scales[1]))?;
        let value = gemm_split::lower(
            &mut self.program,
            grid,
            (precision, scales),
            &inputs,
            a_value.as_ref(),
            &provenance,
        );
        self.program.ops.push((provenance, "ipu.matmul".into(), 0));
        self.ranged.insert(c, value);
        Ok(())
    }

    /// The grid of a product whose left operand is `producer`: its row blocks, K blocks of
    /// the producer's column blocks, and the widest column blocks of N that fit.
    fn chained_grid(
        &self,
        producer: &Blocks,
        n: u32,
        index: usize,
    ) -> Result<GemmGrid, LowerError> {
        let p = &producer.grid;
        let fail = |detail: String| unsupported("ipu.matmul", format!("op {index}: {detail}"));
        if !p.cb.is_multiple_of(16) {
            return Err(fail(format!(
                "K blocks of {} are not a multiple of 16",
                p.cb
            )));
        }
        // Row blocks: the producer's, each split in `split` equal parts (a divisor of its
        // padded rows, so every part lies inside one producer block); column blocks of `cb`.
        // The busiest choice that fits the tiles wins; ties: wider column blocks.
        let mut best: Option<(u32, u32, u32)> = None;
        for cb in [64u32, 48, 32, 16] {
            if !n.is_multiple_of(cb) || p.cb * cb > GEMM_MAX_WEIGHT_ELEMENTS {
                continue;
            }
            for split in (1..=p.rows_padded).filter(|r| p.rows_padded.is_multiple_of(*r)) {
                let used = p.mb * split * (n / cb);
                if used <= self.tiles && best.is_none_or(|(u, _, _)| used > u) {
                    best = Some((used, cb, split));
                }
            }
        }
        let Some((_, cb, split)) = best else {
            return Err(fail(format!(
                "N = {n} has no column block (16..64) with {} row blocks on {} tiles and K blocks of {}",
                p.mb, self.tiles, p.cb
            )));
        };
        let rows_padded = p.rows_padded / split;
        // A K panel is `per_panel` of the producer's column blocks: as many as one A panel
        // and the GEMM's weight buffer allow.
        let per_panel = (1..=p.nb)
            .rev()
            .find(|&t| {
                rows_padded * t * p.cb * 2 <= gemm::A_PANEL_BYTES
                    && t * p.cb * cb <= GEMM_MAX_WEIGHT_ELEMENTS
            })
            .unwrap_or(1);
        Ok(GemmGrid {
            m: p.m,
            k: p.n,
            n,
            cb,
            nb: n / cb,
            mb: p.m.div_ceil(rows_padded),
            rows_padded,
            kb: per_panel * p.cb,
            k_steps: p.nb.div_ceil(per_panel),
        })
    }

    /// The fast path of `ipu.add` (a device value plus a host bias vector, or two device
    /// values on one grid): `(device operand, other operand)`, or `None` for the general path.
    fn fast_add(&self, index: usize) -> Option<(ValueId, ValueId)> {
        let op = &self.graph.ops[index];
        let (x, y) = (op.operands[0], op.operands[1]);
        let (device, other) = match (self.placed.get(&x), self.placed.get(&y)) {
            (Some(_), _) => (x, y),
            (None, Some(_)) => (y, x),
            (None, None) => return None,
        };
        let blocks = &self.placed[&device];
        if let Some(second) = self.placed.get(&other) {
            return (second.grid == blocks.grid && second.precision == blocks.precision)
                .then_some((device, other));
        }
        let v = &self.graph.values[other];
        let bias = v.shape.iter().rev().skip(1).all(|&d| d == 1)
            && v.shape.last().copied() == Some(u64::from(blocks.grid.n));
        let full = self.graph.values[op.results[0]]
            .shape
            .iter()
            .product::<u64>()
            == u64::from(blocks.grid.m) * u64::from(blocks.grid.n);
        (bias && full && v.element == blocks.precision).then_some((device, other))
    }

    fn add(&mut self, index: usize) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        for &x in &op.operands {
            if self.ranged.contains_key(&x) {
                if let Some(bias) = gemm_split::bias_operand(self.graph, index, x) {
                    return self.ranged_add(index, x, bias);
                }
            }
        }
        let Some((device, other)) = self.fast_add(index) else {
            return self.general_add(index);
        };
        let op = &self.graph.ops[index];
        let out = op.results[0];
        let provenance = self.provenance(index);
        let blocks = self.placed[&device].clone();
        let grid = blocks.grid.clone();
        let eb = blocks.precision.bytes();
        let result = self.pointwise_result(&provenance, &blocks);
        let (operand, b_rows) = if let Some(second) = self.placed.get(&other).cloned() {
            (second.buffer, None)
        } else {
            let bias_buffer = self.program.buffer(
                format!("{provenance}.bias"),
                MemoryClass::Standard,
                grid.cb * eb,
                grid.tiles(),
            );
            // A constant bias is written by the host to every tile of its column at
            // initialization (resident); an argument to one tile per column, which sends it
            // down the column.
            let constant = self.graph.values[other].origin == Origin::Constant;
            let pieces = grid
                .grid()
                .filter(|&(i, j)| constant || i == j % grid.mb)
                .map(|(i, j)| HostPiece {
                    tile: grid.tile(i, j),
                    place: Place::at(bias_buffer, 0),
                    tensor_offset: u64::from(j * grid.cb * eb),
                    bytes: grid.cb * eb,
                    runs: 1,
                    stride: 0,
                })
                .collect();
            self.stream(other, pieces)?;
            let moves: Vec<Move> = (0..grid.nb)
                .filter(|_| !constant)
                .filter_map(|j| {
                    let home = grid.tile(j % grid.mb, j);
                    let destinations: Vec<u32> = (0..grid.mb)
                        .map(|i| grid.tile(i, j))
                        .filter(|&t| t != home)
                        .collect();
                    (!destinations.is_empty()).then(|| Move {
                        source_tile: home,
                        source: Place::at(bias_buffer, 0),
                        destinations,
                        destination: Place::at(bias_buffer, 0),
                        bytes: grid.cb * eb,
                    })
                })
                .collect();
            if !moves.is_empty() {
                let phase = self.program.exchange_phases() as u32;
                self.program.run.push(TileStep::Exchange { phase, moves });
            }
            (bias_buffer, Some(1))
        };
        let mut runs = Vec::new();
        for (i, j) in grid.grid() {
            let rows = grid.rows(i);
            let spec = KernelSpec::Add {
                precision: blocks.precision,
                rows,
                cols: grid.cb,
                b_rows: b_rows.unwrap_or(rows),
            };
            runs.push(Run {
                tile: grid.tile(i, j),
                kernel: self.program.kernel(spec),
                args: vec![
                    Arg::Address(Place::at(blocks.buffer, 0)),
                    Arg::Address(Place::at(operand, 0)),
                    Arg::Address(Place::at(result, 0)),
                ],
            });
        }
        self.pointwise_step(provenance, "ipu.add", runs, out, &blocks, result);
        Ok(())
    }

    fn gelu(&mut self, index: usize, tanh: bool) -> Result<(), LowerError> {
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
    fn ranged_result(&mut self, x: ValueId, provenance: &str) -> Ranged {
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
    fn ranged_add(&mut self, index: usize, x: ValueId, bias: ValueId) -> Result<(), LowerError> {
        let out = self.graph.ops[index].results[0];
        let provenance = self.provenance(index);
        let source = self.ranged[&x].clone();
        let value = self.ranged_result(x, &provenance);
        let eb = source.precision.bytes();
        // The bias groups of each range: (first group, groups).
        let groups = |r: &gemm_split::OwnedRange| {
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
    fn ranged_gelu(
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
    fn range_runs(
        &mut self,
        value: &Ranged,
        run: impl Fn(&gemm_split::OwnedRange) -> (KernelSpec, Vec<Arg>),
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
    fn ranged_step(
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
    fn pointwise_result(&mut self, provenance: &str, blocks: &Blocks) -> BufferId {
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
    fn pointwise_step(
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

    fn lower_ops(&mut self, plans: &[Option<OperatorPlan>]) -> Result<(), LowerError> {
        let graph: &'g Graph = self.graph;
        for (index, op) in graph.ops.iter().enumerate() {
            match &op.kind {
                OpKind::Matmul { .. } => {
                    self.matmul(index, plans.get(index).and_then(|p| p.as_ref()))?
                }
                OpKind::Add => self.add(index)?,
                OpKind::Gelu { tanh } => self.gelu(index, *tanh)?,
                OpKind::LayerNorm { .. } | OpKind::Softmax => self.row_op(index)?,
                OpKind::Rearrange { .. } => self.rearrange(index)?,
                OpKind::Attention { causal, scale } => self.attention(
                    index,
                    *causal,
                    *scale,
                    plans.get(index).and_then(|p| p.as_ref()),
                )?,
                OpKind::Repeat { count, name, body } => self.repeat(index, *count, name, body)?,
                OpKind::Cast { scale } => self.cast(index, *scale)?,
            }
        }
        Ok(())
    }

    /// `ipu.repeat`: the carried values on the device, then one structured repeat whose body
    /// is the body function lowered once (its ops read the carried buffers) followed by a
    /// step that copies the body's results back into the carried buffers for the next
    /// iteration. The repeat's results are the carried buffers.
    fn repeat(
        &mut self,
        index: usize,
        count: u64,
        name: &str,
        body: &'g Graph,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (operands, results) = (op.operands.clone(), op.results.clone());
        let fail = |detail: String| unsupported("ipu.repeat", format!("op {index}: {detail}"));
        let count =
            u32::try_from(count).map_err(|_| fail(format!("count {count} is too large")))?;
        if body.outputs.len() != operands.len() || results.len() != operands.len() {
            return Err(fail(format!(
                "body @{name} returns {} values for {} carried",
                body.outputs.len(),
                operands.len()
            )));
        }
        let carried = operands
            .iter()
            .map(|&v| self.on_device(v))
            .collect::<Result<Vec<_>, _>>()?;
        // A body without an entry has no constants (one it uses anyway is reported by
        // `stream` as a constant without data).
        static NO_CONSTANTS: BTreeMap<ValueId, Vec<u8>> = BTreeMap::new();
        let (constants, plans) = match self.bodies.get(name) {
            Some(body) => (&body.constants, body.plans.as_slice()),
            None => (&NO_CONSTANTS, &[][..]),
        };
        let repeat_provenance = self.provenance(index);
        let prefix = format!("{repeat_provenance}.{name}.");
        if count == 0 {
            // No iteration: the results are the operands, and the repeat's profile entry
            // gets an empty step.
            self.program.run.push(TileStep::Compute {
                provenance: repeat_provenance.clone(),
                runs: Vec::new(),
            });
        } else {
            let header = self.program.run.len();
            self.program.run.push(TileStep::Repeat { count, steps: 0 });
            let mut inner = Lowering {
                graph: body,
                constants,
                bodies: self.bodies,
                options: self.options,
                tiles: self.tiles,
                program: std::mem::take(&mut self.program),
                placed: carried.iter().cloned().enumerate().collect(),
                prefix: prefix.clone(),
                ranged: BTreeMap::new(),
            };
            // The body's ops follow their own plans (the body is planned once).
            let lowered = inner.lower_ops(plans).and_then(|()| {
                let mut transfers = general::Transfers::default();
                for (k, &out) in body.outputs.iter().enumerate() {
                    let result = inner.on_device(out)?;
                    let target = &carried[k];
                    if result.grid.m != target.grid.m
                        || result.grid.n != target.grid.n
                        || result.precision != target.precision
                    {
                        return Err(fail(format!(
                            "body @{name} result {k} ({}x{} {:?}) does not match its carried value ({}x{} {:?})",
                            result.grid.m, result.grid.n, result.precision,
                            target.grid.m, target.grid.n, target.precision
                        )));
                    }
                    if result.buffer != target.buffer {
                        transfers.gather_blocks(&result, target);
                    }
                }
                // The repeat op's own step (its profile entry): the carry's local copies,
                // possibly none.
                let mut copies = inner.flush(transfers);
                copies.sort_by_key(|r| r.tile);
                inner.program.run.push(TileStep::Compute {
                    provenance: repeat_provenance.clone(),
                    runs: copies,
                });
                Ok(())
            });
            self.program = inner.program;
            lowered?;
            let steps = self.program.run.len() - header - 1;
            self.program.run[header] = TileStep::Repeat { count, steps };
        }
        self.program
            .ops
            .push((repeat_provenance, "ipu.repeat".into(), 0));
        for (k, &r) in results.iter().enumerate() {
            self.placed.insert(r, carried[k].clone());
        }
        Ok(())
    }

    fn outputs(&mut self) -> Result<(), LowerError> {
        let graph: &'g Graph = self.graph;
        for (output, &value) in graph.outputs.iter().enumerate() {
            let pieces = match self.ranged.get(&value) {
                Some(ranged) => ranged.read_pieces(),
                // A result that is an argument or a constant is streamed in and read back.
                None => self.row_pieces(value)?,
            };
            let v = &self.graph.values[value];
            self.program.bindings.push(HostBinding {
                name: format!("result{output}"),
                role: BindingRole::Output,
                precision: v.element,
                scale_exp: 0,
                shape: v.shape.clone(),
                pieces,
                data: Vec::new(),
            });
            self.program.run.push(TileStep::HostRead {
                binding: self.program.bindings.len() - 1,
            });
        }
        Ok(())
    }

    /// The read-back pieces of a value's row-major blocks: one per row of every block.
    fn row_pieces(&mut self, value: ValueId) -> Result<Vec<HostPiece>, LowerError> {
        {
            let blocks = self.on_device(value)?;
            let grid = &blocks.grid;
            let eb = blocks.precision.bytes();
            let pieces = grid
                .grid()
                .flat_map(|(i, j)| {
                    (0..grid.rows(i)).map(move |r| HostPiece {
                        tile: grid.tile(i, j),
                        place: Place::at(blocks.buffer, r * grid.cb * eb),
                        tensor_offset: u64::from(
                            ((grid.first_row(i) + r) * grid.n + j * grid.cb) * eb,
                        ),
                        bytes: grid.cb * eb,
                        runs: 1,
                        stride: 0,
                    })
                })
                .collect();
            Ok(pieces)
        }
    }
}

/// Lowers `graph` (see the module docs); `plans[i]` is op i's selected plan, if any;
/// `bodies` holds the constants of the repeat bodies it calls.
pub fn lower(
    name: &str,
    graph: &Graph,
    plans: &[Option<OperatorPlan>],
    constants: &BTreeMap<ValueId, Vec<u8>>,
    bodies: &BodyConstants,
    options: &LowerOptions,
) -> Result<TileProgram, LowerError> {
    let mut lowering = Lowering {
        graph,
        constants,
        bodies,
        options,
        tiles: 0,
        program: TileProgram {
            name: name.to_string(),
            tiles: options.target.geometry.tiles.value,
            ..TileProgram::default()
        },
        placed: BTreeMap::new(),
        prefix: String::new(),
        ranged: BTreeMap::new(),
    };
    lowering.tiles = options.tiles.min(lowering.program.tiles);
    lowering.lower_ops(plans)?;
    lowering.outputs()?;
    let program = lowering.program;
    info!(
        logical_shards = program.logical_shards(),
        exchange_phases = program.exchange_phases(),
        "lowered graph for package construction"
    );
    Ok(program)
}
