//! Operator-plan candidates per op, built only from kernels that exist: every kernel a
//! candidate would call is checked with `KernelSpec::validate` and the candidate is dropped
//! if one is not supported (FP8 arithmetic outside the GEMM, oversized weight blocks, ...).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use ipu_device::Target;
use ipu_dialects::format::PlanValue;
use ipu_dialects::graph::Analyses;
use ipu_dialects::ElementType as Precision;

use crate::strategies::pointwise::{self};

use super::cost::{shard_memory, MemoryUse};
use super::graph::{Graph, Op, OpKind};
use super::PlannerOptions;
pub use crate::tiling::candidate::*;

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
        OpKind::Add | OpKind::Gelu { .. } | OpKind::Cast { .. } | OpKind::Map { .. } => {
            pointwise::candidates(graph, op, &active, options, target)
        }
        OpKind::Broadcast => {
            let pointwise = pointwise::candidates(graph, op, &active, options, target);
            if pointwise.is_empty() {
                crate::strategies::gather::candidates(graph, op, &active, target)
            } else {
                pointwise
            }
        }
        OpKind::Softmax | OpKind::LayerNorm { .. } | OpKind::Reduce { .. } => {
            crate::strategies::rows::candidates(graph, op, &active, options, target)
        }
        OpKind::Rearrange { .. } => {
            crate::strategies::rearrange::candidates(graph, op, &active, target)
        }
        OpKind::Reshape => crate::strategies::reshape::candidates(graph, op, &active),
        OpKind::Slice { .. } | OpKind::Concat { .. } => {
            crate::strategies::gather::candidates(graph, op, &active, target)
        }
        OpKind::Attention { causal, .. } => {
            // The rows formulation is planned only when a constraint pins it whole (a plan it
            // refuses leaves the other candidates, which the constraint then rules out).
            if let Some(plan) = crate::strategies::attention_rows::pinned_plan(options, index) {
                match pinned_rows_attention(graph, op, (plan, *causal), options, target) {
                    Ok(candidate) => return vec![candidate],
                    Err(reason) => {
                        tracing::warn!(op = index, %reason, "the pinned attention_flash_rows plan is not one the lowering builds");
                    }
                }
            }
            // A key block a constraint pins (a replay's plan) is the streamed plans' block.
            let key_block = options
                .constraints
                .get(&crate::tiling::constraints::op_key("", index))
                .and_then(|constraint| match constraint.params.get("key_block") {
                    Some(PlanValue::Int(block)) => u32::try_from(*block).ok(),
                    _ => None,
                });
            let mut out = crate::strategies::attention::candidates(
                graph,
                op,
                *causal,
                &active,
                (options, key_block),
                target,
            );
            // (The lowering runs it in the entry function only: a body's arguments are not
            // the host's.)
            if key_block.is_none() && !options.in_body {
                out.extend(rows_attention_candidates(
                    graph, op, *causal, &active, target,
                ));
            }
            out
        }
        OpKind::Repeat { .. } => Vec::new(),
    }
}

/// The candidate of a pinned `attention_flash_rows` plan: one `[batch-heads, S, D]` query,
/// key and value of one element type, read where the host writes them.
fn pinned_rows_attention(
    graph: &Graph,
    op: &Op,
    (plan, causal): (Result<ipu_dialects::plan::AttentionPlan, String>, bool),
    options: &PlannerOptions,
    target: &Target,
) -> Result<Candidate, String> {
    let plan = plan?;
    if options.in_body {
        return Err(
            "an attention in a repeat body (the rows formulation runs in the entry function)"
                .into(),
        );
    }
    let (sizes, precision) = crate::strategies::attention_rows::operand_sizes(graph, op)?;
    crate::strategies::attention_rows::candidate(
        sizes,
        (precision, causal),
        &plan,
        options.tiles,
        target,
    )
}

/// The rows formulation's plans for an unpinned attention it can run (host operands, a
/// result only the host reads), priced beside the other strategies' (an empty list for any
/// other attention).
fn rows_attention_candidates(
    graph: &Graph,
    op: &Op,
    causal: bool,
    active: &[u32],
    target: &Target,
) -> Vec<Candidate> {
    let Ok((sizes, precision)) = crate::strategies::attention_rows::operand_sizes(graph, op) else {
        return Vec::new();
    };
    crate::strategies::attention_rows::offered(sizes, (precision, causal), active)
        .iter()
        .filter_map(|plan| {
            let tiles = plan.tiles;
            crate::strategies::attention_rows::candidate(
                sizes,
                (precision, causal),
                plan,
                tiles,
                target,
            )
            .ok()
        })
        .collect()
}

/// The candidates of `graph.ops[index]` ([`candidates`]), generated once per graph and
/// question: a repeat body is planned again when its stores tighten the budget, re-derived for
/// each finalist and, in `ipu-select-finalist`, for each recorded plan (in parallel), and
/// every time asks for the same lists. Keyed by the op, every option [`candidates`] reads
/// (constraints only where they shape a list: an attention's pinned key block, a GEMM in waves pinned whole and its GeLU) and the target table; held
/// by the graph ([`super::graph::Analyses`], so a graph edited in place must be a new graph).
/// Concurrent askers of one key wait for the first to generate it.
pub fn memoized(
    graph: &Graph,
    index: usize,
    options: &PlannerOptions,
    target: &Target,
) -> Arc<Vec<Arc<Candidate>>> {
    let memo = Analyses::get(
        graph,
        "planner-candidates",
        Precision::F32,
        CandidateMemo::default,
    );
    let cell = {
        let mut cells = memo
            .cells
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        cells
            .entry(memo_key(graph, index, options, target))
            .or_default()
            .clone()
    };
    // No candidate generation uses rayon, so a waiting asker cannot be the generating one.
    cell.get_or_init(|| {
        Arc::new(
            candidates(graph, index, options, target)
                .into_iter()
                .map(Arc::new)
                .collect(),
        )
    })
    .clone()
}

type MemoCell = Arc<OnceLock<Arc<Vec<Arc<Candidate>>>>>;

#[derive(Default)]
struct CandidateMemo {
    cells: Mutex<HashMap<(usize, String, u64), MemoCell>>,
}

/// What [`candidates`] reads besides the graph and the op: every option but the constraints
/// (destructured, so a new option cannot be left out), the constraints' parts that shape the
/// op's list, and the target table (hashed).
fn memo_key(
    graph: &Graph,
    index: usize,
    options: &PlannerOptions,
    target: &Target,
) -> (usize, String, u64) {
    let PlannerOptions {
        tiles,
        active_tiles,
        precision,
        fp8_scale,
        weight_memory,
        beam_width,
        candidates_per_op,
        finalists,
        standard_budget,
        interleaved_budget,
        total_budget,
        constraints,
        in_body,
    } = options;
    // Constraints shape a few candidate lists, and only these parts of them: an attention's
    // pinned key block, a GEMM in waves pinned whole, and the GeLU of a product pinned in
    // waves (which runs in place). The beam filters every other list afterwards.
    let own = constraints.get(&crate::tiling::constraints::op_key("", index));
    let key_block = own.and_then(|constraint| constraint.params.get("key_block"));
    // (The rows formulation is only planned pinned: its kind shapes the list.)
    let rows_attention = own
        .and_then(|constraint| constraint.kind.as_deref())
        .filter(|&kind| kind == "attention_flash_rows")
        .map(|_| &own.expect("a constraint with a kind").params);
    let waves = |op: usize| {
        constraints
            .get(&crate::tiling::constraints::op_key("", op))
            .filter(|constraint| {
                matches!(
                    constraint.kind.as_deref(),
                    Some("gemm_waves" | "gemm_activation_stationary")
                )
            })
            .map(|constraint| &constraint.params)
    };
    let producers_in_waves: Vec<_> = graph.ops[index]
        .operands
        .iter()
        .filter_map(|&v| match graph.values[v].origin {
            crate::tiling::Origin::Op(producer) => waves(producer),
            _ => None,
        })
        .collect();
    // (A product in waves keeps its result for the chain's next product pinned to read it.)
    let consumer = waves(index)
        .and_then(|_| crate::strategies::gemm_waves::chained_consumer(graph, index))
        .and_then(waves);
    let text = format!(
        "{tiles} {active_tiles:?} {precision:?} {fp8_scale:?} {weight_memory:?} {beam_width} \
         {candidates_per_op} {finalists} {standard_budget} {interleaved_budget} {total_budget} \
         {in_body} {key_block:?} {:?} {producers_in_waves:?} {consumer:?} {rows_attention:?}",
        waves(index)
    );
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hasher::write(&mut hasher, format!("{target:?}").as_bytes());
    (index, text, std::hash::Hasher::finish(&hasher))
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
