//! Every compiled kernel against a plain-Rust host reference on seeded random shapes and data,
//! plus the runner's argument validation. Each distinct spec compiles once per cache.

use half::f16;
use ipu_device::kernels::spec::{ElementOrder, GeluForm, KernelRunError};
use ipu_device::kernels::{Access, KernelError};
use ipu_device::{KernelRunner, KernelSpec, MemoryClass, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels_support::{
    assert_same_elements, encode_value, erf, f16_ulps, library, load, random_tensor, store,
};

const MEMORY: usize = 96 * 1024;

fn run(spec: &KernelSpec, memory: &mut [u8], args: &[u32]) {
    library()
        .run(spec, memory, args)
        .unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
}

/// Index of (r, c) in the 16-column panel order every AMP order uses.
fn panel(r: usize, c: usize, panel_rows: usize) -> usize {
    ((c / 16) * panel_rows + r) * 16 + c % 16
}

fn bytes_of(memory: &[u8], offset: usize, elements: usize, precision: Precision) -> Vec<u8> {
    memory[offset..offset + elements * precision.bytes() as usize].to_vec()
}

#[test]
fn names_follow_the_seed() {
    let gemm = KernelSpec::Gemm {
        input: Precision::F8E4M3,
        partials: Precision::F16,
        weights: MemoryClass::Interleaved,
        k: 32,
        c: 64,
        rows: vec![32, 34],
        accumulate: false,
    };
    assert_eq!(gemm.name(), "gemm_f8_interleaved_k32_c64_r32_r34");
    let entries: Vec<String> = gemm.entries().into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        entries,
        [
            "gemm_f8_interleaved_k32_c64_r32_r34_r32",
            "gemm_f8_interleaved_k32_c64_r32_r34_r34"
        ]
    );
    for (rows, padded, name) in [
        (31, 32, "rearrange_amp_left_f16_o0_r31_p32_c32_p32"),
        (32, 32, "rearrange_amp_left_f16_o0_r32_p32_c32_p32"),
        (34, 34, "rearrange_amp_left_f16_o0_r34_p34_c32_p32"),
    ] {
        let spec = KernelSpec::Rearrange {
            order: ElementOrder::AmpLeft,
            to_amp: true,
            precision: Precision::F16,
            offset: 0,
            rows,
            rows_padded: padded,
            cols: 32,
            cols_padded: 32,
        };
        assert_eq!(spec.name(), name);
    }
    let cast = KernelSpec::Cast {
        from: Precision::F16,
        to: Precision::F8E4M3,
        elements: 2048,
    };
    assert!(cast.name().starts_with("cast_f16_f8_"), "{}", cast.name());
    assert_eq!(cast.source_file(), "cast.mlir");
    let transpose = KernelSpec::Transpose {
        precision: Precision::F32,
        rows: 16,
        cols: 32,
    };
    assert_eq!(transpose.name(), "transpose_f32_r16_c32");
    assert_eq!(transpose.source_file(), "transpose.mlir");
    let transpose_f8 = KernelSpec::Transpose {
        precision: Precision::F8E5M2,
        rows: 3,
        cols: 5,
    };
    assert_eq!(transpose_f8.name(), "transpose_f8e5_r3_c5");
    let scale = KernelSpec::Scale {
        precision: Precision::F16,
        elements: 1024,
    };
    assert_eq!(scale.name(), "scale_f16_n1024");
    assert_eq!(scale.source_file(), "scale.mlir");
    let block = |causal| KernelSpec::AttentionBlock {
        precision: Precision::F16,
        rows: 4,
        keys: 32,
        width: 64,
        causal,
    };
    assert_eq!(block(false).name(), "attention_block_f16_r4_k32_w64");
    assert_eq!(block(true).name(), "attention_block_f16_r4_k32_w64_causal");
    assert_eq!(block(true).source_file(), "attention_block.mlir");
    let finish = KernelSpec::AttentionFinish {
        precision: Precision::F32,
        rows: 4,
        width: 64,
    };
    assert_eq!(finish.name(), "attention_finish_f32_r4_w64");
    assert_eq!(finish.source_file(), "attention_finish.mlir");
}

struct GemmCase {
    input: Precision,
    partials: Precision,
    weights: MemoryClass,
    k: u32,
    c: u32,
    rows: Vec<u32>,
    accumulate: bool,
    a_scale: i32,
    b_scale: i32,
}

fn gemm_spec(case: &GemmCase) -> KernelSpec {
    KernelSpec::Gemm {
        input: case.input,
        partials: case.partials,
        weights: case.weights,
        k: case.k,
        c: case.c,
        rows: case.rows.clone(),
        accumulate: case.accumulate,
    }
}

/// Runs every row entry of the case on fresh random data and compares bit for bit with the
/// reference: f32 fused multiply-adds in order over the K block, then one rounding into the
/// partials (after adding the old partial when accumulating).
fn check_gemm(case: &GemmCase, rng: &mut ChaCha8Rng) {
    let spec = gemm_spec(case);
    let (k, c) = (case.k as usize, case.c as usize);
    for (index, &rows) in case.rows.iter().enumerate() {
        let rows = rows as usize;
        let ib = case.input.bytes() as usize;
        let (a_off, b_off) = (64usize, 64 + rows * k * ib + 16);
        let c_off = (b_off + k * c * ib).div_ceil(64) * 64;
        let mut memory = vec![0u8; MEMORY];
        let a = random_tensor(rng, case.input, rows * k, 1.0);
        let b = random_tensor(rng, case.input, k * c, 1.0);
        let old = random_tensor(rng, case.partials, rows * c, 4.0);
        memory[a_off..a_off + a.len()].copy_from_slice(&a);
        memory[b_off..b_off + b.len()].copy_from_slice(&b);
        memory[c_off..c_off + old.len()].copy_from_slice(&old);
        let mut want = memory.clone();
        for r in 0..rows {
            for j in 0..c {
                let mut sum = 0f32;
                for kk in 0..k {
                    let x = load(&memory, a_off, panel(r, kk, rows), case.input, case.a_scale);
                    let y = load(&memory, b_off, panel(kk, j, k), case.input, case.b_scale);
                    sum = x.mul_add(y, sum);
                }
                let at = panel(r, j, rows);
                let value = if case.accumulate {
                    load(&memory, c_off, at, case.partials, 0) + sum
                } else {
                    sum
                };
                store(&mut want, c_off, at, case.partials, 0, value);
            }
        }
        let args = [
            a_off as u32,
            b_off as u32,
            c_off as u32,
            index as u32,
            case.a_scale as u32,
            case.b_scale as u32,
        ];
        run(&spec, &mut memory, &args);
        let what = format!("{} rows {rows}", spec.name());
        assert_same_elements(
            &what,
            &memory[c_off..c_off + rows * c * case.partials.bytes() as usize],
            &want[c_off..c_off + rows * c * case.partials.bytes() as usize],
            case.partials,
        );
        assert_eq!(memory, want, "{what}: bytes outside C changed");
    }
}

#[test]
fn gemm_matches_reference_for_every_input_precision_memory_class_and_mode() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e33);
    let mut cases = vec![
        // The seed's kernel, FP8 with scales.
        GemmCase {
            input: Precision::F8E4M3,
            partials: Precision::F16,
            weights: MemoryClass::Interleaved,
            k: 32,
            c: 64,
            rows: vec![32, 34],
            accumulate: false,
            a_scale: -4,
            b_scale: -3,
        },
        GemmCase {
            input: Precision::F8E5M2,
            partials: Precision::F16,
            weights: MemoryClass::Standard,
            k: 16,
            c: 32,
            rows: vec![7, 1],
            accumulate: true,
            a_scale: -9,
            b_scale: -8,
        },
        GemmCase {
            input: Precision::F32,
            partials: Precision::F32,
            weights: MemoryClass::Interleaved,
            k: 48,
            c: 16,
            rows: vec![6],
            accumulate: true,
            a_scale: 0,
            b_scale: 0,
        },
    ];
    // F16 in both memory classes and both modes on random shapes.
    for (weights, accumulate) in [
        (MemoryClass::Interleaved, false),
        (MemoryClass::Standard, true),
    ] {
        let k = 16 * rng.random_range(1..=4u32);
        let c = 16 * rng.random_range(1..=4u32);
        let r0 = rng.random_range(1..=40u32);
        let rows = vec![r0, r0 + rng.random_range(1..=5u32)];
        cases.push(GemmCase {
            input: Precision::F16,
            partials: Precision::F16,
            weights,
            k,
            c,
            rows,
            accumulate,
            a_scale: 0,
            b_scale: 0,
        });
    }
    // F16 inputs with f32 partials.
    cases.push(GemmCase {
        input: Precision::F16,
        partials: Precision::F32,
        weights: MemoryClass::Interleaved,
        k: 64,
        c: 64,
        rows: vec![9],
        accumulate: true,
        a_scale: 0,
        b_scale: 0,
    });
    for case in &cases {
        check_gemm(case, &mut rng);
    }
}

#[test]
fn gemm_weights_memory_class_changes_name_not_numbers() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut outputs = Vec::new();
    let a = random_tensor(&mut rng, Precision::F16, 5 * 16, 1.0);
    let b = random_tensor(&mut rng, Precision::F16, 16 * 16, 1.0);
    let mut names = Vec::new();
    for weights in [MemoryClass::Interleaved, MemoryClass::Standard] {
        let spec = KernelSpec::Gemm {
            input: Precision::F16,
            partials: Precision::F16,
            weights,
            k: 16,
            c: 16,
            rows: vec![5],
            accumulate: false,
        };
        let mut memory = vec![0u8; 4096];
        memory[..a.len()].copy_from_slice(&a);
        memory[1024..1024 + b.len()].copy_from_slice(&b);
        run(&spec, &mut memory, &[0, 1024, 2048, 0, 0, 0]);
        outputs.push(memory);
        names.push(spec.name());
    }
    assert_ne!(names[0], names[1]);
    assert_eq!(outputs[0], outputs[1]);
}

fn special_f32_values() -> Vec<f32> {
    vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        65504.0,
        65519.99,
        65520.0,
        -70000.0,
        240.0,
        247.9,
        248.0,
        256.0,
        57344.0,
        61440.0,
        1e-10,
        -1e-10,
        1.0625,
        1.1875,
        -1.0625,
        0.0009765625,
        0.00048828125,
        3.0 * 2f32.powi(-12),
        1.5e-5,
        2f32.powi(-17),
        3.0e-8,
        1e30,
    ]
}

fn random_f32_values(rng: &mut ChaCha8Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let mantissa: f32 = rng.random_range(1.0..2.0);
            let exponent = rng.random_range(-24..20);
            let sign = if rng.random::<bool>() { -1.0 } else { 1.0 };
            sign * mantissa * 2f32.powi(exponent)
        })
        .collect()
}

#[test]
fn cast_matches_reference_for_every_precision_pair_with_scales() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xca57);
    let all = [
        Precision::F32,
        Precision::F16,
        Precision::F8E4M3,
        Precision::F8E5M2,
    ];
    for from in all {
        for to in all {
            if from == to && !from.is_fp8() {
                continue;
            }
            // Source values: every FP8 code, every 37th f16 bit pattern, or specials + random f32.
            let source: Vec<u8> = match from {
                Precision::F8E4M3 | Precision::F8E5M2 => (0..=255u8).collect(),
                Precision::F16 => (0..=0xffffu32)
                    .step_by(37)
                    .flat_map(|b| (b as u16).to_le_bytes())
                    .collect(),
                _ => special_f32_values()
                    .into_iter()
                    .chain(random_f32_values(&mut rng, 500))
                    .flat_map(|v| v.to_le_bytes())
                    .collect(),
            };
            let elements = source.len() / from.bytes() as usize;
            let spec = KernelSpec::Cast {
                from,
                to,
                elements: elements as u32,
            };
            for scale in [0, rng.random_range(-8..=8), -31, 31] {
                let dst = source.len().div_ceil(64) * 64;
                let mut memory = vec![0u8; dst + elements * to.bytes() as usize];
                memory[..source.len()].copy_from_slice(&source);
                let mut want = Vec::new();
                for i in 0..elements {
                    want.extend(encode_value(load(&memory, 0, i, from, scale), to, scale));
                }
                run(&spec, &mut memory, &[0, dst as u32, scale as u32]);
                let what = format!("{} scale {scale}", spec.name());
                assert_same_elements(&what, &memory[dst..], &want, to);
            }
        }
    }
}

fn rearrange_reference(spec: &KernelSpec, src: &[u8]) -> Vec<u8> {
    let KernelSpec::Rearrange {
        to_amp,
        precision,
        offset,
        rows,
        rows_padded,
        cols,
        cols_padded,
        ..
    } = *spec
    else {
        panic!("not a rearrange")
    };
    let b = precision.bytes() as usize;
    let (offset, rows, rows_padded, cols, cols_padded) = (
        offset as usize,
        rows as usize,
        rows_padded as usize,
        cols as usize,
        cols_padded as usize,
    );
    if to_amp {
        let mut out = vec![0u8; rows_padded * cols_padded * b];
        for i in 0..rows {
            for c in 0..cols {
                let to = panel(offset + i, c, rows_padded) * b;
                out[to..to + b].copy_from_slice(&src[(i * cols + c) * b..(i * cols + c + 1) * b]);
            }
        }
        out
    } else {
        let mut out = vec![0u8; rows * cols * b];
        for i in 0..rows {
            for c in 0..cols {
                let from = panel(offset + i, c, rows_padded) * b;
                out[(i * cols + c) * b..(i * cols + c + 1) * b]
                    .copy_from_slice(&src[from..from + b]);
            }
        }
        out
    }
}

#[test]
fn rearrange_matches_reference_with_padding_in_both_directions() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x4ea4);
    let r = |order, to_amp, precision, offset, rows, rows_padded, cols, cols_padded| {
        KernelSpec::Rearrange {
            order,
            to_amp,
            precision,
            offset,
            rows,
            rows_padded,
            cols,
            cols_padded,
        }
    };
    let specs = [
        r(
            ElementOrder::AmpLeft,
            true,
            Precision::F16,
            0,
            31,
            32,
            32,
            32,
        ),
        r(
            ElementOrder::AmpLeft,
            false,
            Precision::F16,
            0,
            31,
            32,
            32,
            32,
        ),
        r(
            ElementOrder::AmpRight,
            true,
            Precision::F8E4M3,
            2,
            5,
            9,
            20,
            32,
        ),
        r(
            ElementOrder::AmpOutput,
            false,
            Precision::F32,
            3,
            6,
            10,
            17,
            32,
        ),
        r(
            ElementOrder::AmpOutput,
            true,
            Precision::F8E5M2,
            1,
            13,
            16,
            33,
            48,
        ),
    ];
    for spec in &specs {
        let ranges = spec.operand_ranges(&[0, 0]).expect("ranges");
        let (src_len, dst_len) = (ranges[0].bytes.len(), ranges[1].bytes.len());
        let dst = src_len.div_ceil(64) * 64;
        let mut memory: Vec<u8> = (0..dst + dst_len).map(|_| rng.random()).collect();
        let before = memory.clone();
        run(spec, &mut memory, &[0, dst as u32]);
        assert_eq!(
            &memory[dst..],
            rearrange_reference(spec, &before[..src_len]).as_slice(),
            "{}",
            spec.name()
        );
        assert_eq!(
            &memory[..dst],
            &before[..dst],
            "{}: source changed",
            spec.name()
        );
    }
    // Round trip: row-major -> amp_left (padded) -> row-major gives the original back.
    let (there, back) = (&specs[0], &specs[1]);
    let mut memory = vec![0u8; 16 * 1024];
    let original: Vec<u8> = random_tensor(&mut rng, Precision::F16, 31 * 32, 3.0);
    memory[..original.len()].copy_from_slice(&original);
    run(there, &mut memory, &[0, 4096]);
    run(back, &mut memory, &[4096, 8192]);
    assert_eq!(&memory[8192..8192 + original.len()], original.as_slice());
}

#[test]
fn add_broadcasts_and_rounds_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xadd);
    for (precision, rows, cols, b_rows, in_place) in [
        (Precision::F16, 3, 40, 1, false),
        (Precision::F32, 4, 33, 4, true),
        (Precision::F16, 5, 16, 5, true),
    ] {
        let spec = KernelSpec::Add {
            precision,
            rows,
            cols,
            b_rows,
        };
        let n = (rows * cols) as usize;
        let bytes = precision.bytes() as usize;
        let a = random_tensor(&mut rng, precision, n, 60000.0);
        let b = random_tensor(
            &mut rng,
            precision,
            b_rows as usize * cols as usize,
            60000.0,
        );
        let (a_off, b_off) = (0, 1024);
        let out_off = if in_place { a_off } else { 2048 };
        let mut memory = vec![0u8; 4096];
        memory[a_off..a_off + a.len()].copy_from_slice(&a);
        memory[b_off..b_off + b.len()].copy_from_slice(&b);
        let mut want = Vec::new();
        for i in 0..n {
            let bi = if b_rows == 1 { i % cols as usize } else { i };
            want.extend(encode_value(
                load(&a, 0, i, precision, 0) + load(&b, 0, bi, precision, 0),
                precision,
                0,
            ));
        }
        run(
            &spec,
            &mut memory,
            &[a_off as u32, b_off as u32, out_off as u32],
        );
        assert_same_elements(
            &spec.name(),
            &memory[out_off..out_off + n * bytes],
            &want,
            precision,
        );
    }
}

/// One AddGroupBias call on random data, compared bit for bit with the host: unit t of the
/// range is group row q = start + t and takes the bias of group q / rows; each sum in f32,
/// rounded once to `precision` (nearest even, saturating). Checks that the bias, the source
/// (unless in place) and every byte outside `out` are untouched.
fn check_add_group_bias(
    rng: &mut ChaCha8Rng,
    precision: Precision,
    rows: u32,
    elements: u32,
    start: u32,
    in_place: bool,
) {
    let spec = KernelSpec::AddGroupBias {
        precision,
        rows,
        elements,
    };
    let (rows, n, start) = (rows as usize, elements as usize, start as usize);
    let units = n / 16;
    let groups = (start + units - 1) / rows + 1;
    let bytes = precision.bytes() as usize;
    let a = random_tensor(rng, precision, n, 60000.0);
    let bias = random_tensor(rng, precision, groups * 16, 60000.0);
    let align = |x: usize| x.div_ceil(64) * 64;
    let a_off = 64;
    let bias_off = align(a_off + a.len());
    let out_off = if in_place {
        a_off
    } else {
        align(bias_off + bias.len())
    };
    let mut memory = vec![0xa5u8; align(bias_off + bias.len()) + a.len() + 64];
    memory[a_off..a_off + a.len()].copy_from_slice(&a);
    memory[bias_off..bias_off + bias.len()].copy_from_slice(&bias);
    let mut want = Vec::with_capacity(a.len());
    for t in 0..units {
        let group = (start + t) / rows;
        for l in 0..16 {
            let sum = load(&a, 0, 16 * t + l, precision, 0)
                + load(&bias, 0, 16 * group + l, precision, 0);
            want.extend(encode_value(sum, precision, 0));
        }
    }
    let before = memory.clone();
    run(
        &spec,
        &mut memory,
        &[a_off as u32, bias_off as u32, out_off as u32, start as u32],
    );
    let what = format!("{} start {start} (in place: {in_place})", spec.name());
    assert_same_elements(
        &what,
        &memory[out_off..out_off + n * bytes],
        &want,
        precision,
    );
    let out = out_off..out_off + n * bytes;
    for (i, (got, was)) in memory.iter().zip(&before).enumerate() {
        if !out.contains(&i) {
            assert_eq!(got, was, "{what}: byte {i} outside out changed");
        }
    }
}

#[test]
fn add_group_bias_adds_each_group_rows_bias_and_rounds_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb1a5);
    for (precision, rows, elements, start, in_place) in [
        // One whole group from its first row.
        (Precision::F16, 4, 64, 0, false),
        (Precision::F32, 4, 64, 0, true),
        // From the middle of a group into the next one (group rows 5..=8 of 8).
        (Precision::F16, 8, 64, 5, false),
        (Precision::F32, 8, 64, 5, true),
        // Three groups: rows 2..=8 of 3-row groups; rows 3..=11 of 4-row groups.
        (Precision::F32, 3, 112, 2, false),
        (Precision::F16, 4, 144, 3, true),
        // rows = 1: every unit is a group of its own with its own bias.
        (Precision::F16, 1, 80, 0, false),
        (Precision::F32, 1, 48, 0, true),
        // A single unit on the last row of a group.
        (Precision::F16, 5, 16, 4, true),
    ] {
        check_add_group_bias(&mut rng, precision, rows, elements, start, in_place);
    }
    // f16 ties and saturation by hand (one unit, rows = 1): 2048 + 1 is a tie at f16's spacing
    // of 2 there and goes to the even 2048; 2050 + 1 goes up to 2052; 60000 + 10000 saturates
    // to 65504; 1 + 2^-11 rounds to 1.
    let spec = KernelSpec::AddGroupBias {
        precision: Precision::F16,
        rows: 1,
        elements: 16,
    };
    let mut a = [0f32; 16];
    let mut bias = [0f32; 16];
    let mut want = [0f32; 16];
    for (l, (x, y, z)) in [
        (2048.0, 1.0, 2048.0),
        (2050.0, 1.0, 2052.0),
        (60000.0, 10000.0, 65504.0),
        (-60000.0, -10000.0, -65504.0),
        (1.0, 1.0 / 2048.0, 1.0),
    ]
    .into_iter()
    .enumerate()
    {
        (a[l], bias[l], want[l]) = (x, y, z);
    }
    let f16_bytes = |values: &[f32]| -> Vec<u8> {
        values
            .iter()
            .flat_map(|&v| f16::from_f32(v).to_le_bytes())
            .collect()
    };
    let mut memory = vec![0u8; 128];
    memory[..32].copy_from_slice(&f16_bytes(&a));
    memory[64..96].copy_from_slice(&f16_bytes(&bias));
    run(&spec, &mut memory, &[0, 64, 0, 0]);
    assert_eq!(&memory[..32], f16_bytes(&want).as_slice());
}

/// The compiler's use: a whole `rows x cols` AMP-output block plus a per-column bias, split
/// into ranges at arbitrary group rows, each call given the bias of its first group, in place;
/// the result is out(r, c) = a(r, c) + bias[c] for every element.
#[test]
fn add_group_bias_ranges_add_the_column_bias_of_a_panel_block() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb1a6);
    let precision = Precision::F16;
    let (rows, cols) = (6usize, 48usize);
    let a = random_tensor(&mut rng, precision, rows * cols, 100.0);
    let bias = random_tensor(&mut rng, precision, cols, 100.0);
    let (bias_off, block_off) = (0usize, 128usize);
    let mut memory = vec![0u8; block_off + a.len()];
    memory[bias_off..bias_off + bias.len()].copy_from_slice(&bias);
    memory[block_off..block_off + a.len()].copy_from_slice(&a);
    // Group rows 0..18 (3 groups of 6): [0, 4), [4, 13), [13, 18).
    for (first, last) in [(0usize, 4usize), (4, 13), (13, 18)] {
        let spec = KernelSpec::AddGroupBias {
            precision,
            rows: rows as u32,
            elements: (16 * (last - first)) as u32,
        };
        let offset = (block_off + 16 * first * 2) as u32;
        let group_bias = (bias_off + (first / rows) * 16 * 2) as u32;
        run(
            &spec,
            &mut memory,
            &[offset, group_bias, offset, (first % rows) as u32],
        );
    }
    let mut want = vec![0u8; a.len()];
    for r in 0..rows {
        for c in 0..cols {
            let i = panel(r, c, rows);
            let sum = load(&a, 0, i, precision, 0) + load(&bias, 0, c, precision, 0);
            want[2 * i..2 * i + 2].copy_from_slice(&encode_value(sum, precision, 0));
        }
    }
    assert_same_elements(
        "panel block",
        &memory[block_off..block_off + a.len()],
        &want,
        precision,
    );
}

#[test]
fn add_group_bias_names_validation_and_operands() {
    let spec = |precision, rows, elements| KernelSpec::AddGroupBias {
        precision,
        rows,
        elements,
    };
    let f16 = spec(Precision::F16, 4, 64);
    assert_eq!(f16.name(), "add_group_bias_f16_r4_n64");
    assert_eq!(
        spec(Precision::F32, 1, 16).name(),
        "add_group_bias_f32_r1_n16"
    );
    assert_eq!(f16.source_file(), "add_group_bias.mlir");
    assert_eq!(f16.arg_count(), 4);
    assert!(f16.in_place_allowed());
    assert!(spec(Precision::F32, 1, 16).validate().is_ok());
    // Arithmetic precisions only; at least one row; whole group rows (16-element units).
    for bad in [
        spec(Precision::F16, 4, 40),
        spec(Precision::F16, 4, 0),
        spec(Precision::F32, 4, 8),
        spec(Precision::F16, 0, 64),
        spec(Precision::F8E4M3, 4, 64),
    ] {
        let message = library().load(&bad).expect_err(&bad.name()).to_string();
        assert!(
            matches!(bad.validate(), Err(KernelError::InvalidSpec { .. }))
                && message.contains(&bad.name()),
            "{message}"
        );
    }
    // Operand extents: a and out `elements`; bias the groups the start row's range touches,
    // ((start + units - 1) / rows + 1) * 16 elements. Here 4 units of 4-row groups.
    let ranges = |spec: &KernelSpec,
                  args: &[u32]|
     -> Vec<(usize, &'static str, Access, std::ops::Range<u32>)> {
        spec.check_call(4096, args)
            .expect("ranges")
            .into_iter()
            .map(|r| (r.arg, r.what, r.access, r.bytes))
            .collect()
    };
    assert_eq!(
        ranges(&f16, &[0, 256, 512, 0]),
        [
            (0, "a", Access::Read, 0..128),
            (1, "bias", Access::Read, 256..256 + 32),
            (2, "out", Access::Write, 512..640),
        ]
    );
    for (start, groups) in [(0u32, 1u32), (1, 2), (3, 2)] {
        let got = f16.operand_ranges(&[0, 256, 512, start]).expect("ranges");
        assert_eq!(got[1].bytes, 256..256 + groups * 16 * 2, "start {start}");
    }
    // 9 units of 4-row groups from row 3: rows 3..=11, three groups; rows = 1: one per unit.
    let three = spec(Precision::F32, 4, 144);
    assert_eq!(
        three.operand_ranges(&[0, 1024, 0, 3]).expect("ranges")[1].bytes,
        1024..1024 + 3 * 16 * 4
    );
    let single = spec(Precision::F16, 1, 80);
    assert_eq!(
        single.operand_ranges(&[0, 1024, 0, 0]).expect("ranges")[1].bytes,
        1024..1024 + 80 * 2
    );
    // start must be a row of the group; the refusal names argument 3.
    for start in [4, 5, u32::MAX] {
        let (index, detail) = bad_argument(f16.operand_ranges(&[0, 256, 512, start]).map(|_| ()));
        assert_eq!(index, 3, "{detail}");
        assert!(
            detail.contains(&start.to_string()) && detail.contains("4 rows"),
            "{detail}"
        );
    }
    assert_eq!(
        bad_argument(single.operand_ranges(&[0, 1024, 0, 1]).map(|_| ())).0,
        3
    );
    // Four arguments exactly.
    assert_eq!(
        bad_argument(f16.operand_ranges(&[0, 256, 512]).map(|_| ())).0,
        3
    );
    // In place: a == out allowed; out overlapping the bias or partly overlapping a is not.
    assert_eq!(ranges(&f16, &[0, 256, 0, 2])[2].3, 0..128);
    assert_eq!(
        bad_argument(f16.check_call(4096, &[0, 256, 200, 0]).map(|_| ())).0,
        2
    );
    assert_eq!(
        bad_argument(f16.check_call(4096, &[0, 256, 64, 0]).map(|_| ())).0,
        2
    );
    // The runner refuses a bad start before running: memory unchanged.
    let mut memory = vec![5u8; 1024];
    let (index, _) = bad_argument(library().run(&f16, &mut memory, &[0, 256, 512, 4]));
    assert_eq!(index, 3);
    assert!(
        memory.iter().all(|&b| b == 5),
        "a rejected call changed memory"
    );
}

/// Compares with a tolerance: f16 within 1 ulp (or `slack`), f32 within 2e-6 relative + 1e-6
/// absolute (+ `slack`).
fn assert_close(what: &str, got: &[u8], want: &[f64], precision: Precision, slack: &[f64]) {
    for (i, w) in want.iter().enumerate() {
        let g = load(got, 0, i, precision, 0);
        let ok = match precision {
            Precision::F16 => f16_ulps(g, *w as f32) <= 1 || (f64::from(g) - w).abs() <= slack[i],
            _ => (f64::from(g) - w).abs() <= 1e-6 + 2e-6 * w.abs() + slack[i],
        };
        assert!(ok, "{what}: element {i}: got {g}, want {w}");
    }
}

#[test]
fn gelu_erf_and_tanh_forms_match_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x6e1);
    for precision in [Precision::F16, Precision::F32] {
        for form in [GeluForm::Erf, GeluForm::Tanh] {
            let n = 517usize;
            let spec = KernelSpec::Gelu {
                precision,
                form,
                elements: n as u32,
            };
            let src = random_tensor(&mut rng, precision, n, 8.0);
            let mut memory = vec![0u8; 8192];
            memory[..src.len()].copy_from_slice(&src);
            let want: Vec<f64> = (0..n)
                .map(|i| {
                    let x = f64::from(load(&src, 0, i, precision, 0));
                    match form {
                        GeluForm::Erf => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
                        GeluForm::Tanh => {
                            0.5 * x
                                * (1.0
                                    + ((2.0 / std::f64::consts::PI).sqrt()
                                        * (x + 0.044715 * x * x * x))
                                        .tanh())
                        }
                    }
                })
                .collect();
            // In place: src == dst.
            // 1 + erf(x) (or tanh) cancels in f32 for x << 0: the kernel's f32 formula is only
            // accurate to about |x| * 2^-23 in absolute terms there.
            let slack: Vec<f64> = (0..n)
                .map(|i| f64::from(load(&src, 0, i, precision, 0)).abs() * 2f64.powi(-22))
                .collect();
            run(&spec, &mut memory, &[0, 0]);
            assert_close(&spec.name(), &memory, &want, precision, &slack);
        }
    }
}

#[test]
fn softmax_plain_and_causal_match_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x50f7);
    for (precision, rows, cols, causal, row_offset) in [
        (Precision::F16, 5, 37, true, 2u32),
        (Precision::F32, 4, 50, false, 0),
        (Precision::F32, 3, 8, true, 0),
    ] {
        let spec = KernelSpec::Softmax {
            precision,
            rows,
            cols,
            causal,
        };
        let n = (rows * cols) as usize;
        let src = random_tensor(&mut rng, precision, n, 6.0);
        let mut memory = vec![0u8; 8192];
        memory[..src.len()].copy_from_slice(&src);
        let mut want = vec![0f64; n];
        for r in 0..rows as usize {
            let limit = if causal {
                (row_offset as usize + r + 1).min(cols as usize)
            } else {
                cols as usize
            };
            let x: Vec<f64> = (0..limit)
                .map(|j| f64::from(load(&src, 0, r * cols as usize + j, precision, 0)))
                .collect();
            let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = x.iter().map(|v| (v - m).exp()).sum();
            for j in 0..limit {
                want[r * cols as usize + j] = (x[j] - m).exp() / s;
            }
        }
        run(&spec, &mut memory, &[0, 4096, row_offset]);
        assert_close(
            &spec.name(),
            &memory[4096..],
            &want,
            precision,
            &vec![0.0; n],
        );
    }
}

#[test]
fn layer_norm_matches_reference() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x1a7e);
    for (precision, rows, cols, epsilon_nano) in [
        (Precision::F16, 3, 64, 10_000),
        (Precision::F32, 2, 100, 1_000),
    ] {
        let spec = KernelSpec::LayerNorm {
            precision,
            rows,
            cols,
            epsilon_nano,
        };
        let (n, c) = ((rows * cols) as usize, cols as usize);
        let b = precision.bytes() as usize;
        let src = random_tensor(&mut rng, precision, n, 3.0);
        let gamma = random_tensor(&mut rng, precision, c, 2.0);
        let beta = random_tensor(&mut rng, precision, c, 1.0);
        let (g_off, be_off, dst) = (n * b, n * b + c * b, 4096);
        let mut memory = vec![0u8; 8192];
        memory[..src.len()].copy_from_slice(&src);
        memory[g_off..g_off + gamma.len()].copy_from_slice(&gamma);
        memory[be_off..be_off + beta.len()].copy_from_slice(&beta);
        let eps = f64::from(epsilon_nano) * 1e-9;
        let mut want = vec![0f64; n];
        for r in 0..rows as usize {
            let x: Vec<f64> = (0..c)
                .map(|j| f64::from(load(&src, 0, r * c + j, precision, 0)))
                .collect();
            let mean = x.iter().sum::<f64>() / c as f64;
            let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / c as f64;
            for j in 0..c {
                let g = f64::from(load(&gamma, 0, j, precision, 0));
                let bb = f64::from(load(&beta, 0, j, precision, 0));
                want[r * c + j] = (x[j] - mean) / (var + eps).sqrt() * g + bb;
            }
        }
        run(
            &spec,
            &mut memory,
            &[0, g_off as u32, be_off as u32, dst as u32],
        );
        // f32 arithmetic in the kernel: allow a few f32 ulps of the normalized value.
        for (i, w) in want.iter().enumerate() {
            let g = f64::from(load(&memory, dst, i, precision, 0));
            let tolerance = match precision {
                Precision::F16 => (w.abs() * 2f64.powi(-10)).max(2f64.powi(-24)) * 1.01,
                _ => 1e-5 + 1e-5 * w.abs(),
            };
            assert!(
                (g - w).abs() <= tolerance,
                "{}: element {i}: got {g}, want {w}",
                spec.name()
            );
        }
    }
}

#[test]
fn reduce_add_sums_partials_in_order_then_rounds_once() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x4ed);
    for (partials_precision, output, elements, partials) in [
        (Precision::F16, Precision::F16, 100, 3),
        (Precision::F32, Precision::F16, 50, 4),
        (Precision::F16, Precision::F32, 33, 2),
    ] {
        let spec = KernelSpec::ReduceAdd {
            partials_precision,
            output,
            elements,
            partials,
        };
        let total = (elements * partials) as usize;
        let src = random_tensor(&mut rng, partials_precision, total, 30000.0);
        let mut memory = vec![0u8; 8192];
        memory[..src.len()].copy_from_slice(&src);
        let mut want = Vec::new();
        for e in 0..elements as usize {
            let mut sum = 0f32;
            for p in 0..partials as usize {
                sum += load(&src, 0, p * elements as usize + e, partials_precision, 0);
            }
            want.extend(encode_value(sum, output, 0));
        }
        run(&spec, &mut memory, &[0, 4096]);
        assert_same_elements(
            &spec.name(),
            &bytes_of(&memory, 4096, elements as usize, output),
            &want,
            output,
        );
    }
}

#[test]
fn copy_and_fill_move_exact_bytes() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc0b1);
    let mut memory: Vec<u8> = (0..4096).map(|_| rng.random()).collect();
    let before = memory.clone();
    run(&KernelSpec::Copy { bytes: 1001 }, &mut memory, &[3, 2050]);
    assert_eq!(&memory[2050..3051], &before[3..1004]);
    assert_eq!(&memory[..2050], &before[..2050]);
    assert_eq!(&memory[3051..], &before[3051..]);
    for (precision, elements, bits, offset) in [
        (Precision::F16, 33, 0x7e00u32, 100),
        (Precision::F8E4M3, 17, 0x80, 7),
        (Precision::F32, 9, 0x3f80_0000, 400),
    ] {
        let spec = KernelSpec::Fill {
            precision,
            elements,
        };
        let mut memory = before.clone();
        run(&spec, &mut memory, &[offset, bits]);
        let b = precision.bytes() as usize;
        let end = offset as usize + elements as usize * b;
        for chunk in memory[offset as usize..end].chunks(b) {
            assert_eq!(chunk, &bits.to_le_bytes()[..b], "{}", spec.name());
        }
        assert_eq!(&memory[end..], &before[end..], "{}", spec.name());
    }
}

/// Destination bytes of a transpose: element (r, c) of the row-major `rows x cols` source
/// goes to element (c, r) of the row-major `cols x rows` destination, bytes unchanged.
fn transpose_reference(src: &[u8], rows: usize, cols: usize, element_bytes: usize) -> Vec<u8> {
    let b = element_bytes;
    let mut out = vec![0u8; rows * cols * b];
    for r in 0..rows {
        for c in 0..cols {
            let (from, to) = ((r * cols + c) * b, (c * rows + r) * b);
            out[to..to + b].copy_from_slice(&src[from..from + b]);
        }
    }
    out
}

/// Byte-for-byte equality (NaN payloads included), reporting the first differing element.
#[track_caller]
fn assert_same_bytes(what: &str, got: &[u8], want: &[u8], element_bytes: usize) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len() / element_bytes).find(|i| {
        let at = i * element_bytes..(i + 1) * element_bytes;
        got[at.clone()] != want[at]
    }) {
        let at = i * element_bytes..(i + 1) * element_bytes;
        panic!(
            "{what}: element {i}: got {:02x?}, want {:02x?}",
            &got[at.clone()],
            &want[at]
        );
    }
}

#[test]
fn transpose_moves_raw_bytes_for_every_precision_and_shape() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a05);
    let mut cases = vec![
        // Non-square both ways, a single row and a single column, a square block.
        (Precision::F32, 3, 50),
        (Precision::F16, 37, 5),
        (Precision::F8E4M3, 1, 29),
        (Precision::F8E5M2, 23, 1),
        (Precision::F16, 16, 16),
    ];
    for precision in [
        Precision::F32,
        Precision::F16,
        Precision::F8E4M3,
        Precision::F8E5M2,
    ] {
        let rows = rng.random_range(2..=40u32);
        // Never square, so a kernel that swapped the roles of rows and cols would fail.
        let cols = loop {
            let c = rng.random_range(2..=40u32);
            if c != rows {
                break c;
            }
        };
        cases.push((precision, rows, cols));
    }
    for (precision, rows, cols) in cases {
        let spec = KernelSpec::Transpose {
            precision,
            rows,
            cols,
        };
        let b = precision.bytes() as usize;
        let len = (rows * cols) as usize * b;
        // Random bytes everywhere: NaN payloads, FP8 NaN codes and negative zeros included, and
        // every byte outside the destination must survive.
        let (src, dst) = (8 * b, (8 * b + len).div_ceil(64) * 64 + 4 * b);
        let again = (dst + len).div_ceil(64) * 64;
        let mut memory: Vec<u8> = (0..again + len + 64).map(|_| rng.random()).collect();
        let before = memory.clone();
        let mut want = before.clone();
        want[dst..dst + len].copy_from_slice(&transpose_reference(
            &before[src..src + len],
            rows as usize,
            cols as usize,
            b,
        ));
        run(&spec, &mut memory, &[src as u32, dst as u32]);
        assert_same_bytes(
            &spec.name(),
            &memory[dst..dst + len],
            &want[dst..dst + len],
            b,
        );
        assert!(memory == want, "{}: bytes outside dst changed", spec.name());
        // Transposing back with the swapped shape gives the source again.
        let back = KernelSpec::Transpose {
            precision,
            rows: cols,
            cols: rows,
        };
        run(&back, &mut memory, &[dst as u32, again as u32]);
        assert_same_bytes(
            &format!("{} then {}", spec.name(), back.name()),
            &memory[again..again + len],
            &before[src..src + len],
            b,
        );
    }
    // Not in place, and offsets aligned to the element size.
    let spec = KernelSpec::Transpose {
        precision: Precision::F32,
        rows: 2,
        cols: 3,
    };
    assert!(spec.check_call(256, &[0, 24]).is_ok());
    assert_eq!(bad_argument(spec.check_call(256, &[0, 0]).map(|_| ())).0, 1);
    assert_eq!(
        bad_argument(spec.check_call(256, &[0, 20]).map(|_| ())).0,
        1
    );
    assert_eq!(
        bad_argument(spec.check_call(256, &[2, 64]).map(|_| ())).0,
        0
    );
    let ranges = spec.operand_ranges(&[0, 64]).expect("ranges");
    assert_eq!(
        ranges
            .iter()
            .map(|r| (r.arg, r.access, r.bytes.clone()))
            .collect::<Vec<_>>(),
        [(0, Access::Read, 0..24), (1, Access::Write, 64..88)]
    );
}

/// Runs a scale on `src` (elements of `precision`) and compares bit for bit with the host:
/// widen, one f32 multiply, one rounding to `precision` (nearest even, saturating).
/// Returns (elements whose f32 product was rounded on the store, elements that saturated).
fn check_scale(precision: Precision, src: &[u8], s: f32, in_place: bool) -> (usize, usize) {
    let b = precision.bytes() as usize;
    let n = src.len() / b;
    let spec = KernelSpec::Scale {
        precision,
        elements: n as u32,
    };
    let dst = if in_place {
        0
    } else {
        src.len().div_ceil(64) * 64
    };
    let mut memory = vec![0xa5u8; src.len().div_ceil(64) * 64 + src.len() + 64];
    memory[..src.len()].copy_from_slice(src);
    let mut want = Vec::with_capacity(src.len());
    let (mut rounded, mut saturated) = (0, 0);
    for i in 0..n {
        let product = load(src, 0, i, precision, 0) * s;
        let stored = encode_value(product, precision, 0);
        let back = load(&stored, 0, 0, precision, 0);
        if product.is_finite() && back != product {
            rounded += 1;
        }
        if product.is_finite() && product.abs() > 65504.0 && precision == Precision::F16 {
            saturated += 1;
        }
        want.extend(stored);
    }
    let before = memory.clone();
    run(&spec, &mut memory, &[0, dst as u32, s.to_bits()]);
    let what = format!("{} s = {s:e} (in place: {in_place})", spec.name());
    assert_same_elements(&what, &memory[dst..dst + src.len()], &want, precision);
    let end = dst + src.len();
    assert_eq!(&memory[end..], &before[end..], "{what}: bytes after dst");
    if !in_place {
        assert_eq!(&memory[..dst], &before[..dst], "{what}: source changed");
    }
    (rounded, saturated)
}

#[test]
fn scale_multiplies_in_f32_and_rounds_once_saturating() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5ca1e);
    let (mut rounded_f16, mut saturated_f16) = (0, 0);
    for precision in [Precision::F32, Precision::F16] {
        for case in 0..4 {
            let n = rng.random_range(1..=700usize);
            let src = random_tensor(&mut rng, precision, n, 30000.0);
            // Scales of either sign: one large enough that f16 products of the larger values
            // pass 65504, then magnitudes from 2^-20 (f16 subnormal results) to 8.
            let magnitude = match case {
                0 => rng.random_range(2.5f32..8.0),
                _ => rng.random_range(0.5f32..1.0) * 2f32.powi(rng.random_range(-19..=3)),
            };
            let s = if rng.random::<bool>() {
                -magnitude
            } else {
                magnitude
            };
            let (rounded, saturated) = check_scale(precision, &src, s, case % 2 == 1);
            if precision == Precision::F16 {
                rounded_f16 += rounded;
                saturated_f16 += saturated;
            }
        }
    }
    // f16 edge cases by hand, scaled by 3 in place, against values worked out on paper:
    // 21840 * 3 = 65520 would round to +inf unsaturated, the store saturates it to 65504
    // (21856 * 3 = 65568 too);
    // 1025 * 3 = 3075 and 1027 * 3 = 3081 are ties at f16's spacing of 2 and go to the even
    // neighbour (3076 up, 3080 down); (1 + 2^-10) * 3 = 3 + 1.5 ulp rounds up to 3 + 2 ulp;
    // infinities and signed zeros stay what they are.
    let cases = [
        (21840.0f32, 65504.0f32),
        (-21840.0, -65504.0),
        (21856.0, 65504.0),
        (1025.0, 3076.0),
        (1027.0, 3080.0),
        // 1 + 2^-10 times 3 is 3 + 1.5 * 2^-9; f16's spacing there is 2^-9.
        (1.0 + 1.0 / 1024.0, 3.0 + 2.0 / 512.0),
        (f32::INFINITY, f32::INFINITY),
        (f32::NEG_INFINITY, f32::NEG_INFINITY),
        (0.0, 0.0),
        (-0.0, -0.0),
    ];
    let f16s: Vec<u8> = cases
        .iter()
        .flat_map(|&(x, _)| f16::from_f32(x).to_le_bytes())
        .collect();
    let (rounded, saturated) = check_scale(Precision::F16, &f16s, 3.0, true);
    assert_eq!(
        (rounded, saturated),
        (6, 3),
        "hand-picked rounding and saturation"
    );
    let spec = KernelSpec::Scale {
        precision: Precision::F16,
        elements: cases.len() as u32,
    };
    let mut memory = vec![0u8; 64];
    memory[..f16s.len()].copy_from_slice(&f16s);
    run(&spec, &mut memory, &[0, 0, 3f32.to_bits()]);
    for (i, &(x, want)) in cases.iter().enumerate() {
        let got = f16::from_le_bytes([memory[2 * i], memory[2 * i + 1]]);
        assert_eq!(
            got.to_bits(),
            f16::from_f32(want).to_bits(),
            "{x} * 3: got {got}, want {want}"
        );
    }
    // Subnormal f16 results, a zero scale (signed zeros, inf * 0 = NaN), a NaN scale and f32
    // overflow to infinity.
    let small: Vec<u8> = [65504.0f32, 2048.0, 1.0, -3.0]
        .iter()
        .flat_map(|&v| f16::from_f32(v).to_le_bytes())
        .collect();
    check_scale(Precision::F16, &small, 2f32.powi(-30), false);
    check_scale(Precision::F16, &f16s, 0.0, false);
    check_scale(Precision::F16, &f16s, f32::NAN, false);
    check_scale(
        Precision::F32,
        &[1e30f32, -1e30, 1.0].map(f32::to_le_bytes).concat(),
        1e30,
        false,
    );
    // The random f16 cases rounded, and saturated (values up to 30000 times case 0's scale).
    assert!(rounded_f16 > 0, "no f16 product needed rounding");
    assert!(saturated_f16 > 0, "no f16 product saturated");
    // In place only when exactly aliased; value_bits is not an address or a scale exponent.
    let spec = KernelSpec::Scale {
        precision: Precision::F16,
        elements: 8,
    };
    assert!(spec.check_call(64, &[0, 0, f32::NAN.to_bits()]).is_ok());
    assert_eq!(
        bad_argument(spec.check_call(64, &[0, 2, 0]).map(|_| ())).0,
        1
    );
    assert_eq!(
        spec.operand_ranges(&[0, 16, u32::MAX])
            .expect("ranges")
            .len(),
        2
    );
}

/// Shape and run-time arguments of one attention block call.
#[derive(Clone, Copy, Debug)]
struct AttentionBlockCase {
    rows: usize,
    keys: usize,
    width: usize,
    causal: bool,
    scale: f32,
    row_offset: usize,
    key_offset: usize,
}

/// The running state of blocked attention: row maxima, row sums, unnormalized output (f32).
#[derive(Clone, Debug, PartialEq)]
struct AttentionState {
    m: Vec<f32>,
    l: Vec<f32>,
    o: Vec<f32>,
}

impl AttentionState {
    fn new(rows: usize, width: usize) -> Self {
        AttentionState {
            m: vec![f32::NEG_INFINITY; rows],
            l: vec![0.0; rows],
            o: vec![0.0; rows * width],
        }
    }
}

/// Visible keys of row `r` in a block: j < limit.
fn attention_limit(case: &AttentionBlockCase, r: usize) -> usize {
    if case.causal {
        (case.row_offset + r + 1)
            .saturating_sub(case.key_offset)
            .min(case.keys)
    } else {
        case.keys
    }
}

/// The spec's formulas in f32, in the kernel's order (separate multiplies and adds, sums in
/// key order, then added to the rescaled old value).
fn attention_block_reference(
    case: &AttentionBlockCase,
    s: &[f32],
    v: &[f32],
    state: &mut AttentionState,
) {
    let (keys, width) = (case.keys, case.width);
    for r in 0..case.rows {
        let limit = attention_limit(case, r);
        if limit == 0 {
            continue;
        }
        let m_old = state.m[r];
        let m_new = (0..limit).fold(m_old, |acc, j| acc.max(case.scale * s[r * keys + j]));
        let c = if m_old == f32::NEG_INFINITY {
            0.0
        } else {
            (m_old - m_new).exp()
        };
        let p: Vec<f32> = (0..limit)
            .map(|j| (case.scale * s[r * keys + j] - m_new).exp())
            .collect();
        let sum = p.iter().fold(0f32, |acc, &x| acc + x);
        state.l[r] = state.l[r] * c + sum;
        for e in 0..width {
            let pv = (0..limit).fold(0f32, |acc, j| acc + p[j] * v[j * width + e]);
            let o = &mut state.o[r * width + e];
            *o = *o * c + pv;
        }
        state.m[r] = m_new;
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Offsets of consecutive regions of these byte sizes, each 64-byte aligned, and the total.
fn layout(sizes: &[usize]) -> (Vec<usize>, usize) {
    let mut at = 0;
    let offsets = sizes
        .iter()
        .map(|size| {
            let here = at;
            at = (at + size).div_ceil(64) * 64;
            here
        })
        .collect();
    (offsets, at + 64)
}

/// Runs one AttentionBlock call on `state` in simulated memory (s and v as `precision` bytes)
/// and returns the new state read back; checks s, v and bytes outside the state are untouched.
fn run_attention_block(
    precision: Precision,
    case: &AttentionBlockCase,
    s: &[u8],
    v: &[u8],
    state: &AttentionState,
) -> AttentionState {
    let spec = KernelSpec::AttentionBlock {
        precision,
        rows: case.rows as u32,
        keys: case.keys as u32,
        width: case.width as u32,
        causal: case.causal,
    };
    let (m, l, o) = (
        f32_bytes(&state.m),
        f32_bytes(&state.l),
        f32_bytes(&state.o),
    );
    let (at, total) = layout(&[s.len(), v.len(), m.len(), l.len(), o.len()]);
    let mut memory = vec![0x5au8; total];
    for (offset, bytes) in at.iter().zip([s, v, &m, &l, &o]) {
        memory[*offset..*offset + bytes.len()].copy_from_slice(bytes);
    }
    let before = memory.clone();
    let args = [
        at[0] as u32,
        at[1] as u32,
        at[2] as u32,
        at[3] as u32,
        at[4] as u32,
        case.scale.to_bits(),
        case.row_offset as u32,
        case.key_offset as u32,
    ];
    run(&spec, &mut memory, &args);
    let what = format!("{} {case:?}", spec.name());
    assert_eq!(&memory[..at[2]], &before[..at[2]], "{what}: s or v changed");
    for (offset, len) in [(at[2], m.len()), (at[3], l.len()), (at[4], o.len())] {
        let gap = offset + len..(offset + len).div_ceil(64) * 64;
        assert_eq!(
            &memory[gap.clone()],
            &before[gap],
            "{what}: bytes after a state operand"
        );
    }
    AttentionState {
        m: f32_values(&memory[at[2]..at[2] + m.len()]),
        l: f32_values(&memory[at[3]..at[3] + l.len()]),
        o: f32_values(&memory[at[4]..at[4] + o.len()]),
    }
}

/// Bit-for-bit equality of two f32 states, reporting the first differing value.
#[track_caller]
fn assert_same_state(what: &str, got: &AttentionState, want: &AttentionState) {
    for (name, g, w) in [
        ("m", &got.m, &want.m),
        ("l", &got.l, &want.l),
        ("o", &got.o, &want.o),
    ] {
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{what}: {name}[{i}]: got {g:e}, want {w:e}"
            );
        }
    }
}

#[test]
fn attention_block_matches_the_online_softmax_formulas_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xa77e);
    let (mut masked_rows, mut partial_rows, mut fresh_rows, mut carried_rows) = (0, 0, 0, 0);
    for index in 0..24 {
        let precision = if index % 2 == 0 {
            Precision::F16
        } else {
            Precision::F32
        };
        let rows = rng.random_range(1..=5usize);
        let keys = rng.random_range(1..=40usize);
        let width = rng.random_range(1..=40usize);
        let causal = index % 4 < 2;
        let row_offset = rng.random_range(0..=6usize);
        // Keys from up to rows past the first query (so leading rows can be fully masked) to a
        // few before it (every row sees some keys).
        let key_offset = (row_offset + rng.random_range(0..=rows + 1)).saturating_sub(3);
        let case = AttentionBlockCase {
            rows,
            keys,
            width,
            causal,
            scale: rng.random_range(0.05f32..0.5),
            row_offset,
            key_offset,
        };
        let s = random_tensor(&mut rng, precision, rows * keys, 12.0);
        let v = random_tensor(&mut rng, precision, keys * width, 3.0);
        let s32: Vec<f32> = (0..rows * keys)
            .map(|i| load(&s, 0, i, precision, 0))
            .collect();
        let v32: Vec<f32> = (0..keys * width)
            .map(|i| load(&v, 0, i, precision, 0))
            .collect();
        // A state as a previous block leaves it: some rows fresh (m = -inf, l = 0, o = 0),
        // others with a finite maximum (sometimes above every score of this block), a positive
        // sum and any output.
        let mut state = AttentionState::new(rows, width);
        for r in 0..rows {
            if rng.random_range(0..3) == 0 {
                continue;
            }
            state.m[r] = rng.random_range(-3.0f32..4.0);
            state.l[r] = rng.random_range(0.5f32..20.0);
            for e in 0..width {
                state.o[r * width + e] = rng.random_range(-30.0f32..30.0);
            }
        }
        let mut want = state.clone();
        attention_block_reference(&case, &s32, &v32, &mut want);
        for r in 0..rows {
            let limit = attention_limit(&case, r);
            if limit == 0 {
                masked_rows += 1;
                // Left exactly as it was.
                assert_eq!(want.m[r].to_bits(), state.m[r].to_bits());
            } else {
                if limit < keys {
                    partial_rows += 1;
                }
                if state.m[r] == f32::NEG_INFINITY {
                    fresh_rows += 1;
                } else {
                    carried_rows += 1;
                }
            }
        }
        let got = run_attention_block(precision, &case, &s, &v, &state);
        assert_same_state(&format!("{precision:?} {case:?}"), &got, &want);
        assert!(
            got.m
                .iter()
                .chain(&got.l)
                .chain(&got.o)
                .all(|x| !x.is_nan()),
            "{case:?}: NaN in the state"
        );
    }
    assert!(masked_rows > 0, "no row was fully masked in a block");
    assert!(partial_rows > 0, "no row was partly masked");
    assert!(
        fresh_rows > 0 && carried_rows > 0,
        "{fresh_rows} {carried_rows}"
    );
}

#[test]
fn attention_blocks_then_finish_equal_softmax_times_v_over_all_keys() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xf1a5);
    for index in 0..8 {
        let precision = if index % 2 == 0 {
            Precision::F16
        } else {
            Precision::F32
        };
        let causal = index % 4 >= 2;
        let rows = rng.random_range(1..=5usize);
        let width = rng.random_range(1..=40usize);
        let blocks: Vec<usize> = (0..rng.random_range(2..=3))
            .map(|_| rng.random_range(1..=40usize))
            .collect();
        let total: usize = blocks.iter().sum();
        // Causal queries sit inside the key range, so later blocks hide keys (or all keys) from
        // the first rows; the first key is visible to every row.
        let row_offset = if causal {
            rng.random_range(0..total)
        } else {
            0
        };
        let scale = rng.random_range(0.1f32..0.4);
        let q_k = random_tensor(&mut rng, precision, rows * total, 12.0);
        let v = random_tensor(&mut rng, precision, total * width, 3.0);
        let s_all: Vec<f32> = (0..rows * total)
            .map(|i| load(&q_k, 0, i, precision, 0))
            .collect();
        let v_all: Vec<f32> = (0..total * width)
            .map(|i| load(&v, 0, i, precision, 0))
            .collect();
        let mut state = AttentionState::new(rows, width);
        let mut key_offset = 0;
        for &keys in &blocks {
            let case = AttentionBlockCase {
                rows,
                keys,
                width,
                causal,
                scale,
                row_offset,
                key_offset,
            };
            let s: Vec<f32> = (0..rows)
                .flat_map(|r| s_all[r * total + key_offset..r * total + key_offset + keys].to_vec())
                .collect();
            let vb = &v_all[key_offset * width..(key_offset + keys) * width];
            let bytes = |values: &[f32]| -> Vec<u8> {
                values
                    .iter()
                    .flat_map(|&x| encode_value(x, precision, 0))
                    .collect()
            };
            let mut want = state.clone();
            attention_block_reference(&case, &s, vb, &mut want);
            state = run_attention_block(precision, &case, &bytes(&s), &bytes(vb), &state);
            assert_same_state(&format!("block at key {key_offset}"), &state, &want);
            key_offset += keys;
        }
        // Normalize in f32 and compare with softmax(scale * q.k) v over all visible keys in f64.
        let finish = KernelSpec::AttentionFinish {
            precision: Precision::F32,
            rows: rows as u32,
            width: width as u32,
        };
        let (o, l) = (f32_bytes(&state.o), f32_bytes(&state.l));
        let (at, size) = layout(&[o.len(), l.len(), o.len()]);
        let mut memory = vec![0u8; size];
        memory[at[0]..at[0] + o.len()].copy_from_slice(&o);
        memory[at[1]..at[1] + l.len()].copy_from_slice(&l);
        run(
            &finish,
            &mut memory,
            &[at[0] as u32, at[1] as u32, at[2] as u32],
        );
        let got = f32_values(&memory[at[2]..at[2] + o.len()]);
        for r in 0..rows {
            let visible = if causal {
                (row_offset + r + 1).min(total)
            } else {
                total
            };
            let x: Vec<f64> = (0..visible)
                .map(|j| f64::from(scale) * f64::from(s_all[r * total + j]))
                .collect();
            let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let p: Vec<f64> = x.iter().map(|x| (x - m).exp()).collect();
            let sum: f64 = p.iter().sum();
            for e in 0..width {
                let terms = (0..visible).map(|j| p[j] * f64::from(v_all[j * width + e]));
                let want: f64 = terms.clone().sum::<f64>() / sum;
                // Relative to the size of the weighted values, so cancellation is not penalized.
                let magnitude = terms.map(f64::abs).sum::<f64>() / sum;
                let error = (f64::from(got[r * width + e]) - want).abs();
                assert!(
                    error <= 1e-5 * magnitude.max(f64::MIN_POSITIVE),
                    "{precision:?} causal {causal} blocks {blocks:?} row {r} col {e}: got {}, want {want} (error {error:e}, magnitude {magnitude:e})",
                    got[r * width + e]
                );
            }
        }
    }
}

#[test]
fn attention_finish_divides_rounds_once_and_zeroes_empty_rows() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xf1e1);
    // (output precision, rows, width, o, l)
    type FinishCase = (Precision, usize, usize, Vec<f32>, Vec<f32>);
    let mut cases: Vec<FinishCase> = Vec::new();
    for precision in [
        Precision::F16,
        Precision::F32,
        Precision::F16,
        Precision::F32,
    ] {
        let rows = rng.random_range(1..=5usize);
        let width = rng.random_range(1..=40usize);
        let l: Vec<f32> = (0..rows)
            .map(|r| {
                if r == rows / 2 {
                    0.0
                } else {
                    rng.random_range(0.7f32..30.0)
                }
            })
            .collect();
        let o = (0..rows * width)
            .map(|_| rng.random_range(-100.0f32..100.0))
            .collect();
        cases.push((precision, rows, width, o, l));
    }
    // By hand in f16: 3 / 7 rounds to nearest even; 2e6 / 3 saturates to 65504 (and its
    // negative); a tiny quotient is an f16 subnormal; an empty row is 0 whatever o holds.
    cases.push((
        Precision::F16,
        2,
        4,
        vec![3.0, 2e6, -2e6, 1e-6, 5.0, f32::NAN, -1.0, 7.0],
        vec![7.0, 0.0],
    ));
    for (precision, rows, width, o, l) in cases {
        let spec = KernelSpec::AttentionFinish {
            precision,
            rows: rows as u32,
            width: width as u32,
        };
        let b = precision.bytes() as usize;
        let (at, size) = layout(&[o.len() * 4, l.len() * 4, o.len() * b]);
        let mut memory: Vec<u8> = (0..size).map(|_| rng.random()).collect();
        memory[at[0]..at[0] + o.len() * 4].copy_from_slice(&f32_bytes(&o));
        memory[at[1]..at[1] + l.len() * 4].copy_from_slice(&f32_bytes(&l));
        let mut want = memory.clone();
        for r in 0..rows {
            for e in 0..width {
                let y = if l[r] == 0.0 {
                    0.0
                } else {
                    o[r * width + e] / l[r]
                };
                store(&mut want, at[2], r * width + e, precision, 0, y);
            }
        }
        run(
            &spec,
            &mut memory,
            &[at[0] as u32, at[1] as u32, at[2] as u32],
        );
        let end = at[2] + o.len() * b;
        assert_same_elements(
            &spec.name(),
            &memory[at[2]..end],
            &want[at[2]..end],
            precision,
        );
        assert!(memory == want, "{}: bytes outside dst changed", spec.name());
        if width == 4 {
            let got: Vec<f32> = (0..8)
                .map(|i| load(&memory, at[2], i, precision, 0))
                .collect();
            assert_eq!(got[0], f16::from_f32(3.0 / 7.0).to_f32());
            assert_eq!((got[1], got[2]), (65504.0, -65504.0));
            assert!(got[3] > 0.0 && got[3] < 6.2e-5, "{}", got[3]);
            assert!(got[4..].iter().all(|&x| x == 0.0), "{got:?}");
        }
    }
}

#[test]
fn attention_operands_are_f32_state_and_precision_inputs() {
    let block = KernelSpec::AttentionBlock {
        precision: Precision::F16,
        rows: 2,
        keys: 3,
        width: 5,
        causal: true,
    };
    assert_eq!(block.arg_count(), 8);
    // Arguments 5..=7 are a scale and two offsets, not addresses: any value is accepted.
    let args = [0, 64, 128, 192, 256, f32::NAN.to_bits(), u32::MAX, u32::MAX];
    let ranges = block.check_call(512, &args).expect("ranges");
    assert_eq!(
        ranges
            .iter()
            .map(|r| (r.arg, r.what, r.access, r.bytes.clone()))
            .collect::<Vec<_>>(),
        [
            (0, "s", Access::Read, 0..12),
            (1, "v", Access::Read, 64..94),
            (2, "m", Access::ReadWrite, 128..136),
            (3, "l", Access::ReadWrite, 192..200),
            (4, "o", Access::ReadWrite, 256..296),
        ]
    );
    // The state may not alias anything, not even exactly; f32 state needs 4-byte alignment.
    assert_eq!(
        bad_argument(
            block
                .check_call(512, &[0, 64, 128, 128, 256, 0, 0, 0])
                .map(|_| ())
        )
        .0,
        2
    );
    assert_eq!(
        bad_argument(
            block
                .check_call(512, &[0, 64, 0, 192, 256, 0, 0, 0])
                .map(|_| ())
        )
        .0,
        2
    );
    assert_eq!(
        bad_argument(
            block
                .check_call(512, &[0, 64, 130, 192, 256, 0, 0, 0])
                .map(|_| ())
        )
        .0,
        2
    );
    assert_eq!(
        bad_argument(block.check_call(512, &[0, 64, 128, 192]).map(|_| ())).0,
        4
    );
    let finish = KernelSpec::AttentionFinish {
        precision: Precision::F16,
        rows: 2,
        width: 5,
    };
    let ranges = finish.check_call(512, &[0, 64, 128]).expect("ranges");
    assert_eq!(
        ranges
            .iter()
            .map(|r| (r.arg, r.what, r.access, r.bytes.clone()))
            .collect::<Vec<_>>(),
        [
            (0, "o", Access::Read, 0..40),
            (1, "l", Access::Read, 64..72),
            (2, "dst", Access::Write, 128..148),
        ]
    );
    assert_eq!(
        bad_argument(finish.check_call(512, &[0, 64, 0]).map(|_| ())).0,
        2
    );
}

#[track_caller]
fn bad_argument(result: Result<(), KernelRunError>) -> (usize, String) {
    match result {
        Err(KernelRunError::BadArgument { index, detail, .. }) => (index, detail),
        other => panic!("expected BadArgument, got {other:?}"),
    }
}

#[test]
fn runner_rejects_bad_arguments_without_touching_memory() {
    let copy = KernelSpec::Copy { bytes: 64 };
    let mut memory = vec![5u8; 256];
    let lib = library();
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0, 200])).0,
        1,
        "destination beyond memory"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0, 32])).0,
        1,
        "overlapping copy"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[0])).0,
        1,
        "missing argument"
    );
    assert_eq!(
        bad_argument(lib.run(&copy, &mut memory, &[u32::MAX - 3, 100])).0,
        0,
        "offset overflow"
    );
    let gemm = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Standard,
        k: 16,
        c: 16,
        rows: vec![2],
        accumulate: true,
    };
    let mut memory = vec![5u8; 4096];
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 1024, 1, 0, 0])).0,
        3,
        "row index"
    );
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[1, 512, 1024, 0, 0, 0])).0,
        0,
        "misaligned"
    );
    let (index, detail) = bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 1024, 0, 32, 0]));
    assert_eq!(index, 4, "{detail}");
    assert_eq!(
        bad_argument(lib.run(&gemm, &mut memory, &[0, 512, 4064, 0, 0, 0])).0,
        2,
        "C beyond memory"
    );
    assert!(
        memory.iter().all(|&b| b == 5),
        "a rejected call changed memory"
    );
    // In place is allowed where the kernel supports it, exactly aliased only.
    let gelu = KernelSpec::Gelu {
        precision: Precision::F16,
        form: GeluForm::Tanh,
        elements: 8,
    };
    assert!(gelu.check_call(64, &[0, 0]).is_ok());
    assert_eq!(bad_argument(gelu.check_call(64, &[0, 2]).map(|_| ())).0, 1);
    let ranges = gemm
        .operand_ranges(&[0, 512, 1024, 0, 0, 0])
        .expect("ranges");
    assert_eq!(ranges[2].access, Access::ReadWrite);
    assert_eq!(ranges[2].bytes, 1024..1024 + 2 * 16 * 2);
}

#[test]
fn invalid_specs_are_refused_before_compiling() {
    let bad = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Standard,
        k: 24,
        c: 16,
        rows: vec![4],
        accumulate: false,
    };
    assert!(matches!(
        library().load(&bad),
        Err(KernelError::InvalidSpec { .. })
    ));
    let fp8_gelu = KernelSpec::Gelu {
        precision: Precision::F8E4M3,
        form: GeluForm::Erf,
        elements: 4,
    };
    let message = library().load(&fp8_gelu).expect_err("fp8 gelu").to_string();
    assert!(
        message.contains("gelu_erf_f8_n4") && message.contains("f8"),
        "{message}"
    );
    // Scale is arithmetic (f16 or f32 only); Transpose moves bytes and takes FP8.
    let fp8_scale = KernelSpec::Scale {
        precision: Precision::F8E4M3,
        elements: 4,
    };
    let message = library()
        .load(&fp8_scale)
        .expect_err("fp8 scale")
        .to_string();
    assert!(message.contains("scale_f8_n4"), "{message}");
    for bad in [
        KernelSpec::Transpose {
            precision: Precision::F16,
            rows: 0,
            cols: 4,
        },
        KernelSpec::Scale {
            precision: Precision::F16,
            elements: 0,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F8E4M3,
            rows: 1,
            keys: 1,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F16,
            rows: 1,
            keys: 0,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionBlock {
            precision: Precision::F16,
            rows: 1,
            keys: 65_537,
            width: 1,
            causal: false,
        },
        KernelSpec::AttentionFinish {
            precision: Precision::F8E5M2,
            rows: 1,
            width: 1,
        },
        KernelSpec::AttentionFinish {
            precision: Precision::F32,
            rows: 1,
            width: 0,
        },
    ] {
        assert!(
            matches!(library().load(&bad), Err(KernelError::InvalidSpec { .. })),
            "{}",
            bad.name()
        );
    }
}

#[test]
fn runner_is_shared_across_rayon_threads() {
    use rayon::prelude::*;
    let spec = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Interleaved,
        k: 32,
        c: 32,
        rows: vec![8],
        accumulate: false,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(0x7a);
    let tiles: Vec<Vec<u8>> = (0..16)
        .map(|_| {
            let mut memory = vec![0u8; 8192];
            let a = random_tensor(&mut rng, Precision::F16, 8 * 32, 1.0);
            let b = random_tensor(&mut rng, Precision::F16, 32 * 32, 1.0);
            memory[..a.len()].copy_from_slice(&a);
            memory[1024..1024 + b.len()].copy_from_slice(&b);
            memory
        })
        .collect();
    let mut serial = tiles.clone();
    for memory in &mut serial {
        run(&spec, memory, &[0, 1024, 4096, 0, 0, 0]);
    }
    let mut parallel = tiles;
    parallel
        .par_iter_mut()
        .for_each(|memory| run(&spec, memory, &[0, 1024, 4096, 0, 0, 0]));
    assert_eq!(serial, parallel);
    assert_ne!(
        serial[0][4096..4608],
        vec![0u8; 512][..],
        "the GEMM wrote nothing"
    );
    let f = f16::from_le_bytes([serial[0][4096], serial[0][4097]]);
    assert!(f.is_finite());
}

/// Throughput of the F16 GEMM kernel at the per-tile shape of a 4096^3 GEMM on 1472 tiles
/// (about 176 output rows x 64 columns per tile, K in blocks of 64). Ignored by default (it
/// measures, it does not check); run with
/// `cargo test --release -p ipu-device --test all gemm_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn gemm_throughput() {
    use rayon::prelude::*;
    use std::time::Instant;
    let rows = 176u32;
    let spec = KernelSpec::Gemm {
        input: Precision::F16,
        partials: Precision::F16,
        weights: MemoryClass::Interleaved,
        k: 64,
        c: 64,
        rows: vec![rows],
        accumulate: true,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let (a_off, b_off, c_off) = (0usize, 32 * 1024, 48 * 1024);
    let tile = || {
        let mut memory = vec![0u8; 96 * 1024];
        let a = random_tensor(
            &mut ChaCha8Rng::seed_from_u64(2),
            Precision::F16,
            rows as usize * 64,
            1.0,
        );
        memory[a_off..a_off + a.len()].copy_from_slice(&a);
        memory
    };
    let b = random_tensor(&mut rng, Precision::F16, 64 * 64, 0.01);
    let args = [a_off as u32, b_off as u32, c_off as u32, 0, 0, 0];
    let calls = 2000usize;
    let flops_per_call = 2.0 * f64::from(rows) * 64.0 * 64.0;
    let mut memory = tile();
    memory[b_off..b_off + b.len()].copy_from_slice(&b);
    run(&spec, &mut memory, &args);
    let started = Instant::now();
    for _ in 0..calls {
        run(&spec, &mut memory, &args);
    }
    let one = started.elapsed().as_secs_f64();
    let threads = rayon::current_num_threads();
    let mut tiles: Vec<Vec<u8>> = (0..threads * 4).map(|_| memory.clone()).collect();
    let started = Instant::now();
    tiles.par_iter_mut().for_each(|m| {
        for _ in 0..calls / 4 {
            run(&spec, m, &args);
        }
    });
    let all = started.elapsed().as_secs_f64();
    let single = flops_per_call * calls as f64 / one / 1e9;
    let parallel = flops_per_call * (calls / 4 * threads * 4) as f64 / all / 1e9;
    let total_flops = 2.0 * 4096f64.powi(3);
    eprintln!(
        "gemm f16 k64 c64 r{rows}: {:.1} us/call, {single:.1} GFLOP/s on 1 thread, {parallel:.1} GFLOP/s on {threads} threads; 4096^3 kernel time {:.2} s",
        one / calls as f64 * 1e6,
        total_flops / (parallel * 1e9)
    );
}
