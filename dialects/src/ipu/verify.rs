//! Semantic verifiers for `ipu` ops: what IRDL cannot say (shapes agree, broadcasting,
//! transpose flags, attention shapes, FP8 scale range, repeat carried types, optional
//! attributes). Each failure is an MLIR diagnostic at the op's location.

use std::collections::BTreeMap;

use melior::ir::{
    attribute::TypeAttribute,
    block::BlockLike,
    operation::OperationLike,
    r#type::{FunctionType, RankedTensorType, ShapedTypeLike},
    OperationRef, RegionLike, Type, ValueLike,
};

use super::*;
use crate::diagnostics::op_error;
use crate::tensor::{ElementType, TensorInfo};

/// Result of verifying one op: `Err(message)` is reported at the op.
type Check = Result<(), String>;

/// Signatures of the functions in a module, for `ipu.repeat` bodies.
pub type FunctionTable = BTreeMap<String, (Vec<String>, Vec<String>)>;

/// Collects the input and result types (as text) of every `func.func` directly in `module`.
pub fn function_table<'c, 'a>(module: OperationRef<'c, 'a>) -> FunctionTable {
    let mut table = FunctionTable::new();
    let Some(region) = module.regions().next() else {
        return table;
    };
    let Some(block) = region.first_block() else {
        return table;
    };
    let mut next = block.first_operation();
    while let Some(op) = next {
        if op_name(&op) == "func.func" {
            let name = string_attribute(&op, "sym_name");
            let signature = op
                .attribute("function_type")
                .ok()
                .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
                .and_then(|attribute| FunctionType::try_from(attribute.value()).ok());
            if let (Some(name), Some(signature)) = (name, signature) {
                let inputs = (0..signature.input_count())
                    .filter_map(|index| signature.input(index).ok().map(|t| t.to_string()))
                    .collect();
                let results = (0..signature.result_count())
                    .filter_map(|index| signature.result(index).ok().map(|t| t.to_string()))
                    .collect();
                table.insert(name, (inputs, results));
            }
        }
        next = op.next_in_block();
    }
    table
}

/// Verifies every `ipu` op nested in `root`, reporting each failure at its op. Returns whether
/// all passed.
pub fn verify_module<'c, 'a>(root: OperationRef<'c, 'a>) -> bool {
    let functions = function_table(root);
    let recursive = recursive_functions(root);
    let _formats = crate::tensor::FormatCache::enable();
    let mut ok = true;
    root.walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
        let mut result = verify_operation(op, &functions);
        if result.is_ok() && matches!(op_name(&op).as_str(), "ipu.repeat" | "ipu.scan") {
            let body = RepeatOp::try_from(op)
                .ok()
                .and_then(|view| view.body())
                .or_else(|| ScanOp::try_from(op).ok().and_then(|view| view.body()));
            if let Some(body) = body {
                if let Some(cycle) = recursive.get(&body) {
                    result = Err(format!(
                        "body @{body} repeats itself ({}): a repeat body may not reach its own repeat",
                        cycle.join(" -> ")
                    ));
                }
            }
        }
        if let Err(message) = result {
            op_error(&op, &message);
            ok = false;
        }
        melior::ir::operation::WalkResult::Advance
    });
    ok
}

/// The functions of `module` that reach themselves through `ipu.repeat` bodies and `func.call`
/// callees, each with one such cycle (`@f -> @g -> @f`). Planning and lowering follow repeat
/// bodies, so a cycle would recurse without end.
fn recursive_functions(module: OperationRef) -> BTreeMap<String, Vec<String>> {
    let mut calls: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let Some(block) = module
        .regions()
        .next()
        .and_then(|region| region.first_block())
    else {
        return BTreeMap::new();
    };
    let mut next = block.first_operation();
    while let Some(function) = next {
        next = function.next_in_block();
        if op_name(&function) != "func.func" {
            continue;
        }
        let Some(name) = string_attribute(&function, "sym_name") else {
            continue;
        };
        let callees = calls.entry(name).or_default();
        function.walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
            let callee = match op_name(&op).as_str() {
                "ipu.repeat" | "ipu.scan" => op.attribute("body").ok(),
                "func.call" => op.attribute("callee").ok(),
                _ => None,
            };
            if let Some(callee) = callee.and_then(crate::ipu::symbol_value) {
                callees.push(callee);
            }
            melior::ir::operation::WalkResult::Advance
        });
    }
    let mut recursive = BTreeMap::new();
    for start in calls.keys() {
        // Depth-first over the (small) call graph with an explicit stack: no recursion here
        // either, whatever the input.
        let mut stack: Vec<(String, Vec<String>)> = vec![(start.clone(), vec![start.clone()])];
        let mut seen = std::collections::BTreeSet::new();
        while let Some((function, path)) = stack.pop() {
            for callee in calls.get(&function).into_iter().flatten() {
                if callee == start {
                    let mut cycle: Vec<String> = path.iter().map(|f| format!("@{f}")).collect();
                    cycle.push(format!("@{start}"));
                    recursive.entry(start.clone()).or_insert(cycle);
                } else if seen.insert(callee.clone()) {
                    let mut longer = path.clone();
                    longer.push(callee.clone());
                    stack.push((callee.clone(), longer));
                }
            }
            if recursive.contains_key(start) {
                break;
            }
        }
    }
    recursive
}

/// Verifies one op; non-`ipu` ops pass.
pub fn verify_operation(op: OperationRef, functions: &FunctionTable) -> Check {
    let name = op_name(&op);
    let Some(short) = name.strip_prefix("ipu.") else {
        return Ok(());
    };
    verify_plan(op)?;
    match short {
        "matmul" => verify_matmul(op),
        "add" => verify_add(op),
        "gelu" => verify_gelu(op),
        "softmax" => verify_unary_same(op),
        "layer_norm" => verify_layer_norm(op),
        "attention" => verify_attention(op),
        "cast" => verify_cast(op),
        "rearrange" => verify_rearrange(op),
        "reshape" => verify_reshape(op),
        "repeat" => verify_repeat(op, functions),
        "stack" => verify_stack(op),
        "scan" => verify_scan(op, functions),
        "map" => verify_map(op, functions),
        "reduce" => verify_reduce(op),
        "broadcast" => verify_broadcast(op),
        "slice" => verify_slice(op),
        "concat" => verify_concat(op),
        _ => Ok(()),
    }
}

/// An operator plan, where an op carries one, must be a plan of some strategy.
fn verify_plan(op: OperationRef) -> Check {
    match op.attribute("plan") {
        Ok(plan) => crate::plan::OperatorPlan::parse(&plan.to_string())
            .map(|_| ())
            .map_err(|error| format!("malformed plan: {error}")),
        Err(_) => Ok(()),
    }
}

/// The most bytes one `ipu` tensor may hold: far beyond a C600's memory (1472 tiles x 624 KiB,
/// under 1 GiB), and small enough that no size computed from a shape overflows.
pub const MAX_TENSOR_BYTES: u64 = 1 << 40;

fn tensor(r#type: Type, what: &str) -> Result<TensorInfo, String> {
    let info = TensorInfo::from_type(r#type).map_err(|error| format!("{what}: {error}"))?;
    if let Some(axis) = info.shape.iter().position(|&size| size < 1) {
        return Err(format!(
            "{what}: dimension {axis} of {} is {}; ipu ops need every dimension >= 1",
            shape_text(&info.shape),
            info.shape[axis]
        ));
    }
    let bytes = info
        .shape
        .iter()
        .try_fold(u64::from(info.element.bytes()), |bytes, &size| {
            bytes.checked_mul(u64::try_from(size).ok()?)
        });
    match bytes {
        Some(bytes) if bytes <= MAX_TENSOR_BYTES => Ok(info),
        _ => Err(format!(
            "{what}: {} of {} is over the {MAX_TENSOR_BYTES} bytes an ipu tensor may hold",
            shape_text(&info.shape),
            info.element
        )),
    }
}

fn operand_info(op: OperationRef, index: usize, what: &str) -> Result<TensorInfo, String> {
    let value = op
        .operand(index)
        .map_err(|_| format!("is missing operand #{index} ({what})"))?;
    tensor(value.r#type(), what)
}

fn result_info(op: OperationRef) -> Result<TensorInfo, String> {
    let value = op
        .result(0)
        .map_err(|_| "is missing its result".to_string())?;
    tensor(value.r#type(), "result")
}

fn shape_text(shape: &[i64]) -> String {
    let items: Vec<String> = shape.iter().map(|size| size.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// NumPy broadcasting of two shapes.
pub fn broadcast_shapes(lhs: &[i64], rhs: &[i64]) -> Option<Vec<i64>> {
    let rank = lhs.len().max(rhs.len());
    let mut shape = vec![0; rank];
    for axis in 0..rank {
        let left = if axis + lhs.len() >= rank {
            lhs[axis + lhs.len() - rank]
        } else {
            1
        };
        let right = if axis + rhs.len() >= rank {
            rhs[axis + rhs.len() - rank]
        } else {
            1
        };
        shape[axis] = match (left, right) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => return None,
        };
    }
    Some(shape)
}

/// The result shape of `ipu.matmul` with the given flags, or why there is none.
pub fn matmul_shape(
    lhs: &[i64],
    rhs: &[i64],
    transpose_lhs: bool,
    transpose_rhs: bool,
) -> Result<Vec<i64>, String> {
    if lhs.len() < 2 || rhs.len() < 2 {
        return Err(format!(
            "operands must have rank >= 2, found lhs {} and rhs {}",
            shape_text(lhs),
            shape_text(rhs)
        ));
    }
    let (lhs_batch, lhs_matrix) = lhs.split_at(lhs.len() - 2);
    let (rhs_batch, rhs_matrix) = rhs.split_at(rhs.len() - 2);
    let (m, k_lhs) = if transpose_lhs {
        (lhs_matrix[1], lhs_matrix[0])
    } else {
        (lhs_matrix[0], lhs_matrix[1])
    };
    let (k_rhs, n) = if transpose_rhs {
        (rhs_matrix[1], rhs_matrix[0])
    } else {
        (rhs_matrix[0], rhs_matrix[1])
    };
    if k_lhs != k_rhs {
        return Err(format!(
            "contraction sizes differ: lhs {}{} contracts {k_lhs}, rhs {}{} contracts {k_rhs}",
            shape_text(lhs),
            if transpose_lhs { " (transposed)" } else { "" },
            shape_text(rhs),
            if transpose_rhs { " (transposed)" } else { "" },
        ));
    }
    let mut shape = broadcast_shapes(lhs_batch, rhs_batch).ok_or_else(|| {
        format!(
            "batch axes {} and {} do not broadcast",
            shape_text(lhs_batch),
            shape_text(rhs_batch)
        )
    })?;
    shape.extend([m, n]);
    Ok(shape)
}

fn check_flag_attribute(op: OperationRef, name: &str) -> Check {
    if let Ok(attribute) = op.attribute(name) {
        if flag_value(attribute).is_none() {
            return Err(format!(
                "attribute '{name}' must be a unit or bool attribute, found {attribute}"
            ));
        }
    }
    Ok(())
}

fn accumulator_allowed(input: ElementType, result: ElementType) -> bool {
    // FP8 products accumulate in F16 partials; F16 may produce F16 or F32.
    input == result
        || (input.is_fp8() && matches!(result, ElementType::F16 | ElementType::F32))
        || (input == ElementType::F16 && result == ElementType::F32)
}

fn verify_matmul(op: OperationRef) -> Check {
    check_flag_attribute(op, "transpose_lhs")?;
    check_flag_attribute(op, "transpose_rhs")?;
    let lhs = operand_info(op, 0, "lhs")?;
    let rhs = operand_info(op, 1, "rhs")?;
    let result = result_info(op)?;
    let expected = matmul_shape(
        &lhs.shape,
        &rhs.shape,
        flag(&op, "transpose_lhs"),
        flag(&op, "transpose_rhs"),
    )?;
    if expected != result.shape {
        return Err(format!(
            "result shape {} does not match the product shape {}",
            shape_text(&result.shape),
            shape_text(&expected)
        ));
    }
    if lhs.element != rhs.element {
        return Err(format!(
            "operand element types differ: lhs {} and rhs {}",
            lhs.element, rhs.element
        ));
    }
    if !accumulator_allowed(lhs.element, result.element) {
        return Err(format!(
            "result element type {} cannot hold a product of {} operands",
            result.element, lhs.element
        ));
    }
    Ok(())
}

fn verify_add(op: OperationRef) -> Check {
    let lhs = operand_info(op, 0, "lhs")?;
    let rhs = operand_info(op, 1, "rhs")?;
    let result = result_info(op)?;
    let expected = broadcast_shapes(&lhs.shape, &rhs.shape).ok_or_else(|| {
        format!(
            "operand shapes {} and {} do not broadcast",
            shape_text(&lhs.shape),
            shape_text(&rhs.shape)
        )
    })?;
    if expected != result.shape {
        return Err(format!(
            "result shape {} does not match the broadcast shape {}",
            shape_text(&result.shape),
            shape_text(&expected)
        ));
    }
    if lhs.element != rhs.element || lhs.element != result.element {
        return Err(format!(
            "element types must agree: lhs {}, rhs {}, result {}",
            lhs.element, rhs.element, result.element
        ));
    }
    Ok(())
}

fn verify_unary_same(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    if input.shape != result.shape || input.element != result.element {
        return Err(format!(
            "result {} must have the input's shape and element type {}",
            result.to_type_string(),
            input.to_type_string()
        ));
    }
    if input.rank() == 0 {
        return Err("input must have rank >= 1".to_string());
    }
    Ok(())
}

fn verify_gelu(op: OperationRef) -> Check {
    if let Ok(attribute) = op.attribute("approximate") {
        match string_attribute(&op, "approximate").as_deref() {
            Some("erf") | Some("tanh") => {}
            _ => {
                return Err(format!(
                    "attribute 'approximate' must be \"erf\" or \"tanh\", found {attribute}"
                ))
            }
        }
    }
    verify_unary_same(op)
}

fn verify_layer_norm(op: OperationRef) -> Check {
    verify_unary_same(op)?;
    let input = operand_info(op, 0, "input")?;
    let last = input.shape[input.rank() - 1];
    for (index, what) in [(1, "gamma"), (2, "beta")] {
        let vector = operand_info(op, index, what)?;
        if vector.shape != [last] {
            return Err(format!(
                "{what} must be 1-D of the normalized axis' size {last}, found {}",
                shape_text(&vector.shape)
            ));
        }
    }
    match float_attribute(&op, "epsilon") {
        Some(epsilon) if epsilon > 0.0 && epsilon.is_finite() => Ok(()),
        Some(epsilon) => Err(format!(
            "epsilon must be positive and finite, found {epsilon}"
        )),
        None => Err("requires a float attribute 'epsilon'".to_string()),
    }
}

fn verify_attention(op: OperationRef) -> Check {
    check_flag_attribute(op, "causal")?;
    let query = operand_info(op, 0, "query")?;
    let key = operand_info(op, 1, "key")?;
    let value = operand_info(op, 2, "value")?;
    let result = result_info(op)?;
    for (what, info) in [("query", &query), ("key", &key), ("value", &value)] {
        if info.rank() < 2 {
            return Err(format!(
                "{what} must have rank >= 2, found {}",
                shape_text(&info.shape)
            ));
        }
    }
    let rank = query.rank();
    if key.rank() != rank || value.rank() != rank {
        return Err(format!(
            "query, key and value must have the same rank, found {}, {} and {}",
            shape_text(&query.shape),
            shape_text(&key.shape),
            shape_text(&value.shape)
        ));
    }
    let batch = &query.shape[..rank - 2];
    if &key.shape[..rank - 2] != batch || &value.shape[..rank - 2] != batch {
        return Err("query, key and value must have the same batch axes".to_string());
    }
    let (s, d) = (query.shape[rank - 2], query.shape[rank - 1]);
    let (t, d_key) = (key.shape[rank - 2], key.shape[rank - 1]);
    let (t_value, e) = (value.shape[rank - 2], value.shape[rank - 1]);
    if d != d_key {
        return Err(format!(
            "query head size {d} differs from key head size {d_key}"
        ));
    }
    if t != t_value {
        return Err(format!(
            "key length {t} differs from value length {t_value}"
        ));
    }
    if flag(&op, "causal") && s != t {
        return Err(format!(
            "causal attention needs equal query and key lengths, found {s} and {t}"
        ));
    }
    let mut expected = batch.to_vec();
    expected.extend([s, e]);
    if result.shape != expected {
        return Err(format!(
            "result shape {} does not match the attention shape {}",
            shape_text(&result.shape),
            shape_text(&expected)
        ));
    }
    if let Ok(attribute) = op.attribute("scale") {
        match float_attribute(&op, "scale") {
            Some(scale) if scale > 0.0 && scale.is_finite() => {}
            Some(scale) => return Err(format!("scale must be positive and finite, found {scale}")),
            None => {
                return Err(format!(
                    "attribute 'scale' must be a float, found {attribute}"
                ))
            }
        }
    }
    if query.element != key.element || key.element != value.element {
        return Err("query, key and value must have the same element type".to_string());
    }
    Ok(())
}

fn verify_cast(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    if input.shape != result.shape {
        return Err(format!(
            "result shape {} must equal the input shape {}",
            shape_text(&result.shape),
            shape_text(&input.shape)
        ));
    }
    if op.attribute("scale").is_ok() {
        let Some(scale) = int_attribute(&op, "scale") else {
            return Err("attribute 'scale' must be an integer".to_string());
        };
        if !input.element.is_fp8() && !result.element.is_fp8() && scale != 0 {
            return Err(format!(
                "scale {scale} needs an FP8 side, but the cast is {} -> {}",
                input.element, result.element
            ));
        }
        if !CastOp::SCALE_RANGE.contains(&scale) {
            return Err(format!(
                "FP8 scale exponent {scale} is outside [{}, {}]",
                CastOp::SCALE_RANGE.start(),
                CastOp::SCALE_RANGE.end()
            ));
        }
    }
    Ok(())
}

/// Layout and shape ops keep the element type; precision goes through `ipu.cast`.
fn same_element(input: &TensorInfo, result: &TensorInfo) -> Check {
    if input.element != result.element {
        return Err(format!(
            "changes the element type from {} to {}; use ipu.cast",
            input.element, result.element
        ));
    }
    Ok(())
}

fn verify_reshape(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    same_element(&input, &result)?;
    let elements = |shape: &[i64]| shape.iter().map(|&size| size as u64).product::<u64>();
    if elements(&input.shape) != elements(&result.shape) {
        return Err(format!(
            "{} has {} elements, {} has {}: a reshape keeps the element count",
            shape_text(&input.shape),
            elements(&input.shape),
            shape_text(&result.shape),
            elements(&result.shape)
        ));
    }
    Ok(())
}

fn verify_rearrange(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    same_element(&input, &result)?;
    let expected = match op.attribute("permutation") {
        Err(_) => input.shape.clone(),
        Ok(attribute) => {
            let permutation = i64_array(attribute).ok_or_else(|| {
                format!("attribute 'permutation' must be array<i64: ...>, found {attribute}")
            })?;
            let mut seen = vec![false; input.rank()];
            if permutation.len() != input.rank() {
                return Err(format!(
                    "permutation {} has {} entries for an input of rank {}",
                    attribute,
                    permutation.len(),
                    input.rank()
                ));
            }
            for &axis in &permutation {
                let index = usize::try_from(axis)
                    .ok()
                    .filter(|index| *index < input.rank());
                match index {
                    Some(index) if !seen[index] => seen[index] = true,
                    _ => {
                        return Err(format!(
                            "{attribute} is not a permutation of 0..{}",
                            input.rank()
                        ))
                    }
                }
            }
            permutation
                .iter()
                .map(|&axis| input.shape[axis as usize])
                .collect()
        }
    };
    if result.shape != expected {
        return Err(format!(
            "result shape {} must be the (permuted) input shape {}",
            shape_text(&result.shape),
            shape_text(&expected)
        ));
    }
    Ok(())
}

fn verify_repeat(op: OperationRef, functions: &FunctionTable) -> Check {
    let count = int_attribute(&op, "count").ok_or("requires an integer attribute 'count'")?;
    if count < 1 {
        return Err(format!("count must be at least 1, found {count}"));
    }
    let view = RepeatOp::try_from(op).map_err(|_| "is not an ipu.repeat".to_string())?;
    let body = view.body().ok_or("requires a symbol attribute 'body'")?;
    let (inputs, results) = functions
        .get(&body)
        .ok_or_else(|| format!("body @{body} is not a func.func in this module"))?;
    let carried: Vec<String> = op
        .operands()
        .map(|value| value.r#type().to_string())
        .collect();
    let produced: Vec<String> = op
        .results()
        .map(|value| value.r#type().to_string())
        .collect();
    if &carried != inputs {
        return Err(format!(
            "carried values ({}) do not match the inputs of @{body} ({})",
            carried.join(", "),
            inputs.join(", ")
        ));
    }
    if &produced != results || results != inputs {
        return Err(format!(
            "carried types must flow through @{body} unchanged: inputs ({}), body results ({}), op results ({})",
            inputs.join(", "),
            results.join(", "),
            produced.join(", ")
        ));
    }
    for (index, value) in op.operands().enumerate() {
        tensor(value.r#type(), &format!("carried value #{index}"))?;
    }
    Ok(())
}

fn verify_stack(op: OperationRef) -> Check {
    if op.operand_count() != 1 || op.result_count() != 1 {
        return Err("takes one tensor and gives one !ipu.stacked".into());
    }
    let stacked = operand_info(op, 0, "stacked tensor")?;
    if stacked.shape.is_empty() {
        return Err("the stacked tensor needs a leading axis (its slices)".into());
    }
    Ok(())
}

/// The type of slice `slice` of a stacked tensor type: the type without its leading axis.
fn slice_type(stacked: Type) -> Option<String> {
    let tensor = RankedTensorType::try_from(stacked).ok()?;
    let info = TensorInfo::from_type(stacked).ok()?;
    let shape: Vec<u64> = info.shape.get(1..)?.iter().map(|&d| d as u64).collect();
    Some(
        RankedTensorType::new(&shape, ShapedTypeLike::element(&tensor), tensor.encoding())
            .to_string(),
    )
}

fn verify_scan(op: OperationRef, functions: &FunctionTable) -> Check {
    let count = int_attribute(&op, "count").ok_or("requires an integer attribute 'count'")?;
    if count < 1 {
        return Err(format!("count must be at least 1, found {count}"));
    }
    let view = ScanOp::try_from(op).map_err(|_| "is not an ipu.scan".to_string())?;
    let body = view.body().ok_or("requires a symbol attribute 'body'")?;
    let (inputs, results) = functions
        .get(&body)
        .ok_or_else(|| format!("body @{body} is not a func.func in this module"))?;
    if op.operand_count() < 1 || op.result_count() != 1 {
        return Err("carries one value (its first operand) into its one result".into());
    }
    operand_info(op, 0, "carried value")?;
    let carried_type = op
        .operand(0)
        .map_err(|e| e.to_string())?
        .r#type()
        .to_string();
    let result_type = op
        .result(0)
        .map_err(|e| e.to_string())?
        .r#type()
        .to_string();
    let mut expected = vec![carried_type.clone()];
    for (k, stack) in view.stacks().into_iter().enumerate() {
        let what = format!("stack #{}", k + 1);
        let stacked = stack.ok_or_else(|| format!("{what} is not made by an ipu.stack"))?;
        let info = tensor(stacked.r#type(), &what)?;
        if info.shape.first() != Some(&count) {
            return Err(format!(
                "{what} has shape {}: its leading axis must be the count, {count} (slice i is iteration i's)",
                shape_text(&info.shape)
            ));
        }
        expected.push(
            slice_type(stacked.r#type()).ok_or_else(|| format!("{what} is not a ranked tensor"))?,
        );
    }
    if &expected != inputs {
        return Err(format!(
            "the carried value and the stacks' slices ({}) do not match the inputs of @{body} ({})",
            expected.join(", "),
            inputs.join(", ")
        ));
    }
    if results[..] != [carried_type.clone()] || result_type != carried_type {
        return Err(format!(
            "the carried type must flow through @{body} unchanged: carried {carried_type}, body results ({}), op result {result_type}",
            results.join(", ")
        ));
    }
    Ok(())
}

/// Whether a type's text names a float scalar a map body computes with.
fn float_scalar(text: &str) -> bool {
    matches!(text, "f16" | "bf16" | "f32" | "f64")
}

fn verify_map(op: OperationRef, functions: &FunctionTable) -> Check {
    let view = MapOp::try_from(op).map_err(|_| "is not an ipu.map".to_string())?;
    let body = view.body().ok_or("requires a symbol attribute 'body'")?;
    let (arguments, results) = functions
        .get(&body)
        .ok_or_else(|| format!("body @{body} is not a func.func in this module"))?;
    let result = result_info(op)?;
    let inputs = op.operand_count();
    for index in 0..inputs {
        let info = operand_info(op, index, &format!("input #{index}"))?;
        if info.shape != result.shape {
            return Err(format!(
                "input #{index} has shape {}, not the result's {}; broadcast it with ipu.broadcast",
                shape_text(&info.shape),
                shape_text(&result.shape)
            ));
        }
    }
    let rank = result.shape.len();
    let floats = arguments.iter().take_while(|t| float_scalar(t)).count();
    let indices = arguments[floats..].iter().filter(|t| *t == "index").count();
    let signature_ok = floats == inputs
        && floats + indices == arguments.len()
        && (indices == 0 || indices == rank)
        && results.len() == 1
        && float_scalar(&results[0]);
    if !signature_ok {
        return Err(format!(
            "body @{body} has signature ({}) -> ({}); a map with {inputs} inputs and a rank-{rank} result needs {inputs} float arguments, then none or {rank} index arguments, and one float result",
            arguments.join(", "),
            results.join(", ")
        ));
    }
    Ok(())
}

fn verify_broadcast(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    if broadcast_shapes(&input.shape, &result.shape).as_deref() != Some(&result.shape[..]) {
        return Err(format!(
            "input shape {} does not broadcast to the result shape {}",
            shape_text(&input.shape),
            shape_text(&result.shape)
        ));
    }
    same_element(&input, &result)
}

fn verify_reduce(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    let view = ReduceOp::try_from(op).map_err(|_| "is not an ipu.reduce".to_string())?;
    if view.combiner().is_none() {
        let names: Vec<&str> = Combiner::ALL.iter().map(|c| c.name()).collect();
        return Err(format!(
            "combiner must be one of {}, found {}",
            names.join(", "),
            string_attribute(&op, "combiner").unwrap_or_else(|| "none".into())
        ));
    }
    let Some((_, kept)) = input.shape.split_last() else {
        return Err("input is rank 0; a reduction needs a last axis".into());
    };
    let mut expected = kept.to_vec();
    expected.push(1);
    if expected != result.shape {
        return Err(format!(
            "result shape {} is not the input shape {} with its last axis 1",
            shape_text(&result.shape),
            shape_text(&input.shape)
        ));
    }
    same_element(&input, &result)
}

/// The `array<i64: ...>` attribute `name` of `op`, one entry per axis of a rank-`rank` input.
fn axis_array(op: OperationRef, name: &str, rank: usize) -> Result<Vec<i64>, String> {
    let attribute = op
        .attribute(name)
        .map_err(|_| format!("requires an array<i64: ...> attribute '{name}'"))?;
    let items = i64_array(attribute)
        .ok_or_else(|| format!("attribute '{name}' must be array<i64: ...>, found {attribute}"))?;
    if items.len() != rank {
        return Err(format!(
            "{name} {attribute} has {} entries for an input of rank {rank}",
            items.len()
        ));
    }
    Ok(items)
}

fn verify_slice(op: OperationRef) -> Check {
    let input = operand_info(op, 0, "input")?;
    let result = result_info(op)?;
    same_element(&input, &result)?;
    if result.rank() != input.rank() {
        return Err(format!(
            "result {} must have the input's rank {}",
            shape_text(&result.shape),
            input.rank()
        ));
    }
    let offsets = axis_array(op, "offsets", input.rank())?;
    let strides = axis_array(op, "strides", input.rank())?;
    for axis in 0..input.rank() {
        let (offset, stride, size) = (offsets[axis], strides[axis], result.shape[axis]);
        if stride < 1 {
            return Err(format!("stride {stride} on axis {axis} must be at least 1"));
        }
        if offset < 0 {
            return Err(format!("offset {offset} on axis {axis} is negative"));
        }
        // The window's last element (an empty window reads nothing).
        let last = offset.saturating_add((size - 1).max(0).saturating_mul(stride));
        if size > 0 && last >= input.shape[axis] {
            return Err(format!(
                "axis {axis}: {size} elements from {offset} by {stride} end at {last}, past the input's {} ({})",
                input.shape[axis],
                shape_text(&input.shape)
            ));
        }
    }
    Ok(())
}

fn verify_concat(op: OperationRef) -> Check {
    let lhs = operand_info(op, 0, "lhs")?;
    let rhs = operand_info(op, 1, "rhs")?;
    let result = result_info(op)?;
    same_element(&lhs, &result)?;
    same_element(&rhs, &result)?;
    let axis = int_attribute(&op, "axis").ok_or("requires an integer attribute 'axis'")?;
    let rank = lhs.rank();
    let axis = usize::try_from(axis)
        .ok()
        .filter(|&axis| axis < rank)
        .ok_or_else(|| format!("axis {axis} is not an axis of rank {rank}"))?;
    let mut expected = lhs.shape.clone();
    let mut agrees = rhs.rank() == rank;
    for (a, size) in expected.iter_mut().enumerate() {
        if a == axis {
            *size += rhs.shape.get(a).copied().unwrap_or(0);
        } else {
            agrees &= rhs.shape.get(a) == Some(size);
        }
    }
    if !agrees {
        return Err(format!(
            "{} and {} differ on an axis other than {axis}",
            shape_text(&lhs.shape),
            shape_text(&rhs.shape)
        ));
    }
    if result.shape != expected {
        return Err(format!(
            "result shape {} must be {} ({} and {} joined on axis {axis})",
            shape_text(&result.shape),
            shape_text(&expected),
            shape_text(&lhs.shape),
            shape_text(&rhs.shape)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shapes(&[4, 1, 8], &[3, 1]), Some(vec![4, 3, 8]));
        assert_eq!(broadcast_shapes(&[8], &[2, 8]), Some(vec![2, 8]));
        assert_eq!(broadcast_shapes(&[3], &[4]), None);
    }

    #[test]
    fn matmul_shapes_with_flags_and_batches() {
        assert_eq!(
            matmul_shape(&[4, 16], &[16, 8], false, false),
            Ok(vec![4, 8])
        );
        assert_eq!(matmul_shape(&[16, 4], &[8, 16], true, true), Ok(vec![4, 8]));
        assert_eq!(
            matmul_shape(&[2, 1, 4, 16], &[3, 16, 8], false, false),
            Ok(vec![2, 3, 4, 8])
        );
        let error = matmul_shape(&[4, 16], &[8, 16], false, false).unwrap_err();
        assert!(error.contains("contraction sizes differ"), "{error}");
    }
}
