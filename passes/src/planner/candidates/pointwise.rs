//! Candidates of elementwise ops: blocks of a grid, in place on a device operand, or on a
//! split GEMM's reduced ranges.

use super::*;

/// The axis a broadcast operand's canonical axis maps to: `None` where the operand has size 1
/// and the result does not (it is replicated along that grid axis).
pub(super) fn broadcast_axes(operand: [u64; 3], result: [u64; 3]) -> [Option<usize>; 3] {
    [0, 1, 2].map(|axis| {
        if operand[axis] == result[axis] {
            Some(axis)
        } else {
            None
        }
    })
}

pub(super) fn pointwise_candidates(
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
pub(super) fn followed_gelu(precision: Precision, tanh: bool) -> KernelSpec {
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
pub(super) fn in_place_candidate(graph: &Graph, op: &Op) -> Option<Candidate> {
    let out_dims = canonical_dims(&graph.values[op.results[0]].shape);
    let full = |v: usize| canonical_dims(&graph.values[v].shape) == out_dims;
    let position = (0..op.operands.len()).find(|&p| {
        let v = op.operands[p];
        full(v) && matches!(graph.values[v].origin, super::super::graph::Origin::Op(_))
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
pub(super) fn ranged_candidate(
    graph: &Graph,
    op: &Op,
    options: &PlannerOptions,
) -> Option<Candidate> {
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
