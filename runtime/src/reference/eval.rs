//! Runs a [`Program`] function's [`Graph`] on host arrays: each op in f64, each result rounded
//! once onto its value's grid.

use ipu_dialects::graph::scalar::ScalarProgram;
use std::collections::BTreeMap;

use ipu_dialects::graph::{Graph, Op, OpKind, Origin, Value, ValueId};

use super::array::Array;
use super::program::Program;
use super::round::Grid;
use super::{ops, ReferenceError};

/// The most elements one value of the host reference may have (it computes in f64: 4 GiB);
/// more than any device holds, checked before anything that large is allocated.
const MAX_REFERENCE_ELEMENTS: usize = 1 << 29;

/// How deep `ipu.repeat` bodies may nest.
pub const MAX_CALL_DEPTH: usize = 64;

/// `tensor<4x8xf16>` (with ` scale=-3` for scaled FP8), for messages.
pub fn describe_value(value: &Value) -> String {
    let mut text = String::from("tensor<");
    for size in &value.shape {
        text.push_str(&format!("{size}x"));
    }
    text.push_str(value.element.mlir_name());
    text.push('>');
    if value.element.is_fp8() && value.scale != 0 {
        text.push_str(&format!(" scale={}", value.scale));
    }
    text
}

/// The grid a value's elements are rounded onto.
fn grid(value: &Value) -> Grid {
    Grid::of(value.element, value.scale)
}

/// A value's shape as an [`Array`] shape.
fn shape(value: &Value) -> Vec<usize> {
    value.shape.iter().map(|&size| size as usize).collect()
}

/// The number of elements of a value, saturating (a count beyond `usize` is over any budget).
fn elements(value: &Value) -> usize {
    value
        .shape
        .iter()
        .try_fold(1usize, |count, &size| {
            count.checked_mul(usize::try_from(size).ok()?)
        })
        .unwrap_or(usize::MAX)
}

/// Resolves an argument by name: `"2"`, `"arg2"` or `"%arg2"`, of `count` arguments.
fn argument_index(name: &str, count: usize) -> Option<usize> {
    let digits = name.trim_start_matches('%').trim_start_matches("arg");
    let index: usize = digits.parse().ok()?;
    (index < count).then_some(index)
}

fn invalid(graph: &Graph, index: usize, detail: String) -> ReferenceError {
    ReferenceError::Invalid {
        op: graph
            .ops
            .get(index)
            .map_or("op", |op| op.kind.name())
            .to_string(),
        location: graph.describe_op(index),
        detail,
    }
}

fn over_budget(count: usize) -> String {
    format!(
        "its result has {count} elements, over the host reference's budget of {MAX_REFERENCE_ELEMENTS} ({} GiB of f64)",
        (MAX_REFERENCE_ELEMENTS * 8) >> 30
    )
}

impl Program {
    /// Evaluates `function` with its arguments in order. Each argument is rounded onto its
    /// declared type's grid first (the device receives it in that precision). Returns the
    /// function's results.
    pub fn evaluate(
        &self,
        function: &str,
        arguments: &[Array],
    ) -> Result<Vec<Array>, ReferenceError> {
        evaluate_graph(self.function(function)?, function, arguments.to_vec(), 0)
    }

    /// Evaluates `function` with arguments given by name: `"0"`, `"arg0"` or `"%arg0"`. Every
    /// argument must be given exactly once.
    pub fn evaluate_named(
        &self,
        function: &str,
        arguments: &BTreeMap<String, Array>,
    ) -> Result<Vec<Array>, ReferenceError> {
        let graph = self.function(function)?;
        let declared = graph.arguments();
        let mut ordered: Vec<Option<Array>> = vec![None; declared.len()];
        for (name, array) in arguments {
            let index =
                argument_index(name, declared.len()).ok_or_else(|| ReferenceError::Argument {
                    function: function.to_string(),
                    detail: format!(
                        "no argument named '{name}' (it has {} arguments: arg0..)",
                        declared.len()
                    ),
                })?;
            if ordered[index].replace(array.clone()).is_some() {
                return Err(ReferenceError::Argument {
                    function: function.to_string(),
                    detail: format!("argument {index} is given twice"),
                });
            }
        }
        let ordered = ordered
            .into_iter()
            .zip(&declared)
            .enumerate()
            .map(|(index, (array, &id))| {
                array.ok_or_else(|| ReferenceError::Argument {
                    function: function.to_string(),
                    detail: format!(
                        "argument arg{index} ({}) is missing",
                        describe_value(&graph.values[id])
                    ),
                })
            })
            .collect::<Result<Vec<Array>, ReferenceError>>()?;
        evaluate_graph(graph, function, ordered, 0)
    }

    /// The graph of function `name`.
    pub fn function(&self, name: &str) -> Result<&Graph, ReferenceError> {
        if let Some(graph) = self.functions.get(name) {
            return Ok(graph);
        }
        if self.declarations.contains(name) {
            return Err(ReferenceError::NoBody {
                name: name.to_string(),
            });
        }
        let mut names: Vec<&String> = self.functions.keys().chain(&self.declarations).collect();
        names.sort();
        Err(ReferenceError::UnknownFunction {
            name: name.to_string(),
            available: names
                .iter()
                .map(|name| format!("@{name}"))
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// Evaluates `graph` (function or repeat body `name`, nested `depth` repeats deep).
fn evaluate_graph(
    graph: &Graph,
    name: &str,
    arguments: Vec<Array>,
    depth: usize,
) -> Result<Vec<Array>, ReferenceError> {
    if depth > MAX_CALL_DEPTH {
        return Err(ReferenceError::CallDepth {
            function: name.to_string(),
            limit: MAX_CALL_DEPTH,
        });
    }
    let mut values = bind_arguments(graph, name, arguments)?;
    let needed = needed_ops(graph);
    bind_constants(graph, name, &needed, &mut values)?;
    for (index, op) in graph.ops.iter().enumerate() {
        if !needed[index] {
            continue;
        }
        for &id in &op.results {
            let count = value(graph, index, id).map(elements)?;
            if count > MAX_REFERENCE_ELEMENTS {
                return Err(invalid(graph, index, over_budget(count)));
            }
        }
        // A repeat also reads its per-iteration stacks (after the carried values).
        let operands = op
            .reads()
            .map(|&id| {
                values.get(id).and_then(Option::as_ref).ok_or_else(|| {
                    invalid(
                        graph,
                        index,
                        format!("operand %{id} is used before it is defined"),
                    )
                })
            })
            .collect::<Result<Vec<&Array>, ReferenceError>>()?;
        let results = run(graph, index, &operands, depth)?;
        store_results(graph, index, results, &mut values)?;
    }
    graph
        .outputs
        .iter()
        .map(|&id| {
            values
                .get(id)
                .and_then(Option::clone)
                .ok_or_else(|| ReferenceError::Invalid {
                    op: "func.return".to_string(),
                    location: format!("@{name}"),
                    detail: format!("returns %{id}, which is never defined"),
                })
        })
        .collect()
}

/// The graph's values with the arguments set, each checked against its declared shape and
/// rounded onto its grid.
fn bind_arguments(
    graph: &Graph,
    name: &str,
    arguments: Vec<Array>,
) -> Result<Vec<Option<Array>>, ReferenceError> {
    let declared = graph.arguments();
    if arguments.len() != declared.len() {
        return Err(ReferenceError::Argument {
            function: name.to_string(),
            detail: format!(
                "expects {} arguments, given {}",
                declared.len(),
                arguments.len()
            ),
        });
    }
    let mut values: Vec<Option<Array>> = vec![None; graph.values.len()];
    for (index, (mut array, id)) in arguments.into_iter().zip(declared).enumerate() {
        let value = &graph.values[id];
        if array.shape != shape(value) {
            return Err(ReferenceError::Argument {
                function: name.to_string(),
                detail: format!(
                    "argument arg{index} has shape {:?}, declared {}",
                    array.shape,
                    describe_value(value)
                ),
            });
        }
        grid(value).round_all(&mut array.data);
        values[id] = Some(array);
    }
    Ok(values)
}

/// Which ops' results reach an output. Only those are evaluated (every op the reference knows
/// is pure): a dead constant, however large, is never materialized.
fn needed_ops(graph: &Graph) -> Vec<bool> {
    let mut live = vec![false; graph.values.len()];
    for &id in &graph.outputs {
        if let Some(flag) = live.get_mut(id) {
            *flag = true;
        }
    }
    let mut needed = vec![false; graph.ops.len()];
    for (index, op) in graph.ops.iter().enumerate().rev() {
        if op.results.iter().any(|&id| live.get(id) == Some(&true)) {
            needed[index] = true;
            for &id in op.reads() {
                if let Some(flag) = live.get_mut(id) {
                    *flag = true;
                }
            }
        }
    }
    needed
}

/// Sets every constant a needed op or an output reads: its data (a splat broadcast), rounded
/// onto its grid.
fn bind_constants(
    graph: &Graph,
    name: &str,
    needed: &[bool],
    values: &mut [Option<Array>],
) -> Result<(), ReferenceError> {
    let read = graph
        .ops
        .iter()
        .zip(needed)
        .filter(|(_, &needed)| needed)
        .flat_map(|(op, _)| op.reads())
        .chain(&graph.outputs);
    for &id in read {
        let Some(value) = graph.values.get(id) else {
            continue;
        };
        if value.origin != Origin::Constant || values[id].is_some() {
            continue;
        }
        let fail = |detail: String| ReferenceError::Invalid {
            op: "arith.constant".to_string(),
            location: format!("@{name} value %{id}"),
            detail,
        };
        let count = elements(value);
        if count > MAX_REFERENCE_ELEMENTS {
            return Err(fail(over_budget(count)));
        }
        let data = value
            .data
            .as_deref()
            .ok_or_else(|| fail("has no data (the module was read without decoding)".into()))?;
        let mut data = match data.len() {
            1 => vec![data[0]; count],
            length if length == count => data.to_vec(),
            length => {
                return Err(fail(format!(
                    "holds {length} values for {} ({count} elements)",
                    describe_value(value)
                )))
            }
        };
        grid(value).round_all(&mut data);
        values[id] = Some(Array {
            shape: shape(value),
            data,
        });
    }
    Ok(())
}

/// The value `id` that op `index` refers to.
fn value(graph: &Graph, index: usize, id: ValueId) -> Result<&Value, ReferenceError> {
    graph.values.get(id).ok_or_else(|| {
        invalid(
            graph,
            index,
            format!(
                "refers to value %{id} outside the graph's {}",
                graph.values.len()
            ),
        )
    })
}

/// Checks op `index`'s results against its result values and stores them, rounded.
fn store_results(
    graph: &Graph,
    index: usize,
    results: Vec<Array>,
    values: &mut [Option<Array>],
) -> Result<(), ReferenceError> {
    let op = &graph.ops[index];
    if results.len() != op.results.len() {
        return Err(invalid(
            graph,
            index,
            format!(
                "computed {} results, the op declares {}",
                results.len(),
                op.results.len()
            ),
        ));
    }
    for (&id, mut array) in op.results.iter().zip(results) {
        let declared = value(graph, index, id)?;
        if array.shape != shape(declared) {
            return Err(invalid(
                graph,
                index,
                format!(
                    "computes shape {:?}, its result type is {}",
                    array.shape,
                    describe_value(declared)
                ),
            ));
        }
        grid(declared).round_all(&mut array.data);
        values[id] = Some(array);
    }
    Ok(())
}

/// Op `index`'s results before rounding.
fn run(
    graph: &Graph,
    index: usize,
    operands: &[&Array],
    depth: usize,
) -> Result<Vec<Array>, ReferenceError> {
    let op = &graph.ops[index];
    let arity = |expected: usize| -> Result<(), ReferenceError> {
        if operands.len() == expected {
            Ok(())
        } else {
            Err(invalid(
                graph,
                index,
                format!("expects {expected} operands, found {}", operands.len()),
            ))
        }
    };
    let single = |result: Result<Array, String>| {
        result
            .map(|array| vec![array])
            .map_err(|detail| invalid(graph, index, detail))
    };
    match &op.kind {
        OpKind::Matmul {
            transpose_lhs,
            transpose_rhs,
        } => {
            arity(2)?;
            single(ops::matmul(
                operands[0],
                operands[1],
                *transpose_lhs,
                *transpose_rhs,
            ))
        }
        OpKind::Add => {
            arity(2)?;
            single(ops::add(operands[0], operands[1]))
        }
        OpKind::Gelu { tanh } => {
            arity(1)?;
            Ok(vec![ops::gelu(operands[0], *tanh)])
        }
        OpKind::Softmax => {
            arity(1)?;
            single(ops::softmax(operands[0]))
        }
        OpKind::LayerNorm { epsilon } => {
            arity(3)?;
            single(ops::layer_norm(
                operands[0],
                operands[1],
                operands[2],
                *epsilon,
            ))
        }
        OpKind::Attention { causal, scale } => {
            arity(3)?;
            single(ops::attention(
                operands[0],
                operands[1],
                operands[2],
                *causal,
                *scale,
            ))
        }
        OpKind::Cast { scale } => {
            arity(1)?;
            let input = value(graph, index, op.operands[0])?;
            Ok(vec![cast(input, *scale, operands[0])])
        }
        OpKind::Rearrange { permutation } => {
            arity(1)?;
            match permutation {
                Some(permutation) => single(ops::permute(operands[0], permutation)),
                // Format-only: same values in another layout.
                None => Ok(vec![operands[0].clone()]),
            }
        }
        OpKind::Reshape => {
            arity(1)?;
            // The same row-major elements in the result's shape.
            let shape = value(graph, index, op.results[0])?
                .shape
                .iter()
                .map(|&size| size as usize)
                .collect();
            single(Array::new(shape, operands[0].data.clone()).map_err(|e| e.to_string()))
        }
        OpKind::Repeat {
            count, name, body, ..
        } => repeat(graph, index, op, (*count, name, body), operands, depth),
        OpKind::Map { body, .. } => {
            let shape = result_shape(graph, index, op)?;
            single(ops::map(operands, &shape, body))
        }
        OpKind::Broadcast => {
            arity(1)?;
            let shape = result_shape(graph, index, op)?;
            single(ops::map(operands, &shape, &ScalarProgram::identity()))
        }
        OpKind::Reduce { combiner } => {
            arity(1)?;
            single(ops::reduce(operands[0], *combiner))
        }
        OpKind::Slice { offsets, strides } => {
            arity(1)?;
            let shape = result_shape(graph, index, op)?;
            single(ops::slice(operands[0], &shape, offsets, strides))
        }
        OpKind::Concat { axis } => {
            arity(2)?;
            single(ops::concat(operands[0], operands[1], *axis))
        }
    }
}

/// An `ipu.cast` of `array` (values of `input`) with the cast's `scale` attribute. The device
/// cast reads FP8 codes at the cast's scale (when it names one): a different scale from the one
/// the input was encoded with rescales the values.
fn cast(input: &Value, scale: i64, array: &Array) -> Array {
    let mut array = array.clone();
    let encoded = i64::from(input.scale);
    if input.element.is_fp8() && scale != 0 && scale != encoded {
        let factor = ((scale - encoded) as f64).exp2();
        array.data.iter_mut().for_each(|value| *value *= factor);
    }
    array
}

/// An `ipu.repeat`: `body` evaluated `count` times on the carried values.
fn repeat(
    graph: &Graph,
    index: usize,
    op: &Op,
    (count, name, body): (u64, &str, &Graph),
    operands: &[&Array],
    depth: usize,
) -> Result<Vec<Array>, ReferenceError> {
    // The carried values, then the per-iteration stacks: iteration i reads slice i of each.
    let (carried_operands, stacks) = operands.split_at(op.operands.len().min(operands.len()));
    let mut carried: Vec<Array> = carried_operands
        .iter()
        .map(|&array| array.clone())
        .collect();
    for iteration in 0..count {
        let mut arguments = carried;
        for stack in stacks {
            arguments
                .push(slice_of(stack, iteration).map_err(|detail| invalid(graph, index, detail))?);
        }
        carried = evaluate_graph(body, name, arguments, depth + 1)?;
        if carried.len() != op.operands.len() {
            return Err(invalid(
                graph,
                index,
                format!(
                    "body @{name} returns {} values for {} carried",
                    carried.len(),
                    op.operands.len()
                ),
            ));
        }
    }
    Ok(carried)
}

/// Slice `i` of `stack` along its leading axis.
fn slice_of(stack: &Array, i: u64) -> Result<Array, String> {
    let (&leading, rest) = stack
        .shape
        .split_first()
        .ok_or_else(|| "an iterated operand has no leading axis".to_string())?;
    let i = usize::try_from(i).unwrap_or(usize::MAX);
    if i >= leading {
        return Err(format!(
            "iteration {i} reads past the {leading} slices of an iterated operand"
        ));
    }
    let size: usize = rest.iter().product();
    Array::new(rest.to_vec(), stack.data[i * size..(i + 1) * size].to_vec())
        .map_err(|e| e.to_string())
}

/// The shape of op `index`'s (first) result.
fn result_shape(graph: &Graph, index: usize, op: &Op) -> Result<Vec<usize>, ReferenceError> {
    Ok(value(graph, index, op.results[0])?
        .shape
        .iter()
        .map(|&size| size as usize)
        .collect())
}
