//! The attention kernels: one key block of the online softmax, the finish, and their
//! composition over all keys, bit for bit against the formulas.

use half::f16;
use ipu_device::kernels::Access;
use ipu_device::{KernelSpec, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::{bad_argument, run};
use crate::kernels_support::{assert_same_elements, encode_value, load, random_tensor, store};

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

pub(crate) fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32_values(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// Offsets of consecutive regions of these byte sizes, each 64-byte aligned, and the total.
pub(crate) fn layout(sizes: &[usize]) -> (Vec<usize>, usize) {
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
