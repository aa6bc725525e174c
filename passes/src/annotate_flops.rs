//! `ipu-annotate-flops`: sets an `ipu.flops` attribute (`i64`) on every `ipu.matmul` and
//! `ipu.attention`, and with `include-elementwise=true` on the elementwise ops too. It is the
//! example of `docs/writing-a-pass.md`: one file, one options struct, one `Pass` impl.
//!
//! | op | floating-point operations |
//! |---|---|
//! | `ipu.matmul` | `2 * M * N * K * batch` (transpose flags decide which axis is `K`) |
//! | `ipu.attention` | `2 * S * T * (D + E) * batch` (`q k^T` and `p v`; a causal mask is not subtracted) |
//! | `ipu.add`, `ipu.gelu`, `ipu.softmax`, `ipu.layer_norm`, `ipu.cast` | one per result element |

use ipu_dialects::{
    diagnostics::op_error,
    ipu::{
        verify::{matmul_shape, verify_operation, FunctionTable},
        AddOp, AttentionOp, CastOp, GeluOp, LayerNormOp, MatmulOp, SoftmaxOp,
    },
    TensorInfo,
};
use melior::ir::{
    attribute::IntegerAttribute,
    operation::{OperationLike, OperationMutLike, OperationRefMut, WalkOrder, WalkResult},
    r#type::IntegerType,
    OperationRef, Value, ValueLike,
};

use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `ipu-annotate-flops`.
    pub struct AnnotateFlopsOptions for "ipu-annotate-flops" {
        /// Also annotate ipu.add, ipu.gelu, ipu.softmax, ipu.layer_norm and ipu.cast.
        include_elementwise: bool = false,
    }
}

/// The attribute the pass sets.
pub const FLOPS_ATTRIBUTE: &str = "ipu.flops";

/// Ops counted at one operation per result element.
pub const ELEMENTWISE: &[&str] = &[
    AddOp::NAME,
    GeluOp::NAME,
    SoftmaxOp::NAME,
    LayerNormOp::NAME,
    CastOp::NAME,
];

/// The `ipu-annotate-flops` pass.
#[derive(Clone)]
pub struct AnnotateFlops {
    options: AnnotateFlopsOptions,
}

impl Pass for AnnotateFlops {
    type Options = AnnotateFlopsOptions;
    const ARGUMENT: &'static str = "ipu-annotate-flops";
    const SUMMARY: &'static str =
        "Annotate ipu.matmul, ipu.attention (and elementwise ops) with ipu.flops";

    fn new(options: AnnotateFlopsOptions) -> Self {
        AnnotateFlops { options }
    }

    fn options(&self) -> &AnnotateFlopsOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let (mut matmuls, mut attentions, mut elementwise, mut failures) = (0, 0, 0, 0);
        op.walk(WalkOrder::PreOrder, |nested| {
            match count_flops(nested, self.options.include_elementwise) {
                Ok(None) => {}
                Ok(Some(flops)) => {
                    annotate(nested, flops);
                    match nested.name().as_string_ref().as_str() {
                        Ok(MatmulOp::NAME) => matmuls += 1,
                        Ok(AttentionOp::NAME) => attentions += 1,
                        _ => elementwise += 1,
                    }
                }
                Err(message) => {
                    op_error(&nested, &format!("ipu-annotate-flops: {message}"));
                    failures += 1;
                }
            }
            WalkResult::Advance
        });
        run.statistic("matmuls", "Number of ipu.matmul ops annotated", matmuls);
        run.statistic(
            "attentions",
            "Number of ipu.attention ops annotated",
            attentions,
        );
        run.statistic(
            "elementwise",
            "Number of elementwise ops annotated",
            elementwise,
        );
        if failures > 0 {
            return Err(PassFailure(format!("{failures} ops could not be counted")));
        }
        Ok(())
    }
}

/// The flop count of `op`, `None` if the pass does not annotate it, or why it cannot be counted.
pub fn count_flops(op: OperationRef, include_elementwise: bool) -> Result<Option<i64>, String> {
    let name = op.name();
    let name = name.as_string_ref().as_str().unwrap_or("");
    let counted =
        name == MatmulOp::NAME || name == AttentionOp::NAME || ELEMENTWISE.contains(&name);
    if !counted || (!include_elementwise && ELEMENTWISE.contains(&name)) {
        return Ok(None);
    }
    // Earlier passes may have left ops our verifier has not seen: check them with the same
    // verifier ipu-opt runs after parsing (none of the counted ops looks up functions).
    verify_operation(op, &FunctionTable::new())?;
    let shape = |value: Option<Value>| -> Result<Vec<i64>, String> {
        let value = value.ok_or("is missing an operand or result")?;
        TensorInfo::from_type(value.r#type())
            .map(|info| info.shape)
            .map_err(|error| error.to_string())
    };
    let result = shape(op.result(0).ok().map(Value::from))?;
    let flops = if let Ok(matmul) = MatmulOp::try_from(op) {
        let lhs = shape(matmul.lhs())?;
        let rhs = shape(matmul.rhs())?;
        matmul_flops(&lhs, &rhs, matmul.transpose_lhs(), matmul.transpose_rhs())?
    } else if let Ok(attention) = AttentionOp::try_from(op) {
        let query = shape(attention.query())?;
        let value = shape(attention.value())?;
        attention_flops(&query, &value, &result)?
    } else {
        checked_product(&result)?
    };
    Ok(Some(flops))
}

/// `2 * M * N * K * batch` for `lhs [..., M, K] x rhs [..., K, N]` (before transposition).
pub fn matmul_flops(
    lhs: &[i64],
    rhs: &[i64],
    transpose_lhs: bool,
    transpose_rhs: bool,
) -> Result<i64, String> {
    // The result shape is `[batch..., M, N]`; only K is missing from it.
    let result = matmul_shape(lhs, rhs, transpose_lhs, transpose_rhs)?;
    let k = if transpose_lhs {
        lhs[lhs.len() - 2]
    } else {
        lhs[lhs.len() - 1]
    };
    checked_product(&[&[2, k], result.as_slice()].concat())
}

/// `2 * S * T * (D + E) * batch` for `q [..., S, D]`, `v [..., T, E]`, result `[..., S, E]`.
pub fn attention_flops(query: &[i64], value: &[i64], result: &[i64]) -> Result<i64, String> {
    let (Some(&d), Some(&t)) = (
        query.last(),
        value.len().checked_sub(2).and_then(|axis| value.get(axis)),
    ) else {
        return Err("query and value must have rank >= 2".to_string());
    };
    let e = value[value.len() - 1];
    let per_output = d.checked_add(e).ok_or_else(|| overflow(&[d, e]))?;
    // result = [batch..., S, E]; multiply by 2 * T * (D + E) and divide out E, exactly:
    let without_e = &result[..result.len().saturating_sub(1)];
    checked_product(&[&[2, t, per_output], without_e].concat())
}

fn checked_product(factors: &[i64]) -> Result<i64, String> {
    factors
        .iter()
        .try_fold(1i64, |product, &factor| product.checked_mul(factor))
        .ok_or_else(|| overflow(factors))
}

fn overflow(factors: &[i64]) -> String {
    let factors: Vec<String> = factors.iter().map(|factor| factor.to_string()).collect();
    format!("flop count {} overflows i64", factors.join(" * "))
}

/// Sets `ipu.flops = <flops> : i64` on `op`.
fn annotate(op: OperationRef, flops: i64) {
    let context = op.context();
    // SAFETY: the context outlives the pass run, and MLIR gives a running pass exclusive
    // access to the ops nested in the one it runs on, so changing an attribute is allowed.
    let (context, mut op) = unsafe { (context.to_ref(), OperationRefMut::from_raw(op.to_raw())) };
    let attribute = IntegerAttribute::new(IntegerType::new(context, 64).into(), flops);
    op.set_discardable_attribute(FLOPS_ATTRIBUTE, attribute.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_counts_two_flops_per_multiply_add_with_flags_and_batches() {
        // [4, 16] x [16, 8]: M=4, N=8, K=16.
        assert_eq!(
            matmul_flops(&[4, 16], &[16, 8], false, false),
            Ok(2 * 4 * 8 * 16)
        );
        // The same product with both operands stored transposed.
        assert_eq!(
            matmul_flops(&[16, 4], &[8, 16], true, true),
            Ok(2 * 4 * 8 * 16)
        );
        // Batch axes [2, 1] and [3] broadcast to [2, 3].
        assert_eq!(
            matmul_flops(&[2, 1, 4, 16], &[3, 16, 8], false, false),
            Ok(2 * 6 * 4 * 8 * 16)
        );
    }

    #[test]
    fn attention_counts_both_products() {
        // q [2, 8, 16], k [2, 32, 16], v [2, 32, 4] -> [2, 8, 4]: 2*8*32*(16+4) per batch.
        assert_eq!(
            attention_flops(&[2, 8, 16], &[2, 32, 4], &[2, 8, 4]),
            Ok(2 * 2 * 8 * 32 * 20)
        );
    }

    /// `docs/writing-a-pass.md` quotes this pass; every quoted block must still be real code.
    #[test]
    fn tutorial_quotes_match_the_code() {
        let tutorial = include_str!("../../docs/writing-a-pass.md");
        let sources = [
            include_str!("annotate_flops.rs"),
            include_str!("lib.rs"),
            include_str!("../../test/Passes/ipu-annotate-flops/annotate-flops.mlir"),
            include_str!("../../test/Passes/ipu-annotate-flops/invalid.mlir"),
            include_str!("fold_add_zero.rs"),
            include_str!("../../test/Passes/ipu-fold-add-zero/fold-add-zero.mlir"),
            include_str!("../../test/Passes/ipu-fold-add-zero/options.mlir"),
        ];
        let mut quoted = 0;
        for fence in ["```rust\n", "```mlir\n"] {
            for block in tutorial.split(fence).skip(1) {
                let Some(end) = block.find("```") else {
                    continue;
                };
                let code = &block[..end];
                assert!(
                    sources.iter().any(|source| source.contains(code)),
                    "docs/writing-a-pass.md quotes code that is not in the sources:\n{code}"
                );
                quoted += 1;
            }
        }
        assert!(
            quoted >= 14,
            "expected the tutorial's quotes, found {quoted}"
        );
    }

    #[test]
    fn bad_shapes_and_overflow_are_errors() {
        let error = matmul_flops(&[4, 16], &[8, 16], false, false).unwrap_err();
        assert!(error.contains("contraction sizes differ"), "{error}");
        let huge = 3_037_000_500;
        let error = matmul_flops(&[huge, huge], &[huge, 2], false, false).unwrap_err();
        assert!(error.contains("overflows i64"), "{error}");
    }
}
