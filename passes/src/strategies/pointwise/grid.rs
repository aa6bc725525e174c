//! The tile work of a pointwise plan on a grid ([`GridWork`]): one kernel call per block of
//! the result, operands read as full-size blocks or row vectors.

use ipu_device::kernels::spec::{GeluForm, KernelSpec};
use ipu_device::Precision;
use ipu_dialects::format::Order;
use ipu_dialects::plan::{PointwiseOp, PointwisePlacement, PointwisePlan};

use ipu_device::kernels::spec::{MapInput, MapOperand};
use ipu_dialects::graph::scalar::ScalarProgram;

use crate::strategies::blocks::{
    map_roles, operand_roles, operands_of_type, GridWork, OperandRole,
};
use crate::tiling::{Graph, Op, OpKind};

/// The kernel of one `rows x cols` block of `op` computing in `precision` (an add reading a
/// full-size second operand or a row vector; a cast from its operand's element type to its
/// result's).
pub fn block_kernel(
    graph: &Graph,
    op: &Op,
    precision: Precision,
    (rows, cols): (u32, u32),
    roles: &[OperandRole],
) -> Option<KernelSpec> {
    let elements = rows.checked_mul(cols)?;
    Some(match op.kind {
        OpKind::Add => KernelSpec::Add {
            precision,
            rows,
            cols,
            b_rows: if roles.iter().all(|&r| r == OperandRole::Full) {
                rows
            } else {
                1
            },
        },
        OpKind::Gelu { tanh } => KernelSpec::Gelu {
            precision,
            form: if tanh { GeluForm::Tanh } else { GeluForm::Erf },
            elements,
        },
        OpKind::Cast { .. } => KernelSpec::Cast {
            from: graph.values[op.operands[0]].element,
            to: graph.values[op.results[0]].element,
            elements,
        },
        OpKind::Broadcast => {
            let mut kernel = block_kernel(
                graph,
                &Op {
                    kind: OpKind::Map {
                        name: "identity".into(),
                        body: std::sync::Arc::new(ScalarProgram::identity()),
                    },
                    ..op.clone()
                },
                precision,
                (rows, cols),
                roles,
            )?;
            if let KernelSpec::Map { index_shape, .. } = &mut kernel {
                index_shape.clear();
            }
            kernel
        }
        OpKind::Map { ref body, .. } => KernelSpec::Map {
            output: precision,
            // The planner converts every input to the computing type (its needs say so).
            inputs: roles
                .iter()
                .map(|role| MapInput {
                    precision,
                    scale: 0,
                    operand: match role {
                        OperandRole::Full => MapOperand::Full,
                        OperandRole::RowVector => MapOperand::Row,
                        OperandRole::ColumnVector => MapOperand::Column,
                        OperandRole::Scalar => MapOperand::Scalar,
                    },
                })
                .collect(),
            rows,
            cols,
            index_shape: if body.uses_indices() {
                graph.values[op.results[0]].shape.clone()
            } else {
                Vec::new()
            },
            body: ScalarProgram::clone(body.as_ref()),
        },
        _ => return None,
    })
}

/// What the grid lowering requires of `op` computing in `precision` whatever the grid: the
/// operand roles ([`operand_roles`]), operands of the computing type (it converts none; a
/// cast converts its one), and FP8 casts at scale 0.
pub fn op_rules(graph: &Graph, op: &Op, precision: Precision) -> Result<Vec<OperandRole>, String> {
    if let OpKind::Map { .. } | OpKind::Broadcast = op.kind {
        operands_of_type(graph, op, precision)?;
        return map_roles(graph, op);
    }
    if let OpKind::Cast { scale } = op.kind {
        let fp8 = [op.operands[0], op.results[0]]
            .iter()
            .any(|&v| graph.values[v].element.is_fp8());
        if scale != 0 && fp8 {
            return Err(format!(
                "a cast at FP8 scale {scale}: the cast kernel reads and writes FP8 at scale 0"
            ));
        }
    } else {
        operands_of_type(graph, op, precision)?;
    }
    operand_roles(graph, op)
}

/// The work of grid plan `plan` for `op`, or why the plan cannot be run as written: the grid
/// blocks ([`crate::strategies::blocks::BlockGrid::of_plan`]), the operands ([`operand_roles`]), the order (the lowering
/// writes row-major blocks), the op and the kernels (each must be one that exists).
pub fn grid_work(graph: &Graph, op: &Op, plan: &PointwisePlan) -> Result<GridWork, String> {
    let PointwisePlacement::Grid { grid, tiles, order } = plan.placement else {
        return Err(format!("{:?} is not a grid placement", plan.placement));
    };
    if order != Order::RowMajor {
        return Err(format!(
            "order {order:?}: the pointwise grid lowering writes row-major blocks"
        ));
    }
    let expected = match op.kind {
        OpKind::Add => PointwiseOp::Add,
        OpKind::Gelu { .. } => PointwiseOp::Gelu,
        OpKind::Cast { .. } => PointwiseOp::Cast,
        OpKind::Map { .. } => PointwiseOp::Map,
        OpKind::Broadcast => PointwiseOp::Broadcast,
        _ => return Err("not an elementwise op".into()),
    };
    if plan.op != expected {
        return Err(format!("a {} plan for a {expected:?} op", plan.op.kind()));
    }
    let precision = plan.precision;
    let roles = op_rules(graph, op, precision)?;
    GridWork::on_blocks(graph, op, (grid, tiles), roles.clone(), |rows, cols| {
        block_kernel(graph, op, precision, (rows, cols), &roles)
    })
}
