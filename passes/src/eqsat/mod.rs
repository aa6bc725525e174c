//! `ipu-eqsat`: equality saturation over the pure `ipu` graph ops of each function body, with
//! extraction by the device cycle model.
//!
//! Each block is read into the plain-data graph of `ipu_dialects::graph` (other ops kept
//! opaque), and its pure `ipu` ops (no regions, no effects, unformatted tensors, no attributes
//! beyond their own) become an [`egg`] e-graph ([`language`]); ops with regions, `ipu.repeat`,
//! non-`ipu` ops, conversions a planner inserted and values from elsewhere are leaves and stay
//! untouched. The rules of
//! [`rules::RULES`] run under hard budgets (iterations, e-nodes, time); the cheapest program by
//! [`cost`] (cycles at `tiles` tiles of the C600 table) is extracted and, if it is cheaper than
//! the input, re-materialized ([`materialize`]) and verified.

pub mod cost;
pub mod ir;
pub mod language;
pub mod materialize;
pub mod rules;

#[cfg(test)]
mod block_tests;
#[cfg(test)]
mod eval;
#[cfg(test)]
mod tests;

use std::time::Duration;

use egg::{Extractor, Runner, StopReason};
use ipu_device::target::Target;
use melior::{
    ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike},
    Context,
};

use crate::pass::{Pass, PassFailure, PassRun};

crate::pass_options! {
    /// Options of `ipu-eqsat`.
    pub struct EqsatOptions for "ipu-eqsat" {
        /// Hard budget: rule-application iterations per block.
        iterations: u32 = 16,
        /// Hard budget: e-nodes in the e-graph of a block.
        nodes: u32 = 10000,
        /// Hard budget: milliseconds of saturation per block.
        time_limit_ms: u64 = 2000,
        /// Tiles each op is spread over when pricing it (the C600 has 1472).
        tiles: u32 = 1472,
    }
}

/// The `ipu-eqsat` pass.
#[derive(Clone)]
pub struct Eqsat {
    options: EqsatOptions,
}

/// The budget (or saturation) that ended a run, as reported.
pub fn stop_reason_name(reason: Option<&StopReason>) -> &'static str {
    match reason {
        Some(StopReason::Saturated) => "saturated",
        Some(StopReason::IterationLimit(_)) => "iterations",
        Some(StopReason::NodeLimit(_)) => "nodes",
        Some(StopReason::TimeLimit(_)) => "time",
        Some(StopReason::Other(_)) | None => "other",
    }
}

/// What one block's run found.
#[derive(Debug, Clone, Copy)]
struct Outcome {
    stop_reason: &'static str,
    iterations: u64,
    nodes: u64,
    cost_before: u64,
    cost_after: u64,
    rewritten: bool,
    ops_created: u64,
    ops_erased: u64,
}

impl Eqsat {
    /// Runs on `block` of `owner`; `None` when the block has no e-graph op.
    fn run_block<'c, 'a>(
        &self,
        owner: OperationRef<'c, 'a>,
        block: melior::ir::BlockRef<'c, 'a>,
        context: &'c Context,
        target: &Target,
    ) -> Option<Result<Outcome, materialize::MaterializeError>> {
        let graph = match ir::BlockGraph::new(owner, block) {
            Ok(graph) => graph,
            Err(error) => {
                // Read opaquely, only a block past the reader's size bound is refused.
                tracing::warn!(reason = %error.message, "eqsat skipped a block it could not read");
                return None;
            }
        };
        if graph.op_count() == 0 {
            return None;
        }
        let ir::BlockGraph { egraph, .. } = &graph;
        let runner = Runner::default()
            .with_egraph(egraph.clone())
            .with_iter_limit(self.options.iterations as usize)
            .with_node_limit(self.options.nodes as usize)
            .with_time_limit(Duration::from_millis(self.options.time_limit_ms))
            .run(&rules::rules());
        let mut graph = graph;
        graph.egraph = runner.egraph;
        let cost = cost::CycleCost {
            egraph: &graph.egraph,
            tiles: self.options.tiles,
            target,
        };
        let extractor = Extractor::new(
            &graph.egraph,
            cost::CycleCost {
                egraph: &graph.egraph,
                tiles: self.options.tiles,
                target,
            },
        );
        let mut outcome = Outcome {
            stop_reason: stop_reason_name(runner.stop_reason.as_ref()),
            iterations: runner.iterations.len() as u64,
            nodes: graph.egraph.total_size() as u64,
            cost_before: graph.cost_before(&cost),
            cost_after: graph.cost_after(&extractor, &cost),
            rewritten: false,
            ops_created: 0,
            ops_erased: 0,
        };
        if outcome.cost_after < outcome.cost_before {
            match materialize::materialize(&graph, &extractor, context) {
                Ok(done) => {
                    outcome.rewritten = true;
                    outcome.ops_created = done.ops_created;
                    outcome.ops_erased = done.ops_erased;
                }
                Err(error) => return Some(Err(error)),
            }
        } else {
            outcome.cost_after = outcome.cost_before;
        }
        Some(Ok(outcome))
    }
}

impl Pass for Eqsat {
    type Options = EqsatOptions;
    const ARGUMENT: &'static str = "ipu-eqsat";
    const SUMMARY: &'static str =
        "Equality saturation over pure ipu ops (matmul order, transposes, casts, adds), extracted by the cycle model";

    fn new(options: EqsatOptions) -> Self {
        Eqsat { options }
    }

    fn options(&self) -> &EqsatOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        if self.options.tiles == 0 || self.options.nodes == 0 {
            let message = format!(
                "ipu-eqsat: tiles and nodes must be at least 1, found tiles={} nodes={}",
                self.options.tiles, self.options.nodes
            );
            ipu_dialects::diagnostics::error_at(op.location(), &message);
            return Err(PassFailure(message));
        }
        let target = Target::c600();
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        // The pass runs on a function, or on a module and then on its functions.
        let mut functions = Vec::new();
        if ipu_dialects::ipu::op_name(&op) == "func.func" {
            functions.push(op);
        } else if let Some(body) = op.regions().next().and_then(|region| region.first_block()) {
            let mut next = body.first_operation();
            while let Some(nested) = next {
                if ipu_dialects::ipu::op_name(&nested) == "func.func" {
                    functions.push(nested);
                }
                next = nested.next_in_block();
            }
        }
        for function in functions {
            let name =
                ipu_dialects::ipu::string_attribute(&function, "sym_name").unwrap_or_default();
            let Some(region) = function.regions().next() else {
                continue;
            };
            let mut next = region.first_block();
            while let Some(block) = next {
                next = block.next_in_region();
                let outcome = match self.run_block(function, block, context, &target) {
                    None => continue,
                    Some(Ok(outcome)) => outcome,
                    Some(Err(error)) => {
                        // The block is untouched: report and keep the input program.
                        tracing::warn!(function = %name, reason = %error, "eqsat kept the input program");
                        run.statistic(
                            "kept-input",
                            "Blocks whose extracted program could not be placed",
                            1,
                        );
                        continue;
                    }
                };
                tracing::info!(
                    stop_reason = %outcome.stop_reason,
                    iterations = outcome.iterations,
                    nodes = outcome.nodes,
                    cost_before = outcome.cost_before,
                    cost_after = outcome.cost_after,
                    function = %name,
                    "eqsat finished"
                );
                let (statistic, help) = match outcome.stop_reason {
                    "saturated" => ("stopped-saturated", "Blocks whose e-graph saturated"),
                    "iterations" => (
                        "stopped-by-iterations",
                        "Blocks stopped by the iterations budget",
                    ),
                    "nodes" => ("stopped-by-nodes", "Blocks stopped by the nodes budget"),
                    "time" => (
                        "stopped-by-time",
                        "Blocks stopped by the time-limit-ms budget",
                    ),
                    _ => ("stopped-other", "Blocks stopped for another reason"),
                };
                run.statistic(statistic, help, 1);
                run.statistic(
                    "rewritten",
                    "Blocks replaced by a cheaper extracted program",
                    u64::from(outcome.rewritten),
                );
                run.statistic(
                    "ops-created",
                    "Ops built for extracted programs",
                    outcome.ops_created,
                );
                run.statistic("ops-erased", "Input ops erased as dead", outcome.ops_erased);
                run.statistic(
                    "cycles-saved",
                    "Estimated cycles saved",
                    outcome.cost_before - outcome.cost_after,
                );
            }
        }
        if !verify(op) {
            return Err(PassFailure(
                "ipu-eqsat produced ops that do not verify".to_string(),
            ));
        }
        Ok(())
    }
}

/// Verifies the ipu ops under `op` with the dialect's verifier: the whole module when the pass
/// runs on one; on a function, every op but `ipu.repeat` (its body symbol lives in the module,
/// which other threads may be rewriting, and the pass never touches it).
fn verify(op: OperationRef) -> bool {
    if ipu_dialects::ipu::op_name(&op) != "func.func" {
        return ipu_dialects::ipu::verify::verify_module(op);
    }
    let functions = ipu_dialects::ipu::verify::FunctionTable::new();
    let mut ok = true;
    op.walk(melior::ir::operation::WalkOrder::PreOrder, |nested| {
        if ipu_dialects::ipu::op_name(&nested) != ipu_dialects::ipu::RepeatOp::NAME {
            if let Err(message) = ipu_dialects::ipu::verify_operation(nested, &functions) {
                ipu_dialects::diagnostics::op_error(&nested, &message);
                ok = false;
            }
        }
        melior::ir::operation::WalkResult::Advance
    });
    ok
}
