//! `ipu-canonicalize`: simplifications of `ipu` graph ops as Rust rewrite patterns run by MLIR's
//! greedy driver. Each pattern's rule, in algebraic form:
//!
//! | pattern | rule |
//! |---|---|
//! | `fold-identity-cast` | `cast(x : T -> T, scale 0)` => `x` |
//! | `fold-cast-of-cast` | `cast(cast(x : A -> B) : B -> C)` => `cast(x : A -> C)` when `A -> B` is exact; => `x` when also `C = A` |
//! | `fold-identity-rearrange` | `rearrange(x : T -> T)` with no or an identity permutation => `x` |
//! | `fold-rearrange-of-rearrange` | `rearrange_q(rearrange_p(x))` => `rearrange_{p.q}(x)` (=> `x` when it is the identity) when `p.q` keeps the last axis or swaps the last two (what the tile lowering runs) |
//! | `fold-transpose-into-matmul` | `matmul(transpose(a), b)` => `matmul(a, b){transpose_lhs ^= 1}`, likewise for `b` (through reshapes that only regroup batch axes) |
//! | `fold-unit-axes-rearrange` | `rearrange(x)` moving only unit axes => `reshape(x)` |
//! | `fold-unit-reshape-into-rearrange` | `rearrange_p(reshape(x))` (a reshape adding or dropping unit axes) => `reshape(rearrange_q(x))`, `q` the same order of the long axes on `x`'s shape (when lowered) |
//! | `fold-transpose-of-matmul` | `transpose(matmul(a, b))` => `matmul(b, a){transpose_lhs = !tr, transpose_rhs = !tl}` (through batch-regrouping reshapes; the product read once) |
//! | `fold-identity-reshape` | `reshape(x : T -> T)` => `x` |
//! | `fold-reshape-of-reshape` | `reshape(reshape(x))` => `reshape(x)` |
//! | `fold-reshape-of-constant` | `reshape(constant)` => the constant in the result's shape (plain `dense` constants) |
//! | `sink-reshape` | `f(reshape(x), b)` => `reshape(f(x, b))` for `f` in add, gelu, map (body not reading indices), softmax and layer norm (last axis kept); `b` broadcasts over axes the reshape keeps |
//! | `squeeze-unit-batch-rhs` | `matmul(a, b : [1, K, N])` => `matmul(a, reshape(b) : [K, N])` (any number of unit batch axes; `a` of at least `b`'s rank) |
//! | `sink-reshape-through-matmul` | `matmul(reshape(x), b : [K, N])` => `reshape(matmul(x, b))` when the reshape keeps the last axis |

mod reshapes;

use ipu_dialects::{
    ipu::{CastOp, MatmulOp, RearrangeOp, ReshapeOp},
    tensor::{ElementType, TensorInfo},
};
use melior::ir::{
    operation::{OperationLike, OperationMutLike},
    OperationRef, Type, Value, ValueLike,
};

use crate::ir::producer;
use crate::pass::{Pass, PassFailure, PassRun};
use crate::rewrite::{Pattern, Rewriter};

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

/// The patterns, by the names `disable-patterns` and the statistics use.
pub const PATTERNS: &[Pattern] = &[
    Pattern {
        name: "fold-identity-cast",
        root: CastOp::NAME,
        rewrite: fold_identity_cast,
    },
    Pattern {
        name: "fold-cast-of-cast",
        root: CastOp::NAME,
        rewrite: fold_cast_of_cast,
    },
    Pattern {
        name: "fold-identity-rearrange",
        root: RearrangeOp::NAME,
        rewrite: fold_identity_rearrange,
    },
    Pattern {
        name: "fold-rearrange-of-rearrange",
        root: RearrangeOp::NAME,
        rewrite: fold_rearrange_of_rearrange,
    },
    Pattern {
        name: "fold-transpose-into-matmul",
        root: MatmulOp::NAME,
        rewrite: fold_transpose_into_matmul,
    },
    Pattern {
        name: "fold-unit-axes-rearrange",
        root: RearrangeOp::NAME,
        rewrite: reshapes::fold_unit_axes_rearrange,
    },
    Pattern {
        name: "fold-unit-reshape-into-rearrange",
        root: RearrangeOp::NAME,
        rewrite: reshapes::fold_unit_reshape_into_rearrange,
    },
    Pattern {
        name: "fold-transpose-of-matmul",
        root: RearrangeOp::NAME,
        rewrite: reshapes::fold_transpose_of_matmul,
    },
    Pattern {
        name: "fold-identity-reshape",
        root: ReshapeOp::NAME,
        rewrite: reshapes::fold_identity_reshape,
    },
    Pattern {
        name: "fold-reshape-of-reshape",
        root: ReshapeOp::NAME,
        rewrite: reshapes::fold_reshape_of_reshape,
    },
    Pattern {
        name: "fold-reshape-of-constant",
        root: ReshapeOp::NAME,
        rewrite: reshapes::fold_reshape_of_constant,
    },
    Pattern {
        name: "squeeze-unit-batch-rhs",
        root: MatmulOp::NAME,
        rewrite: reshapes::squeeze_unit_batch_rhs,
    },
    Pattern {
        name: "sink-reshape-through-matmul",
        root: MatmulOp::NAME,
        rewrite: reshapes::sink_reshape_through_matmul,
    },
    sink_reshape(0),
    sink_reshape(1),
    sink_reshape(2),
    sink_reshape(3),
    sink_reshape(4),
];

/// `sink-reshape` rooted at its `index`th op kind.
const fn sink_reshape(index: usize) -> Pattern {
    Pattern {
        name: "sink-reshape",
        root: reshapes::SINK_ROOTS[index],
        rewrite: reshapes::sink_reshape,
    }
}

/// The `ipu-canonicalize` pass.
#[derive(Clone)]
pub struct Canonicalize {
    options: CanonicalizeOptions,
}

impl Pass for Canonicalize {
    type Options = CanonicalizeOptions;
    const ARGUMENT: &'static str = "ipu-canonicalize";
    const SUMMARY: &'static str =
        "Simplify ipu ops: casts of casts, identity rearranges and reshapes, transposes into matmul flags, reshapes sunk below elementwise ops";

    fn new(options: CanonicalizeOptions) -> Self {
        Canonicalize { options }
    }

    fn options(&self) -> &CanonicalizeOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let options = &self.options;
        crate::rewrite::apply(
            op,
            Self::ARGUMENT,
            PATTERNS,
            (&options.disable_patterns, options.max_iterations),
            run,
        )
    }
}

fn type_of<'c>(value: Value<'c, '_>) -> Type<'c> {
    value.r#type()
}

fn info(value: Value) -> Option<TensorInfo> {
    TensorInfo::from_type(value.r#type()).ok()
}

/// Replaces `op`'s single result with `value`, then erases the op we looked through to find
/// it if that became dead.
fn replace_and_clean(
    rewriter: &Rewriter,
    op: OperationRef,
    value: Value,
    looked_through: Option<OperationRef>,
) {
    rewriter.replace(op, &[value]);
    if let Some(producer) = looked_through {
        rewriter.erase_dead_tree(producer);
    }
}

fn fold_identity_cast(op: OperationRef, rewriter: &Rewriter) -> bool {
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
        (ElementType::F8E4M3 | ElementType::F8E5M2, ElementType::F32) => true,
        // Unscaled F143 (max 240, min 2^-10) and F152 (max 57344, min 2^-17) fit f16 exactly.
        (ElementType::F8E4M3 | ElementType::F8E5M2, ElementType::F16) => scale == 0,
        _ => false,
    }
}

fn fold_cast_of_cast(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Ok(outer) = CastOp::try_from(op) else {
        return false;
    };
    let Some(middle) = outer.input() else {
        return false;
    };
    let Some(inner_op) = producer(middle) else {
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
    let context = rewriter.context();
    let new = rewriter.insert_before(
        op,
        CastOp::build(context, op.location(), source, type_of(result), scale),
    );
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

fn fold_identity_rearrange(op: OperationRef, rewriter: &Rewriter) -> bool {
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

fn fold_rearrange_of_rearrange(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Ok(outer) = RearrangeOp::try_from(op) else {
        return false;
    };
    let Some(middle) = outer.input() else {
        return false;
    };
    let Some(inner_op) = producer(middle) else {
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
    // The tile lowering runs permutations that keep the last axis and swaps of the last two;
    // a composition moving the last axis otherwise stays as the steps it was written in.
    if rank >= 2 && composed[rank - 1] != rank as i64 - 1 {
        let mut swap: Vec<i64> = (0..rank as i64).collect();
        swap.swap(rank - 2, rank - 1);
        if composed != swap {
            return false;
        }
    }
    if is_identity(&composed) && type_of(source) == type_of(result) {
        replace_and_clean(rewriter, op, source, Some(inner_op));
        return true;
    }
    let context = rewriter.context();
    let permutation = if is_identity(&composed) {
        None
    } else {
        Some(composed.as_slice())
    };
    let new = rewriter.insert_before(
        op,
        RearrangeOp::build(context, op.location(), source, type_of(result), permutation),
    );
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    replace_and_clean(rewriter, op, new_result.into(), Some(inner_op));
    true
}

/// If `value` is a plain transpose of the last two axes (no format change), maybe behind
/// reshapes that only regroup its batch axes: its source and the transpose, and the shape the
/// source takes in `value`'s place (its last two axes behind `value`'s batch axes) when that
/// is not its own.
fn transposed_source<'c, 'a>(
    value: Value<'c, 'a>,
) -> Option<(Value<'c, 'a>, OperationRef<'c, 'a>, Option<Vec<i64>>)> {
    let transposed = reshapes::through_batch_reshapes(value);
    let producer = producer(transposed)?;
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
    let (own, wanted) = (&source_info.shape, &value_info.shape);
    let mut shape = wanted[..wanted.len() - 2].to_vec();
    shape.extend_from_slice(&own[own.len() - 2..]);
    Some((source, producer, (shape != *own).then_some(shape)))
}

fn fold_transpose_into_matmul<'c, 'a>(op: OperationRef<'c, 'a>, rewriter: &Rewriter<'c>) -> bool {
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
    // A source in another batch grouping is reshaped into the operand's.
    let regrouped = |fold: Option<(Value<'c, 'a>, OperationRef<'c, 'a>, Option<Vec<i64>>)>| {
        let (source, _, shape) = fold?;
        let Some(shape) = shape else {
            return Some(source);
        };
        let r#type = reshapes::with_shape(source, &shape)?;
        let reshape = rewriter.insert_before(op, ReshapeOp::build(op.location(), source, r#type));
        // SAFETY: the reshape was just inserted into the live IR `op` belongs to.
        reshape
            .result(0)
            .ok()
            .map(|r| unsafe { Value::from_raw(Value::from(r).to_raw()) })
    };
    let (Some(new_lhs), Some(new_rhs)) = (
        regrouped(lhs_fold.clone()).or(Some(lhs)),
        regrouped(rhs_fold.clone()).or(Some(rhs)),
    ) else {
        return false;
    };
    let transpose_lhs = matmul.transpose_lhs() ^ lhs_fold.is_some();
    let transpose_rhs = matmul.transpose_rhs() ^ rhs_fold.is_some();
    let context = rewriter.context();
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
    let new = rewriter.insert_before(op, new);
    let Ok(new_result) = new.result(0) else {
        return false;
    };
    rewriter.replace(op, &[new_result.into()]);
    // The operands' old producers (the transposes, the reshapes after them), once dead.
    for (operand, fold) in [(lhs, &lhs_fold), (rhs, &rhs_fold)] {
        if let (Some(_), Some(producer)) = (fold, crate::ir::producer(operand)) {
            rewriter.erase_dead_tree(producer);
        }
    }
    true
}
