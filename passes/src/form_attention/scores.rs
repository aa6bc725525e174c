//! The chain of maps and adds between attention scores and their softmax: what it does to the
//! scores (a positive scale, a causal mask, or something else), found by composing the chain
//! and evaluating it over scores and indices.

use super::row_cones::constant_data;
use super::*;

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
pub(super) fn scale_of<'c, 'a>(
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
pub(super) fn unscaled<'c, 'a>(
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
