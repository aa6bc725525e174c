//! Reading a body's scalar ops (an `ipu.map` body function, a `linalg.generic` region) into a
//! [`ScalarProgram`].

use std::collections::BTreeMap;

use melior::ir::{
    attribute::{FloatAttribute, IntegerAttribute},
    block::BlockLike,
    operation::OperationLike,
    r#type::IntegerType,
    BlockRef, OperationRef, Type, TypeLike, Value, ValueLike,
};

use super::{
    Binary, IntBinary, ScalarOp, ScalarProgram, ScalarType, Unary, FLOAT_PREDICATES, INT_PREDICATES,
};
use crate::ipu::op_name;

/// The input number a read gives a block argument of [`ArgumentRole::Unused`] (pruned away
/// unless the result depends on it, which is an error).
const UNUSED_ARGUMENT: usize = usize::MAX;

/// What a block argument of a body is when its scalar ops are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgumentRole {
    /// Float input `n` of the program.
    Input(usize),
    /// Result-axis index `n`.
    Index(usize),
    /// Not part of the program (e.g. a `linalg.generic`'s output argument): reading it is an
    /// error.
    Unused,
}

/// Why a body could not be read: the op (if any) and the reason.
#[derive(Debug)]
pub struct ScalarReadError<'c, 'a> {
    pub op: Option<OperationRef<'c, 'a>>,
    pub message: String,
}

fn value_key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// The key of `op`'s first result, or the read error naming the op.
fn result_key<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<usize, ScalarReadError<'c, 'a>> {
    op.result(0)
        .map(|result| value_key(result.into()))
        .map_err(|e| ScalarReadError {
            op: Some(op),
            message: e.to_string(),
        })
}

fn integer_of<'c, 'a>(op: OperationRef<'c, 'a>, attribute: &str) -> Option<i64> {
    IntegerAttribute::try_from(op.attribute(attribute).ok()?)
        .ok()
        .map(|a| a.value())
}

fn is_float_type(t: Type) -> bool {
    t.is_f16() || t.is_f32() || t.is_f64() || t.is_bf16()
}

fn is_f16(t: Type) -> bool {
    t.is_f16()
}

/// The scalar kind of an MLIR type, if it is one a program computes with.
pub fn scalar_type(t: Type) -> Option<ScalarType> {
    if is_float_type(t) {
        Some(ScalarType::Float)
    } else if t.is_index() {
        Some(ScalarType::Int)
    } else if t.is_integer() {
        let width = IntegerType::try_from(t).ok()?.width();
        Some(if width == 1 {
            ScalarType::Bool
        } else {
            ScalarType::Int
        })
    } else {
        None
    }
}

/// Reads the scalar ops of `block` into a program: block argument `i` is `roles(i)`,
/// `linalg.index d` is index `d` (then `indices` is the result rank, `rank`), and operand
/// `yielded` of the terminator (`func.return` or `linalg.yield`) is the result. The program
/// is not type-checked here: inputs read as floats may be substituted by the caller (a fused
/// producer's boolean), which then checks [`ScalarProgram::types`]. A value defined outside the
/// block must be a scalar `arith.constant` (frontends capture constants in bodies).
pub fn read_block<'c, 'a>(
    block: BlockRef<'c, 'a>,
    inputs: usize,
    rank: usize,
    roles: &dyn Fn(usize) -> ArgumentRole,
    yielded: usize,
) -> Result<ScalarProgram, ScalarReadError<'c, 'a>> {
    let mut program = ScalarProgram {
        inputs,
        indices: 0,
        ops: Vec::new(),
        result: 0,
    };
    let mut ids: BTreeMap<usize, usize> = BTreeMap::new();
    let mut argument_ops: BTreeMap<usize, usize> = BTreeMap::new();
    let mut index_ops: BTreeMap<usize, usize> = BTreeMap::new();
    let error = |op: Option<OperationRef<'c, 'a>>, message: String| ScalarReadError { op, message };
    let mut next = block.first_operation();
    let mut result = None;
    while let Some(op) = next {
        next = op.next_in_block();
        let name = op_name(&op);
        // Operands: earlier ops of the block, block arguments, or constants defined outside.
        let mut operands = Vec::with_capacity(op.operand_count());
        for operand in op.operands() {
            let key = value_key(operand);
            if let Some(&id) = ids.get(&key) {
                operands.push(id);
                continue;
            }
            let argument = (0..block.argument_count()).find(|&i| {
                block
                    .argument(i)
                    .map(|a| value_key(a.into()) == key)
                    .unwrap_or(false)
            });
            let id = match argument {
                Some(i) => {
                    if let Some(&id) = argument_ops.get(&i) {
                        id
                    } else {
                        let leaf = match roles(i) {
                            ArgumentRole::Input(n) => ScalarOp::Input(n),
                            ArgumentRole::Index(n) => {
                                program.indices = program.indices.max(rank);
                                ScalarOp::Index(n)
                            }
                            // Reading it is an error only if the result depends on it
                            // (checked once the program is pruned below).
                            ArgumentRole::Unused => ScalarOp::Input(UNUSED_ARGUMENT),
                        };
                        program.ops.push(leaf);
                        argument_ops.insert(i, program.ops.len() - 1);
                        program.ops.len() - 1
                    }
                }
                None => {
                    // A value from outside the block: only a scalar constant can be captured.
                    let defining = crate::ipu::producer_of(operand).ok_or_else(|| {
                        error(
                            Some(op),
                            "reads a value defined outside its body that is not a constant".into(),
                        )
                    })?;
                    let leaf = constant_leaf(defining).map_err(|m| error(Some(defining), m))?;
                    program.ops.push(leaf);
                    let id = program.ops.len() - 1;
                    ids.insert(key, id);
                    id
                }
            };
            operands.push(id);
        }
        let first_result_type = op.result(0).ok().map(|r| r.r#type());
        let new = match name.as_str() {
            "func.return" | "linalg.yield" => {
                let Some(&value) = operands.get(yielded) else {
                    return Err(error(
                        Some(op),
                        format!("returns {} values, not a value #{yielded}", operands.len()),
                    ));
                };
                result = Some(value);
                break;
            }
            "arith.constant" => constant_leaf(op).map_err(|m| error(Some(op), m))?,
            "linalg.index" => {
                let dim = integer_of(op, "dim")
                    .and_then(|d| usize::try_from(d).ok())
                    .filter(|&d| d < rank)
                    .ok_or_else(|| {
                        error(
                            Some(op),
                            format!("dim is not an axis of the rank-{rank} result"),
                        )
                    })?;
                program.indices = rank;
                if let Some(&id) = index_ops.get(&dim) {
                    ids.insert(result_key(op)?, id);
                    continue;
                }
                index_ops.insert(dim, program.ops.len());
                ScalarOp::Index(dim)
            }
            "arith.extf" | "arith.index_cast" | "arith.index_castui" | "arith.extsi"
            | "arith.trunci" => {
                // Value-preserving conversions between kinds the program already unifies.
                let id = operands[0];
                ids.insert(result_key(op)?, id);
                continue;
            }
            "arith.truncf" => {
                let to_f16 = first_result_type.map(is_f16).unwrap_or(false);
                if to_f16 {
                    ScalarOp::Unary(Unary::RoundF16, operands[0])
                } else {
                    // f64 -> f32 (the program computes in f32): no change.
                    let id = operands[0];
                    ids.insert(result_key(op)?, id);
                    continue;
                }
            }
            "arith.extui" => {
                let from_bool = op.operand(0).ok().and_then(|v| scalar_type(v.r#type()))
                    == Some(ScalarType::Bool);
                if from_bool {
                    ScalarOp::BoolToInt(operands[0])
                } else {
                    let id = operands[0];
                    ids.insert(result_key(op)?, id);
                    continue;
                }
            }
            "arith.sitofp" | "arith.uitofp" => {
                let from_bool = op.operand(0).ok().and_then(|v| scalar_type(v.r#type()))
                    == Some(ScalarType::Bool);
                if from_bool {
                    program.ops.push(ScalarOp::BoolToInt(operands[0]));
                    ScalarOp::IntToFloat(program.ops.len() - 1)
                } else {
                    ScalarOp::IntToFloat(operands[0])
                }
            }
            "arith.fptosi" => ScalarOp::FloatToInt(operands[0]),
            "arith.select" => ScalarOp::Select(operands[0], operands[1], operands[2]),
            "arith.cmpf" => {
                let p = integer_of(op, "predicate")
                    .and_then(|p| usize::try_from(p).ok())
                    .and_then(|p| FLOAT_PREDICATES.get(p).copied())
                    .ok_or_else(|| error(Some(op), "has no readable predicate".into()))?;
                ScalarOp::CmpF(p, operands[0], operands[1])
            }
            "arith.cmpi" => {
                let p = integer_of(op, "predicate")
                    .and_then(|p| usize::try_from(p).ok())
                    .and_then(|p| INT_PREDICATES.get(p).copied())
                    .ok_or_else(|| error(Some(op), "has no readable predicate".into()))?;
                ScalarOp::CmpI(p, operands[0], operands[1])
            }
            "math.fma" => ScalarOp::Fma(operands[0], operands[1], operands[2]),
            "math.ipowi" | "math.fpowi" => {
                return Err(error(
                    Some(op),
                    format!("'{name}' is not supported in an elementwise body"),
                ))
            }
            other => {
                if let Some(f) = UNARY.iter().find(|f| f.mlir() == other) {
                    ScalarOp::Unary(*f, operands[0])
                } else if let Some(f) = BINARY.iter().find(|f| f.mlir() == other) {
                    ScalarOp::Binary(*f, operands[0], operands[1])
                } else if let Some(f) = INT_BINARY.iter().find(|f| f.mlir() == other) {
                    ScalarOp::IntBinary(*f, operands[0], operands[1])
                } else {
                    return Err(error(
                        Some(op),
                        format!("'{other}' is not an op an elementwise body can compute (arith and math ops on scalars)"),
                    ));
                }
            }
        };
        program.ops.push(new);
        let id = program.ops.len() - 1;
        if let Ok(value) = op.result(0) {
            ids.insert(value_key(value.into()), id);
        }
    }
    // A returned block argument or captured constant has no op of its own yet: resolve it.
    let result = match result {
        Some(r) => r,
        None => {
            return Err(error(
                None,
                "the body has no terminator returning a value".into(),
            ))
        }
    };
    program.result = result;
    let program = program.pruned();
    if program.ops.contains(&ScalarOp::Input(UNUSED_ARGUMENT)) {
        return Err(error(
            None,
            "its result reads a block argument an elementwise body cannot read (an output's current value)".into(),
        ));
    }
    Ok(program)
}

const UNARY: [Unary; 17] = [
    Unary::Neg,
    Unary::Abs,
    Unary::Exp,
    Unary::Exp2,
    Unary::Expm1,
    Unary::Log,
    Unary::Log2,
    Unary::Log1p,
    Unary::Tanh,
    Unary::Erf,
    Unary::Erfc,
    Unary::Sqrt,
    Unary::Rsqrt,
    Unary::Sin,
    Unary::Cos,
    Unary::Floor,
    Unary::Ceil,
];

const BINARY: [Binary; 10] = [
    Binary::Add,
    Binary::Sub,
    Binary::Mul,
    Binary::Div,
    Binary::Rem,
    Binary::Max,
    Binary::Min,
    Binary::MaxNum,
    Binary::MinNum,
    Binary::Pow,
];

const INT_BINARY: [IntBinary; 10] = [
    IntBinary::Add,
    IntBinary::Sub,
    IntBinary::Mul,
    IntBinary::DivS,
    IntBinary::RemS,
    IntBinary::MaxS,
    IntBinary::MinS,
    IntBinary::And,
    IntBinary::Or,
    IntBinary::Xor,
];

/// A scalar `arith.constant` as a leaf op.
fn constant_leaf(op: OperationRef) -> Result<ScalarOp, String> {
    if op_name(&op) != "arith.constant" {
        return Err(format!("'{}' is not a scalar constant", op_name(&op)));
    }
    let value = op
        .attribute("value")
        .map_err(|_| "constant has no value".to_string())?;
    let kind = op.result(0).ok().and_then(|r| scalar_type(r.r#type()));
    match kind {
        Some(ScalarType::Float) => {
            let x = FloatAttribute::try_from(value)
                .map_err(|_| "float constant is not a float attribute".to_string())?
                .value();
            Ok(ScalarOp::Float((x as f32).to_bits()))
        }
        Some(ScalarType::Int) => Ok(ScalarOp::Int(
            IntegerAttribute::try_from(value)
                .map_err(|_| "integer constant is not an integer attribute".to_string())?
                .value(),
        )),
        Some(ScalarType::Bool) => Ok(ScalarOp::Bool(
            IntegerAttribute::try_from(value)
                .map_err(|_| "i1 constant is not an integer attribute".to_string())?
                .value()
                != 0,
        )),
        None => Err("constant of a type an elementwise body cannot compute with (a tensor or vector constant?)".into()),
    }
}
