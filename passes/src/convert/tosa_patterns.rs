//! Recognition of the TOSA decompositions of softmax, GeLU and layer norm. Each matcher starts
//! at the op that produces the pattern's value (its root), walks up through the operands, and
//! records every op it looks through as interior; a match counts only if no interior value is
//! used outside the pattern (then the whole pattern can be erased).
//!
//! Products are read as factor lists (`a * (b * c)` and `(a * b) * c` alike), so the matchers
//! accept any association and operand order of the multiplications frontends emit.

use ipu_dialects::ipu::op_name;
use melior::{
    ir::{
        attribute::AttributeLike, operation::OperationLike, r#type::RankedTensorType,
        r#type::ShapedTypeLike, Attribute, OperationRef, Type, Value, ValueLike,
    },
    Context,
};

use super::ir::{
    close, key, merge_heads_weight, produced_by, shape_of, splat_of, split_heads_weight, users,
    DenseConstant,
};
use super::{Replacement, Rewrite};

const FRAC_1_SQRT_2: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// sqrt(2/pi), the tanh GeLU approximation's scale.
const SQRT_2_OVER_PI: f64 = 0.797_884_560_802_865_4;
const GELU_CUBIC: f64 = 0.044_715;

/// The pattern whose root is `op`, if any.
pub(super) fn recognize<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    match op_name(&op).as_str() {
        "tosa.mul" => softmax(op).or_else(|| gelu(op)).or_else(|| layer_norm(op)),
        "tosa.add" => layer_norm(op),
        "tosa.matmul" => attention(op).or_else(|| head_merge(op)),
        "tosa.reshape" => head_split(op),
        _ => None,
    }
}

/// A match in progress: the root and the interior ops looked through so far.
struct Matcher<'c, 'a> {
    root: OperationRef<'c, 'a>,
    interior: Vec<OperationRef<'c, 'a>>,
}

impl<'c, 'a> Matcher<'c, 'a> {
    fn new(root: OperationRef<'c, 'a>) -> Self {
        Matcher {
            root,
            interior: Vec::new(),
        }
    }

    /// The op named `name` producing `value`, recorded as interior.
    fn take(&mut self, value: Value<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
        let op = produced_by(value, name)?;
        if name == "tosa.mul" && !zero_shift(op) {
            return None;
        }
        if !self.interior.iter().any(|seen| seen == &op) && op != self.root {
            self.interior.push(op);
        }
        Some(op)
    }

    /// Operand `index` of `op`.
    fn operand(op: OperationRef<'c, 'a>, index: usize) -> Option<Value<'c, 'a>> {
        op.operand(index).ok()
    }

    /// `value` as a product: the product of its splat-constant factors and its other factors.
    /// Looks through `value`'s own multiply, and through nested multiplies used only once.
    fn product(&mut self, value: Value<'c, 'a>) -> (f64, Vec<Value<'c, 'a>>) {
        let mut constant = 1.0;
        let mut others = Vec::new();
        let mut pending = vec![value];
        let mut first = true;
        while let Some(factor) = pending.pop() {
            let flatten = first || users(factor).len() == 1;
            first = false;
            if flatten && produced_by(factor, "tosa.mul").is_some_and(zero_shift) {
                if let Some(mul) = self.take(factor, "tosa.mul") {
                    pending.extend(
                        [Self::operand(mul, 1), Self::operand(mul, 0)]
                            .into_iter()
                            .flatten(),
                    );
                    continue;
                }
            }
            match splat_of(factor).filter(|_| DenseConstant::of(factor).is_some()) {
                Some(number) if is_scalar_like(factor) => constant *= number,
                _ => others.push(factor),
            }
        }
        (constant, others)
    }

    /// `reduce_<kind>(input)` over the last axis producing `value`: its input.
    fn reduce_last(&mut self, value: Value<'c, 'a>, kind: &str) -> Option<Value<'c, 'a>> {
        let reduce = self.take(value, &format!("tosa.reduce_{kind}"))?;
        let input = Self::operand(reduce, 0)?;
        let rank = shape_of(input.r#type())?.len() as i64;
        let axis = ipu_dialects::ipu::int_attribute(&reduce, "axis")?;
        (axis == rank - 1).then_some(input)
    }

    /// Finishes the match if no interior value escapes the pattern.
    fn finish(
        self,
        replacement: Replacement<'c, 'a>,
        kind: &'static str,
    ) -> Option<Rewrite<'c, 'a>> {
        Rewrite::contained(self.root, self.interior, replacement, kind)
    }
}

fn zero_shift(mul: OperationRef) -> bool {
    mul.operand(2).ok().and_then(splat_of) == Some(0.0)
}

/// A splat constant that broadcasts as a scalar (every dimension 1, or a splat of any shape).
fn is_scalar_like(value: Value) -> bool {
    DenseConstant::of(value)
        .and_then(|constant| constant.splat())
        .is_some()
}

fn same(a: Value, b: Value) -> bool {
    key(a) == key(b)
}

fn result<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<Value<'c, 'a>> {
    op.result(0).ok().map(Value::from)
}

/// Both orders of a binary op's operands.
fn orders<'c, 'a>(op: OperationRef<'c, 'a>) -> Vec<(Value<'c, 'a>, Value<'c, 'a>)> {
    match (op.operand(0), op.operand(1)) {
        (Ok(a), Ok(b)) => vec![(a, b), (b, a)],
        _ => Vec::new(),
    }
}

/// `softmax(x) = exp(x - reduce_max(x)) * reciprocal(reduce_sum(exp(x - reduce_max(x))))`,
/// also without the max subtraction (the same function, less stable).
fn softmax<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    if !zero_shift(root) {
        return None;
    }
    let output = result(root)?;
    orders(root)
        .into_iter()
        .find_map(|(exponential, reciprocal)| {
            let mut matcher = Matcher::new(root);
            let exp = matcher.take(exponential, "tosa.exp")?;
            let recip = matcher.take(reciprocal, "tosa.reciprocal")?;
            let summed = matcher.reduce_last(Matcher::operand(recip, 0)?, "sum")?;
            if !same(summed, exponential) {
                return None;
            }
            let argument = Matcher::operand(exp, 0)?;
            let input = match matcher.take(argument, "tosa.sub") {
                Some(sub) => {
                    let (x, max) = (Matcher::operand(sub, 0)?, Matcher::operand(sub, 1)?);
                    if !same(matcher.reduce_last(max, "max")?, x) {
                        return None;
                    }
                    x
                }
                None => argument,
            };
            (input.r#type() == output.r#type()).then_some(())?;
            matcher.finish(Replacement::Softmax { input }, "softmax")
        })
}

/// GeLU, exact (`0.5 x (1 + erf(x / sqrt 2))`) or tanh-approximated
/// (`0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, equivalently
/// `x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))` since `(1 + tanh z) / 2 = sigmoid(2z)`).
fn gelu<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let output = result(root)?;
    let mut matcher = Matcher::new(root);
    let (scale, factors) = matcher.product(output);
    if factors.len() != 2 {
        return None;
    }
    for (x, term) in [(factors[0], factors[1]), (factors[1], factors[0])] {
        if x.r#type() != output.r#type() {
            continue;
        }
        let mut attempt = Matcher {
            root,
            interior: matcher.interior.clone(),
        };
        let tanh = if close(scale, 0.5) {
            gelu_half_form(&mut attempt, x, term)
        } else if close(scale, 1.0) {
            gelu_sigmoid_form(&mut attempt, x, term).then_some(true)
        } else {
            None
        };
        if let Some(tanh) = tanh {
            return attempt.finish(Replacement::Gelu { input: x, tanh }, "gelu");
        }
    }
    None
}

/// `term = 1 + erf(x / sqrt 2)` (Some(false)) or `1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))`
/// (Some(true)).
fn gelu_half_form<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: Value<'c, 'a>,
    term: Value<'c, 'a>,
) -> Option<bool> {
    let add = matcher.take(term, "tosa.add")?;
    let inner = orders(add)
        .into_iter()
        .find(|(one, _)| splat_of(*one).is_some_and(|value| close(value, 1.0)))?
        .1;
    if let Some(erf) = matcher.take(inner, "tosa.erf") {
        let (scale, factors) = matcher.product(Matcher::operand(erf, 0)?);
        return (close(scale, FRAC_1_SQRT_2) && factors.len() == 1 && same(factors[0], x))
            .then_some(false);
    }
    let tanh = matcher.take(inner, "tosa.tanh")?;
    cubic_argument(matcher, x, Matcher::operand(tanh, 0)?, SQRT_2_OVER_PI).then_some(true)
}

/// `term = sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))`.
fn gelu_sigmoid_form<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: Value<'c, 'a>,
    term: Value<'c, 'a>,
) -> bool {
    let Some(sigmoid) = matcher.take(term, "tosa.sigmoid") else {
        return false;
    };
    let Some(argument) = Matcher::operand(sigmoid, 0) else {
        return false;
    };
    cubic_argument(matcher, x, argument, 2.0 * SQRT_2_OVER_PI)
}

/// `argument = scale * (x + 0.044715 x^3)`, with `x^3` as `x * x * x` or `pow(x, 3)`.
fn cubic_argument<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    x: Value<'c, 'a>,
    argument: Value<'c, 'a>,
    scale: f64,
) -> bool {
    let (outer, factors) = matcher.product(argument);
    if !close(outer, scale) || factors.len() != 1 {
        return false;
    }
    let Some(sum) = matcher.take(factors[0], "tosa.add") else {
        return false;
    };
    orders(sum).into_iter().any(|(linear, cubic)| {
        if !same(linear, x) {
            return false;
        }
        let (coefficient, powers) = matcher.product(cubic);
        if !close(coefficient, GELU_CUBIC) {
            return false;
        }
        match powers.as_slice() {
            [a, b, c] => same(*a, x) && same(*b, x) && same(*c, x),
            [power] => is_power(matcher, *power, x, 3.0),
            _ => false,
        }
    })
}

/// `value = pow(base, exponent)` with a splat exponent.
fn is_power<'c, 'a>(
    matcher: &mut Matcher<'c, 'a>,
    value: Value<'c, 'a>,
    base: Value<'c, 'a>,
    exponent: f64,
) -> bool {
    let Some(pow) = matcher.take(value, "tosa.pow") else {
        return false;
    };
    let (Some(actual_base), Some(actual_exponent)) =
        (Matcher::operand(pow, 0), Matcher::operand(pow, 1))
    else {
        return false;
    };
    same(actual_base, base) && splat_of(actual_exponent) == Some(exponent)
}

/// Layer norm over the last axis of `x` (size `n`):
/// `d = x - reduce_sum(x) / n; (d * rsqrt(reduce_sum(d * d) / n + eps)) * gamma + beta`, with
/// the affine part optional and the products in any order.
fn layer_norm<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let output = result(root)?;
    let candidates: Vec<(Value<'c, 'a>, Option<DenseConstant<'c>>)> =
        if op_name(&root) == "tosa.add" {
            orders(root)
                .into_iter()
                .filter_map(|(product, beta)| Some((product, Some(DenseConstant::of(beta)?))))
                .collect()
        } else {
            vec![(output, None)]
        };
    candidates.into_iter().find_map(|(product, beta)| {
        let mut matcher = Matcher::new(root);
        if op_name(&root) == "tosa.add" {
            matcher.take(product, "tosa.mul")?;
        }
        let (scale, factors) = matcher.product(product);
        let mut centered = None;
        let mut inverse_deviation = None;
        let mut gamma = None;
        for factor in factors {
            if let Some(sub) = produced_by(factor, "tosa.sub").filter(|_| centered.is_none()) {
                centered = Some((factor, sub));
            } else if produced_by(factor, "tosa.rsqrt").is_some() && inverse_deviation.is_none() {
                inverse_deviation = Some(factor);
            } else if let (Some(constant), None) = (DenseConstant::of(factor), gamma) {
                gamma = Some(constant);
            } else {
                return None;
            }
        }
        let (centered, sub) = centered?;
        matcher.take(centered, "tosa.sub")?;
        let x = Matcher::operand(sub, 0)?;
        let shape = shape_of(x.r#type())?;
        let width = *shape.last()?;
        if x.r#type() != output.r#type() {
            return None;
        }
        // mean = reduce_sum(x) * (1/n)
        let (mean_scale, mean_factors) = matcher.product(Matcher::operand(sub, 1)?);
        if !close(mean_scale, 1.0 / width as f64) || mean_factors.len() != 1 {
            return None;
        }
        if !same(matcher.reduce_last(mean_factors[0], "sum")?, x) {
            return None;
        }
        // rsqrt(reduce_sum(d * d) * (1/n) + eps)
        let rsqrt = matcher.take(inverse_deviation?, "tosa.rsqrt")?;
        let shifted = matcher.take(Matcher::operand(rsqrt, 0)?, "tosa.add")?;
        let (variance, epsilon) = orders(shifted)
            .into_iter()
            .find_map(|(variance, epsilon)| Some((variance, splat_of(epsilon)?)))?;
        let (variance_scale, variance_factors) = matcher.product(variance);
        if !close(variance_scale, 1.0 / width as f64) || variance_factors.len() != 1 {
            return None;
        }
        let squares = matcher.reduce_last(variance_factors[0], "sum")?;
        let (square_scale, square_factors) = matcher.product(squares);
        let squared = match square_factors.as_slice() {
            [a, b] => same(*a, centered) && same(*b, centered),
            [power] => is_power(&mut matcher, *power, centered, 2.0),
            _ => false,
        };
        if !squared || square_scale != 1.0 {
            return None;
        }
        let context_ref = root.context();
        // SAFETY: the context outlives the pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let gamma = vector(context, gamma, scale, width, x.r#type())?;
        // A given beta is used as is (factor 1); an absent one is zeros.
        let beta = vector(
            context,
            beta,
            if beta.is_some() { 1.0 } else { 0.0 },
            width,
            x.r#type(),
        )?;
        matcher.finish(
            Replacement::LayerNorm {
                input: x,
                gamma,
                beta,
                epsilon,
            },
            "layer_norm",
        )
    })
}

/// A 1-D constant of `width` elements of `like`'s element type: `constant` reshaped (it must
/// hold `width` elements; a leftover scalar factor other than 1 cannot be folded into it), or a
/// splat of `scalar`.
fn vector<'c>(
    context: &'c Context,
    constant: Option<DenseConstant<'c>>,
    scalar: f64,
    width: i64,
    like: Type<'c>,
) -> Option<DenseConstant<'c>> {
    let element = RankedTensorType::try_from(like).ok()?.element();
    let vector_type = Type::parse(context, &format!("tensor<{width}x{element}>"))?;
    match constant {
        Some(constant) => {
            let shape = shape_of(constant.r#type())?;
            let elements: i64 = shape.iter().product();
            (elements == width
                && scalar == 1.0
                && RankedTensorType::try_from(constant.r#type())
                    .ok()?
                    .element()
                    == element)
                .then(|| constant.reshaped(vector_type))
        }
        None => {
            let attribute =
                Attribute::parse(context, &format!("dense<{scalar:.17e}> : {vector_type}"))?;
            Some(DenseConstant { attribute })
        }
    }
}

/// A `tosa.matmul` with constant-zero zero points: its operands A and B.
fn plain_matmul<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<(Value<'c, 'a>, Value<'c, 'a>)> {
    if op_name(&op) != "tosa.matmul" {
        return None;
    }
    for index in [2, 3] {
        if splat_of(op.operand(index).ok()?) != Some(0.0) {
            return None;
        }
    }
    Some((op.operand(0).ok()?, op.operand(1).ok()?))
}

/// The permutation of a `tosa.transpose`.
fn perms(op: OperationRef) -> Option<Vec<i64>> {
    let raw = op.attribute("perms").ok()?.to_raw();
    // SAFETY: elements are read only from a dense i32 array, within its element count.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseI32Array(raw) {
            return None;
        }
        Some(
            (0..mlir_sys::mlirDenseArrayGetNumElements(raw))
                .map(|index| i64::from(mlir_sys::mlirDenseI32ArrayGetElement(raw, index)))
                .collect(),
        )
    }
}

/// Scaled dot-product attention over heads as frontends write it:
/// `matmul(softmax(matmul(q, transpose(k, [0, 2, 1])) * scale), v)` with a splat `scale`
/// (or none: scale 1), becomes `ipu.attention(q, k, v) {scale}`. The root is the last matmul.
fn attention<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (probs, value) = plain_matmul(root)?;
    let softmax_root = produced_by(probs, "tosa.mul")?;
    let softmax = softmax(softmax_root)?;
    let Replacement::Softmax { input: logits } = softmax.replacement else {
        return None;
    };
    let mut matcher = Matcher::new(root);
    matcher.interior.push(softmax_root);
    matcher.interior.extend(softmax.interior.iter().copied());
    let (scale, factors) = matcher.product(logits);
    let [scores] = factors.as_slice() else {
        return None;
    };
    let scores_op = matcher.take(*scores, "tosa.matmul")?;
    let (query, transposed_key) = plain_matmul(scores_op)?;
    let transpose = matcher.take(transposed_key, "tosa.transpose")?;
    if perms(transpose)? != [0, 2, 1] {
        return None;
    }
    let key = Matcher::operand(transpose, 0)?;
    for operand in [query, key, value] {
        if shape_of(operand.r#type())?.len() != 3 {
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

/// The static shape of `value`'s type.
fn shape(value: Value) -> Option<Vec<i64>> {
    shape_of(value.r#type())
}

/// The head split of a projection, as frontends write it:
/// `reshape(transpose(reshape(matmul(x, W), [1, S, H, Dh]), [0, 2, 1, 3]), [H, S, Dh])` with
/// `x: [1, S, D]` and a constant f32 `W: [1, D, H * Dh]`, becomes
/// `ipu.matmul(x, W')` with `W'[h, d, j] = W[0, d, h * Dh + j]` (`[H, D, Dh]`; the batch axis
/// of `x` broadcasts against the heads). The root is the last reshape.
fn head_split<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let output = result(root)?;
    let out_shape = shape(output)?;
    let [heads, s, dh] = out_shape.as_slice() else {
        return None;
    };
    let mut matcher = Matcher::new(root);
    let transpose = matcher.take(Matcher::operand(root, 0)?, "tosa.transpose")?;
    if perms(transpose)? != [0, 2, 1, 3] {
        return None;
    }
    let split = matcher.take(Matcher::operand(transpose, 0)?, "tosa.reshape")?;
    if shape(result(split)?)? != [1, *s, *heads, *dh] {
        return None;
    }
    let projection = Matcher::operand(split, 0)?;
    let projection_op = matcher.take(projection, "tosa.matmul")?;
    let (x, weight) = plain_matmul(projection_op)?;
    let d = *shape(x)?.last()?;
    if shape(x)? != [1, *s, d] || shape(weight)? != [1, d, heads * dh] {
        return None;
    }
    let weight = split_heads_weight(root, weight, *heads, d, *dh)?;
    matcher.finish(Replacement::MatmulConstant { lhs: x, weight }, "head_split")
}

/// The head merge into the output projection, as frontends write it:
/// `matmul(reshape(transpose(reshape(a, [1, H, S, Dh]), [0, 2, 1, 3]), [1, S, H * Dh]), W)`
/// with `a: [H, S, Dh]` and a constant `W: [1, H * Dh, E]`: the sum over heads of
/// `a[h] @ W[h * Dh .. (h + 1) * Dh]` (see [`Replacement::HeadMerge`]). The root is the matmul.
fn head_merge<'c, 'a>(root: OperationRef<'c, 'a>) -> Option<Rewrite<'c, 'a>> {
    let (merged, weight) = plain_matmul(root)?;
    let mut matcher = Matcher::new(root);
    let merge = matcher.take(merged, "tosa.reshape")?;
    let transpose = matcher.take(Matcher::operand(merge, 0)?, "tosa.transpose")?;
    if perms(transpose)? != [0, 2, 1, 3] {
        return None;
    }
    let unmerge = matcher.take(Matcher::operand(transpose, 0)?, "tosa.reshape")?;
    let input = Matcher::operand(unmerge, 0)?;
    let weight = merge_heads_weight(root, (input, result(unmerge)?, merged), weight)?;
    matcher.finish(Replacement::HeadMerge { input, weight }, "head_merge")
}
