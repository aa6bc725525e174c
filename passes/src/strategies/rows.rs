//! The row-wise strategy: `ipu.softmax` and `ipu.layer_norm` reduce along the last axis, so
//! each tile of a `[batch, rows, 1]` grid holds whole rows of its block and runs one kernel
//! call over them; a layer norm's scale and shift (`[n]` vectors) are read whole by every tile.
//! The planner prices a plan from its [`GridWork`] and the lowering emits that work.

use ipu_device::kernels::spec::KernelSpec;
use ipu_device::{Precision, Target};
use ipu_dialects::plan::{OperatorPlan, RowOp, RowsPlan};

use crate::element;
use crate::planner::candidates::{grid3, grids, op_vector_precision, Candidate, Need};
use crate::planner::layout::canonical_dims;
use crate::planner::{Graph, Op, OpKind, PlannerOptions, ValueFormat};
use crate::strategies::blocks::{operand_roles, operands_of_type, GridWork, OperandRole};

/// The row op of `op`, if it is one.
fn row_op(op: &Op) -> Option<RowOp> {
    match op.kind {
        OpKind::Softmax => Some(RowOp::Softmax),
        OpKind::LayerNorm { .. } => Some(RowOp::LayerNorm),
        _ => None,
    }
}

/// The kernel over `rows` whole rows of `cols` elements.
fn rows_kernel(op: &Op, precision: Precision, rows: u32, cols: u32) -> Option<KernelSpec> {
    Some(match op.kind {
        OpKind::Softmax => KernelSpec::Softmax {
            precision,
            rows,
            cols,
            causal: false,
        },
        OpKind::LayerNorm { epsilon } => KernelSpec::LayerNorm {
            precision,
            rows,
            cols,
            epsilon_nano: epsilon_nano(epsilon),
        },
        _ => return None,
    })
}

/// A layer norm's epsilon as the kernel's integer parameter (units of 1e-9).
pub fn epsilon_nano(epsilon: f64) -> u32 {
    (epsilon * 1e9).round().clamp(0.0, f64::from(i32::MAX)) as u32
}

/// What the row lowering requires of `op` computing in `precision`, whatever the grid: its
/// input full-size, a layer norm's scale and shift `[n]` vectors, every operand of the
/// computing type.
fn op_rules(graph: &Graph, op: &Op, precision: Precision) -> Result<Vec<OperandRole>, String> {
    operands_of_type(graph, op, precision)?;
    let roles = operand_roles(graph, op)?;
    if roles[0] != OperandRole::Full || roles[1..].iter().any(|&r| r != OperandRole::RowVector) {
        return Err(format!(
            "operands read as {roles:?}: a row op reads its input whole and [n] vectors"
        ));
    }
    Ok(roles)
}

/// The work of rows plan `plan` for `op`, or why the plan cannot be run as written.
pub fn rows_work(graph: &Graph, op: &Op, plan: &RowsPlan) -> Result<GridWork, String> {
    if row_op(op) != Some(plan.op) {
        return Err(format!(
            "a {} plan for a {} op",
            plan.op.kind(),
            op.kind.name()
        ));
    }
    if plan.grid[2] != 1 {
        return Err(format!(
            "grid {:?} splits the rows (a row op holds whole rows)",
            plan.grid
        ));
    }
    let precision = element::precision(plan.precision);
    let roles = op_rules(graph, op, precision)?;
    GridWork::on_blocks(graph, op, (plan.grid, plan.tiles), roles, |rows, cols| {
        rows_kernel(op, precision, rows, cols)
    })
}

/// Why the strategy offers `op` no plan whatever the tile counts, if a rule is the reason.
pub fn why_unplannable(graph: &Graph, op: &Op, options: &PlannerOptions) -> Option<String> {
    op_rules(graph, op, op_vector_precision(graph, op, options.precision)).err()
}

/// The candidates of a row op: every `[batch, rows, 1]` grid over the active tile counts whose
/// work exists ([`rows_work`]), priced from that work.
pub fn candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let Some(kind) = row_op(op) else {
        return Vec::new();
    };
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let precision = op_vector_precision(graph, op, options.precision);
    let format = ValueFormat::row_major(precision);
    let mut out = Vec::new();
    for grid in grids(active, &[out_dims[0], out_dims[1], 1]) {
        let plan = RowsPlan {
            op: kind,
            grid: grid3(&grid),
            tiles: grid.iter().product(),
            precision: element::element(precision),
        };
        let Ok(work) = rows_work(graph, op, &plan) else {
            continue;
        };
        let needs = op
            .operands
            .iter()
            .map(|&operand| Need::on_grid(&graph.values[operand].shape, out_dims, &grid, format))
            .collect();
        let output = Need::on_grid(&graph.values[op.results[0]].shape, out_dims, &grid, format);
        out.push(Candidate {
            compute_cycles: work.compute_cycles(target),
            kernels: work.kernels(),
            ..Candidate::new(OperatorPlan::Rows(plan), work.grid.tiles(), needs, output)
        });
    }
    out
}
