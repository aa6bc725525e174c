//! The generated map kernel and the row-reduction kernel against the host: every input
//! broadcast kind, element indices unravelled from a block's first row and column, FP8 and f16
//! inputs, and the four combiners.

use ipu_device::kernels::spec::{MapInput, MapOperand};
use ipu_device::{KernelSpec, Precision};
use ipu_dialects::graph::scalar::{Binary, IntPredicate, ScalarOp, ScalarProgram, Unary};
use ipu_dialects::ipu::Combiner;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::kernels::run;
use crate::kernels_support::{load, random_tensor};

fn input(precision: Precision, operand: MapOperand) -> MapInput {
    MapInput {
        precision,
        scale: 0,
        operand,
    }
}

/// `x0 * x1 + x2 - exp(x3)`.
fn four_input_body() -> ScalarProgram {
    ScalarProgram {
        inputs: 4,
        indices: 0,
        ops: vec![
            ScalarOp::Input(0),
            ScalarOp::Input(1),
            ScalarOp::Binary(Binary::Mul, 0, 1),
            ScalarOp::Input(2),
            ScalarOp::Binary(Binary::Add, 2, 3),
            ScalarOp::Input(3),
            ScalarOp::Unary(Unary::Exp, 5),
            ScalarOp::Binary(Binary::Sub, 4, 6),
        ],
        result: 7,
    }
}

#[test]
fn map_reads_full_row_column_and_scalar_inputs() {
    let mut rng = ChaCha8Rng::seed_from_u64(41);
    let (rows, cols) = (5u32, 24u32);
    for precision in [Precision::F32, Precision::F16] {
        let operands = [
            MapOperand::Full,
            MapOperand::Row,
            MapOperand::Column,
            MapOperand::Scalar,
        ];
        let spec = KernelSpec::Map {
            output: precision,
            inputs: operands.iter().map(|&o| input(precision, o)).collect(),
            rows,
            cols,
            index_shape: Vec::new(),
            body: four_input_body(),
        };
        spec.validate().unwrap();
        let tensors: Vec<Vec<u8>> = operands
            .iter()
            .map(|o| random_tensor(&mut rng, precision, o.elements(rows, cols) as usize, 2.0))
            .collect();
        let mut memory = vec![0u8; 16 * 1024];
        let mut offsets = Vec::new();
        let mut at = 64;
        for t in &tensors {
            memory[at..at + t.len()].copy_from_slice(t);
            offsets.push(at as u32);
            at = (at + t.len()).div_ceil(64) * 64;
        }
        let out = at;
        let mut args = offsets.clone();
        args.extend([out as u32, 0, 0]);
        run(&spec, &mut memory, &args);
        for r in 0..rows as usize {
            for c in 0..cols as usize {
                let x = |k: usize, i: usize| f64::from(load(&tensors[k], 0, i, precision, 0));
                let inputs = [x(0, r * cols as usize + c), x(1, c), x(2, r), x(3, 0)];
                let want = four_input_body().eval(&inputs, &[]);
                let got = f64::from(load(&memory, out, r * cols as usize + c, precision, 0));
                let tolerance = if precision == Precision::F16 {
                    2e-3
                } else {
                    1e-5
                };
                assert!(
                    (got - want).abs() <= tolerance * want.abs().max(1.0),
                    "{precision:?} ({r}, {c}): got {got}, want {want}"
                );
            }
        }
    }
}

#[test]
fn map_indices_unravel_the_block_position() {
    // A causal mask on a [2, 3, 8] result: x where j <= i (axes 1, 2), else -1000.
    let body = ScalarProgram {
        inputs: 1,
        indices: 3,
        ops: vec![
            ScalarOp::Input(0),
            ScalarOp::Index(1),
            ScalarOp::Index(2),
            ScalarOp::CmpI(IntPredicate::Sle, 2, 1),
            ScalarOp::Float((-1000.0f32).to_bits()),
            ScalarOp::Index(0),
            ScalarOp::IntToFloat(5),
            ScalarOp::Binary(Binary::Add, 0, 6),
            ScalarOp::Select(3, 7, 4),
        ],
        result: 8,
    };
    let shape = [2u64, 3, 8];
    // The block of rows 2..6 (of 6 folded rows) and columns 4..8.
    let (rows, cols, row0, col0) = (4u32, 4u32, 2u32, 4u32);
    let spec = KernelSpec::Map {
        output: Precision::F32,
        inputs: vec![input(Precision::F32, MapOperand::Full)],
        rows,
        cols,
        index_shape: shape.to_vec(),
        body: body.clone(),
    };
    spec.validate().unwrap();
    let mut memory = vec![0u8; 4096];
    for i in 0..16 {
        memory[64 + 4 * i..68 + 4 * i].copy_from_slice(&(i as f32 * 0.5).to_le_bytes());
    }
    run(&spec, &mut memory, &[64, 1024, row0, col0]);
    for r in 0..rows as i64 {
        for c in 0..cols as i64 {
            let global = i64::from(row0) + r;
            let index = [global / 3, global % 3, i64::from(col0) + c];
            let x = (r * 4 + c) as f64 * 0.5;
            let want = body.eval(&[x], &index);
            let got = f64::from(load(&memory, 1024, (r * 4 + c) as usize, Precision::F32, 0));
            assert_eq!(got, want, "row {global} col {}", index[2]);
        }
    }
    // Folded row 3 is batch 1, row 0: column 4 is after it, masked.
    assert_eq!(load(&memory, 1024, 4, Precision::F32, 0), -1000.0);
}

#[test]
fn map_decodes_fp8_inputs_at_their_scale() {
    let spec = KernelSpec::Map {
        output: Precision::F32,
        inputs: vec![MapInput {
            precision: Precision::F8E4M3,
            scale: -2,
            operand: MapOperand::Full,
        }],
        rows: 1,
        cols: 4,
        index_shape: Vec::new(),
        body: ScalarProgram {
            inputs: 1,
            indices: 0,
            ops: vec![ScalarOp::Input(0)],
            result: 0,
        },
    };
    let mut memory = vec![0u8; 1024];
    let codes = [0x38, 0x40, 0xB8, 0x00];
    memory[64..68].copy_from_slice(&codes);
    run(&spec, &mut memory, &[64, 128, 0, 0]);
    for i in 0..4 {
        // value = decoded code * 2^scale.
        let want = load(&codes, 0, i, Precision::F8E4M3, 0) * 0.25;
        assert_eq!(
            load(&memory, 128, i, Precision::F32, 0),
            want,
            "code {:#x}",
            codes[i]
        );
    }
    assert_ne!(load(&memory, 128, 0, Precision::F32, 0), 0.0);
}

#[test]
fn map_specs_with_mismatched_bodies_are_refused() {
    let spec = KernelSpec::Map {
        output: Precision::F32,
        inputs: vec![input(Precision::F32, MapOperand::Full)],
        rows: 1,
        cols: 4,
        index_shape: Vec::new(),
        body: four_input_body(),
    };
    let error = spec.validate().unwrap_err().to_string();
    assert!(error.contains("1 inputs for a body of 4"), "{error}");
}

#[test]
fn reduce_rows_with_every_combiner() {
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let (rows, cols) = (3usize, 37usize);
    for precision in [Precision::F32, Precision::F16] {
        let data = random_tensor(&mut rng, precision, rows * cols, 4.0);
        for combiner in Combiner::ALL {
            let spec = KernelSpec::Reduce {
                precision,
                combiner,
                rows: rows as u32,
                cols: cols as u32,
            };
            let mut memory = vec![0u8; 4096];
            memory[64..64 + data.len()].copy_from_slice(&data);
            run(&spec, &mut memory, &[64, 2048]);
            for r in 0..rows {
                // f32 accumulation in column order, rounded once.
                let mut acc = load(&data, 0, r * cols, precision, 0);
                for c in 1..cols {
                    let x = load(&data, 0, r * cols + c, precision, 0);
                    acc = match combiner {
                        Combiner::Add => acc + x,
                        Combiner::Mul => acc * x,
                        Combiner::Max => acc.max(x),
                        Combiner::Min => acc.min(x),
                    };
                }
                // f16 stores saturate finite overflow to the largest finite value.
                let want = match precision {
                    Precision::F16 if acc.is_finite() && acc.abs() > 65504.0 => {
                        65504f32.copysign(acc)
                    }
                    Precision::F16 => half::f16::from_f32(acc).to_f32(),
                    _ => acc,
                };
                let got = load(&memory, 2048, r, precision, 0);
                assert_eq!(got, want, "{combiner:?} {precision:?} row {r}");
            }
        }
    }
}
