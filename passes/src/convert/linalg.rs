//! `convert-linalg-to-ipu`: linalg named ops on tensors to `ipu` ops.
//!
//! | linalg | ipu |
//! |---|---|
//! | `matmul` / `batch_matmul` `outs(fill(0))` | `ipu.matmul(a, b)` |
//! | `matmul` / `batch_matmul` `outs(fill(c))`, `c != 0` | `ipu.add(ipu.matmul(a, b), splat c)` |
//! | `matmul` / `batch_matmul` `outs(t)` | `ipu.add(ipu.matmul(a, b), t)` (linalg accumulates) |
//! | `add ins(a, b)` | `ipu.add(a, b)` |
//! | `transpose {permutation}` | `ipu.rearrange {permutation}` |
//! | `fill` | only as a matmul init: disappears with it |
//!
//! Destination `tensor.empty` ops are erased once unused. Anything else from linalg (generic
//! ops, matmuls with transposing or broadcasting indexing maps, ops on memrefs) is reported and
//! the pass fails without changing the IR.

use ipu_dialects::{diagnostics::op_error, ipu::op_name};
use melior::{
    ir::{attribute::FloatAttribute, operation::OperationLike, Attribute, OperationRef, Value},
    Context,
};

use super::ir::{check_ipu_tensor, produced_by, users};
use super::tosa::ops_with_prefix;
use super::{apply, Addend, Plan, Replacement, Rewrite, Unconvertible};
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
        "Convert linalg named ops (matmul, batch_matmul, add, transpose, fill) to ipu ops";

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
        let linalg_ops: Vec<OperationRef> = ops_with_prefix(op, "linalg.")
            .into_iter()
            .filter(|nested| {
                !nested
                    .parent_operation()
                    .is_some_and(|parent| op_name(&parent).starts_with("linalg."))
            })
            .collect();
        let mut plan = Plan::default();
        let mut failures = Vec::new();
        for linalg_op in &linalg_ops {
            match self.classify(context, *linalg_op) {
                Ok(Some(rewrite)) => plan.rewrites.push(rewrite),
                Ok(None) => plan.erase_if_unused.push(*linalg_op),
                Err(reason) => failures.push((*linalg_op, reason)),
            }
            if op_name(linalg_op) == "linalg.fill" {
                if let Some(scalar) = linalg_op
                    .operand(0)
                    .ok()
                    .and_then(|value| produced_by(value, "arith.constant"))
                {
                    plan.erase_if_unused.push(scalar);
                }
            }
            // Destinations: erased if nothing else uses them once the linalg ops are gone.
            for destination in linalg_op
                .operands()
                .filter_map(|value| produced_by(value, "tensor.empty"))
            {
                plan.erase_if_unused.push(destination);
            }
        }
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
fn default_maps(batched: bool) -> &'static str {
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
    ) -> Result<Option<Rewrite<'c, 'a>>, Unconvertible> {
        let name = op_name(&op);
        let short = name.trim_start_matches("linalg.");
        let supported = ["matmul", "batch_matmul", "add", "transpose", "fill"];
        if !supported.contains(&short) {
            return Err(Unconvertible(format!(
                "no ipu equivalent (supported: linalg.{}; fill only as a matmul init)",
                supported[..4].join(", linalg.")
            )));
        }
        let result = op.result(0).map(Value::from).map_err(|_| {
            Unconvertible("it has no tensor result (ops on memrefs are not supported; convert before bufferization)".into())
        })?;
        check(result, "the result")?;
        let single = |replacement, kind| {
            Ok(Some(Rewrite {
                root: op,
                interior: Vec::new(),
                replacement,
                kind,
            }))
        };
        match short {
            "matmul" | "batch_matmul" => {
                if let Ok(maps) = op.attribute("indexing_maps") {
                    if Attribute::parse(context, default_maps(short == "batch_matmul"))
                        != Some(maps)
                    {
                        return Err(Unconvertible(format!(
                            "indexing maps {maps} are not the plain {short} maps"
                        )));
                    }
                }
                let (lhs, rhs, init) = (operand(op, 0)?, operand(op, 1)?, operand(op, 2)?);
                check(lhs, "the lhs")?;
                check(rhs, "the rhs")?;
                let addend = if let Some(fill) = produced_by(init, "linalg.fill") {
                    match fill_value(fill)? {
                        0.0 => None,
                        number => Some(Addend::Splat(number)),
                    }
                } else if produced_by(init, "tensor.empty").is_some() {
                    if !self.options.empty_init_is_zero {
                        return Err(Unconvertible(
                            "it accumulates into an uninitialized tensor.empty (fill it with zero first, or set empty-init-is-zero)"
                                .into(),
                        ));
                    }
                    None
                } else {
                    Some(Addend::Value(init))
                };
                single(Replacement::Matmul { lhs, rhs, addend }, "matmul")
            }
            "add" => {
                let (lhs, rhs) = (operand(op, 0)?, operand(op, 1)?);
                check(lhs, "the first input")?;
                check(rhs, "the second input")?;
                single(Replacement::Add { lhs, rhs }, "add")
            }
            "transpose" => {
                let input = operand(op, 0)?;
                check(input, "the input")?;
                let attribute = op
                    .attribute("permutation")
                    .map_err(|_| Unconvertible("expected a 'permutation' attribute".into()))?;
                let permutation = ipu_dialects::ipu::i64_array(attribute).ok_or_else(|| {
                    Unconvertible(format!("'permutation' is {attribute}, not array<i64>"))
                })?;
                if permutation
                    .iter()
                    .enumerate()
                    .all(|(index, &axis)| axis == index as i64)
                {
                    return single(Replacement::Forward { value: input }, "identity");
                }
                single(Replacement::Transpose { input, permutation }, "rearrange")
            }
            _ => {
                // fill: every use must be the init of a matmul this pass converts.
                fill_value(op)?;
                let only_matmul_inits = users(result).iter().all(|user| {
                    matches!(
                        op_name(user).as_str(),
                        "linalg.matmul" | "linalg.batch_matmul"
                    ) && user.operand(2).ok().is_some_and(|init| init == result)
                });
                if !only_matmul_inits {
                    return Err(Unconvertible("only fill as the init of linalg.matmul or linalg.batch_matmul is supported".into()));
                }
                Ok(None)
            }
        }
    }
}

/// The constant a `linalg.fill` writes.
fn fill_value(fill: OperationRef) -> Result<f64, Unconvertible> {
    let scalar = operand(fill, 0)?;
    produced_by(scalar, "arith.constant")
        .and_then(|constant| constant.attribute("value").ok())
        .and_then(|attribute| FloatAttribute::try_from(attribute).ok())
        .map(|attribute| attribute.value())
        .ok_or_else(|| Unconvertible("the fill value is not a float arith.constant".into()))
}
