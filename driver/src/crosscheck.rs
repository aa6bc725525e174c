//! Cross-checks against the upstream oracle ([`crate::oracle`]): a model written in upstream
//! dialects is imported into `ipu` ops with our passes (`convert-tosa-to-ipu`,
//! `convert-linalg-to-ipu`) and evaluated by our host reference (`ipu_runtime::reference`);
//! [`crate::oracle::compare_with_oracle`] then compares those outputs with MLIR's own
//! execution of the original model on the same inputs.
//!
//! This module is the candidate side; the oracle itself never calls it. Once `ipu-compile`
//! exists, the simulator's outputs of the same inputs are a second candidate for the same
//! comparison.

use ipu_passes::{manager::build_pass_manager, manager::PrintAround, Registry};
use ipu_runtime::reference::{Array, Program};
use melior::ir::Module;

use crate::diagnostics::Collector;
use crate::oracle::{HostTensor, OracleComparison, OracleError, OracleRun, OracleTolerance};

/// The import pipeline: both importers (each converts only its own dialect's ops), as
/// [`crate::build::UPSTREAM_IMPORT`] runs them before `ipu-compile`.
pub fn import_pipeline() -> String {
    format!("builtin.module({})", crate::build::UPSTREAM_IMPORT)
}

/// Imports `source` with [`import_pipeline`] and returns the `ipu` module's text.
pub fn import(source: &str, file: &str) -> Result<String, String> {
    let context = ipu_dialects::context::create_context(false).map_err(|e| e.to_string())?;
    let collector = Collector::attach(&context);
    let module = import_into(&context, &collector, source, file)?;
    Ok(module.as_operation().to_string())
}

fn import_into<'c>(
    context: &'c melior::Context,
    collector: &Collector,
    source: &str,
    file: &str,
) -> Result<Module<'c>, String> {
    let diagnostics = |what: &str| {
        let found: Vec<String> = collector
            .take()
            .iter()
            .map(crate::diagnostics::render)
            .collect();
        format!("{file}: {what}:\n{}", found.join("\n"))
    };
    if let Some((line, column)) = ipu_dialects::context::nul_byte(source) {
        return Err(diagnostics(&format!(
            "contains a NUL byte at line {line}, column {column}"
        )));
    }
    let mut module = Module::parse(context, source).ok_or_else(|| diagnostics("does not parse"))?;
    ipu_passes::register_upstream_passes();
    let registry = Registry::with_builtin();
    let pipeline = ipu_passes::pipeline::parse_pipeline(&import_pipeline())
        .map_err(|error| format!("internal: import pipeline: {error:?}"))?;
    let built = build_pass_manager(
        context,
        &registry,
        &pipeline,
        "builtin.module",
        &PrintAround::default(),
        None,
    )
    .map_err(|error| format!("internal: import pipeline: {error:?}"))?;
    built.manager.enable_verifier(true);
    if built.manager.run(&mut module).is_err() {
        return Err(diagnostics("the import into ipu failed"));
    }
    Ok(module)
}

/// Our candidate: imports `source` and evaluates `function` with the reference evaluator on
/// `inputs` (the oracle run's inputs, so both sides see the same values).
pub fn reference_outputs(
    source: &str,
    file: &str,
    function: &str,
    inputs: &[HostTensor],
) -> Result<Vec<HostTensor>, String> {
    let context = ipu_dialects::context::create_context(false).map_err(|e| e.to_string())?;
    let collector = Collector::attach(&context);
    let module = import_into(&context, &collector, source, file)?;
    let program = Program::from_module(&module).map_err(|error| {
        format!("{file}: the reference cannot read the imported module: {error}")
    })?;
    let arguments = inputs
        .iter()
        .map(|tensor| Array::new(tensor.shape.clone(), tensor.data.clone()))
        .collect::<Result<Vec<Array>, _>>()
        .map_err(|error| error.to_string())?;
    let outputs = program
        .evaluate(function, &arguments)
        .map_err(|error| format!("{file}: the reference evaluation failed: {error}"))?;
    Ok(outputs
        .into_iter()
        .map(|array| HostTensor {
            shape: array.shape,
            element: crate::oracle::Element::F32,
            data: array.data,
        })
        .collect())
}

/// Imports and evaluates the model of `oracle` (with the oracle run's inputs) and compares.
pub fn check_reference(
    source: &str,
    file: &str,
    oracle: &OracleRun,
    tolerance: OracleTolerance,
) -> Result<OracleComparison, OracleError> {
    let candidate = reference_outputs(source, file, &oracle.function, &oracle.inputs)
        .map_err(|detail| OracleError::Compare { detail })?;
    crate::oracle::compare_with_oracle(oracle, &candidate, tolerance)
}
