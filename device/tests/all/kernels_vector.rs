//! Vector kernels (GeLU, softmax, layer norm, reduce-add, copy and fill, transpose, scale)
//! against plain-Rust host references on seeded shapes and data.

use half::f16;
use ipu_device::kernels::spec::GeluForm;
use ipu_device::kernels::Access;
use ipu_device::{KernelSpec, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::{bad_argument, bytes_of, run};
use crate::kernels_support::{
    assert_same_elements, encode_value, erf, f16_ulps, load, random_tensor,
};

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

/// `copy_slice` reads the slice its counter names (clamped to the store's last slice) and
/// nothing else; `count` advances the counter by one, wrapping.
#[test]
fn copy_slice_reads_the_counted_slice_and_count_advances_the_counter() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5c1e);
    let before: Vec<u8> = (0..4096).map(|_| rng.random()).collect();
    let spec = KernelSpec::CopySlice {
        bytes: 40,
        stride: 48,
        slices: 5,
    };
    // Store at 1000 (5 slices of 48 bytes), destination 3000, counter at 2000.
    for (counter, slice) in [(0u32, 0usize), (3, 3), (4, 4), (9, 4), (u32::MAX, 4)] {
        let mut memory = before.clone();
        memory[2000..2004].copy_from_slice(&counter.to_le_bytes());
        let unchanged = memory.clone();
        run(&spec, &mut memory, &[1000, 3000, 2000]);
        let from = 1000 + slice * 48;
        assert_eq!(
            &memory[3000..3040],
            &unchanged[from..from + 40],
            "counter {counter}"
        );
        assert_eq!(&memory[..3000], &unchanged[..3000], "counter {counter}");
        assert_eq!(&memory[3040..], &unchanged[3040..], "counter {counter}");
    }
    let mut memory = before.clone();
    memory[64..68].copy_from_slice(&41u32.to_le_bytes());
    run(&KernelSpec::Count, &mut memory, &[64]);
    assert_eq!(&memory[64..68], &42u32.to_le_bytes());
    assert_eq!(&memory[..64], &before[..64]);
    assert_eq!(&memory[68..], &before[68..]);
    memory[64..68].copy_from_slice(&u32::MAX.to_le_bytes());
    run(&KernelSpec::Count, &mut memory, &[64]);
    assert_eq!(&memory[64..68], &0u32.to_le_bytes());
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

/// A store whose slices would overlap, or that spans more than a 32-bit address, is refused
/// by name before any code is built.
#[test]
fn copy_slice_refuses_overlapping_or_huge_stores() {
    let ok = KernelSpec::CopySlice {
        bytes: 64,
        stride: 64,
        slices: 27,
    };
    assert!(ok.validate().is_ok());
    let overlapping = KernelSpec::CopySlice {
        bytes: 64,
        stride: 48,
        slices: 2,
    };
    let error = overlapping.validate().unwrap_err().to_string();
    assert!(
        error.contains("48 bytes apart, less than the 64 bytes"),
        "{error}"
    );
    let huge = KernelSpec::CopySlice {
        bytes: 64,
        stride: 1 << 30,
        slices: 8,
    };
    let error = huge.validate().unwrap_err().to_string();
    assert!(error.contains("beyond the 32-bit address space"), "{error}");
    let empty = KernelSpec::CopySlice {
        bytes: 64,
        stride: 64,
        slices: 0,
    };
    assert!(empty.validate().is_err());
}
