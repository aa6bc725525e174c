//! `ipu-fold-add-zero`: drops `ipu.add(x, zeros)` (the zeros on either side) when the add's
//! result has `x`'s type. The worked example of a rewrite pass in `docs/writing-a-pass.md`
//! ("Rewriting ops"): one options struct, one pattern, one `Pass` impl, no `unsafe`.

use ipu_dialects::ipu::AddOp;
use melior::ir::{OperationRef, ValueLike};

use crate::ir::{producer, splat_of};
use crate::pass::{Pass, PassFailure, PassRun};
use crate::rewrite::{Pattern, Rewriter};

crate::pass_options! {
    /// Options of `ipu-fold-add-zero`.
    pub struct FoldAddZeroOptions for "ipu-fold-add-zero" {
        /// Upper bound on greedy driver iterations over the IR.
        max_iterations: u32 = 10,
    }
}

/// The `ipu-fold-add-zero` pass.
#[derive(Clone)]
pub struct FoldAddZero {
    options: FoldAddZeroOptions,
}

/// Its one pattern.
const PATTERNS: &[Pattern] = &[Pattern {
    name: "fold-add-zero",
    root: AddOp::NAME,
    rewrite: fold_add_zero,
}];

impl Pass for FoldAddZero {
    type Options = FoldAddZeroOptions;
    const ARGUMENT: &'static str = "ipu-fold-add-zero";
    const SUMMARY: &'static str = "Drop ipu.add(x, zeros) when the result has x's type";

    fn new(options: FoldAddZeroOptions) -> Self {
        FoldAddZero { options }
    }

    fn options(&self) -> &FoldAddZeroOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let limits = (&[][..], self.options.max_iterations);
        crate::rewrite::apply(op, Self::ARGUMENT, PATTERNS, limits, run)
    }
}

/// `add(x, 0)` and `add(0, x)` => `x` when the result has `x`'s type (an add that broadcasts
/// `x` to a larger shape, or changes its element type or format, stays). The zeros are a splat
/// constant (`arith.constant dense<0.0>`, either sign of zero: the fold does not keep the sign
/// of a `-0.0` in `x`, as fast-math compilers do not); the constant is erased once unused.
fn fold_add_zero(op: OperationRef, rewriter: &Rewriter) -> bool {
    let Ok(add) = AddOp::try_from(op) else {
        return false;
    };
    let (Some(lhs), Some(rhs), Some(result)) = (add.lhs(), add.rhs(), add.result()) else {
        return false;
    };
    for (x, zeros) in [(lhs, rhs), (rhs, lhs)] {
        if splat_of(zeros) == Some(0.0) && x.r#type() == result.r#type() {
            let constant = producer(zeros);
            rewriter.replace(op, &[x]);
            if let Some(constant) = constant {
                rewriter.erase_if_dead(constant);
            }
            return true;
        }
    }
    false
}
