//! The rows formulation of flash attention (queries as AMP rows, keys as columns), as the
//! hardware-measured runs computed it: one key block's softmax relative to its own maxima, and
//! the merge of blocks into the running state, bit for bit against the spec's formulas; and
//! their composition over several blocks against an f64 softmax.

use ipu_device::{KernelSpec, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::{panel, run};
use crate::kernels_attention::{f32_bytes, layout};
use crate::kernels_attention_columns::{assert_bits, pad16, partials, values};
use crate::kernels_support::{encode_value, load, random_tensor};

/// The spec's block softmax: p (panel order, `rows` panel rows), m_blk and l_blk.
fn softmax_reference(
    (rows, keys, precision): (usize, usize, Precision),
    s: &[f32],
    scale: f32,
    limit: &dyn Fn(usize) -> usize,
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let kp = pad16(keys);
    let round = |x: f32| load(&encode_value(x, precision, 0), 0, 0, precision, 0);
    let mut p = vec![0f32; rows * kp];
    let (mut m, mut l) = (vec![f32::NEG_INFINITY; rows], vec![0f32; rows]);
    for r in 0..rows {
        let visible = limit(r);
        let top = (0..visible).fold(f32::NEG_INFINITY, |acc, j| {
            acc.max(scale * s[panel(r, j, rows)])
        });
        let mut sum = 0f32;
        for j in 0..visible {
            let i = panel(r, j, rows);
            p[i] = round((scale * s[i] - top).exp());
            sum += p[i];
        }
        if visible > 0 {
            m[r] = top;
        }
        l[r] = sum;
    }
    (p, m, l)
}

/// Runs the block softmax on `s` (partials bytes); returns p, m_blk, l_blk.
fn run_softmax(
    spec: &KernelSpec,
    (rows, keys, precision): (usize, usize, Precision),
    s: &[u8],
    (scale, row_offset, key_offset): (f32, usize, usize),
) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let kp = pad16(keys);
    let p_bytes = rows * kp * precision.bytes() as usize;
    let (at, total) = layout(&[s.len(), p_bytes, rows * 4, rows * 4]);
    let mut memory = vec![0x5au8; total];
    memory[at[0]..at[0] + s.len()].copy_from_slice(s);
    let args = [
        at[0] as u32,
        at[1] as u32,
        at[2] as u32,
        at[3] as u32,
        scale.to_bits(),
        row_offset as u32,
        key_offset as u32,
    ];
    run(spec, &mut memory, &args);
    assert_eq!(&memory[at[0]..at[0] + s.len()], s, "s changed");
    (
        values(&memory, at[1], rows * kp, precision),
        values(&memory, at[2], rows, Precision::F32),
        values(&memory, at[3], rows, Precision::F32),
    )
}

/// Random shapes (keys not whole groups, causal offsets hiding whole rows or part of them):
/// p in the AMP order with the queries as panel rows, the block's maxima and sums, bit for bit;
/// hidden keys and padding columns of p are 0, a row with no visible key gets -inf and 0.
#[test]
fn attention_rows_match_the_formulas_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5057);
    let mut hidden_rows = 0;
    for index in 0..24 {
        let precision = [Precision::F16, Precision::F32][index % 2];
        let (rows, keys) = (rng.random_range(1..=30usize), rng.random_range(1..=40usize));
        let causal = index % 4 < 2;
        let scale = rng.random_range(0.05..0.5f32);
        let (row_offset, key_offset) = (rng.random_range(0..40usize), rng.random_range(0..40usize));
        let limit = |r: usize| {
            if causal {
                (row_offset + r + 1).saturating_sub(key_offset).min(keys)
            } else {
                keys
            }
        };
        hidden_rows += (0..rows).filter(|&r| limit(r) == 0).count();
        let part = partials(precision);
        let s_bytes = random_tensor(&mut rng, part, rows * pad16(keys), 8.0);
        let s = values(&s_bytes, 0, rows * pad16(keys), part);
        let spec = KernelSpec::AttentionRows {
            precision,
            rows: rows as u32,
            keys: keys as u32,
            causal,
        };
        let shape = (rows, keys, precision);
        let got = run_softmax(&spec, shape, &s_bytes, (scale, row_offset, key_offset));
        let want = softmax_reference(shape, &s, scale, &limit);
        let what = format!("{spec:?}");
        assert_bits(&format!("{what}: p"), &got.0, &want.0);
        assert_bits(&format!("{what}: m_blk"), &got.1, &want.1);
        assert_bits(&format!("{what}: l_blk"), &got.2, &want.2);
    }
    assert!(hidden_rows > 0, "the cases cover rows with no visible key");
}

/// The running state: maxima, sums, output (f32, row-major).
#[derive(Clone, Debug)]
struct State {
    m: Vec<f32>,
    l: Vec<f32>,
    o: Vec<f32>,
}

/// Runs one merge on `state`; returns the new state (a first block does not read the old).
fn run_merge(spec: &KernelSpec, pv: &[u8], block: (&[f32], &[f32]), state: &State) -> State {
    let (rows, width) = match spec {
        KernelSpec::AttentionRowsMerge { rows, width, .. } => (*rows as usize, *width as usize),
        _ => unreachable!("a merge"),
    };
    let parts = [
        f32_bytes(block.0),
        f32_bytes(block.1),
        f32_bytes(&state.m),
        f32_bytes(&state.l),
        f32_bytes(&state.o),
    ];
    let (at, total) = layout(&[
        pv.len(),
        parts[0].len(),
        parts[1].len(),
        parts[2].len(),
        parts[3].len(),
        parts[4].len(),
    ]);
    let mut memory = vec![0x7fu8; total];
    memory[at[0]..at[0] + pv.len()].copy_from_slice(pv);
    for (k, bytes) in parts.iter().enumerate() {
        memory[at[k + 1]..at[k + 1] + bytes.len()].copy_from_slice(bytes);
    }
    let args: Vec<u32> = at.iter().map(|&a| a as u32).collect();
    run(spec, &mut memory, &args);
    State {
        m: values(&memory, at[3], rows, Precision::F32),
        l: values(&memory, at[4], rows, Precision::F32),
        o: values(&memory, at[5], rows * width, Precision::F32),
    }
}

/// The merge's formulas, bit for bit, for the first, a middle, the last and a single block;
/// a block with no visible key leaves a row's state as it was (b = 0), and a row whose running
/// state is empty takes the block's (a = 0).
#[test]
fn attention_rows_merge_matches_the_formulas_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x3e6);
    for (index, (first, last)) in [(true, false), (false, false), (false, true), (true, true)]
        .into_iter()
        .cycle()
        .take(8)
        .enumerate()
    {
        let precision = [Precision::F16, Precision::F32][index / 4];
        let (rows, width) = (13usize, 21usize);
        let part = partials(precision);
        let pv_bytes = random_tensor(&mut rng, part, rows * pad16(width), 4.0);
        let pv = values(&pv_bytes, 0, rows * pad16(width), part);
        let mut m_blk: Vec<f32> = (0..rows).map(|_| rng.random_range(-2.0..2.0f32)).collect();
        let l_blk: Vec<f32> = (0..rows).map(|_| rng.random_range(0.5..4.0f32)).collect();
        m_blk[2] = f32::NEG_INFINITY;
        let mut state = State {
            m: (0..rows).map(|_| rng.random_range(-2.0..2.0f32)).collect(),
            l: (0..rows).map(|_| rng.random_range(0.5..4.0f32)).collect(),
            o: (0..rows * width)
                .map(|_| rng.random_range(-3.0..3.0f32))
                .collect(),
        };
        state.m[5] = f32::NEG_INFINITY;
        let spec = KernelSpec::AttentionRowsMerge {
            precision,
            rows: rows as u32,
            width: width as u32,
            first,
            last,
        };
        let got = run_merge(&spec, &pv_bytes, (&m_blk, &l_blk), &state);
        let mut want = state.clone();
        for r in 0..rows {
            let (a, b, m) = if first {
                (0.0, 1.0, m_blk[r])
            } else {
                let top = state.m[r].max(m_blk[r]);
                let a = if state.m[r] == f32::NEG_INFINITY {
                    0.0
                } else {
                    (state.m[r] - top).exp()
                };
                let b = if m_blk[r] == f32::NEG_INFINITY {
                    0.0
                } else {
                    (m_blk[r] - top).exp()
                };
                (a, b, top)
            };
            want.m[r] = m;
            want.l[r] = if first {
                l_blk[r]
            } else {
                state.l[r] * a + l_blk[r] * b
            };
            for e in 0..width {
                let i = r * width + e;
                let merged = if first {
                    pv[panel(r, e, rows)]
                } else {
                    state.o[i] * a + pv[panel(r, e, rows)] * b
                };
                want.o[i] = if !last {
                    merged
                } else if want.l[r] == 0.0 {
                    0.0
                } else {
                    merged / want.l[r]
                };
            }
        }
        let what = format!("{spec:?}");
        assert_bits(&format!("{what}: m"), &got.m, &want.m);
        assert_bits(&format!("{what}: l"), &got.l, &want.l);
        assert_bits(&format!("{what}: o"), &got.o, &want.o);
    }
}

/// Blocks of a head's keys through the softmax, `p V` in f32 and the merges: the rows of
/// softmax(scale q k^T) v, against f64, causal or not.
#[test]
fn row_blocks_compose_to_softmax_attention() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xa77);
    for causal in [false, true] {
        let (rows, keys, width, block) = (7usize, 45usize, 10usize, 16usize);
        let row_offset = 30;
        let scale = 0.3f32;
        let q: Vec<f32> = (0..rows * 8)
            .map(|_| rng.random_range(-1.0..1.0f32))
            .collect();
        let k: Vec<f32> = (0..keys * 8)
            .map(|_| rng.random_range(-1.0..1.0f32))
            .collect();
        let v: Vec<f32> = (0..keys * width)
            .map(|_| rng.random_range(-1.0..1.0f32))
            .collect();
        let blocks: Vec<(usize, usize)> = (0..keys.div_ceil(block))
            .map(|b| (b * block, block.min(keys - b * block)))
            .collect();
        let mut state = State {
            m: vec![0.0; rows],
            l: vec![0.0; rows],
            o: vec![0.0; rows * width],
        };
        for (n, &(first_key, count)) in blocks.iter().enumerate() {
            let kp = pad16(count);
            // The scores in the AMP's order, f32 partials.
            let mut s = vec![0f32; rows * kp];
            for r in 0..rows {
                for j in 0..count {
                    s[panel(r, j, rows)] = (0..8)
                        .map(|d| q[r * 8 + d] * k[(first_key + j) * 8 + d])
                        .sum();
                }
            }
            let spec = KernelSpec::AttentionRows {
                precision: Precision::F32,
                rows: rows as u32,
                keys: count as u32,
                causal,
            };
            let (p, m_blk, l_blk) = run_softmax(
                &spec,
                (rows, count, Precision::F32),
                &f32_bytes(&s),
                (scale, row_offset, first_key),
            );
            let mut pv = vec![0f32; rows * pad16(width)];
            for r in 0..rows {
                for e in 0..width {
                    pv[panel(r, e, rows)] = (0..count)
                        .map(|j| p[panel(r, j, rows)] * v[(first_key + j) * width + e])
                        .sum();
                }
            }
            let merge = KernelSpec::AttentionRowsMerge {
                precision: Precision::F32,
                rows: rows as u32,
                width: width as u32,
                first: n == 0,
                last: n + 1 == blocks.len(),
            };
            state = run_merge(&merge, &f32_bytes(&pv), (&m_blk, &l_blk), &state);
        }
        for r in 0..rows {
            let visible = if causal {
                (row_offset + r + 1).min(keys)
            } else {
                keys
            };
            let x: Vec<f64> = (0..visible)
                .map(|j| {
                    f64::from(scale)
                        * (0..8)
                            .map(|d| f64::from(q[r * 8 + d]) * f64::from(k[j * 8 + d]))
                            .sum::<f64>()
                })
                .collect();
            let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let w: Vec<f64> = x.iter().map(|x| (x - top).exp()).collect();
            let total: f64 = w.iter().sum();
            for e in 0..width {
                let want: f64 = (0..visible)
                    .map(|j| w[j] * f64::from(v[j * width + e]))
                    .sum::<f64>()
                    / total;
                let got = f64::from(state.o[r * width + e]);
                assert!(
                    (got - want).abs() < 1e-5,
                    "causal {causal}: row {r} column {e}: {got} against {want}"
                );
            }
        }
    }
}
