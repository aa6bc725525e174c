//! Runs a [`Program`] function on host arrays: each op in f64, each result rounded once onto
//! its type's grid.

use std::collections::BTreeMap;

use super::array::Array;
use super::ir::{Function, OpKind, Operation, Program, ValueId, ValueType};
use super::{ops, ReferenceError};

/// The most elements one value of the host reference may have (it computes in f64: 4 GiB);
/// more than any device holds, checked before anything that large is allocated.
const MAX_REFERENCE_ELEMENTS: usize = 1 << 29;

/// How deep `func.call` and `ipu.repeat` bodies may nest (a recursive module is an error, not a
/// stack overflow).
pub const MAX_CALL_DEPTH: usize = 64;

impl Program {
    /// Evaluates `function` with its arguments in order. Each argument is rounded onto its
    /// declared type's grid first (the device receives it in that precision). Returns the
    /// function's results.
    pub fn evaluate(
        &self,
        function: &str,
        arguments: &[Array],
    ) -> Result<Vec<Array>, ReferenceError> {
        self.call(function, arguments.to_vec(), 0)
    }

    /// Evaluates `function` with arguments given by name: `"0"`, `"arg0"` or `"%arg0"`. Every
    /// argument must be given exactly once.
    pub fn evaluate_named(
        &self,
        function: &str,
        arguments: &BTreeMap<String, Array>,
    ) -> Result<Vec<Array>, ReferenceError> {
        let callee = self.function(function)?;
        let mut ordered: Vec<Option<Array>> = vec![None; callee.arguments];
        for (name, array) in arguments {
            let index = callee
                .argument_index(name)
                .ok_or_else(|| ReferenceError::Argument {
                    function: function.to_string(),
                    detail: format!(
                        "no argument named '{name}' (it has {} arguments: arg0..)",
                        callee.arguments
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
            .enumerate()
            .map(|(index, array)| {
                array.ok_or_else(|| ReferenceError::Argument {
                    function: function.to_string(),
                    detail: format!(
                        "argument arg{index} ({}) is missing",
                        callee.values[index].describe()
                    ),
                })
            })
            .collect::<Result<Vec<Array>, ReferenceError>>()?;
        self.evaluate(function, &ordered)
    }

    fn function(&self, name: &str) -> Result<&Function, ReferenceError> {
        self.functions
            .get(name)
            .ok_or_else(|| ReferenceError::UnknownFunction {
                name: name.to_string(),
                available: self
                    .functions
                    .keys()
                    .map(|name| format!("@{name}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    fn call(
        &self,
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
        let function = self.function(name)?;
        let body = function
            .body
            .as_ref()
            .ok_or_else(|| ReferenceError::NoBody {
                name: name.to_string(),
            })?;
        if arguments.len() != function.arguments {
            return Err(ReferenceError::Argument {
                function: name.to_string(),
                detail: format!(
                    "expects {} arguments, given {}",
                    function.arguments,
                    arguments.len()
                ),
            });
        }
        let mut values: Vec<Option<Array>> = vec![None; function.values.len()];
        for (index, mut array) in arguments.into_iter().enumerate() {
            let declared = &function.values[index];
            if array.shape != declared.shape {
                return Err(ReferenceError::Argument {
                    function: name.to_string(),
                    detail: format!(
                        "argument arg{index} has shape {:?}, declared {}",
                        array.shape,
                        declared.describe()
                    ),
                });
            }
            declared.grid().round_all(&mut array.data);
            values[index] = Some(array);
        }
        // Only ops whose results reach a return are evaluated (every op the reference knows is
        // pure): a dead constant, however large, is never materialized.
        let mut live = vec![false; function.values.len()];
        for id in &function.returns {
            if let Some(flag) = live.get_mut(id.0) {
                *flag = true;
            }
        }
        let mut needed = vec![false; body.len()];
        for (position, operation) in body.iter().enumerate().rev() {
            if operation
                .results
                .iter()
                .any(|id| live.get(id.0) == Some(&true))
            {
                needed[position] = true;
                for id in &operation.operands {
                    if let Some(flag) = live.get_mut(id.0) {
                        *flag = true;
                    }
                }
            }
        }
        for (operation, _) in body.iter().zip(&needed).filter(|(_, &needed)| needed) {
            for id in &operation.results {
                let count = value_type(function, operation, *id)?.elements();
                if count > MAX_REFERENCE_ELEMENTS {
                    return Err(invalid(
                        operation,
                        format!(
                            "its result has {count} elements, over the host reference's budget of {MAX_REFERENCE_ELEMENTS} ({} GiB of f64)",
                            (MAX_REFERENCE_ELEMENTS * 8) >> 30
                        ),
                    ));
                }
            }
            let operands = operation
                .operands
                .iter()
                .map(|id| {
                    values.get(id.0).and_then(Option::as_ref).ok_or_else(|| {
                        invalid(
                            operation,
                            format!("operand %{} is used before it is defined", id.0),
                        )
                    })
                })
                .collect::<Result<Vec<&Array>, ReferenceError>>()?;
            let results = self.run(function, operation, &operands, depth)?;
            if results.len() != operation.results.len() {
                return Err(invalid(
                    operation,
                    format!(
                        "computed {} results, the op declares {}",
                        results.len(),
                        operation.results.len()
                    ),
                ));
            }
            for (id, mut array) in operation.results.iter().zip(results) {
                let declared = value_type(function, operation, *id)?;
                if array.shape != declared.shape {
                    return Err(invalid(
                        operation,
                        format!(
                            "computes shape {:?}, its result type is {}",
                            array.shape,
                            declared.describe()
                        ),
                    ));
                }
                declared.grid().round_all(&mut array.data);
                values[id.0] = Some(array);
            }
        }
        function
            .returns
            .iter()
            .map(|id| {
                values
                    .get(id.0)
                    .and_then(Option::clone)
                    .ok_or_else(|| ReferenceError::Invalid {
                        op: "func.return".to_string(),
                        location: format!("@{name}"),
                        detail: format!("returns %{}, which is never defined", id.0),
                    })
            })
            .collect()
    }

    /// One op's results before rounding.
    fn run(
        &self,
        function: &Function,
        operation: &Operation,
        operands: &[&Array],
        depth: usize,
    ) -> Result<Vec<Array>, ReferenceError> {
        let arity = |expected: usize| -> Result<(), ReferenceError> {
            if operands.len() == expected {
                Ok(())
            } else {
                Err(invalid(
                    operation,
                    format!("expects {expected} operands, found {}", operands.len()),
                ))
            }
        };
        let single = |result: Result<Array, String>| {
            result
                .map(|array| vec![array])
                .map_err(|detail| invalid(operation, detail))
        };
        match &operation.kind {
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
            OpKind::Gelu(approximation) => {
                arity(1)?;
                Ok(vec![ops::gelu(operands[0], *approximation)])
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
                let input_type = value_type(function, operation, operation.operands[0])?;
                let mut array = operands[0].clone();
                // The device cast reads FP8 codes at the cast's scale (when it names one):
                // a different scale from the one the input was encoded with rescales the values.
                if input_type.element.is_fp8() && *scale != 0 && *scale != input_type.scale {
                    let factor = f64::from(*scale - input_type.scale).exp2();
                    array.data.iter_mut().for_each(|value| *value *= factor);
                }
                Ok(vec![array])
            }
            OpKind::Rearrange { permutation } => {
                arity(1)?;
                match permutation {
                    Some(permutation) => single(ops::permute(operands[0], permutation)),
                    // Format-only: same values in another layout.
                    None => Ok(vec![operands[0].clone()]),
                }
            }
            OpKind::Repeat { body, count } => {
                let mut carried: Vec<Array> = operands.iter().map(|&array| array.clone()).collect();
                for _ in 0..*count {
                    carried = self.call(body, carried, depth + 1)?;
                    if carried.len() != operands.len() {
                        return Err(invalid(
                            operation,
                            format!(
                                "body @{body} returns {} values for {} carried",
                                carried.len(),
                                operands.len()
                            ),
                        ));
                    }
                }
                Ok(carried)
            }
            OpKind::Constant { values } => {
                arity(0)?;
                let id = operation
                    .results
                    .first()
                    .copied()
                    .ok_or_else(|| invalid(operation, "has no result".to_string()))?;
                let declared = value_type(function, operation, id)?;
                let count = declared.elements();
                let data = match values.len() {
                    1 => vec![values[0]; count],
                    length if length == count => values.clone(),
                    length => {
                        return Err(invalid(
                            operation,
                            format!(
                                "holds {length} values for {} ({count} elements)",
                                declared.describe()
                            ),
                        ))
                    }
                };
                Ok(vec![Array {
                    shape: declared.shape.clone(),
                    data,
                }])
            }
            OpKind::Call { callee } => {
                let arguments = operands.iter().map(|&array| array.clone()).collect();
                self.call(callee, arguments, depth + 1)
            }
        }
    }
}

fn value_type<'f>(
    function: &'f Function,
    operation: &Operation,
    id: ValueId,
) -> Result<&'f ValueType, ReferenceError> {
    function.values.get(id.0).ok_or_else(|| {
        invalid(
            operation,
            format!(
                "refers to value %{} outside the function's {}",
                id.0,
                function.values.len()
            ),
        )
    })
}

fn invalid(operation: &Operation, detail: String) -> ReferenceError {
    ReferenceError::Invalid {
        op: operation.kind.op_name().to_string(),
        location: operation.location.clone(),
        detail,
    }
}
