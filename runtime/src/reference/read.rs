//! Reads a parsed module into a [`Program`]: the one place the reference touches MLIR.

use std::collections::HashMap;

use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationRef},
    Attribute, Module, RegionLike, Type, ValueLike,
};

use ipu_device::numerics::Fp8Format;
use ipu_dialects::ipu::{
    op_name, string_attribute, AttentionOp, CastOp, GeluOp, LayerNormOp, MatmulOp, RearrangeOp,
    RepeatOp,
};
use ipu_dialects::{ElementType, TensorInfo};

use super::ir::{Function, GeluApproximation, OpKind, Operation, Program, ValueId, ValueType};
use super::ReferenceError;

impl Program {
    /// Reads every `func.func` of `module`. Anything the reference cannot evaluate (an op of
    /// another dialect, a dynamic shape, an unknown element type, a malformed attribute) is an
    /// error naming the op and its location.
    pub fn from_module(module: &Module) -> Result<Program, ReferenceError> {
        let _formats = ipu_dialects::tensor::FormatCache::enable();
        let mut program = Program::new();
        let mut next = module.body().first_operation();
        while let Some(op) = next {
            if op_name(&op) == "func.func" {
                program.insert(read_function(op)?);
            }
            next = op.next_in_block();
        }
        Ok(program)
    }
}

fn location(op: &OperationRef) -> String {
    op.location().to_string()
}

fn unsupported(op: &OperationRef, detail: impl Into<String>) -> ReferenceError {
    ReferenceError::Unsupported {
        op: op_name(op),
        location: location(op),
        detail: detail.into(),
    }
}

/// The value type of an MLIR type; FP8 scales from the `#ipu.format` encoding.
fn value_type(op: &OperationRef, r#type: Type, what: &str) -> Result<ValueType, ReferenceError> {
    let info = TensorInfo::from_type(r#type)
        .map_err(|error| unsupported(op, format!("{what}: {error}")))?;
    let shape = info
        .shape
        .iter()
        .map(|&size| usize::try_from(size))
        .collect::<Result<Vec<usize>, _>>()
        .map_err(|_| {
            unsupported(
                op,
                format!("{what}: negative dimension in {:?}", info.shape),
            )
        })?;
    let scale = info.format.as_ref().map_or(0, |format| format.scale);
    let scale = checked_scale(op, scale, what)?;
    Ok(ValueType {
        shape,
        element: info.element,
        scale: if info.element.is_fp8() { scale } else { 0 },
    })
}

fn checked_scale(op: &OperationRef, scale: i64, what: &str) -> Result<i32, ReferenceError> {
    i32::try_from(scale)
        .ok()
        .filter(|scale| ipu_device::numerics::SCALE_RANGE.contains(scale))
        .ok_or_else(|| unsupported(op, format!("{what}: FP8 scale {scale} is outside -31..=31")))
}

fn key<'c>(value: impl ValueLike<'c>) -> usize {
    value.to_raw().ptr as usize
}

fn read_function(op: OperationRef) -> Result<Function, ReferenceError> {
    let name =
        string_attribute(&op, "sym_name").ok_or_else(|| unsupported(&op, "has no sym_name"))?;
    let block = op.region(0).ok().and_then(|region| region.first_block());
    let Some(block) = block else {
        return Ok(declaration(name));
    };
    let mut function = Function::new(&name, Vec::new());
    let mut ids: HashMap<usize, ValueId> = HashMap::new();
    for index in 0..block.argument_count() {
        let argument = block
            .argument(index)
            .map_err(|error| unsupported(&op, error.to_string()))?;
        let r#type = value_type(&op, argument.r#type(), &format!("argument {index}"))?;
        ids.insert(key(argument), ValueId(function.values.len()));
        function.values.push(r#type);
        function.arguments += 1;
    }
    let mut body = Vec::new();
    let mut next = block.first_operation();
    while let Some(inner) = next {
        next = inner.next_in_block();
        let inner_name = op_name(&inner);
        let operands = inner
            .operands()
            .enumerate()
            .map(|(index, value)| {
                ids.get(&key(value)).copied().ok_or_else(|| {
                    unsupported(
                        &inner,
                        format!("operand #{index} is not defined in @{name}'s block"),
                    )
                })
            })
            .collect::<Result<Vec<ValueId>, ReferenceError>>()?;
        if inner_name == "func.return" {
            function.set_returns(&operands);
            break;
        }
        let kind = op_kind(&inner)?;
        let mut results = Vec::new();
        for (index, result) in inner.results().enumerate() {
            let mut r#type = value_type(&inner, result.r#type(), &format!("result #{index}"))?;
            if let OpKind::Cast { scale } = kind {
                // A cast names the scale of its FP8 result; the format's scale otherwise.
                if r#type.element.is_fp8() && scale != 0 {
                    r#type.scale = scale;
                }
            }
            ids.insert(key(result), ValueId(function.values.len()));
            results.push(ValueId(function.values.len()));
            function.values.push(r#type);
        }
        body.push(Operation {
            kind,
            operands,
            results,
            location: location(&inner),
        });
    }
    function.body = Some(body);
    Ok(function)
}

/// A `func.func` without a body (callable by nothing).
fn declaration(name: String) -> Function {
    Function {
        name,
        values: Vec::new(),
        arguments: 0,
        result_types: Vec::new(),
        body: None,
        returns: Vec::new(),
    }
}

fn op_kind(op: &OperationRef) -> Result<OpKind, ReferenceError> {
    let op = *op;
    let name = op_name(&op);
    if let Ok(matmul) = MatmulOp::try_from(op) {
        return Ok(OpKind::Matmul {
            transpose_lhs: matmul.transpose_lhs(),
            transpose_rhs: matmul.transpose_rhs(),
        });
    }
    if name == "ipu.add" {
        return Ok(OpKind::Add);
    }
    if let Ok(gelu) = GeluOp::try_from(op) {
        return match gelu.approximate().as_str() {
            "erf" | "none" => Ok(OpKind::Gelu(GeluApproximation::Erf)),
            "tanh" => Ok(OpKind::Gelu(GeluApproximation::Tanh)),
            other => Err(unsupported(
                &op,
                format!("unknown approximate = \"{other}\" (expected erf or tanh)"),
            )),
        };
    }
    if name == "ipu.softmax" {
        return Ok(OpKind::Softmax);
    }
    if let Ok(layer_norm) = LayerNormOp::try_from(op) {
        let epsilon = layer_norm
            .epsilon()
            .ok_or_else(|| unsupported(&op, "requires a float attribute 'epsilon'"))?;
        return Ok(OpKind::LayerNorm { epsilon });
    }
    if let Ok(attention) = AttentionOp::try_from(op) {
        return Ok(OpKind::Attention {
            causal: attention.causal(),
            scale: attention.scale(),
        });
    }
    if let Ok(cast) = CastOp::try_from(op) {
        return Ok(OpKind::Cast {
            scale: checked_scale(&op, cast.scale(), "scale attribute")?,
        });
    }
    if let Ok(rearrange) = RearrangeOp::try_from(op) {
        let permutation = match op.attribute("permutation") {
            Err(_) => None,
            Ok(_) => {
                let axes = rearrange
                    .permutation()
                    .ok_or_else(|| unsupported(&op, "permutation is not an array<i64: ...>"))?;
                Some(
                    axes.iter()
                        .map(|&axis| usize::try_from(axis))
                        .collect::<Result<Vec<usize>, _>>()
                        .map_err(|_| {
                            unsupported(&op, format!("permutation {axes:?} has a negative axis"))
                        })?,
                )
            }
        };
        return Ok(OpKind::Rearrange { permutation });
    }
    if let Ok(repeat) = RepeatOp::try_from(op) {
        let body = repeat
            .body()
            .ok_or_else(|| unsupported(&op, "requires a symbol attribute 'body'"))?;
        let count = repeat
            .count()
            .ok_or_else(|| unsupported(&op, "requires an integer attribute 'count'"))?;
        let count = u64::try_from(count)
            .map_err(|_| unsupported(&op, format!("count {count} is negative")))?;
        return Ok(OpKind::Repeat { body, count });
    }
    match name.as_str() {
        "arith.constant" => Ok(OpKind::Constant {
            values: constant_values(&op)?,
        }),
        "func.call" => {
            let callee = op
                .attribute("callee")
                .ok()
                .and_then(ipu_dialects::ipu::symbol_value)
                .ok_or_else(|| unsupported(&op, "requires a symbol attribute 'callee'"))?;
            Ok(OpKind::Call { callee })
        }
        _ => Err(unsupported(
            &op,
            "the reference evaluator has no semantics for this op",
        )),
    }
}

/// The values of a dense `arith.constant`, decoded from its printed form: `dense<1.5>`
/// (splat), `dense<[[1.0, 2.0], ...]>` (nested lists) or `dense<"0x...">` (raw little-endian
/// element bytes, as MLIR prints large constants). Reading the text keeps this crate free of
/// `unsafe` raw-buffer access and handles f16 and FP8 elements the C API has no getters for.
fn constant_values(op: &OperationRef) -> Result<Vec<f64>, ReferenceError> {
    let attribute: Attribute = op
        .attribute("value")
        .map_err(|_| unsupported(op, "has no 'value' attribute"))?;
    let result = op.result(0).map_err(|_| unsupported(op, "has no result"))?;
    let element = value_type(op, result.r#type(), "result")?.element;
    let text = attribute.to_string();
    parse_dense(&text, element).map_err(|detail| unsupported(op, format!("{detail} in {text}")))
}

/// Parses the printed dense elements attribute `text` of `element` values.
pub(super) fn parse_dense(text: &str, element: ElementType) -> Result<Vec<f64>, String> {
    let body = text
        .strip_prefix("dense<")
        .ok_or("only dense constants are supported")?;
    // The payload ends at the `>` before the ` : tensor<...>` type.
    let end = body
        .rfind("> :")
        .or_else(|| body.rfind('>'))
        .ok_or("unterminated dense<...>")?;
    let payload = body[..end].trim();
    if let Some(hex) = payload
        .strip_prefix("\"0x")
        .and_then(|rest| rest.strip_suffix('"'))
    {
        return parse_hex(hex, element);
    }
    payload
        .split(|character: char| matches!(character, '[' | ']' | ',') || character.is_whitespace())
        .filter(|item| !item.is_empty())
        .map(|item| parse_number(item, element))
        .collect()
}

fn parse_number(item: &str, element: ElementType) -> Result<f64, String> {
    match item {
        "true" => return Ok(1.0),
        "false" => return Ok(0.0),
        _ => {}
    }
    if let Some(hex) = item.strip_prefix("0x") {
        // A float printed as its bit pattern (NaN, infinities).
        let bits = u64::from_str_radix(hex, 16).map_err(|_| format!("bad element '{item}'"))?;
        return Ok(decode_bits(bits, element));
    }
    item.parse::<f64>()
        .map_err(|_| format!("bad element '{item}'"))
}

fn decode_bits(bits: u64, element: ElementType) -> f64 {
    match element {
        ElementType::F32 => f64::from(f32::from_bits(bits as u32)),
        ElementType::F16 => half::f16::from_bits(bits as u16).to_f64(),
        ElementType::F8E4M3 => decode_fp8(bits as u8, Fp8Format::F143),
        ElementType::F8E5M2 => decode_fp8(bits as u8, Fp8Format::F152),
    }
}

fn decode_fp8(code: u8, format: Fp8Format) -> f64 {
    ipu_device::numerics::decode(code, format, 0).map_or(f64::NAN, f64::from)
}

fn parse_hex(hex: &str, element: ElementType) -> Result<Vec<f64>, String> {
    if !hex.len().is_multiple_of(2) || !hex.is_ascii() {
        return Err("hex payload has an odd number of digits".to_string());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|index| {
            u8::from_str_radix(&hex[index..index + 2], 16)
                .map_err(|_| "bad hex payload".to_string())
        })
        .collect::<Result<Vec<u8>, String>>()?;
    let width = element.bytes() as usize;
    if !bytes.len().is_multiple_of(width) {
        return Err(format!(
            "hex payload of {} bytes is not a whole number of {width}-byte elements",
            bytes.len()
        ));
    }
    Ok(bytes
        .chunks(width)
        .map(|chunk| {
            let bits = chunk
                .iter()
                .rev()
                .fold(0u64, |bits, &byte| (bits << 8) | u64::from(byte));
            decode_bits(bits, element)
        })
        .collect())
}
