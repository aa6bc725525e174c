//! `ipu compile` and the compile half of `ipu run model.mlir`.
//!
//! The lowering pipeline (`ipu-compile{...}`, issue 5) is looked up in the pass registry when
//! the command runs, not at build time, so this command starts working in the build where
//! `ipu_passes` registers it; until then it fails as a usage error (exit 2) that says so.

use std::path::Path;

use anyhow::anyhow;
use ipu_runtime::package::{PackageSource, SourcePrecision};
use ipu_runtime::Package;

use super::{CompileArgs, CompileOptions, Failure};

/// The registered name of the whole planning-and-lowering pipeline.
pub const PIPELINE: &str = "ipu-compile";

/// Whether this build's registry has the lowering pipeline (as a named pipeline or a pass).
pub fn pipeline_available() -> bool {
    let registry = ipu_passes::Registry::with_builtin();
    registry.pipeline(PIPELINE).is_some() || registry.pass(PIPELINE).is_some()
}

/// The pipeline text `builtin.module(ipu-compile{...})` for `options`.
pub fn pipeline_text(options: &CompileOptions) -> String {
    let mut settings = Vec::new();
    if let Some(tiles) = options.tiles {
        settings.push(format!("tiles={tiles}"));
    }
    if let Some(precision) = &options.precision {
        settings.push(format!("precision={precision}"));
    }
    if settings.is_empty() {
        format!("builtin.module({PIPELINE})")
    } else {
        format!("builtin.module({PIPELINE}{{{}}})", settings.join(" "))
    }
}

/// Compiles the model at `input` to a package.
pub fn compile(input: &Path, options: &CompileOptions) -> Result<Package, Failure> {
    if !input.is_file() {
        return Err(Failure::input(anyhow!(
            "cannot read model '{}': no such file",
            input.display()
        )));
    }
    if !pipeline_available() {
        return Err(Failure::input(anyhow!(
            "cannot compile '{}': the lowering pipeline is not available in this build \
             (the pass registry has no '{PIPELINE}'); run an already compiled package with \
             `ipu run model.ipuexe`",
            input.display()
        )));
    }
    lower(input, options)
}

/// Parses and verifies the module, lowers its entry function to tiles and builds the
/// package (`ipu_passes::lower::compile_function`, the translation `ipu-translate
/// --ipu-to-package` runs), embedding compiled kernel objects from the kernel cache.
fn lower(input: &Path, options: &CompileOptions) -> Result<Package, Failure> {
    use ipu_passes::lower::{compile_function, LowerOptions, PrecisionPolicy};
    use melior::ir::{operation::OperationLike, Module};

    let source = std::fs::read_to_string(input).map_err(|e| {
        Failure::input(anyhow!(e).context(format!("reading '{}'", input.display())))
    })?;
    let context = ipu_dialects::context::create_context(false).map_err(Failure::failed)?;
    let Some(module) = Module::parse(&context, &source) else {
        return Err(Failure::input(anyhow!(
            "'{}': the module does not parse",
            input.display()
        )));
    };
    if !module.as_operation().verify() {
        return Err(Failure::input(anyhow!(
            "'{}': the module does not verify",
            input.display()
        )));
    }
    let target = ipu_device::Target::c600();
    let precision = match options.precision.as_deref() {
        None | Some("native") => PrecisionPolicy::Native,
        Some("fp8") => PrecisionPolicy::Fp8,
        Some(other) => {
            return Err(Failure::input(anyhow!(
                "--precision '{other}': expected native or fp8"
            )))
        }
    };
    let lower_options = LowerOptions {
        tiles: options.tiles.unwrap_or(target.geometry.tiles.value),
        target,
        precision,
        fp8_scale: 0,
    };
    let cache = ipu_device::kernels::KernelCache::from_env()
        .map_err(|e| Failure::failed(anyhow!(e).context("opening the kernel cache")))?;
    // A model the lowering cannot handle ran the compiler and failed: a failed run (exit 1).
    let mut package = compile_function(module.as_operation(), None, &lower_options, Some(&cache))
        .map_err(|e| {
        Failure::failed(anyhow!(e).context(format!(
            "compiling '{}' ({})",
            input.display(),
            pipeline_text(options)
        )))
    })?;
    // What the host reference of `ipu run` needs: the source module, the function the
    // lowering chose (it names the package after it) and the precision policy.
    let source_precision = match lower_options.precision {
        PrecisionPolicy::Fp8 => SourcePrecision::Fp8 {
            scale_exp: lower_options.fp8_scale,
        },
        PrecisionPolicy::Native => SourcePrecision::Native,
    };
    let function = package.name.clone();
    package.set_source(PackageSource::new(source, function, source_precision));
    Ok(package)
}

/// `ipu compile model.mlir -o model.ipuexe`.
pub fn command(args: &CompileArgs) -> Result<(), Failure> {
    let package = compile(&args.input, &args.options)?;
    package
        .write(&args.output)
        .map_err(|e| Failure::input(anyhow!(e).context("writing the package")))?;
    println!(
        "package={} tiles={}",
        args.output.display(),
        package.tile_count()
    );
    Ok(())
}
