//! The op-level recognizers over the matcher: softmax, GeLU (exact and tanh), layer norm,
//! attention, head split and merge, broadcasting add.

use super::*;

/// The input of `softmax(x)` over the last axis whose root is `root`:
/// `exp(x - max(x)) / sum(exp(x - max(x)))` (the max over the last axis, optional), the
/// division also as a multiply by a reciprocal.
pub(super) fn softmax<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let input = softmax_input(&mut matcher)?;
    matcher.finish(Replacement::Softmax { input }, "softmax")
}

pub(super) fn softmax_input<'c, 'a>(matcher: &mut Matcher<'c, 'a>) -> Option<Value<'c, 'a>> {
    let output = matcher.output()?;
    let rank = shape(result(matcher.root)?)?.len();
    let last = Idx::Loop(rank.checked_sub(1)?);
    let (scale, factors) = matcher.product(&output);
    let (exponential, sum) = match factors.as_slice() {
        [(e, false), (s, true)] | [(s, true), (e, false)] => (e.clone(), s.clone()),
        [(a, false), (b, false)] => {
            let mut found = None;
            for (e, r) in [(a, b), (b, a)] {
                let mark = matcher.interior.len();
                if let (
                    Some(Def::Apply(Fun::Reciprocal, arguments)),
                    Some(Def::Apply(Fun::Exp, _)),
                ) = (matcher.def(r), matcher.def(e))
                {
                    if let [s] = arguments.as_slice() {
                        found = Some((e.clone(), s.clone()));
                        break;
                    }
                }
                matcher.interior.truncate(mark);
            }
            found?
        }
        _ => return None,
    };
    if scale != 1.0 {
        return None;
    }
    let Some(Def::Apply(Fun::Exp, arguments)) = matcher.def(&exponential) else {
        return None;
    };
    let [argument] = arguments.as_slice() else {
        return None;
    };
    let x = match matcher.def(argument) {
        Some(Def::Apply(Fun::Sub, operands)) => {
            let [x, max] = operands.as_slice() else {
                return None;
            };
            let Some(Def::Reduce {
                fun: Fun::Max,
                index,
                body,
            }) = matcher.def(max)
            else {
                return None;
            };
            if !matcher.equivalent(&body, &substitute(x, last, Idx::Red(index))) {
                return None;
            }
            x.clone()
        }
        _ => argument.clone(),
    };
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(&sum)
    else {
        return None;
    };
    if !matcher.equivalent(&body, &substitute(&exponential, last, Idx::Red(index))) {
        return None;
    }
    let input = whole_tensor(&x, rank)?;
    (input.r#type() == result(matcher.root)?.r#type()).then_some(input)
}

/// GeLU, exact (`0.5 x (1 + erf(x / sqrt 2))`) or tanh-approximated
/// (`0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`), in any association of the products.
pub(super) fn gelu<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let output = matcher.output()?;
    let rank = shape(result(root)?)?.len();
    let (scale, factors) = matcher.product(&output);
    if !close(scale, 0.5) {
        return None;
    }
    let [(first, false), (second, false)] = factors.as_slice() else {
        return None;
    };
    for (x, term) in [(first, second), (second, first)] {
        let Some(input) = whole_tensor(x, rank) else {
            continue;
        };
        if input.r#type() != result(root)?.r#type() {
            continue;
        }
        let mark = matcher.interior.len();
        if let Some(tanh) = gelu_term(&mut matcher, x, term) {
            return matcher.finish(Replacement::Gelu { input, tanh }, "gelu");
        }
        matcher.interior.truncate(mark);
    }
    None
}

/// `term = 1 + erf(x / sqrt 2)` (Some(false)) or `1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))`
/// (Some(true)).
pub(super) fn gelu_term<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: &Node<'c, 'a>,
    term: &Node<'c, 'a>,
) -> Option<bool> {
    let Some(Def::Apply(Fun::Add, operands)) = matcher.def(term) else {
        return None;
    };
    let inner = match operands.as_slice() {
        [Node::Const(one), inner] | [inner, Node::Const(one)] if close(*one, 1.0) => inner,
        _ => return None,
    };
    match matcher.def(inner)? {
        Def::Apply(Fun::Erf, arguments) => {
            let (scale, factors) = matcher.product(arguments.first()?);
            let [(factor, false)] = factors.as_slice() else {
                return None;
            };
            (close(scale, FRAC_1_SQRT_2) && matcher.equivalent(factor, x)).then_some(false)
        }
        Def::Apply(Fun::Tanh, arguments) => {
            cubic_argument(matcher, x, arguments.first()?).then_some(true)
        }
        _ => None,
    }
}

/// `argument = sqrt(2/pi) (x + 0.044715 x^3)`, with `x^3` as `x * x * x` or `pow(x, 3)`, and
/// the constant also distributed (`sqrt(2/pi) x + sqrt(2/pi) 0.044715 x^3`) is not accepted.
pub(super) fn cubic_argument<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: &Node<'c, 'a>,
    argument: &Node<'c, 'a>,
) -> bool {
    let (outer, factors) = matcher.product(argument);
    let [(sum, false)] = factors.as_slice() else {
        return false;
    };
    if !close(outer, SQRT_2_OVER_PI) {
        return false;
    }
    let Some(Def::Apply(Fun::Add, operands)) = matcher.def(sum) else {
        return false;
    };
    let [a, b] = operands.as_slice() else {
        return false;
    };
    for (linear, cubic) in [(a, b), (b, a)] {
        if !matcher.equivalent(linear, x) {
            continue;
        }
        let (coefficient, powers) = matcher.product(cubic);
        if !close(coefficient, GELU_CUBIC) {
            continue;
        }
        let cubed = match powers.as_slice() {
            [(p, false), (q, false), (r, false)] => {
                matcher.equivalent(p, x) && matcher.equivalent(q, x) && matcher.equivalent(r, x)
            }
            [(power, false)] => is_power(matcher, power, x, 3.0),
            _ => false,
        };
        if cubed {
            return true;
        }
    }
    false
}

/// `node = pow(base, exponent)`.
pub(super) fn is_power<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    node: &Node<'c, 'a>,
    base: &Node<'c, 'a>,
    exponent: f64,
) -> bool {
    match matcher.def(node) {
        Some(Def::Apply(Fun::Pow, arguments)) => match arguments.as_slice() {
            [actual, Node::Const(power)] => *power == exponent && matcher.equivalent(actual, base),
            _ => false,
        },
        _ => false,
    }
}

/// A constant vector along the last axis: a dense constant read at `[0, ..., 0, Loop(last)]`
/// (or at `[Loop(last)]`) holding `width` elements of `like`'s element type, as a `[width]`
/// constant.
pub(super) fn last_axis_vector<'c, 'a>(
    node: &Node<'c, 'a>,
    rank: usize,
    width: i64,
    like: Type<'c>,
) -> Option<super::super::ir::DenseConstant<'c>> {
    let Node::Tensor { value, map } = node else {
        return None;
    };
    let (last, rest) = map.split_last()?;
    if *last != Idx::Loop(rank - 1) || rest.iter().any(|index| *index != Idx::Zero) {
        return None;
    }
    let constant = DenseConstant::of(*value)?;
    let elements: i64 = shape_of(constant.r#type())?.iter().product();
    let element = RankedTensorType::try_from(like).ok()?.element();
    if elements != width
        || RankedTensorType::try_from(constant.r#type())
            .ok()?
            .element()
            != element
    {
        return None;
    }
    let context_ref = value.r#type().context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let vector_type = Type::parse(context, &format!("tensor<{width}x{element}>"))?;
    Some(constant.reshaped(vector_type))
}

pub(super) fn splat_vector<'c>(
    like: Type<'c>,
    width: i64,
    number: f64,
) -> Option<DenseConstant<'c>> {
    let context_ref = like.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let element = RankedTensorType::try_from(like).ok()?.element();
    let attribute = Attribute::parse(
        context,
        &format!("dense<{number:.17e}> : tensor<{width}x{element}>"),
    )?;
    Some(DenseConstant { attribute })
}

/// Layer norm over the last axis of `x` (size `n`):
/// `(x - sum(x) / n) * rsqrt(sum((x - mean)^2) / n + eps) * gamma + beta` (also with
/// `/ sqrt(... + eps)`), the affine part optional, the products in any order, the sums as
/// `linalg.reduce` or generic reductions over the last axis.
pub(super) fn layer_norm<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let mut matcher = Matcher::new(root);
    let output = matcher.output()?;
    let out_type = result(root)?.r#type();
    let out_shape = shape(result(root)?)?;
    let rank = out_shape.len();
    let width = *out_shape.last()?;
    // An optional `+ beta`.
    let mut candidates = Vec::new();
    if let Some(Def::Apply(Fun::Add, operands)) = matcher.def(&output) {
        if let [a, b] = operands.as_slice() {
            for (product, beta) in [(a, b), (b, a)] {
                let mark = matcher.interior.len();
                let resolved = matcher.resolve(beta.clone());
                let vector = match resolved {
                    Node::Const(number) => splat_vector(out_type, width, number),
                    _ => last_axis_vector(&resolved, rank, width, out_type),
                };
                if let Some(beta) = vector {
                    candidates.push((product.clone(), Some(beta), matcher.interior.clone()));
                }
                matcher.interior.truncate(mark);
            }
        }
    }
    candidates.push((output, None, Vec::new()));
    for (product, beta, interior) in candidates {
        let mut attempt = Matcher {
            root,
            interior,
            next_reduction: matcher.next_reduction,
        };
        if let Some((input, gamma, epsilon)) =
            normalization(&mut attempt, &product, rank, width, out_type)
        {
            let beta = match beta {
                Some(beta) => beta,
                None => splat_vector(out_type, width, 0.0)?,
            };
            return attempt.finish(
                Replacement::LayerNorm {
                    input,
                    gamma,
                    beta,
                    epsilon,
                },
                "layer_norm",
            );
        }
    }
    None
}

/// `product = (x - mean) * rsqrt(var + eps) [* gamma]`: x, gamma (ones without one), epsilon.
pub(super) fn normalization<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    product: &Node<'c, 'a>,
    rank: usize,
    width: i64,
    out_type: Type<'c>,
) -> Option<(Value<'c, 'a>, super::super::ir::DenseConstant<'c>, f64)> {
    let last = Idx::Loop(rank - 1);
    let (scale, factors) = matcher.product(product);
    let mut centered = None;
    let mut deviation = None;
    let mut gamma = None;
    for (factor, inverted) in factors {
        if !inverted && gamma.is_none() {
            if let Some(vector) = last_axis_vector(&factor, rank, width, out_type) {
                gamma = Some(vector);
                continue;
            }
        }
        let mark = matcher.interior.len();
        match matcher.def(&factor) {
            Some(Def::Apply(Fun::Sub, operands)) if !inverted && centered.is_none() => {
                centered = Some((factor, operands));
            }
            Some(Def::Apply(Fun::Rsqrt, operands)) if !inverted && deviation.is_none() => {
                deviation = Some(operands.into_iter().next()?);
            }
            Some(Def::Apply(Fun::Sqrt, operands)) if inverted && deviation.is_none() => {
                deviation = Some(operands.into_iter().next()?);
            }
            _ => {
                matcher.interior.truncate(mark);
                return None;
            }
        }
    }
    let (centered, operands) = centered?;
    let [x, mean] = operands.as_slice() else {
        return None;
    };
    let input = whole_tensor(x, rank)?;
    if input.r#type() != out_type {
        return None;
    }
    // mean = sum(x over the last axis) / n
    let (mean_scale, mean_factors) = matcher.product(mean);
    let [(sum, false)] = mean_factors.as_slice() else {
        return None;
    };
    if !close(mean_scale, 1.0 / width as f64) {
        return None;
    }
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(sum)
    else {
        return None;
    };
    if !matcher.equivalent(&body, &substitute(x, last, Idx::Red(index))) {
        return None;
    }
    // deviation = sum((x - mean)^2 over the last axis) / n + eps
    let Some(Def::Apply(Fun::Add, shifted)) = matcher.def(&deviation?) else {
        return None;
    };
    let (variance, epsilon) = match shifted.as_slice() {
        [Node::Const(epsilon), variance] | [variance, Node::Const(epsilon)] => {
            (variance.clone(), *epsilon)
        }
        _ => return None,
    };
    let (variance_scale, variance_factors) = matcher.product(&variance);
    let [(squares, false)] = variance_factors.as_slice() else {
        return None;
    };
    if !close(variance_scale, 1.0 / width as f64) {
        return None;
    }
    let Some(Def::Reduce {
        fun: Fun::Add,
        index,
        body,
    }) = matcher.def(squares)
    else {
        return None;
    };
    let centered_at = substitute(&centered, last, Idx::Red(index));
    let (square_scale, square_factors) = matcher.product(&body);
    let squared = match square_factors.as_slice() {
        [(a, false), (b, false)] => {
            matcher.equivalent(a, &centered_at) && matcher.equivalent(b, &centered_at)
        }
        [(power, false)] => is_power(matcher, power, &centered_at, 2.0),
        _ => false,
    };
    if !squared || square_scale != 1.0 {
        return None;
    }
    let gamma = match gamma {
        Some(gamma) if scale == 1.0 => gamma,
        Some(_) => return None,
        None => splat_vector(out_type, width, scale)?,
    };
    Some((input, gamma, epsilon))
}

/// A matmul / batch_matmul with the plain indexing maps into a zero fill: its two inputs.
pub(super) fn plain_matmul<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    if !matches!(
        op_name(&op).as_str(),
        "linalg.matmul" | "linalg.batch_matmul"
    ) {
        return None;
    }
    if let Ok(maps) = op.attribute("indexing_maps") {
        let context_ref = op.context();
        // SAFETY: the context outlives the pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let batched = op_name(&op) == "linalg.batch_matmul";
        if Attribute::parse(context, super::super::linalg::default_maps(batched)) != Some(maps) {
            return None;
        }
    }
    let init = op.operand(2).ok()?;
    if !identity_init(init, Fun::Add) {
        return None;
    }
    Some((op.operand(0).ok()?, op.operand(1).ok()?))
}

/// Scaled dot-product attention over heads:
/// `batch_matmul(softmax(batch_matmul(q, transpose(k, [0, 2, 1])) * c), v)` with a constant
/// `c` (or a division by one; none: scale 1) becomes `ipu.attention(q, k, v) {scale = c}`.
/// The root is the last batch_matmul.
pub(super) fn attention<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (probs, value) = plain_matmul(root)?;
    if op_name(&root) != "linalg.batch_matmul" {
        return None;
    }
    let softmax_root = super::super::ir::producer(probs)?;
    let mut inner = Matcher::new(softmax_root);
    let logits = if op_name(&softmax_root) == "linalg.softmax" {
        let rank = shape(probs)?.len() as i64;
        (ipu_dialects::ipu::int_attribute(&softmax_root, "dimension")? == rank - 1)
            .then(|| softmax_root.operand(0).ok())??
    } else {
        softmax_input(&mut inner)?
    };
    let mut matcher = Matcher::new(root);
    matcher.take(softmax_root);
    matcher.interior.extend(inner.interior);
    let rank = shape(logits)?.len();
    let (scale, factors) = matcher.product(&Node::Tensor {
        value: logits,
        map: identity(rank),
    });
    let [(scores, false)] = factors.as_slice() else {
        return None;
    };
    let scores = whole_tensor(scores, rank)?;
    let scores_op = super::super::ir::producer(scores)?;
    let (query, transposed_key) = plain_matmul(scores_op)?;
    matcher.take(scores_op);
    let transpose = produced_by(transposed_key, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1] {
        return None;
    }
    matcher.take(transpose);
    let key = transpose.operand(0).ok()?;
    for operand in [query, key, value] {
        if shape(operand)?.len() != 3 {
            return None;
        }
    }
    matcher.finish(
        Replacement::Attention {
            query,
            key,
            value,
            scale,
        },
        "attention",
    )
}

/// The head split of a projection at batch 1:
/// `collapse_shape(transpose(expand_shape(batch_matmul(x, W), [1, S, H, Dh]), [0, 2, 1, 3]),
/// [H, S, Dh])` with `x: [1, S, D]` and a constant f32 `W: [1, D, H * Dh]` becomes
/// `ipu.matmul(x, W')`, `W'[h, d, j] = W[0, d, h * Dh + j]` (`[H, D, Dh]`; the batch axis of
/// `x` broadcasts against the heads). The root is the collapse_shape.
pub(super) fn head_split<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let output = result(root)?;
    let out_shape = shape(output)?;
    let [heads, s, dh] = out_shape.as_slice() else {
        return None;
    };
    let mut matcher = Matcher::new(root);
    let transpose = produced_by(root.operand(0).ok()?, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1, 3]
        || shape(result(transpose)?)? != [1, *heads, *s, *dh]
    {
        return None;
    }
    matcher.take(transpose);
    let split = produced_by(transpose.operand(0).ok()?, "tensor.expand_shape")?;
    if shape(result(split)?)? != [1, *s, *heads, *dh] {
        return None;
    }
    matcher.take(split);
    let projection_op = super::super::ir::producer(split.operand(0).ok()?)?;
    let (x, weight) = plain_matmul(projection_op)?;
    matcher.take(projection_op);
    let d = *shape(x)?.last()?;
    if shape(x)? != [1, *s, d] || shape(weight)? != [1, d, heads * dh] {
        return None;
    }
    let weight = split_heads_weight(root, weight, *heads, d, *dh)?;
    matcher.finish(Replacement::MatmulConstant { lhs: x, weight }, "head_split")
}

/// The head merge into the output projection at batch 1:
/// `batch_matmul(collapse_shape(transpose(expand_shape(a, [1, H, S, Dh]), [0, 2, 1, 3]),
/// [1, S, H * Dh]), W)` with `a: [H, S, Dh]` and a constant `W: [1, H * Dh, E]`: the sum over
/// heads of `a[h] @ W[h * Dh .. (h + 1) * Dh]` (see [`Replacement::HeadMerge`]).
pub(super) fn head_merge<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (merged, weight) = plain_matmul(root)?;
    let mut matcher = Matcher::new(root);
    let merge = produced_by(merged, "tensor.collapse_shape")?;
    matcher.take(merge);
    let transpose = produced_by(merge.operand(0).ok()?, "linalg.transpose")?;
    if i64_array(transpose.attribute("permutation").ok()?)? != [0, 2, 1, 3] {
        return None;
    }
    matcher.take(transpose);
    let unmerge = produced_by(transpose.operand(0).ok()?, "tensor.expand_shape")?;
    matcher.take(unmerge);
    let input = unmerge.operand(0).ok()?;
    let weight = merge_heads_weight(root, (input, result(unmerge)?, merged), weight)?;
    matcher.finish(Replacement::HeadMerge { input, weight }, "head_merge")
}
