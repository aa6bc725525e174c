//! `ipu-translate --ipu-to-package in.mlir -o out.ipuexe`: lowers a (planned or unplanned)
//! `ipu` graph function to tiles and writes the runtime's application package.

use std::path::PathBuf;

use anyhow::{bail, Context as _};
use clap::Parser;
use ipu_device::kernels::KernelCache;
use ipu_device::Target;
use ipu_passes::lower::{compile_function, LowerOptions, PrecisionPolicy};
use ipu_runtime::package::{PackageSource, SourcePrecision};
use melior::ir::{operation::OperationLike, Module};

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
    #[arg(long = "log-format", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    ipu_driver::logging::init(&args.log_format);
    if !args.ipu_to_package {
        bail!("no translation selected (use --ipu-to-package)");
    }
    let source = if args.input == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&args.input).with_context(|| format!("reading {}", args.input))?
    };
    let context = ipu_dialects::context::create_context(false)?;
    let Some(module) = Module::parse(&context, &source) else {
        bail!("{}: could not parse the module", args.input);
    };
    if !module.as_operation().verify() {
        bail!("{}: the module does not verify", args.input);
    }
    let target = Target::by_name(&args.target)?;
    let options = LowerOptions {
        target,
        tiles: args.tiles,
        precision: if args.precision == "fp8" {
            PrecisionPolicy::Fp8
        } else {
            PrecisionPolicy::Native
        },
        fp8_scale: args.fp8_scale,
    };
    let cache = if args.no_embed_kernels {
        None
    } else {
        Some(KernelCache::from_env()?)
    };
    let mut package = compile_function(
        module.as_operation(),
        args.function.as_deref(),
        &options,
        cache.as_ref(),
    )?;
    // The source module, the function and the precision policy, for `ipu run`'s host
    // reference. The lowering names the package after the function it lowered.
    let function = args
        .function
        .clone()
        .unwrap_or_else(|| package.name.clone());
    let precision = match options.precision {
        PrecisionPolicy::Fp8 => SourcePrecision::Fp8 {
            scale_exp: options.fp8_scale,
        },
        PrecisionPolicy::Native => SourcePrecision::Native,
    };
    package.set_source(PackageSource::new(source, function, precision));
    package.write(&args.output)?;
    Ok(())
}
