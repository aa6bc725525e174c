//! The upstream oracle (`ipu_driver::oracle`: MLIR's own lowering to LLVM and ExecutionEngine)
//! on a hand-checkable function, its errors, and the transformer blocks of `examples/` checked
//! against our import passes plus reference evaluator (`ipu_driver::crosscheck`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use ipu_driver::crosscheck::reference_outputs;
use ipu_driver::oracle::{
    compare_with_oracle, run_file, run_source, Element, HostTensor, OracleError, OracleOptions,
    OracleRun, OracleTolerance,
};

fn tensor(shape: &[usize], data: &[f64]) -> HostTensor {
    HostTensor {
        shape: shape.to_vec(),
        element: Element::F32,
        data: data.to_vec(),
    }
}

fn inputs(pairs: &[(&str, HostTensor)]) -> BTreeMap<String, HostTensor> {
    pairs
        .iter()
        .map(|(name, tensor)| (name.to_string(), tensor.clone()))
        .collect()
}

fn example(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples")
        .join(name)
}

const MATMUL_ADD_LINALG: &str = r#"
func.func @mm(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = arith.constant dense<[[10.0, 20.0], [30.0, 40.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = linalg.matmul ins(%a, %b : tensor<2x2xf32>, tensor<2x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.add ins(%m, %c : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
"#;

const MATMUL_ADD_TOSA: &str = r#"
func.func @mm(%a: tensor<1x2x2xf32>, %b: tensor<1x2x2xf32>) -> (tensor<1x2x2xf32>, tensor<1x2x2xf64>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = "tosa.const"() <{values = dense<[[[10.0, 20.0], [30.0, 40.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %m = tosa.matmul %a, %b, %zp, %zp : (tensor<1x2x2xf32>, tensor<1x2x2xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2xf32>
  %r = tosa.add %m, %c : (tensor<1x2x2xf32>, tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %w = tosa.cast %r : (tensor<1x2x2xf32>) -> tensor<1x2x2xf64>
  return %r, %w : tensor<1x2x2xf32>, tensor<1x2x2xf64>
}
"#;

/// [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] + [[10, 20], [30, 40]] = [[29, 42], [73, 90]].
#[test]
fn oracle_matmul_add_by_hand() {
    let given = inputs(&[
        ("arg0", tensor(&[2, 2], &[1.0, 2.0, 3.0, 4.0])),
        ("%arg1", tensor(&[2, 2], &[5.0, 6.0, 7.0, 8.0])),
    ]);
    let run = run_source(
        MATMUL_ADD_LINALG,
        "mm.mlir",
        &OracleOptions::default(),
        &given,
    )
    .expect("the oracle runs");
    assert_eq!(run.function, "mm");
    assert_eq!(
        run.outputs,
        vec![tensor(&[2, 2], &[29.0, 42.0, 73.0, 90.0])]
    );

    let given = inputs(&[
        ("0", tensor(&[1, 2, 2], &[1.0, 2.0, 3.0, 4.0])),
        ("arg1", tensor(&[1, 2, 2], &[5.0, 6.0, 7.0, 8.0])),
    ]);
    let run = run_source(
        MATMUL_ADD_TOSA,
        "mm.mlir",
        &OracleOptions::default(),
        &given,
    )
    .expect("the oracle runs TOSA with two results");
    assert_eq!(run.outputs.len(), 2);
    assert_eq!(run.outputs[0].data, vec![29.0, 42.0, 73.0, 90.0]);
    assert_eq!(run.outputs[1].element, Element::F64);
    assert_eq!(run.outputs[1].data, vec![29.0, 42.0, 73.0, 90.0]);
}

#[test]
fn oracle_seeded_inputs_are_deterministic() {
    let options = |seed| OracleOptions {
        seed,
        ..OracleOptions::default()
    };
    let first = run_source(MATMUL_ADD_LINALG, "mm.mlir", &options(3), &BTreeMap::new()).unwrap();
    let again = run_source(MATMUL_ADD_LINALG, "mm.mlir", &options(3), &BTreeMap::new()).unwrap();
    let other = run_source(MATMUL_ADD_LINALG, "mm.mlir", &options(4), &BTreeMap::new()).unwrap();
    assert_eq!(first.inputs, again.inputs);
    assert_eq!(first.outputs, again.outputs);
    assert_ne!(first.inputs, other.inputs);
    // The generated inputs are what the JIT code multiplied.
    let (a, b) = (&first.inputs[0].data, &first.inputs[1].data);
    let expected = a[0] * b[0] + a[1] * b[2] + 10.0;
    assert!((first.outputs[0].data[0] - expected).abs() < 1e-5);
}

#[test]
fn oracle_errors_name_the_problem() {
    let none = BTreeMap::new();
    let options = OracleOptions::default();
    let error = run_source("func.func @f(", "bad.mlir", &options, &none).unwrap_err();
    assert!(matches!(error, OracleError::Parse { .. }), "{error}");

    let wrong_shape = inputs(&[("arg0", tensor(&[3], &[1.0, 2.0, 3.0]))]);
    let error = run_source(MATMUL_ADD_LINALG, "mm.mlir", &options, &wrong_shape).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("input arg0") && message.contains("tensor<2x2xf32>"),
        "{message}"
    );

    let unknown = inputs(&[("arg7", tensor(&[2, 2], &[0.0; 4]))]);
    let message = run_source(MATMUL_ADD_LINALG, "mm.mlir", &options, &unknown)
        .unwrap_err()
        .to_string();
    assert!(message.contains("no such argument"), "{message}");

    let named = OracleOptions {
        function: Some("nope".into()),
        ..OracleOptions::default()
    };
    let message = run_source(MATMUL_ADD_LINALG, "mm.mlir", &named, &none)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("no function @nope (functions: @mm)"),
        "{message}"
    );

    let integer = "func.func @i(%x: tensor<4xi32>) -> tensor<4xi32> { return %x : tensor<4xi32> }";
    let message = run_source(integer, "i.mlir", &options, &none)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("element type i32 is not supported"),
        "{message}"
    );

    let message = run_file(&example("missing.mlir"), &options, &none)
        .unwrap_err()
        .to_string();
    assert!(message.contains("missing.mlir"), "{message}");
}

#[test]
fn compare_with_oracle_reports_the_worst_element() {
    let oracle = OracleRun {
        function: "f".into(),
        arguments: Vec::new(),
        inputs: Vec::new(),
        outputs: vec![tensor(&[3], &[1.0, 2.0, 3.0])],
        lowered: None,
    };
    let close = compare_with_oracle(
        &oracle,
        &[tensor(&[3], &[1.0, 2.00001, 3.0])],
        OracleTolerance::F32,
    )
    .unwrap();
    assert!(close.passed(), "{}", close.report());
    let far = compare_with_oracle(
        &oracle,
        &[tensor(&[3], &[1.0, 2.0, 3.5])],
        OracleTolerance::F32,
    )
    .unwrap();
    assert!(!far.passed());
    assert_eq!(far.outputs[0].worst, 2);
    assert_eq!(far.outputs[0].failures, 1);
    assert!(far.report().contains("FAIL"));
    let nan = compare_with_oracle(
        &oracle,
        &[tensor(&[3], &[f64::NAN, 2.0, 3.0])],
        OracleTolerance::F32,
    )
    .unwrap();
    assert!(!nan.passed());
    assert!(
        compare_with_oracle(&oracle, &[tensor(&[2], &[1.0, 2.0])], OracleTolerance::F32).is_err()
    );
}

/// Runs a block with the oracle and with our import + reference evaluator on the same seeded
/// inputs, and returns the oracle run and the worst absolute error.
fn block_against_reference(file: &str, seed: u64) -> (OracleRun, f64) {
    let path = example(file);
    let options = OracleOptions {
        seed,
        ..OracleOptions::default()
    };
    let run = run_file(&path, &options, &BTreeMap::new()).expect("the oracle runs the block");
    let source = std::fs::read_to_string(&path).unwrap();
    let candidate = reference_outputs(&source, file, &run.function, &run.inputs)
        .unwrap_or_else(|error| panic!("import + reference evaluation of {file}: {error}"));
    let comparison = compare_with_oracle(&run, &candidate, OracleTolerance::F32).unwrap();
    eprintln!("{file} seed {seed}:\n{}", comparison.report());
    assert!(comparison.passed(), "{}", comparison.report());
    (run, comparison.max_abs_error())
}

#[test]
fn tosa_transformer_block_matches_the_reference() {
    let (run, error) = block_against_reference("transformer_block_tosa.mlir", 1);
    assert_eq!(run.outputs[0].shape, vec![1, 16, 64]);
    assert!(error < 1e-5, "max abs error {error}");
}

/// The linalg block (batch-1 3-D, as torch-mlir / IREE frontends emit it) imports to the same
/// ipu program as the TOSA block: layer norm, softmax, GeLU and attention recognized in their
/// linalg forms, the head split / merge folded into the projections.
#[test]
fn linalg_transformer_block_matches_the_reference() {
    let (run, error) = block_against_reference("transformer_block_linalg.mlir", 1);
    assert_eq!(run.outputs[0].shape, vec![1, 16, 64]);
    assert!(error < 1e-5, "max abs error {error}");
    let (_, other_seed) = block_against_reference("transformer_block_linalg.mlir", 7);
    assert!(other_seed < 1e-5, "max abs error {other_seed}");
}

/// The two example files hold the same block and weights: MLIR's executions of both agree.
#[test]
fn tosa_and_linalg_blocks_agree_under_the_oracle() {
    let options = OracleOptions {
        seed: 2,
        ..OracleOptions::default()
    };
    let tosa = run_file(
        &example("transformer_block_tosa.mlir"),
        &options,
        &BTreeMap::new(),
    )
    .unwrap();
    let linalg = run_file(
        &example("transformer_block_linalg.mlir"),
        &options,
        &BTreeMap::new(),
    )
    .unwrap();
    // Same generator stream (argument arg0, same shape).
    assert_eq!(tosa.inputs[0], linalg.inputs[0]);
    let comparison = compare_with_oracle(&tosa, &linalg.outputs, OracleTolerance::F32).unwrap();
    eprintln!(
        "TOSA vs linalg block under the oracle:\n{}",
        comparison.report()
    );
    assert!(comparison.passed(), "{}", comparison.report());
    assert!(comparison.max_abs_error() < 1e-5, "{}", comparison.report());
}
