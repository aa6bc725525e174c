//! Strategies: each is one way of running an op on tiles and the single owner of everything
//! about that way (docs/design/ARCHITECTURE.md, "Strategies"): the plans it offers for an op,
//! the tile work a plan means, and the rules both the planner and the lowering follow. The
//! planner prices a candidate from the strategy's work with the device cost model; the
//! lowering emits that same work.
//!
//! * [`pointwise`]: `ipu.add`, `ipu.gelu`, `ipu.cast` on a grid of blocks, in place on a
//!   device operand's blocks, or on a split GEMM's reduced ranges.
//! * [`rows`]: `ipu.softmax`, `ipu.layer_norm` on whole rows per tile.
//! * [`rearrange`]: `ipu.rearrange`, batched transposes whole matrices per tile, row copies.
//! * [`reshape`]: `ipu.reshape` as a view of its input's row blocks.
//! * [`gather`]: `ipu.slice` and `ipu.concat`, result rows gathered from operand row pieces.
//! * [`attention`]: `ipu.attention`, whole score rows, materialized, or keys streamed.
//! * [`attention_rows`]: `ipu.attention` as the hardware-measured flash runs computed it
//!   (keys and values as the AMP's weights), when a constraint pins it.
//! * [`gemm`]: `ipu.matmul` of two host operands on an output-stationary grid.
//! * [`gemm_waves`]: `ipu.matmul` of two host operands output-stationary in waves, panels
//!   multicast from rotating homes (the hardware-measured GEMM's plan).
//! * [`gemm_stationary`]: `ipu.matmul` of a chained product in waves' result, activations
//!   stationary, K split, weights multicast in rounds, a fan-in reduction tree.
//! * [`split_gemm`]: `ipu.matmul` of a host right matrix on a `[1, gm, gn, gk]` grid, K split
//!   and reduced, chained through bias adds and GeLUs.
//! * [`general_matmul`]: any other `ipu.matmul`, one result block per tile.
//! * [`local_gemm`]: the tile-local GEMM the general matmul and attention run on each tile.
//! * [`repeat`]: `ipu.repeat`, its body planned once and run `count` times, with the carry
//!   between iterations.
//! * [`blocks`]: the work on blocks of a grid that the pointwise and row strategies emit.

pub mod attention;
pub mod attention_rows;
pub mod blocks;
pub mod gather;
pub mod gemm;
pub mod gemm_stationary;
pub mod gemm_waves;
pub mod general_matmul;
pub mod local_gemm;
pub mod pointwise;
pub mod rearrange;
pub mod repeat;
pub mod reshape;
pub mod rows;
pub mod split_gemm;

use ipu_dialects::format::Plan;
use ipu_dialects::plan::{OperatorPlan, PlanError, PointwisePlacement};

use crate::tiling::layout::canonical_dims;
use crate::tiling::{Graph, Op};

/// Why a plan pinned by a constraint (kind and parameters, `pinned`) is not among `op`'s
/// candidates, as the strategy that owns it says: no strategy has that kind, the plan is one
/// the lowering cannot follow (and why), or its tile count divides none of the `active` ones. `None` when no strategy module owns the kind (the GEMMs, the general matmul and
/// attention say why in their own warnings).
pub fn why_not_offered(graph: &Graph, op: &Op, pinned: &Plan, active: &[u32]) -> Option<String> {
    let plan = match OperatorPlan::from_generic(pinned) {
        Ok(plan) => plan,
        Err(e @ PlanError::UnknownKind { .. }) => return Some(e.to_string()),
        // A partial pin (some parameters) matches whichever plans have them: nothing to say.
        Err(_) => return None,
    };
    let work = match &plan {
        OperatorPlan::Pointwise(pointwise) => match pointwise.placement {
            PointwisePlacement::Grid { tiles, .. } => {
                pointwise::grid::grid_work(graph, op, pointwise).map(|_| tiles)
            }
            _ => return None,
        },
        OperatorPlan::Rows(rows) => rows::rows_work(graph, op, rows).map(|_| rows.tiles),
        OperatorPlan::Rearrange(rearrange) if rearrange.transpose => {
            let input = &graph.values[op.operands[0]];
            rearrange::planned_transpose(&input.shape, input.element, rearrange)
                .map(|_| rearrange.tiles)
        }
        OperatorPlan::Rearrange(rearrange) => {
            let dims = canonical_dims(&graph.values[op.results[0]].shape);
            rearrange::row_copy_grid(dims, rearrange).map(|_| rearrange.tiles)
        }
        OperatorPlan::Gather(gather) => {
            let dims = canonical_dims(&graph.values[op.results[0]].shape);
            gather::planned_blocks(dims, gather).map(|_| gather.tiles)
        }
        _ => return None,
    };
    match work {
        Err(why) => Some(why),
        Ok(tiles)
            if !active
                .iter()
                .any(|&count| count % tiles.max(1) == 0 && tiles <= count) =>
        {
            Some(format!(
                "its {tiles} tiles divide none of the active tile counts {active:?}"
            ))
        }
        Ok(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tiling::{OpKind, Origin};
    use ipu_device::Precision;
    use ipu_dialects::format::PlanValue;

    fn softmax_graph() -> Graph {
        let mut graph = Graph::default();
        let x = graph.add_value(vec![8, 32], Precision::F16, Origin::Argument);
        let y = graph.add_op(OpKind::Softmax, vec![x], vec![8, 32], Precision::F16);
        graph.outputs.push(y);
        graph
    }

    fn pinned(grid: [i64; 3], tiles: i64) -> Plan {
        Plan {
            kind: "rows_softmax".into(),
            params: [
                ("grid".to_string(), PlanValue::Ints(grid.to_vec())),
                ("precision".to_string(), PlanValue::Str("f16".into())),
                ("tiles".to_string(), PlanValue::Int(tiles)),
            ]
            .into_iter()
            .collect(),
        }
    }

    #[test]
    fn a_pinned_plan_that_is_not_offered_says_why() {
        let graph = softmax_graph();
        let op = &graph.ops[0];
        let why = why_not_offered(&graph, op, &pinned([1, 2, 2], 4), &[64]).unwrap();
        assert!(why.contains("splits the rows"), "{why}");
        let why = why_not_offered(&graph, op, &pinned([1, 8, 1], 8), &[12]).unwrap();
        assert!(
            why.contains("8 tiles divide none of the active tile counts [12]"),
            "{why}"
        );
        let mut unknown = pinned([1, 8, 1], 8);
        unknown.kind = "rows_sideways".into();
        let why = why_not_offered(&graph, op, &unknown, &[64]).unwrap();
        assert!(why.contains("unknown plan kind \"rows_sideways\""), "{why}");
        // A partial pin says nothing (whichever plans have its parameters match it).
        let mut partial = pinned([1, 8, 1], 8);
        partial.params.remove("tiles");
        assert_eq!(why_not_offered(&graph, op, &partial, &[64]), None);
        // One it would offer: no reason.
        assert_eq!(
            why_not_offered(&graph, op, &pinned([1, 8, 1], 8), &[64]),
            None
        );
    }
}
