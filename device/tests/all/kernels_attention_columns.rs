//! The column formulation of flash attention (keys as AMP rows, queries as columns): one key
//! block's update and the finish, bit for bit against the spec's formulas, and their
//! composition with the products `o^T += V^T p^T` (the AMP's numerics) against an f64 softmax.

use ipu_device::{KernelSpec, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::{panel, run};
use crate::kernels_attention::{f32_bytes, layout};
use crate::kernels_support::{encode_value, load, random_tensor, store};

pub(crate) fn pad16(n: usize) -> usize {
    n.div_ceil(16) * 16
}

pub(crate) fn partials(precision: Precision) -> Precision {
    ipu_device::kernels::describe::default_partials(precision)
}

/// One call's shape and run-time arguments.
#[derive(Clone, Copy, Debug)]
struct Case {
    precision: Precision,
    keys: usize,
    queries: usize,
    width: usize,
    causal: bool,
    scale: f32,
    query_offset: usize,
    key_offset: usize,
}

impl Case {
    fn spec(&self) -> KernelSpec {
        KernelSpec::AttentionColumns {
            precision: self.precision,
            keys: self.keys as u32,
            queries: self.queries as u32,
            width: self.width as u32,
            causal: self.causal,
        }
    }

    /// Visible keys of query column j: r < limit.
    fn limit(&self, j: usize) -> usize {
        if j >= self.queries {
            0
        } else if self.causal {
            (self.query_offset + j + 1)
                .saturating_sub(self.key_offset)
                .min(self.keys)
        } else {
            self.keys
        }
    }
}

/// The running state: maxima and sums (f32, one per query) and the transposed output (the
/// partials precision, panel order with `width` rows, queries padded to 16).
#[derive(Clone, Debug)]
struct State {
    m: Vec<f32>,
    l: Vec<f32>,
    o: Vec<f32>,
}

/// The spec's formulas: p (values as stored, panel order) and the new state.
fn reference(case: &Case, s: &[f32], state: &mut State) -> Vec<f32> {
    let (kp, qp, width) = (pad16(case.keys), pad16(case.queries), case.width);
    let round = |x: f32, p: Precision| load(&encode_value(x, p, 0), 0, 0, p, 0);
    let mut p = vec![0f32; kp * qp];
    for j in 0..qp {
        let limit = case.limit(j);
        if limit == 0 {
            continue;
        }
        let m_old = state.m[j];
        let m_new = (0..limit).fold(m_old, |acc, r| acc.max(case.scale * s[panel(r, j, kp)]));
        let empty = m_old == f32::NEG_INFINITY;
        let c = if empty { 0.0 } else { (m_old - m_new).exp() };
        let mut sum = 0f32;
        for r in 0..limit {
            let i = panel(r, j, kp);
            p[i] = round((case.scale * s[i] - m_new).exp(), case.precision);
            sum += p[i];
        }
        state.l[j] = state.l[j] * c + sum;
        for e in 0..width {
            let o = &mut state.o[panel(e, j, width)];
            *o = if empty {
                0.0
            } else {
                round(*o * c, partials(case.precision))
            };
        }
        state.m[j] = m_new;
    }
    p
}

pub(crate) fn values(memory: &[u8], offset: usize, n: usize, precision: Precision) -> Vec<f32> {
    (0..n)
        .map(|i| load(memory, offset, i, precision, 0))
        .collect()
}

/// Runs one call on `state` with scores `s` (partials bytes, panel order); returns p and the
/// new state as the kernel left them, after checking s is untouched.
fn run_columns(case: &Case, s: &[u8], state: &State) -> (Vec<f32>, State) {
    let (kp, qp) = (pad16(case.keys), pad16(case.queries));
    let (input, part) = (case.precision, partials(case.precision));
    let p_bytes = kp * qp * input.bytes() as usize;
    let o: Vec<u8> = state
        .o
        .iter()
        .flat_map(|&x| encode_value(x, part, 0))
        .collect();
    let (m, l) = (f32_bytes(&state.m), f32_bytes(&state.l));
    let (at, total) = layout(&[s.len(), p_bytes, m.len(), l.len(), o.len()]);
    let mut memory = vec![0x5au8; total];
    for (offset, bytes) in [
        (at[0], s),
        (at[2], &m[..]),
        (at[3], &l[..]),
        (at[4], &o[..]),
    ] {
        memory[offset..offset + bytes.len()].copy_from_slice(bytes);
    }
    let args = [
        at[0] as u32,
        at[1] as u32,
        at[2] as u32,
        at[3] as u32,
        at[4] as u32,
        case.scale.to_bits(),
        case.query_offset as u32,
        case.key_offset as u32,
    ];
    run(&case.spec(), &mut memory, &args);
    assert_eq!(&memory[at[0]..at[0] + s.len()], s, "{case:?}: s changed");
    (
        values(&memory, at[1], kp * qp, input),
        State {
            m: values(&memory, at[2], case.queries, Precision::F32),
            l: values(&memory, at[3], case.queries, Precision::F32),
            o: values(&memory, at[4], case.width * qp, part),
        },
    )
}

#[track_caller]
pub(crate) fn assert_bits(what: &str, got: &[f32], want: &[f32]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{what}[{i}]: got {g:e}, want {w:e}"
        );
    }
}

/// Random shapes (keys and queries not whole panels, padding columns, causal offsets that
/// hide whole columns or part of them), a fresh state and a carried one: p, m, l and o as the
/// spec says, bit for bit; every p element of a hidden key, a padding row or column is 0.
#[test]
fn attention_columns_match_the_formulas_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xc01);
    let (mut hidden_columns, mut carried, mut zeros) = (0, 0, 0);
    for index in 0..24 {
        let precision = [Precision::F16, Precision::F32][index % 2];
        let case = Case {
            precision,
            keys: rng.random_range(1..=40usize),
            queries: rng.random_range(1..=35usize),
            width: rng.random_range(1..=24usize),
            causal: index % 4 < 2,
            scale: rng.random_range(0.05..0.5f32),
            query_offset: rng.random_range(0..40usize),
            key_offset: rng.random_range(0..40usize),
        };
        let (kp, qp) = (pad16(case.keys), pad16(case.queries));
        let part = partials(precision);
        let s_bytes = random_tensor(&mut rng, part, kp * qp, 8.0);
        let s = values(&s_bytes, 0, kp * qp, part);
        let fresh = index % 3 == 0;
        let mut state = State {
            m: (0..case.queries)
                .map(|_| {
                    if fresh {
                        f32::NEG_INFINITY
                    } else {
                        rng.random_range(-2.0..2.0f32)
                    }
                })
                .collect(),
            l: (0..case.queries)
                .map(|_| rng.random_range(0.5..4.0f32))
                .collect(),
            o: values(
                &random_tensor(&mut rng, part, case.width * qp, 3.0),
                0,
                case.width * qp,
                part,
            ),
        };
        if fresh {
            // Whatever the output held before a column's first visible key is dropped.
            state.o[0] = f32::NAN;
        }
        let (p, got) = run_columns(&case, &s_bytes, &state);
        let want_p = reference(&case, &s, &mut state);
        let what = format!("{case:?}");
        assert_bits(&format!("{what}: p"), &p, &want_p);
        assert_bits(&format!("{what}: m"), &got.m, &state.m);
        assert_bits(&format!("{what}: l"), &got.l, &state.l);
        for (i, (g, w)) in got.o.iter().zip(&state.o).enumerate() {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{what}: o[{i}]: got {g:e}, want {w:e}"
            );
        }
        hidden_columns += (0..case.queries).filter(|&j| case.limit(j) == 0).count();
        carried += usize::from(!fresh);
        zeros += (0..qp)
            .flat_map(|j| (case.limit(j)..kp).map(move |r| (r, j)))
            .filter(|&(r, j)| p[panel(r, j, kp)] == 0.0)
            .count();
    }
    assert!(
        hidden_columns > 0 && carried > 0 && zeros > 0,
        "the cases cover hidden columns, carried states and zeroed p"
    );
}

/// The finish divides each query's transposed output by its sum into row-major rows, bit for
/// bit (a query whose sum is 0 is written 0); a key split's finish writes the same quotients
/// as f32 rows.
#[test]
fn attention_finish_columns_divides_into_rows() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xf1c);
    for (precision, split) in [
        (Precision::F16, false),
        (Precision::F32, false),
        (Precision::F16, true),
        (Precision::F32, true),
    ] {
        let (queries, width) = (19usize, 13usize);
        let part = partials(precision);
        let output = if split { Precision::F32 } else { precision };
        let o_bytes = random_tensor(&mut rng, part, width * pad16(queries), 4.0);
        let o = values(&o_bytes, 0, width * pad16(queries), part);
        let mut l: Vec<f32> = (0..queries)
            .map(|_| rng.random_range(0.5..3.0f32))
            .collect();
        l[3] = 0.0;
        let l_bytes = f32_bytes(&l);
        let out_bytes = queries * width * output.bytes() as usize;
        let (at, total) = layout(&[o_bytes.len(), l_bytes.len(), out_bytes]);
        let mut memory = vec![0x5au8; total];
        memory[at[0]..at[0] + o_bytes.len()].copy_from_slice(&o_bytes);
        memory[at[1]..at[1] + l_bytes.len()].copy_from_slice(&l_bytes);
        let (queries_u32, width_u32) = (queries as u32, width as u32);
        let spec = if split {
            KernelSpec::AttentionSplitFinish {
                precision,
                queries: queries_u32,
                width: width_u32,
            }
        } else {
            KernelSpec::AttentionFinishColumns {
                precision,
                queries: queries_u32,
                width: width_u32,
            }
        };
        run(
            &spec,
            &mut memory,
            &[at[0] as u32, at[1] as u32, at[2] as u32],
        );
        let got = values(&memory, at[2], queries * width, output);
        let mut want = vec![0f32; queries * width];
        for j in 0..queries {
            for e in 0..width {
                let q = if l[j] == 0.0 {
                    0.0
                } else {
                    o[panel(e, j, width)] / l[j]
                };
                let mut b = vec![0u8; 4];
                store(&mut b, 0, 0, output, 0, q);
                want[j * width + e] = load(&b, 0, 0, output, 0);
            }
        }
        assert_bits(&spec.name(), &got, &want);
        assert!(got[3 * width..4 * width].iter().all(|&x| x == 0.0));
    }
}

/// Whole attention of one tile in the column formulation: key blocks through the update, each
/// followed by `o^T += V_blk^T p^T` as the AMP computes it (f32 sums over the block, added to
/// the old partial and rounded once to the partials), then the finish; within F16 rounding of
/// an f64 softmax(q k^T) v, causal and not.
#[test]
fn column_blocks_compose_to_softmax_attention() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb10c);
    for (causal, precision) in [
        (false, Precision::F16),
        (true, Precision::F16),
        (true, Precision::F32),
    ] {
        let (queries, keys, width, d, block, query_offset) = (21usize, 70usize, 12usize, 8, 32, 40);
        let part = partials(precision);
        let q: Vec<f64> = (0..queries * d)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let k: Vec<f64> = (0..keys * d).map(|_| rng.random_range(-1.0..1.0)).collect();
        let v: Vec<f64> = (0..keys * width)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        let scale = 1.0 / (d as f64).sqrt();
        let qp = pad16(queries);
        let mut state = State {
            m: vec![f32::NEG_INFINITY; queries],
            l: vec![0.0; queries],
            o: vec![0.0; width * qp],
        };
        let round = |x: f64, p: Precision| load(&encode_value(x as f32, p, 0), 0, 0, p, 0);
        for first in (0..keys).step_by(block) {
            let n = block.min(keys - first);
            let kp = pad16(n);
            let case = Case {
                precision,
                keys: n,
                queries,
                width,
                causal,
                scale: scale as f32,
                query_offset,
                key_offset: first,
            };
            let mut s_bytes = vec![0u8; kp * qp * part.bytes() as usize];
            for r in 0..n {
                for j in 0..queries {
                    let dot: f64 = (0..d).map(|x| q[j * d + x] * k[(first + r) * d + x]).sum();
                    store(&mut s_bytes, 0, panel(r, j, kp), part, 0, dot as f32);
                }
            }
            let (p, next) = run_columns(&case, &s_bytes, &state);
            state = next;
            for e in 0..width {
                for j in 0..qp {
                    let sum: f32 = (0..kp)
                        .map(|r| {
                            let value = if r < n {
                                round(v[(first + r) * width + e], precision)
                            } else {
                                0.0
                            };
                            value * p[panel(r, j, kp)]
                        })
                        .fold(0.0, |a, b| a + b);
                    let o = &mut state.o[panel(e, j, width)];
                    *o = round(f64::from(*o + sum), part);
                }
            }
        }
        for j in 0..queries {
            let visible = if causal {
                (query_offset + j + 1).min(keys)
            } else {
                keys
            };
            let scores: Vec<f64> = (0..visible)
                .map(|r| scale * (0..d).map(|x| q[j * d + x] * k[r * d + x]).sum::<f64>())
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let weights: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let total: f64 = weights.iter().sum();
            for e in 0..width {
                let want: f64 = (0..visible)
                    .map(|r| weights[r] * v[r * width + e])
                    .sum::<f64>()
                    / total;
                let got = f64::from(state.o[panel(e, j, width)]) / f64::from(state.l[j]);
                assert!(
                    (got - want).abs() <= 0.01 + 0.01 * want.abs(),
                    "causal {causal} {precision:?}: query {j} column {e}: {got} against {want}"
                );
            }
        }
    }
}

/// Runs the merge of `splits` splits' `(o, m, l)` (o f32 rows, or with `panels` its encoded
/// bytes) for `rows` rows of `width` into `precision`.
fn run_merge(
    (precision, panels): (Precision, Option<&[u8]>),
    (splits, rows, width): (usize, usize, usize),
    (o, m, l): (&[f32], &[f32], &[f32]),
) -> Vec<f32> {
    let o_bytes = panels.map_or_else(|| f32_bytes(o), <[u8]>::to_vec);
    let (m_bytes, l_bytes) = (f32_bytes(m), f32_bytes(l));
    let out_bytes = rows * width * precision.bytes() as usize;
    let (at, total) = layout(&[o_bytes.len(), m_bytes.len(), l_bytes.len(), out_bytes]);
    let mut memory = vec![0x5au8; total];
    for (k, bytes) in [&o_bytes, &m_bytes, &l_bytes].into_iter().enumerate() {
        memory[at[k]..at[k] + bytes.len()].copy_from_slice(bytes);
    }
    let spec = KernelSpec::AttentionMerge {
        precision,
        splits: splits as u32,
        rows: rows as u32,
        width: width as u32,
        panels: panels.is_some(),
    };
    let args: Vec<u32> = at.iter().map(|&a| a as u32).collect();
    run(&spec, &mut memory, &args);
    values(&memory, at[3], rows * width, precision)
}

/// The merge weighs each split by its maximum and sum, bit for bit against the spec's formula:
/// from f32 rows normalized by each split's sums (weights l exp(m - M)), or from panels of the
/// column formulation's unnormalized partials (weights exp(m - M), divided by the weighed
/// sums). Splits that saw no visible key of a row (maximum -inf, sum 0) weigh nothing, and a
/// row no split saw is written 0.
#[test]
fn attention_merge_weighs_the_splits() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x3e6);
    let (splits, width) = (3usize, 5usize);
    // (panels, rows, a row hidden from split 1, a row hidden from every split)
    for (panels, rows, partly, wholly) in [(false, 7usize, 2usize, 4usize), (true, 32, 3, 17)] {
        for precision in [Precision::F16, Precision::F32] {
            let part = if panels {
                partials(precision)
            } else {
                Precision::F32
            };
            let o_bytes = random_tensor(&mut rng, part, splits * rows * width, 8.0);
            let o = values(&o_bytes, 0, splits * rows * width, part);
            let mut m: Vec<f32> = (0..splits * rows)
                .map(|_| rng.random_range(-4.0..4.0f32))
                .collect();
            let mut l: Vec<f32> = (0..splits * rows)
                .map(|_| rng.random_range(0.5..20.0f32))
                .collect();
            for (i, j) in [(1, partly), (0, wholly), (1, wholly), (2, wholly)] {
                m[i * rows + j] = f32::NEG_INFINITY;
                l[i * rows + j] = 0.0;
            }
            let encoded = panels.then_some(o_bytes.as_slice());
            let got = run_merge((precision, encoded), (splits, rows, width), (&o, &m, &l));
            let mut want = vec![0f32; rows * width];
            for j in 0..rows {
                let top = (0..splits).fold(f32::NEG_INFINITY, |a, i| a.max(m[i * rows + j]));
                let weight = |i: usize| {
                    let (mi, li) = (m[i * rows + j], l[i * rows + j]);
                    match (mi == f32::NEG_INFINITY || li == 0.0, panels) {
                        (true, _) => 0.0,
                        (false, true) => (mi - top).exp(),
                        (false, false) => li * (mi - top).exp(),
                    }
                };
                let total = (0..splits).fold(0f32, |a, i| {
                    a + if panels {
                        weight(i) * l[i * rows + j]
                    } else {
                        weight(i)
                    }
                });
                for e in 0..width {
                    let sum = (0..splits).fold(0f32, |a, i| {
                        let at = if panels {
                            i * rows * width + panel(e, j, width)
                        } else {
                            (i * rows + j) * width + e
                        };
                        a + weight(i) * o[at]
                    });
                    let q = if total == 0.0 { 0.0 } else { sum / total };
                    let mut b = vec![0u8; 4];
                    store(&mut b, 0, 0, precision, 0, q);
                    want[j * width + e] = load(&b, 0, 0, precision, 0);
                }
            }
            assert_bits("attention_merge", &got, &want);
            let row = |j: usize| &got[j * width..(j + 1) * width];
            assert!(row(wholly).iter().all(|&x| x == 0.0));
            assert!(row(partly).iter().any(|&x| x != 0.0));
        }
    }
}

/// Keys split over tiles: each split's exact softmax state (maximum, sum, normalized rows)
/// merged by the kernel is the softmax attention over all keys, causal (the last split hidden
/// from the first queries) and not.
#[test]
fn merged_key_splits_are_softmax_attention() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5b17);
    let (rows, keys, width, d) = (6usize, 48usize, 7usize, 5usize);
    let bounds = [0usize, 16, 32, 48];
    let splits = bounds.len() - 1;
    for causal in [false, true] {
        let q: Vec<f64> = (0..rows * d).map(|_| rng.random_range(-2.0..2.0)).collect();
        let k: Vec<f64> = (0..keys * d).map(|_| rng.random_range(-2.0..2.0)).collect();
        let v: Vec<f64> = (0..keys * width)
            .map(|_| rng.random_range(-1.0..1.0))
            .collect();
        // Query j sees keys r <= 10 + 5 j when causal (query offset 10, 5 keys per row).
        let visible = |j: usize, r: usize| !causal || r <= 10 + 5 * j;
        let score = |j: usize, r: usize| (0..d).map(|x| q[j * d + x] * k[r * d + x]).sum::<f64>();
        let (mut o, mut m, mut l) = (
            vec![0f32; splits * rows * width],
            vec![f32::NEG_INFINITY; splits * rows],
            vec![0f32; splits * rows],
        );
        for i in 0..splits {
            for j in 0..rows {
                let seen: Vec<usize> = (bounds[i]..bounds[i + 1])
                    .filter(|&r| visible(j, r))
                    .collect();
                if seen.is_empty() {
                    continue;
                }
                let top = seen.iter().map(|&r| score(j, r)).fold(f64::MIN, f64::max);
                let sum: f64 = seen.iter().map(|&r| (score(j, r) - top).exp()).sum();
                m[i * rows + j] = top as f32;
                l[i * rows + j] = sum as f32;
                for e in 0..width {
                    let acc: f64 = seen
                        .iter()
                        .map(|&r| (score(j, r) - top).exp() * v[r * width + e])
                        .sum();
                    o[(i * rows + j) * width + e] = (acc / sum) as f32;
                }
            }
        }
        assert!(
            !causal || m[2 * rows] == f32::NEG_INFINITY,
            "a hidden split"
        );
        let got = run_merge((Precision::F32, None), (splits, rows, width), (&o, &m, &l));
        for j in 0..rows {
            let seen: Vec<usize> = (0..keys).filter(|&r| visible(j, r)).collect();
            let top = seen.iter().map(|&r| score(j, r)).fold(f64::MIN, f64::max);
            let total: f64 = seen.iter().map(|&r| (score(j, r) - top).exp()).sum();
            for e in 0..width {
                let want: f64 = seen
                    .iter()
                    .map(|&r| (score(j, r) - top).exp() * v[r * width + e])
                    .sum::<f64>()
                    / total;
                let g = f64::from(got[j * width + e]);
                assert!(
                    (g - want).abs() <= 1e-5 + 1e-5 * want.abs(),
                    "causal {causal}: row {j} column {e}: {g} against {want}"
                );
            }
        }
    }
}
