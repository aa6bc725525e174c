//! The math of each `ipu` op on f64 arrays, before rounding. Errors are plain messages; the
//! evaluator adds the op and its location.

use rayon::prelude::*;

use ipu_dialects::graph::scalar::{erf, ScalarProgram};
use ipu_dialects::ipu::verify::{broadcast_shapes, matmul_shape};
use ipu_dialects::ipu::Combiner;

use super::array::{strides, unravel, Array};

type OpResult = Result<Array, String>;

fn to_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&size| size as i64).collect()
}

fn to_usize(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&size| size.max(0) as usize).collect()
}

/// NumPy broadcasting of several shapes.
fn broadcast_all(shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let mut result: Vec<i64> = Vec::new();
    for shape in shapes {
        result = broadcast_shapes(&result, &to_i64(shape)).ok_or_else(|| {
            format!(
                "shapes {:?} do not broadcast",
                shapes.iter().collect::<Vec<_>>()
            )
        })?;
    }
    Ok(to_usize(&result))
}

/// Offset into an array of `shape` for the broadcast multi-index `index` of a larger shape.
fn broadcast_offset(index: &[usize], shape: &[usize], shape_strides: &[usize]) -> usize {
    let skip = index.len() - shape.len();
    shape
        .iter()
        .zip(shape_strides)
        .zip(&index[skip..])
        .map(|((&size, &stride), &i)| if size == 1 { 0 } else { i * stride })
        .sum()
}

/// `lhs + rhs` with NumPy broadcasting.
pub(super) fn add(lhs: &Array, rhs: &Array) -> OpResult {
    let shape = broadcast_all(&[&lhs.shape, &rhs.shape])?;
    // Fast path for the common cases (same shape, a bias over trailing axes): an operand whose
    // shape is a suffix of the result's repeats with period its length.
    let suffix = |operand: &Array| shape.ends_with(&operand.shape);
    if !lhs.is_empty() && !rhs.is_empty() && suffix(lhs) && suffix(rhs) {
        let count: usize = shape.iter().product();
        let data = (0..count)
            .map(|offset| lhs.data[offset % lhs.len()] + rhs.data[offset % rhs.len()])
            .collect();
        return Ok(Array { shape, data });
    }
    let (lhs_strides, rhs_strides) = (lhs.strides(), rhs.strides());
    let count: usize = shape.iter().product();
    let mut data = Vec::with_capacity(count);
    for offset in 0..count {
        let index = unravel(&shape, offset);
        let left = lhs.data[broadcast_offset(&index, &lhs.shape, &lhs_strides)];
        let right = rhs.data[broadcast_offset(&index, &rhs.shape, &rhs_strides)];
        data.push(left + right);
    }
    Ok(Array { shape, data })
}

/// `ipu.map`: `body` on the inputs broadcast to `shape` (the result's), element by element,
/// with each element's indices when the body reads them.
pub(super) fn map(inputs: &[&Array], shape: &[usize], body: &ScalarProgram) -> OpResult {
    let mut shapes: Vec<&[usize]> = inputs.iter().map(|a| &a.shape[..]).collect();
    shapes.push(shape);
    if broadcast_all(&shapes)? != shape {
        return Err(format!(
            "inputs of shapes {:?} do not broadcast to the result shape {shape:?}",
            inputs.iter().map(|a| &a.shape).collect::<Vec<_>>()
        ));
    }
    let all_strides: Vec<Vec<usize>> = inputs.iter().map(|a| a.strides()).collect();
    let count: usize = shape.iter().product();
    let indices = body.uses_indices();
    let data = (0..count)
        .into_par_iter()
        .map_init(
            || (Vec::with_capacity(inputs.len()), Vec::new()),
            |(values, at), offset| {
                let index = unravel(shape, offset);
                values.clear();
                for (input, input_strides) in inputs.iter().zip(&all_strides) {
                    values.push(input.data[broadcast_offset(&index, &input.shape, input_strides)]);
                }
                at.clear();
                if indices {
                    at.extend(index.iter().map(|&i| i as i64));
                }
                body.eval(values, at)
            },
        )
        .collect();
    Ok(Array {
        shape: shape.to_vec(),
        data,
    })
}

/// `ipu.reduce`: `combiner` over the last axis, kept as size 1.
pub(super) fn reduce(input: &Array, combiner: Combiner) -> OpResult {
    let width = last_axis(input)?;
    let mut shape = input.shape.clone();
    *shape.last_mut().unwrap_or(&mut 0) = 1;
    let data = if width == 0 {
        vec![combiner.identity(); shape.iter().product()]
    } else {
        input
            .data
            .chunks(width)
            .map(|row| {
                row.iter()
                    .copied()
                    .fold(combiner.identity(), |a, b| combiner.combine(a, b))
            })
            .collect()
    };
    Ok(Array { shape, data })
}

/// Copies the `rows x cols` matrix at `base` (row-major) of `source`, transposed if asked.
fn matrix(source: &[f64], base: usize, rows: usize, cols: usize, transpose: bool) -> Vec<f64> {
    let block = &source[base..base + rows * cols];
    if !transpose {
        return block.to_vec();
    }
    let mut out = vec![0.0; rows * cols];
    for row in 0..rows {
        for col in 0..cols {
            out[col * rows + row] = block[row * cols + col];
        }
    }
    out
}

/// Rows per parallel task and columns per tile of [`gemm`]: a 16 x 256 f64 output tile is
/// 32 KiB (stays in L1) and each row of `b`'s tile is reused 16 times, which cuts the memory
/// traffic of the naive row-at-a-time loop by that factor.
const GEMM_ROWS: usize = 16;
const GEMM_COLUMNS: usize = 256;

/// `out[m x n] = a[m x k] @ b[k x n]`, each element summed over k in ascending order (row
/// blocks in parallel, tiled; every element's sum order is fixed, so the result does not
/// depend on the thread count or the tiling).
fn gemm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut out = vec![0.0; m * n];
    if n == 0 {
        return out;
    }
    out.par_chunks_mut(GEMM_ROWS * n)
        .enumerate()
        .for_each(|(block, out_block)| {
            let first_row = block * GEMM_ROWS;
            let rows = out_block.len() / n;
            for column in (0..n).step_by(GEMM_COLUMNS) {
                let width = GEMM_COLUMNS.min(n - column);
                for depth in 0..k {
                    let b_tile = &b[depth * n + column..depth * n + column + width];
                    for row in 0..rows {
                        let left = a[(first_row + row) * k + depth];
                        let out_tile = &mut out_block[row * n + column..row * n + column + width];
                        for (value, &right) in out_tile.iter_mut().zip(b_tile) {
                            *value += left * right;
                        }
                    }
                }
            }
        });
    out
}

/// Batched matmul with transpose flags on the last two axes and broadcast batch axes.
pub(super) fn matmul(
    lhs: &Array,
    rhs: &Array,
    transpose_lhs: bool,
    transpose_rhs: bool,
) -> OpResult {
    let shape = to_usize(&matmul_shape(
        &to_i64(&lhs.shape),
        &to_i64(&rhs.shape),
        transpose_lhs,
        transpose_rhs,
    )?);
    let rank = shape.len();
    let (m, n) = (shape[rank - 2], shape[rank - 1]);
    let (lhs_rows, lhs_cols) = (lhs.shape[lhs.rank() - 2], lhs.shape[lhs.rank() - 1]);
    let (rhs_rows, rhs_cols) = (rhs.shape[rhs.rank() - 2], rhs.shape[rhs.rank() - 1]);
    let k = if transpose_lhs { lhs_rows } else { lhs_cols };
    let batch = &shape[..rank - 2];
    let lhs_batch = &lhs.shape[..lhs.rank() - 2];
    let rhs_batch = &rhs.shape[..rhs.rank() - 2];
    let (lhs_batch_strides, rhs_batch_strides) = (strides(lhs_batch), strides(rhs_batch));
    let batches: usize = batch.iter().product();
    let mut data = Vec::with_capacity(batches * m * n);
    for batch_offset in 0..batches {
        let index = unravel(batch, batch_offset);
        let lhs_base =
            broadcast_offset(&index, lhs_batch, &lhs_batch_strides) * lhs_rows * lhs_cols;
        let rhs_base =
            broadcast_offset(&index, rhs_batch, &rhs_batch_strides) * rhs_rows * rhs_cols;
        let a = matrix(&lhs.data, lhs_base, lhs_rows, lhs_cols, transpose_lhs);
        let b = matrix(&rhs.data, rhs_base, rhs_rows, rhs_cols, transpose_rhs);
        data.extend(gemm(&a, &b, m, k, n));
    }
    Ok(Array { shape, data })
}

/// GeLU: `0.5 x (1 + erf(x / sqrt 2))`, or with `tanh` its approximation
/// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
pub(super) fn gelu(input: &Array, tanh: bool) -> Array {
    let data = input
        .data
        .iter()
        .map(|&x| {
            if tanh {
                let inner = (2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x);
                0.5 * x * (1.0 + inner.tanh())
            } else {
                0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2))
            }
        })
        .collect();
    Array {
        shape: input.shape.clone(),
        data,
    }
}

/// Softmax of one row in place; `-inf` entries (masked) get 0.
fn softmax_row(row: &mut [f64]) {
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        row.iter_mut().for_each(|value| *value = 0.0);
        return;
    }
    let mut sum = 0.0;
    for value in row.iter_mut() {
        *value = (*value - max).exp();
        sum += *value;
    }
    for value in row.iter_mut() {
        *value /= sum;
    }
}

fn last_axis(input: &Array) -> Result<usize, String> {
    input
        .shape
        .last()
        .copied()
        .ok_or_else(|| "needs rank >= 1, found a rank-0 tensor".to_string())
}

pub(super) fn softmax(input: &Array) -> OpResult {
    let width = last_axis(input)?;
    let mut output = input.clone();
    if width > 0 {
        output.data.chunks_mut(width).for_each(softmax_row);
    }
    Ok(output)
}

pub(super) fn layer_norm(input: &Array, gamma: &Array, beta: &Array, epsilon: f64) -> OpResult {
    let width = last_axis(input)?;
    for (name, parameter) in [("gamma", gamma), ("beta", beta)] {
        if parameter.shape != [width] {
            return Err(format!(
                "{name} has shape {:?}, expected [{width}] (the last axis)",
                parameter.shape
            ));
        }
    }
    let mut output = input.clone();
    if width == 0 {
        return Ok(output);
    }
    for row in output.data.chunks_mut(width) {
        let mean = row.iter().sum::<f64>() / width as f64;
        let variance = row
            .iter()
            .map(|value| (value - mean) * (value - mean))
            .sum::<f64>()
            / width as f64;
        let inverse = 1.0 / (variance + epsilon).sqrt();
        for (column, value) in row.iter_mut().enumerate() {
            *value = (*value - mean) * inverse * gamma.data[column] + beta.data[column];
        }
    }
    Ok(output)
}

/// `softmax(q k^T * scale [masked]) v`; the causal mask hides key `t` from query `s` when
/// `t > s` (top-left aligned, as PyTorch's `is_causal`).
pub(super) fn attention(
    query: &Array,
    key: &Array,
    value: &Array,
    causal: bool,
    scale: Option<f64>,
) -> OpResult {
    for (name, operand) in [("query", query), ("key", key), ("value", value)] {
        if operand.rank() < 2 {
            return Err(format!(
                "{name} needs rank >= 2, found shape {:?}",
                operand.shape
            ));
        }
    }
    let split = |array: &Array| {
        let rank = array.rank();
        (
            array.shape[..rank - 2].to_vec(),
            array.shape[rank - 2],
            array.shape[rank - 1],
        )
    };
    let (query_batch, s, d) = split(query);
    let (key_batch, t, key_d) = split(key);
    let (value_batch, value_t, e) = split(value);
    if key_d != d || value_t != t {
        return Err(format!(
            "query {:?}, key {:?} and value {:?} do not fit [..., S, D], [..., T, D], [..., T, E]",
            query.shape, key.shape, value.shape
        ));
    }
    let batch = broadcast_all(&[&query_batch, &key_batch, &value_batch])?;
    let scale = scale.unwrap_or(1.0 / (d as f64).sqrt());
    let batches: usize = batch.iter().product();
    let (query_strides, key_strides, value_strides) = (
        strides(&query_batch),
        strides(&key_batch),
        strides(&value_batch),
    );
    let mut data = Vec::with_capacity(batches * s * e);
    for batch_offset in 0..batches {
        let index = unravel(&batch, batch_offset);
        let q = broadcast_offset(&index, &query_batch, &query_strides) * s * d;
        let k = broadcast_offset(&index, &key_batch, &key_strides) * t * d;
        let v = broadcast_offset(&index, &value_batch, &value_strides) * t * e;
        let key_transposed = matrix(&key.data, k, t, d, true);
        let mut scores = gemm(&query.data[q..q + s * d], &key_transposed, s, d, t);
        for (row, scores_row) in scores.chunks_mut(t.max(1)).enumerate() {
            for (column, score) in scores_row.iter_mut().enumerate() {
                *score = if causal && column > row {
                    f64::NEG_INFINITY
                } else {
                    *score * scale
                };
            }
            softmax_row(scores_row);
        }
        data.extend(gemm(&scores, &value.data[v..v + t * e], s, t, e));
    }
    let mut shape = batch;
    shape.extend([s, e]);
    Ok(Array { shape, data })
}

/// Axes permuted: result axis `i` is input axis `permutation[i]`.
pub(super) fn permute(input: &Array, permutation: &[usize]) -> OpResult {
    let rank = input.rank();
    let mut seen = vec![false; rank];
    if permutation.len() != rank
        || permutation
            .iter()
            .any(|&axis| axis >= rank || std::mem::replace(&mut seen[axis], true))
    {
        return Err(format!(
            "permutation {permutation:?} is not a permutation of {rank} axes"
        ));
    }
    let shape: Vec<usize> = permutation.iter().map(|&axis| input.shape[axis]).collect();
    let input_strides = input.strides();
    let count = input.len();
    let mut data = Vec::with_capacity(count);
    for offset in 0..count {
        let index = unravel(&shape, offset);
        let source: usize = index
            .iter()
            .zip(permutation)
            .map(|(&i, &axis)| i * input_strides[axis])
            .sum();
        data.push(input.data[source]);
    }
    Ok(Array { shape, data })
}

/// `ipu.slice`: the `shape`-sized window of `input` from `offsets` by `strides`.
pub(super) fn slice(input: &Array, shape: &[usize], offsets: &[u64], strides: &[u64]) -> OpResult {
    let rank = input.rank();
    if shape.len() != rank || offsets.len() != rank || strides.len() != rank {
        return Err(format!(
            "a slice of rank {rank} needs {rank} sizes, offsets and strides"
        ));
    }
    let reach = |axis: usize| {
        offsets[axis] as usize + shape[axis].saturating_sub(1) * strides[axis] as usize
    };
    if (0..rank).any(|axis| shape[axis] > 0 && reach(axis) >= input.shape[axis]) {
        return Err(format!(
            "the window {shape:?} from {offsets:?} by {strides:?} leaves the input {:?}",
            input.shape
        ));
    }
    let input_strides = input.strides();
    let count: usize = shape.iter().product();
    let mut data = Vec::with_capacity(count);
    for offset in 0..count {
        let index = unravel(shape, offset);
        let source: usize = (0..rank)
            .map(|axis| {
                (offsets[axis] as usize + index[axis] * strides[axis] as usize)
                    * input_strides[axis]
            })
            .sum();
        data.push(input.data[source]);
    }
    Ok(Array {
        shape: shape.to_vec(),
        data,
    })
}

/// `ipu.concat`: `lhs` followed by `rhs` along `axis`.
pub(super) fn concat(lhs: &Array, rhs: &Array, axis: usize) -> OpResult {
    let rank = lhs.rank();
    let agrees = rhs.rank() == rank
        && axis < rank
        && (0..rank).all(|a| a == axis || lhs.shape[a] == rhs.shape[a]);
    if !agrees {
        return Err(format!(
            "{:?} and {:?} cannot be joined on axis {axis}",
            lhs.shape, rhs.shape
        ));
    }
    // Row-major: the axes before `axis` index blocks; each block is lhs's chunk then rhs's.
    let outer: usize = lhs.shape[..axis].iter().product();
    let (left, right) = (lhs.len() / outer.max(1), rhs.len() / outer.max(1));
    let mut data = Vec::with_capacity(lhs.len() + rhs.len());
    for block in 0..outer {
        data.extend_from_slice(&lhs.data[block * left..(block + 1) * left]);
        data.extend_from_slice(&rhs.data[block * right..(block + 1) * right]);
    }
    let mut shape = lhs.shape.clone();
    shape[axis] += rhs.shape[axis];
    Ok(Array { shape, data })
}
