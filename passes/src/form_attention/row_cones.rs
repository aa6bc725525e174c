//! Row cones: the maps, broadcasts, adds and last-axis reductions from one full-size input that
//! compute a function of each row, formed into `ipu.softmax` or `ipu.layer_norm` when evaluating
//! them on rows of spread values shows they compute one.

use super::*;

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
pub(super) fn constant_data(value: Value) -> Option<Vec<f64>> {
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
