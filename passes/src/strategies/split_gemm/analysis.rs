//! Which matmuls of a graph the split GEMM takes ("Chains" in the module docs): the planner
//! and the lowering ask [`split_dims`] the same question, answered once per graph.

use super::*;

/// The `(M, K, N)` of matmul `index` of `graph` when the split lowering implements it: no
/// transposes; the right operand a host tensor (function argument or constant), a single
/// `[K, N]` matrix (leading axes of 1); the left one a host tensor or a [`Ranged`] value
/// ([`ranged_value`]: a split GEMM's result through bias adds and GeLUs), both in the AMP
/// `input` precision; K and N sizes that fit; and a result whose every use keeps it ranged
/// (returned, bias adds, GeLUs, the left operand of a split GEMM, recursively). A K or N
/// that is not a multiple of 16 needs a host A and a result only returned (the host pads
/// what it writes and drops what it reads; "Padding" in the module docs). The planner and
/// the lowering ask the same question here.
pub fn split_dims(graph: &Graph, index: usize, input: Precision) -> Option<(u32, u32, u32)> {
    split_analysis(graph, input)
        .split
        .get(index)
        .copied()
        .flatten()
}

/// The `(M, K, N)` of matmul `index` of `graph` when the split GEMM may take it beside the
/// other strategies ("Row-major neighbours" in the module docs): the op's own conditions of
/// [`split_dims`], a left operand from the host (in the input precision, or read by products
/// alone) or computed on the device by an op whose result is not held ranged (so it is in
/// row-major blocks), and not already taken by [`split_dims`]. The result is converted to
/// its row grid, so N must be whole 16-groups; K may be any (the host pads a host A, a
/// gathered one is zeroed where it pads).
pub fn device_split_dims(graph: &Graph, index: usize, input: Precision) -> Option<(u32, u32, u32)> {
    let analysis = split_analysis(graph, input);
    if analysis.split.get(index).copied().flatten().is_some() {
        return None;
    }
    let a = *graph.ops.get(index)?.operands.first()?;
    // A host operand is homed where its first reader needs it: one the host encodes (FP8)
    // for the products must have no reader but products, which read the same codes.
    // A carried value of a body is on the device, in row-major blocks like an op's result.
    let host_a = graph.from_host(a);
    let row_major = match graph.values[a].origin {
        _ if host_a => {
            graph.values[a].element == input
                || !crate::strategies::general_matmul::read_unencoded(graph, a)
        }
        Origin::Op(_) | Origin::Argument => !analysis.ranged[a],
        Origin::Constant | Origin::Opaque => false,
    };
    row_major
        .then(|| split_local(graph, index, input))
        .flatten()
        .filter(|&(_, _, n)| n % 16 == 0)
}

/// [`split_dims`] of every op and [`ranged_value`] of every value of a graph, computed in one
/// backward pass (which results have only ranged uses) and one forward pass.
struct SplitAnalysis {
    split: Vec<Option<(u32, u32, u32)>>,
    ranged: Vec<bool>,
}

fn split_analysis(graph: &Graph, input: Precision) -> Arc<SplitAnalysis> {
    Analyses::get(graph, "split-gemm", input, || {
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); graph.values.len()];
        for (index, op) in graph.ops.iter().enumerate() {
            for &v in &op.operands {
                if users[v].last() != Some(&index) {
                    users[v].push(index);
                }
            }
        }
        // Users come after their operands' producers, so the ops in reverse order see
        // every use of their results decided.
        let mut ranged_uses = vec![false; graph.values.len()];
        for index in (0..graph.ops.len()).rev() {
            for &v in &graph.ops[index].results {
                ranged_uses[v] = users[v].iter().all(|&user| {
                    let op = &graph.ops[user];
                    let Some(&out) = op.results.first() else {
                        return false;
                    };
                    let follows = match op.kind {
                        OpKind::Gelu { .. } => true,
                        OpKind::Add => bias_operand(graph, user, v).is_some(),
                        // A ranged A is gathered on the device: whole 16-groups of K.
                        OpKind::Matmul { .. } => {
                            op.operands[0] == v
                                && op.operands[1] != v
                                && split_local(graph, user, input)
                                    .is_some_and(|(_, k, _)| k % 16 == 0)
                        }
                        _ => false,
                    };
                    follows && ranged_uses[out]
                });
            }
        }
        let mut split = vec![None; graph.ops.len()];
        let mut ranged = vec![false; graph.values.len()];
        for (index, op) in graph.ops.iter().enumerate() {
            let Some(&out) = op.results.first() else {
                continue;
            };
            ranged[out] = match op.kind {
                OpKind::Matmul { .. } => {
                    let a = op.operands[0];
                    // Padding (K for a host A, N for a result the host reads) takes a
                    // product only returned; one other ops read competes beside the
                    // others ([`device_split_dims`]).
                    let padded = |(_, k, n): (u32, u32, u32)| {
                        (k % 16 == 0 && n % 16 == 0) || (is_host(graph, a) && users[out].is_empty())
                    };
                    split[index] = split_local(graph, index, input).filter(|&dims| {
                        (is_host(graph, a) || ranged[a]) && ranged_uses[out] && padded(dims)
                    });
                    split[index].is_some()
                }
                OpKind::Gelu { .. } => ranged[op.operands[0]],
                OpKind::Add => op
                    .operands
                    .iter()
                    .any(|&x| bias_operand(graph, index, x).is_some() && ranged[x]),
                _ => false,
            };
        }
        SplitAnalysis { split, ranged }
    })
}

pub(super) fn is_host(graph: &Graph, v: usize) -> bool {
    graph.from_host(v)
}

/// The conditions of [`split_dims`] on the op itself (not on where A comes from or where C
/// goes).
pub(super) fn split_local(
    graph: &Graph,
    index: usize,
    input: Precision,
) -> Option<(u32, u32, u32)> {
    let op = graph.ops.get(index)?;
    let (a, b) = (*op.operands.first()?, *op.operands.get(1)?);
    op.results.first()?;
    let plain = matches!(
        op.kind,
        OpKind::Matmul {
            transpose_lhs: false,
            transpose_rhs: false
        }
    );
    // Under the FP8 policy the host encodes a host operand in FP8 at the operand's scale as
    // it streams it, and the device casts a ranged left operand range by range; otherwise
    // the operands must be in the input precision already.
    let (va, vb) = (&graph.values[a], &graph.values[b]);
    let streams = |v: usize| graph.values[v].element == input || input.is_fp8();
    if !plain || a == b || !is_host(graph, b) || !streams(a) || !streams(b) {
        return None;
    }
    let rank = vb.shape.len();
    if rank < 2 || vb.shape[..rank - 2].iter().any(|&d| d != 1) {
        return None;
    }
    let (k, n) = (vb.shape[rank - 2], vb.shape[rank - 1]);
    // Whole 16-element groups of K and N, or padded to them where the host writes or reads
    // the operand ([`split_dims`], [`device_split_dims`]).
    if va.shape.last() != Some(&k) {
        return None;
    }
    let m: u64 = va.shape[..va.shape.len() - 1].iter().product();
    Some((
        u32::try_from(m).ok()?,
        u32::try_from(k).ok()?,
        u32::try_from(n).ok()?,
    ))
}

/// The host bias of `add` op `index` applied to ranged value `x`: the other operand, a host
/// vector of `x`'s last dimension (leading axes of 1) in `x`'s element type, with a result
/// of `x`'s shape.
pub fn bias_operand(graph: &Graph, index: usize, x: usize) -> Option<usize> {
    let op = &graph.ops[index];
    if !matches!(op.kind, OpKind::Add) || op.operands.len() != 2 || op.operands[0] == op.operands[1]
    {
        return None;
    }
    let bias = if op.operands[0] == x {
        op.operands[1]
    } else {
        op.operands[0]
    };
    let (vx, vb) = (&graph.values[x], &graph.values[bias]);
    let vector =
        vb.shape.iter().rev().skip(1).all(|&d| d == 1) && vb.shape.last() == vx.shape.last();
    (is_host(graph, bias)
        && vector
        && vb.element == vx.element
        && graph.values[*op.results.first()?].shape == vx.shape)
        .then_some(bias)
}

/// Whether value `v` is held ranged when the split lowering runs: the result of a split GEMM
/// ([`split_dims`]), or of a bias add or GeLU of a ranged value.
pub fn ranged_value(graph: &Graph, v: usize, input: Precision) -> bool {
    split_analysis(graph, input)
        .ranged
        .get(v)
        .copied()
        .unwrap_or(false)
}
