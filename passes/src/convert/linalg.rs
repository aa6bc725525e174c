//! `convert-linalg-to-ipu`: linalg on tensors to `ipu` ops.
//!
//! | linalg | ipu |
//! |---|---|
//! | `matmul` / `batch_matmul` `outs(fill(0))` | `ipu.matmul(a, b)` |
//! | `matmul` / `batch_matmul` `outs(fill(c))`, `c != 0` | `ipu.add(ipu.matmul(a, b), splat c)` |
//! | `matmul` / `batch_matmul` `outs(t)` | `ipu.add(ipu.matmul(a, b), t)` (linalg accumulates) |
//! | `add ins(a, b)`, or a `generic` adding two inputs with NumPy-style broadcasting maps | `ipu.add(a, b)` |
//! | `transpose {permutation}` | `ipu.rearrange {permutation}` |
//! | `broadcast` of a constant | the constant with size-1 axes (ipu ops broadcast like NumPy) |
//! | `softmax dimension(last)` | `ipu.softmax` |
//! | `exp(x - max(x)) / sum(exp(x - max(x)))` over the last axis | `ipu.softmax(x)` |
//! | `(x - mean) * rsqrt(var + eps) * gamma + beta` over the last axis | `ipu.layer_norm(x, gamma, beta) {epsilon}` |
//! | `0.5 x (1 + erf(x / sqrt 2))` | `ipu.gelu(x)` |
//! | `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` | `ipu.gelu(x) {approximate = "tanh"}` |
//! | `batch_matmul(softmax(batch_matmul(q, transpose(k, [0, 2, 1])) * c), v)` | `ipu.attention(q, k, v) {scale = c}` |
//! | head split `collapse_shape(transpose(expand_shape(batch_matmul(x, W)), [0, 2, 1, 3]))` to `[H, S, Dh]`, constant f32 `W: [1, D, H * Dh]` | `ipu.matmul(x, W')`, `W'` the `[H, D, Dh]` per-head columns of `W` |
//! | head merge `batch_matmul(collapse_shape(transpose(expand_shape(a), [0, 2, 1, 3])), W)`, constant `W: [1, H * Dh, E]` | per-head `ipu.matmul` summed over heads (as in `convert-tosa-to-ipu`) |
//! | `fill` | as an init: disappears with its users; as a tensor: a splat constant |
//! | any other elementwise `generic` (a chain or web of them), named elementwise ops (`exp`, `sub`, ...) | `ipu.map` with a scalar body function (`ipu.add` for a sum of two inputs, `ipu.gelu` for a body that computes GeLU) |
//! | a `generic` reduction over one loop | `ipu.map` of its per-element part, `ipu.reduce`, a combine with its init |
//! | `broadcast` of a value, broadcasting / transposing / constant-index input maps | `ipu.broadcast`, `ipu.rearrange`, `ipu.reshape` |
//! | `copy`; `tensor.expand_shape` / `collapse_shape` | the input; `ipu.reshape` |
//! | `tensor.extract_slice` (static) | `ipu.slice` (+ `ipu.reshape` when rank-reducing) |
//! | `tensor.concat` | a chain of `ipu.concat` |
//! | `tensor.insert_slice` (static, unit strides) | `dest`'s parts around the window (`ipu.slice`) joined with the source (`ipu.concat`); a `tensor.empty` dest reads as zeros, slices of joins fold |
//!
//! The decompositions are recognized in every form frontends emit (named elementwise ops with
//! `linalg.broadcast` and `linalg.reduce`, or `linalg.generic` ops with broadcasting maps,
//! reductions and fused bodies: see [`super::linalg_patterns`]); what no pattern covers is
//! imported generally ([`super::linalg_general`]). Destination `tensor.empty` ops and the
//! constants a rewrite consumed are erased once unused. Anything else from linalg (matmuls with
//! transposing or broadcasting indexing maps, convolutions, ops on memrefs) is reported, naming
//! the op and why, and the pass fails without changing the IR.

use ipu_dialects::{diagnostics::op_error, ipu::op_name};
use melior::{
    ir::{
        attribute::FloatAttribute, operation::OperationLike, r#type::ShapedTypeLike, Attribute,
        OperationRef, Value, ValueLike,
    },
    Context,
};

use std::collections::BTreeSet;

use super::ir::{check_ipu_tensor, produced_by, users, DenseConstant};
use super::tosa::ops_with_prefix;
use super::{
    apply, linalg_general, linalg_patterns, Addend, Plan, Replacement, Rewrite, Unconvertible,
};
use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `convert-linalg-to-ipu`.
    pub struct ConvertLinalgOptions for "convert-linalg-to-ipu" {
        /// Accept a matmul whose init is a `tensor.empty` (uninitialized: linalg semantics make
        /// the result undefined) as if it were zero-filled.
        empty_init_is_zero: bool = false,
    }
}

/// The `convert-linalg-to-ipu` pass.
#[derive(Clone)]
pub struct ConvertLinalgToIpu {
    options: ConvertLinalgOptions,
}

impl Pass for ConvertLinalgToIpu {
    type Options = ConvertLinalgOptions;
    const ARGUMENT: &'static str = "convert-linalg-to-ipu";
    const SUMMARY: &'static str =
        "Convert linalg ops on tensors (and layer-norm, softmax, GeLU, attention decompositions) to ipu ops";

    fn new(options: ConvertLinalgOptions) -> Self {
        ConvertLinalgToIpu { options }
    }

    fn options(&self) -> &ConvertLinalgOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        // Weights stored as resource blobs (the PyTorch route) become dense constants first;
        // boolean and integer tensors reshaped by size-1 axes (a mask built from an iota) are
        // read by their generic readers directly.
        let prepared = [
            (
                "dense-resource",
                "Number of resource constants inlined",
                linalg_general::inline_resource_constants(op),
            ),
            (
                "unit-reshape",
                "Number of boolean / integer unit-axis reshapes folded into their readers",
                linalg_general::fold_unit_reshapes(op),
            ),
        ];
        for (name, help, count) in prepared {
            if count > 0 {
                run.statistic(name, help, count as u64);
            }
        }
        let candidates: Vec<OperationRef> = ops_with_prefix(op, "")
            .into_iter()
            .filter(|nested| {
                let name = op_name(nested);
                (name.starts_with("linalg.")
                    || name == "tensor.collapse_shape"
                    || name == "tensor.expand_shape"
                    || name == "tensor.extract_slice"
                    || name == "tensor.insert_slice"
                    || name == "tensor.concat")
                    && !nested
                        .parent_operation()
                        .is_some_and(|parent| op_name(&parent).starts_with("linalg."))
            })
            .collect();
        let address = |op: &OperationRef| op.to_raw().ptr as usize;
        // Patterns first, from the last op backwards, so the largest pattern ending at an op
        // wins (a layer norm with its affine part rather than the normalization inside it).
        let mut covered = BTreeSet::new();
        let mut rewrites: Vec<(usize, Rewrite)> = Vec::new();
        for (index, candidate) in candidates.iter().enumerate().rev() {
            if covered.contains(&address(candidate)) {
                continue;
            }
            if let Some(rewrite) = linalg_patterns::recognize(*candidate) {
                if rewrite
                    .interior
                    .iter()
                    .any(|interior| covered.contains(&address(interior)))
                {
                    continue;
                }
                covered.insert(address(candidate));
                covered.extend(rewrite.interior.iter().map(address));
                rewrites.push((index, rewrite));
            }
        }
        let mut plan = Plan::default();
        let mut failures = Vec::new();
        let absorbed = linalg_general::absorbed_cones(&candidates, &covered);
        for (index, linalg_op) in candidates.iter().enumerate() {
            if covered.contains(&address(linalg_op)) {
                continue;
            }
            let name = op_name(linalg_op);
            let tensor_op = match name.as_str() {
                "tensor.collapse_shape" | "tensor.expand_shape" => {
                    Some(reshape_rewrite as fn(_) -> _)
                }
                "tensor.extract_slice" => Some(super::slices::extract_slice as fn(_) -> _),
                "tensor.insert_slice" => Some(super::slices::insert_slice as fn(_) -> _),
                "tensor.concat" => Some(super::slices::concat as fn(_) -> _),
                _ => None,
            };
            if let Some(rewrite) = tensor_op {
                match rewrite(*linalg_op) {
                    Ok(rewrite) => rewrites.push((index, rewrite)),
                    Err(reason) => failures.push((*linalg_op, reason)),
                }
                continue;
            }
            if linalg_general::fused_into_user(*linalg_op, &covered)
                || absorbed.contains(&address(linalg_op))
            {
                // Fused into the map its one user becomes (erased with it).
                continue;
            }
            match self.classify(context, *linalg_op, (&covered, &absorbed)) {
                Ok(Some(rewrite)) => rewrites.push((index, rewrite)),
                Ok(None) => plan.erase_if_unused.push(*linalg_op),
                Err(reason) => failures.push((*linalg_op, reason)),
            }
        }
        // Destinations, fill scalars and constants the replaced ops used: erased if nothing
        // else uses them once the linalg ops are gone.
        let replaced = rewrites
            .iter()
            .flat_map(|(_, rewrite)| std::iter::once(rewrite.root).chain(rewrite.interior.clone()))
            .chain(plan.erase_if_unused.clone())
            .collect::<Vec<_>>();
        for replaced_op in replaced {
            for operand in replaced_op.operands() {
                for name in ["tensor.empty", "arith.constant"] {
                    if let Some(producer) = produced_by(operand, name) {
                        plan.erase_if_unused.push(producer);
                    }
                }
            }
        }
        rewrites.sort_by_key(|(index, _)| *index);
        plan.rewrites = rewrites.into_iter().map(|(_, rewrite)| rewrite).collect();
        if !failures.is_empty() {
            for (failed, reason) in &failures {
                op_error(failed, &reason.to_string());
            }
            return Err(PassFailure(format!(
                "{} linalg ops cannot be converted",
                failures.len()
            )));
        }
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

fn operand<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Result<Value<'c, 'a>, Unconvertible> {
    op.operand(index)
        .map_err(|_| Unconvertible(format!("expected an operand #{index}")))
}

fn check(value: Value, role: &str) -> Result<(), Unconvertible> {
    check_ipu_tensor(value, role).map_err(Unconvertible)
}

/// The indexing maps of a plain (non-transposing, non-broadcasting) matmul / batch_matmul.
pub(super) fn default_maps(batched: bool) -> &'static str {
    if batched {
        "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]"
    } else {
        "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>]"
    }
}

impl ConvertLinalgToIpu {
    /// The conversion of one linalg op: `Ok(None)` for a fill that disappears with its matmuls.
    fn classify<'c, 'a>(
        &self,
        context: &'c Context,
        op: OperationRef<'c, 'a>,
        (covered, absorbed): (&'a BTreeSet<usize>, &'a BTreeSet<usize>),
    ) -> Result<Option<Rewrite<'c, 'a>>, Unconvertible> {
        let name = op_name(&op);
        let short = name.trim_start_matches("linalg.");
        let supported = [
            "matmul",
            "batch_matmul",
            "vecmat",
            "matvec",
            "add",
            "transpose",
            "broadcast",
            "softmax",
            "generic",
            "fill",
            "copy",
        ];
        if short != "add" {
            if let Some(rewrite) = linalg_general::named_elementwise_rewrite(op, short) {
                let result = op.result(0).map(Value::from).map_err(|_| {
                    Unconvertible("it has no tensor result (ops on memrefs are not supported; convert before bufferization)".into())
                })?;
                check(result, "the result")?;
                return rewrite.map(Some);
            }
        }
        let conv = match short {
            "conv_2d_nhwc_hwcf" => Some(super::conv::ConvLayout::NhwcHwcf),
            "conv_2d_nchw_fchw" => Some(super::conv::ConvLayout::NchwFchw),
            _ => None,
        };
        if let Some(layout) = conv {
            return super::conv::conv_rewrite(op, layout, self.options.empty_init_is_zero)
                .map(Some);
        }
        if !supported.contains(&short) {
            return Err(Unconvertible(why_not(short)));
        }
        let result = op.result(0).map(Value::from).map_err(|_| {
            Unconvertible("it has no tensor result (ops on memrefs are not supported; convert before bufferization)".into())
        })?;
        // A fill that only initializes outputs disappears with its users (whatever its type:
        // an unused integer argmax beside a max).
        if short == "fill" && check_fill_is_only_an_init(result).is_ok() {
            return Ok(None);
        }
        if short == "generic" {
            // The general import checks its own result types (a boolean reduction is
            // computed as floats).
            return linalg_general::generic_rewrite(op, covered, absorbed).map(Some);
        }
        check(result, "the result")?;
        let rewrite = match short {
            "matmul" | "batch_matmul" => self.matmul_rewrite(context, op, short)?,
            "vecmat" | "matvec" => self.matmul_rewrite(context, op, short)?,
            "add" => {
                let (lhs, rhs) = (operand(op, 0)?, operand(op, 1)?);
                check(lhs, "the first input")?;
                check(rhs, "the second input")?;
                Rewrite::single(op, Replacement::Add { lhs, rhs }, "add")
            }
            "transpose" => transpose_rewrite(op)?,
            "broadcast" => broadcast_rewrite(context, op, result)?,
            "copy" => {
                let input = operand(op, 0)?;
                check(input, "the input")?;
                Rewrite::single(op, Replacement::Forward { value: input }, "identity")
            }
            "softmax" => softmax_rewrite(op)?,
            "generic" => linalg_general::generic_rewrite(op, covered, absorbed)?,
            _ => {
                if check_fill_is_only_an_init(result).is_ok() {
                    return Ok(None);
                }
                // A fill used as a tensor: its splat constant.
                let number = fill_value(op)?;
                let value = super::splat(result.r#type(), number).map_err(Unconvertible)?;
                Rewrite::single(op, Replacement::Constant { value }, "constant")
            }
        };
        Ok(Some(rewrite))
    }

    /// A plain matmul or batch_matmul (`short` names which): the product, plus the init
    /// when it is not zero (a non-zero fill, or any other tensor: linalg accumulates).
    fn matmul_rewrite<'c, 'a>(
        &self,
        context: &'c Context,
        op: OperationRef<'c, 'a>,
        short: &str,
    ) -> Result<Rewrite<'c, 'a>, Unconvertible> {
        let plain = matches!(short, "matmul" | "batch_matmul");
        if let Some(maps) = op.attribute("indexing_maps").ok().filter(|_| plain) {
            if Attribute::parse(context, default_maps(short == "batch_matmul")) != Some(maps) {
                return Err(Unconvertible(format!(
                    "indexing maps {maps} are not the plain {short} maps"
                )));
            }
        }
        let (lhs, rhs, init) = (operand(op, 0)?, operand(op, 1)?, operand(op, 2)?);
        check(lhs, "the lhs")?;
        check(rhs, "the rhs")?;
        let addend = init_addend(init, self.options.empty_init_is_zero)?;
        Ok(Rewrite::single(
            op,
            Replacement::Matmul { lhs, rhs, addend },
            "matmul",
        ))
    }
}

/// What a contraction (a matmul, a convolution) adds its product to, from its init operand: a
/// zero fill nothing, another fill its splat, a value itself; an uninitialized `tensor.empty`
/// is refused unless `empty_init_is_zero`.
pub(super) fn init_addend<'c, 'a>(
    init: Value<'c, 'a>,
    empty_init_is_zero: bool,
) -> Result<Option<Addend<'c, 'a>>, Unconvertible> {
    Ok(if let Some(fill) = produced_by(init, "linalg.fill") {
        match fill_value(fill)? {
            0.0 => None,
            number => Some(Addend::Splat(number)),
        }
    } else if produced_by(init, "tensor.empty").is_some() {
        if !empty_init_is_zero {
            return Err(Unconvertible(
                "it accumulates into an uninitialized tensor.empty (fill it with zero first, or set empty-init-is-zero)"
                    .into(),
            ));
        }
        None
    } else {
        Some(Addend::Value(init))
    })
}

/// A `tensor.expand_shape` or `tensor.collapse_shape` of a tensor: `ipu.reshape` (the same
/// row-major elements in the result's shape).
fn reshape_rewrite<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input = operand(op, 0)?;
    check(input, "the input")?;
    let result = op
        .result(0)
        .map(Value::from)
        .map_err(|_| Unconvertible("it has no result".into()))?;
    check(result, "the result")?;
    Ok(Rewrite::single(
        op,
        Replacement::IpuReshape { input },
        "reshape",
    ))
}

/// A `linalg.transpose`: an `ipu.rearrange`, or the input itself for the identity permutation.
fn transpose_rewrite<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input = operand(op, 0)?;
    check(input, "the input")?;
    let attribute = op
        .attribute("permutation")
        .map_err(|_| Unconvertible("expected a 'permutation' attribute".into()))?;
    let permutation = ipu_dialects::ipu::i64_array(attribute)
        .ok_or_else(|| Unconvertible(format!("'permutation' is {attribute}, not array<i64>")))?;
    Ok(Rewrite::transpose(op, input, permutation))
}

/// A `linalg.broadcast` of a constant: the constant reshaped with size-1 axes at the
/// broadcast dimensions (ipu ops broadcast like NumPy).
fn broadcast_rewrite<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    result: Value<'c, 'a>,
) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input = operand(op, 0)?;
    let dimensions_of = |op: OperationRef| {
        op.attribute("dimensions")
            .ok()
            .and_then(ipu_dialects::ipu::i64_array)
    };
    let Some(constant) = DenseConstant::of(input) else {
        // A value: an ipu.broadcast of it.
        let dimensions = dimensions_of(op)
            .ok_or_else(|| Unconvertible("expected a 'dimensions' attribute".into()))?;
        check(input, "the input")?;
        return linalg_general::broadcast_rewrite(op, &dimensions);
    };
    let dimensions = op
        .attribute("dimensions")
        .ok()
        .and_then(ipu_dialects::ipu::i64_array)
        .ok_or_else(|| Unconvertible("expected a 'dimensions' attribute".into()))?;
    let shape = super::ir::shape_of(result.r#type())
        .ok_or_else(|| Unconvertible("the result has no static shape".into()))?;
    let element = melior::ir::r#type::RankedTensorType::try_from(result.r#type())
        .map_err(|_| Unconvertible("the result is not a ranked tensor".into()))?
        .element();
    let dims: Vec<String> = shape
        .iter()
        .enumerate()
        .map(|(axis, size)| {
            if dimensions.contains(&(axis as i64)) {
                "1".to_string()
            } else {
                size.to_string()
            }
        })
        .collect();
    let with_ones =
        melior::ir::Type::parse(context, &format!("tensor<{}x{element}>", dims.join("x")))
            .ok_or_else(|| Unconvertible("internal: broadcast constant type".into()))?;
    let value = constant.reshaped(with_ones).attribute;
    Ok(Rewrite::single(
        op,
        Replacement::Constant { value },
        "constant",
    ))
}

/// A `linalg.softmax` over the last axis: `ipu.softmax`.
fn softmax_rewrite<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<Rewrite<'c, 'a>, Unconvertible> {
    let input = operand(op, 0)?;
    check(input, "the input")?;
    let rank = super::ir::shape_of(input.r#type()).map_or(0, |shape| shape.len());
    let dimension = ipu_dialects::ipu::int_attribute(&op, "dimension")
        .ok_or_else(|| Unconvertible("expected a 'dimension' attribute".into()))?;
    if dimension != rank as i64 - 1 {
        return Err(Unconvertible(format!(
            "softmax over dimension {dimension}; ipu.softmax normalizes the last axis ({})",
            rank as i64 - 1
        )));
    }
    Ok(Rewrite::single(
        op,
        Replacement::Softmax { input },
        "softmax",
    ))
}

/// Checks a `linalg.fill` writes a float constant and every use of its `result` is the init
/// of a matmul or reduction this pass converts (the fill then disappears with them).
fn check_fill_is_only_an_init(result: Value) -> Result<(), Unconvertible> {
    // (A reduction whose pattern is not recognized is reported itself.)
    let only_inits = users(result).iter().all(|user| {
        let name = op_name(user);
        let outputs = match name.as_str() {
            "linalg.matmul" | "linalg.batch_matmul" | "linalg.vecmat" | "linalg.matvec" => 2..3,
            "linalg.reduce" | "linalg.generic" => {
                let first = user.operand_count().saturating_sub(user.result_count());
                first..user.operand_count()
            }
            _ => 0..0,
        };
        // Every use of the fill is an output (init) operand of the user.
        user.operands()
            .enumerate()
            .filter(|(_, operand)| *operand == result)
            .all(|(position, _)| outputs.contains(&position))
    });
    if !only_inits {
        return Err(Unconvertible(
            "only fill as the init of a matmul, batch_matmul or reduction is supported".into(),
        ));
    }
    Ok(())
}

/// The constant a `linalg.fill` writes.
pub(super) fn fill_value(fill: OperationRef) -> Result<f64, Unconvertible> {
    let scalar = operand(fill, 0)?;
    produced_by(scalar, "arith.constant")
        .and_then(|constant| constant.attribute("value").ok())
        .and_then(|attribute| FloatAttribute::try_from(attribute).ok())
        .map(|attribute| attribute.value())
        .ok_or_else(|| Unconvertible("the fill value is not a float arith.constant".into()))
}

/// Why a linalg op without an ipu conversion is rejected.
fn why_not(short_name: &str) -> String {
    match short_name {
        "reduce" => "linalg.reduce is converted only inside a recognized layer-norm or softmax decomposition (write the reduction as a linalg.generic over the last loop)".to_string(),
        _ => "no ipu conversion (converted: linalg.matmul, linalg.batch_matmul, linalg.transpose, linalg.broadcast, linalg.softmax, linalg.fill, linalg.copy, the named elementwise ops, any elementwise linalg.generic, linalg.generic reductions over the last loop, tensor.expand_shape, tensor.collapse_shape, tensor.extract_slice, tensor.insert_slice and tensor.concat)".to_string(),
    }
}
