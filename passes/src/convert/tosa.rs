//! `convert-tosa-to-ipu`: TOSA (as MLIR 22 defines it) to `ipu` ops.
//!
//! | TOSA | ipu |
//! |---|---|
//! | `matmul(a, b, zp_a = 0, zp_b = 0)` (3-D, batched) | `ipu.matmul(a, b)` |
//! | `add(a, b)` | `ipu.add(a, b)` |
//! | `transpose(x) {perms}` | `ipu.rearrange(x) {permutation}` |
//! | `const` | `arith.constant` (weights stay constants feeding ipu ops) |
//! | `reshape(const)` | the constant, reshaped |
//! | `reshape(x)` | `ipu.reshape(x)` |
//! | other elementwise ops (`sub`, `mul` with shift 0, `rsqrt`, `reciprocal`, `negate`, `exp`, `tanh`, `pow`, `select`, ...) and `reduce_sum` / `reduce_max` over any axis | `ipu.map` of the scalar op (operands' size-1 axes broadcast), `ipu.reduce` (the axis moved last) |
//! | `conv2d(x, w, b)` with a 1x1 kernel, stride 1, no padding, zero points 0 (TFLite's dense layer) | `ipu.reshape`, `ipu.matmul` with `w` as `[K, O]` (transposed at import), `ipu.add` of `b`, `ipu.reshape` |
//! | `exp(x - reduce_max(x)) * reciprocal(reduce_sum(exp(...)))` | `ipu.softmax(x)` |
//! | `0.5 * x * (1 + erf(x / sqrt 2))` | `ipu.gelu(x)` |
//! | `0.5 * x * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, or `x * sigmoid(2 sqrt(2/pi) (...))` | `ipu.gelu(x) {approximate = "tanh"}` |
//! | `(x - mean) * rsqrt(var + eps) * gamma + beta` over the last axis | `ipu.layer_norm(x, gamma, beta) {epsilon}` |
//! | `matmul(softmax(matmul(q, transpose(k, [0, 2, 1])) * c), v)` | `ipu.attention(q, k, v) {scale = c}` (scale 1 without the multiply) |
//! | head split `reshape(transpose(reshape(matmul(x, W), [1, S, H, Dh]), [0, 2, 1, 3]), [H, S, Dh])`, constant f32 `W` | `ipu.matmul(x, W')`, `W'` the `[H, D, Dh]` per-head columns of `W` |
//! | head merge `matmul(reshape(transpose(reshape(a, [1, H, S, Dh]), [0, 2, 1, 3]), [1, S, D]), W)`, constant `W` | per-head `ipu.matmul(a, W as [H, Dh, E])` summed over heads by a ones-matmul between two `ipu.rearrange`s |
//!
//! `tosa.fully_connected` no longer exists in MLIR 22's TOSA (frontends emit `reshape` +
//! `matmul` + `add` instead), so there is nothing to convert for it. `sub`, `mul`, `exp`,
//! `reciprocal`, `reduce_sum`, `reduce_max`, `rsqrt`, `pow`, `erf`, `tanh` and `sigmoid` have no
//! ipu op: they convert only as part of a recognized decomposition, and anywhere else the pass
//! reports the op and fails without changing the IR.

use std::collections::BTreeSet;

use ipu_dialects::{diagnostics::op_error, ipu::op_name};
use melior::{
    ir::{
        operation::{OperationLike, WalkOrder, WalkResult},
        OperationRef, ValueLike,
    },
    Context,
};

use super::ir::{check_ipu_tensor, splat_of, DenseConstant};
use super::{apply, tosa_patterns, Plan, Replacement, Rewrite, Unconvertible};
use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `convert-tosa-to-ipu`.
    pub struct ConvertTosaOptions for "convert-tosa-to-ipu" {
        /// Recognize softmax, GeLU and layer-norm decompositions (off: their ops are errors).
        recognize_patterns: bool = true,
    }
}

/// The `convert-tosa-to-ipu` pass.
#[derive(Clone)]
pub struct ConvertTosaToIpu {
    options: ConvertTosaOptions,
}

impl Pass for ConvertTosaToIpu {
    type Options = ConvertTosaOptions;
    const ARGUMENT: &'static str = "convert-tosa-to-ipu";
    const SUMMARY: &'static str =
        "Convert TOSA ops (and softmax, GeLU, layer-norm decompositions) to ipu ops";

    fn new(options: ConvertTosaOptions) -> Self {
        ConvertTosaToIpu { options }
    }

    fn options(&self) -> &ConvertTosaOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let tosa_ops = ops_with_prefix(op, "tosa.");
        let plan = match plan(&tosa_ops, self.options.recognize_patterns) {
            Ok(plan) => plan,
            Err(failures) => {
                for (failed, reason) in &failures {
                    op_error(failed, &reason.to_string());
                }
                return Err(PassFailure(format!(
                    "{} TOSA ops cannot be converted",
                    failures.len()
                )));
            }
        };
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let counts = apply(context, plan).map_err(|message| {
            op_error(&op, &message);
            PassFailure(message)
        })?;
        for (kind, count) in counts {
            run.statistic(kind, "Number of ipu values created, by kind", count);
        }
        Ok(())
    }
}

/// Every op nested in `root` whose name starts with `prefix`, in program order.
pub(crate) fn ops_with_prefix<'c, 'a>(
    root: OperationRef<'c, 'a>,
    prefix: &str,
) -> Vec<OperationRef<'c, 'a>> {
    let mut found = Vec::new();
    root.walk(WalkOrder::PreOrder, |op| {
        if op_name(&op).starts_with(prefix) {
            // SAFETY: the walk hands live ops of the IR `root` belongs to, which outlives `found`.
            found.push(unsafe { OperationRef::from_raw(op.to_raw()) });
        }
        WalkResult::Advance
    });
    found
}

/// Classifies every TOSA op; either the complete plan or every op that cannot be converted.
fn plan<'c, 'a>(
    tosa_ops: &[OperationRef<'c, 'a>],
    recognize: bool,
) -> Result<Plan<'c, 'a>, Vec<(OperationRef<'c, 'a>, Unconvertible)>> {
    let address = |op: &OperationRef| op.to_raw().ptr as usize;
    let mut covered = BTreeSet::new();
    let mut rewrites: Vec<(usize, Rewrite)> = Vec::new();
    if recognize {
        // From the last op backwards, so the largest pattern ending at an op wins (a layer norm
        // with its affine `* gamma + beta` rather than the bare normalization inside it).
        for (index, op) in tosa_ops.iter().enumerate().rev() {
            if covered.contains(&address(op)) {
                continue;
            }
            if let Some(rewrite) = tosa_patterns::recognize(*op) {
                if rewrite
                    .interior
                    .iter()
                    .any(|interior| covered.contains(&address(interior)))
                {
                    continue;
                }
                covered.insert(address(op));
                covered.extend(rewrite.interior.iter().map(address));
                rewrites.push((index, rewrite));
            }
        }
    }
    let mut plan = Plan::default();
    let mut failures = Vec::new();
    for (index, op) in tosa_ops.iter().enumerate() {
        if covered.contains(&address(op)) {
            continue;
        }
        match direct(*op) {
            Ok(Some(rewrite)) => rewrites.push((index, rewrite)),
            Ok(None) => plan.erase_if_unused.push(*op),
            Err(reason) => failures.push((*op, reason)),
        }
    }
    if !failures.is_empty() {
        return Err(failures);
    }
    rewrites.sort_by_key(|(index, _)| *index);
    plan.rewrites = rewrites.into_iter().map(|(_, rewrite)| rewrite).collect();
    Ok(plan)
}

/// [`Rewrite::single`], as the matcher's answer.
fn single<'c, 'a>(
    op: OperationRef<'c, 'a>,
    replacement: Replacement<'c, 'a>,
    kind: &'static str,
) -> Option<Rewrite<'c, 'a>> {
    Some(Rewrite::single(op, replacement, kind))
}

fn operand<'c, 'a>(
    op: OperationRef<'c, 'a>,
    index: usize,
) -> Result<melior::ir::Value<'c, 'a>, Unconvertible> {
    op.operand(index)
        .map_err(|_| Unconvertible(format!("expected an operand #{index}")))
}

fn check(value: melior::ir::Value, role: &str) -> Result<(), Unconvertible> {
    check_ipu_tensor(value, role).map_err(Unconvertible)
}

/// The conversion of one op outside any pattern: `Ok(None)` for an op that is erased once
/// unused (`tosa.const_shape`).
fn direct<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Option<Rewrite<'c, 'a>>, Unconvertible> {
    let name = op_name(&op);
    let short = name.trim_start_matches("tosa.");
    let result = || {
        op.result(0)
            .map(melior::ir::Value::from)
            .map_err(|_| Unconvertible("expected a result".into()))
    };
    match short {
        "const" => {
            let value = op
                .attribute("values")
                .map_err(|_| Unconvertible("expected a 'values' attribute".into()))?;
            Ok(single(op, Replacement::Constant { value }, "constant"))
        }
        "const_shape" => Ok(None),
        "matmul" => {
            let (lhs, rhs) = (operand(op, 0)?, operand(op, 1)?);
            check(lhs, "operand A")?;
            check(rhs, "operand B")?;
            check(result()?, "the result")?;
            for (index, role) in [(2, "A"), (3, "B")] {
                if splat_of(operand(op, index)?) != Some(0.0) {
                    return Err(Unconvertible(format!(
                        "the zero point of {role} is not a constant 0 (quantized matmul has no ipu equivalent)"
                    )));
                }
            }
            Ok(single(
                op,
                Replacement::Matmul {
                    lhs,
                    rhs,
                    addend: None,
                },
                "matmul",
            ))
        }
        "add" => {
            let (lhs, rhs) = (operand(op, 0)?, operand(op, 1)?);
            check(lhs, "the first operand")?;
            check(rhs, "the second operand")?;
            check(result()?, "the result")?;
            Ok(single(op, Replacement::Add { lhs, rhs }, "add"))
        }
        "transpose" => {
            let input = operand(op, 0)?;
            check(input, "the input")?;
            let perms = op
                .attribute("perms")
                .map_err(|_| Unconvertible("expected a 'perms' attribute".into()))?;
            let permutation = i32_array(perms)
                .ok_or_else(|| Unconvertible(format!("'perms' is {perms}, not array<i32>")))?;
            Ok(Some(Rewrite::transpose(op, input, permutation)))
        }
        "reshape" => {
            let input = operand(op, 0)?;
            let result = result()?;
            check(result, "the result")?;
            match DenseConstant::of(input) {
                Some(constant) => {
                    let value = constant.reshaped(result.r#type()).attribute;
                    Ok(single(op, Replacement::Constant { value }, "constant"))
                }
                None => Ok(single(op, Replacement::Reshape { input }, "reshape")),
            }
        }
        "conv2d" => conv_1x1(op).map(Some),
        _ => match super::linalg_general::tosa_rewrite(op, short) {
            Some(rewrite) => rewrite.map(Some),
            None => Err(Unconvertible(why_not(short).to_string())),
        },
    }
}

/// A `tosa.conv2d` with a 1x1 kernel, stride 1, no padding and zero points 0 (how TFLite
/// writes a dense layer, even `q @ k^T`): a matmul over the `N * H * W` rows of its NHWC
/// input with the `[O, K]` weight transposed, plus the bias.
fn conv_1x1<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let (input, weight, bias) = (operand(op, 0)?, operand(op, 1)?, operand(op, 2)?);
    check(input, "the input")?;
    let result = op
        .result(0)
        .map(melior::ir::Value::from)
        .map_err(|_| Unconvertible("expected a result".into()))?;
    check(result, "the result")?;
    let weight_shape = super::ir::shape_of(weight.r#type()).unwrap_or_default();
    let array = |name: &str| {
        op.attribute(name)
            .ok()
            .and_then(ipu_dialects::ipu::i64_array)
    };
    let plain = weight_shape.len() == 4
        && weight_shape[1] == 1
        && weight_shape[2] == 1
        && array("stride").as_deref() == Some(&[1, 1][..])
        && array("dilation").as_deref() == Some(&[1, 1][..])
        && array("pad").is_some_and(|pad| pad.iter().all(|&p| p == 0));
    if !plain {
        return Err(Unconvertible(format!(
            "a convolution with kernel {weight_shape:?} (only 1x1 kernels with stride 1, dilation 1 and no padding are converted, as matmuls)"
        )));
    }
    for (index, role) in [(3, "input"), (4, "weight")] {
        if splat_of(operand(op, index)?) != Some(0.0) {
            return Err(Unconvertible(format!(
                "the {role} zero point is not a constant 0 (quantized convolution has no ipu equivalent)"
            )));
        }
    }
    let weight = DenseConstant::of(weight).ok_or_else(|| {
        Unconvertible(
            "the weight is not a constant (a 1x1 convolution's weight is converted as a constant)"
                .into(),
        )
    })?;
    check(bias, "the bias")?;
    Ok(Rewrite::single(
        op,
        Replacement::Conv1x1 {
            input,
            weight,
            bias,
        },
        "matmul",
    ))
}

/// Why a TOSA op without an ipu equivalent of its own is rejected.
fn why_not(short_name: &str) -> &'static str {
    match short_name {
        "fully_connected" => {
            "tosa.fully_connected is not part of MLIR 22's TOSA; use reshape + matmul + add"
        }
        _ => "it has no ipu equivalent",
    }
}

/// The elements of an `array<i32: ...>` attribute.
fn i32_array(attribute: melior::ir::Attribute) -> Option<Vec<i64>> {
    use melior::ir::attribute::AttributeLike;
    let raw = attribute.to_raw();
    // SAFETY: elements are read only from a dense i32 array, within its element count.
    unsafe {
        if !mlir_sys::mlirAttributeIsADenseI32Array(raw) {
            return None;
        }
        let count = mlir_sys::mlirDenseArrayGetNumElements(raw);
        Some(
            (0..count)
                .map(|index| i64::from(mlir_sys::mlirDenseI32ArrayGetElement(raw, index)))
                .collect(),
        )
    }
}
