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

use ipu_dialects::graph::read::{entry_block, functions};
use ipu_dialects::graph::scalar::{self, ArgumentRole};
use ipu_dialects::ipu::{self as ops, op_name, AttentionOp, ReshapeOp};
use melior::ir::{
    block::BlockLike, operation::OperationLike, Location, OperationRef, Value, ValueLike,
};

use crate::ir::{producer, shape_of, splat_of, users};
use crate::pass::{Pass, PassFailure, PassRun};

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

/// How the maps between the scores and the softmax treat the scores: `Some((scale, causal))`
/// when `at(s, i, j)` (the maps' composition at score `s`, query index `i`, key index `j`) is
/// `scale * s` everywhere (not causal), or `scale * s` where the key index is at most the
/// query index and one constant below -1e30 elsewhere (causal); checked by evaluating it over
/// a grid of scores and indices.
fn scores_map(at: &dyn Fn(f64, i64, i64) -> f64, rows: i64, cols: i64) -> Option<(f64, bool)> {
    let scale = at(1.0, 0, 0);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    let samples = [-3.5, 0.0, 0.25, 2.0, 17.0];
    // Every position of a small score matrix; of a large one, the first rows and columns,
    // every row's diagonal, its neighbour above and its first and last keys (where masks
    // differ: causal, sliding windows, padding), and a 64 x 64 grid across it.
    let (row_step, col_step) = ((rows / 64).max(1), (cols / 64).max(1));
    let positions: Vec<(i64, i64)> = if rows * cols <= 65_536 {
        (0..rows)
            .flat_map(|i| (0..cols).map(move |j| (i, j)))
            .collect()
    } else {
        (0..rows.min(6))
            .flat_map(|i| (0..cols.min(6)).map(move |j| (i, j)))
            .chain((0..rows).flat_map(|i| [(i, i), (i, i + 1), (i, 0), (i, cols - 1)]))
            .chain(
                (0..rows)
                    .step_by(row_step as usize)
                    .flat_map(|i| (0..cols).step_by(col_step as usize).map(move |j| (i, j))),
            )
            .filter(|&(i, j)| i >= 0 && j >= 0 && i < rows && j < cols)
            .collect()
    };
    let linear = |i, j| {
        samples
            .iter()
            .all(|&x| (at(x, i, j) - scale * x).abs() <= 1e-6 * (scale * x).abs().max(1e-30))
    };
    if positions.iter().all(|&(i, j)| linear(i, j)) {
        return Some((scale, false));
    }
    if rows != cols {
        return None;
    }
    let masked = |i, j| {
        let first = at(samples[0], i, j);
        first < -1e30 && samples.iter().all(|&x| at(x, i, j) == first)
    };
    positions
        .iter()
        .all(|&(i, j)| if j <= i { linear(i, j) } else { masked(i, j) })
        .then_some((scale, true))
}

/// What an input of a map between the scores and the softmax holds.
enum StageInput {
    /// The scores (exactly one input).
    Scores,
    /// A broadcast scalar.
    Scalar(f64),
    /// A dense f32 constant of the map's shape (TF's causal mask as a constant).
    Dense(Vec<f64>),
    /// An input-free map's result of `shape` (its body reads the indices: PyTorch's additive
    /// mask), broadcast to the map's shape (aligned at the last axis).
    Field(scalar::ScalarProgram, Vec<i64>),
}

/// What a stage computes from its inputs.
enum StageBody {
    Map(scalar::ScalarProgram),
    /// `ipu.add`: the sum of its two inputs.
    Add,
}

/// One map between the scores and the softmax: its body, its inputs and its result's shape
/// (the indices it reads).
struct ScoreStage {
    body: StageBody,
    inputs: Vec<StageInput>,
    shape: Vec<i64>,
}

impl ScoreStage {
    /// The stage at score `x`, query index `i`, key index `j`, the leading indices all first
    /// or all last.
    fn at(&self, x: f64, (i, j): (i64, i64), last_lead: bool) -> f64 {
        let rank = self.shape.len();
        let mut position = vec![0i64; rank];
        if rank >= 2 {
            for (axis, index) in position.iter_mut().enumerate().take(rank - 2) {
                *index = if last_lead { self.shape[axis] - 1 } else { 0 };
            }
            position[rank - 2] = i;
            position[rank - 1] = j;
        }
        let flat = position
            .iter()
            .zip(&self.shape)
            .fold(0i64, |flat, (&index, &size)| flat * size + index);
        let args: Vec<f64> = self
            .inputs
            .iter()
            .map(|input| match input {
                StageInput::Scores => x,
                StageInput::Scalar(c) => *c,
                StageInput::Dense(data) => data.get(flat as usize).copied().unwrap_or(f64::NAN),
                StageInput::Field(program, shape) => {
                    let offset = rank.saturating_sub(shape.len());
                    let at: Vec<i64> = shape
                        .iter()
                        .enumerate()
                        .map(|(axis, &size)| {
                            if size == 1 {
                                0
                            } else {
                                position.get(offset + axis).copied().unwrap_or(0)
                            }
                        })
                        .collect();
                    program.eval(&[], &at)
                }
            })
            .collect();
        match &self.body {
            StageBody::Add => args.iter().sum(),
            StageBody::Map(program) => {
                let indices = if program.indices == rank {
                    position
                } else {
                    Vec::new()
                };
                program.eval(&args, &indices)
            }
        }
    }
}

/// `value` as an input-free map's result (maybe broadcast) that broadcasts to `shape`.
fn index_field(
    value: Value,
    shape: &[i64],
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<StageInput> {
    let mut source = value;
    if let Some(broadcast) = producer(value).filter(|p| op_name(p) == ops::BroadcastOp::NAME) {
        source = broadcast.operand(0).ok()?;
    }
    let map = producer(source).filter(|p| op_name(p) == ops::MapOp::NAME)?;
    if map.operand_count() != 0 {
        return None;
    }
    let own = shape_of(source.r#type())?;
    let fits = own.len() <= shape.len()
        && own
            .iter()
            .rev()
            .zip(shape.iter().rev())
            .all(|(&a, &b)| a == 1 || a == b);
    if !fits {
        return None;
    }
    Some(StageInput::Field(map_program(map, table, 0)?, own))
}

/// The inputs of map `map` (result shape `shape`) as a scores stage, and the position of the
/// scores: every input but one a broadcast scalar or a dense f32 constant of the map's shape.
fn stage_inputs(
    map: OperationRef,
    shape: &[i64],
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<(Vec<StageInput>, usize)> {
    let mut inputs = Vec::new();
    let mut scores = None;
    for (position, operand) in map.operands().enumerate() {
        if let Some(c) = broadcast_scalar(operand, table) {
            inputs.push(StageInput::Scalar(c));
            continue;
        }
        let data = (shape_of(operand.r#type()).as_deref() == Some(shape))
            .then(|| constant_data(operand))
            .flatten()
            .filter(|data| data.len() == shape.iter().product::<i64>() as usize);
        if let Some(data) = data {
            inputs.push(StageInput::Dense(data));
            continue;
        }
        if let Some(field) = index_field(operand, shape, table) {
            inputs.push(field);
            continue;
        }
        if scores.replace(position).is_some() {
            return None;
        }
        inputs.push(StageInput::Scores);
    }
    Some((inputs, scores?))
}

/// The scores, scale and causality `scaled` (a softmax input) holds: behind it a chain of
/// maps of the scores (each read once: a one-input map, or a two-input one whose second input
/// is a broadcast scalar; bodies may read the indices, as a causal mask from iota compares
/// does), through reshapes that keep the last two axes, whose composition is a positive scale
/// of the scores or a causal mask of the scaled scores ([`scores_map`]); else `scaled` itself
/// at scale 1.
fn scale_of<'c, 'a>(
    scaled: Value<'c, 'a>,
    table: &std::collections::BTreeMap<String, OperationRef>,
    passed: &mut Vec<OperationRef<'c, 'a>>,
) -> (Value<'c, 'a>, f64, bool) {
    let unscaled = (scaled, 1.0, false);
    let mut stages: Vec<ScoreStage> = Vec::new();
    let mut chain = Vec::new();
    let mut value = scaled;
    loop {
        let candidate = through_reshapes(value, &mut Vec::new());
        let Some(map) = producer(candidate)
            .filter(|p| op_name(p) == ops::MapOp::NAME || op_name(p) == ops::AddOp::NAME)
        else {
            break;
        };
        let Some(shape) = shape_of(candidate.r#type()) else {
            break;
        };
        let Some((inputs, position)) = stage_inputs(map, &shape, table) else {
            break;
        };
        let body = if op_name(&map) == ops::AddOp::NAME {
            Some(StageBody::Add)
        } else {
            map_program(map, table, map.operand_count()).map(StageBody::Map)
        };
        let (Some(body), Ok(scores)) = (body, map.operand(position)) else {
            break;
        };
        if shape_of(scores.r#type()).as_deref() != Some(&shape[..]) {
            break;
        }
        if !single_use(candidate) || !single_use(scores) {
            break;
        }
        let value_before = value;
        through_reshapes(value_before, &mut chain);
        chain.push(map);
        // The scalars' broadcasts and sources, and the constants, erased once unused too.
        for (k, operand) in map.operands().enumerate() {
            if k == position {
                continue;
            }
            if let Some(op) = producer(operand) {
                chain.push(op);
                if let Some(source) = op.operand(0).ok().and_then(producer) {
                    chain.push(source);
                }
            }
        }
        stages.push(ScoreStage {
            body,
            inputs,
            shape,
        });
        value = scores;
    }
    if stages.is_empty() {
        return unscaled;
    }
    let shape = shape_of(scaled.r#type()).unwrap_or_default();
    let (rows, cols) = match shape.len() {
        0 => return unscaled,
        1 => (1, shape[0]),
        n => (shape[n - 2], shape[n - 1]),
    };
    // The maps from the scores (the last found) to the softmax input, at the first and the
    // last leading indices alike.
    let compose = |last_lead: bool| {
        let stages = &stages;
        move |x: f64, i: i64, j: i64| {
            stages
                .iter()
                .rev()
                .fold(x, |x, stage| stage.at(x, (i, j), last_lead))
        }
    };
    let (first, last) = (compose(false), compose(true));
    let (Some(found), Some(again)) = (
        scores_map(&first, rows, cols),
        scores_map(&last, rows, cols),
    ) else {
        return unscaled;
    };
    if found != again {
        return unscaled;
    }
    passed.extend(chain);
    (value, found.0, found.1)
}

/// `value` without a one-input map that scales it (PyTorch scales q and k by the square root
/// of the score scale before their product), and that scale; else `value` at 1.
fn unscaled<'c, 'a>(
    value: Value<'c, 'a>,
    table: &std::collections::BTreeMap<String, OperationRef>,
    passed: &mut Vec<OperationRef<'c, 'a>>,
) -> (Value<'c, 'a>, f64) {
    let Some(map) = producer(value)
        .filter(|p| op_name(p) == ops::MapOp::NAME && matches!(p.operand_count(), 1 | 2))
    else {
        return (value, 1.0);
    };
    let inputs = map.operand_count();
    let (Ok(input), Some(program)) = (map.operand(0), map_program(map, table, inputs)) else {
        return (value, 1.0);
    };
    // A second input must be a broadcast scalar (Flax divides q by sqrt(d) so).
    let other = map.operand(1).ok();
    let c = match other {
        None => 0.0,
        Some(other) => match broadcast_scalar(other, table) {
            Some(c) => c,
            None => return (value, 1.0),
        },
    };
    if program.uses_indices() || !single_use(value) {
        return (value, 1.0);
    }
    let at = |x: f64| program.eval(&[x, c][..inputs], &[]);
    let scale = at(1.0);
    let linear = [-3.5, 0.0, 0.25, 2.0, 17.0]
        .iter()
        .all(|&x| (at(x) - scale * x).abs() <= 1e-6 * (scale * x).abs().max(1e-30));
    if !(linear && scale > 0.0 && scale.is_finite()) {
        return (value, 1.0);
    }
    passed.push(map);
    if let Some(broadcast) = other.and_then(producer) {
        passed.push(broadcast);
        if let Some(source) = broadcast.operand(0).ok().and_then(producer) {
            passed.push(source);
        }
    }
    (input, scale)
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

/// Where a value of a row cone lives: each element of a row, one value per row, or one value.
#[derive(Clone, Copy, PartialEq)]
enum Extent {
    Full,
    Row,
    /// One value per column (a constant vector broadcast over the rows: a gain, a shift).
    Column,
    Scalar,
}

/// A row function `y = f(x)`: the ops between `x` (the one full-size input) and `y`, every
/// one a map without index reads, a broadcast, a reduction over the last axis or a splat
/// constant, and every intermediate read only inside the cone.
struct RowCone<'c, 'a> {
    input: Value<'c, 'a>,
    ops: Vec<OperationRef<'c, 'a>>,
}

/// The extent of `value` in a cone over rows of `full`'s last axis: any shape of the same rows
/// (`[4, 16, 16]` and `[1, 4, 16, 16]` alike: a reshape that keeps the last axis keeps the
/// rows in order) is full size, any `[..., 1]` of one value per row is per row.
fn extent_of(value: Value, full: &[i64]) -> Option<Extent> {
    let shape = shape_of(value.r#type())?;
    let n = *full.last()?;
    let total: i64 = full.iter().product();
    let count: i64 = shape.iter().product();
    if shape == full || (count == total && shape.last() == Some(&n)) {
        return Some(Extent::Full);
    }
    if shape.iter().all(|&d| d == 1) {
        return Some(Extent::Scalar);
    }
    if shape.last() == Some(&n) && shape[..shape.len() - 1].iter().all(|&d| d == 1) {
        return Some(Extent::Column);
    }
    (shape.last() == Some(&1) && n > 0 && count == total / n).then_some(Extent::Row)
}

/// The values of an f32 dense constant `value` (one for a splat), if it is one.
fn constant_data(value: Value) -> Option<Vec<f64>> {
    let constant = crate::ir::DenseConstant::of(value)?;
    let raw = melior::ir::attribute::AttributeLike::to_raw(&constant.attribute);
    // SAFETY: `raw` is a live dense elements attribute; elements are read only from an f32
    // one, each index within its element count.
    unsafe {
        let element = mlir_sys::mlirShapedTypeGetElementType(mlir_sys::mlirAttributeGetType(raw));
        if !mlir_sys::mlirTypeIsAF32(element) {
            return None;
        }
        let count = if mlir_sys::mlirDenseElementsAttrIsSplat(raw) {
            1
        } else {
            mlir_sys::mlirElementsAttrGetNumElements(raw)
        };
        Some(
            (0..count as isize)
                .map(|i| f64::from(mlir_sys::mlirDenseElementsAttrGetFloatValue(raw, i)))
                .collect(),
        )
    }
}

/// Where [`collect_cone`] stops: at `input` when given (the cone's input), and whether a
/// second full-size leaf ends the walk quietly (`loose`: a survey of the ops, not a cone).
#[derive(Clone, Copy)]
struct Leaves<'c, 'a> {
    input: Option<Value<'c, 'a>>,
    loose: bool,
}

/// Collects the cone of `value` into `cone` (producers before readers), or `None` when an
/// op outside the kinds above, a second full-size input or an unreadable body is reached.
fn collect_cone<'c, 'a>(
    value: Value<'c, 'a>,
    (full, leaves): (&[i64], Leaves<'c, 'a>),
    table: &std::collections::BTreeMap<String, OperationRef>,
    cone: &mut RowCone<'c, 'a>,
    seen: &mut std::collections::BTreeSet<usize>,
) -> Option<()> {
    if leaves.input == Some(value) {
        cone.input = value;
        return Some(());
    }
    if splat_of(value).is_some() && extent_of(value, full).is_some() {
        return Some(());
    }
    // A constant vector over the columns (read by the evaluation).
    if extent_of(value, full) == Some(Extent::Column) && constant_data(value).is_some() {
        return Some(());
    }
    let op = producer(value);
    let kind = op.map(|op| op_name(&op));
    // A reshape is inside when it keeps the extent (the rows, in order).
    let kept_rows = || {
        let op = op?;
        let input = op.operand(0).ok()?;
        (extent_of(input, full)? == extent_of(value, full)?).then_some(())
    };
    let inner = matches!(
        kind.as_deref(),
        Some(ops::MapOp::NAME)
            | Some(ops::AddOp::NAME)
            | Some(ops::BroadcastOp::NAME)
            | Some(ops::ReduceOp::NAME)
    ) || (kind.as_deref() == Some(ReshapeOp::NAME) && kept_rows().is_some());
    if !inner {
        // A leaf: the one full-size input.
        if extent_of(value, full) != Some(Extent::Full) {
            return None;
        }
        if cone.input.to_raw().ptr.is_null() || cone.input == value {
            cone.input = value;
            return Some(());
        }
        return leaves.loose.then_some(());
    }
    let op = op?;
    if !seen.insert(op.to_raw().ptr as usize) {
        return Some(());
    }
    if extent_of(value, full).is_none() {
        // A survey stops here quietly (a mask broadcast over some axes only, say).
        return leaves.loose.then_some(());
    }
    if kind.as_deref() == Some(ops::MapOp::NAME) {
        let program = map_program(op, table, op.operand_count())?;
        if program.uses_indices() {
            return None;
        }
    }
    if kind.as_deref() == Some(ops::ReduceOp::NAME)
        && extent_of(op.operand(0).ok()?, full) != Some(Extent::Full)
    {
        return None;
    }
    for operand in op.operands() {
        if collect_cone(operand, (full, leaves), table, cone, seen).is_none() && !leaves.loose {
            return None;
        }
    }
    cone.ops.push(op);
    Some(())
}

/// The input of the row cone ending at `output`: of the full-size values its last-axis
/// reductions read, the one computed first (the others are computed from it: `x` of
/// `mean(x)` and `mean(x * x)`). The ops before it are not the cone's, however elementwise
/// they are (a layer norm of `x + b` normalizes `x + b`).
fn cone_input<'c, 'a>(
    output: Value<'c, 'a>,
    full: &[i64],
    table: &std::collections::BTreeMap<String, OperationRef>,
) -> Option<Value<'c, 'a>> {
    // SAFETY: a null value only marks "no input yet"; it is never dereferenced.
    let mut survey = RowCone {
        input: unsafe {
            Value::from_raw(mlir_sys::MlirValue {
                ptr: std::ptr::null(),
            })
        },
        ops: Vec::new(),
    };
    let loose = Leaves {
        input: None,
        loose: true,
    };
    let mut seen = std::collections::BTreeSet::new();
    collect_cone(output, (full, loose), table, &mut survey, &mut seen)?;
    let reads: Vec<Value<'c, 'a>> = survey
        .ops
        .iter()
        .filter(|op| op_name(*op) == ops::ReduceOp::NAME)
        .filter_map(|op| op.operand(0).ok())
        .filter(|v| extent_of(*v, full) == Some(Extent::Full))
        // SAFETY: the operand is a value of the IR the ops belong to, live for 'a.
        .map(|v| unsafe { Value::from_raw(v.to_raw()) })
        .map(|v| before_row_reshapes(v, full))
        .collect();
    // Computed first: a block argument, else the value whose producer comes first.
    reads.into_iter().min_by(|a, b| {
        let (pa, pb) = (producer(*a), producer(*b));
        match (pa, pb) {
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) => std::cmp::Ordering::Less,
            (Some(_), None) => std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x == y => std::cmp::Ordering::Equal,
            // SAFETY: both ops are live ops of one block (one function body).
            (Some(x), Some(y)) => {
                if unsafe { mlir_sys::mlirOperationIsBeforeInBlock(x.to_raw(), y.to_raw()) } {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                }
            }
        }
    })
}

/// `value` before the reshapes that produced it keeping its rows (full size on both sides).
fn before_row_reshapes<'c, 'a>(mut value: Value<'c, 'a>, full: &[i64]) -> Value<'c, 'a> {
    while let Some(input) = producer(value)
        .and_then(|op| ReshapeOp::try_from(op).ok())
        .and_then(|reshape| reshape.input())
        .filter(|input| extent_of(*input, full) == Some(Extent::Full))
    {
        // SAFETY: the reshape's input is a value of the same IR, live for 'a.
        value = unsafe { Value::from_raw(input.to_raw()) };
    }
    value
}

/// The rows of `output` that `cone` computes from `x` rows (`rows x n`, row-major), or `None`
/// when an op cannot be evaluated.
fn evaluate_cone(
    cone: &RowCone,
    output: Value,
    full: &[i64],
    table: &std::collections::BTreeMap<String, OperationRef>,
    x: &[f64],
    rows: usize,
) -> Option<Vec<f64>> {
    use std::collections::BTreeMap;
    let n = x.len() / rows;
    let size = |extent| match extent {
        Extent::Full => rows * n,
        Extent::Row => rows,
        Extent::Column => n,
        Extent::Scalar => 1,
    };
    let mut values: BTreeMap<usize, (Extent, Vec<f64>)> = BTreeMap::new();
    values.insert(crate::ir::key(cone.input), (Extent::Full, x.to_vec()));
    // An element `i` of a value of `extent` read at position `i` of a value of `to`.
    let read = |(extent, data): &(Extent, Vec<f64>), to: Extent, i: usize| -> f64 {
        match (extent, to) {
            (Extent::Scalar, _) => data[0],
            (Extent::Row, Extent::Full) => data[i / n],
            (Extent::Column, Extent::Full) => data[i % n],
            _ => data[i],
        }
    };
    let operand =
        |values: &BTreeMap<usize, (Extent, Vec<f64>)>, v: Value| -> Option<(Extent, Vec<f64>)> {
            if let Some(found) = values.get(&crate::ir::key(v)) {
                return Some(found.clone());
            }
            let extent = extent_of(v, full)?;
            if let Some(c) = splat_of(v) {
                return Some((extent, vec![c; size(extent)]));
            }
            let data = constant_data(v)?;
            (extent == Extent::Column && data.len() == n).then_some((extent, data))
        };
    for op in &cone.ops {
        let result: Value = op.result(0).ok()?.into();
        let extent = extent_of(result, full)?;
        let inputs: Vec<(Extent, Vec<f64>)> = op
            .operands()
            .map(|v| operand(&values, v))
            .collect::<Option<_>>()?;
        let data: Vec<f64> = match op_name(op).as_str() {
            ops::MapOp::NAME => {
                let program = map_program(*op, table, inputs.len())?;
                (0..size(extent))
                    .map(|i| {
                        let args: Vec<f64> =
                            inputs.iter().map(|input| read(input, extent, i)).collect();
                        program.eval(&args, &[])
                    })
                    .collect()
            }
            ops::AddOp::NAME if inputs.len() == 2 => (0..size(extent))
                .map(|i| read(&inputs[0], extent, i) + read(&inputs[1], extent, i))
                .collect(),
            ops::BroadcastOp::NAME => (0..size(extent))
                .map(|i| read(&inputs[0], extent, i))
                .collect(),
            ReshapeOp::NAME => inputs[0].1.clone(),
            ops::ReduceOp::NAME => {
                let combiner = ops::ReduceOp::try_from(*op).ok()?.combiner()?;
                let source = &inputs[0].1;
                (0..rows)
                    .map(|r| {
                        let row = &source[r * n..(r + 1) * n];
                        match combiner {
                            ops::Combiner::Add => row.iter().sum(),
                            ops::Combiner::Mul => row.iter().product(),
                            ops::Combiner::Max => {
                                row.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                            }
                            ops::Combiner::Min => row.iter().copied().fold(f64::INFINITY, f64::min),
                        }
                    })
                    .collect()
            }
            _ => return None,
        };
        values.insert(crate::ir::key(result), (extent, data));
    }
    values.remove(&crate::ir::key(output)).map(|(_, data)| data)
}

/// Forms `ipu.softmax` from every row cone of `module` that computes a softmax over the last
/// axis (checked by evaluating it on rows of spread values: PyTorch's guarded softmax, TOSA's
/// op-by-op one), and `ipu.layer_norm` from every one that normalizes its rows (`(x - mean) /
/// sqrt(var + eps) * gamma + beta`, whatever form the exporter wrote: E[x^2] - E[x]^2 with a
/// clamp, the mean of squared deviations, a batch-norm form), its epsilon, gain and shift read
/// off the cone's values ([`layer_norm_of`]); returns how many.
pub fn form_softmax(module: OperationRef) -> u64 {
    let table = functions(module);
    let mut formed = 0;
    // Roots latest first, so a cone is formed whole (a layer norm with its shift added by a
    // separate op, not the norm without it); the ops of formed cones are erased at the end,
    // and roots inside them skipped.
    let mut roots = crate::convert::tosa::ops_with_prefix(module, "ipu.");
    roots.retain(|op| {
        let name = op_name(op);
        name == ops::MapOp::NAME || name == ops::AddOp::NAME
    });
    roots.reverse();
    let mut consumed = std::collections::BTreeSet::new();
    let mut dead = Vec::new();
    for map in roots {
        if consumed.contains(&(map.to_raw().ptr as usize)) {
            continue;
        }
        let Some(result) = map.result(0).ok().map(Value::from) else {
            continue;
        };
        let Some(full) = shape_of(result.r#type()).filter(|s| s.last().is_some_and(|&n| n > 1))
        else {
            continue;
        };
        // SAFETY: a null value only marks "no input yet"; it is never dereferenced.
        let mut cone = RowCone {
            input: unsafe {
                Value::from_raw(mlir_sys::MlirValue {
                    ptr: std::ptr::null(),
                })
            },
            ops: Vec::new(),
        };
        let Some(input) = cone_input(result, &full, &table) else {
            continue;
        };
        let leaves = Leaves {
            input: Some(input),
            loose: false,
        };
        let mut seen = std::collections::BTreeSet::new();
        if collect_cone(result, (&full, leaves), &table, &mut cone, &mut seen).is_none()
            || cone.input.to_raw().ptr.is_null()
            || !cone.ops.iter().any(|op| op_name(op) == ops::ReduceOp::NAME)
        {
            continue;
        }
        // Every intermediate is read only inside the cone.
        let inside: std::collections::BTreeSet<usize> =
            cone.ops.iter().map(|op| op.to_raw().ptr as usize).collect();
        let contained = cone
            .ops
            .iter()
            .filter(|op| op.to_raw().ptr != map.to_raw().ptr)
            .all(|op| {
                op.results().all(|r| {
                    users(r.into())
                        .iter()
                        .all(|u| inside.contains(&(u.to_raw().ptr as usize)))
                })
            });
        if !contained {
            continue;
        }
        let n = *full.last().unwrap_or(&1) as usize;
        let rows = 3;
        let x: Vec<f64> = (0..rows).flat_map(|seed| spread_row(n, seed)).collect();
        let Some(y) = evaluate_cone(&cone, result, &full, &table, &x, rows) else {
            continue;
        };
        let softmax = x.chunks(n).flat_map(|row| {
            let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - max).exp()).sum();
            row.iter()
                .map(move |v| (v - max).exp() / sum)
                .collect::<Vec<_>>()
        });
        let is_softmax = y.iter().zip(softmax).all(|(a, b)| (a - b).abs() <= 1e-9);
        let Some(block) = map.block() else {
            continue;
        };
        // The input in the result's shape (the cone may regroup rows on the way).
        let cone_input = cone.input;
        let input_of = || {
            if cone_input.r#type() == result.r#type() {
                return Some(cone_input);
            }
            let reshape = block.insert_operation_before(
                map,
                ReshapeOp::build(map.location(), cone_input, result.r#type()),
            );
            // SAFETY: the reshape was just inserted into the live block.
            reshape
                .result(0)
                .ok()
                .map(|r| unsafe { Value::from_raw(Value::from(r).to_raw()) })
        };
        let built = if is_softmax {
            let Some(input) = input_of() else {
                continue;
            };
            ops::SoftmaxOp::build(map.location(), input, result.r#type())
        } else {
            let Some((epsilon, gamma, beta)) = layer_norm_of(&cone, result, &full, &table, n)
            else {
                continue;
            };
            let context = map.context();
            // SAFETY: the context outlives the pass run.
            let context = unsafe { context.to_ref() };
            let element = result.r#type().to_string();
            let element = element
                .rsplit('x')
                .next()
                .unwrap_or("f32>")
                .trim_end_matches('>');
            let Some(vector) = melior::ir::Type::parse(context, &format!("tensor<{n}x{element}>"))
            else {
                continue;
            };
            // The gain and shift as dense constants of the result's element type.
            let constant = |values: &[f64]| -> Option<Value> {
                let items: Vec<String> = values
                    .iter()
                    .map(|v| format!("{:.9e}", *v as f32))
                    .collect();
                let text = format!("dense<[{}]> : {vector}", items.join(", "));
                let value = melior::ir::Attribute::parse(context, &text)?;
                let op = block.insert_operation_before(
                    map,
                    crate::convert::constant(context, map.location(), value),
                );
                op.result(0).ok().map(Value::from)
            };
            let (Some(gamma), Some(beta), Some(input)) =
                (constant(&gamma), constant(&beta), input_of())
            else {
                continue;
            };
            ops::LayerNormOp::build(
                context,
                map.location(),
                input,
                gamma,
                beta,
                result.r#type(),
                epsilon,
            )
        };
        let softmax = block.insert_operation_before(map, built);
        let replacement: Value = softmax.result(0).expect("softmax has a result").into();
        // SAFETY: both values are live and of the same type.
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), replacement.to_raw()) };
        consumed.extend(cone.ops.iter().map(|op| op.to_raw().ptr as usize));
        dead.extend(cone.ops.into_iter().rev());
        formed += 1;
    }
    crate::convert::erase_unused(dead);
    formed
}

/// The epsilon, gain and shift of a layer normalization `cone` computes (`y = (x - mean) /
/// sqrt(var + eps) * gamma + beta` per row of `n`), or `None` when it computes something else.
/// The epsilon from how column 0 scales between rows +-v and +-2v of small variance (the
/// ratio of the two halved differences is `2 sqrt(v + eps) / sqrt(4 v + eps)`), the gain and
/// shift per column from two rows of spread values, and the whole cone checked against the
/// normalization on a third.
fn layer_norm_of(
    cone: &RowCone,
    output: Value,
    full: &[i64],
    table: &std::collections::BTreeMap<String, OperationRef>,
    n: usize,
) -> Option<(f64, Vec<f64>, Vec<f64>)> {
    if n < 2 {
        return None;
    }
    let eval = |row: &[f64]| evaluate_cone(cone, output, full, table, row, 1);
    let probe = |scale: f64| -> Vec<f64> {
        (0..n)
            .map(|i| if i % 2 == 0 { scale } else { -scale })
            .collect()
    };
    let half_difference = |scale: f64| -> Option<f64> {
        let plus = eval(&probe(scale))?;
        let minus = eval(&probe(-scale))?;
        Some((plus[0] - minus[0]) / 2.0)
    };
    let (d1, d2) = (half_difference(0.01)?, half_difference(0.02)?);
    if d1 == 0.0 || !d1.is_finite() || !d2.is_finite() {
        return None;
    }
    let stats = |row: &[f64]| {
        let mean = row.iter().sum::<f64>() / n as f64;
        let variance = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        (mean, variance)
    };
    let (_, v1) = stats(&probe(0.01));
    let r2 = (d2 / d1).powi(2);
    let epsilon = 4.0 * v1 * (1.0 - r2) / (r2 - 4.0);
    if !(epsilon > 0.0 && epsilon < 0.1) {
        return None;
    }
    let normalize = |row: &[f64]| -> Vec<f64> {
        let (mean, variance) = stats(row);
        row.iter()
            .map(|v| (v - mean) / (variance + epsilon).sqrt())
            .collect()
    };
    // Per column, the line through (normalized, cone value) over four rows (least squares),
    // checked on a fifth.
    let fitted: Vec<(Vec<f64>, Vec<f64>)> = (1..=4)
        .map(|seed| {
            let row = spread_row(n, seed);
            eval(&row).map(|y| (normalize(&row), y))
        })
        .collect::<Option<_>>()?;
    let mut gamma = Vec::with_capacity(n);
    let mut beta = Vec::with_capacity(n);
    for i in 0..n {
        let points: Vec<(f64, f64)> = fitted.iter().map(|(x, y)| (x[i], y[i])).collect();
        let mean_x = points.iter().map(|p| p.0).sum::<f64>() / 4.0;
        let mean_y = points.iter().map(|p| p.1).sum::<f64>() / 4.0;
        let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
        if sxx < 1e-6 {
            return None;
        }
        let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
        let g = sxy / sxx;
        gamma.push(g);
        beta.push(mean_y - g * mean_x);
    }
    let check = spread_row(n, 5);
    let (nc, yc) = (normalize(&check), eval(&check)?);
    let fits = (0..n).all(|i| {
        let expected = nc[i] * gamma[i] + beta[i];
        (yc[i] - expected).abs() <= 1e-7 * expected.abs().max(1.0)
    });
    fits.then_some((epsilon, gamma, beta))
}

/// Row `seed` of `n` spread values in [-6, 6) (a fixed pseudo-random sequence) that the row
/// cones are evaluated on.
fn spread_row(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 7919 + seed * 104_729 + 13) % 97) as f64 / 8.0 - 6.0)
        .collect()
}
