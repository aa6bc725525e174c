//! Rewrite patterns without `unsafe`: a pass lists its [`Pattern`]s (a name, the op they match,
//! a plain function) and [`apply`] runs them with MLIR's greedy driver to a fixed point,
//! counting each pattern's rewrites into the pass's statistics. A pattern function gets the
//! matched op and a [`Rewriter`], and returns whether it changed the IR. Read the IR around the
//! op with [`crate::ir`] (`producer`, `produced_by`, `has_uses`, `splat_of`, ...).
//!
//! IRDL ops have no side-effect interface, so MLIR never treats them as trivially dead: a
//! pattern that looks through an op (uses its operand instead of its result) must erase it
//! itself once it has no uses ([`Rewriter::erase_if_dead`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use melior::ir::{operation::OperationLike, Operation, OperationRef, Value};
use melior::{
    apply_patterns_and_fold_greedily_with_op, create_op_rewrite_pattern, Context,
    GreedyRewriteDriverConfig, PatternRewriter, RewritePatternSet,
};

use crate::pass::{PassFailure, PassRun};

/// What a pattern may do to the IR while it rewrites the matched op.
pub struct Rewriter<'c> {
    rewriter: PatternRewriter,
    context: &'c Context,
}

impl<'c> Rewriter<'c> {
    /// The context, to build new ops and attributes in.
    pub fn context(&self) -> &'c Context {
        self.context
    }

    /// Inserts `new` just before `anchor` and returns it.
    pub fn insert_before(&self, anchor: OperationRef, new: Operation<'c>) -> OperationRef<'c, '_> {
        let base = self.rewriter.as_rewriter_base();
        base.set_insertion_point_before(anchor);
        // SAFETY: the inserted op lives in the IR the rewriter edits, which outlives the
        // pattern call this rewriter is handed to.
        unsafe { OperationRef::from_raw(base.insert(new).to_raw()) }
    }

    /// Replaces every use of `op`'s results with `values` (one per result) and erases `op`.
    pub fn replace(&self, op: OperationRef, values: &[Value]) {
        self.rewriter
            .as_rewriter_base()
            .replace_op_with_values(op, values);
    }

    /// Erases `op` (it must have no uses left).
    pub fn erase(&self, op: OperationRef) {
        self.rewriter.as_rewriter_base().erase_op(op);
    }

    /// Erases `op` if none of its results is used any more; returns whether it did.
    pub fn erase_if_dead(&self, op: OperationRef) -> bool {
        let dead = op
            .results()
            .all(|result| !crate::ir::has_uses(result.into()));
        if dead {
            self.erase(op);
        }
        dead
    }

    /// Erases `op` if it is dead and side-effect free (an `ipu` graph op or a constant), and
    /// every producer that only it and the ops erased with it read, up the graph.
    pub fn erase_dead_tree(&self, op: OperationRef) {
        let pure = |op: &OperationRef| {
            let name = ipu_dialects::ipu::op_name(op);
            (name.starts_with("ipu.") && name != "ipu.repeat") || name == "arith.constant"
        };
        if !pure(&op)
            || op
                .results()
                .any(|result| crate::ir::has_uses(result.into()))
        {
            return;
        }
        // Each op joins after every reader of it, so the list is in erasable order.
        let key = |op: &OperationRef| op.to_raw().ptr as usize;
        let mut dying = vec![op];
        let mut seen = std::collections::BTreeSet::from([key(&op)]);
        let mut next = 0;
        while next < dying.len() {
            let user = dying[next];
            next += 1;
            for producer in user.operands().filter_map(crate::ir::producer) {
                if !pure(&producer) || seen.contains(&key(&producer)) {
                    continue;
                }
                let only_dying = producer.results().all(|result| {
                    crate::ir::users(result.into())
                        .iter()
                        .all(|reader| seen.contains(&key(reader)))
                });
                if only_dying {
                    seen.insert(key(&producer));
                    dying.push(producer);
                }
            }
        }
        for op in dying {
            self.erase(op);
        }
    }
}

/// A pattern function: rewrites `op` (an op named as the pattern's root) and returns `true`,
/// or leaves the IR untouched and returns `false`.
pub type PatternFn = for<'c, 'a> fn(OperationRef<'c, 'a>, &Rewriter<'c>) -> bool;

/// One rewrite pattern of a pass.
#[derive(Clone, Copy)]
pub struct Pattern {
    /// The name statistics and `disable-patterns` options use (kebab case).
    pub name: &'static str,
    /// The op name it matches (`ipu.add`).
    pub root: &'static str,
    pub rewrite: PatternFn,
}

/// Runs `patterns` (but those named in `disabled`) on everything nested under `op` with MLIR's
/// greedy driver, at most `max_iterations` sweeps, and records in `run` one statistic per
/// pattern that rewrote something (`<name>`) and the total (`rewrites`). A name in `disabled`
/// that is no pattern, or a driver that does not converge, is an error at `op` naming `pass`.
pub fn apply(
    op: OperationRef,
    pass: &str,
    patterns: &[Pattern],
    (disabled, max_iterations): (&[String], u32),
    run: &mut PassRun,
) -> Result<(), PassFailure> {
    if let Some(unknown) = disabled
        .iter()
        .find(|name| !patterns.iter().any(|p| p.name == name.as_str()))
    {
        let names: Vec<&str> = patterns.iter().map(|p| p.name).collect();
        ipu_dialects::diagnostics::error_at(
            op.location(),
            &format!(
                "{pass}: unknown pattern '{unknown}' in disable-patterns; patterns: {}",
                names.join(", ")
            ),
        );
        return Err(PassFailure(format!("unknown pattern '{unknown}'")));
    }
    let context_ref = op.context();
    // SAFETY: the context outlives this pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let counters: Vec<Arc<AtomicU64>> = patterns
        .iter()
        .map(|_| Arc::new(AtomicU64::new(0)))
        .collect();
    let set = RewritePatternSet::new(context);
    for (pattern, counter) in patterns.iter().zip(&counters) {
        if disabled.iter().any(|name| name == pattern.name) {
            continue;
        }
        let (rewrite, counter) = (pattern.rewrite, counter.clone());
        set.add(create_op_rewrite_pattern(
            pattern.root,
            1,
            context,
            move |_pattern, raw_op, raw_rewriter| {
                // SAFETY: MLIR hands a live op and rewriter for the duration of the call, and
                // the op's context outlives it.
                let op = unsafe { OperationRef::from_raw(raw_op) };
                let context_ref = op.context();
                let rewriter = Rewriter {
                    rewriter: unsafe { PatternRewriter::from_raw(raw_rewriter) },
                    context: unsafe { context_ref.to_ref() },
                };
                let changed = rewrite(op, &rewriter);
                if changed {
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                changed
            },
            &[],
        ));
    }
    let config = GreedyRewriteDriverConfig::new();
    config.set_max_iterations(i64::from(max_iterations));
    let result = apply_patterns_and_fold_greedily_with_op(op, set.freeze(), &config);
    let mut total = 0;
    for (pattern, counter) in patterns.iter().zip(&counters) {
        let count = counter.load(Ordering::Relaxed);
        if count > 0 {
            run.statistic(
                pattern.name,
                "Number of times the pattern rewrote an op",
                count,
            );
        }
        total += count;
    }
    run.statistic("rewrites", "Number of ops rewritten", total);
    result.map_err(|_| {
        ipu_dialects::diagnostics::error_at(
            op.location(),
            &format!(
                "{pass} did not converge in {max_iterations} iterations (raise max-iterations)"
            ),
        );
        PassFailure("greedy rewriting did not converge".to_string())
    })
}
