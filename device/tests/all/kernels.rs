//! Every compiled kernel against a plain-Rust host reference on seeded random shapes and data,
//! plus the runner's argument validation. Each distinct spec compiles once per cache.

use half::f16;
use ipu_device::kernels::spec::{ElementOrder, KernelRunError};
use ipu_device::kernels::{Access, KernelError};
use ipu_device::{KernelRunner, KernelSpec, MemoryClass, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels_support::{
    assert_same_elements, encode_value, library, load, random_tensor, store,
};

pub(crate) const MEMORY: usize = 96 * 1024;

pub(crate) fn run(spec: &KernelSpec, memory: &mut [u8], args: &[u32]) {
    library()
        .run(spec, memory, args)
        .unwrap_or_else(|e| panic!("{}: {e}", spec.name()));
}

/// Index of (r, c) in the 16-column panel order every AMP order uses.
pub(crate) fn panel(r: usize, c: usize, panel_rows: usize) -> usize {
    ((c / 16) * panel_rows + r) * 16 + c % 16
}

pub(crate) fn bytes_of(
    memory: &[u8],
    offset: usize,
    elements: usize,
    precision: Precision,
) -> Vec<u8> {
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
    // The row-major-A form: its own name, the same source and cost.
    let target = ipu_device::Target::c600();
    assert_eq!(gemm.clone().with_row_major(false, false), gemm);
    for (a, c, name) in [
        (true, false, "gemm_f8_interleaved_arow_k32_c64_r32_r34"),
        (false, true, "gemm_f8_interleaved_crow_k32_c64_r32_r34"),
        (true, true, "gemm_f8_interleaved_arow_crow_k32_c64_r32_r34"),
    ] {
        let rows = gemm.clone().with_row_major(a, c);
        assert_eq!(rows.name(), name);
        assert_eq!(rows.gemm_row_major(), (a, c));
        assert_eq!(rows.source_file(), gemm.source_file());
        assert!(rows.is_gemm() && gemm.is_gemm());
        assert_eq!(
            ipu_device::cost::kernel_cycles(&rows, &target),
            ipu_device::cost::kernel_cycles(&gemm, &target)
        );
    }
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

/// The case's kernel: [`KernelSpec::Gemm`], or with a row-major A or C (`row_major`)
/// [`KernelSpec::GemmRowMajor`].
fn gemm_spec(case: &GemmCase, (row_a, row_c): (bool, bool)) -> KernelSpec {
    let spec = KernelSpec::Gemm {
        input: case.input,
        partials: case.partials,
        weights: case.weights,
        k: case.k,
        c: case.c,
        rows: case.rows.clone(),
        accumulate: case.accumulate,
    };
    spec.with_row_major(row_a, row_c)
}

/// Runs every row entry of the case on fresh random data and compares bit for bit with the
/// reference: f32 fused multiply-adds in order over the K block, then one rounding into the
/// partials (after adding the old partial when accumulating). `row_major`: whether A and C
/// are row-major.
fn check_gemm(case: &GemmCase, row_major: (bool, bool), rng: &mut ChaCha8Rng) {
    let (row_a, row_c) = row_major;
    let spec = gemm_spec(case, row_major);
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
                    let at = if row_a {
                        r * k + kk
                    } else {
                        panel(r, kk, rows)
                    };
                    let x = load(&memory, a_off, at, case.input, case.a_scale);
                    let y = load(&memory, b_off, panel(kk, j, k), case.input, case.b_scale);
                    sum = x.mul_add(y, sum);
                }
                let at = if row_c { r * c + j } else { panel(r, j, rows) };
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
        for row_major in [(false, false), (true, false), (false, true), (true, true)] {
            check_gemm(case, row_major, &mut rng);
        }
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

#[track_caller]
pub(crate) fn bad_argument(result: Result<(), KernelRunError>) -> (usize, String) {
    match result {
        Err(KernelRunError::BadArgument { index, detail, .. }) => (index, detail),
        other => panic!("expected BadArgument, got {other:?}"),
    }
}
