//! `ipu-lower-mid`: precision and layout planning. Reads each function (not repeat bodies,
//! which are planned once through their `ipu.repeat`) into the planner's graph, runs the
//! Pareto beam (`crate::planner`), logs every retained finalist, writes the best one back
//! (`plan` / `estimate` attributes, formatted result types, explicit conversions) and records
//! all finalists on the module (`ipu.finalists`) for `ipu-select-finalist`.
//!
//! FP8 scales: each GEMM operand gets the smallest scale s with `max|x| / 2^s <= 240`
//! (`tiling::format::fp8_scale_for`) from its range: splat constants, function arguments given
//! by `calibration=FILE` (the format is in [`calibration`]), and bounds propagated through
//! ops (`planner::ranges`); 0 where the range is unknown, `fp8-scale` for every operand when
//! given. The chosen scales are the `lhs_scale` / `rhs_scale` parameters of FP8 GEMM plans
//! (hence in `dump-plans` files, which pin them when fed back as constraints) and the scale
//! of the inserted casts and `#ipu.format`s.
//!
//! ```mlir
//! // ipu-opt in.mlir -p 'builtin.module(ipu-lower-mid{tiles=64 precision=fp8})'
//! %r = "ipu.matmul"(%a, %w) {estimate = #ipu.estimate<...>, plan = #ipu.plan<"gemm_output_stationary", {grid = [1, 8, 8, 1], ...}>} : ...
//! ```

use ipu_device::{MemoryClass, Target};
use ipu_dialects::diagnostics::op_error;
use melior::{
    ir::{
        attribute::StringAttribute, operation::OperationLike, operation::OperationMutLike,
        operation::OperationRefMut, OperationRef,
    },
    Context,
};
use serde_json::json;

pub mod calibration;

use crate::pass::{Pass, PassFailure, PassRun};
use crate::plan_ir::{self, FunctionGraph};
use crate::planner::{
    self, beam::Planned, Constraints, Finalist, Origin, PlannerError, PlannerOptions,
    PrecisionPolicy,
};
use calibration::Calibration;

crate::option_enum! {
    /// Where GEMM weights live.
    pub enum WeightMemory {
        /// Both classes are candidates.
        Auto = "auto",
        Interleaved = "interleaved",
        Standard = "standard",
    }
}

crate::pass_options! {
    /// Options of `ipu-lower-mid`.
    pub struct LowerMidOptions for "ipu-lower-mid" {
        /// Target table name (c600, bow).
        target: String = "c600".to_string(),
        /// Tiles of the device the program runs on.
        tiles: u32 = 1472,
        /// Tile counts plans may use (empty: all tiles).
        active_tiles: Vec<u32> = Vec::new(),
        /// Precision policy for GEMM inputs: native (operands' own types), f32, f16 or fp8.
        precision: PrecisionPolicy = PrecisionPolicy::F16,
        /// FP8 scale exponent of every GEMM operand (overrides calibration); empty: each
        /// operand's from its data range (smallest s with max|x| / 2^s <= 240, in -31..=31):
        /// constants, calibrated arguments, bounds propagated through ops; 0 where unknown.
        fp8_scale: Option<i64> = None,
        /// JSON file of function-argument data ranges for FP8 scales: an object keyed by
        /// argument ("arg0", "%arg0" or the position "0"; "@f": {...} for function @f only)
        /// whose values are max|x| (a number, or {"max_abs": n}) or a .npy file of f16/f32
        /// samples (a path relative to the file, or {"npy": path}) giving max|x|.
        calibration: String = String::new(),
        /// Memory class of GEMM weights.
        weight_memory: WeightMemory = WeightMemory::Auto,
        /// Partial plans kept per format group by the beam.
        beam_width: u32 = 8,
        /// Candidates per op kept before the beam (best standalone cost first).
        candidates_per_op: u32 = 24,
        /// Finalists retained for ipu-select-finalist.
        finalists: u32 = 4,
        /// Per-tile memory budget in bytes; empty: the target table's planned-data budget.
        memory_budget: Option<u64> = None,
        /// Plan constraints as JSON text (see planner::constraints).
        constraints: String = String::new(),
        /// File with plan constraints as JSON.
        constraints_file: String = String::new(),
        /// File to write the chosen plans to (the constraints form; reproduces the compile).
        dump_plans: String = String::new(),
    }
}

/// The `ipu-lower-mid` pass.
#[derive(Clone)]
pub struct LowerMid {
    options: LowerMidOptions,
}

/// Module attribute holding the planner options and every function's finalists.
pub const FINALISTS_ATTRIBUTE: &str = "ipu.finalists";

/// Module attribute, set by selection: the `ipu-lower-mid` options the plans were made with.
pub const PLAN_OPTIONS_ATTRIBUTE: &str = "ipu.plan_options";

/// The most bytes an option's file (constraints, calibration) may hold.
pub const MAX_OPTION_FILE_BYTES: u64 = 64 << 20;

/// Reads the text file an option names: a regular file of at most [`MAX_OPTION_FILE_BYTES`]
/// (a device such as /dev/zero, a FIFO or a directory is refused before anything is read).
pub(crate) fn read_option_file(option: &str, path: &str) -> Result<String, String> {
    use std::io::Read;
    let metadata = std::fs::metadata(path)
        .map_err(|error| format!("{option} '{path}': cannot be read: {error}"))?;
    if !metadata.is_file() {
        return Err(format!("{option} '{path}': not a regular file"));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|file| {
            file.take(MAX_OPTION_FILE_BYTES + 1)
                .read_to_string(&mut text)
        })
        .map_err(|error| format!("{option} '{path}': cannot be read: {error}"))?;
    if text.len() as u64 > MAX_OPTION_FILE_BYTES {
        return Err(format!(
            "{option} '{path}': larger than {MAX_OPTION_FILE_BYTES} bytes"
        ));
    }
    Ok(text)
}

/// Builds the planner's options from the pass options (shared with `ipu-select-finalist`).
pub fn planner_options(
    options: &LowerMidOptions,
    target: &Target,
) -> Result<PlannerOptions, String> {
    let mut planner = PlannerOptions::new(options.tiles, target);
    if options.tiles == 0 || options.tiles > target.geometry.tiles.value {
        return Err(format!(
            "tiles={} is outside 1..={} of target {}",
            options.tiles, target.geometry.tiles.value, target.name
        ));
    }
    planner.active_tiles = options.active_tiles.clone();
    if let Some(bad) = options
        .active_tiles
        .iter()
        .find(|&&count| count == 0 || count > options.tiles)
    {
        return Err(format!(
            "active-tiles entry {bad} is outside 1..={}",
            options.tiles
        ));
    }
    planner.precision = options.precision;
    planner.fp8_scale = options.fp8_scale;
    if let Some(scale) = options.fp8_scale {
        if !(-31..=31).contains(&scale) {
            return Err(format!("fp8-scale={scale} is outside -31..=31"));
        }
    }
    planner.weight_memory = match options.weight_memory {
        WeightMemory::Auto => None,
        WeightMemory::Interleaved => Some(MemoryClass::Interleaved),
        WeightMemory::Standard => Some(MemoryClass::Standard),
    };
    // Searches with no room are refused rather than quietly widened to 1.
    for (name, value) in [
        ("beam-width", options.beam_width),
        ("candidates-per-op", options.candidates_per_op),
        ("finalists", options.finalists),
    ] {
        if value == 0 {
            return Err(format!("{name}=0: the search needs at least 1"));
        }
    }
    planner.beam_width = options.beam_width as usize;
    planner.candidates_per_op = options.candidates_per_op as usize;
    planner.finalists = options.finalists as usize;
    if let Some(budget) = options.memory_budget {
        // A smaller budget shrinks both classes in proportion to the table's split.
        let table = planner.total_budget.max(1);
        planner.standard_budget = planner
            .standard_budget
            .min(planner.standard_budget * budget / table);
        planner.interleaved_budget = planner
            .interleaved_budget
            .min(planner.interleaved_budget * budget / table);
        planner.total_budget = budget;
    }
    let mut text = options.constraints.clone();
    if !options.constraints_file.is_empty() {
        text = read_option_file("constraints-file", &options.constraints_file)?;
    }
    if !text.trim().is_empty() {
        planner.constraints = Constraints::parse(&text).map_err(|error| error.to_string())?;
    }
    Ok(planner)
}

fn braces<T: std::fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let items: Vec<String> = items.into_iter().map(|item| item.to_string()).collect();
    format!("{{{}}}", items.join(","))
}

/// Logs the seed's `retained operator-plan finalist` line for `finalist`.
pub fn log_finalist(index: usize, graph: &planner::Graph, finalist: &Finalist) {
    let estimate = &finalist.estimate;
    let mut sources: Vec<usize> = finalist.conversions.iter().map(|c| c.value).collect();
    sources.sort_unstable();
    sources.dedup();
    let sources: Vec<String> = sources.iter().map(|value| format!("%{value}")).collect();
    tracing::info!(
        finalist = index,
        values = graph.values.len() + finalist.conversions.len(),
        operations = graph.ops.len(),
        estimated_cycles = estimate.cycles,
        estimated_exchange_cycles = estimate.exchange_cycles,
        exchange_row_bytes = estimate.exchange_row_bytes,
        peak_standard_bytes = estimate.peak_standard,
        peak_interleaved_bytes = estimate.peak_interleaved,
        peak_total_bytes = estimate.peak_total,
        maximum_standard_allocation_bytes = estimate.maximum_standard_allocation,
        active_tile_counts = %braces(finalist.active_tile_counts.iter()),
        padding_group_counts = %braces(finalist.padding_group_counts.iter().map(|(group, count)| format!("{group}:{count}"))),
        conversion_sources = %format!("[{}]", sources.join(",")),
        "retained operator-plan finalist"
    );
}

/// Every op's complete plan in the constraints form (`"3"`, `"body:<f>:0"` keys).
pub fn plan_dump(
    function: &FunctionGraph,
    finalist: &Finalist,
) -> Vec<(String, ipu_dialects::plan::OperatorPlan)> {
    let mut plans = Vec::new();
    for (index, candidate) in finalist.plans.iter().enumerate() {
        plans.push((index.to_string(), candidate.plan.clone()));
        if let (Some(body), Some(body_plan)) =
            (function.bodies.get(&index), finalist.bodies.get(&index))
        {
            for (body_index, candidate) in body_plan.plans.iter().enumerate() {
                plans.push((
                    format!("body:{}:{body_index}", body.name),
                    candidate.plan.clone(),
                ));
            }
        }
    }
    plans
}

/// The policy sets the AMP input precision of products whose result is its partials type
/// (F16 for F16 and FP8, f32 for f32) and, under f32, of F16 products that are only returned
/// (`lower::PrecisionPolicy::input_for`). Says so, once per op, where it does not apply.
fn warn_policy_not_applied(function: &str, graph: &planner::Graph, policy: PrecisionPolicy) {
    // Under the native policy every product runs in its own types: nothing to say.
    let Some(input) = policy.fixed_input() else {
        return;
    };
    let partials = ipu_device::kernels::describe::default_partials(input);
    for (index, op) in graph.ops.iter().enumerate() {
        let (planner::OpKind::Matmul { .. }, Some(&a), Some(&c)) =
            (&op.kind, op.operands.first(), op.results.first())
        else {
            continue;
        };
        let result = graph.values[c].element;
        let returned_only = crate::tiling::candidate::returned_only(graph, c);
        let host = graph.values[a].element;
        if policy.input_for(host, result, returned_only) != input {
            tracing::warn!(
                function,
                op = index,
                policy = input.short_name(),
                result = result.short_name(),
                "the precision policy does not apply to this matmul: its products accumulate {} partials and its result is {}; it runs in its operands' precision (convert the model to {} to run it under the policy)",
                partials.short_name(),
                result.short_name(),
                partials.short_name()
            );
        }
    }
}

fn argument_count(graph: &planner::Graph) -> usize {
    graph
        .values
        .iter()
        .take_while(|value| value.origin == Origin::Argument)
        .count()
}

/// Sets the calibrated bounds of `function`'s arguments (and logs each with its FP8 scale).
fn calibrate(function: &str, graph: &mut planner::Graph, calibration: &Calibration) {
    for position in 0..argument_count(graph) {
        if let Some(entry) = calibration.entry_for(function, position) {
            graph.values[position].max_abs = Some(entry.max_abs);
            tracing::info!(
                function = %function,
                argument = position,
                max_abs = entry.max_abs,
                source = %entry.source,
                fp8_scale = crate::tiling::format::fp8_scale_for(entry.max_abs),
                "calibrated argument range"
            );
        }
    }
}

/// Reports a planner error at the op it names.
pub fn report(function: &FunctionGraph, error: &PlannerError) {
    let op = match error {
        PlannerError::Graph { op, .. }
        | PlannerError::NoCandidate { op, .. }
        | PlannerError::OutOfMemory { op, .. } => function.ops.get(*op).copied(),
        PlannerError::Constraints(_) => None,
    };
    let message = match error {
        PlannerError::OutOfMemory { class, short, needed, budget, plan, .. } => format!(
            "does not fit: {class} memory per tile is short by {short} bytes for the best candidate (needs {needed} B of {budget} B; {plan})"
        ),
        PlannerError::NoCandidate { detail, .. } => format!("has no operator plan: {detail}"),
        other => other.to_string(),
    };
    match op {
        Some(op) => op_error(&op, &message),
        None => op_error(&function.function, &message),
    }
}

impl Pass for LowerMid {
    type Options = LowerMidOptions;
    const ARGUMENT: &'static str = "ipu-lower-mid";
    const SUMMARY: &'static str =
        "Choose precisions, formats and operator plans (Pareto beam); insert explicit conversions";

    fn new(options: LowerMidOptions) -> Self {
        LowerMid { options }
    }

    fn options(&self) -> &LowerMidOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        in_package_build(op, self.options.tiles, || {
            crate::build_trace::staged("lower_mid", || self.run_stage(op, run))
        })
    }
}

impl LowerMid {
    fn run_stage(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let fail = |message: String| {
            op_error(&op, &format!("ipu-lower-mid: {message}"));
            PassFailure(message)
        };
        let target =
            Target::by_name(&self.options.target).map_err(|error| fail(error.to_string()))?;
        let options = planner_options(&self.options, &target).map_err(fail)?;
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        let table = plan_ir::functions(op);
        let bodies = plan_ir::body_names(op);
        let mut record = serde_json::Map::new();
        let mut dumps = Vec::new();
        let mut graphs = Vec::new();
        for (name, function) in &table {
            if bodies.contains(name) {
                continue;
            }
            let graph = plan_ir::read_function(*function, &table).map_err(|error| {
                op_error(&error.op, &format!("ipu-lower-mid: {}", error.message));
                PassFailure(error.message)
            })?;
            graphs.push((name, graph));
        }
        let calibration = if self.options.calibration.is_empty() {
            None
        } else {
            let calibration = Calibration::load(&self.options.calibration).map_err(fail)?;
            let counts: Vec<(String, usize)> = graphs
                .iter()
                .map(|(name, graph)| ((*name).clone(), argument_count(&graph.graph)))
                .collect();
            calibration.check(&counts).map_err(fail)?;
            Some(calibration)
        };
        for (name, mut graph) in graphs {
            if graph.ops.is_empty() {
                continue;
            }
            if let Some(calibration) = &calibration {
                calibrate(name, &mut graph.graph, calibration);
            }
            planner::ranges::propagate(&mut graph.graph);
            warn_policy_not_applied(name, &graph.graph, options.precision);
            let planned: Planned =
                planner::plan(&graph.graph, &options, &target).map_err(|error| {
                    report(&graph, &error);
                    PassFailure(error.to_string())
                })?;
            tracing::info!(function = %name, frontier_sizes = ?planned.frontier_sizes, candidates = planned.candidates.iter().map(Vec::len).sum::<usize>(), "planned operator-plan frontier");
            for (index, finalist) in planned.finalists.iter().enumerate() {
                log_finalist(index, &graph.graph, finalist);
            }
            let best = &planned.finalists[0];
            let conversions = plan_ir::apply(context, &graph, best).map_err(fail)?;
            run.statistic(
                "planned-ops",
                "Number of ops given an operator plan",
                graph.ops.len() as u64,
            );
            run.statistic(
                "conversions",
                "Number of cast and rearrange ops inserted",
                conversions as u64,
            );
            run.statistic(
                "finalists",
                "Number of finalists retained",
                planned.finalists.len() as u64,
            );
            let finalists: Vec<serde_json::Value> = planned
                .finalists
                .iter()
                .map(|finalist| Constraints::to_json(&plan_dump(&graph, finalist)))
                .collect();
            record.insert(name.clone(), json!(finalists));
            dumps.extend(plan_dump(&graph, best));
        }
        let options_text = {
            use crate::pipeline::PassOptions;
            self.options.print()
        };
        let value = json!({ "options": options_text, "functions": record }).to_string();
        // SAFETY: `op` is the live module this pass runs on.
        let mut module = unsafe { OperationRefMut::from_raw(op.to_raw()) };
        module.set_attribute(
            FINALISTS_ATTRIBUTE,
            StringAttribute::new(context, &value).into(),
        );
        if !self.options.dump_plans.is_empty() {
            std::fs::write(&self.options.dump_plans, Constraints::dump(&dumps) + "\n").map_err(
                |error| {
                    fail(format!(
                        "cannot write dump-plans '{}': {error}",
                        self.options.dump_plans
                    ))
                },
            )?;
        }
        Ok(())
    }
}

/// The ipu-lower-mid options recorded on `module` by planning, if any.
pub fn planned_options(module: OperationRef) -> Option<LowerMidOptions> {
    let text = match module.attribute(PLAN_OPTIONS_ATTRIBUTE) {
        Ok(attribute) => ipu_dialects::ipu::string_value(attribute)?,
        Err(_) => {
            let record = module
                .attribute(FINALISTS_ATTRIBUTE)
                .ok()
                .and_then(ipu_dialects::ipu::string_value)?;
            let record: serde_json::Value = serde_json::from_str(&record).ok()?;
            record.get("options")?.as_str()?.to_string()
        }
    };
    crate::pipeline::parse_option_list(&text)
        .ok()
        .and_then(|list| {
            <LowerMidOptions as crate::pipeline::PassOptions>::from_pass_options(&list).ok()
        })
}

/// Runs `body`, a stage of the package build of `module`, inside the build's span with the
/// tile count planning used (recorded on the module once planned), else `tiles`.
pub fn in_package_build<T>(module: OperationRef, tiles: u32, body: impl FnOnce() -> T) -> T {
    let tile_count = planned_options(module).map_or(tiles, |options| options.tiles);
    crate::build_trace::in_package_build(module, tile_count, body)
}
