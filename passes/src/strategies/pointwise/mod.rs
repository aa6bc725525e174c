//! The pointwise strategy: `ipu.add`, `ipu.gelu` and `ipu.cast` on blocks of a grid
//! ([`grid`]: the work the planner prices and the lowering emits), in place on the blocks of
//! a device operand, or on the reduced ranges of the split GEMM that produced its operand.

use ipu_device::kernels::spec::{ElementOrder, GeluForm, KernelSpec};
use ipu_device::{Precision, Target};
use ipu_dialects::format::Order;
use ipu_dialects::plan::{OperatorPlan, PointwiseOp, PointwisePlacement, PointwisePlan};

use crate::tiling::candidate::{grid3, grids, op_vector_precision, Candidate, Need};
use crate::tiling::layout::{canonical_dims, Shards};
use crate::tiling::{Graph, Op, OpKind, PlannerOptions, ValueFormat};

mod follow;
pub mod grid;

pub use follow::on_home;

pub use crate::tiling::layout::broadcast_axes;

pub fn candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    // A GeLU of a product pinned in waves runs in place where the waves leave its result, in
    // the order it is there (AMP output between the layers of a chain): its placeholders ask
    // for no row-major conversion (`follow::on_home`).
    if waves_gelu(graph, op, options) {
        return in_place_candidate(graph, op)
            .map(|mut candidate| {
                for need in candidate.needs.iter_mut().chain([&mut candidate.output]) {
                    need.format.order = ElementOrder::AmpOutput;
                }
                candidate
            })
            .into_iter()
            .collect();
    }
    if let Some(candidate) = ranged_candidate(graph, op, options) {
        return vec![candidate];
    }
    if let Some(candidate) = in_place_candidate(graph, op) {
        return vec![candidate];
    }
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let precision = op_vector_precision(graph, op, options.precision);
    let kind = match op.kind {
        OpKind::Add => PointwiseOp::Add,
        OpKind::Gelu { .. } => PointwiseOp::Gelu,
        OpKind::Cast { .. } => PointwiseOp::Cast,
        OpKind::Map { .. } => PointwiseOp::Map,
        OpKind::Broadcast => PointwiseOp::Broadcast,
        _ => return Vec::new(),
    };
    let output_format = match op.kind {
        OpKind::Cast { scale } => {
            let to = graph.values[op.results[0]].element;
            ValueFormat {
                scale: if to.is_fp8() { scale } else { 0 },
                ..ValueFormat::row_major(to)
            }
        }
        _ => ValueFormat::row_major(precision),
    };
    let mut out = Vec::new();
    for grid in grids(active, &out_dims) {
        let plan = PointwisePlan {
            op: kind,
            placement: PointwisePlacement::Grid {
                grid: grid3(&grid),
                tiles: grid.iter().product(),
                order: Order::RowMajor,
            },
            precision: output_format.precision,
        };
        // Only plans the lowering runs as written: the work is what it emits.
        let Ok(work) = grid::grid_work(graph, op, &plan) else {
            continue;
        };
        let needs: Vec<Need> = op
            .operands
            .iter()
            .map(|&operand| {
                let format = match op.kind {
                    OpKind::Cast { .. } => ValueFormat::row_major(graph.values[operand].element),
                    _ => output_format,
                };
                Need::on_grid(&graph.values[operand].shape, out_dims, &grid, format)
            })
            .collect();
        let output = Need::on_grid(
            &graph.values[op.results[0]].shape,
            out_dims,
            &grid,
            output_format,
        );
        out.push(Candidate {
            compute_cycles: work.compute_cycles(target),
            kernels: work.kernels(),
            ..Candidate::new(
                OperatorPlan::Pointwise(plan),
                work.grid.tiles(),
                needs,
                output,
            )
        });
    }
    out
}

/// Why the strategy offers `op` no plan whatever the tile counts (the rule it breaks), if
/// that is the reason it has none.
pub fn why_unplannable(graph: &Graph, op: &Op, options: &PlannerOptions) -> Option<String> {
    let precision = match op.kind {
        OpKind::Cast { .. } => graph.values[op.results[0]].element,
        _ => op_vector_precision(graph, op, options.precision),
    };
    grid::op_rules(graph, op, precision).err()
}

/// Whether `op` is a GeLU of a product a constraint pins in waves
/// ([`crate::strategies::gemm_waves`]), which leaves its result for the GeLU to run on in
/// place.
fn waves_gelu(graph: &Graph, op: &Op, options: &PlannerOptions) -> bool {
    matches!(op.kind, OpKind::Gelu { .. })
        && matches!(
            graph.values[op.operands[0]].origin,
            crate::tiling::Origin::Op(producer)
                if matches!(
                    crate::strategies::gemm_waves::pinned_plan(options, producer),
                    Some(Ok(_))
                )
        )
}

/// The GeLU kernel of a candidate that follows its operand, sized by the beam
/// ([`Candidate::follows`]).
pub fn followed_gelu(precision: Precision, tanh: bool) -> KernelSpec {
    KernelSpec::Gelu {
        precision,
        form: if tanh { GeluForm::Tanh } else { GeluForm::Erf },
        elements: 16,
    }
}

/// The operand an in-place plan of `op` runs on: the first full-size operand that is on the
/// device (`on_device`), whose blocks become the result's. The planner asks it of the
/// partial plan's homes, the lowering of the values it has placed.
pub fn in_place_position(
    graph: &Graph,
    op: &Op,
    on_device: impl Fn(usize) -> bool,
) -> Option<usize> {
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let operands = match op.kind {
        OpKind::Gelu { .. } => &op.operands[..1],
        OpKind::Add => &op.operands[..],
        _ => return None,
    };
    operands
        .iter()
        .position(|&v| canonical_dims(&graph.values[v].shape) == out_dims && on_device(v))
}

/// The one candidate of a GeLU, or an add, of a full-size value computed on the device (not
/// one the split GEMM lowering holds as ranges): the lowering runs it in place on that value's
/// blocks (an add gathers its other full-size operand onto them and broadcasts a row vector
/// over them), so the candidate [`Candidate::follows`] the operand: the beam takes its home
/// as the need and the result's home and prices the kernel over its block.
pub fn in_place_candidate(graph: &Graph, op: &Op) -> Option<Candidate> {
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let full = |v: usize| canonical_dims(&graph.values[v].shape) == out_dims;
    let position = (0..op.operands.len()).find(|&p| {
        let v = op.operands[p];
        full(v) && matches!(graph.values[v].origin, crate::tiling::Origin::Op(_))
    })?;
    // The in-place add reads its other operand full-size or as a row vector over the blocks.
    let readable = |v: usize| {
        let dims = canonical_dims(&graph.values[v].shape);
        dims == out_dims || dims == [1, 1, out_dims[2]]
    };
    if !op.operands.iter().all(|&v| readable(v)) {
        return None;
    }
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
            precision,
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
/// ([`crate::strategies::split_gemm::ranged_value`]), which the lowering runs on the ranges where
/// they are, in place: [`Candidate::follows`] the operand (the beam prices the kernel over its
/// home's block), the bias vector homed whole (each owner gets the groups it touches from the
/// host).
pub fn ranged_candidate(graph: &Graph, op: &Op, options: &PlannerOptions) -> Option<Candidate> {
    use crate::strategies::split_gemm::{bias_operand, ranged_value};
    let index = graph.index_of(op)?;
    // The AMP input of the split GEMM behind a ranged value of x's type (the product's result
    // type), by the policy's rule (`lower::PrecisionPolicy::input_for`).
    let ranged = |x: usize| {
        let element = graph.values[x].element;
        ranged_value(
            graph,
            x,
            options.precision.input_for(element, element, false),
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
            precision,
        }),
        needs,
        placeholder,
        (position, spec),
    ))
}
