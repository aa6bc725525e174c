//! Between the IR and the planner: `func.func` bodies are read into [`crate::tiling::Graph`]s
//! (by `ipu_dialects::graph::read`, re-exported here) and a chosen plan is written back (plan and estimate attributes, formatted result types, explicit
//! `ipu.cast` / `ipu.rearrange` where an op reads a value in another format than its producer
//! left it). Shared by `ipu-lower-mid` and `ipu-select-finalist`.
//!
//! Conversions this module inserts carry the unit attribute `ipu.inserted`; reading looks
//! through them (so a planned module reads back as the graph that was planned) and
//! [`strip_inserted`] removes them before a different finalist is applied.

use std::collections::{BTreeMap, HashMap};

use ipu_dialects::{
    format::{Estimate, Format},
    ipu::{CastOp, RearrangeOp},
    tensor::TensorInfo,
};
use melior::{
    ir::{
        block::BlockLike, operation::OperationLike, operation::OperationMutLike,
        operation::OperationRefMut, Attribute, OperationRef, Type, Value, ValueLike,
    },
    Context,
};

use crate::planner::{
    layout::{block_size, canonical_dims},
    Finalist, Need, OpKind, ValueId,
};

pub use ipu_dialects::graph::read::{
    body_names, entry_block, functions, read_function, FunctionGraph, ReadError, INSERTED,
};

/// The `#ipu.format` of `need` on a tensor of `shape`: the canonical `[batch, rows, columns]`
/// partitions go to the last two axes and axis 0 (for rank >= 3).
pub fn format_of(shape: &[u64], need: &Need) -> Format {
    let rank = shape.len();
    let mut format = Format::row_major(rank);
    let parts = need.shards.parts;
    let mut set = |axis: usize, canonical: usize| {
        let p = parts[canonical].max(1);
        let block = block_size(shape[axis], p);
        format.blocks[axis] = block as i64;
        format.partitions[axis] = i64::from(p);
        format.padding[axis] = (block * u64::from(p)).saturating_sub(shape[axis]) as i64;
    };
    if rank >= 1 {
        set(rank - 1, 2);
    }
    if rank >= 2 {
        set(rank - 2, 1);
    }
    if rank >= 3 {
        set(0, 0);
        for (block, &size) in format.blocks.iter_mut().zip(shape).take(rank - 2).skip(1) {
            *block = size as i64;
        }
    }
    let _ = canonical_dims(shape);
    format.order = crate::element::order(need.format.order);
    format.memory = crate::element::memory(need.format.memory);
    format.scale = need.format.scale;
    format
}

/// The tensor type text of a value of `shape` held as `need`.
pub fn type_text(shape: &[u64], need: &Need) -> String {
    let info = TensorInfo {
        shape: shape.iter().map(|&s| s as i64).collect(),
        element: need.format.precision,
        format: Some(format_of(shape, need)),
    };
    info.to_type_string()
}

fn parse_type<'c>(context: &'c Context, text: &str) -> Result<Type<'c>, String> {
    Type::parse(context, text).ok_or_else(|| format!("internal: cannot parse planned type {text}"))
}

/// Planned types and attributes by their text: a long program repeats a few of them, and
/// parsing each op's anew dominated applying its plan.
#[derive(Default)]
struct Parsed<'c> {
    types: HashMap<String, Type<'c>>,
    attributes: HashMap<String, Attribute<'c>>,
}

impl<'c> Parsed<'c> {
    fn r#type(&mut self, context: &'c Context, text: String) -> Result<Type<'c>, String> {
        if let Some(parsed) = self.types.get(&text) {
            return Ok(*parsed);
        }
        let parsed = parse_type(context, &text)?;
        self.types.insert(text, parsed);
        Ok(parsed)
    }

    fn attribute(&mut self, context: &'c Context, text: String) -> Result<Attribute<'c>, String> {
        if let Some(parsed) = self.attributes.get(&text) {
            return Ok(*parsed);
        }
        let parsed = Attribute::parse(context, &text)
            .ok_or_else(|| format!("internal: cannot parse {text}"))?;
        self.attributes.insert(text, parsed);
        Ok(parsed)
    }
}

fn mark_inserted<'c>(
    context: &'c Context,
    mut op: melior::ir::Operation<'c>,
) -> melior::ir::Operation<'c> {
    op.set_attribute(INSERTED, Attribute::unit(context));
    op
}

/// Inserts before `consumer` the conversions from `value` to type `to`; returns the new value.
fn convert<'c, 'a>(
    context: &'c Context,
    consumer: OperationRef<'c, 'a>,
    value: Value<'c, 'a>,
    to: Type<'c>,
    conversions: &mut usize,
) -> Result<Value<'c, 'a>, String> {
    let from_info = TensorInfo::from_type(value.r#type()).map_err(|e| e.to_string())?;
    let to_info = TensorInfo::from_type(to).map_err(|e| e.to_string())?;
    let block = consumer
        .block()
        .ok_or("internal: consumer is not in a block")?;
    let location = consumer.location();
    let mut current = value;
    if from_info.element != to_info.element {
        let scale = if to_info.element.is_fp8() {
            to_info.format.as_ref().map_or(0, |f| f.scale)
        } else if from_info.element.is_fp8() {
            from_info.format.as_ref().map_or(0, |f| f.scale)
        } else {
            0
        };
        let mut middle = from_info.clone();
        middle.element = to_info.element;
        if let Some(format) = &mut middle.format {
            format.scale = scale;
        }
        let middle_type = parse_type(context, &middle.to_type_string())?;
        let cast = block.insert_operation_before(
            consumer,
            mark_inserted(
                context,
                CastOp::build(context, location, current, middle_type, scale),
            ),
        );
        *conversions += 1;
        current = cast.result(0).map_err(|e| e.to_string())?.into();
    }
    if current.r#type() != to {
        let rearrange = block.insert_operation_before(
            consumer,
            mark_inserted(
                context,
                RearrangeOp::build(context, location, current, to, None),
            ),
        );
        *conversions += 1;
        current = rearrange.result(0).map_err(|e| e.to_string())?.into();
    }
    Ok(current)
}

/// Removes the conversions an earlier planning inserted in `function` (uses go back to their
/// sources).
pub fn strip_inserted(function: OperationRef) {
    let Some(block) = entry_block(function) else {
        return;
    };
    let mut next = block.first_operation();
    while let Some(op) = next {
        next = op.next_in_block();
        if op.attribute(INSERTED).is_ok() {
            if let (Ok(source), Ok(result)) = (op.operand(0), op.result(0)) {
                // SAFETY: both values are live; the op is removed from its block and destroyed
                // after its uses are redirected, and nothing refers to it afterwards.
                unsafe {
                    mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), source.to_raw());
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
            }
        }
    }
}

/// Writes `finalist` into `function`: plan and estimate attributes, formatted result types and
/// conversions. Returns the number of conversion ops inserted.
pub fn apply<'c, 'a>(
    context: &'c Context,
    function: &FunctionGraph<'c, 'a>,
    finalist: &Finalist,
) -> Result<usize, String> {
    strip_inserted(function.function);
    let graph = &function.graph;
    let mut conversions = 0usize;
    let mut cache: BTreeMap<(ValueId, String), Value<'c, 'a>> = BTreeMap::new();
    let mut parsed = Parsed::default();
    for (index, op) in function.ops.iter().enumerate() {
        let candidate = finalist
            .plans
            .get(index)
            .ok_or_else(|| format!("internal: no plan for op {index}"))?;
        let graph_op = &graph.ops[index];
        let repeat = matches!(graph_op.kind, OpKind::Repeat { .. });
        for (operand, &value_id) in graph_op.operands.iter().enumerate() {
            let shape = &graph.values[value_id].shape;
            // A repeat's body signature fixes its carried types: keep them plain.
            let wanted = if repeat {
                let element = graph.values[value_id].element;
                let mut text = String::from("tensor<");
                for size in shape {
                    text.push_str(&format!("{size}x"));
                }
                text.push_str(element.mlir_name());
                text.push('>');
                text
            } else {
                type_text(shape, &candidate.needs[operand])
            };
            let current = op.operand(operand).map_err(|e| e.to_string())?;
            if current.r#type().to_string() == wanted {
                continue;
            }
            let new = match cache.get(&(value_id, wanted.clone())) {
                Some(value) => *value,
                None => {
                    let to = parsed.r#type(context, wanted.clone())?;
                    let value = convert(context, *op, current, to, &mut conversions)?;
                    cache.insert((value_id, wanted), value);
                    value
                }
            };
            // SAFETY: `op` is a live op of this function.
            let mut op_mut = unsafe { OperationRefMut::from_raw(op.to_raw()) };
            op_mut.set_operand(operand, new);
        }
        let estimate = &finalist.ops[index];
        let mut op_mut = unsafe { OperationRefMut::from_raw(op.to_raw()) };
        if !repeat {
            let result = op.result(0).map_err(|e| e.to_string())?;
            let shape = &graph.values[graph_op.results[0]].shape;
            result.set_type(parsed.r#type(context, type_text(shape, &candidate.output))?);
        }
        let plan = parsed.attribute(context, candidate.plan.to_string())?;
        op_mut.set_attribute("plan", plan);
        let estimate = Estimate {
            cycles: estimate.cycles as i64,
            exchange_cycles: estimate.exchange_cycles as i64,
            peak_standard_bytes: estimate.memory.standard as i64,
            peak_interleaved_bytes: estimate.memory.interleaved as i64,
            peak_total_bytes: estimate.memory.total() as i64,
            maximum_standard_allocation_bytes: estimate.memory.largest_standard as i64,
        };
        let estimate = parsed.attribute(context, estimate.to_string())?;
        op_mut.set_attribute("estimate", estimate);
        if let (Some(body), Some(body_plan)) =
            (function.bodies.get(&index), finalist.bodies.get(&index))
        {
            conversions += apply(context, body, body_plan)?;
        }
    }
    // Values leave the function in its declared result types.
    if let Some(block) = entry_block(function.function) {
        if let Some(terminator) = block.terminator() {
            let declared = function_result_types(function.function);
            for index in 0..terminator.operand_count() {
                let current = terminator.operand(index).map_err(|e| e.to_string())?;
                let Some(declared) = declared.get(index) else {
                    continue;
                };
                if current.r#type().to_string() != *declared {
                    let to = parse_type(context, declared)?;
                    let value = convert(context, terminator, current, to, &mut conversions)?;
                    let mut terminator_mut =
                        unsafe { OperationRefMut::from_raw(terminator.to_raw()) };
                    terminator_mut.set_operand(index, value);
                }
            }
        }
    }
    let program = &finalist.estimate;
    let estimate = Estimate {
        cycles: program.cycles as i64,
        exchange_cycles: program.exchange_cycles as i64,
        peak_standard_bytes: program.peak_standard as i64,
        peak_interleaved_bytes: program.peak_interleaved as i64,
        peak_total_bytes: program.peak_total as i64,
        maximum_standard_allocation_bytes: program.maximum_standard_allocation as i64,
    };
    if let Some(attribute) = Attribute::parse(context, &estimate.to_string()) {
        let mut function_mut = unsafe { OperationRefMut::from_raw(function.function.to_raw()) };
        function_mut.set_attribute("ipu.estimate", attribute);
    }
    Ok(conversions)
}

/// The declared result types of a `func.func`, as text.
fn function_result_types(function: OperationRef) -> Vec<String> {
    use melior::ir::{attribute::TypeAttribute, r#type::FunctionType};
    function
        .attribute("function_type")
        .ok()
        .and_then(|attribute| TypeAttribute::try_from(attribute).ok())
        .and_then(|attribute| FunctionType::try_from(attribute.value()).ok())
        .map(|signature| {
            (0..signature.result_count())
                .filter_map(|i| signature.result(i).ok().map(|t| t.to_string()))
                .collect()
        })
        .unwrap_or_default()
}
