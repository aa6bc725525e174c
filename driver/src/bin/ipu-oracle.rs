//! `ipu-oracle`: runs a model written in upstream MLIR dialects (TOSA, linalg, ...) with MLIR
//! itself on the CPU (upstream lowering to LLVM and MLIR's ExecutionEngine) and writes its
//! outputs as `.npy`. See `ipu_driver::oracle`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use ipu_driver::oracle::{self, Element, HostTensor, OracleOptions, OracleRun, OracleTolerance};

/// Run an upstream MLIR model with MLIR's own CPU lowering and ExecutionEngine (the oracle).
#[derive(Parser, Debug)]
#[command(name = "ipu-oracle", version)]
struct Args {
    /// The model (.mlir in upstream dialects: func.func with tensor arguments).
    model: PathBuf,
    /// The function to run (default: the only public function with a body).
    #[arg(long)]
    function: Option<String>,
    /// An input tensor for an argument: `arg0=x.npy` (also `0=` or `%arg0=`); repeatable.
    /// Arguments without one get seeded standard-normal values.
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// Seed of the generated inputs (each argument's stream is keyed by its name `argN`).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output: a `.npy` file (single-result functions) or a directory receiving
    /// `result0.npy`, `result1.npy`, ... Without it, a summary per output is printed.
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Also write the inputs used (given or generated) as `arg0.npy`, ... into this directory.
    #[arg(long, value_name = "DIR")]
    save_inputs: Option<PathBuf>,
    /// Print the module after the upstream lowering (LLVM dialect) to stdout.
    #[arg(long)]
    print_lowered: bool,
    /// Print the upstream pass pipeline and exit.
    #[arg(long)]
    print_pipeline: bool,
    /// Import the model into ipu ops with our passes, evaluate it with our host reference on
    /// the same inputs, and compare with the oracle (exit 1 outside the f32 tolerance).
    #[arg(long)]
    check_reference: bool,
    /// Log format on stderr: text or json.
    #[arg(long, default_value = "text")]
    log_format: String,
}

fn main() -> ExitCode {
    let args = Args::parse();
    ipu_driver::logging::init(&args.log_format);
    if args.print_pipeline {
        println!("{}", oracle::PIPELINE);
        return ExitCode::SUCCESS;
    }
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("ipu-oracle: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<ExitCode, String> {
    let mut inputs = BTreeMap::new();
    for item in &args.inputs {
        let (name, file) = item
            .split_once('=')
            .filter(|(name, file)| !name.is_empty() && !file.is_empty())
            .ok_or_else(|| format!("--input '{item}': expected NAME=FILE (e.g. arg0=x.npy)"))?;
        let tensor =
            ipu_runtime::Tensor::read(Path::new(file)).map_err(|error| error.to_string())?;
        let host = HostTensor {
            shape: tensor.shape.iter().map(|&size| size as usize).collect(),
            element: Element::F32,
            data: tensor.data.iter().map(|&value| f64::from(value)).collect(),
        };
        if inputs.insert(name.to_string(), host).is_some() {
            return Err(format!("--input: '{name}' is given twice"));
        }
    }
    let options = OracleOptions {
        function: args.function.clone(),
        seed: args.seed,
        keep_lowered: args.print_lowered,
    };
    let run =
        oracle::run_file(&args.model, &options, &inputs).map_err(|error| error.to_string())?;
    if let Some(lowered) = &run.lowered {
        println!("{lowered}");
    }
    if let Some(directory) = &args.save_inputs {
        create_dir(directory)?;
        for (index, tensor) in run.inputs.iter().enumerate() {
            let path = directory.join(format!("{}.npy", oracle::argument_name(index)));
            write_npy(&path, tensor)?;
        }
    }
    match &args.output {
        Some(path) => write_outputs(path, &run)?,
        None => {
            for (index, output) in run.outputs.iter().enumerate() {
                println!("result{index}: {}", summary(output));
            }
        }
    }
    if args.check_reference {
        let source = std::fs::read_to_string(&args.model)
            .map_err(|error| format!("{}: {error}", args.model.display()))?;
        let file = args.model.display().to_string();
        let comparison =
            ipu_driver::crosscheck::check_reference(&source, &file, &run, OracleTolerance::F32)
                .map_err(|error| error.to_string())?;
        println!("reference vs oracle:\n{}", comparison.report());
        if !comparison.passed() {
            println!("numericalTest=FAIL");
            return Ok(ExitCode::FAILURE);
        }
        println!("numericalTest=PASS");
    }
    Ok(ExitCode::SUCCESS)
}

fn summary(tensor: &HostTensor) -> String {
    let count = tensor.data.len().max(1) as f64;
    let mean = tensor.data.iter().sum::<f64>() / count;
    let min = tensor.data.iter().copied().fold(f64::INFINITY, f64::min);
    let max = tensor
        .data
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let head: Vec<String> = tensor
        .data
        .iter()
        .take(4)
        .map(|value| format!("{value:.6}"))
        .collect();
    format!(
        "{} min={min:.6} max={max:.6} mean={mean:.6} first=[{}]",
        tensor.describe(),
        head.join(", ")
    )
}

fn create_dir(directory: &Path) -> Result<(), String> {
    std::fs::create_dir_all(directory)
        .map_err(|error| format!("creating {}: {error}", directory.display()))
}

fn write_outputs(path: &Path, run: &OracleRun) -> Result<(), String> {
    let is_file = path.extension().is_some_and(|extension| extension == "npy");
    if is_file {
        if run.outputs.len() != 1 {
            return Err(format!(
                "-o {}: @{} has {} results; give a directory",
                path.display(),
                run.function,
                run.outputs.len()
            ));
        }
        return write_npy(path, &run.outputs[0]);
    }
    create_dir(path)?;
    for (index, tensor) in run.outputs.iter().enumerate() {
        write_npy(&path.join(format!("result{index}.npy")), tensor)?;
    }
    Ok(())
}

/// `.npy` in the tensor's element type (`<f4` through the runtime's writer, `<f8` here).
fn write_npy(path: &Path, tensor: &HostTensor) -> Result<(), String> {
    let bytes = match tensor.element {
        Element::F32 => {
            let host = ipu_runtime::Tensor::new(
                tensor.shape.iter().map(|&size| size as u64).collect(),
                tensor.data.iter().map(|&value| value as f32).collect(),
            )
            .map_err(|error| error.to_string())?;
            host.to_npy(ipu_runtime::NpyDtype::F32)
        }
        Element::F64 => npy_f64(tensor),
    };
    std::fs::write(path, bytes).map_err(|error| format!("writing {}: {error}", path.display()))
}

fn npy_f64(tensor: &HostTensor) -> Vec<u8> {
    let shape = match tensor.shape.as_slice() {
        [single] => format!("({single},)"),
        sizes => format!(
            "({})",
            sizes
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for value in &tensor.data {
        bytes.extend(value.to_le_bytes());
    }
    bytes
}
