//! Ops converted by the general path one at a time: named elementwise linalg ops, value
//! broadcasts, TOSA elementwise ops and reductions, and resource-blob weights.

use super::*;

/// Rewrites every f32 `arith.constant` nested in `root` whose value is a `dense_resource`
/// blob (how the PyTorch route stores weights) into a dense elements constant with the same
/// values, which the rest of the compiler reads. Returns how many were rewritten.
pub fn inline_resource_constants(root: OperationRef) -> usize {
    let mut rewritten = 0;
    for op in crate::convert::tosa::ops_with_prefix(root, "arith.constant") {
        let Ok(value) = op.attribute("value") else {
            continue;
        };
        let raw = value.to_raw();
        // SAFETY: `raw` is a live attribute; the predicate reads its kind only.
        if !unsafe { mlir_sys::mlirAttributeIsADenseResourceElements(raw) } {
            continue;
        }
        let Ok(result) = op.result(0) else {
            continue;
        };
        let r#type = result.r#type();
        let Ok(tensor) = melior::ir::r#type::RankedTensorType::try_from(r#type) else {
            continue;
        };
        if !tensor.element().is_f32() {
            continue;
        }
        let Some(shape) = shape_of(r#type) else {
            continue;
        };
        let count: i64 = shape.iter().product();
        // SAFETY: the attribute is an f32 dense resource of `count` elements (its type's);
        // each read is within it, and the new attribute copies the values it is given.
        unsafe {
            let values: Vec<f32> = (0..count as isize)
                .map(|pos| mlir_sys::mlirDenseFloatResourceElementsAttrGetValue(raw, pos))
                .collect();
            let dense = mlir_sys::mlirDenseElementsAttrFloatGet(
                r#type.to_raw(),
                count as isize,
                values.as_ptr(),
            );
            let name = mlir_sys::mlirStringRefCreateFromCString(c"value".as_ptr());
            mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), name, dense);
        }
        rewritten += 1;
    }
    rewritten
}

/// The scalar op of a named elementwise linalg op (`linalg.exp`, `linalg.sub`, ...) over its
/// inputs 0 (and 1), if it is one.
fn named_body(short: &str) -> Option<ScalarProgram> {
    use scalar::Unary;
    let unary = |f: Unary| (1, vec![ScalarOp::Input(0), ScalarOp::Unary(f, 0)]);
    let binary = |f: Binary| {
        (
            2,
            vec![
                ScalarOp::Input(0),
                ScalarOp::Input(1),
                ScalarOp::Binary(f, 0, 1),
            ],
        )
    };
    let (inputs, ops) = match short {
        "exp" => unary(Unary::Exp),
        "log" => unary(Unary::Log),
        "abs" => unary(Unary::Abs),
        "ceil" => unary(Unary::Ceil),
        "floor" => unary(Unary::Floor),
        "negf" => unary(Unary::Neg),
        "sqrt" => unary(Unary::Sqrt),
        "rsqrt" => unary(Unary::Rsqrt),
        "tanh" => unary(Unary::Tanh),
        "erf" => unary(Unary::Erf),
        "reciprocal" => (
            1,
            vec![
                ScalarOp::Float(1.0f32.to_bits()),
                ScalarOp::Input(0),
                ScalarOp::Binary(Binary::Div, 0, 1),
            ],
        ),
        "square" => (
            1,
            vec![ScalarOp::Input(0), ScalarOp::Binary(Binary::Mul, 0, 0)],
        ),
        "add" => binary(Binary::Add),
        "sub" => binary(Binary::Sub),
        "mul" => binary(Binary::Mul),
        "div" => binary(Binary::Div),
        "max" => binary(Binary::Max),
        "min" => binary(Binary::Min),
        "powf" => binary(Binary::Pow),
        _ => return None,
    };
    let result = ops.len() - 1;
    Some(ScalarProgram {
        inputs,
        indices: 0,
        ops,
        result,
    })
}

/// The conversion of a named elementwise linalg op (`linalg.exp`, `linalg.sub`, ...): a map
/// of its scalar op, its inputs read as they are (named elementwise ops have the result's
/// shape); `None` when `short` is no such op.
pub fn named_elementwise_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Option<Result<Rewrite<'c, 'a>, Unconvertible>> {
    let body = named_body(short)?;
    Some((|| {
        let shape = result_shape(op)?;
        let identity: Vec<MapResult> = (0..shape.len()).map(MapResult::Dim).collect();
        let inputs = (0..body.inputs)
            .map(|k| {
                let value: Value = op
                    .operand(k)
                    .map_err(|_| Unconvertible(format!("missing input #{k}")))?;
                map_input(value, &identity, &shape)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let replacement = if short == "add" {
            Replacement::BroadcastingAdd { inputs }
        } else {
            Replacement::Map { inputs, body }
        };
        Ok(Rewrite::single(op, replacement, "map"))
    })())
}

/// A `linalg.broadcast` of any value: its input read through the map that skips the
/// broadcast `dimensions`, brought to the result (`ipu.reshape` and `ipu.broadcast`).
pub fn broadcast_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    dimensions: &[i64],
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input: Value = op
        .operand(0)
        .map_err(|_| Unconvertible("missing input".into()))?;
    let shape = result_shape(op)?;
    let map: Vec<MapResult> = (0..shape.len())
        .filter(|d| !dimensions.contains(&(*d as i64)))
        .map(MapResult::Dim)
        .collect();
    let input = map_input(input, &map, &shape)?;
    Ok(Rewrite::single(
        op,
        Replacement::Map {
            inputs: vec![input],
            body: ScalarProgram::identity(),
        },
        "broadcast",
    ))
}

/// The conversion of a TOSA elementwise op or reduction no pattern covered: a map of its
/// scalar op over its inputs (TOSA broadcasts size-1 axes of equal-rank operands), or an
/// `ipu.reduce` over its `axis` (kept as size 1, as TOSA keeps it); `None` when `short` is
/// no such op.
pub fn tosa_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Option<Result<Rewrite<'c, 'a>, Unconvertible>> {
    use scalar::Unary;
    let unary = |ops: Vec<ScalarOp>| (1usize, ops);
    let (inputs, ops) = match short {
        "add" | "sub" | "mul" | "maximum" | "minimum" | "pow" => {
            let f = match short {
                "add" => Binary::Add,
                "sub" => Binary::Sub,
                "mul" => Binary::Mul,
                "maximum" => Binary::Max,
                "minimum" => Binary::Min,
                _ => Binary::Pow,
            };
            (
                2,
                vec![
                    ScalarOp::Input(0),
                    ScalarOp::Input(1),
                    ScalarOp::Binary(f, 0, 1),
                ],
            )
        }
        "rsqrt" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Rsqrt, 0)]),
        "exp" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Exp, 0)]),
        "log" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Log, 0)]),
        "tanh" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Tanh, 0)]),
        "erf" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Erf, 0)]),
        "abs" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Abs, 0)]),
        "negate" => unary(vec![ScalarOp::Input(0), ScalarOp::Unary(Unary::Neg, 0)]),
        "reciprocal" => unary(vec![
            ScalarOp::Float(1.0f32.to_bits()),
            ScalarOp::Input(0),
            ScalarOp::Binary(Binary::Div, 0, 1),
        ]),
        "sigmoid" => unary(vec![
            ScalarOp::Input(0),
            ScalarOp::Unary(Unary::Neg, 0),
            ScalarOp::Unary(Unary::Exp, 1),
            ScalarOp::Float(1.0f32.to_bits()),
            ScalarOp::Binary(Binary::Add, 3, 2),
            ScalarOp::Binary(Binary::Div, 3, 4),
        ]),
        // select(cond, a, b): the condition is held as floats 0 and 1.
        "select" => (
            3,
            vec![
                ScalarOp::Input(0),
                ScalarOp::Float(0),
                ScalarOp::CmpF(scalar::FloatPredicate::Une, 0, 1),
                ScalarOp::Input(1),
                ScalarOp::Input(2),
                ScalarOp::Select(2, 3, 4),
            ],
        ),
        "reduce_sum" | "reduce_max" | "reduce_min" | "reduce_product" => {
            return Some(tosa_reduce(op, short));
        }
        _ => return None,
    };
    let result = ops.len() - 1;
    let body = ScalarProgram {
        inputs,
        indices: 0,
        ops,
        result,
    };
    Some((|| {
        if short == "mul" {
            let shift = op.operand(2).ok().and_then(crate::convert::ir::splat_of);
            if shift.is_some_and(|s| s != 0.0) {
                return Err(Unconvertible(
                    "a mul with a non-zero shift (integer arithmetic)".into(),
                ));
            }
        }
        let shape = result_shape(op)?;
        let inputs = (0..inputs)
            .map(|k| {
                let value: Value = op
                    .operand(k)
                    .map_err(|_| Unconvertible(format!("missing operand #{k}")))?;
                let own = shape_of(value.r#type())
                    .ok_or_else(|| Unconvertible("an operand without a static shape".into()))?;
                if own.len() != shape.len() {
                    return Err(Unconvertible(format!(
                        "operand #{k} of rank {} for a rank-{} result (TOSA broadcasts equal ranks)",
                        own.len(),
                        shape.len()
                    )));
                }
                let map: Vec<MapResult> = own
                    .iter()
                    .enumerate()
                    .map(|(axis, &size)| {
                        if size == shape[axis] {
                            MapResult::Dim(axis)
                        } else {
                            MapResult::Zero
                        }
                    })
                    .collect();
                map_input(value, &map, &shape)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sum = short == "add"
            && (0..shape.len()).all(|a| inputs.iter().any(|i| i.expanded[a] == shape[a]));
        let replacement = if sum {
            Replacement::BroadcastingAdd { inputs }
        } else {
            Replacement::Map { inputs, body }
        };
        Ok(Rewrite::single(op, replacement, "map"))
    })())
}

/// A TOSA reduction over its `axis`, kept as size 1: the axis moved last (a transpose when it
/// is not), `ipu.reduce`, and the size-1 axis put back by a reshape.
fn tosa_reduce<'c, 'a>(
    op: OperationRef<'c, 'a>,
    short: &str,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let combiner = match short {
        "reduce_sum" => Combiner::Add,
        "reduce_max" => Combiner::Max,
        "reduce_min" => Combiner::Min,
        _ => Combiner::Mul,
    };
    let input: Value = op
        .operand(0)
        .map_err(|_| Unconvertible("missing input".into()))?;
    let own = shape_of(input.r#type())
        .ok_or_else(|| Unconvertible("an input without a static shape".into()))?;
    let axis = op
        .attribute("axis")
        .ok()
        .and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok())
        .map(|a| a.value())
        .and_then(|a| usize::try_from(a).ok())
        .filter(|&a| a < own.len())
        .ok_or_else(|| {
            Unconvertible("expected an 'axis' attribute within the input's rank".into())
        })?;
    let mut order: Vec<usize> = (0..own.len()).filter(|&a| a != axis).collect();
    order.push(axis);
    let map: Vec<MapResult> = (0..own.len())
        .map(|a| MapResult::Dim(order.iter().position(|&o| o == a).unwrap_or(a)))
        .collect();
    let loop_shape: Vec<i64> = order.iter().map(|&a| own[a]).collect();
    let input = map_input(input, &map, &loop_shape)?;
    Ok(Rewrite::single(
        op,
        Replacement::Reduce {
            inputs: vec![input],
            body: ScalarProgram::identity(),
            combiner,
            init: ReductionInit::Identity,
            loop_shape,
            as_float: false,
        },
        "reduce",
    ))
}
