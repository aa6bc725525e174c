//! The row-wise strategy: `ipu.softmax` and `ipu.layer_norm` reduce along the last axis, so
//! each tile of a `[batch, rows, 1]` grid holds whole rows of its block and runs one kernel
//! call over them; a layer norm's scale and shift (`[n]` vectors) are read whole by every tile.
//! The planner prices a plan from its [`GridWork`] and the lowering emits that work.

use ipu_device::kernels::spec::KernelSpec;
use ipu_device::{Precision, Target};
use ipu_dialects::plan::{OperatorPlan, RowOp, RowsPlan};

use crate::strategies::blocks::{operand_roles, operands_of_type, GridWork, OperandRole};
use crate::tiling::candidate::{grid3, grids, op_vector_precision, Candidate, Need};
use crate::tiling::layout::{canonical_dims, split_is_exact_cover};
use crate::tiling::{Graph, Op, OpKind, PlannerOptions, ValueFormat};

/// The row op of `op`, if it is one.
fn row_op(op: &Op) -> Option<RowOp> {
    match op.kind {
        OpKind::Softmax => Some(RowOp::Softmax),
        OpKind::LayerNorm { .. } => Some(RowOp::LayerNorm),
        OpKind::Reduce { .. } => Some(RowOp::Reduce),
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
        OpKind::Reduce { combiner } => KernelSpec::Reduce {
            precision,
            combiner,
            rows,
            cols,
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
    if let OpKind::Reduce { .. } = op.kind {
        // Its input has the result's rows (the result is their one column): read whole.
        return Ok(vec![OperandRole::Full]);
    }
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
    let precision = plan.precision;
    let roles = op_rules(graph, op, precision)?;
    // A reduction's blocks are its result's (one column); its kernel reads the input's rows.
    let input_cols = canonical_dims(&graph.values[op.operands[0]].shape)[2] as u32;
    GridWork::on_blocks(graph, op, (plan.grid, plan.tiles), roles, |rows, cols| {
        let cols = match op.kind {
            OpKind::Reduce { .. } => input_cols,
            _ => cols,
        };
        rows_kernel(op, precision, rows, cols)
    })
}

/// Why the strategy offers `op` no plan whatever the tile counts, if a rule is the reason.
pub fn why_unplannable(graph: &Graph, op: &Op, options: &PlannerOptions) -> Option<String> {
    op_rules(graph, op, op_vector_precision(graph, op, options.precision)).err()
}

/// Row splits beyond the active counts' grids a row op is offered.
const EXTRA_ROW_GRIDS: usize = 2;

/// The `[batch, rows, 1]` grids of a row op over `[batches, rows, cols]`: those of the active
/// tile counts, and [`EXTRA_ROW_GRIDS`] splits of every whole batch on its own tiles with
/// `k` rows per tile, on at most the device's tiles: the first that fit of `k` = 1, 3, 2, 6,
/// 4, 12, ... (each power of two, then three times it). 2916 rows (four images of 729 tokens)
/// split exactly over no divisor of 1472 above 92: 3 rows per tile take 972 tiles, 2 take
/// 1458; one image's 729 rows take 729 or 243. Few grids: each further one is another home the
/// ops after it price their moves and gathers from (all exact splits, some fifty per row op,
/// made planning the 27-layer encoder 2 s slower; every power-of-two and three-times one
/// still 1.3 s). Offering 1 and 2 rows per tile instead of 1 and 3 moves the tiny test
/// encoder's streamed-stack scan onto a grid whose stacks the planner prices as written where
/// read while the lowering multicasts them (refined -8 %, out of its band): not yet.
fn row_grids(active: &[u32], [batches, rows, _]: [u64; 3]) -> Vec<Vec<u32>> {
    let mut out = grids(active, &[batches, rows, 1]);
    let most = u64::from(active.iter().copied().max().unwrap_or(1));
    let per_tile = (0..62).flat_map(|a| [1u64 << a, 3u64 << a]);
    let splits = per_tile
        .filter(|&k| k <= rows)
        .map(|k| rows.div_ceil(k))
        .filter(|&split| batches.saturating_mul(split) <= most)
        .take(EXTRA_ROW_GRIDS);
    for split in splits {
        if let (Ok(b), Ok(s)) = (u32::try_from(batches), u32::try_from(split)) {
            let grid = vec![b, s, 1];
            if split_is_exact_cover(rows, s) && !out.contains(&grid) {
                out.push(grid);
            }
        }
    }
    out
}

/// The candidates of a row op: every grid of [`row_grids`] whose work exists
/// ([`rows_work`]), priced from that work.
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
    for grid in row_grids(active, out_dims) {
        let plan = RowsPlan {
            op: kind,
            grid: grid3(&grid),
            tiles: grid.iter().product(),
            precision,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::Origin;

    /// A layer norm of a `[batch, rows, cols]` argument with constant scale and shift.
    fn layer_norm((batch, rows, cols): (u64, u64, u64)) -> Graph {
        let mut graph = Graph::default();
        let x = graph.add_value(vec![batch, rows, cols], Precision::F16, Origin::Argument);
        let gamma = graph.add_value(vec![cols], Precision::F16, Origin::Constant);
        let y = graph.add_op(
            OpKind::LayerNorm { epsilon: 1e-5 },
            vec![x, gamma, gamma],
            vec![batch, rows, cols],
            Precision::F16,
        );
        graph.outputs.push(y);
        graph
    }

    fn plan(grid: [u32; 3]) -> RowsPlan {
        RowsPlan {
            op: RowOp::LayerNorm,
            grid,
            tiles: grid.iter().product(),
            precision: Precision::F16,
        }
    }

    #[test]
    fn rows_work_is_one_call_over_each_tiles_whole_rows() {
        let graph = layer_norm((2, 10, 64));
        let work = rows_work(&graph, &graph.ops[0], &plan([2, 2, 1])).unwrap();
        assert_eq!(work.grid.tiles(), 4);
        let rows: Vec<u32> = work
            .runs
            .iter()
            .map(|r| work.grid.rows(r.row_block))
            .collect();
        assert_eq!(rows, [5, 5, 5, 5]);
        assert_eq!(
            work.roles,
            [
                OperandRole::Full,
                OperandRole::RowVector,
                OperandRole::RowVector
            ]
        );
        let target = Target::c600();
        let one = ipu_device::cost::kernel_cycles(&work.runs[0].kernel, &target);
        assert_eq!(work.compute_cycles(&target), one);
    }

    #[test]
    fn rows_split_over_counts_that_divide_no_active_count() {
        // Four images of 729 tokens on 1472 tiles: no divisor of 1472 above 92 splits 2916
        // rows exactly, 2 rows per tile on 1458 tiles does.
        let grids = row_grids(&[1472], [1, 2916, 1152]);
        assert!(
            grids.contains(&vec![1, 92, 1]),
            "the active count's grids stay"
        );
        assert!(grids.contains(&vec![1, 1458, 1]));
        assert!(grids.contains(&vec![1, 972, 1]));
        assert!(
            !grids.contains(&vec![1, 184, 1]),
            "184 blocks of 16 rows cover 182.25"
        );
        for grid in &grids {
            assert!(grid.iter().product::<u32>() <= 1472, "{grid:?}");
            assert!(split_is_exact_cover(2916, grid[1]), "{grid:?}");
        }
        // Besides the divisors of 1472 that split 2916 rows exactly, the first two splits that
        // fit of 1, 3, 2, ... rows per tile: 3 (972 tiles) and 2 (1458); once each.
        let mut found: Vec<u32> = grids.iter().map(|g| g[1]).collect();
        found.sort_unstable();
        let before = found.len();
        found.dedup();
        assert_eq!(found.len(), before, "no grid twice");
        assert_eq!(found, [1, 2, 4, 8, 16, 23, 32, 46, 64, 92, 972, 1458]);
        assert!(grids.iter().all(|g| split_is_exact_cover(2916, g[1])));
        // One image's 729 rows: 1 row per tile on 729 tiles, 3 on 243.
        let grids = row_grids(&[1472], [1, 729, 1152]);
        assert!(grids.contains(&vec![1, 729, 1]) && grids.contains(&vec![1, 243, 1]));
        assert!(!grids.contains(&vec![1, 365, 1]), "{grids:?}");
        // A batch of heads splits its rows within each batch's tiles.
        let grids = row_grids(&[1472], [12, 197, 64]);
        assert!(grids.contains(&vec![12, 99, 1]), "2 rows per tile");
        assert!(grids.iter().all(|g| g[0] * g[1] <= 1472));
        // The layer norm offers the 1458-tile plan and its lowering follows it.
        let graph = layer_norm((1, 2916, 1152));
        let options = PlannerOptions::new(1472, &Target::c600());
        let all = candidates(&graph, &graph.ops[0], &[1472], &options, &Target::c600());
        assert!(
            all.iter().any(|c| c.tiles == 1458),
            "no 1458-tile layer norm"
        );
        assert!(rows_work(&graph, &graph.ops[0], &plan([1, 1458, 1])).is_ok());
    }

    #[test]
    fn plans_the_lowering_cannot_follow_are_refused_with_the_reason() {
        let graph = layer_norm((2, 10, 64));
        let op = &graph.ops[0];
        let err = rows_work(&graph, op, &plan([1, 2, 2])).unwrap_err();
        assert!(err.contains("splits the rows"), "{err}");
        // Rows of two matrices in one block that are not one contiguous range.
        let err = rows_work(&graph, op, &plan([1, 2, 1])).unwrap_err();
        assert!(err.contains("contiguous"), "{err}");
        let mut softmax = plan([2, 1, 1]);
        softmax.op = RowOp::Softmax;
        let err = rows_work(&graph, op, &softmax).unwrap_err();
        assert!(
            err.contains("rows_softmax plan for a ipu.layer_norm"),
            "{err}"
        );
    }

    #[test]
    fn candidates_are_exactly_the_plans_with_work() {
        let graph = layer_norm((3, 8, 32));
        let target = Target::c600();
        let options = PlannerOptions::new(16, &target);
        let all = candidates(&graph, &graph.ops[0], &[16], &options, &target);
        assert!(!all.is_empty());
        for candidate in &all {
            let OperatorPlan::Rows(plan) = &candidate.plan else {
                panic!("{:?}", candidate.plan)
            };
            let work = rows_work(&graph, &graph.ops[0], plan).expect("a candidate has work");
            assert_eq!(candidate.compute_cycles, work.compute_cycles(&target));
            assert_eq!(candidate.tiles, work.grid.tiles());
        }
    }

    /// `docs/writing-a-strategy.md` quotes this strategy; every quoted block must still be
    /// real code.
    #[test]
    fn tutorial_quotes_match_the_code() {
        let tutorial = include_str!("../../../docs/writing-a-strategy.md");
        let sources = [
            include_str!("rows.rs"),
            include_str!("blocks.rs"),
            include_str!("mod.rs"),
            include_str!("../planner/candidates.rs"),
            include_str!("../lower/graph.rs"),
            include_str!("../lower/graph/pointwise/grid.rs"),
            include_str!("../../../test/Runtime/pointwise-plans.test"),
        ];
        let mut quoted = 0;
        for block in tutorial
            .split("```rust\n")
            .skip(1)
            .chain(tutorial.split("```text\n").skip(1))
        {
            let Some(end) = block.find("```") else {
                continue;
            };
            let code = &block[..end];
            assert!(
                sources.iter().any(|source| source.contains(code)),
                "docs/writing-a-strategy.md quotes code that is not in the sources:\n{code}"
            );
            quoted += 1;
        }
        assert!(
            quoted >= 7,
            "expected the tutorial's quotes, found {quoted}"
        );
    }
}
