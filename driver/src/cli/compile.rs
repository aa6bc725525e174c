//! `ipu compile` and the compile half of `ipu run model.mlir`: the registered `ipu-compile{...}`
//! pipeline, then the package.

use std::path::Path;

use anyhow::anyhow;
use ipu_driver::build::CompileEstimates;
use ipu_runtime::package::{PackageSource, SourcePrecision};
use ipu_runtime::Package;

use super::{CompileArgs, CompileOptions, Failure};

/// Compiles the model at `input` to a package.
pub fn compile(input: &Path, options: &CompileOptions) -> Result<Package, Failure> {
    compile_with_estimates(input, options).map(|(package, _)| package)
}

/// [`compile`], also returning the compiler's cycle estimates of the program.
pub fn compile_with_estimates(
    input: &Path,
    options: &CompileOptions,
) -> Result<(Package, CompileEstimates), Failure> {
    if !input.is_file() {
        return Err(Failure::input(anyhow!(
            "cannot read model '{}': no such file",
            input.display()
        )));
    }
    lower(input, options)
}

/// Runs the `ipu-compile` pipeline on the model and builds the package
/// ([`ipu_driver::build::build_package`], what `ipu-translate --ipu-to-package` runs), embedding
/// compiled kernel objects from the kernel cache.
fn lower(input: &Path, options: &CompileOptions) -> Result<(Package, CompileEstimates), Failure> {
    let source = std::fs::read_to_string(input).map_err(|e| {
        Failure::input(anyhow!(e).context(format!("reading '{}'", input.display())))
    })?;
    compile_source(&source, &input.display().to_string(), options, false)
}

/// Compiles the model text `source` (read from `file`, which diagnostics name) to a package
/// carrying its source for the host reference, with the compiler's estimates. With
/// `collect_diagnostics`, MLIR's diagnostics are not printed but kept in the error
/// ([`ipu_driver::build::Diagnosed`]).
pub fn compile_source(
    source: &str,
    file: &str,
    options: &CompileOptions,
    collect_diagnostics: bool,
) -> Result<(Package, CompileEstimates), Failure> {
    let precision = options.precision.clone().unwrap_or_else(|| "native".into());
    if !matches!(precision.as_str(), "native" | "f16" | "f32" | "fp8") {
        return Err(Failure::input(anyhow!(
            "--precision '{precision}': expected native, f16, f32 or fp8"
        )));
    }
    // Plan constraints are read by the planner; a missing file is the user's error (exit 2),
    // reported before anything is compiled.
    if let Some(path) = &options.plan_constraints {
        if !path.is_file() {
            return Err(Failure::input(anyhow!(
                "--constraints '{}': no such file",
                path.display()
            )));
        }
    }
    let build = ipu_driver::build::BuildOptions {
        tiles: options.tiles,
        precision: precision.clone(),
        fp8_scale: Some(0),
        plan_constraints: options
            .plan_constraints
            .as_ref()
            .map(|path| path.display().to_string()),
        planner: options.planner_settings(),
        collect_diagnostics,
        target: options
            .target
            .clone()
            .unwrap_or_else(|| ipu_driver::build::BuildOptions::default().target),
        ..ipu_driver::build::BuildOptions::default()
    };
    // A model that does not parse, verify or import into ipu ops is bad input (exit 2); one
    // the compiler cannot handle ran the compiler and failed: a failed run (exit 1).
    let built =
        ipu_driver::build::build_package_with_source(source, file, &build).map_err(|e| {
            let rejected = ipu_driver::build::is_rejected(&e);
            // The build's error names the whole ipu-compile pipeline it ran.
            let e = e.context(format!("compiling '{file}'"));
            if rejected {
                Failure::Input(e)
            } else {
                Failure::failed(e)
            }
        })?;
    let (mut package, source) = (built.package, built.reference);
    // What the host reference of `ipu run` needs: the source module, the function compiled
    // (the package is named after it) and the precision policy.
    let source_precision = if precision == "fp8" {
        SourcePrecision::Fp8 { scale_exp: 0 }
    } else {
        SourcePrecision::Native
    };
    let function = package.name.clone();
    package.set_source(PackageSource::new(source, function, source_precision));
    Ok((package, built.estimates))
}

/// `ipu compile model.mlir -o model.ipuexe`.
pub fn command(args: &CompileArgs) -> Result<(), Failure> {
    // The one output rule's 'never the input' part, checked before compiling (the package
    // write applies the rest: device nodes in place, regular files atomically).
    ipu_runtime::output::check_not_input(&args.output, &[&args.input])
        .map_err(|e| Failure::input(anyhow!(e)))?;
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
