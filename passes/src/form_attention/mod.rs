//! `ipu-form-attention`: first every row cone that computes a softmax or a layer norm over the
//! last axis (maps, broadcasts and last-axis reductions from one full-size input and constant
//! vectors, checked by evaluating the cone on rows of spread values) becomes `ipu.softmax` or
//! `ipu.layer_norm`; then
//! `matmul(softmax(scale * matmul(q, k^T)), v)` written as separate ipu
//! ops (what the importers make of a frontend's attention: IREE and TFLite write it as
//! batch matmuls, a scale by a broadcast scalar and a softmax) becomes one `ipu.attention(q, k,
//! v) {scale}`. Reshapes that only regroup the leading (batch) axes are looked through; `k^T`
//! is an `ipu.rearrange` swapping `k`'s last two axes or a `transpose_rhs` matmul; the scale is
//! a two-input `ipu.map` of the scores and a broadcast scalar (an input-free map or a splat
//! constant) whose body is checked, by evaluating it, to be linear in the scores, or linear
//! where the key index is at most the query index and a constant below -1e30 elsewhere (a
//! causal mask from iota compares: `ipu.attention {causal}`). Every intermediate must have
//! no other reader. Matches nothing else: a bias on the scores, another mask or a softmax over
//! another axis stay as they are.
//!
//! The row cones (softmax and layer norm) are in [`row_cones`], the chain of maps and adds
//! between the scores and the softmax (scales and masks) in [`scores`].

use ipu_dialects::graph::read::{entry_block, functions};
use ipu_dialects::graph::scalar::{self, ArgumentRole};
use ipu_dialects::ipu::{self as ops, op_name, AttentionOp, ReshapeOp};
use melior::ir::{
    block::BlockLike, operation::OperationLike, Location, OperationRef, Value, ValueLike,
};

use crate::ir::{producer, shape_of, splat_of, users};
use crate::pass::{Pass, PassFailure, PassRun};

mod row_cones;
mod scores;

pub use row_cones::form_softmax;
use scores::{scale_of, unscaled};

crate::pass_options! {
    /// Options of `ipu-form-attention` (none).
    pub struct FormAttentionOptions for "ipu-form-attention" {}
}

/// The `ipu-form-attention` pass.
#[derive(Clone)]
pub struct FormAttention {
    options: FormAttentionOptions,
}

impl Pass for FormAttention {
    type Options = FormAttentionOptions;
    const ARGUMENT: &'static str = "ipu-form-attention";
    const SUMMARY: &'static str =
        "Form ipu.softmax / ipu.layer_norm from row cones, then fuse attention into ipu.attention";

    fn new(options: FormAttentionOptions) -> Self {
        FormAttention { options }
    }

    fn options(&self) -> &FormAttentionOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let softmaxes = form_softmax(op);
        run.statistic(
            "softmax",
            "Number of ipu.softmax ops formed from row cones",
            softmaxes,
        );
        let formed = form_attention(op);
        run.statistic("attention", "Number of ipu.attention ops formed", formed);
        Ok(())
    }
}

/// A matched attention: the values it reads and its scale.
struct Matched<'c, 'a> {
    query: Value<'c, 'a>,
    key: Value<'c, 'a>,
    value: Value<'c, 'a>,
    scale: f64,
    causal: bool,
    /// The ops the attention replaces (erased once unused), the output matmul first.
    ops: Vec<OperationRef<'c, 'a>>,
}

/// `value` through `ipu.reshape`s that keep its last two axes (regrouping batch axes), and
/// the reshapes passed.
fn through_reshapes<'c, 'a>(
    mut value: Value<'c, 'a>,
    passed: &mut Vec<OperationRef<'c, 'a>>,
) -> Value<'c, 'a> {
    while let Some(reshape) = producer(value).filter(|p| op_name(p) == ReshapeOp::NAME) {
        let Ok(input) = reshape.operand(0) else {
            break;
        };
        let (own, to) = (shape_of(input.r#type()), shape_of(value.r#type()));
        match (own, to) {
            (Some(own), Some(to))
                if own.len() >= 2
                    && to.len() >= 2
                    && own[own.len() - 2..] == to[to.len() - 2..] =>
            {
                passed.push(reshape);
                value = input;
            }
            _ => break,
        }
    }
    value
}

/// Whether `value` has exactly one reader.
fn single_use(value: Value) -> bool {
    users(value).len() == 1
}

/// The scalar an `ipu.broadcast` spreads: of a splat constant, or of an input-free map.
fn broadcast_scalar(
    value: Value,
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<f64> {
    let broadcast = producer(value).filter(|p| op_name(p) == ops::BroadcastOp::NAME)?;
    let source: Value = broadcast.operand(0).ok()?;
    if let Some(number) = splat_of(source) {
        return Some(number);
    }
    // One value: an input-free map of one element whose body reads no index.
    let elements: i64 = shape_of(source.r#type())?.iter().product();
    let map = producer(source).filter(|p| op_name(p) == ops::MapOp::NAME)?;
    if map.operand_count() != 0 || elements != 1 {
        return None;
    }
    let program = map_program(map, table, 0)?;
    if program.uses_indices() {
        return None;
    }
    Some(program.eval(&[], &[]))
}

/// The scalar program of `map` (its body read with `inputs` float inputs, then the element's
/// index per result axis when the body takes them).
pub(crate) fn map_program(
    map: OperationRef,
    table: &std::collections::BTreeMap<String, OperationRef>,
    inputs: usize,
) -> Option<scalar::ScalarProgram> {
    let name = ops::MapOp::try_from(map).ok()?.body()?;
    let block = entry_block(*table.get(&name)?)?;
    let rank = shape_of(map.result(0).ok()?.r#type())?.len();
    let arguments = block.argument_count();
    if arguments != inputs && arguments != inputs + rank {
        return None;
    }
    let roles = |i: usize| {
        if i < inputs {
            ArgumentRole::Input(i)
        } else {
            ArgumentRole::Index(i - inputs)
        }
    };
    let mut program = scalar::read_block(block, inputs, rank, &roles, 0).ok()?;
    if arguments == inputs + rank {
        program.indices = rank;
    }
    Some(program)
}

/// The attention `output` (an `ipu.matmul` result) computes, if it is one (see the module
/// docs).
fn match_attention<'c, 'a>(
    output: OperationRef<'c, 'a>,
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<Matched<'c, 'a>> {
    if op_name(&output) != ops::MatmulOp::NAME
        || ops::flag(&output, "transpose_lhs")
        || ops::flag(&output, "transpose_rhs")
    {
        return None;
    }
    let mut passed = vec![output];
    let probabilities = through_reshapes(output.operand(0).ok()?, &mut passed);
    let value = through_reshapes(output.operand(1).ok()?, &mut passed);
    let softmax = producer(probabilities).filter(|p| op_name(p) == ops::SoftmaxOp::NAME)?;
    if !single_use(probabilities) {
        return None;
    }
    passed.push(softmax);
    let scaled = through_reshapes(softmax.operand(0).ok()?, &mut passed);
    if !single_use(scaled) {
        return None;
    }
    let (scores, scale, causal) = scale_of(scaled, table, &mut passed);
    let scores = through_reshapes(scores, &mut passed);
    let product = producer(scores)
        .filter(|p| op_name(p) == ops::MatmulOp::NAME && !ops::flag(p, "transpose_lhs"))?;
    if !single_use(scores) {
        return None;
    }
    passed.push(product);
    let mut scale = scale;
    let query = through_reshapes(product.operand(0).ok()?, &mut passed);
    let (query, query_scale) = unscaled(query, table, &mut passed);
    let query = through_reshapes(query, &mut passed);
    let rhs = through_reshapes(product.operand(1).ok()?, &mut passed);
    let (rhs, key_scale) = unscaled(rhs, table, &mut passed);
    scale *= query_scale * key_scale;
    let key = if ops::flag(&product, "transpose_rhs") {
        through_reshapes(rhs, &mut passed)
    } else {
        let transposed = through_reshapes(rhs, &mut passed);
        let rearrange = producer(transposed).filter(|p| op_name(p) == ops::RearrangeOp::NAME)?;
        let permutation = ops::RearrangeOp::try_from(rearrange).ok()?.permutation()?;
        let rank = permutation.len();
        let swap = rank >= 2
            && permutation[..rank - 2]
                .iter()
                .enumerate()
                .all(|(i, &a)| a == i as i64)
            && permutation[rank - 2..] == [rank as i64 - 1, rank as i64 - 2];
        if !swap || !single_use(transposed) {
            return None;
        }
        passed.push(rearrange);
        let key = through_reshapes(rearrange.operand(0).ok()?, &mut passed);
        let (key, inner_scale) = unscaled(key, table, &mut passed);
        scale *= inner_scale;
        through_reshapes(key, &mut passed)
    };
    Some(Matched {
        query,
        key,
        value,
        scale,
        causal,
        ops: passed,
    })
}

/// Forms every attention of `module`'s functions; returns how many.
pub fn form_attention(module: OperationRef) -> u64 {
    let table = functions(module);
    let mut formed = 0;
    let matmuls = crate::convert::tosa::ops_with_prefix(module, ops::MatmulOp::NAME);
    for output in matmuls {
        let Some(matched) = match_attention(output, &table) else {
            continue;
        };
        let Some(result) = output.result(0).ok().map(Value::from) else {
            continue;
        };
        let Some(out_shape) = shape_of(result.r#type()) else {
            continue;
        };
        let lead = &out_shape[..out_shape.len() - 2];
        let Some(block) = output.block() else {
            continue;
        };
        let context = output.context();
        // SAFETY: the context outlives the pass run.
        let context = unsafe { context.to_ref() };
        let location: Location = output.location();
        // Each input regrouped to the result's batch axes.
        let mut inputs = Vec::new();
        let mut fits = true;
        for value in [matched.query, matched.key, matched.value] {
            let shape = shape_of(value.r#type()).unwrap_or_default();
            if shape.len() < 2
                || shape[..shape.len() - 2].iter().product::<i64>() != lead.iter().product::<i64>()
            {
                fits = false;
                break;
            }
            let mut wanted = lead.to_vec();
            wanted.extend_from_slice(&shape[shape.len() - 2..]);
            if wanted == shape {
                inputs.push(value);
                continue;
            }
            let element = value.r#type().to_string();
            let element = element
                .rsplit('x')
                .next()
                .unwrap_or("f32>")
                .trim_end_matches('>');
            let dims: String = wanted.iter().map(|d| format!("{d}x")).collect();
            let Some(r#type) =
                melior::ir::Type::parse(context, &format!("tensor<{dims}{element}>"))
            else {
                fits = false;
                break;
            };
            let reshape =
                block.insert_operation_before(output, ReshapeOp::build(location, value, r#type));
            inputs.push(reshape.result(0).expect("a reshape has a result").into());
        }
        if !fits {
            continue;
        }
        let attention = AttentionOp::build(
            context,
            location,
            inputs[0],
            inputs[1],
            inputs[2],
            result.r#type(),
            matched.causal,
            Some(matched.scale),
        );
        let attention = block.insert_operation_before(output, attention);
        let replacement: Value = attention.result(0).expect("attention has a result").into();
        // SAFETY: both values are live and of the same type.
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), replacement.to_raw()) };
        crate::convert::erase_unused(matched.ops);
        formed += 1;
    }
    formed
}
