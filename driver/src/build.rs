//! Building a package from a model: what `ipu compile`, `ipu run model.mlir` and
//! `ipu-translate --ipu-to-package` share.
//!
//! A module that already holds an emitted `ipu_tile` program (the output of `ipu-opt
//! --pass-pipeline='builtin.module(ipu-compile{...})'`) is packaged as it is; any other module
//! first runs the registered `ipu-compile{...}` pass with the given options, through the same
//! pass manager `ipu-opt` builds.

use anyhow::{anyhow, bail, Context as _};
use ipu_device::kernels::KernelCache;
use ipu_device::Target;
use ipu_passes::lower::{ir, passes::package_from_module};
use ipu_passes::manager::{build_pass_manager, PrintAround};
use ipu_passes::pipeline::parse_pipeline;
use ipu_passes::Registry;
use ipu_runtime::Package;
use melior::ir::{operation::OperationLike, Module};

use crate::diagnostics::Collector;
use crate::verify_diagnostics::Diagnostic;

/// What a package build needs besides the model.
#[derive(Debug, Clone)]
pub struct BuildOptions {
    /// Target table name (`c600`, `bow`).
    pub target: String,
    /// Tiles the program may use (default: every tile of the target).
    pub tiles: Option<u32>,
    /// GEMM input precision: `native` (the graph's own types), `f16`, `f32` or `fp8`.
    pub precision: String,
    /// FP8 scale exponent (default: chosen from constant data ranges).
    pub fp8_scale: Option<i32>,
    /// Function to compile (default: the first that is not a repeat body).
    pub function: Option<String>,
    /// Compile kernels through the cache and embed their objects in the package.
    pub embed_kernels: bool,
    /// A file of plan constraints (JSON, as `--dump-plans` writes) the planner must satisfy.
    pub plan_constraints: Option<String>,
    /// Further `ipu-compile` planning settings (`key=value`: beam-width, active-tiles, ...).
    pub planner: Vec<String>,
    /// Keep MLIR's diagnostics instead of printing them: a failed build's error is then a
    /// [`Diagnosed`] carrying them (for callers without a terminal, such as the Python
    /// package).
    pub collect_diagnostics: bool,
}

impl Default for BuildOptions {
    fn default() -> Self {
        BuildOptions {
            target: "c600".into(),
            tiles: None,
            precision: "native".into(),
            fp8_scale: None,
            function: None,
            embed_kernels: true,
            plan_constraints: None,
            planner: Vec::new(),
            collect_diagnostics: false,
        }
    }
}

/// The `ipu-compile{...}` pipeline text for `options` (`native` is the planner's own policy:
/// each product in its operands' types).
pub fn pipeline_text(options: &BuildOptions, target: &Target) -> String {
    let precision = &options.precision;
    let mut settings = vec![
        format!("target={}", options.target),
        format!(
            "tiles={}",
            options.tiles.unwrap_or(target.geometry.tiles.value)
        ),
        format!("precision={precision}"),
        format!("compile-kernels={}", options.embed_kernels),
    ];
    if let Some(scale) = options.fp8_scale {
        settings.push(format!("fp8-scale={scale}"));
    }
    if let Some(function) = &options.function {
        settings.push(format!("function={function}"));
    }
    if let Some(path) = &options.plan_constraints {
        settings.push(format!(
            "constraints-file={}",
            ipu_passes::pipeline::format_option_value(path)
        ));
    }
    settings.extend(options.planner.iter().cloned());
    format!("builtin.module(ipu-compile{{{}}})", settings.join(" "))
}

/// The import passes a model in upstream dialects runs before `ipu-compile` (each converter
/// converts only its own dialect's ops).
pub const UPSTREAM_IMPORT: &str =
    "func.func(convert-tosa-to-ipu, convert-linalg-to-ipu), ipu-canonicalize, ipu-form-attention, ipu-canonicalize, ipu-fuse-maps, symbol-dce, canonicalize, cse";

/// Visits `op` and every op nested in it, in pre-order, until `visit` returns true (then
/// returns true).
fn any_op(
    op: melior::ir::OperationRef,
    visit: &mut dyn FnMut(melior::ir::OperationRef) -> bool,
) -> bool {
    use melior::ir::{block::BlockLike, RegionLike};
    if visit(op) {
        return true;
    }
    for region in op.regions() {
        let mut block = region.first_block();
        while let Some(b) = block {
            let mut next = b.first_operation();
            while let Some(inner) = next {
                if any_op(inner, visit) {
                    return true;
                }
                next = inner.next_in_block();
            }
            block = b.next_in_region();
        }
    }
    false
}

/// Whether a function of `module` holds a `tosa.*` or `linalg.*` op (a model written as the
/// upstream frontends emit it).
fn has_upstream_ops(module: melior::ir::OperationRef) -> bool {
    any_op(module, &mut |op| {
        op.name()
            .as_string_ref()
            .as_str()
            .is_ok_and(|n| n.starts_with("tosa.") || n.starts_with("linalg."))
    })
}

/// Whether every float tensor of `module` (function arguments and op results) is f32, and it
/// has one.
fn only_f32_floats(module: melior::ir::OperationRef) -> bool {
    use melior::ir::{
        block::BlockLike,
        r#type::{RankedTensorType, ShapedTypeLike},
        RegionLike, TypeLike, ValueLike,
    };
    let (mut f32s, mut others) = (0usize, 0usize);
    let mut count = |r#type: melior::ir::Type| {
        if let Ok(tensor) = RankedTensorType::try_from(r#type) {
            let element = tensor.element();
            if element.is_f32() {
                f32s += 1;
            } else if element.is_float() {
                others += 1;
            }
        }
    };
    any_op(module, &mut |op| {
        for result in op.results() {
            count(result.r#type());
        }
        for region in op.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                for index in 0..b.argument_count() {
                    if let Ok(argument) = b.argument(index) {
                        count(argument.r#type());
                    }
                }
                block = b.next_in_region();
            }
        }
        false
    });
    f32s > 0 && others == 0
}

/// The name and location of the first `tosa.*` or `linalg.*` op of `module`, if any.
fn first_upstream_op(module: melior::ir::OperationRef) -> Option<(String, String)> {
    let mut found = None;
    any_op(module, &mut |op| {
        let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
        let upstream = name.starts_with("tosa.") || name.starts_with("linalg.");
        if upstream {
            found = Some((name, op.location().to_string()));
        }
        upstream
    });
    found
}

/// `module` printed with its locations, so a module parsed back from the text (the host
/// reference's source) keeps the model file's `file:line:col` in its messages instead of
/// positions in the printed text.
fn with_locations(module: melior::ir::OperationRef) -> String {
    let print = PrintAround {
        debug_info: true,
        ..PrintAround::default()
    };
    ipu_passes::manager::print_operation(module, &print)
}

/// Builds the package of the model `source` (read from `file`, for messages).
pub fn build_package(source: &str, file: &str, options: &BuildOptions) -> anyhow::Result<Package> {
    build_package_with_source(source, file, options).map(|built| built.package)
}

/// The compiler's cycle figures for a compiled program (what the simulator's device-program
/// cycles are compared with).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompileEstimates {
    /// `ipu-select-finalist`'s refined estimate of the selected finalist.
    pub refined_cycles: Option<u64>,
    /// The lowered program's `final_cycles` (`costed final placed program`).
    pub final_cycles: Option<u64>,
    /// The selected finalist's peak bytes per tile in standard memory, interleaved memory and
    /// both (from the same `ipu.refined_estimate`).
    pub peak_standard_bytes: Option<u64>,
    pub peak_interleaved_bytes: Option<u64>,
    pub peak_total_bytes: Option<u64>,
}

impl CompileEstimates {
    /// The figures recorded in a compiled module: the first function's
    /// `ipu.refined_estimate` and the `ipu_tile.code` op's `final_cycles`.
    pub fn of_module(module: melior::ir::OperationRef) -> CompileEstimates {
        let mut estimates = CompileEstimates::default();
        any_op(module, &mut |op| {
            if estimates.refined_cycles.is_none() {
                if let Ok(attribute) = op.attribute("ipu.refined_estimate") {
                    if let Ok(e) = ipu_dialects::format::Estimate::parse(&attribute.to_string()) {
                        estimates.refined_cycles = u64::try_from(e.cycles).ok();
                        estimates.peak_standard_bytes = u64::try_from(e.peak_standard_bytes).ok();
                        estimates.peak_interleaved_bytes =
                            u64::try_from(e.peak_interleaved_bytes).ok();
                        estimates.peak_total_bytes = u64::try_from(e.peak_total_bytes).ok();
                    }
                }
            }
            if estimates.final_cycles.is_none()
                && op.name().as_string_ref().as_str() == Ok("ipu_tile.code")
            {
                estimates.final_cycles = op
                    .attribute("final_cycles")
                    .ok()
                    .and_then(|a| melior::ir::attribute::IntegerAttribute::try_from(a).ok())
                    .and_then(|a| u64::try_from(a.value()).ok());
            }
            estimates.refined_cycles.is_some() && estimates.final_cycles.is_some()
        });
        estimates
    }
}

/// What [`build_package_with_source`] returns.
pub struct Built {
    pub package: Package,
    /// The module text the package's host reference evaluates.
    pub reference: String,
    pub estimates: CompileEstimates,
}

/// [`build_package`], also returning the module text the package's host reference evaluates
/// (`source` itself, or for a model in upstream dialects its import into `ipu` ops: the
/// reference reads only `ipu` graph ops, taken before `ipu-compile` runs) and the compiler's
/// cycle estimates.
pub fn build_package_with_source(
    source: &str,
    file: &str,
    options: &BuildOptions,
) -> anyhow::Result<Built> {
    if !matches!(options.precision.as_str(), "native" | "f16" | "f32" | "fp8") {
        bail!(
            "precision '{}': expected native, f16, f32 or fp8",
            options.precision
        );
    }
    let target = Target::by_name(&options.target)?;
    if let Some(tiles) = options.tiles {
        if tiles == 0 || tiles > target.geometry.tiles.value {
            bail!(
                "tiles={tiles} is outside 1..={} of target {}",
                target.geometry.tiles.value,
                target.name
            );
        }
    }
    let context = ipu_dialects::context::create_context(false)?;
    let collector = options.collect_diagnostics.then(|| {
        let collector = Collector::attach(&context);
        // A module parsed from text (not from its file) has MLIR's name for standard input.
        collector.set_file_name(file);
        collector.map_file("-");
        collector
    });
    let built = build_in(&context, source, file, options, &target);
    match (built, collector) {
        (Err(error), Some(collector)) => {
            let diagnostics = collector.take();
            if diagnostics.is_empty() {
                return Err(error);
            }
            let message = format!("{error:#}").replace(" (see the diagnostics above)", "");
            Err(Diagnosed {
                message,
                diagnostics,
                rejected: is_rejected(&error),
            }
            .into())
        }
        (built, _) => built,
    }
}

/// A failed build's error with the MLIR diagnostics that explain it
/// ([`BuildOptions::collect_diagnostics`]); it displays as the error followed by the
/// diagnostics as mlir-opt prints them (`file:line:col: error: ...`).
#[derive(Debug)]
pub struct Diagnosed {
    pub message: String,
    pub diagnostics: Vec<Diagnostic>,
    /// Whether the model was [`Rejected`] (bad input) rather than failing to compile.
    pub rejected: bool,
}

/// The model was refused before compiling: it holds a NUL byte, does not parse, does not
/// verify, or does not import into `ipu` ops (an op convert-tosa-to-ipu or
/// convert-linalg-to-ipu refuses, or one left unconverted). The input is wrong, not the
/// compiler: `ipu compile` and `ipu run` exit with the usage/input code for it.
#[derive(Debug)]
pub struct Rejected(pub String);

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Rejected {}

/// Whether a build error is a [`Rejected`] model (also when its diagnostics were collected).
pub fn is_rejected(error: &anyhow::Error) -> bool {
    error.downcast_ref::<Rejected>().is_some()
        || error
            .downcast_ref::<Diagnosed>()
            .is_some_and(|d| d.rejected)
}

impl std::fmt::Display for Diagnosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.message)?;
        for diagnostic in &self.diagnostics {
            write!(f, "\n{}", crate::diagnostics::render(diagnostic))?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnosed {}

/// [`build_package_with_source`] in `context`.
fn build_in(
    context: &melior::Context,
    source: &str,
    file: &str,
    options: &BuildOptions,
    target: &Target,
) -> anyhow::Result<Built> {
    ipu_passes::register_upstream_passes();
    if let Some((line, column)) = ipu_dialects::context::nul_byte(source) {
        return Err(Rejected(format!(
            "{file}: contains a NUL byte at line {line}, column {column}"
        ))
        .into());
    }
    // Parsed from the file itself when `source` is its text, so diagnostics name
    // `file:line:col` instead of `-`.
    let from_file = std::fs::read_to_string(file).is_ok_and(|text| text == source);
    let parsed = if from_file {
        let name = melior::StringRef::new(file);
        // SAFETY: the name outlives the call; a null module means the parse failed.
        let raw =
            unsafe { mlir_sys::mlirModuleCreateParseFromFile(context.to_raw(), name.to_raw()) };
        // SAFETY: a non-null result is a freshly parsed module we own.
        (!raw.ptr.is_null()).then(|| unsafe { Module::from_raw(raw) })
    } else {
        Module::parse(context, source)
    };
    let Some(mut module) = parsed else {
        return Err(Rejected(format!(
            "{file}: the module does not parse (see the diagnostics above)"
        ))
        .into());
    };
    // The full verifier, as ipu-opt runs it: MLIR's (IRDL) and the ipu dialect's semantic
    // checks (shapes, flags, plans, repeat bodies), before anything is planned.
    let verify = |module: &Module, stage: &str| -> anyhow::Result<()> {
        if !module.as_operation().verify()
            || !ipu_dialects::ipu::verify::verify_module(module.as_operation())
        {
            return Err(Rejected(format!(
                "{file}: the module does not verify{stage} (see the diagnostics above)"
            ))
            .into());
        }
        Ok(())
    };
    verify(&module, "")?;
    // The model's own text for an ipu module (the package carries it verbatim); an imported
    // model's is printed below with the file's locations.
    let mut reference = source.to_string();
    if ir::tile_modules(module.as_operation()).is_empty() {
        let run = |module: &mut Module, text: &str| -> anyhow::Result<()> {
            let pipeline = parse_pipeline(text).map_err(|e| anyhow!("{text}: {e}"))?;
            let registry = Registry::with_builtin();
            let built = build_pass_manager(
                context,
                &registry,
                &pipeline,
                "builtin.module",
                &PrintAround::default(),
                None,
            )
            .map_err(|e| anyhow!("{text}: {e}"))?;
            built
                .manager
                .run(module)
                .map_err(|_| anyhow!("{file}: {text} failed (see the diagnostics above)"))
        };
        if has_upstream_ops(module.as_operation()) {
            // A TOSA or linalg model is imported into ipu ops first (crate::crosscheck). A
            // model that does not import is the user's input, refused like one that does not
            // parse.
            let import = crate::crosscheck::import_pipeline();
            run(&mut module, &import).map_err(|_| {
                Rejected(format!(
                    "{file}: the model does not import into ipu ops: {import} failed (see the diagnostics above)"
                ))
            })?;
            verify(&module, " after import")?;
            if let Some(left) = first_upstream_op(module.as_operation()) {
                return Err(Rejected(format!(
                    "{file}: the model does not import into ipu ops: '{}' at {} is left unconverted",
                    left.0, left.1
                ))
                .into());
            }
            reference = with_locations(module.as_operation());
        }
        // An f32 model under the F16 or FP8 policy computes in F16 (what a user of an f32
        // export asks for with --precision f16 / fp8): its f32 tensors become f16 first, and
        // the reference evaluates that model.
        if matches!(options.precision.as_str(), "f16" | "fp8")
            && only_f32_floats(module.as_operation())
        {
            run(&mut module, "ipu-demote-f32")?;
            reference = with_locations(module.as_operation());
        }
        run(&mut module, &pipeline_text(options, target))?;
    }
    let cache = if options.embed_kernels {
        Some(KernelCache::from_env().context("opening the kernel cache")?)
    } else {
        None
    };
    let package = package_from_module(module.as_operation(), target, cache.as_ref())
        .with_context(|| format!("{file}: building the package"))?;
    Ok(Built {
        package,
        reference,
        estimates: CompileEstimates::of_module(module.as_operation()),
    })
}
