//! The host reference evaluator and the numerical test: every op against hand-computed
//! values, broadcasting, transposes, repeat, FP8 round trips, a seeded matmul against a naive
//! loop, the tolerance rules at their edges, and one-hot exact checks.

use std::collections::BTreeMap;

use melior::ir::Module;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use ipu_device::numerics::{decode, encode, Fp8Format, Rounding};
use ipu_dialects::graph::{Graph, OpKind, Origin};
use ipu_dialects::ElementType;
use ipu_runtime::reference::{
    check_exact, compare, compare_all, distinct_values, one_hot, Array, Grid, Program,
    ReferenceError, Tolerance,
};

fn program(source: &str) -> Program {
    let context = ipu_dialects::create_context(false).expect("context");
    let module = Module::parse(&context, source).expect("module parses");
    Program::from_module(&module).expect("reference reads the module")
}

fn read_error(source: &str) -> ReferenceError {
    let context = ipu_dialects::create_context(false).expect("context");
    let module = Module::parse(&context, source).expect("module parses");
    Program::from_module(&module).expect_err("reference rejects the module")
}

fn array(shape: &[usize], data: &[f64]) -> Array {
    Array::new(shape.to_vec(), data.to_vec()).expect("shape fits data")
}

fn run(source: &str, function: &str, arguments: &[Array]) -> Vec<Array> {
    program(source)
        .evaluate(function, arguments)
        .expect("evaluates")
}

fn assert_close(found: &[f64], expected: &[f64], tolerance: f64) {
    assert_eq!(found.len(), expected.len(), "{found:?} vs {expected:?}");
    for (index, (a, b)) in found.iter().zip(expected).enumerate() {
        assert!(
            (a - b).abs() <= tolerance,
            "element {index}: {a} vs {b} (all: {found:?})"
        );
    }
}

#[test]
fn matmul_matches_hand_computed_values() {
    let source = r#"
      func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
        %0 = "ipu.matmul"(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
        return %0 : tensor<2x2xf32>
      }"#;
    let a = array(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let b = array(&[3, 2], &[7.0, 8.0, 9.0, 10.0, 11.0, 12.0]);
    let out = run(source, "f", &[a, b]);
    assert_eq!(out[0].shape, vec![2, 2]);
    assert_eq!(out[0].data, vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn matmul_transpose_flags_transpose_the_last_two_axes() {
    let source = r#"
      func.func @t(%a: tensor<3x2xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
        %0 = "ipu.matmul"(%a, %b) {transpose_lhs, transpose_rhs = true} : (tensor<3x2xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
        return %0 : tensor<2x2xf32>
      }
      func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x2xf32> {
        %0 = "ipu.matmul"(%a, %b) {transpose_lhs = false, transpose_rhs} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
        return %0 : tensor<2x2xf32>
      }"#;
    let program = program(source);
    // a^T with a = [[1, 4], [2, 5], [3, 6]] is [[1, 2, 3], [4, 5, 6]]; b^T is [[7, 8], [9, 10], [11, 12]].
    let a = array(&[3, 2], &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let b = array(&[2, 3], &[7.0, 9.0, 11.0, 8.0, 10.0, 12.0]);
    let out = program.evaluate("t", &[a, b.clone()]).expect("evaluates");
    assert_eq!(out[0].data, vec![58.0, 64.0, 139.0, 154.0]);
    let a = array(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = program.evaluate("f", &[a, b]).expect("evaluates");
    assert_eq!(out[0].data, vec![58.0, 64.0, 139.0, 154.0]);
}

#[test]
fn matmul_broadcasts_batch_axes() {
    let source = r#"
      func.func @f(%a: tensor<2x1x1x2xf32>, %b: tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32> {
        %0 = "ipu.matmul"(%a, %b) : (tensor<2x1x1x2xf32>, tensor<3x2x1xf32>) -> tensor<2x3x1x1xf32>
        return %0 : tensor<2x3x1x1xf32>
      }"#;
    let a = array(&[2, 1, 1, 2], &[1.0, 0.0, 0.0, 1.0]);
    let b = array(&[3, 2, 1], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(source, "f", &[a, b]);
    assert_eq!(out[0].shape, vec![2, 3, 1, 1]);
    // Batch 0 picks the first row of each b, batch 1 the second.
    assert_eq!(out[0].data, vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
}

#[test]
fn add_broadcasts_like_numpy() {
    let source = r#"
      func.func @f(%x: tensor<2x3xf32>, %bias: tensor<3xf32>, %col: tensor<2x1xf32>, %row: tensor<1x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
        %0 = "ipu.add"(%x, %bias) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
        %1 = "ipu.add"(%col, %row) : (tensor<2x1xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
        return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
      }"#;
    let x = array(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let bias = array(&[3], &[10.0, 20.0, 30.0]);
    let col = array(&[2, 1], &[100.0, 200.0]);
    let row = array(&[1, 3], &[1.0, 2.0, 3.0]);
    let out = run(source, "f", &[x, bias, col, row]);
    assert_eq!(out[0].data, vec![11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    assert_eq!(out[1].data, vec![101.0, 102.0, 103.0, 201.0, 202.0, 203.0]);
}

#[test]
fn gelu_erf_and_tanh_forms() {
    let source = r#"
      func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
        %0 = "ipu.gelu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
        %1 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
        return %0, %1 : tensor<4xf32>, tensor<4xf32>
      }"#;
    let x = array(&[4], &[-1.0, 0.0, 1.0, 3.0]);
    let out = run(source, "f", &[x]);
    // 0.5 x (1 + erf(x / sqrt 2)); erf(1/sqrt 2) = 0.682689492137086, erf(3/sqrt 2) = 0.997300203936740.
    assert_close(
        &out[0].data,
        &[-0.158655253931457, 0.0, 0.841344746068543, 2.99595030590511],
        1e-6,
    );
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    assert_close(
        &out[1].data,
        &[
            -0.158808009391723,
            0.0,
            0.841191990608277,
            2.996362607918227,
        ],
        1e-6,
    );
}

/// A reshape keeps the row-major elements and gives them the result's shape; with a
/// permutation of the leading axes between two reshapes it splits and merges heads.
#[test]
fn reshape_keeps_row_major_elements() {
    let source = r#"
func.func @heads(%x: tensor<2x6xf32>) -> (tensor<2x3x2xf32>, tensor<3x4xf32>) {
  %h = "ipu.reshape"(%x) : (tensor<2x6xf32>) -> tensor<2x3x2xf32>
  %t = "ipu.rearrange"(%h) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x2xf32>) -> tensor<3x2x2xf32>
  %m = "ipu.reshape"(%t) : (tensor<3x2x2xf32>) -> tensor<3x4xf32>
  return %h, %m : tensor<2x3x2xf32>, tensor<3x4xf32>
}
"#;
    let x: Vec<f64> = (0..12).map(f64::from).collect();
    let results = run(source, "heads", &[array(&[2, 6], &x)]);
    assert_eq!(results[0].shape, [2, 3, 2]);
    assert_eq!(results[0].data, x);
    // Head h of token s is elements [6 s + 2 h, 6 s + 2 h + 2).
    assert_eq!(results[1].shape, [3, 4]);
    assert_eq!(
        results[1].data,
        [0.0, 1.0, 6.0, 7.0, 2.0, 3.0, 8.0, 9.0, 4.0, 5.0, 10.0, 11.0]
    );
}

#[test]
fn softmax_normalises_the_last_axis() {
    let source = r#"
      func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
        %0 = "ipu.softmax"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
        return %0 : tensor<2x3xf32>
      }"#;
    let x = array(&[2, 3], &[1.0, 2.0, 3.0, 5.0, 5.0, 5.0]);
    let out = run(source, "f", &[x]);
    let third = 1.0 / 3.0;
    assert_close(
        &out[0].data,
        &[
            0.0900305732,
            0.2447284711,
            0.6652409558,
            third,
            third,
            third,
        ],
        1e-7,
    );
}

#[test]
fn layer_norm_normalises_then_scales_and_shifts() {
    let source = r#"
      func.func @f(%x: tensor<1x4xf32>, %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
        %0 = "ipu.layer_norm"(%x, %g, %b) {epsilon = 1.0e-06 : f32} : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
        return %0 : tensor<1x4xf32>
      }"#;
    let x = array(&[1, 4], &[1.0, 2.0, 3.0, 4.0]);
    let gamma = array(&[4], &[2.0, 2.0, 1.0, 1.0]);
    let beta = array(&[4], &[1.0, 0.0, 0.0, -1.0]);
    let out = run(source, "f", &[x, gamma, beta]);
    // mean 2.5, variance 1.25: normalised [-3, -1, 1, 3] / sqrt(5).
    let n = 1.0 / (1.25f64 + 1e-6).sqrt();
    assert_close(
        &out[0].data,
        &[-1.5 * n * 2.0 + 1.0, -0.5 * n * 2.0, 0.5 * n, 1.5 * n - 1.0],
        1e-6,
    );
}

#[test]
fn attention_default_scale_and_causal_mask() {
    let source = r#"
      func.func @f(%q: tensor<2x2xf32>, %k: tensor<2x2xf32>, %v: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
        %0 = "ipu.attention"(%q, %k, %v) : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
        %1 = "ipu.attention"(%q, %k, %v) {causal} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
        %2 = "ipu.attention"(%q, %k, %v) {scale = 0.0 : f32} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
        return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
      }"#;
    let q = array(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
    let k = array(&[2, 2], &[1.0, 0.0, 0.0, 1.0]);
    let v = array(&[2, 2], &[1.0, 2.0, 3.0, 4.0]);
    let out = run(source, "f", &[q, k, v]);
    // Query 0 scores [1/sqrt 2, 0] (default scale 1/sqrt(D), D = 2).
    let e = (1.0f64 / 2f64.sqrt()).exp();
    let (p, r) = (e / (e + 1.0), 1.0 / (e + 1.0));
    assert_close(
        &out[0].data,
        &[
            p + 3.0 * r,
            2.0 * p + 4.0 * r,
            r + 3.0 * p,
            2.0 * r + 4.0 * p,
        ],
        1e-6,
    );
    // Causal: query 0 sees key 0 only; query 1 sees both.
    assert_close(
        &out[1].data,
        &[1.0, 2.0, r + 3.0 * p, 2.0 * r + 4.0 * p],
        1e-6,
    );
    // Scale 0: uniform weights.
    assert_close(&out[2].data, &[2.0, 3.0, 2.0, 3.0], 1e-6);
}

#[test]
fn fp8_casts_round_with_their_scale_and_round_trip() {
    let source = r#"
      func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
        %0 = "ipu.cast"(%x) {scale = -2 : i32} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
        %1 = "ipu.cast"(%0) {scale = -2 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf32>
        %2 = "ipu.cast"(%x) : (tensor<4xf32>) -> tensor<4xf8E5M2FNUZ>
        %3 = "ipu.cast"(%2) : (tensor<4xf8E5M2FNUZ>) -> tensor<4xf32>
        return %1, %3 : tensor<4xf32>, tensor<4xf32>
      }"#;
    let x = array(&[4], &[0.3, 1000.0, -0.01, 0.0]);
    let out = run(source, "f", &[x]);
    // F143 at scale -2 holds q / 4: 0.3 -> 1.25 / 4; 1000 saturates at 240 / 4; -0.04 -> -10 * 2^-8.
    assert_eq!(out[0].data, vec![0.3125, 60.0, -0.009765625, 0.0]);
    // F152 at scale 0: 0.3 -> 0.3125 (1.25 * 2^-2), 1000 -> 1024, -0.01 -> -5 * 2^-9.
    assert_eq!(out[1].data, vec![0.3125, 1024.0, -0.009765625, 0.0]);
}

#[test]
fn fp8_grid_agrees_with_device_numerics_on_every_code() {
    for format in Fp8Format::ALL {
        let element = match format {
            Fp8Format::F143 => ElementType::F8E4M3,
            Fp8Format::F152 => ElementType::F8E5M2,
        };
        for scale in [-31, -3, 0, 5, 31] {
            let grid = Grid::of(element, scale);
            for code in (0u8..=255).filter(|&code| code != Fp8Format::NAN && code & 0x7f != 0x7f) {
                let value = f64::from(decode(code, format, scale).expect("decodes"));
                assert_eq!(
                    grid.round(value),
                    value,
                    "{format:?} code {code:#x} scale {scale} is on the grid"
                );
                // Half-way to the next code rounds like the device encoder.
                let next = f64::from(
                    decode(code.wrapping_add(1) & 0x7f | (code & 0x80), format, scale)
                        .expect("decodes"),
                );
                let middle = (value + next) / 2.0;
                let device = encode(
                    middle as f32,
                    format,
                    scale,
                    Rounding::NearestEvenSaturating,
                )
                .expect("encodes");
                let device = f64::from(decode(device, format, scale).expect("decodes"));
                assert_eq!(
                    grid.round(middle),
                    device,
                    "{format:?} midpoint after {code:#x} scale {scale}"
                );
            }
        }
    }
}

#[test]
fn fp8_cast_from_a_differently_scaled_input_reinterprets_codes() {
    // The second cast reads the codes at scale 1, not the -2 they were written with: the
    // device's cast kernel does the same, so the reference does too (x 2^3).
    let source = r#"
      func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "ipu.cast"(%x) {scale = -2 : i32} : (tensor<2xf32>) -> tensor<2xf8E4M3FNUZ>
        %1 = "ipu.cast"(%0) {scale = 1 : i32} : (tensor<2xf8E4M3FNUZ>) -> tensor<2xf32>
        return %1 : tensor<2xf32>
      }"#;
    let out = run(source, "f", &[array(&[2], &[0.5, -1.0])]);
    assert_eq!(out[0].data, vec![4.0, -8.0]);
}

#[test]
fn results_round_to_their_result_type() {
    let source = r#"
      func.func @f(%a: tensor<2xf16>, %b: tensor<2xf16>) -> (tensor<2xf16>, tensor<2xf32>) {
        %0 = "ipu.add"(%a, %b) : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
        %1 = "ipu.add"(%a, %b) : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf32>
        return %0, %1 : tensor<2xf16>, tensor<2xf32>
      }"#;
    let tie = 2f64.powi(-11);
    let a = array(&[2], &[1.0, 1.0]);
    let b = array(&[2], &[tie, 3.0 * tie]);
    let out = run(source, "f", &[a, b]);
    // 1 + 2^-11 is a tie in f16 and rounds to even (1.0); 1 + 3 * 2^-11 rounds up to 1 + 2^-9.
    assert_eq!(out[0].data, vec![1.0, 1.0 + 2f64.powi(-9)]);
    assert_eq!(out[1].data, vec![1.0 + tie, 1.0 + 3.0 * tie]);
    // Arguments are rounded to their declared f16 on entry.
    let out = run(
        source,
        "f",
        &[array(&[2], &[0.1, 0.0]), array(&[2], &[0.0, 0.0])],
    );
    assert_eq!(out[1].data[0], half::f16::from_f64(0.1).to_f64());
}

#[test]
fn rearrange_permutes_axes_and_keeps_values_across_formats() {
    let source = r#"
      func.func @f(%x: tensor<2x3xf16>, %y: tensor<2x1x3xf16>) -> (tensor<3x2xf16>, tensor<3x2x1xf16>, tensor<2x3xf16, #ipu.format<"amp_left", [2, 3], [1, 1], [0, 0], "interleaved", 0>>) {
        %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<2x3xf16>) -> tensor<3x2xf16>
        %1 = "ipu.rearrange"(%y) {permutation = array<i64: 2, 0, 1>} : (tensor<2x1x3xf16>) -> tensor<3x2x1xf16>
        %2 = "ipu.rearrange"(%x) : (tensor<2x3xf16>) -> tensor<2x3xf16, #ipu.format<"amp_left", [2, 3], [1, 1], [0, 0], "interleaved", 0>>
        return %0, %1, %2 : tensor<3x2xf16>, tensor<3x2x1xf16>, tensor<2x3xf16, #ipu.format<"amp_left", [2, 3], [1, 1], [0, 0], "interleaved", 0>>
      }"#;
    let x = array(&[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let y = array(&[2, 1, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run(source, "f", &[x.clone(), y]);
    assert_eq!(out[0].data, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(out[1].shape, vec![3, 2, 1]);
    assert_eq!(out[1].data, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_eq!(out[2], x);
}

#[test]
fn fp8_format_scale_sets_the_grid() {
    // A planned FP8 value: the scale in its #ipu.format decides the grid of the result.
    let source = r#"
      func.func @f(%x: tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>>) -> tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>> {
        %0 = "ipu.add"(%x, %x) : (tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>>, tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>>) -> tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>>
        return %0 : tensor<2xf8E4M3FNUZ, #ipu.format<"row_major", [0], [1], [0], "standard", -4>>
      }"#;
    let program = program(source);
    assert_eq!(program.functions["f"].values[0].scale, -4);
    // 100 saturates at 240 / 16 = 15 on entry; 0.1 * 16 = 1.6 -> 1.625 -> 0.1015625, doubled.
    let out = program
        .evaluate("f", &[array(&[2], &[0.1, 100.0])])
        .expect("evaluates");
    assert_eq!(out[0].data, vec![0.203125, 15.0]);
}

#[test]
fn repeat_calls_its_body_count_times() {
    let source = r#"
      func.func private @step(%x: tensor<2xf32>) -> tensor<2xf32> {
        %one = arith.constant dense<1.0> : tensor<2xf32>
        %0 = "ipu.add"(%x, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        return %0 : tensor<2xf32>
      }
      func.func private @swap(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
        return %y, %x : tensor<2xf32>, tensor<2xf32>
      }
      func.func @f(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
        %0 = "ipu.repeat"(%x) {body = @step, count = 27 : i64} : (tensor<2xf32>) -> tensor<2xf32>
        %1:2 = "ipu.repeat"(%x, %y) {body = @swap, count = 3 : i64} : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
        %2 = "ipu.repeat"(%x) {body = @step, count = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
        return %0, %1#0, %1#1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
      }"#;
    assert_eq!(program(source).entry(), Some("f"));
    let x = array(&[2], &[0.5, -3.0]);
    let y = array(&[2], &[7.0, 8.0]);
    let out = run(source, "f", &[x.clone(), y.clone()]);
    assert_eq!(out[0].data, vec![27.5, 24.0]);
    assert_eq!((&out[1], &out[2]), (&y, &x));
    assert_eq!(out[3], x);
}

#[test]
fn constants_and_calls() {
    let source = r#"
      func.func private @bias(%x: tensor<2x2xf16>) -> tensor<2x2xf16> {
        %b = arith.constant dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf16>
        %0 = "ipu.add"(%x, %b) : (tensor<2x2xf16>, tensor<2x2xf16>) -> tensor<2x2xf16>
        return %0 : tensor<2x2xf16>
      }
      func.func @f(%x: tensor<2x2xf16>) -> tensor<2x2xf16> {
        %0 = func.call @bias(%x) : (tensor<2x2xf16>) -> tensor<2x2xf16>
        return %0 : tensor<2x2xf16>
      }"#;
    let out = run(source, "f", &[array(&[2, 2], &[10.0, 20.0, 30.0, 40.0])]);
    assert_eq!(out[0].data, vec![11.0, 22.0, 33.0, 44.5]);
}

#[test]
fn large_constants_printed_as_hex_read_back() {
    // MLIR prints constants of more than a few elements as a hex blob.
    let values: Vec<String> = (0..200).map(|i| format!("{}.0", i)).collect();
    let source = format!(
        r#"func.func @f() -> tensor<200xf16> {{
             %c = arith.constant dense<[{}]> : tensor<200xf16>
             return %c : tensor<200xf16>
           }}"#,
        values.join(", ")
    );
    let context = ipu_dialects::create_context(false).expect("context");
    let module = Module::parse(&context, &source).expect("parses");
    let printed = module.as_operation().to_string();
    assert!(printed.contains("dense<\"0x"), "{printed}");
    let module = Module::parse(&context, &printed).expect("reparses");
    let program = Program::from_module(&module).expect("reads");
    let out = program.evaluate("f", &[]).expect("evaluates");
    assert_eq!(out[0].data, (0..200).map(f64::from).collect::<Vec<_>>());
}

#[test]
fn named_arguments_and_argument_errors() {
    let source = r#"
      func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
        %0 = "ipu.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
        return %0 : tensor<2xf32>
      }"#;
    let program = program(source);
    let mut arguments = BTreeMap::new();
    arguments.insert("arg0".to_string(), array(&[2], &[1.0, 2.0]));
    arguments.insert("%arg1".to_string(), array(&[2], &[3.0, 4.0]));
    assert_eq!(
        program.evaluate_named("f", &arguments).expect("evaluates")[0].data,
        vec![4.0, 6.0]
    );
    arguments.remove("%arg1");
    let error = program
        .evaluate_named("f", &arguments)
        .expect_err("missing argument");
    assert!(
        error
            .to_string()
            .contains("arg1 (tensor<2xf32>) is missing"),
        "{error}"
    );
    let error = program
        .evaluate(
            "f",
            &[array(&[3], &[1.0, 2.0, 3.0]), array(&[2], &[0.0, 0.0])],
        )
        .expect_err("bad shape");
    assert!(
        error
            .to_string()
            .contains("argument arg0 has shape [3], declared tensor<2xf32>"),
        "{error}"
    );
    let error = program.evaluate("g", &[]).expect_err("unknown function");
    assert!(error.to_string().contains("no function @g"), "{error}");
}

#[test]
fn unsupported_ops_are_named_with_their_location() {
    let error = read_error(
        r#"
      func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
        %0 = arith.addf %a, %a : tensor<2xf32>
        return %0 : tensor<2xf32>
      }"#,
    );
    let text = error.to_string();
    assert!(text.starts_with("arith.addf at loc("), "{text}");
    assert!(text.contains(":3:"), "{text}");
    assert!(text.contains("no semantics"), "{text}");
}

#[test]
fn recursion_is_an_error_not_a_stack_overflow() {
    // Calls are inlined as the module is read: a recursive call is refused there, at the call.
    let source = r#"
      func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
        %0 = func.call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
        return %0 : tensor<2xf32>
      }"#;
    let error = read_error(source);
    assert!(
        matches!(error, ReferenceError::Unsupported { .. }),
        "{error}"
    );
    let text = error.to_string();
    assert!(text.starts_with("func.call at loc("), "{text}");
    assert!(text.contains(":3:"), "{text}");
    assert!(text.contains("@f is recursive: @f -> @f"), "{text}");
}

/// The naive triple loop, k ascending, rounded to f32.
fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(m * n);
    for row in 0..m {
        for column in 0..n {
            let mut sum = 0.0;
            for depth in 0..k {
                sum += a[row * k + depth] * b[depth * n + column];
            }
            out.push(sum as f32 as f64);
        }
    }
    out
}

#[test]
fn seeded_random_matmuls_match_a_naive_loop() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1f0);
    for case in 0..20 {
        let (m, k, n) = (
            rng.random_range(1..24),
            rng.random_range(1..40),
            rng.random_range(1..24),
        );
        let transpose_rhs = case % 2 == 1;
        let a: Vec<f64> = (0..m * k)
            .map(|_| f64::from(rng.random_range(-2.0f32..2.0)))
            .collect();
        let b: Vec<f64> = (0..k * n)
            .map(|_| f64::from(rng.random_range(-2.0f32..2.0)))
            .collect();
        let rhs_shape = if transpose_rhs { [n, k] } else { [k, n] };
        let rhs_data = if transpose_rhs {
            (0..n * k)
                .map(|index| b[(index % k) * n + index / k])
                .collect()
        } else {
            b.clone()
        };
        let mut graph = Graph::default();
        let to_u64 = |shape: &[usize]| shape.iter().map(|&size| size as u64).collect::<Vec<_>>();
        let lhs = graph.add_value(to_u64(&[m, k]), ElementType::F32, Origin::Argument);
        let rhs = graph.add_value(to_u64(&rhs_shape), ElementType::F32, Origin::Argument);
        let result = graph.add_op(
            OpKind::Matmul {
                transpose_lhs: false,
                transpose_rhs,
            },
            vec![lhs, rhs],
            to_u64(&[m, n]),
            ElementType::F32,
        );
        graph.outputs = vec![result];
        let mut program = Program::new();
        program.insert("mm", graph);
        let out = program
            .evaluate("mm", &[array(&[m, k], &a), array(&rhs_shape, &rhs_data)])
            .expect("evaluates");
        assert_eq!(
            out[0].data,
            naive_matmul(&a, &b, m, k, n),
            "case {case}: {m}x{k}x{n}"
        );
    }
}

#[test]
fn tolerance_rules_hold_at_their_edges() {
    let reference = array(&[2], &[1.0, -0.5]);
    let device = |values: &[f64]| array(&[2], values);

    // MLP smoke: max abs error 0.02.
    let inside =
        compare(&reference, &device(&[1.0199, -0.5]), &Tolerance::MLP_SMOKE).expect("compares");
    assert!(inside.pass, "{inside:?}");
    let outside =
        compare(&reference, &device(&[1.0, -0.5201]), &Tolerance::MLP_SMOKE).expect("compares");
    assert!(!outside.pass);
    assert_eq!(outside.worst_index, vec![1]);
    assert_eq!(
        outside.summary(),
        "referenceMaximumAbsoluteError=0.020100 numericalTest=FAIL"
    );

    // Checkpoints: |x - ref| <= 0.03 + 0.03 |ref|, 0.06 at 1.0 and 0.045 at -0.5.
    let inside = compare(
        &reference,
        &device(&[1.0599, -0.4551]),
        &Tolerance::CHECKPOINT,
    )
    .expect("compares");
    assert!(inside.pass, "{inside:?}");
    let outside = compare(
        &reference,
        &device(&[1.0599, -0.4549]),
        &Tolerance::CHECKPOINT,
    )
    .expect("compares");
    assert!(!outside.pass);
    assert_eq!(
        (outside.failures, outside.worst_index.clone()),
        (1, vec![1])
    );
    // A reference that overflowed (or is NaN) must be reproduced exactly: a relative rule
    // allows nothing there, not everything (a saturated device value against an infinite
    // reference fails; the same infinity passes).
    let overflowed = array(&[2], &[f64::INFINITY, 1.0]);
    let saturated = compare(
        &overflowed,
        &array(&[2], &[65504.0, 1.0]),
        &Tolerance::CHECKPOINT,
    )
    .expect("compares");
    assert!(!saturated.pass, "{saturated:?}");
    assert_eq!(saturated.worst_index, vec![0]);
    let same = compare(&overflowed, &overflowed, &Tolerance::CHECKPOINT).expect("compares");
    assert!(same.pass, "{same:?}");
    // An error allowed at 1.0 is not allowed at 0: the rule is per element.
    let near_zero = compare(
        &array(&[1], &[0.0]),
        &array(&[1], &[0.05]),
        &Tolerance::CHECKPOINT,
    )
    .expect("compares");
    assert!(!near_zero.pass);

    // FP8 GEMM, K = 64, f16 output, max |ref| = 2: abs = 2 * 8 * 2^-11 * 2 + 2^-24, rel = 2^-10.
    let reference = array(&[2], &[2.0, 0.0]);
    let rule = Tolerance::fp8_gemm(64, ElementType::F16, 0, &reference);
    let Tolerance::Elementwise { abs, rel } = rule else {
        panic!("{rule:?}")
    };
    assert_eq!(rel, 2f64.powi(-10));
    assert!((abs - (0.015625 + 2f64.powi(-24))).abs() < 1e-15, "{abs}");
    let allowed = abs + rel * 2.0;
    assert!(
        compare(
            &reference,
            &array(&[2], &[2.0 + allowed * 0.999, 0.0]),
            &rule
        )
        .expect("compares")
        .pass
    );
    assert!(
        !compare(
            &reference,
            &array(&[2], &[2.0 + allowed * 1.001, 0.0]),
            &rule
        )
        .expect("compares")
        .pass
    );
    // F143 output: one ulp (2^-3 relative) is allowed.
    let rule = Tolerance::fp8_gemm(64, ElementType::F8E4M3, 0, &reference);
    assert!(
        compare(&reference, &array(&[2], &[2.25, 0.0]), &rule)
            .expect("compares")
            .pass
    );

    // NaN never passes; shapes must match.
    let nan = compare(
        &reference,
        &array(&[2], &[f64::NAN, 0.0]),
        &Tolerance::MLP_SMOKE,
    )
    .expect("compares");
    assert!(!nan.pass);
    assert!(compare(&reference, &array(&[1], &[2.0]), &Tolerance::MLP_SMOKE).is_err());
}

#[test]
fn summary_line_matches_the_seed_format() {
    let reference = array(&[3], &[0.0, 1.0, 2.0]);
    let device = array(&[3], &[0.0, 1.019749, 2.0]);
    let comparison = compare(&reference, &device, &Tolerance::MLP_SMOKE).expect("compares");
    assert_eq!(
        comparison.to_string(),
        "referenceMaximumAbsoluteError=0.019749 numericalTest=PASS"
    );
    let all = compare_all(
        &[reference.clone(), reference.clone()],
        &[reference, device],
        &Tolerance::MLP_SMOKE,
    )
    .expect("compares");
    assert_eq!(
        (all.worst_output, all.worst_index.clone(), all.elements),
        (1, vec![1], 6)
    );
    assert!(all.pass);
}

#[test]
fn one_hot_matmul_gives_the_exact_column_and_misplacements_point_home() {
    let source = r#"
      func.func @f(%a: tensor<4x8xf16>, %b: tensor<8x5xf16>) -> tensor<4x5xf16> {
        %0 = "ipu.matmul"(%a, %b) : (tensor<4x8xf16>, tensor<8x5xf16>) -> tensor<4x5xf16>
        return %0 : tensor<4x5xf16>
      }"#;
    let a = distinct_values(&[4, 8], ElementType::F16);
    let b = one_hot(&[8, 5], &[3, 2]).expect("index in range");
    let out = run(source, "f", &[a.clone(), b]);
    // Column 2 of the result is column 3 of a, exactly; every other column is zero.
    let mut expected = Array::zeros(&[4, 5]);
    for row in 0..4 {
        let offset = expected.offset(&[row, 2]).expect("in range");
        expected.data[offset] = a.get(&[row, 3]).expect("in range");
    }
    let check = check_exact(&expected, &out[0]).expect("same shape");
    assert!(check.pass(), "{check}");
    // A device result with rows 1 and 2 exchanged: the first wrong value belongs one row down.
    let mut swapped = out[0].clone();
    swapped.data.swap(5 + 2, 2 * 5 + 2);
    let check = check_exact(&expected, &swapped).expect("same shape");
    assert_eq!(check.mismatches, 2);
    let first = check.first.clone().expect("a mismatch");
    assert_eq!(
        (first.index, first.belongs_at),
        (vec![1, 2], Some(vec![2, 2]))
    );
    assert!(
        check
            .to_string()
            .starts_with("exactTest=FAIL mismatches=2 of 20"),
        "{check}"
    );
    assert!(one_hot(&[2, 2], &[2, 0]).is_err());
}

#[test]
fn distinct_values_are_exact_and_distinct_in_their_format() {
    for element in [
        ElementType::F16,
        ElementType::F8E4M3,
        ElementType::F8E5M2,
        ElementType::F32,
    ] {
        let values = distinct_values(&[127], element);
        let grid = Grid::of(element, 0);
        let mut seen: Vec<u64> = values.data.iter().map(|value| value.to_bits()).collect();
        assert!(
            values
                .data
                .iter()
                .all(|&value| value > 0.0 && grid.round(value) == value),
            "{element}"
        );
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), 127, "{element}");
    }
}

#[test]
fn a_small_siglip_style_mlp_evaluates_end_to_end() {
    // The example model's structure at a test-sized shape: matmul, bias, GeLU (tanh), matmul, bias.
    let source = r#"
      func.func @mlp(%x: tensor<2x3x4xf16>, %w1: tensor<4x8xf16>, %b1: tensor<8xf16>, %w2: tensor<8x4xf16>, %b2: tensor<4xf16>) -> tensor<2x3x4xf16> {
        %h = "ipu.matmul"(%x, %w1) : (tensor<2x3x4xf16>, tensor<4x8xf16>) -> tensor<2x3x8xf16>
        %hb = "ipu.add"(%h, %b1) : (tensor<2x3x8xf16>, tensor<8xf16>) -> tensor<2x3x8xf16>
        %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<2x3x8xf16>) -> tensor<2x3x8xf16>
        %o = "ipu.matmul"(%g, %w2) : (tensor<2x3x8xf16>, tensor<8x4xf16>) -> tensor<2x3x4xf16>
        %ob = "ipu.add"(%o, %b2) : (tensor<2x3x4xf16>, tensor<4xf16>) -> tensor<2x3x4xf16>
        return %ob : tensor<2x3x4xf16>
      }"#;
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut random = |shape: &[usize]| {
        let count = shape.iter().product();
        array(
            shape,
            &(0..count)
                .map(|_| f64::from(rng.random_range(-1.0f32..1.0)))
                .collect::<Vec<_>>(),
        )
    };
    let inputs = [
        random(&[2, 3, 4]),
        random(&[4, 8]),
        random(&[8]),
        random(&[8, 4]),
        random(&[4]),
    ];
    let out = run(source, "mlp", &inputs);
    let first = run(source, "mlp", &inputs);
    assert_eq!(out, first, "deterministic");
    assert_eq!(out[0].shape, vec![2, 3, 4]);
    // Every value is an f16 value.
    let grid = Grid::of(ElementType::F16, 0);
    assert!(out[0].data.iter().all(|&value| grid.round(value) == value));
    // Evaluating in f32 instead differs from the f16 reference by f16 rounding only.
    let f32_source = source.replace("f16", "f32");
    let wide = run(&f32_source, "mlp", &inputs);
    let comparison = compare(&out[0], &wide[0], &Tolerance::MLP_SMOKE).expect("compares");
    assert!(comparison.pass, "{comparison}");
}

/// Wall time of the reference on the full SigLIP MLP example (14.4 G multiply-adds in f64):
/// `cargo test -p ipu-runtime --test all siglip_example -- --ignored --nocapture`.
#[test]
#[ignore = "about a minute on two cores in the dev profile"]
fn siglip_example_reference_wall_time() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/siglip_mlp.mlir"
    ))
    .expect("example model");
    let program = program(&source);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let graph = &program.functions["siglip_mlp"];
    let inputs: Vec<Array> = graph
        .arguments()
        .iter()
        .map(|&id| {
            let shape: Vec<usize> = graph.values[id].shape.iter().map(|&d| d as usize).collect();
            let count = shape.iter().product();
            array(
                &shape,
                &(0..count)
                    .map(|_| f64::from(rng.random_range(-1.0f32..1.0)))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let start = std::time::Instant::now();
    let out = program.evaluate("siglip_mlp", &inputs).expect("evaluates");
    eprintln!(
        "siglip reference {:?} elapsed {:?}",
        out[0].shape,
        start.elapsed()
    );
}

/// A dead constant is never materialized, however large (a package whose
/// source held a dead 1e9-element splat made `ipu run` allocate 8 GB); a live value beyond the
/// reference's budget is refused with its size before anything is allocated.
#[test]
fn dead_values_are_not_evaluated_and_huge_live_ones_are_refused() {
    let dead = r#"
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %dead = arith.constant dense<1.0> : tensor<1000000000xf32>
  %y = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}"#;
    let results = run(dead, "f", &[array(&[4], &[0.0, 1.0, 2.0, 3.0])]);
    assert_eq!(results[0].shape, vec![4]);
    let live = r#"
func.func @f() -> tensor<1000000000xf32> {
  %big = arith.constant dense<1.0> : tensor<1000000000xf32>
  return %big : tensor<1000000000xf32>
}"#;
    let error = program(live)
        .evaluate("f", &[])
        .expect_err("over the budget");
    let message = error.to_string();
    assert!(
        message.contains("1000000000 elements, over the host reference's budget"),
        "{message}"
    );
}

#[test]
fn slice_and_concat_move_elements() {
    let source = r#"func.func @f(%x: tensor<3x4xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>, tensor<5x2xf32>) {
  %w = "ipu.slice"(%x) {offsets = array<i64: 1, 1>, strides = array<i64: 1, 2>} : (tensor<3x4xf32>) -> tensor<2x2xf32>
  %c = "ipu.concat"(%w, %w) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %t = "ipu.slice"(%x) {offsets = array<i64: 0, 0>, strides = array<i64: 2, 3>} : (tensor<3x4xf32>) -> tensor<2x2xf32>
  %r0 = "ipu.concat"(%w, %t) {axis = 0 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<4x2xf32>
  %o = "ipu.slice"(%x) {offsets = array<i64: 2, 1>, strides = array<i64: 1, 1>} : (tensor<3x4xf32>) -> tensor<1x2xf32>
  %r = "ipu.concat"(%r0, %o) {axis = 0 : i64} : (tensor<4x2xf32>, tensor<1x2xf32>) -> tensor<5x2xf32>
  return %w, %c, %r : tensor<2x2xf32>, tensor<2x4xf32>, tensor<5x2xf32>
}
"#;
    let x = array(&[3, 4], &(0..12).map(f64::from).collect::<Vec<_>>());
    let out = run(source, "f", &[x]);
    assert_eq!(out[0].data, vec![5.0, 7.0, 9.0, 11.0]);
    assert_eq!(out[1].data, vec![5.0, 7.0, 5.0, 7.0, 9.0, 11.0, 9.0, 11.0]);
    assert_eq!(out[2].shape, vec![5, 2]);
    assert_eq!(
        out[2].data,
        vec![5.0, 7.0, 9.0, 11.0, 0.0, 3.0, 8.0, 11.0, 9.0, 10.0]
    );
}
