//! `ipu-canonicalize`: simplifications of `ipu` graph ops as Rust rewrite patterns run by MLIR's
//! greedy driver. Each pattern's rule, in algebraic form:
//!
//! | pattern | rule |
//! |---|---|
//! | `fold-identity-cast` | `cast(x : T -> T, scale 0)` => `x` |
//! | `fold-cast-of-cast` | `cast(cast(x : A -> B) : B -> C)` => `cast(x : A -> C)` when `A -> B` is exact; => `x` when also `C = A` |
//! | `fold-identity-rearrange` | `rearrange(x : T -> T)` with no or an identity permutation => `x` |
//! | `fold-rearrange-of-rearrange` | `rearrange_q(rearrange_p(x))` => `rearrange_{p.q}(x)` (=> `x` when it is the identity) |
//! | `fold-transpose-into-matmul` | `matmul(transpose(a), b)` => `matmul(a, b){transpose_lhs ^= 1}`, likewise for `b` |

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ipu_dialects::{
    ipu::{CastOp, MatmulOp, RearrangeOp},
    tensor::{ElementType, TensorInfo},
};
use melior::{
    apply_patterns_and_fold_greedily_with_op, create_op_rewrite_pattern,
    ir::{
        operation::{OperationLike, OperationMutLike},
        Location, OperationRef, Type, Value, ValueLike,
    },
    Context, GreedyRewriteDriverConfig, PatternRewriter, RewritePatternSet,
};

use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `ipu-canonicalize`.
    pub struct CanonicalizeOptions for "ipu-canonicalize" {
        /// Upper bound on greedy driver iterations over the IR.
        max_iterations: u32 = 10,
        /// Patterns to leave out (by name, e.g. fold-cast-of-cast).
        disable_patterns: Vec<String> = Vec::new(),
    }
}

crate::pass_options! {
    /// Options of the `ipu-cleanup` pipeline.
    pub struct CleanupOptions for "ipu-cleanup" {
        /// Passed to ipu-canonicalize.
        max_iterations: u32 = 10,
        /// Whether to finish with symbol-dce.
        symbol_dce: bool = true,
    }
}

/// Expands `ipu-cleanup{...}`.
pub fn expand_cleanup(
    options: &[crate::pipeline::PassOption],
) -> Result<String, crate::pipeline::PipelineError> {
    use crate::pipeline::PassOptions;
    let options = CleanupOptions::from_pass_options(options)?;
    let mut text = format!(
        "ipu-canonicalize{{max-iterations={}}}, cse, canonicalize",
        options.max_iterations
    );
    if options.symbol_dce {
        text.push_str(", symbol-dce");
    }
    Ok(text)
}

/// The pattern names, for `disable-patterns` and statistics.
pub const PATTERNS: &[&str] = &[
    "fold-identity-cast",
    "fold-cast-of-cast",
    "fold-identity-rearrange",
    "fold-rearrange-of-rearrange",
    "fold-transpose-into-matmul",
];

/// The `ipu-canonicalize` pass.
#[derive(Clone)]
pub struct Canonicalize {
    options: CanonicalizeOptions,
}

impl Pass for Canonicalize {
    type Options = CanonicalizeOptions;
    const ARGUMENT: &'static str = "ipu-canonicalize";
    const SUMMARY: &'static str =
        "Simplify ipu ops: casts of casts, identity rearranges, transposes into matmul flags";

    fn new(options: CanonicalizeOptions) -> Self {
        Canonicalize { options }
    }

    fn options(&self) -> &CanonicalizeOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        for name in &self.options.disable_patterns {
            if !PATTERNS.contains(&name.as_str()) {
                ipu_dialects::diagnostics::error_at(
                    op.location(),
                    &format!("ipu-canonicalize: unknown pattern '{name}' in disable-patterns; patterns: {}", PATTERNS.join(", ")),
                );
                return Err(PassFailure(format!("unknown pattern '{name}'")));
            }
        }
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let counters: Vec<Arc<AtomicU64>> = PATTERNS
            .iter()
            .map(|_| Arc::new(AtomicU64::new(0)))
            .collect();
        let patterns = RewritePatternSet::new(context);
        let enabled = |name: &str| {
            !self
                .options
                .disable_patterns
                .iter()
                .any(|disabled| disabled == name)
        };
        type Rewrite = fn(OperationRef, PatternRewriter) -> bool;
        let table: [(&str, &str, Rewrite); 5] = [
            ("fold-identity-cast", CastOp::NAME, fold_identity_cast),
            ("fold-cast-of-cast", CastOp::NAME, fold_cast_of_cast),
            (
                "fold-identity-rearrange",
                RearrangeOp::NAME,
                fold_identity_rearrange,
            ),
            (
                "fold-rearrange-of-rearrange",
                RearrangeOp::NAME,
                fold_rearrange_of_rearrange,
            ),
            (
                "fold-transpose-into-matmul",
                MatmulOp::NAME,
                fold_transpose_into_matmul,
            ),
        ];
        for (index, (name, root, rewrite)) in table.into_iter().enumerate() {
            if !enabled(name) {
                continue;
            }
            let counter = counters[index].clone();
            patterns.add(create_op_rewrite_pattern(
                root,
                1,
                context,
                move |_pattern, raw_op, raw_rewriter| {
                    // SAFETY: MLIR hands a live op and rewriter for the duration of the call.
                    let op = unsafe { OperationRef::from_raw(raw_op) };
                    let rewriter = unsafe { PatternRewriter::from_raw(raw_rewriter) };
                    let changed = rewrite(op, rewriter);
                    if changed {
                        counter.fetch_add(1, Ordering::Relaxed);
                    }
                    changed
                },
                &[],
            ));
        }
        let config = GreedyRewriteDriverConfig::new();
        config.set_max_iterations(i64::from(self.options.max_iterations));
        let result = apply_patterns_and_fold_greedily_with_op(op, patterns.freeze(), &config);
        for (index, name) in PATTERNS.iter().enumerate() {
            let count = counters[index].load(Ordering::Relaxed);
            if count > 0 {
                run.statistic(name, "Number of times the pattern rewrote an op", count);
            }
        }
        let total: u64 = counters
            .iter()
            .map(|counter| counter.load(Ordering::Relaxed))
            .sum();
        run.statistic("rewrites", "Number of ops rewritten", total);
        result.map_err(|_| {
            ipu_dialects::diagnostics::error_at(
                op.location(),
                &format!(
                    "ipu-canonicalize did not converge in {} iterations (raise max-iterations)",
                    self.options.max_iterations
                ),
            );
            PassFailure("greedy rewriting did not converge".to_string())
        })
    }
}

fn type_of<'c>(value: Value<'c, '_>) -> Type<'c> {
    value.r#type()
}

fn info(value: Value) -> Option<TensorInfo> {
    TensorInfo::from_type(value.r#type()).ok()
}

fn has_uses(value: Value) -> bool {
    // SAFETY: the value is live; a null first use means no uses.
    !unsafe { mlir_sys::mlirValueGetFirstUse(value.to_raw()) }
        .ptr
        .is_null()
}

/// Replaces `op`'s single result with `value`, then erases `op` and, if it became dead, the op
/// that defined the operand we looked through (IRDL ops are never considered dead by MLIR).
fn replace_and_clean(
    rewriter: PatternRewriter,
    op: OperationRef,
    value: Value,
    looked_through: Option<OperationRef>,
) {
    let base = rewriter.as_rewriter_base();
    base.replace_op_with_values(op, &[value]);
    if let Some(producer) = looked_through {
        if let Ok(result) = producer.result(0) {
            if !has_uses(result.into()) {
                base.erase_op(producer);
            }
        }
    }
}

fn defining_op<'c, 'a>(value: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    melior::ir::operation::OperationResult::try_from(value)
        .ok()
        .map(|result| result.owner())
}

fn fold_identity_cast(op: OperationRef, rewriter: PatternRewriter) -> bool {
    let Ok(cast) = CastOp::try_from(op) else {
        return false;
    };
    let (Some(input), Some(result)) = (cast.input(), cast.result()) else {
        return false;
    };
    if cast.scale() != 0 || type_of(input) != type_of(result) {
        return false;
    }
    replace_and_clean(rewriter, op, input, None);
    true
}

/// Whether converting `from` (with FP8 scale `scale`) to `to` loses nothing.
fn exact_conversion(from: ElementType, scale: i64, to: ElementType) -> bool {
    match (from, to) {
        (a, b) if a == b => scale == 0,
        (ElementType::F16, ElementType::F32) => true,
        // Every scaled FP8 value is a small power-of-two multiple, well inside f32's range.
        (ElementType::F8E4M3FNUZ | ElementType::F8E5M2FNUZ, ElementType::F32) => true,
        // Unscaled F143 (max 240, min 2^-10) and F152 (max 57344, min 2^-17) fit f16 exactly.
        (ElementType::F8E4M3FNUZ | ElementType::F8E5M2FNUZ, ElementType::F16) => scale == 0,
        _ => false,
    }
}

fn fold_cast_of_cast(op: OperationRef, rewriter: PatternRewriter) -> bool {
    let Ok(outer) = CastOp::try_from(op) else {
        return false;
    };
    let Some(middle) = outer.input() else {
        return false;
    };
    let Some(inner_op) = defining_op(middle) else {
        return false;
    };
    let Ok(inner) = CastOp::try_from(inner_op) else {
        return false;
    };
    let (Some(source), Some(result)) = (inner.input(), outer.result()) else {
        return false;
    };
    let (Some(source_info), Some(middle_info), Some(result_info)) =
        (info(source), info(middle), info(result))
    else {
        return false;
    };
    // The first step must be exact; the FP8 scale of the source side is the inner cast's.
    let source_scale = if source_info.element.is_fp8() {
        inner.scale()
    } else {
        0
    };
    if !exact_conversion(source_info.element, source_scale, middle_info.element) {
        return false;
    }
    let outer_scale = if result_info.element.is_fp8() {
        outer.scale()
    } else {
        0
    };
    if type_of(source) == type_of(result) && source_scale == outer_scale {
        replace_and_clean(rewriter, op, source, Some(inner_op));
        return true;
    }
    let scale = if result_info.element.is_fp8() {
        outer.scale()
    } else {
        source_scale
    };
    let context_ref = op.context();
    // SAFETY: the context outlives the rewrite.
    let context: &Context = unsafe { context_ref.to_ref() };
    let location: Location = op.location();
    let base = rewriter.as_rewriter_base();
    base.set_insertion_point_before(op);
    let new = base.insert(CastOp::build(
        context,
        location,
        source,
        type_of(result),
        scale,
    ));
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    replace_and_clean(rewriter, op, new_result.into(), Some(inner_op));
    true
}

fn is_identity(permutation: &[i64]) -> bool {
    permutation
        .iter()
        .enumerate()
        .all(|(index, &axis)| axis == index as i64)
}

fn fold_identity_rearrange(op: OperationRef, rewriter: PatternRewriter) -> bool {
    let Ok(rearrange) = RearrangeOp::try_from(op) else {
        return false;
    };
    let (Some(input), Some(result)) = (rearrange.input(), rearrange.result()) else {
        return false;
    };
    if type_of(input) != type_of(result) {
        return false;
    }
    if let Some(permutation) = rearrange.permutation() {
        if !is_identity(&permutation) {
            return false;
        }
    }
    replace_and_clean(rewriter, op, input, None);
    true
}

fn fold_rearrange_of_rearrange(op: OperationRef, rewriter: PatternRewriter) -> bool {
    let Ok(outer) = RearrangeOp::try_from(op) else {
        return false;
    };
    let Some(middle) = outer.input() else {
        return false;
    };
    let Some(inner_op) = defining_op(middle) else {
        return false;
    };
    let Ok(inner) = RearrangeOp::try_from(inner_op) else {
        return false;
    };
    let (Some(source), Some(result)) = (inner.input(), outer.result()) else {
        return false;
    };
    let Some(rank) = info(source).map(|info| info.rank()) else {
        return false;
    };
    let identity: Vec<i64> = (0..rank as i64).collect();
    let first = inner.permutation().unwrap_or_else(|| identity.clone());
    let second = outer.permutation().unwrap_or_else(|| identity.clone());
    if first.len() != rank || second.len() != rank {
        return false;
    }
    // result[i] = middle[second[i]] = source[first[second[i]]].
    let composed: Vec<i64> = second.iter().map(|&axis| first[axis as usize]).collect();
    if is_identity(&composed) && type_of(source) == type_of(result) {
        replace_and_clean(rewriter, op, source, Some(inner_op));
        return true;
    }
    let context_ref = op.context();
    // SAFETY: the context outlives the rewrite.
    let context: &Context = unsafe { context_ref.to_ref() };
    let base = rewriter.as_rewriter_base();
    base.set_insertion_point_before(op);
    let permutation = if is_identity(&composed) {
        None
    } else {
        Some(composed.as_slice())
    };
    let new = base.insert(RearrangeOp::build(
        context,
        op.location(),
        source,
        type_of(result),
        permutation,
    ));
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    replace_and_clean(rewriter, op, new_result.into(), Some(inner_op));
    true
}

/// If `value` is a plain transpose of the last two axes (no format change), its source.
fn transposed_source<'c, 'a>(
    value: Value<'c, 'a>,
) -> Option<(Value<'c, 'a>, OperationRef<'c, 'a>)> {
    let producer = defining_op(value)?;
    let rearrange = RearrangeOp::try_from(producer).ok()?;
    let permutation = rearrange.permutation()?;
    let rank = permutation.len();
    if rank < 2 {
        return None;
    }
    let mut swap: Vec<i64> = (0..rank as i64).collect();
    swap.swap(rank - 2, rank - 1);
    if permutation != swap {
        return None;
    }
    let source = rearrange.input()?;
    let (source_info, value_info) = (info(source)?, info(value)?);
    if source_info.format.is_some() || value_info.format.is_some() {
        return None;
    }
    Some((source, producer))
}

fn fold_transpose_into_matmul(op: OperationRef, rewriter: PatternRewriter) -> bool {
    let Ok(matmul) = MatmulOp::try_from(op) else {
        return false;
    };
    let (Some(lhs), Some(rhs), Some(result)) = (matmul.lhs(), matmul.rhs(), matmul.result()) else {
        return false;
    };
    let lhs_fold = transposed_source(lhs);
    let rhs_fold = transposed_source(rhs);
    if lhs_fold.is_none() && rhs_fold.is_none() {
        return false;
    }
    let new_lhs = lhs_fold.map(|(source, _)| source).unwrap_or(lhs);
    let new_rhs = rhs_fold.map(|(source, _)| source).unwrap_or(rhs);
    let transpose_lhs = matmul.transpose_lhs() ^ lhs_fold.is_some();
    let transpose_rhs = matmul.transpose_rhs() ^ rhs_fold.is_some();
    let context_ref = op.context();
    // SAFETY: the context outlives the rewrite.
    let context: &Context = unsafe { context_ref.to_ref() };
    let base = rewriter.as_rewriter_base();
    base.set_insertion_point_before(op);
    let mut new = MatmulOp::build(
        context,
        op.location(),
        new_lhs,
        new_rhs,
        type_of(result),
        transpose_lhs,
        transpose_rhs,
    );
    // Keep any other attributes (plans, estimates) the op carried.
    for (name, attribute) in op.attributes() {
        let name = name.as_string_ref().as_str().unwrap_or("").to_string();
        if name != "transpose_lhs" && name != "transpose_rhs" {
            new.set_attribute(&name, attribute);
        }
    }
    let new = base.insert(new);
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    base.replace_op_with_values(op, &[new_result.into()]);
    for (_, producer) in [lhs_fold, rhs_fold].into_iter().flatten() {
        if let Ok(value) = producer.result(0) {
            if !has_uses(value.into()) {
                base.erase_op(producer);
            }
        }
    }
    true
}
