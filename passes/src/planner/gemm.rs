//! Matmul candidates: the precision of the policy and the operands' FP8 scales, then the split
//! GEMM's plans where its ranged chains take the product, else the output-stationary GEMM's
//! ([`crate::strategies::gemm`]) for plain products of host operands, the general matmul's
//! for every matmul, and the split GEMM's beside them for a product of a row-major device
//! value.

use ipu_device::{MemoryClass, Target};

use ipu_dialects::plan::{GemmActivationStationaryPlan, GemmWavesPlan};

use super::candidates::Candidate;
use super::graph::{Graph, MatmulDims, Op, OpKind, Origin};
use super::PlannerOptions;

pub(super) fn gemm_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let mut out = strategy_candidates(graph, op, active, options, target);
    if let Ok(dims) = MatmulDims::of(graph, op) {
        let input = options.precision.input_for(
            graph.values[op.operands[0]].element,
            graph.values[op.results[0]].element,
            crate::tiling::candidate::returned_only(graph, op.results[0]),
        );
        out.extend(pinned_replay_gemm(
            graph,
            op,
            (&dims, input),
            options,
            target,
        ));
    }
    out
}

/// Every strategy's candidates but the waves'.
fn strategy_candidates(
    graph: &Graph,
    op: &Op,
    active: &[u32],
    options: &PlannerOptions,
    target: &Target,
) -> Vec<Candidate> {
    let Ok(dims) = MatmulDims::of(graph, op) else {
        return Vec::new();
    };
    let OpKind::Matmul {
        transpose_lhs,
        transpose_rhs,
    } = op.kind
    else {
        return Vec::new();
    };
    let lhs_value = &graph.values[op.operands[0]];
    let rhs_value = &graph.values[op.operands[1]];
    let out_value = &graph.values[op.results[0]];
    // The policy applies to a product whose result is its partials type; any other runs in
    // its operands' precision.
    let input = options.precision.input_for(
        lhs_value.element,
        out_value.element,
        crate::tiling::candidate::returned_only(graph, op.results[0]),
    );
    // A host operand's scale comes from its data range (constants, calibration) unless the
    // policy pins one; a value computed on the device is cast on the device at the policy's
    // scale (the one the host reference casts device values at), whatever its range.
    let scale_of = |value: &super::graph::Value| -> i64 {
        if !input.is_fp8() {
            return 0;
        }
        let pinned = options.fp8_scale;
        if matches!(value.origin, Origin::Op(_)) {
            return pinned.unwrap_or(0);
        }
        pinned.unwrap_or_else(|| value.max_abs.map(super::cost::fp8_scale_for).unwrap_or(0))
    };
    let weight_classes: Vec<MemoryClass> = match options.weight_memory {
        Some(class) => vec![class],
        None => vec![MemoryClass::Interleaved, MemoryClass::Standard],
    };
    let scales = [scale_of(lhs_value), scale_of(rhs_value)];
    let split = crate::strategies::split_gemm::candidates(
        graph,
        op,
        (input, scales),
        active,
        options,
        target,
    );
    // The ranged chains are the split GEMM's alone; a product of a row-major device value
    // is offered split beside the general matmul, and the cheaper wins.
    let index = graph.index_of(op);
    let ranged = index.is_some_and(|index| {
        crate::strategies::split_gemm::split_dims(graph, index, input).is_some()
    });
    let split = match split {
        Some(split) if ranged => return split,
        split => split.unwrap_or_default(),
    };
    // The GEMM lowering takes plain products of two host operands with one right matrix
    // (output-stationary grids it follows); every other matmul (transposes, batched or
    // device-computed right operands, a device-computed left operand) is the general
    // matmul's, planned on its own blocks.
    let general = crate::strategies::general_matmul::candidates(
        graph,
        op,
        (&dims, input),
        (transpose_lhs, transpose_rhs),
        options,
        target,
    );
    let mut general = general;
    general.extend(split);
    let host = |v: usize| graph.from_host(v);
    let fast = !transpose_lhs
        && !transpose_rhs
        && !dims.rhs_batched
        && host(op.operands[0])
        && host(op.operands[1]);
    if !fast {
        return general;
    }
    // Where the GEMM lowering can follow the policy, the general matmul competes only in the
    // policy's precision (it falls back to the operands' own only where nothing else runs).
    let general: Vec<Candidate> = general
        .into_iter()
        .filter(|c| c.plan.precision() == Some(input))
        .collect();
    let operands = crate::strategies::gemm::GemmOperands {
        dims: &dims,
        input,
        scales,
        weight_classes: &weight_classes,
    };
    let mut out =
        crate::strategies::gemm::candidates(graph, op, &operands, active, options, target);
    out.extend(general);
    out
}

/// The candidate of a GEMM a constraint pins whole in waves
/// ([`crate::strategies::gemm_waves`]) or activation-stationary
/// ([`crate::strategies::gemm_stationary`]): the measured runs' plans, planned only when
/// pinned. `None` without such a pin, or when the plan cannot be followed (with a warning
/// that says why: the planner then reports the constraint unsatisfied).
fn pinned_replay_gemm(
    graph: &Graph,
    op: &Op,
    (dims, input): (&MatmulDims, ipu_device::Precision),
    options: &PlannerOptions,
    target: &Target,
) -> Option<Candidate> {
    use crate::strategies::{gemm_stationary, gemm_waves};
    let index = graph.index_of(op)?;
    let (kind, candidate) = if let Some(plan) = gemm_waves::pinned_plan(options, index) {
        let candidate = plan
            .and_then(|plan| waves_candidate(graph, index, (&plan, dims, input), options, target));
        ("gemm_waves", candidate)
    } else {
        let plan = gemm_stationary::pinned_plan(options, index)?;
        let candidate = plan.and_then(|plan| {
            stationary_candidate(graph, index, (&plan, dims, input), options, target)
        });
        ("gemm_activation_stationary", candidate)
    };
    candidate
        .map_err(|reason| {
            tracing::warn!(op = index, %reason, "the pinned {kind} plan is not one the lowering builds");
        })
        .ok()
}

/// `m x k x n` of a plain product computing in `input`, for a plan computing in `precision`.
fn plain_dims(
    dims: &MatmulDims,
    input: ipu_device::Precision,
    precision: ipu_device::Precision,
) -> Result<(u32, u32, u32), String> {
    if precision != input {
        return Err(format!(
            "its precision {precision:?} is not the product's input precision {input:?}"
        ));
    }
    if dims.batch != 1 || dims.rhs_batched {
        return Err("a batched product".into());
    }
    let fit = |v: u64| u32::try_from(v).map_err(|_| "a dimension beyond 2^32".to_string());
    Ok((fit(dims.m)?, fit(dims.k)?, fit(dims.n)?))
}

/// The layout of the product in waves that computed matmul `index`'s left operand (directly
/// or through a GeLU), pinned whole, or why there is none.
fn producer_in_waves(
    graph: &Graph,
    index: usize,
    options: &PlannerOptions,
) -> Result<crate::strategies::gemm_waves::WavesGrid, String> {
    use crate::strategies::gemm_waves;
    let not_pinned = || {
        "its left operand is computed on the device, not by a product pinned in waves (directly or through a GeLU)"
            .to_string()
    };
    let producer = gemm_waves::chained_producer(graph, index).ok_or_else(not_pinned)?;
    let plan = gemm_waves::pinned_plan(options, producer)
        .and_then(Result::ok)
        .ok_or_else(not_pinned)?;
    let dims = MatmulDims::of(graph, &graph.ops[producer]).map_err(|e| e.detail)?;
    let dims = plain_dims(&dims, plan.precision, plan.precision)?;
    gemm_waves::WavesGrid::planned(dims, &plan, options.tiles)
}

/// A pinned product in waves: its left operand from the host or, in a chain, where the
/// previous product in waves left it; its result left as [`gemm_waves::result_role`] says
/// (kept when the chain's next product is pinned in waves or activation-stationary).
fn waves_candidate(
    graph: &Graph,
    index: usize,
    (plan, dims, input): (&GemmWavesPlan, &MatmulDims, ipu_device::Precision),
    options: &PlannerOptions,
    target: &Target,
) -> Result<Candidate, String> {
    use crate::strategies::{gemm_stationary, gemm_waves};
    let dims = plain_dims(dims, input, plan.precision)?;
    let in_place = |other: usize| {
        matches!(gemm_waves::pinned_plan(options, other), Some(Ok(_)))
            || matches!(gemm_stationary::pinned_plan(options, other), Some(Ok(_)))
    };
    let result = gemm_waves::result_role(graph, index, in_place)?;
    let chained = !graph.from_host(graph.ops[index].operands[0]);
    if chained {
        let producer = producer_in_waves(graph, index, options)?;
        let consumer = gemm_waves::WavesGrid::planned(dims, plan, options.tiles)?;
        gemm_waves::chainable(&producer, &consumer)?;
    }
    gemm_waves::candidate(dims, plan, options.tiles, (result, chained), target)
}

/// A pinned activation-stationary product: its left operand the result a product pinned in
/// waves keeps on its tiles, in a layout it reads in place; its result read by the host alone.
fn stationary_candidate(
    graph: &Graph,
    index: usize,
    (plan, dims, input): (
        &GemmActivationStationaryPlan,
        &MatmulDims,
        ipu_device::Precision,
    ),
    options: &PlannerOptions,
    target: &Target,
) -> Result<Candidate, String> {
    use crate::strategies::gemm_stationary;
    let dims = plain_dims(dims, input, plan.precision)?;
    if !crate::tiling::candidate::returned_only(graph, graph.ops[index].results[0]) {
        return Err("its result is read by another op (only the host reads it)".into());
    }
    let producer = producer_in_waves(graph, index, options)?;
    let consumer = gemm_stationary::StationaryGrid::planned(dims, plan, options.tiles)?;
    gemm_stationary::chainable(&producer, &consumer)?;
    gemm_stationary::candidate(dims, plan, options.tiles, target)
}
