//! Host arrays of f64 values in row-major (C) order.

use super::ReferenceError;
use crate::npy::Tensor;

/// A dense row-major array of f64 values.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    pub shape: Vec<usize>,
    pub data: Vec<f64>,
}

impl Array {
    /// An array; `data` must have the shape's element count.
    pub fn new(shape: Vec<usize>, data: Vec<f64>) -> Result<Array, ReferenceError> {
        let expected: usize = shape.iter().product();
        if data.len() != expected {
            return Err(ReferenceError::ArrayLength {
                shape,
                expected,
                found: data.len(),
            });
        }
        Ok(Array { shape, data })
    }

    pub fn zeros(shape: &[usize]) -> Array {
        Array {
            shape: shape.to_vec(),
            data: vec![0.0; shape.iter().product()],
        }
    }

    /// An array from f32 values (exact).
    pub fn from_f32(shape: Vec<usize>, data: &[f32]) -> Result<Array, ReferenceError> {
        Array::new(shape, data.iter().map(|&value| f64::from(value)).collect())
    }

    /// An array holding a `.npy` tensor's values.
    pub fn from_tensor(tensor: &Tensor) -> Result<Array, ReferenceError> {
        let shape = tensor
            .shape
            .iter()
            .map(|&size| usize::try_from(size))
            .collect::<Result<Vec<usize>, _>>()
            .map_err(|_| ReferenceError::Helper {
                what: "tensor",
                detail: format!("shape {:?} does not fit this host", tensor.shape),
            })?;
        Array::from_f32(shape, &tensor.data)
    }

    /// The values as a `.npy` tensor (f32; exact for values rounded to f32, f16 or FP8).
    pub fn to_tensor(&self) -> Tensor {
        Tensor {
            shape: self.shape.iter().map(|&size| size as u64).collect(),
            data: self.data.iter().map(|&value| value as f32).collect(),
        }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        strides(&self.shape)
    }

    /// The flat offset of a multi-index, `None` if out of range.
    pub fn offset(&self, index: &[usize]) -> Option<usize> {
        if index.len() != self.shape.len()
            || index.iter().zip(&self.shape).any(|(&i, &size)| i >= size)
        {
            return None;
        }
        Some(
            index
                .iter()
                .zip(self.strides())
                .map(|(&i, stride)| i * stride)
                .sum(),
        )
    }

    /// The value at a multi-index.
    pub fn get(&self, index: &[usize]) -> Option<f64> {
        self.offset(index).map(|offset| self.data[offset])
    }

    /// The multi-index of a flat offset.
    pub fn unravel(&self, offset: usize) -> Vec<usize> {
        unravel(&self.shape, offset)
    }
}

/// Row-major strides of `shape`.
pub(super) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (0..shape.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * shape[axis + 1];
    }
    strides
}

/// The multi-index of flat `offset` in `shape`.
pub(super) fn unravel(shape: &[usize], mut offset: usize) -> Vec<usize> {
    let mut index = vec![0; shape.len()];
    for axis in (0..shape.len()).rev() {
        let size = shape[axis].max(1);
        index[axis] = offset % size;
        offset /= size;
    }
    index
}
