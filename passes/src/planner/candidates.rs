//! Operator-plan candidates per op, built only from kernels that exist: every kernel a
//! candidate would call is checked with `KernelSpec::validate` and the candidate is dropped
//! if one is not supported (FP8 arithmetic outside the GEMM, oversized weight blocks, ...).

use ipu_device::{
    cost,
    kernels::spec::{ElementOrder, GeluForm, KernelSpec},
    MemoryClass, Precision, Target,
};
use ipu_dialects::format::PlanValue;
use ipu_dialects::plan::{
    AttentionPlan, AttentionSchedule, OperatorPlan, PointwiseOp, PointwisePlacement, PointwisePlan,
    RearrangePlan, RowOp, RowsPlan,
};

use crate::element;

use super::cost::{gemm_tile_cycles, shard_memory, MemoryUse, ValueFormat};
use super::graph::{Graph, Op, OpKind};
use super::layout::{block_size, canonical_dims, split_is_exact_cover, PhaseLoad, Shards};
use super::{PlannerOptions, PrecisionPolicy};

/// What a candidate needs of one operand: the blocks each tile reads and their format.
#[derive(Debug, Clone, PartialEq)]
pub struct Need {
    pub shards: Shards,
    pub format: ValueFormat,
}

/// An exchange phase inside an op, described compactly (transfers are generated on demand:
/// the analytical model folds them into endpoint loads, finalist selection schedules them).
#[derive(Debug, Clone, PartialEq)]
pub enum InternalPhase {
    /// K-split reduce-scatter: `groups` groups of `group_size` consecutive tiles; member `kk`
    /// receives slice `kk` of the partials (`slice_bytes`) from every other member.
    ReduceScatter {
        groups: u32,
        group_size: u32,
        slice_bytes: u64,
    },
    /// A tensor moved from one blocking to another.
    Reshard { from: Shards, to: Shards },
    /// An explicit list of transfers `(source, destinations, bytes)`: a phase the lowering
    /// builds exactly this way (the split GEMM's panels and reduction).
    Transfers(std::sync::Arc<Vec<(u32, Vec<u32>, u64)>>),
}

impl InternalPhase {
    /// Calls `visit(source, destinations, bytes)` for every transfer.
    pub fn for_each_transfer(&self, mut visit: impl FnMut(u32, &[u32], u64)) {
        match self {
            InternalPhase::ReduceScatter {
                groups,
                group_size,
                slice_bytes,
            } => {
                for group in 0..*groups {
                    for member in 0..*group_size {
                        let home = group * group_size + member;
                        for other in 0..*group_size {
                            if other != member {
                                visit(group * group_size + other, &[home], *slice_bytes);
                            }
                        }
                    }
                }
            }
            InternalPhase::Reshard { from, to } => {
                super::layout::for_each_transfer(from, to, visit)
            }
            InternalPhase::Transfers(transfers) => {
                for (source, destinations, bytes) in transfers.iter() {
                    visit(*source, destinations, *bytes);
                }
            }
        }
    }

    /// Endpoint loads of the phase on `tiles` tiles.
    pub fn load(&self, tiles: u32) -> PhaseLoad {
        let mut load = PhaseLoad::new(tiles);
        self.for_each_transfer(|source, destinations, bytes| {
            load.add_transfer(source, destinations, bytes)
        });
        load
    }
}

/// One way to run an op.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub plan: OperatorPlan,
    /// Tiles the plan uses.
    pub tiles: u32,
    pub needs: Vec<Need>,
    /// Where the result lives afterwards (one owner per block) and its format.
    pub output: Need,
    /// Cycles of the busiest tile's kernel calls.
    pub compute_cycles: u64,
    /// Exchange phases inside the op (K-split reduction, materialized attention scores).
    pub internal_exchange_cycles: u64,
    pub internal_row_bytes: u64,
    /// The operand exchange runs in this many phases, each bringing the next K panel
    /// (double-buffered), so the operand blocks never have to fit a tile whole.
    pub k_steps: u32,
    /// The right operand is a constant the host writes, replicated, exactly where this plan
    /// reads it (at initialization, so runs move no weights; it costs its replicas' memory
    /// for the whole program).
    pub resident_weights: bool,
    /// The internal phases, for expansion (`ipu.repeat` candidates expand through their body).
    pub internal_phases: Vec<InternalPhase>,
    /// Per-tile working memory beyond the operands' and result's buffers.
    pub transient: MemoryUse,
    pub kernels: Vec<KernelSpec>,
    /// Padding granularities this plan pads a value to (16-column AMP groups, blocks).
    pub padding_groups: Vec<u64>,
    /// For `ipu.repeat`: the body's plan choices.
    pub body_choices: Option<Vec<usize>>,
    pub body_cycles: Option<(u64, u64)>,
    /// Where the results after the first live (an `ipu.repeat` carrying several values).
    pub extra_outputs: Vec<Need>,
    /// `(operand position, kernel)`: the op reads that operand where it already is (the
    /// beam takes the operand's home as its need: a split GEMM gathering its A panels from
    /// a device value's ranges, priced in its internal phases). With a kernel, the op runs
    /// there in place (a bias add or GeLU of a split GEMM's ranges): the home is also the
    /// result's, and the kernel is priced over the home's block.
    pub follows: Option<(usize, Option<KernelSpec>)>,
}

impl Candidate {
    /// A candidate of `plan` on `tiles` tiles reading `needs` and leaving `output`, with
    /// nothing else yet: no cycles, kernels, internal phases, padding, repeat body or working
    /// memory; one K step. Callers set the rest with struct update syntax.
    pub(super) fn new(plan: OperatorPlan, tiles: u32, needs: Vec<Need>, output: Need) -> Candidate {
        Candidate {
            plan,
            tiles,
            needs,
            output,
            compute_cycles: 0,
            internal_exchange_cycles: 0,
            internal_row_bytes: 0,
            internal_phases: Vec::new(),
            k_steps: 1,
            resident_weights: false,
            transient: MemoryUse::default(),
            kernels: Vec::new(),
            padding_groups: Vec::new(),
            body_choices: None,
            body_cycles: None,
            extra_outputs: Vec::new(),
            follows: None,
        }
    }

    /// A candidate that runs `spec` where operand `position` already is
    /// ([`Candidate::follows`]): `needs` and `output` are placeholders the beam replaces with
    /// the operand's home, and prices the kernel over its block.
    fn following(
        plan: OperatorPlan,
        needs: Vec<Need>,
        output: Need,
        (position, spec): (usize, KernelSpec),
    ) -> Candidate {
        Candidate {
            kernels: vec![spec.clone()],
            follows: Some((position, Some(spec))),
            ..Candidate::new(plan, 1, needs, output)
        }
    }
}

/// Divisors of `n`, ascending.
pub fn divisors(n: u32) -> Vec<u32> {
    let mut small = Vec::new();
    let mut large = Vec::new();
    let mut d = 1;
    while d * d <= n {
        if n.is_multiple_of(d) {
            small.push(d);
            if d * d != n {
                large.push(n / d);
            }
        }
        d += 1;
    }
    large.reverse();
    small.extend(large);
    small
}

/// A three-axis grid as the plans hold it (the planner's grids over canonical shapes).
pub(super) fn grid3(grid: &[u32]) -> [u32; 3] {
    [0, 1, 2].map(|axis| grid.get(axis).copied().unwrap_or(1))
}

pub(super) fn u32_of(value: u64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// The arithmetic precision of vector kernels under a policy (the device has no FP8
/// arithmetic outside the AMP).
pub(super) fn vector_precision(policy: PrecisionPolicy) -> Precision {
    match policy {
        PrecisionPolicy::F32 => Precision::F32,
        PrecisionPolicy::F16 | PrecisionPolicy::Fp8 => Precision::F16,
    }
}

/// The precision a vector op computes in: its result's element type (the lowering runs
/// layer norms, softmaxes, adds and GeLUs in the graph's types, whatever the policy sets for
/// the AMP's inputs), or the policy's vector precision for an FP8 result.
pub(super) fn op_vector_precision(graph: &Graph, op: &Op, policy: PrecisionPolicy) -> Precision {
    match op.results.first().map(|&r| graph.values[r].element) {
        Some(element @ (Precision::F16 | Precision::F32)) => element,
        _ => vector_precision(policy),
    }
}

/// The AMP input precision of a product of `host` operands with a `result` element type
/// under `policy`: the policy's when its partials are the result's type, or under the f32
/// policy for a product that is only returned (`returned_only`: F16 operands cast up, the
/// f32 result cast back down); else the operands' own (the lowering's rule,
/// `lower::PrecisionPolicy::input_for`).
pub(crate) fn amp_input(
    policy: PrecisionPolicy,
    host: Precision,
    result: Precision,
    returned_only: bool,
) -> Precision {
    crate::lower::product_input(policy.input(), host, result, returned_only)
}

pub(super) fn all_valid(kernels: &[KernelSpec]) -> bool {
    kernels.iter().all(|spec| spec.validate().is_ok())
}

/// Tile grids of `axes.len()` factors whose product divides an active tile count, each factor
/// splitting its axis (size in `axes`, `None`: the factor must be 1... handled by the caller)
/// without an empty block.
pub(super) fn grids(active: &[u32], sizes: &[u64]) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    for &count in active {
        let mut stack = vec![(Vec::<u32>::new(), count)];
        while let Some((prefix, remaining)) = stack.pop() {
            if prefix.len() == sizes.len() {
                out.push(prefix);
                continue;
            }
            for d in divisors(remaining) {
                if split_is_exact_cover(sizes[prefix.len()], d) {
                    let mut next = prefix.clone();
                    next.push(d);
                    stack.push((next, remaining / d));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Candidates for `graph.ops[index]` (not `ipu.repeat`, which the beam plans through its
/// body).
pub fn candidates(
    graph: &Graph,
    index: usize,
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let op = &graph.ops[index];
    let active = options.active_tile_counts();
    match &op.kind {
        OpKind::Matmul { .. } => super::gemm::gemm_candidates(graph, op, &active, options, target),
        OpKind::Add | OpKind::Gelu { .. } | OpKind::Cast { .. } => {
            pointwise_candidates(graph, op, &active, options, target)
        }
        OpKind::Softmax | OpKind::LayerNorm { .. } => {
            row_candidates(graph, op, &active, options, target)
        }
        OpKind::Rearrange { .. } => rearrange_candidates(graph, op, &active, options, target),
        OpKind::Attention { causal, .. } => {
            attention_candidates(graph, op, *causal, &active, options, target)
        }
        OpKind::Repeat { .. } => Vec::new(),
    }
}

/// Plan parameters holding the FP8 scale of a GEMM operand, by operand position.
pub const SCALE_PARAMS: [&str; 2] = ["lhs_scale", "rhs_scale"];

/// Applies the FP8 operand scales `constraint` pins (`lhs_scale`, `rhs_scale`) to a GEMM
/// candidate that records them: the plan parameter and the format its operand is converted
/// to. A dump of the chosen plans, fed back as constraints, so reproduces the scales chosen
/// from data ranges without the ranges (calibration) being given again. Other candidates, and
/// scales the constraint does not pin, are left as they are.
pub fn pin_scales(candidate: &mut Candidate, constraint: &super::Constraint) {
    let Some(mut scales) = candidate.plan.scales() else {
        return;
    };
    for (position, name) in SCALE_PARAMS.iter().enumerate() {
        let Some(PlanValue::Int(pinned)) = constraint.params.get(*name) else {
            continue;
        };
        // A scale outside the plan's range is left unpinned; the constraint then admits no
        // candidate and the planner reports it.
        let Ok(pinned) = i32::try_from(*pinned) else {
            continue;
        };
        if let Some(need) = candidate.needs.get_mut(position) {
            if need.format.precision.is_fp8() {
                need.format.scale = i64::from(pinned);
                if position == 0 {
                    scales.lhs = pinned;
                } else {
                    scales.rhs = pinned;
                }
            }
        }
    }
    candidate.plan.set_scales(scales);
}

/// The axis a broadcast operand's canonical axis maps to: `None` where the operand has size 1
/// and the result does not (it is replicated along that grid axis).
fn broadcast_axes(operand: [u64; 3], result: [u64; 3]) -> [Option<usize>; 3] {
    [0, 1, 2].map(|axis| {
        if operand[axis] == result[axis] {
            Some(axis)
        } else {
            None
        }
    })
}

fn pointwise_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    if let Some(candidate) = ranged_candidate(graph, op, options) {
        return vec![candidate];
    }
    if let Some(candidate) = in_place_candidate(graph, op) {
        return vec![candidate];
    }
    let out_value = &graph.values[op.results[0]];
    let out_dims = canonical_dims(&out_value.shape);
    let precision = op_vector_precision(graph, op, options.precision);
    let mut out = Vec::new();
    for grid in grids(active, &out_dims) {
        let tiles: u32 = grid.iter().product();
        let block: Vec<u64> = (0..3)
            .map(|axis| block_size(out_dims[axis], grid[axis]))
            .collect();
        let block_elements = block.iter().product::<u64>();
        let rows = block[0] * block[1];
        let cols = block[2];
        let orders: &[ElementOrder] = match op.kind {
            OpKind::Add
                if op
                    .operands
                    .iter()
                    .any(|&v| canonical_dims(&graph.values[v].shape) != out_dims) =>
            {
                &[ElementOrder::RowMajor]
            }
            OpKind::Cast { .. } => &[ElementOrder::RowMajor],
            _ => &[ElementOrder::RowMajor, ElementOrder::AmpOutput],
        };
        for &order in orders {
            let (spec, kind, output_format) = match op.kind {
                OpKind::Add => (
                    KernelSpec::Add {
                        precision,
                        rows: u32_of(rows),
                        cols: u32_of(cols),
                        b_rows: if canonical_dims(&graph.values[op.operands[1]].shape)[1]
                            == out_dims[1]
                            && out_dims[1] > 1
                        {
                            u32_of(rows)
                        } else {
                            1
                        },
                    },
                    PointwiseOp::Add,
                    ValueFormat {
                        order,
                        ..ValueFormat::row_major(precision)
                    },
                ),
                OpKind::Gelu { tanh } => (
                    KernelSpec::Gelu {
                        precision,
                        form: if tanh { GeluForm::Tanh } else { GeluForm::Erf },
                        elements: u32_of(block_elements),
                    },
                    PointwiseOp::Gelu,
                    ValueFormat {
                        order,
                        ..ValueFormat::row_major(precision)
                    },
                ),
                OpKind::Cast { scale } => {
                    let to = out_value.element;
                    let from = graph.values[op.operands[0]].element;
                    (
                        KernelSpec::Cast {
                            from,
                            to,
                            elements: u32_of(block_elements),
                        },
                        PointwiseOp::Cast,
                        ValueFormat {
                            scale: if to.is_fp8() { scale } else { 0 },
                            ..ValueFormat::row_major(to)
                        },
                    )
                }
                _ => continue,
            };
            if spec.validate().is_err() {
                continue;
            }
            let needs: Vec<Need> = op
                .operands
                .iter()
                .map(|&operand| {
                    let dims = canonical_dims(&graph.values[operand].shape);
                    let axes = broadcast_axes(dims, out_dims);
                    let input_format = match op.kind {
                        OpKind::Cast { .. } => {
                            ValueFormat::row_major(graph.values[operand].element)
                        }
                        _ => output_format,
                    };
                    Need {
                        shards: Shards::needed_by_grid(
                            dims,
                            input_format.precision.bytes(),
                            &grid,
                            &axes,
                        ),
                        format: input_format,
                    }
                })
                .collect();
            let output = Shards::needed_by_grid(
                out_dims,
                output_format.precision.bytes(),
                &grid,
                &[Some(0), Some(1), Some(2)],
            );
            let plan = OperatorPlan::Pointwise(PointwisePlan {
                op: kind,
                placement: PointwisePlacement::Grid {
                    grid: grid3(&grid),
                    tiles,
                    order: element::order(order),
                },
                precision: element::element(output_format.precision),
            });
            out.push(Candidate {
                compute_cycles: cost::kernel_cycles(&spec, target),
                kernels: vec![spec],
                ..Candidate::new(
                    plan,
                    tiles,
                    needs,
                    Need {
                        shards: output,
                        format: output_format,
                    },
                )
            });
        }
    }
    out
}

/// The GeLU kernel of a candidate that follows its operand, sized by the beam
/// ([`Candidate::follows`]).
fn followed_gelu(precision: Precision, tanh: bool) -> KernelSpec {
    KernelSpec::Gelu {
        precision,
        form: if tanh { GeluForm::Tanh } else { GeluForm::Erf },
        elements: 16,
    }
}

/// The one candidate of a GeLU, or an add, of a full-size value computed on the device (not
/// one the split GEMM lowering holds as ranges): the lowering runs it in place on that value's
/// blocks (an add gathers its other full-size operand onto them and broadcasts a row vector
/// over them), so the candidate [`Candidate::follows`] the operand: the beam takes its home
/// as the need and the result's home and prices the kernel over its block.
fn in_place_candidate(graph: &Graph, op: &Op) -> Option<Candidate> {
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let full = |v: usize| canonical_dims(&graph.values[v].shape) == out_dims;
    let position = (0..op.operands.len()).find(|&p| {
        let v = op.operands[p];
        full(v) && matches!(graph.values[v].origin, super::graph::Origin::Op(_))
    })?;
    let value = &graph.values[op.operands[position]];
    let precision = value.element;
    let (kind, spec) = match op.kind {
        OpKind::Gelu { tanh } => (PointwiseOp::Gelu, followed_gelu(precision, tanh)),
        // Rows and columns (and whether the other operand is a full block or a row) are
        // the followed home's: the beam fills them in.
        OpKind::Add => (
            PointwiseOp::Add,
            KernelSpec::Add {
                precision,
                rows: 1,
                cols: 16,
                b_rows: 1,
            },
        ),
        _ => return None,
    };
    let format = ValueFormat::row_major(precision);
    // Placeholders: the beam puts the followed operand's home in its need and the result's
    // (and a full-size second operand's need); a row vector is homed whole.
    let needs = op
        .operands
        .iter()
        .map(|&v| {
            let dims = canonical_dims(&graph.values[v].shape);
            Need {
                shards: Shards::homed(dims, [1, 1, 1], precision.bytes(), 0),
                format,
            }
        })
        .collect();
    Some(Candidate::following(
        OperatorPlan::Pointwise(PointwisePlan {
            op: kind,
            placement: PointwisePlacement::InPlace,
            precision: element::element(precision),
        }),
        needs,
        Need {
            shards: Shards::homed(out_dims, [1, 1, 1], precision.bytes(), 0),
            format,
        },
        (position, spec),
    ))
}

/// The one candidate of a bias add or GeLU of a value the split GEMM lowering holds as ranges
/// ([`crate::lower::gemm_split::ranged_value`]), which the lowering runs on the ranges where
/// they are, in place: [`Candidate::follows`] the operand (the beam prices the kernel over its
/// home's block), the bias vector homed whole (each owner gets the groups it touches from the
/// host).
fn ranged_candidate(graph: &Graph, op: &Op, options: &PlannerOptions) -> Option<Candidate> {
    use crate::lower::gemm_split::{bias_operand, ranged_value};
    if options.in_body {
        return None;
    }
    let index = graph.ops.iter().position(|o| std::ptr::eq(o, op))?;
    // The AMP input of the split GEMM behind a ranged value of x's type (the product's result
    // type), by the policy's rule (`lower::PrecisionPolicy::input_for`).
    let ranged = |x: usize| {
        let element = graph.values[x].element;
        ranged_value(
            graph,
            x,
            amp_input(options.precision, element, element, false),
        )
    };
    let (position, bias) = match op.kind {
        OpKind::Gelu { .. } if ranged(op.operands[0]) => (0, None),
        OpKind::Add => {
            let position = (0..op.operands.len()).find(|&p| {
                let x = op.operands[p];
                ranged(x) && bias_operand(graph, index, x).is_some()
            })?;
            (position, bias_operand(graph, index, op.operands[position]))
        }
        _ => return None,
    };
    let value = &graph.values[op.operands[position]];
    let precision = value.element;
    let (kind, spec) = match op.kind {
        OpKind::Gelu { tanh } => (PointwiseOp::Gelu, followed_gelu(precision, tanh)),
        _ => (
            PointwiseOp::Add,
            KernelSpec::AddGroupBias {
                precision,
                rows: 1,
                elements: 16,
            },
        ),
    };
    let format = ValueFormat::row_major(precision);
    // Placeholders for the followed operand and the result: the beam puts the operand's
    // home in both.
    let placeholder = Need {
        shards: Shards::homed(
            canonical_dims(&value.shape),
            [1, 1, 1],
            precision.bytes(),
            0,
        ),
        format,
    };
    let needs = (0..op.operands.len())
        .map(|p| match bias {
            Some(b) if p != position => {
                let n = canonical_dims(&graph.values[b].shape)[2];
                Need {
                    shards: Shards::homed([1, 1, n], [1, 1, 1], precision.bytes(), 0),
                    format,
                }
            }
            _ => placeholder.clone(),
        })
        .collect();
    Some(Candidate::following(
        OperatorPlan::Pointwise(PointwisePlan {
            op: kind,
            placement: PointwisePlacement::Ranged,
            precision: element::element(precision),
        }),
        needs,
        placeholder,
        (position, spec),
    ))
}

/// Softmax and layer norm reduce along the last axis, so each tile holds whole rows.
fn row_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let precision = op_vector_precision(graph, op, options.precision);
    let format = ValueFormat::row_major(precision);
    let mut out = Vec::new();
    for grid in grids(active, &[out_dims[0], out_dims[1], 1]) {
        let tiles: u32 = grid.iter().product();
        let rows = block_size(out_dims[0], grid[0]) * block_size(out_dims[1], grid[1]);
        let cols = out_dims[2];
        let (spec, kind) = match op.kind {
            OpKind::Softmax => (
                KernelSpec::Softmax {
                    precision,
                    rows: u32_of(rows),
                    cols: u32_of(cols),
                    causal: false,
                },
                RowOp::Softmax,
            ),
            OpKind::LayerNorm { epsilon } => (
                KernelSpec::LayerNorm {
                    precision,
                    rows: u32_of(rows),
                    cols: u32_of(cols),
                    epsilon_nano: (epsilon * 1e9).round().clamp(0.0, f64::from(i32::MAX)) as u32,
                },
                RowOp::LayerNorm,
            ),
            _ => continue,
        };
        if spec.validate().is_err() {
            continue;
        }
        let needs = op
            .operands
            .iter()
            .map(|&operand| {
                let dims = canonical_dims(&graph.values[operand].shape);
                Need {
                    shards: Shards::needed_by_grid(
                        dims,
                        precision.bytes(),
                        &grid,
                        &broadcast_axes(dims, out_dims),
                    ),
                    format,
                }
            })
            .collect();
        let output = Shards::needed_by_grid(
            out_dims,
            precision.bytes(),
            &grid,
            &[Some(0), Some(1), Some(2)],
        );
        out.push(Candidate {
            compute_cycles: cost::kernel_cycles(&spec, target),
            kernels: vec![spec],
            ..Candidate::new(
                OperatorPlan::Rows(RowsPlan {
                    op: kind,
                    grid: grid3(&grid),
                    tiles,
                    precision: element::element(precision),
                }),
                tiles,
                needs,
                Need {
                    shards: output,
                    format,
                },
            )
        });
    }
    out
}

/// A user-written rearrange: a layout change, optionally transposing the last two axes.
fn rearrange_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let OpKind::Rearrange { permutation } = &op.kind else {
        return Vec::new();
    };
    let input = &graph.values[op.operands[0]];
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let in_dims = canonical_dims(&input.shape);
    let rank = input.shape.len();
    let transposes = permutation
        .as_ref()
        .is_some_and(|p| rank >= 2 && p.len() == rank && p[rank - 2] == rank - 1);
    let precision = input.element;
    let _ = options;
    let format = ValueFormat::row_major(precision);
    let mut out = Vec::new();
    for grid in grids(active, &out_dims) {
        let tiles: u32 = grid.iter().product();
        let elements: u64 = (0..3)
            .map(|axis| block_size(out_dims[axis], grid[axis]))
            .product();
        let axes = if transposes {
            [Some(0), Some(2), Some(1)]
        } else {
            [Some(0), Some(1), Some(2)]
        };
        let spec = if transposes {
            KernelSpec::Rearrange {
                order: ElementOrder::AmpLeft,
                to_amp: true,
                precision,
                offset: 0,
                rows: u32_of(elements),
                rows_padded: u32_of(elements),
                cols: 1,
                cols_padded: 16,
            }
        } else {
            KernelSpec::Copy {
                bytes: u32_of(elements * u64::from(precision.bytes())),
            }
        };
        let cycles = if transposes {
            cost::rearrange_cycles(
                ElementOrder::AmpLeft,
                precision,
                u32_of(elements),
                1,
                target,
            )
        } else {
            cost::kernel_cycles(&spec, target)
        };
        let need = Shards::needed_by_grid(in_dims, precision.bytes(), &grid, &axes);
        out.push(Candidate {
            compute_cycles: cycles,
            kernels: vec![spec],
            ..Candidate::new(
                OperatorPlan::Rearrange(RearrangePlan {
                    grid: grid3(&grid),
                    tiles,
                    transpose: transposes,
                }),
                tiles,
                vec![Need {
                    shards: need,
                    format,
                }],
                Need {
                    shards: Shards::needed_by_grid(
                        out_dims,
                        precision.bytes(),
                        &grid,
                        &[Some(0), Some(1), Some(2)],
                    ),
                    format,
                },
            )
        });
    }
    out
}

/// Attention `softmax(q k^T) v` per batch-head. `attention_blocked` (flash-style: each tile
/// owns a block of query rows and streams every key and value through its own score block,
/// so the S x T matrix never exists as a whole); `attention_materialized` (scores computed on
/// a (query, key) tile grid, exchanged to whole rows for the softmax, then multiplied by v).
/// Every plan is priced with the lowering's own kernel model (whole score rows per tile, the
/// materialized grid, or, when a tile's whole rows do not fit, the keys streamed in blocks
/// through the online-softmax kernels: `attention_flash`), and generated only in the shapes
/// the lowering follows.
fn attention_candidates(
    graph: &Graph,
    op: &Op,
    causal: bool,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let q = canonical_dims(&graph.values[op.operands[0]].shape);
    let k = canonical_dims(&graph.values[op.operands[1]].shape);
    let v = canonical_dims(&graph.values[op.operands[2]].shape);
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let (s, d, t, e) = (q[1], q[2], k[1], v[2]);
    // The attention lowering computes in the operands' own element type (one for q, k, v and
    // the result), whatever the policy.
    let vector = op_vector_precision(graph, op, options.precision);
    let input = vector;
    // The lowering fetches each operand's rows as they are (row-major, in its own element
    // type; the tile-local GEMMs pack them, priced in the kernel model): queries and keys in
    // standard memory, the values in interleaved.
    let in_format = |position: usize, memory| ValueFormat {
        memory,
        ..ValueFormat::row_major(graph.values[op.operands[position]].element)
    };
    let out_format = ValueFormat::row_major(vector);
    let mut out = Vec::new();
    for materialized in [false, true] {
        let shapes: Vec<u64> = if materialized {
            vec![q[0], s, t]
        } else {
            vec![q[0], s]
        };
        // The lowering runs one batch-head per grid row and splits the queries exactly. With
        // more batch-heads than tiles it runs `ceil(heads / tiles)` whole heads per tile, one
        // after the other, keys streamed: only that shape (`attention_flash` on grid
        // [ceil(heads / per tile), 1]) is priced then.
        let heads_per_tile =
            crate::lower::graph::general::attention_heads_per_tile(u32_of(q[0]), options.tiles);
        let one_head_per_row = heads_per_tile.is_none();
        let shaped: Vec<Vec<u32>> = match (heads_per_tile, materialized) {
            (None, _) => grids(active, &shapes),
            (Some(heads), false) => vec![vec![u32_of(q[0].div_ceil(u64::from(heads))), 1]],
            (Some(_), true) => Vec::new(),
        };
        for grid in shaped {
            let tiles: u32 = grid.iter().product();
            let (gb, gs) = (grid[0], grid[1]);
            let gt = if materialized { grid[2] } else { 1 };
            if (one_head_per_row && u64::from(gb) != q[0]) || !s.is_multiple_of(u64::from(gs)) {
                continue;
            }
            let bb = block_size(q[0], gb);
            let sb = block_size(s, gs);
            let tb = block_size(t, gt);
            let (_, score_spec) = gemm_tile_cycles(
                input,
                MemoryClass::Interleaved,
                bb * sb,
                d,
                tb,
                64.min(d.next_multiple_of(16) as u32),
                64,
                target,
            );
            let mut kernels = vec![score_spec];
            let mut internal = PhaseLoad::new(tiles);
            let mut internal_phases = Vec::new();
            let rows_after = if materialized {
                block_size(s, gs * gt).max(1)
            } else {
                sb
            };
            if materialized {
                // The shapes the lowering's materialized attention takes (one batch-head
                // per grid row, exact query and key splits).
                let fits = crate::lower::graph::general::materialized_fits(
                    (u32_of(q[0]), u32_of(s), u32_of(t)),
                    (gb, gs, gt),
                    options.tiles,
                ) && crate::lower::graph::general::materialized_attention_fits(
                    (
                        u32_of(sb),
                        u32_of(d),
                        u32_of(block_size(t, gt)),
                        u32_of(t),
                        u32_of(e),
                        u32_of(block_size(s, gs * gt)),
                    ),
                    graph.values[op.operands[0]].element,
                    target,
                );
                if !fits || !super::layout::split_is_exact_cover(s, gs * gt) {
                    continue;
                }
                let scores_home = Shards::needed_by_grid(
                    [q[0], s, t],
                    vector.bytes(),
                    &grid,
                    &[Some(0), Some(1), Some(2)],
                );
                let scores_rows = Shards::homed([q[0], s, t], [gb, gs * gt, 1], vector.bytes(), 0);
                internal.add(&scores_home, &scores_rows);
                internal_phases.push(InternalPhase::Reshard {
                    from: scores_home,
                    to: scores_rows,
                });
            }
            let softmax = KernelSpec::Softmax {
                precision: vector,
                rows: u32_of(bb * rows_after),
                cols: u32_of(t),
                causal,
            };
            let (_, pv_spec) = gemm_tile_cycles(
                input,
                MemoryClass::Interleaved,
                bb * rows_after,
                t,
                e,
                64,
                64,
                target,
            );
            kernels.push(softmax);
            kernels.push(pv_spec);
            // Priced with the lowering's own model (the kernels it runs per tile); whole score
            // rows per tile are the materialized case with one key block (tk = t, rs = sb).
            let mut compute = crate::lower::graph::general::materialized_attention_cycles(
                (
                    u32_of(sb),
                    u32_of(d),
                    u32_of(tb),
                    u32_of(t),
                    u32_of(e),
                    u32_of(rows_after),
                ),
                graph.values[op.operands[0]].element,
                causal,
                target,
            );
            if !all_valid(&kernels) {
                continue;
            }
            let q_need = Shards::needed_by_grid(q, input.bytes(), &grid, &[Some(0), Some(1), None]);
            let kv_axes: Vec<Option<usize>> = if materialized {
                vec![Some(0), None, Some(1)]
            } else {
                vec![Some(0), None]
            };
            let k_need = Shards::needed_by_grid(k, input.bytes(), &grid, &kv_axes);
            // The value rows a tile multiplies by are all keys of its batch.
            let v_need = Shards::needed_by_grid(
                v,
                input.bytes(),
                &grid,
                &[Some(0), None, None][..grid.len()],
            );
            let output = if materialized {
                Shards::homed(out_dims, [gb, gs * gt, 1], vector.bytes(), 0)
            } else {
                Shards::needed_by_grid(out_dims, vector.bytes(), &grid, &[Some(0), Some(1)])
            };
            let mut score_bytes = bb * sb * tb * u64::from(vector.bytes())
                + 2 * bb * rows_after * t * u64::from(vector.bytes());
            let mut schedule = if materialized {
                AttentionSchedule::Materialized
            } else {
                AttentionSchedule::Blocked
            };
            // A tile whose whole score rows, keys and values do not fit streams the keys in
            // blocks (flash-style, online softmax): priced with the lowering's own model, one
            // exchange phase per key block.
            let element = graph.values[op.operands[0]].element;
            let sizes = (u32_of(sb), u32_of(d), u32_of(t), u32_of(e));
            let mut k_steps = 1;
            use crate::lower::graph::general::{
                attention_waves_cycles, streamed_attention_cycles, streamed_key_block,
                wave_key_block,
            };
            // Several heads per tile: whole heads in waves (their own model).
            let streamed = match heads_per_tile {
                Some(_) => Some(wave_key_block(sizes, element)),
                None => streamed_key_block(sizes, element),
            };
            if let (false, true, Some(block)) =
                (materialized, bb == 1 || !one_head_per_row, streamed)
            {
                let blocks = t.div_ceil(u64::from(block));
                schedule = AttentionSchedule::Flash { key_block: block };
                compute = match heads_per_tile {
                    Some(heads) => {
                        attention_waves_cycles(sizes, heads, block, element, causal, target)
                    }
                    None => streamed_attention_cycles(sizes, block, element, causal, target),
                };
                k_steps = u32_of(blocks * u64::from(heads_per_tile.unwrap_or(1)));
                kernels = vec![KernelSpec::AttentionBlock {
                    precision: element,
                    rows: sizes.0,
                    keys: block.min(sizes.2),
                    width: sizes.3,
                    causal,
                }];
                let eb = u64::from(element.bytes());
                score_bytes = (sb * u64::from(block) + u64::from(block) * (2 * d + e)) * eb
                    + sb * e * 4
                    + 8 * sb;
            }
            let plan = OperatorPlan::Attention(AttentionPlan {
                schedule,
                grid: grid.clone(),
                tiles,
                causal,
                precision: element::element(input),
            });
            let panel_phases =
                u64::from(k_steps - 1) * u64::from(target.exchange.phase_cycles.value);
            out.push(Candidate {
                compute_cycles: compute,
                internal_exchange_cycles: internal.cycles(target) + panel_phases,
                internal_row_bytes: internal.max_row_bytes(),
                internal_phases,
                k_steps,
                transient: MemoryUse::of(score_bytes, MemoryClass::Standard),
                kernels,
                ..Candidate::new(
                    plan,
                    tiles,
                    vec![
                        Need {
                            shards: q_need,
                            format: in_format(0, MemoryClass::Standard),
                        },
                        Need {
                            shards: k_need,
                            format: in_format(1, MemoryClass::Standard),
                        },
                        Need {
                            shards: v_need,
                            format: in_format(2, MemoryClass::Interleaved),
                        },
                    ],
                    Need {
                        shards: output,
                        format: out_format,
                    },
                )
            });
        }
    }
    out
}

/// Per-tile memory of a candidate run alone: operand buffers, result and working memory.
pub fn standalone_memory(candidate: &Candidate) -> MemoryUse {
    candidate
        .needs
        .iter()
        .map(|need| streamed_need_memory(need, candidate.k_steps))
        .fold(candidate.transient, MemoryUse::plus)
        .plus(need_memory(&candidate.output))
}

/// Memory of an operand buffer streamed in `k_steps` panels, two resident at a time.
pub fn streamed_need_memory(need: &Need, k_steps: u32) -> MemoryUse {
    let full = need_memory(need);
    if k_steps <= 1 {
        return full;
    }
    let scale = |bytes: u64| bytes.div_ceil(u64::from(k_steps)) * 2;
    MemoryUse {
        standard: scale(full.standard),
        interleaved: scale(full.interleaved),
        largest_standard: scale(full.largest_standard),
    }
}

/// Per-tile memory a candidate's operand buffers take when they are not the value's home.
pub fn need_memory(need: &Need) -> MemoryUse {
    shard_memory(&need.shards, &need.format)
}
