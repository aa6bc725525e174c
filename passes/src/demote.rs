//! `ipu-demote-f32`: every f32 tensor of the module becomes f16 (function signatures, op
//! results, block arguments, constants, whose values are rounded to f16 once here). It is what
//! a user of an f32 export means by `--precision f16` or `fp8` on an IPU: the model computed in
//! F16 (FP8 GEMM inputs under the FP8 policy), its inputs and outputs exchanged with the host
//! as F16 (the host converts). `ipu run` / `ipu compile` run it on a model whose float tensors
//! are all f32 under those policies; scalar functions (map bodies) are left alone (they compute
//! in f32 by definition).

use melior::ir::{
    attribute::{AttributeLike, TypeAttribute},
    block::BlockLike,
    operation::OperationLike,
    r#type::{FunctionType, ShapedTypeLike},
    OperationRef, RegionLike, Type, TypeLike, ValueLike,
};

use ipu_dialects::diagnostics::op_error;

use crate::convert::tosa::ops_with_prefix;
use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `ipu-demote-f32`.
    pub struct DemoteF32Options for "ipu-demote-f32" {
        /// The element type f32 tensors become (f16).
        to: String = "f16".to_string(),
    }
}

/// The `ipu-demote-f32` pass.
#[derive(Clone)]
pub struct DemoteF32 {
    options: DemoteF32Options,
}

impl Pass for DemoteF32 {
    type Options = DemoteF32Options;
    const ARGUMENT: &'static str = "ipu-demote-f32";
    const SUMMARY: &'static str = "Make every f32 tensor an f16 tensor (constants rounded once)";

    fn new(options: DemoteF32Options) -> Self {
        DemoteF32 { options }
    }

    fn options(&self) -> &DemoteF32Options {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let fail = |message: String| {
            op_error(&op, &format!("{}: {message}", Self::ARGUMENT));
            PassFailure(message)
        };
        if self.options.to != "f16" {
            return Err(fail(format!(
                "to={} is not supported (f32 tensors become f16)",
                self.options.to
            )));
        }
        let changed = demote_module(op).map_err(fail)?;
        run.statistic("demoted", "Number of f32 tensor values made f16", changed);
        Ok(())
    }
}

/// The f16 form of `r#type` if it is an f32 tensor type (the encoding kept).
fn demoted(r#type: Type) -> Option<Type> {
    let text = r#type.to_string();
    let tensor = melior::ir::r#type::RankedTensorType::try_from(r#type).ok()?;
    if !tensor.element().is_f32() {
        return None;
    }
    let context = r#type.context();
    // SAFETY: the context outlives the pass run.
    let context = unsafe { context.to_ref() };
    // `tensor<AxBxf32>` or `tensor<AxBxf32, #enc>`: the element is the text after the last
    // `x` of the shape (or right after `<` for rank 0).
    let body = text.strip_prefix("tensor<")?;
    let (shape, rest) = match body.find("f32") {
        Some(at) => (&body[..at], &body[at + 3..]),
        None => return None,
    };
    Type::parse(context, &format!("tensor<{shape}f16{rest}"))
}

/// `attribute` (a dense f32 elements attribute) as a dense f16 one of `r#type`.
fn dense_f16(attribute: melior::ir::Attribute, r#type: Type) -> Option<mlir_sys::MlirAttribute> {
    let raw = attribute.to_raw();
    // SAFETY: `raw` is live; elements are read only from a dense f32 elements attribute, each
    // index within its element count, and the new attribute copies the values.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(raw) {
            return None;
        }
        let element = mlir_sys::mlirShapedTypeGetElementType(mlir_sys::mlirAttributeGetType(raw));
        if !mlir_sys::mlirTypeIsAF32(element) {
            return None;
        }
        let count = mlir_sys::mlirElementsAttrGetNumElements(raw);
        let splat = mlir_sys::mlirDenseElementsAttrIsSplat(raw);
        let bits: Vec<u16> = (0..count as isize)
            .map(|i| {
                let value =
                    mlir_sys::mlirDenseElementsAttrGetFloatValue(raw, if splat { 0 } else { i });
                half::f16::from_f32(value).to_bits()
            })
            .collect();
        Some(mlir_sys::mlirDenseElementsAttrFloat16Get(
            r#type.to_raw(),
            count as isize,
            bits.as_ptr(),
        ))
    }
}

/// Demotes every function of `module` with a tensor in its signature or body; returns the
/// number of values changed.
pub fn demote_module(module: OperationRef) -> Result<u64, String> {
    let mut changed = 0u64;
    for function in ops_with_prefix(module, "func.func") {
        let Ok(region) = function.region(0) else {
            continue;
        };
        let Some(entry) = region.first_block() else {
            continue;
        };
        // Block arguments and op results, nested regions included.
        let mut values: Vec<melior::ir::Value> = Vec::new();
        for index in 0..entry.argument_count() {
            if let Ok(argument) = entry.argument(index) {
                values.push(argument.into());
            }
        }
        let ops = ops_with_prefix(function, "");
        for op in ops
            .iter()
            .filter(|op| op.to_raw().ptr != function.to_raw().ptr)
        {
            for result in op.results() {
                values.push(result.into());
            }
        }
        for value in values {
            if let Some(to) = demoted(value.r#type()) {
                // SAFETY: the value is live; its users are retyped with it (all of the
                // function's values are).
                unsafe { mlir_sys::mlirValueSetType(value.to_raw(), to.to_raw()) };
                changed += 1;
            }
        }
        // Constants: their values rounded to f16 once.
        for op in ops
            .iter()
            .filter(|op| ipu_dialects::ipu::op_name(*op) == "arith.constant")
        {
            let (Ok(value), Ok(result)) = (op.attribute("value"), op.result(0)) else {
                continue;
            };
            let r#type = result.r#type();
            if value.r#type() == r#type {
                continue;
            }
            let Some(dense) = dense_f16(value, r#type) else {
                return Err(format!(
                    "constant {} at {} is not a dense f32 tensor the demotion can round",
                    value.r#type(),
                    op.location()
                ));
            };
            // SAFETY: the op is live and the attribute has the result's type.
            unsafe {
                let name = mlir_sys::mlirStringRefCreateFromCString(c"value".as_ptr());
                mlir_sys::mlirOperationSetAttributeByName(op.to_raw(), name, dense);
            }
        }
        // The signature from the retyped arguments and the returned values.
        let inputs: Vec<Type> = (0..entry.argument_count())
            .filter_map(|index| entry.argument(index).ok().map(|a| a.r#type()))
            .collect();
        let results: Vec<Type> = entry
            .terminator()
            .map(|ret| ret.operands().map(|v| v.r#type()).collect())
            .unwrap_or_default();
        let context = function.context();
        // SAFETY: the context outlives the pass run.
        let context = unsafe { context.to_ref() };
        let signature = FunctionType::new(context, &inputs, &results);
        let attribute = TypeAttribute::new(signature.into());
        // SAFETY: the op is a live func.func and the attribute a function type.
        unsafe {
            let name = mlir_sys::mlirStringRefCreateFromCString(c"function_type".as_ptr());
            mlir_sys::mlirOperationSetAttributeByName(function.to_raw(), name, attribute.to_raw());
        }
    }
    Ok(changed)
}
