//! `ipu-canonicalize`'s reshape and transpose patterns: reshapes fold into each other and into
//! dense constants, sink below the elementwise, row-wise and matmul ops they feed, and unit
//! batch axes leave matmuls' right operands; rearranges that move only unit axes become
//! reshapes, unit-axis reshapes fold into the rearranges that read them, and a transposed
//! product becomes the product. Frontends wrap every op in reshapes that add or drop a leading
//! unit axis (TFLite's `[1, S, D]` around each dense layer, `torch.export`'s batch-1 weights)
//! and write products transposed (JAX's `p @ v` as `(v^T p^T)^T`); sunk below the ops they feed,
//! such pairs meet and cancel, and the ops between them plan on the layout their neighbours
//! use.

use ipu_dialects::ipu::{op_name, GeluOp, LayerNormOp, MapOp, MatmulOp, ReshapeOp, SoftmaxOp};
use ipu_dialects::tensor::TensorInfo;
use melior::ir::{
    attribute::AttributeLike,
    block::BlockLike,
    operation::{OperationBuilder, OperationLike},
    r#type::{RankedTensorType, ShapedTypeLike, TypeLike},
    OperationRef, RegionLike, Type, Value, ValueLike,
};

use super::{info, type_of};
use crate::ir::producer;
use crate::rewrite::Rewriter;

/// A plain (no layout format) tensor's shape.
fn plain_shape(value: Value) -> Option<Vec<i64>> {
    let info: TensorInfo = info(value)?;
    info.format.is_none().then_some(info.shape)
}

/// `value`'s type with `shape` (same element type, no format).
pub(super) fn with_shape<'c>(value: Value<'c, '_>, shape: &[i64]) -> Option<Type<'c>> {
    let tensor = RankedTensorType::try_from(value.r#type()).ok()?;
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    Some(RankedTensorType::new(&shape, tensor.element(), None).into())
}

/// If `value` is a plain `ipu.reshape`'s result, the reshape and its input.
fn reshaped<'c, 'a>(value: Value<'c, 'a>) -> Option<(OperationRef<'c, 'a>, Value<'c, 'a>)> {
    let op = producer(value)?;
    let input = ReshapeOp::try_from(op).ok()?.input()?;
    plain_shape(input)?;
    plain_shape(value)?;
    Some((op, input))
}

/// `value` reshaped to `to` by a reshape inserted before `op`; its result.
fn insert_reshape<'c, 'r>(
    rewriter: &'r Rewriter<'c>,
    op: OperationRef<'c, 'r>,
    value: Value<'c, 'r>,
    to: Type<'c>,
) -> Option<Value<'c, 'r>> {
    let reshape = rewriter.insert_before(op, ReshapeOp::build(op.location(), value, to));
    reshape.result(0).ok().map(Into::into)
}

/// Replaces `op` by `produced`'s result reshaped to `to` (the shape `op`'s result had).
fn replace_reshaped<'c, 'r>(
    rewriter: &'r Rewriter<'c>,
    op: OperationRef<'c, 'r>,
    produced: OperationRef<'c, 'r>,
    to: Type<'c>,
) -> bool {
    let Some(back) = produced
        .result(0)
        .ok()
        .and_then(|r| insert_reshape(rewriter, op, r.into(), to))
    else {
        return false;
    };
    rewriter.replace(op, &[back]);
    true
}

/// The input and result of `op` if it is an `ipu.reshape`.
fn reshape_parts<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    let input = ReshapeOp::try_from(op).ok()?.input()?;
    Some((input, op.result(0).ok()?.into()))
}

/// The input, result and permutation of `op` if it is an `ipu.rearrange` with a permutation.
fn rearrange_parts<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Option<(Value<'c, 'a>, Value<'c, 'a>, Vec<i64>)> {
    let rearrange = ipu_dialects::ipu::RearrangeOp::try_from(op).ok()?;
    let (input, permutation) = (rearrange.input()?, rearrange.permutation()?);
    Some((input, op.result(0).ok()?.into(), permutation))
}

/// `value` before the plain reshapes that produced it by regrouping only its batch axes (the
/// last two axes kept).
pub(super) fn through_batch_reshapes<'c: 'a, 'a>(mut value: Value<'c, 'a>) -> Value<'c, 'a> {
    while let Some((_, input)) = reshaped(value) {
        let (Some(own), Some(to)) = (plain_shape(input), plain_shape(value)) else {
            break;
        };
        if own.len() < 2 || to.len() < 2 || own[own.len() - 2..] != to[to.len() - 2..] {
            break;
        }
        value = input;
    }
    value
}

/// `rearrange(x)` whose permutation keeps the order of `x`'s axes longer than 1 (it moves only
/// unit axes) => `reshape(x)`: the same elements in the same order.
pub(super) fn fold_unit_axes_rearrange(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((input, result, permutation)) = rearrange_parts(op) else {
        return false;
    };
    let (Some(shape), Some(_)) = (plain_shape(input), plain_shape(result)) else {
        return false;
    };
    let moved: Vec<i64> = permutation
        .iter()
        .copied()
        .filter(|&axis| shape.get(axis as usize).is_some_and(|&d| d != 1))
        .collect();
    if permutation.len() != shape.len() || !moved.windows(2).all(|w| w[0] < w[1]) {
        return false;
    }
    let Some(reshaped) = insert_reshape(rewriter, op, input, result.r#type()) else {
        return false;
    };
    super::replace_and_clean(rewriter, op, reshaped, None);
    true
}

/// The axes of `shape` longer than 1, in order.
fn long_axes(shape: &[i64]) -> Vec<i64> {
    shape.iter().copied().filter(|&d| d != 1).collect()
}

/// `rearrange(reshape(x))` where the reshape only adds or drops unit axes => `reshape(
/// rearrange'(x))`: the same permutation of `x`'s axes longer than 1, written on `x`'s own
/// shape (its unit axes kept in place), when the tile lowering runs it (the last axis kept, or
/// the last two swapped). The rearrange then reads `x` itself (a host argument is written
/// where the result holds it; a unit-axis reshape of it was a value to gather).
pub(super) fn fold_unit_reshape_into_rearrange(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((input, result, permutation)) = rearrange_parts(op) else {
        return false;
    };
    let Some((reshape, x)) = reshaped(input) else {
        return false;
    };
    let (Some(own), Some(through), Some(out)) =
        (plain_shape(x), plain_shape(input), plain_shape(result))
    else {
        return false;
    };
    let long = long_axes(&own);
    if long != long_axes(&through) || long.is_empty() || permutation.len() != through.len() {
        return false;
    }
    // The long axes of the reshaped value, numbered in order, and the order the result
    // takes them in.
    let rank_of_long: Vec<Option<usize>> = {
        let mut next = 0;
        through
            .iter()
            .map(|&d| {
                (d != 1).then(|| {
                    next += 1;
                    next - 1
                })
            })
            .collect()
    };
    let order: Vec<usize> = permutation
        .iter()
        .filter_map(|&axis| rank_of_long.get(axis as usize).copied().flatten())
        .collect();
    // Positions of x's long axes, filled with them in the result's order.
    let positions: Vec<usize> = (0..own.len()).filter(|&a| own[a] != 1).collect();
    let mut new_permutation: Vec<i64> = (0..own.len() as i64).collect();
    for (slot, &k) in positions.iter().zip(&order) {
        new_permutation[*slot] = positions[k] as i64;
    }
    let rank = own.len();
    let keeps_last = new_permutation.last() == Some(&(rank as i64 - 1));
    let swaps_last_two = rank >= 2
        && new_permutation[..rank - 2]
            .iter()
            .enumerate()
            .all(|(i, &a)| a == i as i64)
        && new_permutation[rank - 2..] == [rank as i64 - 1, rank as i64 - 2];
    if !(keeps_last || swaps_last_two)
        || new_permutation
            .iter()
            .enumerate()
            .all(|(i, &a)| a == i as i64)
    {
        return false;
    }
    let permuted: Vec<i64> = new_permutation.iter().map(|&a| own[a as usize]).collect();
    if long_axes(&permuted) != long_axes(&out) {
        return false;
    }
    let Some(permuted_type) = with_shape(x, &permuted) else {
        return false;
    };
    let rearranged = rewriter.insert_before(
        op,
        ipu_dialects::ipu::RearrangeOp::build(
            rewriter.context(),
            op.location(),
            x,
            permuted_type,
            Some(&new_permutation),
        ),
    );
    if !replace_reshaped(rewriter, op, rearranged, result.r#type()) {
        return false;
    }
    rewriter.erase_dead_tree(reshape);
    true
}

/// `transpose(matmul(a, b))` => `matmul(b, a)` with the transpose flags swapped and flipped
/// (`(a b)^T = b^T a^T`), through reshapes that only regroup batch axes between them: a
/// product computed transposed and transposed back (JAX's `p @ v` as `(v^T p^T)^T`) is the
/// product. The operands' own transposes then fold into the flags
/// (`fold-transpose-into-matmul`).
pub(super) fn fold_transpose_of_matmul(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((input, result, permutation)) = rearrange_parts(op) else {
        return false;
    };
    let rank = permutation.len();
    let mut swap: Vec<i64> = (0..rank as i64).collect();
    if rank < 2 {
        return false;
    }
    swap.swap(rank - 2, rank - 1);
    if permutation != swap || plain_shape(result).is_none() {
        return false;
    }
    let product = through_batch_reshapes(input);
    let Some(matmul_op) = producer(product) else {
        return false;
    };
    let Ok(matmul) = MatmulOp::try_from(matmul_op) else {
        return false;
    };
    // Only when the product is read by nothing else (on the way too).
    let mut value = input;
    loop {
        if crate::ir::users(value).len() != 1 {
            return false;
        }
        if value == product {
            break;
        }
        let Some((_, inner)) = reshaped(value) else {
            return false;
        };
        value = inner;
    }
    let (Some(a), Some(b), Some(shape)) = (matmul.lhs(), matmul.rhs(), plain_shape(product)) else {
        return false;
    };
    let mut swapped = shape.clone();
    let n = swapped.len();
    swapped.swap(n - 2, n - 1);
    let Some(new_type) = with_shape(product, &swapped) else {
        return false;
    };
    let context = rewriter.context();
    let new = MatmulOp::build(
        context,
        matmul_op.location(),
        b,
        a,
        new_type,
        !matmul.transpose_rhs(),
        !matmul.transpose_lhs(),
    );
    let new = rewriter.insert_before(op, new);
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    let new_result: Value = new_result.into();
    let replacement = if new_result.r#type() == result.r#type() {
        new_result
    } else {
        let Some(back) = insert_reshape(rewriter, op, new_result, result.r#type()) else {
            return false;
        };
        back
    };
    let old = producer(input);
    rewriter.replace(op, &[replacement]);
    if let Some(old) = old {
        rewriter.erase_dead_tree(old);
    }
    true
}

/// `reshape(x : T -> T)` => `x`.
pub(super) fn fold_identity_reshape(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((input, result)) = reshape_parts(op) else {
        return false;
    };
    if type_of(input) != type_of(result) {
        return false;
    }
    super::replace_and_clean(rewriter, op, input, None);
    true
}

/// `reshape(reshape(x))` => `reshape(x)` (row-major order is kept by both).
pub(super) fn fold_reshape_of_reshape(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((middle, result)) = reshape_parts(op) else {
        return false;
    };
    let Some((inner, source)) = reshaped(middle) else {
        return false;
    };
    if plain_shape(result).is_none() {
        return false;
    }
    let Some(reshaped) = insert_reshape(rewriter, op, source, result.r#type()) else {
        return false;
    };
    super::replace_and_clean(rewriter, op, reshaped, Some(inner));
    true
}

/// `reshape(arith.constant dense<...>)` => `arith.constant dense<...>` of the result's shape
/// (the same elements in row-major order): a host constant stays one, so the strategies that
/// stream or keep constants resident still see it.
pub(super) fn fold_reshape_of_constant(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Some((input, result)) = reshape_parts(op) else {
        return false;
    };
    let Some(constant) = producer(input).filter(|p| op_name(p) == "arith.constant") else {
        return false;
    };
    if plain_shape(result).is_none() || plain_shape(input).is_none() {
        return false;
    }
    let Ok(value) = constant.attribute("value") else {
        return false;
    };
    // SAFETY: the attribute and the result type are live; a dense elements attribute
    // reshapes to any static shape of its element count and type.
    let reshaped = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(value.to_raw()) {
            return false;
        }
        melior::ir::Attribute::from_raw(mlir_sys::mlirDenseElementsAttrReshapeGet(
            value.to_raw(),
            result.r#type().to_raw(),
        ))
    };
    let context = rewriter.context();
    let Ok(new) = OperationBuilder::new("arith.constant", op.location())
        .add_attributes(&[(melior::ir::Identifier::new(context, "value"), reshaped)])
        .add_results(&[result.r#type()])
        .build()
    else {
        return false;
    };
    let new = rewriter.insert_before(op, new);
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    super::replace_and_clean(rewriter, op, new_result.into(), Some(constant));
    true
}

/// How many trailing axes `a` and `b` share (same sizes, counted from the last).
fn common_trailing_axes(a: &[i64], b: &[i64]) -> usize {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .take_while(|(x, y)| x == y)
        .count()
}

/// Whether `map`'s body reads the loop indices (then the shape it runs on matters).
fn map_reads_indices(map: OperationRef) -> bool {
    let (Some(body), Some(function_block)) = (
        MapOp::try_from(map).ok().and_then(|m| m.body()),
        enclosing_module_block(map),
    ) else {
        return true;
    };
    let mut next = function_block.first_operation();
    while let Some(candidate) = next {
        next = candidate.next_in_block();
        if op_name(&candidate) != "func.func" {
            continue;
        }
        let named = candidate
            .attribute("sym_name")
            .ok()
            .and_then(|a| melior::ir::attribute::StringAttribute::try_from(a).ok())
            .is_some_and(|name| name.value() == body);
        if !named {
            continue;
        }
        let Some(entry) = candidate
            .region(0)
            .ok()
            .and_then(|region| region.first_block())
        else {
            return true;
        };
        return entry.argument_count() != map.operand_count();
    }
    true
}

/// The body block of the module enclosing `op`.
fn enclosing_module_block<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Option<melior::ir::BlockRef<'c, 'a>> {
    let mut current = op.parent_operation()?;
    while op_name(&current) != "builtin.module" {
        current = current.parent_operation()?;
    }
    current.region(0).ok()?.first_block()
}

/// `f(reshape(x), b...)` => `reshape(f(x, b...))` for an elementwise or row-wise `f`: every
/// operand of the result's shape is a reshape from one shape `S`, and every other operand
/// broadcasts over trailing axes the reshape keeps (a bias, a layer norm's gain). Row-wise ops
/// (softmax, layer norm) need the last axis kept; a map whose body reads the loop indices stays.
pub(super) fn sink_reshape(op: OperationRef, rewriter: &Rewriter) -> bool {
    let name = op_name(&op);
    let row_wise = name == SoftmaxOp::NAME || name == LayerNormOp::NAME;
    if op.result_count() != 1 || (name == MapOp::NAME && map_reads_indices(op)) {
        return false;
    }
    let Ok(result) = op.result(0) else {
        return false;
    };
    let result: Value = result.into();
    let Some(shape) = plain_shape(result) else {
        return false;
    };
    // The shape the full-size operands are reshaped from, and those reshapes.
    let mut source_shape: Option<Vec<i64>> = None;
    let mut operands = Vec::new();
    let mut reshapes = Vec::new();
    for operand in op.operands() {
        let Some(operand_shape) = plain_shape(operand) else {
            return false;
        };
        if operand_shape != shape {
            operands.push((operand, false));
            continue;
        }
        let Some((reshape, input)) = reshaped(operand) else {
            return false;
        };
        let input_shape = plain_shape(input).unwrap_or_default();
        if source_shape.get_or_insert_with(|| input_shape.clone()) != &input_shape {
            return false;
        }
        operands.push((input, true));
        reshapes.push(reshape);
    }
    let Some(source_shape) = source_shape else {
        return false;
    };
    let kept = common_trailing_axes(&source_shape, &shape);
    if row_wise && kept == 0 {
        return false;
    }
    let broadcasts_fit = operands
        .iter()
        .all(|(operand, full)| *full || plain_shape(*operand).is_some_and(|s| s.len() <= kept));
    if !broadcasts_fit {
        return false;
    }
    let Some(new_type) = with_shape(result, &source_shape) else {
        return false;
    };
    let inputs: Vec<Value> = operands.iter().map(|(v, _)| *v).collect();
    let mut builder = OperationBuilder::new(name.as_str(), op.location())
        .add_operands(&inputs)
        .add_results(&[new_type]);
    let attributes: Vec<_> = op.attributes().collect();
    builder = builder.add_attributes(&attributes);
    let Ok(new) = builder.build() else {
        return false;
    };
    let new = rewriter.insert_before(op, new);
    if !replace_reshaped(rewriter, op, new, result.r#type()) {
        return false;
    }
    for reshape in reshapes {
        rewriter.erase_dead_tree(reshape);
    }
    true
}

/// The new matmul `op` becomes, with operands `lhs`, `rhs` and result type `result` (its
/// transpose flags and every other attribute kept), inserted before `op`.
fn rebuilt_matmul<'c, 'r>(
    rewriter: &'r Rewriter<'c>,
    op: OperationRef<'c, 'r>,
    (lhs, rhs): (Value<'c, 'r>, Value<'c, 'r>),
    result: Type<'c>,
) -> Option<Value<'c, 'r>> {
    use melior::ir::operation::OperationMutLike;
    let matmul = MatmulOp::try_from(op).ok()?;
    let mut new = MatmulOp::build(
        rewriter.context(),
        op.location(),
        lhs,
        rhs,
        result,
        matmul.transpose_lhs(),
        matmul.transpose_rhs(),
    );
    for (name, attribute) in op.attributes() {
        let name = name.as_string_ref().as_str().unwrap_or("").to_string();
        if name != "transpose_lhs" && name != "transpose_rhs" {
            new.set_attribute(&name, attribute);
        }
    }
    let new = rewriter.insert_before(op, new);
    new.result(0).ok().map(Into::into)
}

/// `matmul(a, b : [1.., K, N])` => `matmul(a, reshape(b) : [K, N])` when `a` has at least
/// `b`'s rank: unit batch axes of the right operand broadcast to nothing (PyTorch's batch-1
/// weights), and a 2-D right operand is the one the GEMM strategies stream and keep resident.
pub(super) fn squeeze_unit_batch_rhs(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Ok(matmul) = MatmulOp::try_from(op) else {
        return false;
    };
    let (Some(lhs), Some(rhs), Ok(result)) = (matmul.lhs(), matmul.rhs(), op.result(0)) else {
        return false;
    };
    let (Some(a), Some(b)) = (plain_shape(lhs), plain_shape(rhs)) else {
        return false;
    };
    if b.len() <= 2 || a.len() < b.len() || b[..b.len() - 2].iter().any(|&d| d != 1) {
        return false;
    }
    let Some(two) = with_shape(rhs, &b[b.len() - 2..]) else {
        return false;
    };
    let Some(squeezed) = insert_reshape(rewriter, op, rhs, two) else {
        return false;
    };
    let Some(new) = rebuilt_matmul(rewriter, op, (lhs, squeezed), result.r#type()) else {
        return false;
    };
    rewriter.replace(op, &[new]);
    true
}

/// `matmul(reshape(x), b : [K, N])` => `reshape(matmul(x, b))` when the reshape keeps the last
/// axis (`K`) and the left operand is not transposed: each row of `x` is a row of the reshaped
/// operand, so the product's rows are the same and only their grouping changes. Sunk below
/// the matmul, the reshape meets the next one (TFLite flattens `[1, S, D]` to `[S, D]` before
/// every dense layer and restores it after).
pub(super) fn sink_reshape_through_matmul(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Ok(matmul) = MatmulOp::try_from(op) else {
        return false;
    };
    let (Some(lhs), Some(rhs), Ok(result)) = (matmul.lhs(), matmul.rhs(), op.result(0)) else {
        return false;
    };
    let result: Value = result.into();
    if matmul.transpose_lhs() {
        return false;
    }
    let Some((reshape, x)) = reshaped(lhs) else {
        return false;
    };
    let (Some(xs), Some(a), Some(b), Some(r)) = (
        plain_shape(x),
        plain_shape(lhs),
        plain_shape(rhs),
        plain_shape(result),
    ) else {
        return false;
    };
    if b.len() != 2 || xs.len() < 2 || xs.last() != a.last() || a == xs {
        return false;
    }
    let mut shape = xs[..xs.len() - 1].to_vec();
    shape.push(r[r.len() - 1]);
    let Some(new_type) = with_shape(result, &shape) else {
        return false;
    };
    let Some(new) = rebuilt_matmul(rewriter, op, (x, rhs), new_type) else {
        return false;
    };
    let Some(back) = insert_reshape(rewriter, op, new, result.r#type()) else {
        return false;
    };
    rewriter.replace(op, &[back]);
    rewriter.erase_dead_tree(reshape);
    true
}

/// The ops [`sink_reshape`] applies to.
pub(super) const SINK_ROOTS: [&str; 5] = [
    ipu_dialects::ipu::AddOp::NAME,
    GeluOp::NAME,
    MapOp::NAME,
    SoftmaxOp::NAME,
    LayerNormOp::NAME,
];
