//! The numerical test of `ipu run` on packages the compiler built (`ipu-translate
//! --ipu-to-package`): the seed-class FP8 GEMM passes against the host reference; a package
//! whose weight bytes differ from its source module fails it with exit code 1; one-hot
//! operands give results that must be bit-exact, so a layout or exchange permutation shows
//! as a value at the wrong place rather than as tolerance noise.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ipu_dialects::ElementType;
use ipu_runtime::npy::{NpyDtype, Tensor};
use ipu_runtime::package::SourcePrecision;
use ipu_runtime::reference::{check_exact, distinct_values, one_hot, Array};
use ipu_runtime::{BindingRole, Package};

const IPU: &str = env!("CARGO_BIN_EXE_ipu");
const TRANSLATE: &str = env!("CARGO_BIN_EXE_ipu-translate");

/// The seed's GEMM: 250 x 256 x 512, FP8 on 64 tiles.
const GEMM: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/gemm_fp8.mlir");
const M: usize = 250;
const K: usize = 256;
const N: usize = 512;

/// The same GEMM with the right-hand side a weight (a constant of the module): the package
/// ships its bytes and `initialize` streams them in.
const GEMM_WEIGHT: &str = r#"
func.func @gemm_weight(%x: tensor<250x256xf16>) -> tensor<250x512xf16> {
  %w = arith.constant dense<0.5> : tensor<256x512xf16>
  %y = "ipu.matmul"(%x, %w) : (tensor<250x256xf16>, tensor<256x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("numerical")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn kernel_cache() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-kernel-cache")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_exit(output: &Output, code: i32, what: &str) {
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: expected exit {code}\nstdout:\n{}\nstderr:\n{}",
        text(&output.stdout),
        text(&output.stderr)
    );
}

/// `ipu-translate --ipu-to-package model --tiles 64 --precision fp8 -o out`.
fn translate(dir: &Path, model: &Path, output: &str) {
    let result = Command::new(TRANSLATE)
        .args(["--ipu-to-package"])
        .arg(model)
        .args(["-o", output, "--tiles", "64", "--precision", "fp8"])
        .current_dir(dir)
        .env("IPU_KERNEL_CACHE", kernel_cache())
        .env("RUST_LOG", "warn")
        .output()
        .expect("ipu-translate starts");
    assert_exit(&result, 0, "ipu-translate");
}

/// `ipu run` in `dir`.
fn ipu_run(dir: &Path, args: &[&str]) -> Output {
    Command::new(IPU)
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env("IPU_KERNEL_CACHE", kernel_cache())
        .env("RUST_LOG", "warn")
        .output()
        .expect("the ipu binary starts")
}

/// `ipu run` in `dir` with `args`, in F16, under the plan constraints and with the inputs
/// of `(constraints, inputs)`; it must pass. Returns its `result0` (written under
/// `dir/outputs-<constraints' stem>`).
fn run_pinned(
    dir: &Path,
    args: &[&str],
    (constraints, inputs): (&Path, &Path),
    what: &str,
) -> Array {
    let stem = constraints
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("run");
    let outputs = format!("outputs-{stem}");
    let mut all = args.to_vec();
    all.extend([
        "--precision",
        "f16",
        "--constraints",
        constraints.to_str().unwrap(),
        "--inputs",
        inputs.to_str().unwrap(),
        "--outputs",
        &outputs,
    ]);
    let output = ipu_run(dir, &all);
    assert_exit(&output, 0, what);
    result0(&dir.join(&outputs))
}

/// The `result0.npy` a run wrote into `outputs`.
fn result0(outputs: &Path) -> Array {
    let tensor = Tensor::read(&outputs.join("result0.npy")).expect("result0.npy");
    Array::from_tensor(&tensor).expect("result0 is an array")
}

fn stdout_lines(output: &Output) -> Vec<String> {
    text(&output.stdout).lines().map(str::to_string).collect()
}

#[test]
fn translated_gemm_carries_its_source_and_passes() {
    let dir = scratch("gemm");
    translate(&dir, Path::new(GEMM), "gemm.ipuexe");
    let package = Package::read(&dir.join("gemm.ipuexe")).expect("package reads");
    let source = package
        .source
        .as_ref()
        .expect("the package carries its source");
    assert_eq!(source.function, "gemm");
    assert_eq!(source.precision, SourcePrecision::Fp8 { scale_exp: 0 });
    assert_eq!(
        source.module,
        std::fs::read_to_string(GEMM).expect("example")
    );
    let output = ipu_run(&dir, &["gemm.ipuexe", "--device", "sim:c600"]);
    assert_exit(&output, 0, "ipu run of the FP8 GEMM");
    let lines = stdout_lines(&output);
    assert_eq!(lines.len(), 4, "{lines:?}");
    let error: f64 = lines[2]
        .strip_prefix("referenceMaximumAbsoluteError=")
        .and_then(|rest| rest.strip_suffix(" numericalTest=PASS"))
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("numerical test line: {}", lines[2]));
    // FP8 operands are the same on both sides: what remains is the accumulation and the final
    // rounding to f16, well under the K = 256 rule (about 0.0156 max|ref|, max|ref| being
    // tens here). The simulator's kernels sum the exact FP8 products and round once, so the
    // error is 0 today.
    assert!((0.0..0.5).contains(&error), "{error}");
    assert!(lines[3].ends_with("hardwareTest=PASS"), "{}", lines[3]);
}

/// The reference evaluates the module's constants; the device streams the package's weight
/// bytes. A package whose bytes were altered (here a single element of the weight) must fail
/// the numerical test, with exit code 1, while the hardware test passes.
#[test]
fn wrong_weights_fail_the_numerical_test() {
    let dir = scratch("wrong-weights");
    std::fs::write(dir.join("gemm_weight.mlir"), GEMM_WEIGHT).expect("model");
    translate(&dir, &dir.join("gemm_weight.mlir"), "good.ipuexe");
    let output = ipu_run(&dir, &["good.ipuexe", "--name", "good"]);
    assert_exit(&output, 0, "the intact package");
    assert!(stdout_lines(&output)[2].ends_with("numericalTest=PASS"));

    let mut package = Package::read(&dir.join("good.ipuexe")).expect("package reads");
    let weight = package
        .bindings
        .iter_mut()
        .find(|b| b.role == BindingRole::Weight)
        .expect("the constant is a weight binding");
    assert_eq!(weight.name, "const1");
    // w[3][7] = 4.0 instead of 0.5, in the binding's encoding (under the FP8 policy the host
    // streams the weight as FP8 at the scale chosen from its range, where 4.0 saturates to
    // 0.9375): column 7 of the result is off by a multiple of x[m][3] in every row.
    let width = weight.precision.bytes() as usize;
    let code = ipu_device::numerics::encode_bytes(
        &[4.0],
        weight.precision,
        weight.scale_exp,
        ipu_device::numerics::Rounding::NearestEvenSaturating,
    )
    .expect("encodes");
    let at = (3 * N + 7) * width;
    assert_ne!(weight.data[at..at + width], code[..], "the weight changes");
    weight.data[at..at + width].copy_from_slice(&code);
    package
        .write(&dir.join("bad.ipuexe"))
        .expect("the package is well formed");
    let output = ipu_run(&dir, &["bad.ipuexe", "--name", "bad"]);
    assert_exit(&output, 1, "a package with a wrong weight");
    let lines = stdout_lines(&output);
    assert!(
        lines[2].starts_with("referenceMaximumAbsoluteError=")
            && lines[2].ends_with(" numericalTest=FAIL"),
        "{lines:?}"
    );
    assert!(lines[3].ends_with("hardwareTest=PASS"), "{lines:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("numerical test failed: @gemm_weight (gemm rule): output 'result0'"),
        "{stderr}"
    );
    // Only column 7 is wrong.
    assert!(
        stderr.contains("worst at [") && stderr.contains(", 7]:"),
        "{stderr}"
    );

    // Giving the altered value as the weight on the command line changes both sides: the
    // device streams it and the reference uses it in place of the module's constant.
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    let mut w = vec![0.5f32; K * N];
    w[3 * N + 7] = 4.0;
    Tensor::new(vec![K as u64, N as u64], w)
        .unwrap()
        .write(&inputs.join("const1.npy"), NpyDtype::F32)
        .unwrap();
    let output = ipu_run(
        &dir,
        &["bad.ipuexe", "--name", "given", "--inputs", "inputs"],
    );
    assert_exit(&output, 0, "the weight given on the command line");
}

/// Row selection: row `m` of the left operand is one-hot at `k = (37 m + 11) mod K`.
fn selected_row(m: usize) -> usize {
    (37 * m + 11) % K
}

/// Column selection: column `n` of the right operand is one-hot at `k = (29 n + 5) mod K`.
fn selected_column(n: usize) -> usize {
    (29 * n + 5) % K
}

fn tensor(array: &Array) -> Tensor {
    array.to_tensor()
}

/// Runs the FP8 GEMM package on `lhs` and `rhs`; returns the device's result.
fn run_gemm(dir: &Path, name: &str, lhs: &Array, rhs: &Array) -> Array {
    let inputs = dir.join(format!("{name}-inputs"));
    std::fs::create_dir_all(&inputs).unwrap();
    tensor(lhs)
        .write(&inputs.join("arg0.npy"), NpyDtype::F32)
        .unwrap();
    tensor(rhs)
        .write(&inputs.join("arg1.npy"), NpyDtype::F32)
        .unwrap();
    let outputs = format!("{name}-outputs");
    let output = ipu_run(
        dir,
        &[
            "gemm.ipuexe",
            "--name",
            name,
            "--inputs",
            inputs.to_str().unwrap(),
            "--outputs",
            &outputs,
        ],
    );
    assert_exit(&output, 0, name);
    // The reference is exact here too: every product is one value times 1.0.
    assert_eq!(
        stdout_lines(&output)[2],
        "referenceMaximumAbsoluteError=0.000000 numericalTest=PASS"
    );
    result0(&dir.join(&outputs))
}

/// One-hot operands select values without rounding (each output is one FP8 value times 1.0,
/// plus zeros, in any accumulation order), and `distinct_values` makes the selected values
/// distinct, so the device result must equal the selection bit for bit. Row selection checks
/// the left operand's row blocks, the right operand's layout and the result's gathering;
/// column selection checks the left operand's columns and the right operand's column blocks.
#[test]
fn one_hot_gemms_are_bit_exact() {
    let dir = scratch("one-hot");
    translate(&dir, Path::new(GEMM), "gemm.ipuexe");

    // C = S A where row m of S is one-hot: row m of C is row selected_row(m) of B.
    let mut lhs = Array::zeros(&[M, K]);
    for m in 0..M {
        let row = one_hot(&[K], &[selected_row(m)]).unwrap();
        lhs.data[m * K..(m + 1) * K].copy_from_slice(&row.data);
    }
    let rhs = distinct_values(&[K, N], ElementType::F8E4M3);
    let mut expected = Array::zeros(&[M, N]);
    for m in 0..M {
        let k = selected_row(m);
        expected.data[m * N..(m + 1) * N].copy_from_slice(&rhs.data[k * N..(k + 1) * N]);
    }
    let device = run_gemm(&dir, "rows", &lhs, &rhs);
    let check = check_exact(&expected, &device).unwrap();
    assert!(check.pass(), "{check}");

    // The check is discriminating: two swapped result rows are caught and located.
    let mut swapped = device.clone();
    let (a, b) = (10 * N, 11 * N);
    for n in 0..N {
        swapped.data.swap(a + n, b + n);
    }
    let check = check_exact(&expected, &swapped).unwrap();
    assert!(!check.pass());
    let first = check.first.expect("a mismatch");
    assert_eq!(first.index, vec![10, 0]);
    assert_eq!(first.found, expected.data[11 * N], "{first:?}");
    assert_eq!(check.mismatches, 2 * N);

    // C = A S where column n of S is one-hot: column n of C is column selected_column(n)
    // of A.
    let lhs = distinct_values(&[M, K], ElementType::F8E4M3);
    let mut rhs = Array::zeros(&[K, N]);
    for n in 0..N {
        rhs.data[selected_column(n) * N + n] = 1.0;
    }
    let mut expected = Array::zeros(&[M, N]);
    for m in 0..M {
        for n in 0..N {
            expected.data[m * N + n] = lhs.data[m * K + selected_column(n)];
        }
    }
    let device = run_gemm(&dir, "columns", &lhs, &rhs);
    let check = check_exact(&expected, &device).unwrap();
    assert!(check.pass(), "{check}");
}

/// `ipu run model.mlir` compiles, records the source and checks the numbers.
#[test]
fn run_from_mlir_checks_the_numbers() {
    let dir = scratch("from-mlir");
    std::fs::copy(GEMM, dir.join("gemm.mlir")).unwrap();
    let output = ipu_run(&dir, &["gemm.mlir", "--tiles", "64", "--precision", "fp8"]);
    assert_exit(&output, 0, "ipu run gemm.mlir");
    let lines = stdout_lines(&output);
    assert!(lines[2].ends_with("numericalTest=PASS"), "{lines:?}");
    // Compiled in the run: the refined estimate is compared with the simulated device program.
    assert_eq!(
        lines[1],
        "simulatedCycles=191756 deviceProgramCycles=17220 hostExchangeCycles=174536 refinedEstimate=17220 finalCycles=17220 refinedError=+0.00% estimateTest=PASS (bound 5 %)"
    );
    let package = Package::read(&dir.join("artifacts/gemm/model-final.ipuexe")).unwrap();
    assert_eq!(package.source.map(|s| s.function), Some("gemm".into()));
}

/// A package whose repeat-body weight was altered by one unit in the last place and re-signed
/// runs outputs within the tolerance, and still fails: the reference evaluates the source
/// module's constants, and the package's weight bytes must be exactly those constants in the
/// binding's encoding. The run names the weight and the element.
#[test]
fn a_re_signed_package_with_an_altered_body_weight_fails() {
    let dir = scratch("re-signed");
    let model = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../test/Runtime/Inputs/repeat_layer.mlir"
    );
    let result = Command::new(IPU)
        .args([
            "compile",
            model,
            "-o",
            "good.ipuexe",
            "--tiles",
            "64",
            "--precision",
            "f32",
        ])
        .current_dir(&dir)
        .env("IPU_KERNEL_CACHE", kernel_cache())
        .env("RUST_LOG", "warn")
        .output()
        .expect("ipu starts");
    assert_exit(&result, 0, "ipu compile");
    let output = ipu_run(&dir, &["good.ipuexe", "--name", "good"]);
    assert_exit(&output, 0, "the intact package");

    let mut package = Package::read(&dir.join("good.ipuexe")).expect("package reads");
    let weight = package
        .bindings
        .iter_mut()
        .find(|b| b.role == BindingRole::Weight && b.name.ends_with(".const1"))
        .expect("the body's weight matrix is a weight binding");
    let name = weight.name.clone();
    let width = weight.precision.bytes() as usize;
    // One ulp of element 5 (the lowest mantissa bit of a little-endian f32).
    weight.data[5 * width] ^= 1;
    package
        .write(&dir.join("bad.ipuexe"))
        .expect("the re-signed package is well formed");
    let output = ipu_run(&dir, &["bad.ipuexe", "--name", "bad"]);
    assert_exit(&output, 1, "a package with an altered weight");
    let lines = stdout_lines(&output);
    assert!(lines[2].ends_with(" numericalTest=FAIL"), "{lines:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "weight '{name}' in the package differs from its source constant at element 5"
        )),
        "{stderr}"
    );
}

/// A head split and merge (`ipu.reshape` views around a permutation of the leading axes)
/// moves values without arithmetic: with distinct f16 inputs the device result equals the
/// host's rearrangement bit for bit, on tile counts whose row grids split the tokens
/// differently (a view that addressed the wrong rows of a block would misplace values).
#[test]
fn reshape_views_move_values_exactly() {
    let dir = scratch("reshape-exact");
    let model = r#"func.func @heads(%x: tensor<24x96xf16>) -> tensor<6x384xf16> {
  %h = "ipu.reshape"(%x) : (tensor<24x96xf16>) -> tensor<24x6x16xf16>
  %t = "ipu.rearrange"(%h) {permutation = array<i64: 1, 0, 2>} : (tensor<24x6x16xf16>) -> tensor<6x24x16xf16>
  %m = "ipu.reshape"(%t) : (tensor<6x24x16xf16>) -> tensor<6x384xf16>
  return %m : tensor<6x384xf16>
}
"#;
    std::fs::write(dir.join("heads.mlir"), model).unwrap();
    let input = distinct_values(&[24, 96], ElementType::F16);
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    tensor(&input)
        .write(&inputs.join("arg0.npy"), NpyDtype::F32)
        .unwrap();
    // Head h of token s is columns [16 h, 16 h + 16) of row s; the result's row h holds the
    // tokens' head h in token order.
    let mut expected = Array::zeros(&[6, 384]);
    for h in 0..6 {
        for s in 0..24 {
            for d in 0..16 {
                expected.data[h * 384 + s * 16 + d] = input.data[s * 96 + h * 16 + d];
            }
        }
    }
    // Pinned grids (on so little data the planner would put everything on one tile): the
    // split's blocks of 8, 3 and 1 tokens, the permutation's, and the merge's blocks of 2, 3
    // and 2 heads.
    let pins = [
        ("3", [[3, 1, 1], [3, 1, 1], [1, 3, 1]]),
        ("8", [[8, 1, 1], [2, 1, 1], [1, 2, 1]]),
        ("24", [[24, 1, 1], [6, 4, 1], [1, 3, 1]]),
    ];
    for (tiles, [split, permute, merge]) in pins {
        let constraints = dir.join(format!("pins-{tiles}.json"));
        let pin = |op: usize, kind: &str, grid: [u32; 3]| {
            format!(r#"{{"op": {op}, "kind": "{kind}", "params": {{"grid": {grid:?}}}}}"#)
        };
        let pins = [
            pin(0, "reshape_view", split),
            pin(1, "rearrange", permute),
            pin(2, "reshape_view", merge),
        ];
        std::fs::write(&constraints, format!(r#"{{"ops": [{}]}}"#, pins.join(", "))).unwrap();
        let outputs = format!("outputs-{tiles}");
        let output = ipu_run(
            &dir,
            &[
                "heads.mlir",
                "--tiles",
                tiles,
                "--constraints",
                constraints.to_str().unwrap(),
                "--inputs",
                inputs.to_str().unwrap(),
                "--outputs",
                &outputs,
            ],
        );
        assert_exit(&output, 0, &format!("heads on {tiles} tiles"));
        let check = check_exact(&expected, &result0(&dir.join(&outputs))).unwrap();
        assert!(check.pass(), "{tiles} tiles: {check}");
    }
}

/// `ipu.slice`, `ipu.concat` and a batch `ipu.broadcast` (row gathers) move every element to
/// its place: windows of a host argument and of a device value (contiguous, strided on both
/// axes), joins on the last and on a leading axis, a matrix broadcast over a new batch axis,
/// on pinned row grids over 8 and 24 tiles, compared bit for bit.
#[test]
fn slices_and_joins_move_values_exactly() {
    let dir = scratch("gather-exact");
    let model = r#"func.func @gather(%x: tensor<24x96xf16>) -> (tensor<24x64xf16>, tensor<12x18xf16>, tensor<25x32xf16>, tensor<3x24x32xf16>) {
  %d = "ipu.add"(%x, %x) : (tensor<24x96xf16>, tensor<24x96xf16>) -> tensor<24x96xf16>
  %q = "ipu.slice"(%x) {offsets = array<i64: 0, 32>, strides = array<i64: 1, 1>} : (tensor<24x96xf16>) -> tensor<24x32xf16>
  %s = "ipu.slice"(%d) {offsets = array<i64: 1, 3>, strides = array<i64: 2, 5>} : (tensor<24x96xf16>) -> tensor<12x18xf16>
  %w = "ipu.slice"(%d) {offsets = array<i64: 0, 64>, strides = array<i64: 1, 1>} : (tensor<24x96xf16>) -> tensor<24x32xf16>
  %j = "ipu.concat"(%q, %w) {axis = 1 : i64} : (tensor<24x32xf16>, tensor<24x32xf16>) -> tensor<24x64xf16>
  %t = "ipu.slice"(%d) {offsets = array<i64: 5, 0>, strides = array<i64: 1, 1>} : (tensor<24x96xf16>) -> tensor<1x32xf16>
  %r = "ipu.concat"(%t, %q) {axis = 0 : i64} : (tensor<1x32xf16>, tensor<24x32xf16>) -> tensor<25x32xf16>
  %b = "ipu.broadcast"(%w) : (tensor<24x32xf16>) -> tensor<3x24x32xf16>
  return %j, %s, %r, %b : tensor<24x64xf16>, tensor<12x18xf16>, tensor<25x32xf16>, tensor<3x24x32xf16>
}
"#;
    std::fs::write(dir.join("gather.mlir"), model).unwrap();
    let input = distinct_values(&[24, 96], ElementType::F16);
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    tensor(&input)
        .write(&inputs.join("arg0.npy"), NpyDtype::F32)
        .unwrap();
    let x = |r: usize, c: usize| input.data[r * 96 + c];
    let d = |r: usize, c: usize| 2.0 * x(r, c);
    let build = |shape: &[usize], at: &dyn Fn(&[usize]) -> f64| {
        let mut array = Array::zeros(shape);
        for offset in 0..array.len() {
            let index = array.unravel(offset);
            array.data[offset] = at(&index);
        }
        array
    };
    let expected = [
        build(&[24, 64], &|i| {
            if i[1] < 32 {
                x(i[0], 32 + i[1])
            } else {
                d(i[0], 64 + i[1] - 32)
            }
        }),
        build(&[12, 18], &|i| d(1 + 2 * i[0], 3 + 5 * i[1])),
        build(&[25, 32], &|i| {
            if i[0] == 0 {
                d(5, i[1])
            } else {
                x(i[0] - 1, 32 + i[1])
            }
        }),
        build(&[3, 24, 32], &|i| d(i[1], 64 + i[2])),
    ];
    // Pinned row grids of the gathers (ops 1..=7), over 8 and 24 tiles.
    let pins = [
        (
            "8",
            [
                [1, 4, 1],
                [1, 4, 1],
                [1, 2, 1],
                [1, 8, 1],
                [1, 1, 1],
                [1, 4, 1],
                [3, 1, 1],
            ],
        ),
        (
            "24",
            [
                [1, 8, 1],
                [1, 4, 1],
                [1, 6, 1],
                [1, 3, 1],
                [1, 1, 1],
                [1, 3, 1],
                [3, 8, 1],
            ],
        ),
    ];
    for (tiles, grids) in pins {
        let constraints = dir.join(format!("pins-{tiles}.json"));
        let pins: Vec<String> = grids
            .iter()
            .enumerate()
            .map(|(k, grid)| {
                format!(
                    r#"{{"op": {}, "kind": "row_gather", "params": {{"grid": {grid:?}}}}}"#,
                    k + 1
                )
            })
            .collect();
        std::fs::write(&constraints, format!(r#"{{"ops": [{}]}}"#, pins.join(", "))).unwrap();
        let outputs = format!("outputs-{tiles}");
        let output = ipu_run(
            &dir,
            &[
                "gather.mlir",
                "--tiles",
                tiles,
                "--constraints",
                constraints.to_str().unwrap(),
                "--inputs",
                inputs.to_str().unwrap(),
                "--outputs",
                &outputs,
            ],
        );
        assert_exit(&output, 0, &format!("gathers on {tiles} tiles"));
        for (k, expected) in expected.iter().enumerate() {
            let path = dir.join(&outputs).join(format!("result{k}.npy"));
            let result = Tensor::read(&path).expect("result npy");
            let device = Array::from_tensor(&result).unwrap();
            let check = check_exact(expected, &device).unwrap();
            assert!(check.pass(), "{tiles} tiles, result {k}: {check}");
        }
    }
}

/// A split GEMM whose left operand another op computed gathers it from that op's row-major
/// blocks (column blocks of 24, 48 and 16: groups straddling two blocks, several per block,
/// one per block), and hands its result to the next op as a row grid: with a one-hot right
/// operand (a permutation of A's columns) and distinct f16 inputs every element of the result
/// is one input doubled twice, compared bit for bit, with and without a K split.
#[test]
fn split_gemm_of_device_values_moves_values_exactly() {
    let dir = scratch("split-device-exact");
    let model = r#"func.func @mix(%x: tensor<40x96xf16>, %w: tensor<96x48xf16>) -> tensor<40x48xf16> {
  %d = "ipu.add"(%x, %x) : (tensor<40x96xf16>, tensor<40x96xf16>) -> tensor<40x96xf16>
  %m = "ipu.matmul"(%d, %w) : (tensor<40x96xf16>, tensor<96x48xf16>) -> tensor<40x48xf16>
  %r = "ipu.add"(%m, %m) : (tensor<40x48xf16>, tensor<40x48xf16>) -> tensor<40x48xf16>
  return %r : tensor<40x48xf16>
}
"#;
    std::fs::write(dir.join("mix.mlir"), model).unwrap();
    let input = distinct_values(&[40, 96], ElementType::F16);
    // Column n of the product is column (7 n + 3) mod 96 of A.
    let source = |n: usize| (7 * n + 3) % 96;
    let mut w = Array::zeros(&[96, 48]);
    for n in 0..48 {
        w.data[source(n) * 48 + n] = 1.0;
    }
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    for (name, array) in [("arg0", &input), ("arg1", &w)] {
        tensor(array)
            .write(&inputs.join(format!("{name}.npy")), NpyDtype::F32)
            .unwrap();
    }
    let mut expected = Array::zeros(&[40, 48]);
    for r in 0..40 {
        for n in 0..48 {
            expected.data[r * 48 + n] = 4.0 * input.data[r * 96 + source(n)];
        }
    }
    // (the producer's grid, the split GEMM's kind and grid)
    let pins = [
        ([1, 5, 4], "gemm_k_split", [1, 3, 1, 2]),
        ([1, 8, 2], "gemm_k_split", [1, 2, 3, 4]),
        ([1, 10, 6], "gemm_output_stationary", [1, 5, 1, 1]),
    ];
    for (case, (add, kind, gemm)) in pins.iter().enumerate() {
        let constraints = dir.join(format!("pins-{case}.json"));
        std::fs::write(
            &constraints,
            format!(
                r#"{{"ops": [{{"op": 0, "kind": "pointwise_add", "params": {{"grid": {add:?}}}}}, {{"op": 1, "kind": "{kind}", "params": {{"grid": {gemm:?}}}}}]}}"#
            ),
        )
        .unwrap();
        let result = run_pinned(
            &dir,
            &[
                "mix.mlir",
                "--tiles",
                "64",
                "--active-tiles",
                "5,6,16,20,24,60",
            ],
            (&constraints, &inputs),
            &format!("case {case}"),
        );
        let check = check_exact(&expected, &result).unwrap();
        assert!(check.pass(), "case {case} ({add:?}, {gemm:?}): {check}");
    }
}

/// A split GEMM whose K and N are not multiples of 16 runs padded: the host writes each
/// operand run's padded columns and K rows as zeros and drops the result's padded columns as
/// it reads them (37 x 21 @ 21 x 19, padded to 32 x 32: column blocks of 16 real columns and
/// of 3 with 13 padded, K slices of 16 real rows and of 5 with 11 padded). A one-hot right
/// operand (a permutation of A's columns) makes every element of the result one input,
/// compared bit for bit, with and without a K split; so does a product whose padded K feeds
/// an add (its result converted to a row grid), and one whose left operand an add computed
/// (gathered from its row blocks, the padding zeroed by a fill).
#[test]
fn split_gemm_pads_any_k_and_n_exactly() {
    let dir = scratch("split-padded-exact");
    let (m, k) = (37, 21);
    let input = distinct_values(&[m, k], ElementType::F16);
    let source = |n: usize| (5 * n + 2) % k;
    let one_hot = |n_cols: usize| {
        let mut w = Array::zeros(&[k, n_cols]);
        for n in 0..n_cols {
            w.data[source(n) * n_cols + n] = 1.0;
        }
        w
    };
    let expected = |n_cols: usize, scale: f64| {
        let mut out = Array::zeros(&[m, n_cols]);
        for r in 0..m {
            for n in 0..n_cols {
                out.data[r * n_cols + n] = scale * input.data[r * k + source(n)];
            }
        }
        out
    };
    // (model, N, result scale, the product's pinned (kind, grid)s)
    let returned = r#"func.func @pad(%x: tensor<37x21xf16>, %w: tensor<21x19xf16>) -> tensor<37x19xf16> {
  %m = "ipu.matmul"(%x, %w) : (tensor<37x21xf16>, tensor<21x19xf16>) -> tensor<37x19xf16>
  return %m : tensor<37x19xf16>
}
"#;
    let added = r#"func.func @pad(%x: tensor<37x21xf16>, %w: tensor<21x32xf16>) -> tensor<37x32xf16> {
  %m = "ipu.matmul"(%x, %w) : (tensor<37x21xf16>, tensor<21x32xf16>) -> tensor<37x32xf16>
  %r = "ipu.add"(%m, %m) : (tensor<37x32xf16>, tensor<37x32xf16>) -> tensor<37x32xf16>
  return %r : tensor<37x32xf16>
}
"#;
    // The left operand computed on the device (an add's row-major blocks, whole 21-column rows):
    // gathered with its last 16-group 5 columns short, the rest of that group zeroed.
    let device = r#"func.func @pad(%x: tensor<37x21xf16>, %w: tensor<21x32xf16>) -> tensor<37x32xf16> {
  %d = "ipu.add"(%x, %x) : (tensor<37x21xf16>, tensor<37x21xf16>) -> tensor<37x21xf16>
  %m = "ipu.matmul"(%d, %w) : (tensor<37x21xf16>, tensor<21x32xf16>) -> tensor<37x32xf16>
  %r = "ipu.add"(%m, %m) : (tensor<37x32xf16>, tensor<37x32xf16>) -> tensor<37x32xf16>
  return %r : tensor<37x32xf16>
}
"#;
    type Pins = &'static [(&'static str, [u32; 4])];
    let cases: [(&str, usize, f64, Pins); 3] = [
        (
            returned,
            19,
            1.0,
            &[
                ("gemm_output_stationary", [1, 3, 2, 1]),
                ("gemm_k_split", [1, 2, 1, 2]),
                ("gemm_k_split", [1, 1, 2, 2]),
            ],
        ),
        (
            added,
            32,
            2.0,
            &[
                ("gemm_k_split", [1, 2, 2, 2]),
                ("gemm_output_stationary", [1, 4, 1, 1]),
            ],
        ),
        (
            device,
            32,
            4.0,
            &[
                ("gemm_k_split", [1, 2, 2, 2]),
                ("gemm_output_stationary", [1, 3, 2, 1]),
            ],
        ),
    ];
    for (model_index, (model, n_cols, scale, pins)) in cases.iter().enumerate() {
        let case_dir = dir.join(format!("model-{model_index}"));
        let inputs = case_dir.join("inputs");
        std::fs::create_dir_all(&inputs).unwrap();
        std::fs::write(case_dir.join("pad.mlir"), model).unwrap();
        for (name, array) in [("arg0", &input), ("arg1", &one_hot(*n_cols))] {
            tensor(array)
                .write(&inputs.join(format!("{name}.npy")), NpyDtype::F32)
                .unwrap();
        }
        let expected = expected(*n_cols, *scale);
        for (case, (kind, grid)) in pins.iter().enumerate() {
            let constraints = case_dir.join(format!("pins-{case}.json"));
            // The product is op 1 after a device add (pinned to blocks of whole rows), else op 0.
            let pinned = if *model == device {
                format!(
                    r#"{{"op": 0, "kind": "pointwise_add", "params": {{"grid": [1, 8, 1]}}}}, {{"op": 1, "kind": "{kind}", "params": {{"grid": {grid:?}}}}}"#
                )
            } else {
                format!(r#"{{"op": 0, "kind": "{kind}", "params": {{"grid": {grid:?}}}}}"#)
            };
            std::fs::write(&constraints, format!(r#"{{"ops": [{pinned}]}}"#)).unwrap();
            let result = run_pinned(
                &case_dir,
                &["pad.mlir", "--tiles", "16"],
                (&constraints, &inputs),
                &format!("model {model_index} case {case}"),
            );
            let check = check_exact(&expected, &result).unwrap();
            assert!(
                check.pass(),
                "model {model_index} case {case} ({kind} {grid:?}): {check}"
            );
        }
    }
}

/// An `ipu.scan` over per-layer weights: three layers, each `x W_i + b_i` with W_i a
/// permutation (one-hot) and b_i small integers, on integer inputs, so every element of the
/// result is exact in f16 and compared bit for bit: a layer reading another layer's slice
/// (or a slice in the wrong order) gives a different result. As inputs the stacks are
/// streamed one slice per iteration (`ipu inspect --bindings` shows them in 3 slices); as
/// parameters they are resident, each iteration reading its slice by the loop's counter.
#[test]
fn scan_reads_each_layers_weights_exactly() {
    let dir = scratch("scan-exact");
    let streamed = r#"func.func private @layer(%x: tensor<16x32xf16>, %w: tensor<32x32xf16>, %b: tensor<32xf16>) -> tensor<16x32xf16> {
  %h = "ipu.matmul"(%x, %w) : (tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<16x32xf16>
  %y = "ipu.add"(%h, %b) : (tensor<16x32xf16>, tensor<32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
func.func @layers(%x: tensor<16x32xf16>, %ws: tensor<3x32x32xf16>, %bs: tensor<3x32xf16>) -> tensor<16x32xf16> {
  %sw = "ipu.stack"(%ws) : (tensor<3x32x32xf16>) -> !ipu.stacked
  %sb = "ipu.stack"(%bs) : (tensor<3x32xf16>) -> !ipu.stacked
  %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 3 : i64} : (tensor<16x32xf16>, !ipu.stacked, !ipu.stacked) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
"#;
    std::fs::write(dir.join("layers.mlir"), streamed).unwrap();
    let resident = streamed.replace(
        "%ws: tensor<3x32x32xf16>, %bs: tensor<3x32xf16>",
        "%ws: tensor<3x32x32xf16> {ipu.parameter}, %bs: tensor<3x32xf16> {ipu.parameter}",
    );
    assert_ne!(resident, streamed);
    std::fs::write(dir.join("resident.mlir"), resident).unwrap();
    let (rows, cols, layers) = (16, 32, 3);
    // Layer i: column n of x W_i is column source(i, n) of x.
    let source = |i: usize, n: usize| (n * (2 * i + 3) + i + 1) % cols;
    let mut x = Array::zeros(&[rows, cols]);
    for (e, v) in x.data.iter_mut().enumerate() {
        *v = e as f64;
    }
    let mut ws = Array::zeros(&[layers, cols, cols]);
    let mut bs = Array::zeros(&[layers, cols]);
    for i in 0..layers {
        for n in 0..cols {
            ws.data[(i * cols + source(i, n)) * cols + n] = 1.0;
            bs.data[i * cols + n] = (100 * (i + 1) + n % 7) as f64;
        }
    }
    let mut expected = x.clone();
    for i in 0..layers {
        let before = expected.clone();
        for r in 0..rows {
            for n in 0..cols {
                expected.data[r * cols + n] =
                    before.data[r * cols + source(i, n)] + bs.data[i * cols + n];
            }
        }
    }
    let inputs = dir.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    for (name, array) in [("arg0", &x), ("arg1", &ws), ("arg2", &bs)] {
        tensor(array)
            .write(&inputs.join(format!("{name}.npy")), NpyDtype::F32)
            .unwrap();
    }
    for (model, tiles) in [
        ("layers.mlir", "4"),
        ("layers.mlir", "16"),
        ("resident.mlir", "4"),
        ("resident.mlir", "16"),
    ] {
        let outputs = format!("outputs-{model}-{tiles}");
        let output = ipu_run(
            &dir,
            &[
                model,
                "--tiles",
                tiles,
                "--inputs",
                inputs.to_str().unwrap(),
                "--outputs",
                &outputs,
                "--artifacts",
                "artifacts",
            ],
        );
        assert_exit(&output, 0, &format!("{model} on {tiles} tiles"));
        assert!(
            text(&output.stdout).contains("numericalTest=PASS"),
            "{}",
            text(&output.stdout)
        );
        let check = check_exact(&expected, &result0(&dir.join(&outputs))).unwrap();
        assert!(check.pass(), "{model}, {tiles} tiles: {check}");
    }
    let inspect = Command::new(IPU)
        .args([
            "inspect",
            "--bindings",
            "artifacts/layers/model-final.ipuexe",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let listing = text(&inspect.stdout);
    assert!(
        listing.contains("input arg1: F16 [3, 32, 32]") && listing.contains("in 3 slices"),
        "{listing}"
    );
    let inspect = Command::new(IPU)
        .args([
            "inspect",
            "--bindings",
            "artifacts/resident/model-final.ipuexe",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    let listing = text(&inspect.stdout);
    assert!(
        listing.contains("parameter arg1: F16 [3, 32, 32]")
            && listing.contains("a resident stack of 3 slices (one per iteration)"),
        "{listing}"
    );
}

/// A stack that is a parameter (written once, at initialization) stays resident: the scan
/// runs and matches the reference, also when another op reads the stack whole; a stack that
/// is an input cannot be both streamed per iteration and read whole by another op (one
/// stream in two layouts): the compile says which operand and why.
#[test]
fn scan_parameter_stacks_are_resident_and_input_stacks_are_streamed() {
    let dir = scratch("scan-parameter");
    let layer = r#"func.func private @layer(%x: tensor<8x16xf16>, %b: tensor<16xf16>) -> tensor<8x16xf16> {
  %y = "ipu.add"(%x, %b) : (tensor<8x16xf16>, tensor<16xf16>) -> tensor<8x16xf16>
  return %y : tensor<8x16xf16>
}
"#;
    let model = |marker: &str| {
        format!(
            r#"{layer}func.func @both(%x: tensor<8x16xf16>, %bs: tensor<8x16xf16>{marker}) -> tensor<8x16xf16> {{
  %sb = "ipu.stack"(%bs) : (tensor<8x16xf16>) -> !ipu.stacked
  %y = "ipu.scan"(%x, %sb) {{body = @layer, count = 8 : i64}} : (tensor<8x16xf16>, !ipu.stacked) -> tensor<8x16xf16>
  %z = "ipu.add"(%y, %bs) : (tensor<8x16xf16>, tensor<8x16xf16>) -> tensor<8x16xf16>
  return %z : tensor<8x16xf16>
}}
"#
        )
    };
    std::fs::write(dir.join("resident.mlir"), model(" {ipu.parameter}")).unwrap();
    for tiles in ["1", "4"] {
        let output = ipu_run(&dir, &["resident.mlir", "--tiles", tiles]);
        assert_exit(&output, 0, "a parameter stack");
        let stdout = text(&output.stdout);
        assert!(
            stdout.contains("numericalTest=PASS"),
            "{tiles} tiles: {stdout}"
        );
    }
    std::fs::write(dir.join("both.mlir"), model("")).unwrap();
    let output = ipu_run(&dir, &["both.mlir", "--tiles", "4"]);
    assert_exit(&output, 1, "an input stack read whole too");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("arg1 is streamed whole and one slice per iteration of a scan"),
        "{stderr}"
    );
}
