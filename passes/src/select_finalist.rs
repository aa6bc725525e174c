//! `ipu-select-finalist`: for each finalist `ipu-lower-mid` retained, screen tile mappings by
//! exchange resource load, model the expanded plan, schedule its exchange phases physically
//! (`crate::exchange::schedule`, the scheduler `ipu-lower-exchanges` uses) and select the
//! finalist with the best refined estimate:
//! `refined = analytical - analytical exchange + scheduled exchange`.
//!
//! Finalists are re-derived from their recorded plans (every parameter pinned), so the planner's
//! accounting is the only cost model and the selected finalist is written back with the same
//! code `ipu-lower-mid` uses. The function gets `ipu.refined_estimate` (refined cycles,
//! scheduled exchange cycles, then the memory peaks) and `ipu.tile_mapping` (the mapping's name;
//! `ipu.tile_mapping_tiles` holds the permutation when it is not the identity). When
//! `ipu-lower-mid` was asked for `dump-plans`, the file is rewritten with each function's
//! selected finalist (ipu-lower-mid wrote its beam's best), so the dump fed back as constraints
//! compiles the program this pipeline compiles.

use std::collections::BTreeMap;

use ipu_device::Target;
use ipu_dialects::{diagnostics::op_error, format::Estimate};
use melior::{
    ir::{
        attribute::StringAttribute, operation::OperationLike, operation::OperationMutLike,
        operation::OperationRefMut, Attribute, OperationRef,
    },
    Context,
};
use rayon::prelude::*;

use crate::exchange::schedule_phase_cached;
use crate::lower_mid::{planner_options, LowerMidOptions, FINALISTS_ATTRIBUTE};
use crate::pass::{Pass, PassFailure, PassRun};
use crate::pipeline::{parse_option_list, PassOptions};
use crate::plan_ir;
use crate::planner::{
    self,
    expand::{expand, mappings, model, ExpandedPlan, Mapping},
    Constraints, Finalist,
};

crate::pass_options! {
    /// Options of `ipu-select-finalist`.
    pub struct SelectFinalistOptions for "ipu-select-finalist" {
        /// Finalists modelled and scheduled (the first ones ipu-lower-mid retained).
        finalists: u32 = 4,
        /// Candidates per op when re-deriving a finalist from its recorded plans.
        candidates_per_op: u32 = 24,
        /// Tile mappings screened per finalist (the grid order first).
        mappings: u32 = 11,
    }
}

pub use crate::lower_mid::PLAN_OPTIONS_ATTRIBUTE;

/// The `ipu-select-finalist` pass.
#[derive(Clone)]
pub struct SelectFinalist {
    options: SelectFinalistOptions,
}

/// What selection found for one finalist.
#[derive(Debug, Clone)]
pub struct Scheduled {
    pub finalist: usize,
    pub mapping: Mapping,
    pub mappings_screened: usize,
    /// Exchange cycles and pressure of the grid order and of the chosen mapping.
    pub baseline: (u64, u64),
    pub candidate: (u64, u64),
    pub analytical_cycles: u64,
    pub analytical_exchange_cycles: u64,
    pub modelled_cycles: u64,
    pub scheduled_exchange_cycles: u64,
    pub refined_cycles: u64,
}

impl Scheduled {
    /// The seed's three lines for this finalist.
    pub fn log(&self) {
        tracing::info!(
            finalist = self.finalist,
            candidates = self.mappings_screened,
            baseline_cycles = self.baseline.0,
            candidate_cycles = self.candidate.0,
            baseline_pressure = self.baseline.1,
            candidate_pressure = self.candidate.1,
            mapping = %self.mapping.name,
            "screened tile mappings by exchange resource load"
        );
        tracing::info!(
            finalist = self.finalist,
            modelled_cycles = self.modelled_cycles,
            estimated_cycles = self.analytical_cycles,
            estimated_exchange_cycles = self.analytical_exchange_cycles,
            "modelled expanded operator plan"
        );
        tracing::info!(
            finalist = self.finalist,
            mapped = !self.mapping.is_identity(),
            analytical_cycles = self.analytical_cycles,
            analytical_exchange_cycles = self.analytical_exchange_cycles,
            scheduled_exchange_cycles = self.scheduled_exchange_cycles,
            refined_cycles = self.refined_cycles,
            "scheduled operator-plan finalist"
        );
    }
}

/// Identical phases (the panels of a K-streamed GEMM) are scheduled once; exchange the plan
/// prices without expanding it is added as priced.
pub fn scheduled_exchange_cycles(plan: &ExpandedPlan, target: &Target) -> Result<u64, String> {
    let mut unique: Vec<(&crate::planner::expand::ExpandedPhase, u64)> = Vec::new();
    let mut index: BTreeMap<&[crate::exchange::TransferRequest], usize> = BTreeMap::new();
    for phase in &plan.phases {
        match index.get(phase.transfers.as_slice()) {
            Some(&at) => unique[at].1 += phase.runs,
            None => {
                index.insert(phase.transfers.as_slice(), unique.len());
                unique.push((phase, phase.runs));
            }
        }
    }
    let cycles: Result<Vec<u64>, String> = unique
        .par_iter()
        .map(|(phase, runs)| {
            schedule_phase_cached(&phase.transfers, target)
                .map(|s| {
                    tracing::debug!(
                        op = phase.op,
                        transfers = phase.transfers.len(),
                        bytes = phase.transfers.iter().map(|t| t.bytes).sum::<u64>(),
                        cycles = s.cycles,
                        runs,
                        "scheduled expanded phase"
                    );
                    s.cycles * runs
                })
                .map_err(|e| format!("op {}: {e}", phase.op))
        })
        .collect();
    let cycles = cycles?;
    tracing::debug!(
        ?cycles,
        priced = plan.priced_exchange_cycles,
        "scheduled expanded plan"
    );
    Ok(cycles.into_iter().sum::<u64>() + plan.priced_exchange_cycles)
}

/// Screens mappings for `finalist` (the busiest endpoint's load summed over phases, then the
/// modelled exchange, then the screening order), models the expansion under the best one and
/// schedules its phases.
pub fn schedule_finalist(
    index: usize,
    graph: &planner::Graph,
    finalist: &Finalist,
    tiles: u32,
    limit: usize,
    target: &Target,
) -> Result<Scheduled, String> {
    let candidates = mappings(tiles, target.geometry.physical_columns.value, limit);
    // Expanded once; each mapping relabels the tiles.
    let grid = expand(graph, finalist, &Mapping::identity(tiles));
    let screened: Vec<(u64, u64, u64, ExpandedPlan)> = candidates
        .par_iter()
        .map(|mapping| {
            let plan = if mapping.is_identity() {
                grid.clone()
            } else {
                grid.remapped(mapping)
            };
            let (cycles, exchange, pressure) = model(&plan, target);
            (cycles, exchange, pressure, plan)
        })
        .collect();
    let best = (0..screened.len())
        .min_by_key(|&i| (screened[i].2, screened[i].1, i))
        .unwrap_or(0);
    let estimate = finalist.estimate;
    let scheduled = scheduled_exchange_cycles(&screened[best].3, target)?;
    Ok(Scheduled {
        finalist: index,
        mapping: candidates[best].clone(),
        mappings_screened: candidates.len(),
        baseline: (screened[0].1, screened[0].2),
        candidate: (screened[best].1, screened[best].2),
        analytical_cycles: estimate.cycles,
        analytical_exchange_cycles: estimate.exchange_cycles,
        modelled_cycles: screened[best].0,
        scheduled_exchange_cycles: scheduled,
        refined_cycles: estimate.cycles - estimate.exchange_cycles + scheduled,
    })
}

impl Pass for SelectFinalist {
    type Options = SelectFinalistOptions;
    const ARGUMENT: &'static str = "ipu-select-finalist";
    const SUMMARY: &'static str = "Screen tile mappings, schedule each finalist's exchanges physically and select the best refined plan";

    fn new(options: SelectFinalistOptions) -> Self {
        SelectFinalist { options }
    }

    fn options(&self) -> &SelectFinalistOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        crate::lower_mid::in_package_build(op, 0, || {
            crate::build_trace::staged("select_finalist", || self.run_stage(op, run))
        })
    }
}

impl SelectFinalist {
    fn run_stage(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let fail = |message: String| {
            op_error(&op, &format!("ipu-select-finalist: {message}"));
            PassFailure(message)
        };
        // Searches with no room are refused rather than quietly widened to 1.
        for (name, value) in [
            ("finalists", self.options.finalists),
            ("candidates-per-op", self.options.candidates_per_op),
            ("mappings", self.options.mappings),
        ] {
            if value == 0 {
                return Err(fail(format!("{name}=0: the search needs at least 1")));
            }
        }
        let record = op
            .attribute(FINALISTS_ATTRIBUTE)
            .ok()
            .and_then(ipu_dialects::ipu::string_value)
            .ok_or_else(|| {
                fail(format!(
                    "the module has no '{FINALISTS_ATTRIBUTE}' attribute; run ipu-lower-mid first"
                ))
            })?;
        let record: serde_json::Value = serde_json::from_str(&record)
            .map_err(|e| fail(format!("'{FINALISTS_ATTRIBUTE}' is not valid JSON: {e}")))?;
        let options_text = record.get("options").and_then(|v| v.as_str()).unwrap_or("");
        let lower_options = parse_option_list(options_text)
            .and_then(|list| LowerMidOptions::from_pass_options(&list))
            .map_err(|e| fail(format!("recorded ipu-lower-mid options do not parse: {e}")))?;
        let target = Target::by_name(&lower_options.target).map_err(|e| fail(e.to_string()))?;
        let mut options = planner_options(&lower_options, &target).map_err(fail)?;
        options.candidates_per_op = self.options.candidates_per_op as usize;
        options.finalists = 1;
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let table = plan_ir::functions(op);
        let functions = record
            .get("functions")
            .and_then(|v| v.as_object())
            .cloned()
            .unwrap_or_default();
        // The plans of each function's selected finalist (the first where none is scheduled),
        // for the dump ipu-lower-mid wrote of its best: the dump is what compiles.
        let mut selected_ops: Vec<serde_json::Value> = Vec::new();
        let mut keep = |finalists: &serde_json::Value, index: usize| {
            let ops = finalists
                .get(index)
                .and_then(|dump| dump.get("ops"))
                .and_then(|ops| ops.as_array());
            selected_ops.extend(ops.into_iter().flatten().cloned());
        };
        for (name, finalists) in &functions {
            let Some(function) = table.get(name) else {
                keep(finalists, 0);
                continue;
            };
            let graph = plan_ir::read_function(*function, &table).map_err(|error| {
                op_error(
                    &error.op,
                    &format!("ipu-select-finalist: {}", error.message),
                );
                PassFailure(error.message)
            })?;
            let dumps = finalists.as_array().cloned().unwrap_or_default();
            let mut results = Vec::new();
            let sets = dumps
                .iter()
                .take(self.options.finalists as usize)
                .map(|dump| Constraints::parse(&dump.to_string()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| fail(e.to_string()))?;
            let derived =
                planner::derive(&graph.graph, &options, &target, &sets).map_err(|error| {
                    crate::lower_mid::report(&graph, &error);
                    PassFailure(error.to_string())
                })?;
            // Finalists are independent: schedule them in parallel, log in finalist order.
            let graph_data = &graph.graph;
            let scheduled: Result<Vec<Scheduled>, String> = derived
                .par_iter()
                .enumerate()
                .map(|(index, finalist)| {
                    schedule_finalist(
                        index,
                        graph_data,
                        finalist,
                        options.tiles,
                        self.options.mappings as usize,
                        &target,
                    )
                })
                .collect();
            for result in scheduled.map_err(fail)? {
                result.log();
                results.push(result);
            }
            let Some(best) = results
                .iter()
                .min_by_key(|r| (r.refined_cycles, r.finalist))
                .cloned()
            else {
                keep(finalists, 0);
                continue;
            };
            keep(finalists, best.finalist);
            tracing::info!(
                selected = best.finalist,
                mapped = !best.mapping.is_identity(),
                "selected physically scheduled operator-plan finalist"
            );
            run.statistic(
                "finalists-scheduled",
                "Number of finalists physically scheduled",
                results.len() as u64,
            );
            let chosen = &derived[best.finalist];
            plan_ir::apply(context, &graph, chosen).map_err(fail)?;
            let estimate = chosen.estimate;
            let refined = Estimate {
                cycles: best.refined_cycles as i64,
                exchange_cycles: best.scheduled_exchange_cycles as i64,
                peak_standard_bytes: estimate.peak_standard as i64,
                peak_interleaved_bytes: estimate.peak_interleaved as i64,
                peak_total_bytes: estimate.peak_total as i64,
                maximum_standard_allocation_bytes: estimate.maximum_standard_allocation as i64,
            };
            // SAFETY: the function op is live in this module.
            let mut function_mut = unsafe { OperationRefMut::from_raw(function.to_raw()) };
            if let Some(attribute) = Attribute::parse(context, &refined.to_string()) {
                function_mut.set_attribute("ipu.refined_estimate", attribute);
            }
            function_mut.set_attribute(
                "ipu.selected_finalist",
                Attribute::parse(context, &format!("{} : i64", best.finalist))
                    .unwrap_or_else(|| Attribute::unit(context)),
            );
            function_mut.set_attribute(
                "ipu.tile_mapping",
                StringAttribute::new(context, &best.mapping.name).into(),
            );
            if !best.mapping.is_identity() {
                let items: Vec<String> = best.mapping.tiles.iter().map(|t| t.to_string()).collect();
                if let Some(attribute) =
                    Attribute::parse(context, &format!("array<i32: {}>", items.join(", ")))
                {
                    function_mut.set_attribute("ipu.tile_mapping_tiles", attribute);
                }
            }
        }
        if !lower_options.dump_plans.is_empty() {
            let dump = serde_json::json!({ "ops": selected_ops });
            let text = serde_json::to_string_pretty(&dump).unwrap_or_default() + "\n";
            std::fs::write(&lower_options.dump_plans, text).map_err(|error| {
                fail(format!(
                    "cannot write dump-plans '{}': {error}",
                    lower_options.dump_plans
                ))
            })?;
        }
        // The finalists are decided; later passes read the selected plan from the ops.
        // SAFETY: `op` is the live module this pass runs on.
        let mut module = unsafe { OperationRefMut::from_raw(op.to_raw()) };
        let _ = module.remove_attribute(FINALISTS_ATTRIBUTE);
        // The planning options stay, for the lowering (tile count, precision, FP8 scale).
        module.set_attribute(
            PLAN_OPTIONS_ATTRIBUTE,
            StringAttribute::new(context, options_text).into(),
        );
        Ok(())
    }
}
