//! The rows formulation of flash attention (queries as AMP rows, keys as columns): one key
//! block's update and the merge, bit for bit against the spec's formulas.

use ipu_device::{KernelSpec, Precision};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::kernels::{panel, run};
use crate::kernels_attention::{f32_bytes, layout};
use crate::kernels_attention_columns::{assert_bits, pad16, partials, values};
use crate::kernels_support::{encode_value, load, random_tensor};

/// Random shapes (keys not whole groups, causal offsets hiding whole rows or part of them),
/// fresh and carried states: p in the AMP order with the queries as panel rows, m, l and the
/// rescale factors c as the spec says, bit for bit; hidden keys and padding columns of p are 0,
/// a row with no visible key keeps its m and l and gets c = 1.
#[test]
fn attention_rows_match_the_formulas_bit_for_bit() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5057);
    let (mut hidden_rows, mut carried) = (0, 0);
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
        let kp = pad16(keys);
        let part = partials(precision);
        let s_bytes = random_tensor(&mut rng, part, rows * kp, 8.0);
        let s = values(&s_bytes, 0, rows * kp, part);
        let fresh = index % 3 == 0;
        let mut m: Vec<f32> = (0..rows)
            .map(|_| {
                if fresh {
                    f32::NEG_INFINITY
                } else {
                    rng.random_range(-2.0..2.0f32)
                }
            })
            .collect();
        let mut l: Vec<f32> = (0..rows).map(|_| rng.random_range(0.5..4.0f32)).collect();
        let (m_bytes, l_bytes) = (f32_bytes(&m), f32_bytes(&l));
        let p_bytes = rows * kp * precision.bytes() as usize;
        let (at, total) = layout(&[
            s_bytes.len(),
            p_bytes,
            m_bytes.len(),
            l_bytes.len(),
            rows * 4,
        ]);
        let mut memory = vec![0x5au8; total];
        memory[at[0]..at[0] + s_bytes.len()].copy_from_slice(&s_bytes);
        memory[at[2]..at[2] + m_bytes.len()].copy_from_slice(&m_bytes);
        memory[at[3]..at[3] + l_bytes.len()].copy_from_slice(&l_bytes);
        let spec = KernelSpec::AttentionRows {
            precision,
            rows: rows as u32,
            keys: keys as u32,
            causal,
        };
        let args = [
            at[0] as u32,
            at[1] as u32,
            at[2] as u32,
            at[3] as u32,
            at[4] as u32,
            scale.to_bits(),
            row_offset as u32,
            key_offset as u32,
        ];
        run(&spec, &mut memory, &args);
        assert_eq!(
            &memory[at[0]..at[0] + s_bytes.len()],
            &s_bytes[..],
            "s changed"
        );
        // The spec's formulas.
        let round = |x: f32| load(&encode_value(x, precision, 0), 0, 0, precision, 0);
        let mut want_p = vec![0f32; rows * kp];
        let mut want_c = vec![1f32; rows];
        for r in 0..rows {
            let limit = limit(r);
            if limit == 0 {
                hidden_rows += 1;
                continue;
            }
            let m_new = (0..limit).fold(m[r], |acc, j| acc.max(scale * s[panel(r, j, rows)]));
            let c = if m[r] == f32::NEG_INFINITY {
                0.0
            } else {
                (m[r] - m_new).exp()
            };
            let mut sum = 0f32;
            for j in 0..limit {
                let i = panel(r, j, rows);
                want_p[i] = round((scale * s[i] - m_new).exp());
                sum += want_p[i];
            }
            l[r] = l[r] * c + sum;
            m[r] = m_new;
            want_c[r] = c;
        }
        carried += usize::from(!fresh);
        let what = format!("{spec:?}");
        assert_bits(
            &format!("{what}: p"),
            &values(&memory, at[1], rows * kp, precision),
            &want_p,
        );
        assert_bits(
            &format!("{what}: m"),
            &values(&memory, at[2], rows, Precision::F32),
            &m,
        );
        assert_bits(
            &format!("{what}: l"),
            &values(&memory, at[3], rows, Precision::F32),
            &l,
        );
        assert_bits(
            &format!("{what}: c"),
            &values(&memory, at[4], rows, Precision::F32),
            &want_c,
        );
    }
    assert!(
        hidden_rows > 0 && carried > 0,
        "the cases cover hidden rows and carried states"
    );
}

/// The merge: o = o * c + pv in f32 (a multiply, then an add), pv read in AMP-output order
/// with the rows as panel rows, its padding columns ignored.
#[test]
fn attention_rows_merge_rescales_and_adds() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x3e6);
    for precision in [Precision::F16, Precision::F32] {
        let (rows, width) = (13usize, 21usize);
        let part = partials(precision);
        let pv_bytes = random_tensor(&mut rng, part, rows * pad16(width), 4.0);
        let pv = values(&pv_bytes, 0, rows * pad16(width), part);
        let c: Vec<f32> = (0..rows).map(|_| rng.random_range(0.0..1.0f32)).collect();
        let o: Vec<f32> = (0..rows * width)
            .map(|_| rng.random_range(-3.0..3.0f32))
            .collect();
        let (c_bytes, o_bytes) = (f32_bytes(&c), f32_bytes(&o));
        let (at, total) = layout(&[pv_bytes.len(), c_bytes.len(), o_bytes.len()]);
        let mut memory = vec![0x5au8; total];
        memory[at[0]..at[0] + pv_bytes.len()].copy_from_slice(&pv_bytes);
        memory[at[1]..at[1] + c_bytes.len()].copy_from_slice(&c_bytes);
        memory[at[2]..at[2] + o_bytes.len()].copy_from_slice(&o_bytes);
        let spec = KernelSpec::AttentionRowsMerge {
            precision,
            rows: rows as u32,
            width: width as u32,
        };
        run(
            &spec,
            &mut memory,
            &[at[0] as u32, at[1] as u32, at[2] as u32],
        );
        let want: Vec<f32> = (0..rows * width)
            .map(|i| {
                let (r, e) = (i / width, i % width);
                o[i] * c[r] + pv[panel(r, e, rows)]
            })
            .collect();
        assert_bits(
            &format!("{spec:?}"),
            &values(&memory, at[2], rows * width, Precision::F32),
            &want,
        );
    }
}
