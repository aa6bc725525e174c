//! 2-D convolutions (`linalg.conv_2d_nhwc_hwcf`, `linalg.conv_2d_nchw_fchw`): a matmul over
//! the input's windows. A patch embedding (stride = kernel, the input tiled exactly) takes its
//! windows by a reshape and an axis permutation; any other convolution gathers them with one
//! strided `ipu.slice` per kernel position, joined on the channel axis (im2col). Weights are
//! permuted to `[KH * KW * C, F]` at import when constant (f32), else on the device.

use melior::ir::{
    attribute::AttributeLike, operation::OperationLike, OperationRef, Value, ValueLike,
};

use super::ir::{check_ipu_tensor, shape_of};
use super::{Replacement, Rewrite, Unconvertible};

/// How a convolution lays out its input and filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConvLayout {
    /// Input `[N, H, W, C]`, filter `[KH, KW, C, F]`, result `[N, OH, OW, F]`.
    NhwcHwcf,
    /// Input `[N, C, H, W]`, filter `[F, C, KH, KW]`, result `[N, F, OH, OW]`.
    NchwFchw,
}

/// The static `[stride_h, stride_w]` / dilations of a convolution (a dense i64 attribute, or 1).
fn pair(op: OperationRef, name: &str) -> Result<[i64; 2], Unconvertible> {
    let Ok(attribute) = op.attribute(name) else {
        return Ok([1, 1]);
    };
    let raw = attribute.to_raw();
    // SAFETY: the attribute is live; elements are read only from a dense integer attribute of
    // two elements.
    let values = unsafe {
        if !mlir_sys::mlirAttributeIsADenseElements(raw)
            || mlir_sys::mlirElementsAttrGetNumElements(raw) != 2
        {
            None
        } else {
            let splat = mlir_sys::mlirDenseElementsAttrIsSplat(raw);
            let at = |i: isize| {
                mlir_sys::mlirDenseElementsAttrGetInt64Value(raw, if splat { 0 } else { i })
            };
            Some([at(0), at(1)])
        }
    };
    values.filter(|v| v.iter().all(|&x| x >= 1)).ok_or_else(|| {
        Unconvertible(format!(
            "'{name}' is {attribute}, not two positive integers"
        ))
    })
}

/// `linalg.conv_2d_*` with static strides and dilations and no padding (explicit padding is a
/// separate op): see [`Replacement::Conv2d`].
pub(super) fn conv_rewrite<'c, 'a>(
    op: OperationRef<'c, 'a>,
    layout: ConvLayout,
    empty_init_is_zero: bool,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let operand = |index: usize, role: &str| -> Result<Value<'c, 'a>, Unconvertible> {
        let value: Value = op
            .operand(index)
            .map_err(|_| Unconvertible(format!("expected {role} (operand #{index})")))?;
        check_ipu_tensor(value, role).map_err(Unconvertible)?;
        Ok(value)
    };
    let (input, filter, init) = (
        operand(0, "the input")?,
        operand(1, "the filter")?,
        operand(2, "the init")?,
    );
    let strides = pair(op, "strides")?;
    let dilations = pair(op, "dilations")?;
    let shape = |value: Value| shape_of(value.r#type()).unwrap_or_default();
    let (x, w, out) = (shape(input), shape(filter), shape(init));
    if x.len() != 4 || w.len() != 4 || out.len() != 4 {
        return Err(Unconvertible(
            "a 2-D convolution has rank-4 input, filter and result".into(),
        ));
    }
    // [N, H, W, C], [KH, KW, C, F], [N, OH, OW, F] whatever the layout.
    let (x, w, out) = match layout {
        ConvLayout::NhwcHwcf => (x.clone(), w.clone(), out.clone()),
        ConvLayout::NchwFchw => (
            vec![x[0], x[2], x[3], x[1]],
            vec![w[2], w[3], w[1], w[0]],
            vec![out[0], out[2], out[3], out[1]],
        ),
    };
    let expected: Vec<i64> = (0..2)
        .map(|a| (x[1 + a] - dilations[a] * (w[a] - 1) - 1).div_euclid(strides[a]) + 1)
        .collect();
    // The result may use fewer windows than the input holds (linalg allows it), not more.
    let fits = (0..2).all(|a| out[1 + a] >= 1 && out[1 + a] <= expected[a]);
    if x[3] != w[2] || out[0] != x[0] || out[3] != w[3] || !fits {
        return Err(Unconvertible(format!(
            "input {x:?}, filter {w:?} (as NHWC / HWCF) with strides {strides:?} and dilations {dilations:?} do not make the result {out:?}"
        )));
    }
    let addend = super::linalg::init_addend(init, empty_init_is_zero)?;
    Ok(Rewrite::single(
        op,
        Replacement::Conv2d {
            input,
            filter,
            addend,
            layout,
            strides,
            dilations,
        },
        "conv2d",
    ))
}
