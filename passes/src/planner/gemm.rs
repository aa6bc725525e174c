//! Matmul candidates: the precision of the policy and the operands' FP8 scales, then the split
//! GEMM's plans where its ranged chains take the product, else the output-stationary GEMM's
//! ([`crate::strategies::gemm`]) for plain products of host operands, the general matmul's
//! for every matmul, and the split GEMM's beside them for a product of a row-major device
//! value.

use ipu_device::{MemoryClass, Target};

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
        out.extend(pinned_waves(graph, op, (&dims, input), options, target));
        out.extend(pinned_stationary(
            graph,
            op,
            (&dims, input),
            options,
            target,
        ));
    }
    out
}

/// The activation-stationary GEMM ([`crate::strategies::gemm_stationary`]) of a plan a
/// constraint pins whole: the candidate when the product is a plain one in the plan's
/// precision of the result a product pinned in waves keeps on its tiles (directly or through
/// a GeLU), in a layout it reads in place, and only the host reads its result; else nothing,
/// with a warning that says why.
fn pinned_stationary(
    graph: &Graph,
    op: &Op,
    (dims, input): (&MatmulDims, ipu_device::Precision),
    options: &PlannerOptions,
    target: &Target,
) -> Option<Candidate> {
    use crate::strategies::{gemm_stationary, gemm_waves};
    let index = graph.index_of(op)?;
    let refuse = |reason: String| {
        tracing::warn!(op = index, %reason, "the pinned gemm_activation_stationary plan is not one the lowering builds");
        None
    };
    let plan = match gemm_stationary::pinned_plan(options, index)? {
        Ok(plan) => plan,
        Err(reason) => return refuse(reason),
    };
    if plan.precision != input || dims.batch != 1 || dims.rhs_batched {
        return refuse(format!(
            "a batched product, or one in {input:?} where the plan computes in {:?}",
            plan.precision
        ));
    }
    if !crate::tiling::candidate::returned_only(graph, op.results[0]) {
        return refuse("its result is read by another op (only the host reads it)".into());
    }
    let fit = |v: u64| u32::try_from(v).ok();
    let (Some(m), Some(k), Some(n)) = (fit(dims.m), fit(dims.k), fit(dims.n)) else {
        return refuse("a dimension beyond 2^32".into());
    };
    let producer = gemm_waves::chained_producer(graph, index)
        .and_then(|p| Some((p, gemm_waves::pinned_plan(options, p)?.ok()?)));
    let Some((p, producer_plan)) = producer else {
        return refuse(
            "its left operand is not the result of a product pinned in waves (directly or through a GeLU)"
                .into(),
        );
    };
    let pdims = MatmulDims::of(graph, &graph.ops[p]).ok()?;
    let (Some(pm), Some(pk), Some(pn)) = (fit(pdims.m), fit(pdims.k), fit(pdims.n)) else {
        return None;
    };
    let chained = gemm_waves::WavesGrid::planned((pm, pk, pn), &producer_plan, options.tiles)
        .and_then(|producer| {
            let consumer =
                gemm_stationary::StationaryGrid::planned((m, k, n), &plan, options.tiles)?;
            gemm_stationary::chainable(&producer, &consumer)
        });
    if let Err(reason) = chained {
        return refuse(reason);
    }
    match gemm_stationary::candidate((m, k, n), &plan, options.tiles, target) {
        Ok(candidate) => Some(candidate),
        Err(reason) => refuse(reason),
    }
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

/// The output-stationary GEMM in waves ([`crate::strategies::gemm_waves`]) of a plan a
/// constraint pins whole (a replay of a measured run): the candidate of that plan when the
/// product is a plain one in the plan's precision of a host left operand or of one the
/// chain's previous product, pinned in waves too, left on its tiles, and its result is one the
/// waves can leave ([`gemm_waves::result_role`]); else nothing, with a warning that says why.
fn pinned_waves(
    graph: &Graph,
    op: &Op,
    (dims, input): (&MatmulDims, ipu_device::Precision),
    options: &PlannerOptions,
    target: &Target,
) -> Option<Candidate> {
    use crate::strategies::gemm_waves;
    let index = graph.index_of(op)?;
    let refuse = |reason: String| {
        tracing::warn!(op = index, %reason, "the pinned gemm_waves plan is not one the lowering builds");
        None
    };
    let plan = match gemm_waves::pinned_plan(options, index)? {
        Ok(plan) => plan,
        Err(reason) => return refuse(reason),
    };
    if plan.precision != input {
        return refuse(format!(
            "its precision {:?} is not the product's input precision {input:?}",
            plan.precision
        ));
    }
    if dims.batch != 1 || dims.rhs_batched {
        return refuse("a batched product".into());
    }
    let fit = |v: u64| u32::try_from(v).ok();
    let (Some(m), Some(k), Some(n)) = (fit(dims.m), fit(dims.k), fit(dims.n)) else {
        return refuse("a dimension beyond 2^32".into());
    };
    // The chain's next product reads the result in place when it is pinned in waves or
    // activation-stationary.
    let in_waves = |other: usize| {
        matches!(gemm_waves::pinned_plan(options, other), Some(Ok(_)))
            || matches!(
                crate::strategies::gemm_stationary::pinned_plan(options, other),
                Some(Ok(_))
            )
    };
    let result = match gemm_waves::result_role(graph, index, in_waves) {
        Ok(result) => result,
        Err(reason) => return refuse(reason),
    };
    // A left operand the previous product of a chain computed is read where it left it.
    let chained = !graph.from_host(op.operands[0]);
    if chained {
        let producer = gemm_waves::chained_producer(graph, index)
            .and_then(|p| Some((p, gemm_waves::pinned_plan(options, p)?.ok()?)));
        let Some((p, producer_plan)) = producer else {
            return refuse(
                "its left operand is computed on the device, not by a product pinned in waves (directly or through a GeLU)"
                    .into(),
            );
        };
        let Ok(pdims) = MatmulDims::of(graph, &graph.ops[p]) else {
            return None;
        };
        let (Some(pm), Some(pk), Some(pn)) = (fit(pdims.m), fit(pdims.k), fit(pdims.n)) else {
            return None;
        };
        let grids = gemm_waves::WavesGrid::planned((pm, pk, pn), &producer_plan, options.tiles)
            .and_then(|producer| {
                let consumer = gemm_waves::WavesGrid::planned((m, k, n), &plan, options.tiles)?;
                gemm_waves::chainable(&producer, &consumer)
            });
        if let Err(reason) = grids {
            return refuse(reason);
        }
    }
    match gemm_waves::candidate((m, k, n), &plan, options.tiles, (result, chained), target) {
        Ok(candidate) => Some(candidate),
        Err(reason) => refuse(reason),
    }
}
