//! A small f64 reference evaluator of the e-graph language, for the numerics tests: every op
//! computes in f64 and rounds its result to its element type's mantissa width, so rewritten
//! programs agree within a few units in the last place, and dropping a rounding cast shows.

use std::collections::BTreeMap;

use egg::{Id, RecExpr};
use ipu_dialects::{ipu::verify::broadcast_shapes, tensor::ElementType};

use super::language::{exact_conversion, Attr, Ipu};

/// A dense row-major tensor.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

/// Rounds `x` to `bits` mantissa bits with exponents clamped below at `min_exponent`
/// (subnormals); the range is not clamped.
fn round_mantissa(x: f64, bits: i32, min_exponent: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let exponent = (x.abs().log2().floor() as i32).max(min_exponent);
    let ulp = 2f64.powi(exponent - bits);
    (x / ulp).round() * ulp
}

/// `x` rounded to `element`.
pub fn round_to(element: ElementType, x: f64) -> f64 {
    match element {
        ElementType::F32 => x as f32 as f64,
        ElementType::F16 => round_mantissa(x, 10, -14),
        ElementType::F8E4M3 => round_mantissa(x, 3, -7),
        ElementType::F8E5M2 => round_mantissa(x, 2, -15),
    }
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// The flat index into a tensor of `shape` broadcast to `index` (an index of a larger shape).
fn broadcast_flat(index: &[usize], shape: &[usize]) -> usize {
    let offset = index.len() - shape.len();
    let strides = strides(shape);
    shape
        .iter()
        .enumerate()
        .map(|(axis, &size)| {
            if size == 1 {
                0
            } else {
                index[axis + offset] * strides[axis]
            }
        })
        .sum()
}

fn unflatten(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        index[axis] = flat % shape[axis].max(1);
        flat /= shape[axis].max(1);
    }
    index
}

fn to_i64(shape: &[usize]) -> Vec<i64> {
    shape.iter().map(|&size| size as i64).collect()
}

fn transpose(input: &Tensor) -> Tensor {
    let rank = input.shape.len();
    let mut shape = input.shape.clone();
    shape.swap(rank - 2, rank - 1);
    let mut data = vec![0.0; input.data.len()];
    for (flat, value) in data.iter_mut().enumerate() {
        let mut index = unflatten(flat, &shape);
        index.swap(rank - 2, rank - 1);
        *value = input.data[broadcast_flat(&index, &input.shape)];
    }
    Tensor { shape, data }
}

fn matmul(lhs: &Tensor, rhs: &Tensor) -> Tensor {
    let (l, r) = (lhs.shape.len(), rhs.shape.len());
    let (m, k, n) = (lhs.shape[l - 2], lhs.shape[l - 1], rhs.shape[r - 1]);
    let batch = broadcast_shapes(&to_i64(&lhs.shape[..l - 2]), &to_i64(&rhs.shape[..r - 2]))
        .unwrap_or_default();
    let mut shape: Vec<usize> = batch.iter().map(|&size| size as usize).collect();
    shape.extend([m, n]);
    let count: usize = shape.iter().product();
    let mut data = vec![0.0; count];
    for (flat, value) in data.iter_mut().enumerate() {
        let index = unflatten(flat, &shape);
        let (i, j) = (index[index.len() - 2], index[index.len() - 1]);
        let mut sum = 0.0;
        for p in 0..k {
            let mut left = index.clone();
            let last = left.len() - 1;
            left[last - 1] = i;
            left[last] = p;
            let mut right = index.clone();
            right[last - 1] = p;
            right[last] = j;
            sum += lhs.data[broadcast_flat(&left, &lhs.shape)]
                * rhs.data[broadcast_flat(&right, &rhs.shape)];
        }
        *value = sum;
    }
    Tensor { shape, data }
}

fn add(lhs: &Tensor, rhs: &Tensor) -> Tensor {
    let shape: Vec<usize> = broadcast_shapes(&to_i64(&lhs.shape), &to_i64(&rhs.shape))
        .unwrap_or_default()
        .iter()
        .map(|&size| size as usize)
        .collect();
    let count: usize = shape.iter().product();
    let data = (0..count)
        .map(|flat| {
            let index = unflatten(flat, &shape);
            lhs.data[broadcast_flat(&index, &lhs.shape)]
                + rhs.data[broadcast_flat(&index, &rhs.shape)]
        })
        .collect();
    Tensor { shape, data }
}

/// erf by Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7; both sides of a rule use it).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let y = 1.0 - poly * (-x * x).exp();
    if x < 0.0 {
        -y
    } else {
        y
    }
}

fn map(input: &Tensor, f: impl Fn(f64) -> f64) -> Tensor {
    Tensor {
        shape: input.shape.clone(),
        data: input.data.iter().map(|&x| f(x)).collect(),
    }
}

fn rows(input: &Tensor, f: impl Fn(&[f64]) -> Vec<f64>) -> Tensor {
    let columns = input.shape.last().copied().unwrap_or(1).max(1);
    Tensor {
        shape: input.shape.clone(),
        data: input.data.chunks(columns).flat_map(f).collect(),
    }
}

/// Evaluates `expr` with `inputs` for its leaves (splat leaves need none).
pub fn evaluate(expr: &RecExpr<Ipu>, inputs: &BTreeMap<String, Tensor>) -> Result<Tensor, String> {
    let mut values: Vec<Option<Tensor>> = Vec::new();
    let mut attrs: Vec<Option<Attr>> = Vec::new();
    let mut elements: Vec<ElementType> = Vec::new();
    for node in expr.as_ref() {
        let value = |id: &Id| {
            values[usize::from(*id)]
                .clone()
                .ok_or("an attribute used as a tensor".to_string())
        };
        let element = |id: &Id| elements[usize::from(*id)];
        let (result, attr, result_element) = match node {
            Ipu::Leaf(leaf) => {
                let shape: Vec<usize> = leaf.shape.iter().map(|&size| size as usize).collect();
                let tensor = match (inputs.get(&leaf.name), leaf.splat_bits) {
                    (_, Some(bits)) => Tensor {
                        data: vec![f64::from_bits(bits); shape.iter().product()],
                        shape,
                    },
                    (Some(tensor), None) => tensor.clone(),
                    (None, None) => return Err(format!("no input for {leaf}")),
                };
                (Some(tensor), None, leaf.element)
            }
            Ipu::Attr(attr) => (None, Some(*attr), ElementType::F32),
            Ipu::Matmul([a, b])
            | Ipu::MatmulTl([a, b])
            | Ipu::MatmulTr([a, b])
            | Ipu::MatmulTt([a, b]) => {
                let (transpose_lhs, transpose_rhs) = node.matmul_flags().unwrap_or((false, false));
                let lhs = if transpose_lhs {
                    transpose(&value(a)?)
                } else {
                    value(a)?
                };
                let rhs = if transpose_rhs {
                    transpose(&value(b)?)
                } else {
                    value(b)?
                };
                (Some(matmul(&lhs, &rhs)), None, element(a))
            }
            Ipu::Add([a, b]) => (Some(add(&value(a)?, &value(b)?)), None, element(a)),
            Ipu::Gelu(a) => (
                Some(map(&value(a)?, |x| 0.5 * x * (1.0 + erf(x / 2f64.sqrt())))),
                None,
                element(a),
            ),
            Ipu::GeluTanh(a) => {
                let c = (2.0 / std::f64::consts::PI).sqrt();
                (
                    Some(map(&value(a)?, |x| {
                        0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
                    })),
                    None,
                    element(a),
                )
            }
            Ipu::Softmax(a) => {
                let softmax = |row: &[f64]| {
                    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let exps: Vec<f64> = row.iter().map(|x| (x - max).exp()).collect();
                    let sum: f64 = exps.iter().sum();
                    exps.iter().map(|e| e / sum).collect()
                };
                (Some(rows(&value(a)?, softmax)), None, element(a))
            }
            Ipu::LayerNorm([epsilon, x, gamma, beta]) => {
                let Some(Attr::Epsilon(bits)) = attrs[usize::from(*epsilon)] else {
                    return Err("bad epsilon".into());
                };
                let (gamma, beta) = (value(gamma)?, value(beta)?);
                let norm = |row: &[f64]| {
                    let n = row.len() as f64;
                    let mean = row.iter().sum::<f64>() / n;
                    let variance = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
                    let scale = 1.0 / (variance + f64::from_bits(bits)).sqrt();
                    row.iter()
                        .enumerate()
                        .map(|(i, x)| (x - mean) * scale * gamma.data[i] + beta.data[i])
                        .collect()
                };
                (Some(rows(&value(x)?, norm)), None, element(x))
            }
            Ipu::Cast([to, a]) => {
                let Some(Attr::CastTo {
                    element: target,
                    scale,
                }) = attrs[usize::from(*to)]
                else {
                    return Err("bad cast target".into());
                };
                let source = element(a);
                let factor = if target.is_fp8() {
                    2f64.powi(-scale as i32)
                } else if source.is_fp8() {
                    2f64.powi(scale as i32)
                } else {
                    1.0
                };
                // An exact conversion is the identity on values of the source type.
                let source_scale = if source.is_fp8() { scale } else { 0 };
                let exact = exact_conversion(source, source_scale, target);
                let convert = |x: f64| {
                    if exact {
                        x * factor
                    } else {
                        round_to(target, x * factor)
                    }
                };
                (Some(map(&value(a)?, convert)), None, target)
            }
            Ipu::Transpose(a) => (Some(transpose(&value(a)?)), None, element(a)),
        };
        // Every op's result is a tensor of its element type.
        let result = match (node, result) {
            (Ipu::Leaf(_), tensor) | (_, tensor @ None) => tensor,
            (_, Some(tensor)) => Some(map(&tensor, |x| round_to(result_element, x))),
        };
        values.push(result);
        attrs.push(attr);
        elements.push(result_element);
    }
    values
        .pop()
        .flatten()
        .ok_or_else(|| "empty expression".to_string())
}
