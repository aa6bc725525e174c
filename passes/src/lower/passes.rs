//! The lowering passes, each reading and rewriting the `ipu_tile` module ([`super::ir`]):
//! `ipu-lower-to-tiles`, `ipu-plan-kernels`, `ipu-place-storage`, `ipu-lower-exchanges`,
//! `ipu-optimize-exchange-placement`, `ipu-emit-tile-code`, and `ipu-compile`, which runs the
//! planning passes and these in order as the phases of one package build.

use std::collections::BTreeMap;

use ipu_device::kernels::KernelCache;
use ipu_device::Target;
use ipu_dialects::plan::OperatorPlan;
use melior::{
    ir::{
        operation::{OperationLike, OperationResult},
        OperationRef,
    },
    Context,
};
use rayon::prelude::*;
use tracing::info;

use super::exchange::{encode_phase, phase_requests, validate_relocated};
use super::ir::{self, EmittedCode, StoredSchedule, TileDesign};
use super::program::Move;
use super::{LowerError, LowerOptions, PrecisionPolicy};
use crate::build_trace::staged;
use crate::exchange::{schedule_phase_cached, TransferRequest};
use crate::lower_mid::{in_package_build, planned_options};
use crate::pass::{Pass, PassFailure, PassRun};
use crate::plan_ir;
use crate::tiling::{Origin, ValueId};
use ipu_dialects::diagnostics::op_error;

/// Reports `error` at `op` (the diagnostic the user sees) and fails the pass.
fn fail(op: OperationRef, pass: &str, error: impl std::fmt::Display) -> PassFailure {
    let message = format!("{pass}: {error}");
    op_error(&op, &message);
    PassFailure(message)
}

fn target_of(op: OperationRef, pass: &str, name: &str) -> Result<Target, PassFailure> {
    Target::by_name(name).map_err(|e| fail(op, pass, e))
}

/// Runs `stage` on every tile module of `module`: read, transform, write back. The design
/// comes from the previous stage when it kept it and the module is unchanged since
/// ([`ir::handoff`]; else it is read); then only the parts the stage declares it `changes` are
/// written again (debug builds check the declaration), and unless this is the last stage
/// (`hand_on`) the design is kept for the next one. The stage's flag says whether every stored
/// schedule is validated at the design's addresses (false when read from IR; a stage that
/// moves buffers clears it).
fn each_design(
    module: OperationRef,
    pass: &str,
    target: &Target,
    (changes, hand_on): (ir::Changes, bool),
    mut stage: impl FnMut(&mut TileDesign, &mut bool) -> Result<(), LowerError>,
) -> Result<usize, PassFailure> {
    let context_ref = module.context();
    // SAFETY: the context outlives this pass run.
    let context: &Context = unsafe { context_ref.to_ref() };
    let modules = ir::tile_modules(module);
    if modules.is_empty() {
        return Err(fail(
            module,
            pass,
            "the module has no ipu_tile program; run ipu-lower-to-tiles first",
        ));
    }
    let count = modules.len();
    for tile_module in modules {
        let (mut design, mut validated, handed) = match ir::handoff::take(tile_module) {
            Some((design, validated)) => (design, validated, true),
            None => (
                ir::read_design(tile_module, target).map_err(|e| fail(tile_module, pass, e))?,
                false,
                false,
            ),
        };
        let before = (cfg!(debug_assertions) && handed).then(|| design.clone());
        in_package_build(module, design.program.tiles, || {
            stage(&mut design, &mut validated)
        })
        .map_err(|e| fail(tile_module, pass, e))?;
        if let Some(before) = &before {
            debug_assert!(
                changes.cover(before, &design),
                "{pass} changed a part of the tile design it does not declare ({changes:?})"
            );
        }
        let written =
            ir::replace_tile_module(context, tile_module, &design, handed.then_some(changes))
                .map_err(|e| fail(module, pass, e))?;
        if hand_on {
            ir::handoff::keep(written, design, validated);
        }
    }
    Ok(count)
}

// ---------------------------------------------------------------------------------------
// ipu-lower-to-tiles

crate::option_enum! {
    /// GEMM input precision of the lowering (`auto`: what planning chose, else native).
    pub enum TilePrecision {
        Auto = "auto",
        Native = "native",
        F32 = "f32",
        F16 = "f16",
        Fp8 = "fp8",
    }
}

crate::pass_options! {
    /// Options of `ipu-lower-to-tiles`.
    pub struct LowerToTilesOptions for "ipu-lower-to-tiles" {
        /// Target table name (c600, bow).
        target: String = "c600".to_string(),
        /// Tiles the program may use; 0: what planning recorded, else every tile.
        tiles: u32 = 0,
        /// GEMM input precision; auto: what planning recorded, else the tensors' own types.
        precision: TilePrecision = TilePrecision::Auto,
        /// FP8 scale exponent; empty: what planning recorded, else 0.
        fp8_scale: Option<i64> = None,
        /// Function to lower; empty: the first that is not a repeat body.
        function: String = String::new(),
    }
}

/// `ipu-lower-to-tiles`: the graph function becomes an `ipu_tile` program.
#[derive(Clone)]
pub struct LowerToTiles {
    options: LowerToTilesOptions,
}

impl LowerToTiles {
    fn lower_options(&self, module: OperationRef, target: Target) -> Result<LowerOptions, String> {
        let planned = planned_options(module);
        let tiles = match (self.options.tiles, &planned) {
            (0, Some(p)) => p.tiles,
            (0, None) => target.geometry.tiles.value,
            (t, _) => t,
        };
        if tiles == 0 || tiles > target.geometry.tiles.value {
            return Err(format!(
                "tiles={tiles} is outside 1..={} of target {}",
                target.geometry.tiles.value, target.name
            ));
        }
        let precision = match (self.options.precision, &planned) {
            (TilePrecision::Fp8, _) => PrecisionPolicy::Fp8,
            (TilePrecision::F16, _) => PrecisionPolicy::F16,
            (TilePrecision::F32, _) => PrecisionPolicy::F32,
            (TilePrecision::Native, _) => PrecisionPolicy::Native,
            (TilePrecision::Auto, Some(p)) => p.precision,
            (TilePrecision::Auto, None) => PrecisionPolicy::Native,
        };
        let scale = self
            .options
            .fp8_scale
            .or(planned.as_ref().and_then(|p| p.fp8_scale))
            .unwrap_or(0);
        if !(-31..=31).contains(&scale) {
            return Err(format!("fp8-scale={scale} is outside -31..=31"));
        }
        Ok(LowerOptions {
            target,
            tiles,
            precision,
            fp8_scale: scale as i32,
        })
    }
}

impl Pass for LowerToTiles {
    type Options = LowerToTilesOptions;
    const ARGUMENT: &'static str = "ipu-lower-to-tiles";
    const SUMMARY: &'static str =
        "Lower the ipu graph function to an ipu_tile program: buffers, kernel runs, exchange phases and host streams";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: LowerToTilesOptions) -> Self {
        LowerToTiles { options }
    }

    fn options(&self) -> &LowerToTilesOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let options = self
            .lower_options(op, target)
            .map_err(|e| fail(op, pass, e))?;
        let name = (!self.options.function.is_empty()).then_some(self.options.function.as_str());
        let (function, program) =
            in_package_build(op, options.tiles, || lower_to_program(op, name, &options)).map_err(
                |e| match e {
                    Located::At(at, e) => fail(at, pass, e),
                    Located::Module(e) => fail(op, pass, e),
                },
            )?;
        run.statistic(
            "logical-shards",
            "(buffer, tile) pairs",
            program.logical_shards() as u64,
        );
        run.statistic(
            "exchange-phases",
            "exchange phases",
            program.exchange_phases() as u64,
        );
        let context_ref = op.context();
        // SAFETY: the context outlives this pass run.
        let context: &Context = unsafe { context_ref.to_ref() };
        for old in ir::tile_modules(op) {
            if ir::read_design(old, &options.target)
                .map(|d| d.function == function)
                .unwrap_or(false)
            {
                return Err(fail(
                    old,
                    pass,
                    format!("function '{function}' is already lowered to tiles"),
                ));
            }
        }
        let design = TileDesign::new(program, &function, &options.target);
        let location = plan_ir::functions(op)
            .get(&function)
            .map(|f| f.location())
            .unwrap_or_else(|| op.location());
        let written = ir::append_tile_module(context, op, location, &design)
            .map_err(|e| fail(op, pass, e))?;
        // The next stage takes the design as written instead of reading it back.
        ir::handoff::keep(written, design, false);
        Ok(())
    }
}

enum Located<'c, 'a> {
    At(OperationRef<'c, 'a>, LowerError),
    Module(LowerError),
}

/// Lowers function `name` (or the entry function) of `module` to a tile program.
/// The names of the repeat bodies `graph` calls.
fn repeat_bodies(graph: &crate::tiling::Graph) -> Vec<String> {
    graph
        .ops
        .iter()
        .filter_map(|op| match &op.kind {
            crate::tiling::OpKind::Repeat { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The C-order bytes of every constant of a function read by `plan_ir::read_function`.
fn function_constants<'c, 'a>(
    function: OperationRef<'c, 'a>,
    read: &plan_ir::FunctionGraph<'c, 'a>,
    target: &Target,
) -> Result<BTreeMap<ValueId, Vec<u8>>, Located<'c, 'a>> {
    // A constant lives in tile memory: one larger than all of it together cannot be placed,
    // and is refused before its bytes (a splat can stand for gigabytes) are materialized.
    let device_bytes =
        u64::from(target.geometry.tiles.value) * u64::from(target.memory.sram_bytes.value);
    let mut constants = BTreeMap::new();
    for (id, value) in read.graph.values.iter().enumerate() {
        // A parameter's tensor is the caller's, given at initialization.
        if value.origin == Origin::Constant && value.parameter.is_none() {
            let ir_value = read.values[id];
            let op = OperationResult::try_from(ir_value)
                .map(|result| result.owner())
                .map_err(|_| {
                    Located::At(
                        function,
                        LowerError::Input(format!("constant {id} has no defining op")),
                    )
                })?;
            let bytes = value
                .elements()
                .saturating_mul(u64::from(value.element.bytes()));
            if bytes > device_bytes {
                return Err(Located::At(
                    op,
                    LowerError::Input(format!(
                        "a constant of {bytes} bytes is larger than the {device_bytes} bytes of tile memory of target {}",
                        target.name
                    )),
                ));
            }
            let bytes = op
                .attribute("value")
                .ok()
                .and_then(|a| ir::attribute_bytes(a, value.elements(), value.element.bytes()))
                .ok_or_else(|| {
                    Located::At(
                        op,
                        LowerError::Unsupported {
                            op: "arith.constant".into(),
                            detail: "only dense elements constants are lowered".into(),
                        },
                    )
                })?;
            constants.insert(id, bytes);
        }
    }
    Ok(constants)
}

/// The selected plan of each graph op (its `plan` attribute), by op index; a plan attribute
/// that is not a plan of any strategy is an error at its op.
fn op_plans<'c, 'a>(
    ops: &[OperationRef<'c, 'a>],
) -> Result<Vec<Option<OperatorPlan>>, Located<'c, 'a>> {
    ops.iter()
        .map(|op| match op.attribute("plan") {
            Err(_) => Ok(None),
            Ok(attribute) => OperatorPlan::parse(&attribute.to_string())
                .map(Some)
                .map_err(|e| Located::At(*op, LowerError::Input(format!("malformed plan: {e}")))),
        })
        .collect()
}

fn lower_to_program<'c, 'a>(
    module: OperationRef<'c, 'a>,
    name: Option<&str>,
    options: &LowerOptions,
) -> Result<(String, super::program::TileProgram), Located<'c, 'a>> {
    let table = plan_ir::functions(module);
    let bodies = plan_ir::body_names(module);
    let function = match name {
        Some(name) => table.get(name).copied(),
        None => table
            .iter()
            .find(|(n, _)| !bodies.contains(n))
            .map(|(_, f)| *f),
    }
    .ok_or_else(|| {
        Located::Module(LowerError::Input(format!(
            "no function {}",
            name.map(|n| format!("'{n}'"))
                .unwrap_or_else(|| "to lower".into())
        )))
    })?;
    let read = plan_ir::read_function(function, &table)
        .map_err(|e| Located::At(e.op, LowerError::Input(e.message)))?;
    let constants = function_constants(function, &read, &options.target)?;
    // The constants of every repeat body, read once per body function.
    let mut bodies = BTreeMap::new();
    let mut pending: Vec<String> = repeat_bodies(&read.graph);
    while let Some(body) = pending.pop() {
        if bodies.contains_key(&body) {
            continue;
        }
        let body_function = *table.get(&body).ok_or_else(|| {
            Located::Module(LowerError::Input(format!(
                "repeat body @{body} is not a function"
            )))
        })?;
        let body_read = plan_ir::read_function(body_function, &table)
            .map_err(|e| Located::At(e.op, LowerError::Input(e.message)))?;
        pending.extend(repeat_bodies(&body_read.graph));
        let plans = op_plans(&body_read.ops)?;
        bodies.insert(
            body,
            super::graph::Body {
                constants: function_constants(body_function, &body_read, &options.target)?,
                plans,
            },
        );
    }
    let plans = op_plans(&read.ops)?;
    let mut program = super::lower_planned_graph(
        &read.name,
        &read.graph,
        &plans,
        &constants,
        &bodies,
        options,
    )
    .map_err(|e| Located::At(function, e))?;
    // The tile mapping ipu-select-finalist selected (absent for the identity): the plan's
    // tiles renamed to the logical tiles its refined estimate was scheduled on.
    if let Some(mapping) = tile_mapping(function).map_err(|e| Located::At(function, e))? {
        let bad = |e: String| {
            Located::At(
                function,
                LowerError::Input(format!("ipu.tile_mapping_tiles: {e}")),
            )
        };
        if mapping.len() != options.tiles as usize {
            return Err(bad(format!(
                "the tile mapping has {} entries for a plan on {} tiles",
                mapping.len(),
                options.tiles
            )));
        }
        program.relabel_tiles(&mapping).map_err(bad)?;
    }
    // The planner's estimate of each op (its `estimate` attribute), for the profile plan.
    for (provenance, _, estimate) in &mut program.ops {
        let index = provenance
            .strip_prefix("op")
            .and_then(|i| i.parse::<usize>().ok());
        if let Some(op) = index.and_then(|i| read.ops.get(i)) {
            if let Some(cycles) = op
                .attribute("estimate")
                .ok()
                .and_then(|a| ipu_dialects::format::Estimate::parse(&a.to_string()).ok())
            {
                *estimate = cycles.cycles.max(0) as u64;
            }
        }
    }
    Ok((read.name, program))
}

/// The function's `ipu.tile_mapping_tiles` permutation, if it has one.
fn tile_mapping(function: OperationRef) -> Result<Option<Vec<u32>>, LowerError> {
    let Ok(attribute) = function.attribute("ipu.tile_mapping_tiles") else {
        return Ok(None);
    };
    let bad =
        || LowerError::Input("ipu.tile_mapping_tiles is not an array<i32> of tile ids".into());
    let array =
        melior::ir::attribute::DenseI32ArrayAttribute::try_from(attribute).map_err(|_| bad())?;
    (0..array.len())
        .map(|i| {
            array
                .element(i)
                .ok()
                .and_then(|t| u32::try_from(t).ok())
                .ok_or_else(bad)
        })
        .collect::<Result<Vec<u32>, _>>()
        .map(Some)
}

/// [`lower_to_program`] with the error's location folded into the message, for callers
/// without a diagnostic handler (tests, tools).
pub fn lower_function(
    module: OperationRef,
    name: Option<&str>,
    options: &LowerOptions,
) -> Result<(String, super::program::TileProgram), LowerError> {
    lower_to_program(module, name, options).map_err(|e| match e {
        Located::At(op, error) => LowerError::Input(format!(
            "{} at {}: {error}",
            op.name().as_string_ref().as_str().unwrap_or("?"),
            op.location()
        )),
        Located::Module(error) => error,
    })
}

// ---------------------------------------------------------------------------------------
// ipu-plan-kernels

crate::pass_options! {
    /// Options of `ipu-plan-kernels`.
    pub struct PlanKernelsOptions for "ipu-plan-kernels" {
        /// Target table name.
        target: String = "c600".to_string(),
        /// Compile every specialization through the kernel cache ($IPU_KERNEL_CACHE).
        compile: bool = true,
    }
}

/// `ipu-plan-kernels`: lists the program's kernel specializations (the seed's names) and
/// compiles each through the device's content-addressed cache.
#[derive(Clone)]
pub struct PlanKernels {
    options: PlanKernelsOptions,
}

impl Pass for PlanKernels {
    type Options = PlanKernelsOptions;
    const ARGUMENT: &'static str = "ipu-plan-kernels";
    const SUMMARY: &'static str =
        "Name the kernel specializations of an ipu_tile program and compile them through the kernel cache";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: PlanKernelsOptions) -> Self {
        PlanKernels { options }
    }

    fn options(&self) -> &PlanKernelsOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let cache = if self.options.compile {
            Some(KernelCache::from_env().map_err(|e| fail(op, pass, e))?)
        } else {
            None
        };
        let mut kernels = 0;
        // Kernels are named and compiled; the design is not changed.
        let changes = ir::Changes::default();
        each_design(op, pass, &target, (changes, true), |design, _validated| {
            staged("compile_runtime", || Ok::<(), LowerError>(()))?;
            staged("plan_kernels", || plan_kernels(design, None))?;
            if let Some(cache) = &cache {
                staged("compile_kernels", || compile_kernels(design, cache))?;
            }
            // The tile runtime is linked from the target table's sizes (place.rs).
            staged("link_runtime", || Ok::<(), LowerError>(()))?;
            kernels += design.program.kernels.len() as u64;
            Ok(())
        })?;
        run.statistic("kernels", "kernel specializations", kernels);
        Ok(())
    }
}

/// Logs every specialization and, with a cache, compiles it.
pub fn plan_kernels(design: &TileDesign, cache: Option<&KernelCache>) -> Result<(), LowerError> {
    for spec in &design.program.kernels {
        info!(kernel = %spec.name(), "planned kernel specialization");
    }
    match cache {
        Some(cache) => compile_kernels(design, cache),
        None => Ok(()),
    }
}

/// Compiles every specialization through the cache (a warm entry is a lookup).
pub fn compile_kernels(design: &TileDesign, cache: &KernelCache) -> Result<(), LowerError> {
    for spec in &design.program.kernels {
        cache.ensure(spec).map_err(|e| LowerError::Kernel {
            kernel: spec.name(),
            detail: e.to_string(),
        })?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// ipu-place-storage

crate::pass_options! {
    /// Options of `ipu-place-storage`.
    pub struct PlaceStorageOptions for "ipu-place-storage" {
        /// Target table name.
        target: String = "c600".to_string(),
    }
}

/// `ipu-place-storage`: package support memory, then an address for every buffer.
#[derive(Clone)]
pub struct PlaceStorage {
    options: PlaceStorageOptions,
}

impl Pass for PlaceStorage {
    type Options = PlaceStorageOptions;
    const ARGUMENT: &'static str = "ipu-place-storage";
    const SUMMARY: &'static str =
        "Allocate package support memory and place every buffer of an ipu_tile program (lifetimes, memory classes, 16 KiB element rules)";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: PlaceStorageOptions) -> Self {
        PlaceStorage { options }
    }

    fn options(&self) -> &PlaceStorageOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let mut buffers = 0;
        let changes = ir::Changes {
            buffers: true,
            support: true,
            ..ir::Changes::default()
        };
        each_design(op, pass, &target, (changes, true), |design, validated| {
            *validated = false;
            staged("size_tile_code", || {
                design.program.compute_lifetimes();
                Ok::<(), LowerError>(())
            })?;
            staged("place_storage", || place_storage(design, &target))?;
            buffers += design.program.buffers.len() as u64;
            Ok(())
        })?;
        run.statistic("buffers", "buffers placed", buffers);
        Ok(())
    }
}

/// Places the design's storage (drops stored schedules' validity: they are revalidated).
pub fn place_storage(design: &mut TileDesign, target: &Target) -> Result<(), LowerError> {
    design.support = Some(super::place::place_storage(&mut design.program, target)?);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// ipu-lower-exchanges

crate::pass_options! {
    /// Options of `ipu-lower-exchanges`.
    pub struct LowerExchangesOptions for "ipu-lower-exchanges" {
        /// Target table name.
        target: String = "c600".to_string(),
        /// Reuse a phase's stored schedule when only addresses moved (after validating the
        /// relocated rows); off: schedule every phase again.
        reuse: bool = true,
    }
}

/// `ipu-lower-exchanges`: the physical schedule of every exchange phase.
#[derive(Clone)]
pub struct LowerExchanges {
    options: LowerExchangesOptions,
}

impl Pass for LowerExchanges {
    type Options = LowerExchangesOptions;
    const ARGUMENT: &'static str = "ipu-lower-exchanges";
    const SUMMARY: &'static str =
        "Schedule every exchange phase of a placed ipu_tile program on the sender buses and receivers, phases in parallel";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: LowerExchangesOptions) -> Self {
        LowerExchanges { options }
    }

    fn options(&self) -> &LowerExchangesOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let mut counts = (0, 0);
        let changes = ir::Changes {
            schedules: true,
            ..ir::Changes::default()
        };
        each_design(op, pass, &target, (changes, true), |design, validated| {
            *validated = false;
            let (scheduled, reused) = staged("lower_exchanges", || {
                lower_exchanges(design, &target, self.options.reuse)
            })?;
            counts.0 += scheduled;
            counts.1 += reused;
            Ok(())
        })?;
        run.statistic("phases-scheduled", "phases scheduled", counts.0);
        run.statistic("phases-reused", "stored schedules reused", counts.1);
        Ok(())
    }
}

/// Schedules every phase (in parallel), reusing a stored schedule whose key matches after
/// validating its rows at the current addresses. Returns (scheduled, reused).
pub fn lower_exchanges(
    design: &mut TileDesign,
    target: &Target,
    reuse: bool,
) -> Result<(u64, u64), LowerError> {
    if design.support.is_none() {
        return Err(LowerError::Input(
            "the program is not placed; run ipu-place-storage first".into(),
        ));
    }
    let code = super::optimize::code_ranges(design);
    let phases: Vec<(u32, &[Move])> = design.program.exchange_steps().collect();
    // Stored schedules whose key matches are reused after validating their relocated rows.
    let reused: Vec<Option<StoredSchedule>> = phases
        .par_iter()
        .map(|&(phase, moves)| {
            let key = ir::schedule_key(moves);
            let stored = design
                .schedules
                .get(&phase)
                .filter(|s| reuse && s.key == key)?;
            match validate_relocated(&design.program, phase, moves, stored, target, &code) {
                Ok(()) => {
                    info!(
                        phase,
                        "reused exchange optimization after validating relocated rows"
                    );
                    Some(stored.clone())
                }
                Err(reason) => {
                    info!(
                        phase,
                        %reason,
                        "relocated rows invalidate the stored exchange schedule; rescheduling"
                    );
                    None
                }
            }
        })
        .collect();
    // The rest are scheduled, once per distinct set of requests: phases that move the same
    // sizes between the same tiles (the K panels of one GEMM) share one schedule.
    let mut distinct: Vec<(Vec<TransferRequest>, u32)> = Vec::new();
    let mut which = vec![usize::MAX; phases.len()];
    for (index, &(phase, moves)) in phases.iter().enumerate() {
        if reused[index].is_some() {
            continue;
        }
        let requests = phase_requests(moves);
        which[index] = match distinct.iter().position(|(r, _)| *r == requests) {
            Some(found) => found,
            None => {
                distinct.push((requests, phase));
                distinct.len() - 1
            }
        };
    }
    let schedules: Vec<StoredSchedule> = distinct
        .par_iter()
        .map(|(requests, phase)| {
            let phase = *phase;
            let schedule =
                schedule_phase_cached(requests, target).map_err(|e| LowerError::Exchange {
                    phase,
                    detail: e.to_string(),
                })?;
            crate::exchange::check_schedule(requests, &schedule, target)
                .map_err(|detail| LowerError::Exchange { phase, detail })?;
            // Memory-element hazards at the current addresses are resolved by
            // ipu-optimize-exchange-placement and checked again by ipu-emit-tile-code.
            Ok(StoredSchedule::new(0, &schedule))
        })
        .collect::<Result<_, LowerError>>()?;
    let results: Vec<(u32, StoredSchedule, bool)> = phases
        .iter()
        .zip(reused)
        .zip(&which)
        .map(|((&(phase, moves), reused), &index)| match reused {
            Some(stored) => (phase, stored, true),
            None => {
                let mut stored = schedules[index].clone();
                stored.key = ir::schedule_key(moves);
                (phase, stored, false)
            }
        })
        .collect();
    tracing::debug!(
        phases = phases.len(),
        distinct_schedules = distinct.len(),
        "scheduled exchange phases"
    );
    let mut counts = (0, 0);
    design.schedules.clear();
    for (phase, stored, reused) in results {
        if reused {
            counts.1 += 1;
        } else {
            counts.0 += 1;
        }
        design.schedules.insert(phase, stored);
    }
    Ok(counts)
}

// ---------------------------------------------------------------------------------------
// ipu-optimize-exchange-placement

crate::pass_options! {
    /// Options of `ipu-optimize-exchange-placement`.
    pub struct OptimizeExchangePlacementOptions for "ipu-optimize-exchange-placement" {
        /// Target table name.
        target: String = "c600".to_string(),
    }
}

/// `ipu-optimize-exchange-placement`: moves buffers when that shortens the exchange horizon.
#[derive(Clone)]
pub struct OptimizeExchangePlacement {
    options: OptimizeExchangePlacementOptions,
}

impl Pass for OptimizeExchangePlacement {
    type Options = OptimizeExchangePlacementOptions;
    const ARGUMENT: &'static str = "ipu-optimize-exchange-placement";
    const SUMMARY: &'static str =
        "Move exchange buffers of a placed ipu_tile program when that shortens the exchange horizon, then revalidate the schedules";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: OptimizeExchangePlacementOptions) -> Self {
        OptimizeExchangePlacement { options }
    }

    fn options(&self) -> &OptimizeExchangePlacementOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let mut moved = 0;
        let changes = ir::Changes {
            buffers: true,
            schedules: true,
            ..ir::Changes::default()
        };
        each_design(op, pass, &target, (changes, true), |design, validated| {
            moved += staged("optimize_exchange_placement", || {
                super::optimize::optimize_exchange_placement(design, &target)
            })?;
            // The optimizer ends by validating every schedule at the final addresses.
            *validated = true;
            Ok(())
        })?;
        run.statistic("buffers-moved", "buffers moved", moved);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// ipu-emit-tile-code

crate::pass_options! {
    /// Options of `ipu-emit-tile-code`.
    pub struct EmitTileCodeOptions for "ipu-emit-tile-code" {
        /// Target table name.
        target: String = "c600".to_string(),
    }
}

/// `ipu-emit-tile-code`: tile programs and images, costed.
#[derive(Clone)]
pub struct EmitTileCode {
    options: EmitTileCodeOptions,
}

impl Pass for EmitTileCode {
    type Options = EmitTileCodeOptions;
    const ARGUMENT: &'static str = "ipu-emit-tile-code";
    const SUMMARY: &'static str =
        "Emit the tile programs and images of a placed, exchange-lowered ipu_tile program and cost it";
    const ANCHOR: &'static str = "builtin.module";

    fn new(options: EmitTileCodeOptions) -> Self {
        EmitTileCode { options }
    }

    fn options(&self) -> &EmitTileCodeOptions {
        &self.options
    }

    fn run(&self, op: OperationRef, run: &mut PassRun) -> Result<(), PassFailure> {
        let pass = Self::ARGUMENT;
        let target = target_of(op, pass, &self.options.target)?;
        let mut tiles = 0;
        // The last stage: nothing after it takes the design.
        let changes = ir::Changes {
            code: true,
            ..ir::Changes::default()
        };
        each_design(op, pass, &target, (changes, false), |design, validated| {
            emit_tile_code_checked(design, &target, *validated)?;
            tiles += design.code.as_ref().map_or(0, |c| c.tiles.len() as u64);
            Ok(())
        })?;
        run.statistic("code-tiles", "tiles with code", tiles);
        Ok(())
    }
}

/// Checks that every phase has a schedule, builds the device image (validated) and records
/// the costed program.
pub fn emit_tile_code(design: &mut TileDesign, target: &Target) -> Result<(), LowerError> {
    emit_tile_code_checked(design, target, false)
}

/// [`emit_tile_code`]; `validated`: every stored schedule was just validated at the current
/// addresses (as `ipu-optimize-exchange-placement` leaves them), so it is not checked again.
pub fn emit_tile_code_checked(
    design: &mut TileDesign,
    target: &Target,
    validated: bool,
) -> Result<(), LowerError> {
    let (phases, final_cycles, final_exchange) = staged("prepare_tile_code", || {
        if !validated {
            super::optimize::validate_all(design, target, None)?;
        }
        let phases = lowered_phases(design, target)?;
        let times = design.program.run_exchange_multiplicities();
        let final_exchange: u64 = phases
            .iter()
            .map(|p| p.cycles * times.get(&p.phase.phase).copied().unwrap_or(1))
            .sum();
        let final_cycles = final_exchange + super::compute_cycles(&design.program, target);
        Ok::<_, LowerError>((phases, final_cycles, final_exchange))
    })?;
    info!(final_cycles, final_exchange, "costed final placed program");
    if tracing::enabled!(tracing::Level::DEBUG) {
        let by_phase = phases.iter().map(|p| (p.phase.phase, p.cycles)).collect();
        for (op, cycles, exchange) in super::op_cycles(&design.program, &by_phase, target) {
            tracing::debug!(op = %op, cycles, exchange, "costed op of the final program");
        }
    }
    let package = staged("emit_tile_code", || {
        let support = design.support.as_ref().ok_or_else(|| {
            LowerError::Input("the program is not placed; run ipu-place-storage first".into())
        })?;
        super::package::build_package(&design.program, support, &phases, target, None)
    })?;
    staged("build_tile_images", || {
        package
            .image
            .validate(target)
            .map(|_| ())
            .map_err(|e| LowerError::Package(e.to_string()))
    })?;
    let mut tiles: Vec<u32> = package.image.tiles.iter().map(|t| t.tile).collect();
    tiles.sort_unstable();
    design.code = Some(EmittedCode {
        tiles,
        final_cycles,
        final_exchange,
    });
    Ok(())
}

/// The encoded phases of a design with a schedule for every phase.
pub fn lowered_phases(
    design: &TileDesign,
    target: &Target,
) -> Result<Vec<super::exchange::LoweredPhase>, LowerError> {
    design
        .program
        .exchange_steps()
        .map(|(phase, moves)| {
            let stored = design
                .schedules
                .get(&phase)
                .filter(|s| s.key == ir::schedule_key(moves))
                .ok_or_else(|| LowerError::Exchange {
                    phase,
                    detail: "has no current schedule; run ipu-lower-exchanges first".into(),
                })?;
            encode_phase(&design.program, phase, moves, stored, target)
        })
        .collect()
}

/// The package of a module's (single) emitted tile program, with kernel objects from
/// `cache` when given.
pub fn package_from_module(
    module: OperationRef,
    target: &Target,
    cache: Option<&KernelCache>,
) -> Result<ipu_runtime::Package, LowerError> {
    let modules = ir::tile_modules(module);
    let [tile_module] = modules[..] else {
        return Err(LowerError::Input(format!(
            "expected one ipu_tile program in the module, found {}",
            modules.len()
        )));
    };
    let design = ir::read_design(tile_module, target)?;
    package_of_design(&design, target, cache)
}

/// The package of an emitted design, with kernel objects from `cache` when given.
pub fn package_of_design(
    design: &TileDesign,
    target: &Target,
    cache: Option<&KernelCache>,
) -> Result<ipu_runtime::Package, LowerError> {
    if design.code.is_none() {
        return Err(LowerError::Input(
            "the ipu_tile program has no emitted code; run ipu-emit-tile-code first".into(),
        ));
    }
    let support = design.support.as_ref().ok_or_else(|| {
        LowerError::Input("the program is not placed; run ipu-place-storage first".into())
    })?;
    let phases = lowered_phases(design, target)?;
    super::package::build_package(&design.program, support, &phases, target, cache)
}

// ---------------------------------------------------------------------------------------
// ipu-compile
