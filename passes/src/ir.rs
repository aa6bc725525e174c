//! Small read-only queries on MLIR values and constants, shared by every pass: the op that
//! produced a value (without the race melior's failing `OperationResult::try_from` has with
//! passes on sibling functions), its users, splat constants, static shapes. A pass needs no
//! `unsafe` to ask these.

use ipu_dialects::{ipu::op_name, tensor::ElementType};
use melior::ir::{
    attribute::AttributeLike,
    operation::OperationLike,
    r#type::{DimSize, RankedTensorType, ShapedTypeLike, TypeLike},
    Attribute, OperationRef, Type, Value, ValueLike,
};
use melior::Context;

/// A stable identity for a value within one pass run (its address).
pub fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// The op that defines `value`, if it is an op result.
pub fn producer<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    ipu_dialects::ipu::producer_of(value)
}

/// The op that defines `value` if it is named `name`.
pub fn produced_by<'c, 'a>(value: Value<'c, 'a>, name: &str) -> Option<OperationRef<'c, 'a>> {
    producer(value).filter(|op| op_name(op) == name)
}

pub fn has_uses(value: Value) -> bool {
    // SAFETY: the value is live; a null first use means no uses.
    !unsafe { mlir_sys::mlirValueGetFirstUse(value.to_raw()) }
        .ptr
        .is_null()
}

/// The ops using `value`, once per use.
pub fn users<'c, 'a>(value: Value<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    let mut users = Vec::new();
    // SAFETY: the value is live; the use list is walked until its null end, and each owner is a
    // live op of the same IR.
    unsafe {
        let mut operand = mlir_sys::mlirValueGetFirstUse(value.to_raw());
        while !operand.ptr.is_null() {
            users.push(OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(
                operand,
            )));
            operand = mlir_sys::mlirOpOperandGetNextUse(operand);
        }
    }
    users
}

/// The static shape of a ranked tensor type.
pub fn shape_of(r#type: Type) -> Option<Vec<i64>> {
    let tensor = RankedTensorType::try_from(r#type).ok()?;
    (0..tensor.rank())
        .map(|axis| match tensor.dim_size(axis).ok()? {
            DimSize::Static(size) => i64::try_from(size).ok(),
            DimSize::Dynamic => None,
        })
        .collect()
}

/// Checks that `value` is a statically shaped tensor of an element type ipu computes in.
pub fn check_ipu_tensor(value: Value, role: &str) -> Result<(), String> {
    let r#type = value.r#type();
    let tensor = RankedTensorType::try_from(r#type)
        .map_err(|_| format!("{role} has type {type}, not a ranked tensor"))?;
    if !tensor.has_static_shape() {
        return Err(format!(
            "{role} type {type} has a dynamic shape; ipu needs static shapes"
        ));
    }
    if ElementType::from_type(tensor.element()).is_none() {
        return Err(format!(
            "{role} element type {} is not one of ipu's (f32, f16, f8E4M3FNUZ, f8E5M2FNUZ)",
            tensor.element()
        ));
    }
    Ok(())
}

/// A dense constant: the attribute of a `tosa.const` / `arith.constant`.
#[derive(Clone, Copy)]
pub struct DenseConstant<'c> {
    pub attribute: Attribute<'c>,
}

impl<'c> DenseConstant<'c> {
    /// The constant `value` holds, if it is produced by `tosa.const` or `arith.constant` with a
    /// dense elements attribute.
    pub fn of(value: Value<'c, '_>) -> Option<Self> {
        let op = producer(value)?;
        let attribute = match op_name(&op).as_str() {
            "tosa.const" => op.attribute("values").ok()?,
            "arith.constant" => op.attribute("value").ok()?,
            _ => return None,
        };
        // SAFETY: `attribute` is live; the predicate only compares its TypeID.
        unsafe { mlir_sys::mlirAttributeIsADenseElements(attribute.to_raw()) }
            .then_some(DenseConstant { attribute })
    }

    /// The splat value, for a float or integer splat.
    pub fn splat(&self) -> Option<f64> {
        let raw = self.attribute.to_raw();
        // SAFETY: `raw` is a dense elements attribute; the splat element is read only for a
        // splat, and only as a float when it is a float attribute.
        unsafe {
            if !mlir_sys::mlirDenseElementsAttrIsSplat(raw) {
                return None;
            }
            let element = mlir_sys::mlirDenseElementsAttrGetSplatValue(raw);
            if mlir_sys::mlirAttributeIsAFloat(element) {
                Some(mlir_sys::mlirFloatAttrGetValueDouble(element))
            } else if mlir_sys::mlirAttributeIsAInteger(element) {
                Some(mlir_sys::mlirIntegerAttrGetValueInt(element) as f64)
            } else {
                None
            }
        }
    }

    /// The same elements with the shape of `r#type` (same element count).
    pub fn reshaped(&self, r#type: Type<'c>) -> DenseConstant<'c> {
        // SAFETY: `attribute` is a dense elements attribute and `r#type` a shaped type with the
        // same number of elements (checked by the callers).
        let raw = unsafe {
            mlir_sys::mlirDenseElementsAttrReshapeGet(self.attribute.to_raw(), r#type.to_raw())
        };
        DenseConstant {
            attribute: unsafe { Attribute::from_raw(raw) },
        }
    }

    pub fn r#type(&self) -> Type<'c> {
        self.attribute.r#type()
    }
}

/// The splat float value of `value`, if it is a splat constant.
pub fn splat_of(value: Value) -> Option<f64> {
    DenseConstant::of(value)?.splat()
}

/// Whether `actual` matches `expected` to within the precision a frontend might have written it
/// in (f16 constants carry ~3 decimal digits).
pub fn close(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() <= 2e-3 * expected.abs().max(1e-30)
}

/// The f32 values of a dense constant (`None` for other element types).
fn f32_values(constant: &DenseConstant) -> Option<Vec<f32>> {
    let raw = constant.attribute.to_raw();
    let element = RankedTensorType::try_from(constant.r#type())
        .ok()?
        .element();
    if !element.is_f32() {
        return None;
    }
    let count: i64 = shape_of(constant.r#type())?.iter().product();
    // SAFETY: `raw` is a dense f32 elements attribute; positions are below its element count
    // (a splat answers every position).
    Some(
        (0..count)
            .map(|position| unsafe {
                mlir_sys::mlirDenseElementsAttrGetFloatValue(raw, position as isize)
            })
            .collect(),
    )
}

/// A dense f32 constant of `shape` holding `values`.
fn f32_constant<'c>(context: &'c Context, shape: &[i64], values: &[f32]) -> Option<Attribute<'c>> {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    let r#type = Type::parse(context, &format!("tensor<{}xf32>", dims.join("x")))?;
    // SAFETY: `values` holds exactly the type's element count of f32s, copied by MLIR.
    Some(unsafe {
        Attribute::from_raw(mlir_sys::mlirDenseElementsAttrFloatGet(
            r#type.to_raw(),
            values.len() as isize,
            values.as_ptr(),
        ))
    })
}

/// The per-head weights of a head-split projection: the constant f32 `weight`
/// (`[1, D, H * Dh]`) as `[H, D, Dh]`, `W'[h, d, j] = W[0, d, h * Dh + j]`, built in the
/// context of `root`.
pub(super) fn split_heads_weight<'c>(
    root: OperationRef<'c, '_>,
    weight: Value<'c, '_>,
    heads: i64,
    d: i64,
    dh: i64,
) -> Option<Attribute<'c>> {
    let values = f32_values(&DenseConstant::of(weight)?)?;
    let (h_count, d_count, dh_count) = (heads as usize, d as usize, dh as usize);
    let mut split_values = Vec::with_capacity(values.len());
    for h in 0..h_count {
        for row in 0..d_count {
            let base = row * h_count * dh_count + h * dh_count;
            split_values.extend_from_slice(values.get(base..base + dh_count)?);
        }
    }
    let context_ref = root.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    f32_constant(context, &[heads, d, dh], &split_values)
}

/// The per-head weights of a head merge, as frontends write it: the heads `input`
/// (`[H, S, Dh]`) unmerged to `unmerged` (`[1, H, S, Dh]`), merged back to `merged`
/// (`[1, S, H * Dh]`) and projected by the constant `weight` (`[1, H * Dh, E]`), which is
/// returned as `[H, Dh, E]` (the same elements), built in the context of `root`; `None`
/// unless every shape is that.
pub(super) fn merge_heads_weight<'c>(
    root: OperationRef<'c, '_>,
    (input, unmerged, merged): (Value<'c, '_>, Value<'c, '_>, Value<'c, '_>),
    weight: Value<'c, '_>,
) -> Option<Attribute<'c>> {
    let shape = |value: Value| shape_of(value.r#type());
    let in_shape = shape(input)?;
    let [heads, s, dh] = in_shape.as_slice() else {
        return None;
    };
    let e = *shape(weight)?.last()?;
    if shape(unmerged)? != [1, *heads, *s, *dh]
        || shape(merged)? != [1, *s, heads * dh]
        || shape(weight)? != [1, heads * dh, e]
    {
        return None;
    }
    let context_ref = root.context();
    // SAFETY: the context outlives the pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let per_head = Type::parse(
        context,
        &format!(
            "tensor<{heads}x{dh}x{e}x{}>",
            RankedTensorType::try_from(weight.r#type()).ok()?.element()
        ),
    )?;
    Some(DenseConstant::of(weight)?.reshaped(per_head).attribute)
}
