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
use ipu_dialects::plan::{
    AttentionPlan, AttentionSchedule, GemmPlan, GemmTileGrid, OperatorPlan, Orientation,
};
use ipu_runtime::package::BindingRole;
use tracing::info;

use super::gemm::{self, ASource, GemmGrid, GemmPrecision};
use super::program::{Arg, BufferId, HostBinding, HostPiece, Place, Run, TileProgram, TileStep};
use super::{LowerError, LowerOptions};
use crate::strategies::repeat;
use crate::strategies::split_gemm::{self, DeviceA, Ranged, SplitEnv, SplitGrid};
use crate::tiling::{Graph, OpKind, Origin, ValueId};

mod attention_rows;
pub(crate) mod general;
mod pointwise;
mod split;
mod stacks;
mod stationary;
mod waves;

/// A device value: row-major blocks over a grid (see the module docs).
#[derive(Debug, Clone)]
struct Blocks {
    grid: GemmGrid,
    buffer: BufferId,
    precision: Precision,
}

/// The lowering's grid of a plan's blocks (whole rows of the 2-D view by column blocks).
fn gemm_grid(blocks: &crate::strategies::blocks::BlockGrid) -> GemmGrid {
    GemmGrid {
        m: blocks.m,
        k: blocks.n,
        n: blocks.n,
        cb: blocks.cols_per_block(),
        nb: blocks.col_blocks,
        mb: blocks.row_blocks,
        rows_padded: blocks.rows_per_block,
        kb: blocks.n,
        k_steps: 1,
    }
}

fn unsupported(op: &str, detail: impl Into<String>) -> LowerError {
    LowerError::Unsupported {
        op: op.into(),
        detail: detail.into(),
    }
}

/// The error of op `index` (`op`) whose selected plan `plan` the lowering cannot follow, and why.
fn not_followed(
    op: &str,
    index: usize,
    plan: Option<&OperatorPlan>,
    why: impl std::fmt::Display,
) -> LowerError {
    let plan = plan.map_or(String::new(), ToString::to_string);
    unsupported(
        op,
        format!("op {index}: plan {plan} cannot be followed: {why}"),
    )
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

/// A constant's bytes (`data`, in `element`) as the host streams them: encoded once, here,
/// as the host would encode an argument, in `precision` (FP8 at scale `scale_exp`); `what`
/// names the constant in the error.
fn encode_constant(
    data: Vec<u8>,
    element: Precision,
    (precision, scale_exp): (Precision, i32),
    what: &str,
) -> Result<Vec<u8>, LowerError> {
    if precision == element {
        return Ok(data);
    }
    ipu_device::numerics::decode_bytes(&data, element, 0)
        .and_then(|values| {
            ipu_device::numerics::encode_bytes(
                &values,
                precision,
                scale_exp,
                ipu_device::numerics::Rounding::NearestEvenSaturating,
            )
        })
        .map_err(|e| {
            LowerError::Input(format!(
                "{what}: cannot encode as {precision:?} at scale {scale_exp}: {e}"
            ))
        })
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
    /// Values held as a split GEMM's result ranges ([`split_gemm::Ranged`]) instead of
    /// row-major [`Blocks`].
    ranged: BTreeMap<ValueId, Ranged>,
    /// Values a GEMM in waves left on its tiles or homes ([`waves::WavesValue`]).
    waves: BTreeMap<ValueId, waves::WavesValue>,
    /// Values left where only the host reads them (an activation-stationary GEMM's result),
    /// with the pieces it reads them from.
    read_back: BTreeMap<ValueId, Vec<HostPiece>>,
    /// In a repeat body: the arguments that are slices of the repeat's per-iteration stacks,
    /// streamed from the host once per iteration.
    iterated: BTreeMap<ValueId, IteratedStream>,
    /// In a repeat body reading resident stacks: the repeat's iteration counter
    /// ([`stacks`]).
    counter: Option<BufferId>,
    /// In a repeat body reading resident stacks: which tiles store their pieces.
    holders: Option<repeat::Holders>,
}

/// A repeat body's argument that is slice i of a stacked entry argument in iteration i: the
/// host streams the stack's binding `name` (of `shape`, `iterations` slices) one slice per
/// execution of its write.
#[derive(Debug, Clone)]
struct IteratedStream {
    name: String,
    shape: Vec<u64>,
    iterations: u32,
    /// A parameter or constant stack, resident on the device ([`stacks`]); `None`: an
    /// argument streamed by the host one slice per iteration.
    resident: Option<stacks::ResidentStack>,
}

impl<'g> Lowering<'g> {
    fn binding_name(&self, value: ValueId) -> String {
        if let Some(stream) = self.iterated.get(&value) {
            return stream.name.clone();
        }
        let v = &self.graph.values[value];
        match (v.origin, v.parameter) {
            // Arguments are the first values, in order: the id is the argument number.
            (Origin::Argument, _) => format!("{}arg{value}", self.prefix),
            (_, Some(argument)) => format!("{}arg{argument}", self.prefix),
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
        if let Some(resident) = self
            .iterated
            .get(&value)
            .and_then(|stream| stream.resident.clone())
        {
            return self.stream_resident(value, pieces, (precision, scale_exp), resident);
        }
        let name = self.binding_name(value);
        let iterations = self
            .iterated
            .get(&value)
            .map_or(1, |stream| stream.iterations);
        if let Some(binding) = self.program.bindings.iter_mut().find(|b| {
            b.name == name
                && b.precision == precision
                && b.scale_exp == scale_exp
                && b.role != BindingRole::Output
        }) {
            // An input stack is streamed one slice per write: not also whole. A resident
            // stack is written whole anyway (its pieces place every slice).
            if binding.iterations != iterations && binding.role == BindingRole::Input {
                return Err(unsupported(
                    "host stream",
                    format!(
                        "{name} is streamed whole and one slice per iteration of a scan; a stack is read by the scan alone"
                    ),
                ));
            }
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
        // A parameter's tensor is the caller's, given at initialization: no data here.
        let data = if weight && v.parameter.is_none() {
            let data =
                self.constants.get(&value).cloned().ok_or_else(|| {
                    LowerError::Input(format!("constant value {value} has no data"))
                })?;
            encode_constant(
                data,
                v.element,
                (precision, scale_exp),
                &format!("constant value {value}"),
            )?
        } else {
            Vec::new()
        };
        // A slice of a per-iteration stack: the stack's binding, one slice per write.
        let (shape, iterations) = match self.iterated.get(&value) {
            Some(stream) => (stream.shape.clone(), stream.iterations),
            None => (v.shape.clone(), 1),
        };
        self.program.bindings.push(HostBinding {
            name,
            role: match (weight, v.parameter) {
                (true, Some(_)) => BindingRole::Parameter,
                (true, None) => BindingRole::Weight,
                (false, _) => BindingRole::Input,
            },
            precision,
            scale_exp,
            shape,
            iterations,
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
            Origin::Opaque => Err(unsupported(
                op,
                format!("op {index}: the {role} comes from an op the graph does not model"),
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
                // The product of a device value runs on its producer's row blocks; a plan for
                // its own grid cannot be followed here (the planner plans such products as
                // gemm_general, which the general matmul follows).
                if let Some(plan) = plan {
                    return Err(unsupported(
                        "ipu.matmul",
                        format!("op {index}: plan {plan} cannot be followed: the left operand is already on the device, in its producer's row blocks"),
                    ));
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

    fn lower_ops(&mut self, plans: &[Option<OperatorPlan>]) -> Result<(), LowerError> {
        let graph: &'g Graph = self.graph;
        for (index, op) in graph.ops.iter().enumerate() {
            let plan = plans.get(index).and_then(|p| p.as_ref());
            match &op.kind {
                OpKind::Matmul { .. } => match plan {
                    Some(OperatorPlan::GemmWaves(waves)) => self.gemm_waves(index, waves, plans)?,
                    Some(OperatorPlan::GemmActivationStationary(stationary)) => {
                        self.gemm_stationary(index, stationary)?
                    }
                    _ => self.matmul(index, plan)?,
                },
                OpKind::Add | OpKind::Gelu { .. } | OpKind::Cast { .. } | OpKind::Map { .. } => {
                    self.pointwise(index, plan)?
                }
                OpKind::Broadcast => match plan {
                    Some(OperatorPlan::Gather(_)) => self.gather(index, plan)?,
                    _ => self.pointwise(index, plan)?,
                },
                OpKind::LayerNorm { .. } | OpKind::Softmax | OpKind::Reduce { .. } => {
                    self.rows(index, plan)?
                }
                OpKind::Rearrange { .. } => self.rearrange(index, plan)?,
                OpKind::Reshape => self.reshape(index, plan)?,
                OpKind::Slice { .. } | OpKind::Concat { .. } => self.gather(index, plan)?,
                OpKind::Attention { causal, scale } => match plan {
                    Some(OperatorPlan::Attention(
                        rows @ AttentionPlan {
                            schedule: AttentionSchedule::FlashRows { .. },
                            ..
                        },
                    )) => self.attention_rows(index, (*causal, *scale), rows)?,
                    _ => self.attention(index, *causal, *scale, plan)?,
                },
                OpKind::Repeat {
                    count,
                    name,
                    body,
                    iterated,
                } => self.repeat(index, (*count, name, body, iterated), plan)?,
            }
        }
        Ok(())
    }

    /// `ipu.repeat`: the carried values on the device, then one structured repeat whose body
    /// is the body function lowered once (its ops read the carried buffers) followed by a
    /// step that copies the body's results back into the carried buffers for the next
    /// iteration. The repeat's results are the carried buffers. A per-iteration stack is
    /// streamed by the host into the body where its slice is read, one slice per iteration
    /// (the write is a step of the repeat's body).
    fn repeat(
        &mut self,
        index: usize,
        (count, name, body, iterated): (u64, &str, &'g Graph, &[ValueId]),
        plan: Option<&OperatorPlan>,
    ) -> Result<(), LowerError> {
        let op = &self.graph.ops[index];
        let (operands, results) = (op.operands.clone(), op.results.clone());
        let name_of_op = op.kind.name();
        let fail = |detail: String| unsupported(name_of_op, format!("op {index}: {detail}"));
        repeat::followed_plan(plan, count)
            .map_err(|why| not_followed(name_of_op, index, plan, why))?;
        let count =
            repeat::repeat_shape(name, count, body.outputs.len(), operands.len()).map_err(fail)?;
        let streams = self
            .iterated_streams(iterated, operands.len(), count)
            .map_err(fail)?;
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
            let mut header = self.program.run.len();
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
                waves: BTreeMap::new(),
                read_back: BTreeMap::new(),
                iterated: streams,
                counter: None,
                holders: None,
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
                // possibly none, and the advance of the iteration counter.
                let mut copies = inner.flush(transfers);
                let mut fills = Vec::new();
                if let Some(counter) = inner.counter {
                    let (fill, mut counts) = inner.counter_runs(counter);
                    copies.append(&mut counts);
                    fills = fill;
                }
                copies.sort_by_key(|r| r.tile);
                inner.program.run.push(TileStep::Compute {
                    provenance: repeat_provenance.clone(),
                    runs: copies,
                });
                Ok(fills)
            });
            self.program = inner.program;
            let fills = lowered?;
            if !fills.is_empty() {
                // The counter starts at zero before the loop.
                self.program.run.insert(
                    header,
                    TileStep::Compute {
                        provenance: format!("{repeat_provenance}.counter"),
                        runs: fills,
                    },
                );
                header += 1;
            }
            let steps = self.program.run.len() - header - 1;
            self.program.run[header] = TileStep::Repeat { count, steps };
        }
        self.program
            .ops
            .push((repeat_provenance, name_of_op.into(), 0));
        for (k, &r) in results.iter().enumerate() {
            self.placed.insert(r, carried[k].clone());
        }
        Ok(())
    }

    /// The host streams of a repeat's per-iteration stacks `iterated`, by the body argument
    /// reading each slice (the arguments after the `carried` ones). Each stack must be an
    /// entry function argument (the host streams it): not a constant or parameter (written
    /// once, at initialization), not a value computed on the device, not a stack of a body.
    fn iterated_streams(
        &self,
        iterated: &[ValueId],
        carried: usize,
        count: u32,
    ) -> Result<BTreeMap<ValueId, IteratedStream>, String> {
        let mut streams = BTreeMap::new();
        for (k, &stack) in iterated.iter().enumerate() {
            let value = &self.graph.values[stack];
            let entry = self.prefix.is_empty();
            let origin = match (value.origin, value.parameter) {
                (Origin::Argument, _) if entry => Ok(None),
                // Written once, at initialization: resident.
                (Origin::Constant, Some(_)) if entry => Ok(Some(stacks::ResidentStack {
                    role: BindingRole::Parameter,
                    data: None,
                })),
                (Origin::Constant, None) if entry => match self.constants.get(&stack) {
                    Some(data) => Ok(Some(stacks::ResidentStack {
                        role: BindingRole::Weight,
                        data: Some((data.clone(), value.element)),
                    })),
                    None => Err("a constant without data"),
                },
                (Origin::Argument | Origin::Constant, _) => {
                    Err("a value of an enclosing repeat body")
                }
                (Origin::Op(_), _) => Err("computed on the device"),
                (Origin::Opaque, _) => Err("from an op the graph does not model"),
            };
            let resident = origin.map_err(|origin| {
                format!(
                    "iterated operand #{} is {origin}; per-iteration stacks are entry function arguments (streamed per iteration), parameters or constants (resident)",
                    carried + k
                )
            })?;
            streams.insert(
                carried + k,
                IteratedStream {
                    name: self.binding_name(stack),
                    shape: value.shape.clone(),
                    iterations: count,
                    resident,
                },
            );
        }
        Ok(streams)
    }

    fn outputs(&mut self) -> Result<(), LowerError> {
        let graph: &'g Graph = self.graph;
        for (output, &value) in graph.outputs.iter().enumerate() {
            let pieces = match (self.waves.get(&value), self.ranged.get(&value)) {
                _ if self.read_back.contains_key(&value) => self.read_back[&value].clone(),
                (Some(waves), _) => waves.read_pieces(),
                (None, Some(ranged)) => ranged.read_pieces(),
                // A result that is an argument or a constant is streamed in and read back.
                (None, None) => self.row_pieces(value)?,
            };
            let v = &self.graph.values[value];
            self.program.bindings.push(HostBinding {
                name: format!("result{output}"),
                role: BindingRole::Output,
                precision: v.element,
                scale_exp: 0,
                shape: v.shape.clone(),
                iterations: 1,
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
                        pad: 0,
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
        waves: BTreeMap::new(),
        read_back: BTreeMap::new(),
        iterated: BTreeMap::new(),
        counter: None,
        holders: None,
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
