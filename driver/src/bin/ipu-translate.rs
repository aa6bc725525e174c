//! `ipu-translate --ipu-to-package in.mlir -o out.ipuexe`: writes the runtime's application
//! package of a module: its emitted `ipu_tile` program when it has one (the output of
//! `ipu-opt --pass-pipeline='builtin.module(ipu-compile{...})'`), else of its graph function
//! compiled with `ipu-compile` and the options given here.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Parser;
use ipu_driver::build::{build_package_with_source, BuildOptions};
use ipu_runtime::package::{PackageSource, SourcePrecision};

#[derive(Debug, Parser)]
#[command(name = "ipu-translate", about = "Translate ipu IR to other formats")]
struct Args {
    /// Lower the graph to tiles and write an `.ipuexe` package.
    #[arg(long = "ipu-to-package")]
    ipu_to_package: bool,
    /// Input file (`-` for standard input).
    input: String,
    #[arg(short = 'o', long = "output")]
    output: PathBuf,
    /// Function to lower (default: the first that is not a repeat body).
    #[arg(long = "function")]
    function: Option<String>,
    #[arg(long = "target", default_value = "c600")]
    target: String,
    /// Tiles the program may use.
    #[arg(long = "tiles", default_value_t = 1472)]
    tiles: u32,
    /// GEMM input precision: native (the tensors' types) or fp8.
    #[arg(long = "precision", default_value = "native", value_parser = ["native", "f16", "f32", "fp8"])]
    precision: String,
    #[arg(long = "fp8-scale", default_value_t = 0, allow_hyphen_values = true)]
    fp8_scale: i32,
    /// Reference kernels by spec instead of embedding compiled objects.
    #[arg(long = "no-embed-kernels")]
    no_embed_kernels: bool,
    /// Plan constraints (JSON, as ipu-lower-mid{dump-plans=FILE} writes) the planner must meet.
    #[arg(
        long = "constraints",
        visible_alias = "plan-constraints",
        value_name = "FILE"
    )]
    plan_constraints: Option<String>,
    #[arg(long = "log-format", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ipu_driver::logging::init(&args.log_format);
    if !args.ipu_to_package {
        bail!("no translation selected (use --ipu-to-package)");
    }
    if args.input != "-" {
        // The one output rule's 'never the input' part, before building (the package write
        // applies the rest).
        ipu_runtime::output::check_not_input(
            std::path::Path::new(&args.output),
            &[std::path::Path::new(&args.input)],
        )?;
    }
    let source = if args.input == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&args.input).with_context(|| format!("reading {}", args.input))?
    };
    // Packages an emitted ipu_tile program as it is; anything else runs ipu-compile first.
    let options = BuildOptions {
        target: args.target.clone(),
        tiles: Some(args.tiles),
        precision: args.precision.clone(),
        fp8_scale: Some(args.fp8_scale),
        function: args.function.clone(),
        embed_kernels: !args.no_embed_kernels,
        plan_constraints: args.plan_constraints.clone(),
        planner: Vec::new(),
        collect_diagnostics: false,
    };
    let built = build_package_with_source(&source, &args.input, &options)?;
    let (mut package, source) = (built.package, built.reference);
    // The source module, the function and the precision policy, for `ipu run`'s host
    // reference. The lowering names the package after the function it lowered.
    let function = args
        .function
        .clone()
        .unwrap_or_else(|| package.name.clone());
    let precision = if args.precision == "fp8" {
        SourcePrecision::Fp8 {
            scale_exp: args.fp8_scale,
        }
    } else {
        SourcePrecision::Native
    };
    package.set_source(PackageSource::new(source, function, precision));
    package.write(&args.output)?;
    Ok(())
}
