//! Data ranges for choosing FP8 scales: bounds on `max |x|` of every value, from what is known
//! at compile time (constants, calibrated function arguments) propagated through the ops where
//! a bound is cheap and sound.
//!
//! The rules ([`op_bound`]), each a bound on the exact result (the result's rounding to
//! F16/F32 adds at most half an ulp, and a value that rounds past `240 * 2^scale` saturates to
//! it in the F143 cast, so it is not a concern for scale choice):
//!
//! | op | bound on `max |result|` |
//! |---|---|
//! | `ipu.gelu` (erf and tanh forms) | `max(m, 0.17)`: `gelu(x) <= x` for `x >= 0`, and its minimum is -0.16997 (erf) / -0.16988 (tanh) |
//! | `ipu.add` | `m_lhs + m_rhs` (broadcasting does not change it) |
//! | `ipu.matmul` | `K * m_lhs * m_rhs`, only for `K <= MATMUL_BOUND_MAX_K` (see below) |
//! | `ipu.softmax` | `1` |
//! | `ipu.attention` | `m_v`: each output row is a convex combination of rows of V |
//! | `ipu.rearrange` | `m` (data movement) |
//! | `ipu.cast` between F16/F32 | `m` (same rounding remark as above); to or from FP8 unknown |
//! | `ipu.layer_norm`, `ipu.repeat` | unknown |
//!
//! The matmul bound is attained only when every product in a dot product has the largest
//! magnitude and the same sign; for zero-mean data the results are typically about `sqrt(K)`
//! times smaller, so the bound sits `log2(sqrt(K))` binades above the data. Every binade the
//! scale is too large pushes the data one binade towards F143's subnormals (its normal range
//! is 2^-7 .. 240, 15 binades). With [`MATMUL_BOUND_MAX_K`] = 256 the cost is at most 4 of
//! those 15 binades; for a larger K the bound is considered absurdly loose and the result's
//! range is left unknown (scale 0 unless `fp8-scale` is given), the same as before.

use super::graph::{Graph, OpKind, Origin};

/// Largest contraction size for which the worst-case matmul bound `K * m_a * m_b` is used.
pub const MATMUL_BOUND_MAX_K: u64 = 256;

/// Largest magnitude of the GeLU's negative lobe (erf form -0.169971, tanh form -0.169880),
/// rounded up.
pub const GELU_NEGATIVE_BOUND: f64 = 0.17;

/// The bound on `max |result|` of op `index` from its operands' bounds (`None`: unknown).
pub fn op_bound(graph: &Graph, index: usize) -> Option<f64> {
    let op = &graph.ops[index];
    let operand = |position: usize| -> Option<f64> {
        op.operands
            .get(position)
            .and_then(|&value| graph.values.get(value))
            .and_then(|value| value.max_abs)
    };
    let bound = match &op.kind {
        OpKind::Gelu { .. } => operand(0)?.max(GELU_NEGATIVE_BOUND),
        OpKind::Add => operand(0)? + operand(1)?,
        OpKind::Matmul { .. } => {
            let dims = super::graph::MatmulDims::of(graph, op).ok()?;
            if dims.k > MATMUL_BOUND_MAX_K {
                return None;
            }
            dims.k as f64 * operand(0)? * operand(1)?
        }
        OpKind::Softmax => 1.0,
        OpKind::Attention { .. } => operand(2)?,
        OpKind::Rearrange { .. } | OpKind::Reshape | OpKind::Broadcast | OpKind::Slice { .. } => {
            operand(0)?
        }
        OpKind::Concat { .. } => operand(0)?.max(operand(1)?),
        OpKind::Cast { .. } => {
            let from = graph.values[op.operands[0]].element;
            let to = graph.values[op.results[0]].element;
            if from.is_fp8() || to.is_fp8() {
                return None;
            }
            operand(0)?
        }
        OpKind::Reduce {
            combiner: crate::tiling::Combiner::Max | crate::tiling::Combiner::Min,
        } => operand(0)?,
        OpKind::Reduce { .. }
        | OpKind::Map { .. }
        | OpKind::LayerNorm { .. }
        | OpKind::Repeat { .. } => return None,
    };
    (bound.is_finite() && bound >= 0.0).then_some(bound)
}

/// Fills in `max_abs` of op results (in program order) from the bounds of their operands.
/// Values that already have a bound (constants, calibrated arguments) are left alone; results
/// get the rule's bound or stay unknown.
/// Inside `ipu.repeat` bodies (planned once through their op) ranges propagate from the
/// body's constants; the carried value's range is unknown.
pub fn propagate(graph: &mut Graph) {
    for op in &mut graph.ops {
        if let OpKind::Repeat { body, .. } = &mut op.kind {
            propagate(body);
        }
    }
    for index in 0..graph.ops.len() {
        let bound = op_bound(graph, index);
        for &result in &graph.ops[index].results.clone() {
            if matches!(graph.values[result].origin, Origin::Op(_))
                && graph.values[result].max_abs.is_none()
            {
                graph.values[result].max_abs = bound;
            }
        }
    }
}
