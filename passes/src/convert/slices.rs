//! `tensor.extract_slice`, `tensor.insert_slice` and `tensor.concat` with static operands:
//! windows and joins (`ipu.slice`, `ipu.concat`), for either importer.

use melior::ir::{operation::OperationLike, OperationRef, Value, ValueLike};

use super::ir::{check_ipu_tensor, produced_by, shape_of};
use super::{Replacement, Rewrite, Unconvertible};

/// The static `array<i64: ...>` attribute `name` of `op` (`static_offsets`, ...): one entry
/// per axis, none dynamic.
fn static_array(op: OperationRef, name: &str) -> Result<Vec<i64>, Unconvertible> {
    let attribute = op
        .attribute(name)
        .map_err(|_| Unconvertible(format!("expected a '{name}' attribute")))?;
    let items = ipu_dialects::ipu::i64_array(attribute)
        .ok_or_else(|| Unconvertible(format!("'{name}' is {attribute}, not array<i64>")))?;
    if items.contains(&i64::MIN) {
        return Err(Unconvertible(format!(
            "{name} {attribute} has a dynamic entry; only static slices are converted"
        )));
    }
    Ok(items)
}

fn value<'c, 'a>(
    op: OperationRef<'c, 'a>,
    index: usize,
    role: &str,
) -> Result<Value<'c, 'a>, Unconvertible> {
    let value: Value = op
        .operand(index)
        .map_err(|_| Unconvertible(format!("expected {role} (operand #{index})")))?;
    check_ipu_tensor(value, role).map_err(Unconvertible)?;
    Ok(value)
}

fn result_shape(op: OperationRef) -> Result<Vec<i64>, Unconvertible> {
    op.result(0)
        .ok()
        .and_then(|result| shape_of(result.r#type()))
        .ok_or_else(|| Unconvertible("the result is not a ranked tensor".into()))
}

/// The offsets, sizes and strides of a slice op whose only operands are `fixed` tensors.
fn window(op: OperationRef, fixed: usize) -> Result<[Vec<i64>; 3], Unconvertible> {
    if op.operand_count() != fixed {
        return Err(Unconvertible(
            "it has dynamic offsets, sizes or strides; only static slices are converted".into(),
        ));
    }
    Ok([
        static_array(op, "static_offsets")?,
        static_array(op, "static_sizes")?,
        static_array(op, "static_strides")?,
    ])
}

/// `tensor.extract_slice %x[offsets] [sizes] [strides]`: `ipu.slice` (then `ipu.reshape` for
/// a rank-reducing slice).
pub(super) fn extract_slice<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input = value(op, 0, "the source")?;
    let [offsets, sizes, strides] = window(op, 1)?;
    let shape = shape_of(input.r#type()).unwrap_or_default();
    if offsets.len() != shape.len() || sizes.len() != shape.len() || strides.len() != shape.len() {
        return Err(Unconvertible(format!(
            "the window has {} offsets, {} sizes and {} strides for a source of rank {}",
            offsets.len(),
            sizes.len(),
            strides.len(),
            shape.len()
        )));
    }
    if strides.iter().any(|&stride| stride < 1) || offsets.iter().any(|&offset| offset < 0) {
        return Err(Unconvertible(format!(
            "offsets {offsets:?} and strides {strides:?} must be non-negative and positive"
        )));
    }
    let elements = |shape: &[i64]| shape.iter().product::<i64>();
    if elements(&sizes) != elements(&result_shape(op)?) {
        return Err(Unconvertible(
            "the result's shape is not the window's sizes with size-1 axes dropped".into(),
        ));
    }
    Ok(Rewrite::single(
        op,
        Replacement::Slice {
            input,
            offsets,
            sizes,
            strides,
        },
        "slice",
    ))
}

/// `tensor.insert_slice %source into %dest[offsets] [sizes] [1, ...]`: the window joined with
/// `dest`'s parts around it (a `tensor.empty` dest reads as zeros).
pub(super) fn insert_slice<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let source = value(op, 0, "the source")?;
    let dest: Value = op
        .operand(1)
        .map_err(|_| Unconvertible("expected the destination (operand #1)".into()))?;
    let [offsets, sizes, strides] = window(op, 2)?;
    let shape = result_shape(op)?;
    if strides.iter().any(|&stride| stride != 1) {
        return Err(Unconvertible(format!(
            "strides {strides:?}: only unit-stride inserts are converted"
        )));
    }
    if offsets.len() != shape.len()
        || sizes.len() != shape.len()
        || (0..shape.len()).any(|a| offsets[a] < 0 || offsets[a] + sizes[a] > shape[a])
    {
        return Err(Unconvertible(format!(
            "the window {sizes:?} at {offsets:?} does not lie inside the destination {shape:?}"
        )));
    }
    let dest = match produced_by(dest, "tensor.empty") {
        Some(_) => None,
        None => {
            check_ipu_tensor(dest, "the destination").map_err(Unconvertible)?;
            Some(dest)
        }
    };
    Ok(Rewrite::single(
        op,
        Replacement::InsertSlice {
            source,
            dest,
            offsets,
            sizes,
        },
        "insert-slice",
    ))
}

/// `tensor.concat dim(d) %a, %b, ...`: a chain of `ipu.concat`.
pub(super) fn concat<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let axis = ipu_dialects::ipu::int_attribute(&op, "dim")
        .and_then(|axis| usize::try_from(axis).ok())
        .ok_or_else(|| Unconvertible("expected a non-negative integer 'dim' attribute".into()))?;
    let inputs = (0..op.operand_count())
        .map(|index| value(op, index, "an input"))
        .collect::<Result<Vec<_>, _>>()?;
    if inputs.is_empty() {
        return Err(Unconvertible("it has no inputs".into()));
    }
    Ok(Rewrite::single(
        op,
        Replacement::Concat { inputs, axis },
        "concat",
    ))
}
