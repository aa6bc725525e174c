//! NumPy arrays in and out: inputs checked against the package's bindings (name, shape, dtype)
//! before any element is copied, outputs as float32 arrays.

use std::collections::BTreeMap;

use half::f16;
use ipu_runtime::{Binding, BindingRole, Package, Tensor};
use numpy::{
    PyArray1, PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::input_error;

/// `(1024, 768)`, as Python prints a shape.
fn python_shape<T: std::fmt::Display>(shape: &[T]) -> String {
    match shape {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(T::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The names a caller may give, for messages: `arg0 (input), const3 (weight)`.
fn accepted(package: &Package) -> String {
    let names: Vec<String> = package
        .bindings
        .iter()
        .filter(|b| b.role != BindingRole::Output)
        .map(|b| format!("{} ({})", b.name, b.role.name()))
        .collect();
    if names.is_empty() {
        "none: the package takes no inputs".to_string()
    } else {
        names.join(", ")
    }
}

/// The host tensors of `inputs` (binding name to array), each checked against its binding.
pub fn inputs(
    py: Python<'_>,
    package: &Package,
    inputs: &Bound<'_, PyDict>,
) -> PyResult<BTreeMap<String, Tensor>> {
    let mut tensors = BTreeMap::new();
    for (key, value) in inputs.iter() {
        let Ok(name) = key.extract::<String>() else {
            return Err(input_error(
                py,
                format!(
                    "input names must be strings (binding names), not {}",
                    key.get_type().name()?
                ),
            ));
        };
        let binding = package
            .binding(&name)
            .filter(|b| b.role != BindingRole::Output)
            .ok_or_else(|| {
                let what = if package.binding(&name).is_some() {
                    "is an output of the package, not an input"
                } else {
                    "is not an input of the package"
                };
                input_error(
                    py,
                    format!("input '{name}' {what} (it takes: {})", accepted(package)),
                )
            })?;
        tensors.insert(name.clone(), tensor(py, &name, binding, &value)?);
    }
    Ok(tensors)
}

/// One input's array as a host tensor (float32 or float16 elements, C order).
fn tensor(
    py: Python<'_>,
    name: &str,
    binding: &Binding,
    value: &Bound<'_, PyAny>,
) -> PyResult<Tensor> {
    let expected = format!(
        "the package's {} '{name}' is {} {}",
        binding.role.name(),
        binding.precision,
        python_shape(&binding.shape)
    );
    let Ok(array) = value.cast::<PyUntypedArray>() else {
        return Err(input_error(
            py,
            format!(
                "input '{name}': expected a numpy.ndarray, got {} ({expected})",
                value.get_type().name()?
            ),
        ));
    };
    let shape: Vec<u64> = array.shape().iter().map(|&d| d as u64).collect();
    if shape != binding.shape {
        return Err(input_error(
            py,
            format!(
                "input '{name}': shape {} does not match: {expected}",
                python_shape(&shape)
            ),
        ));
    }
    let dtype = array.dtype();
    let data: Vec<f32> = if dtype.is_equiv_to(&numpy::dtype::<f32>(py)) {
        let array = value.cast::<PyArrayDyn<f32>>()?;
        let view = array.try_readonly()?;
        view.as_array().iter().copied().collect()
    } else if dtype.is_equiv_to(&numpy::dtype::<f16>(py)) {
        let array = value.cast::<PyArrayDyn<f16>>()?;
        let view = array.try_readonly()?;
        view.as_array().iter().map(|v| v.to_f32()).collect()
    } else {
        return Err(input_error(
            py,
            format!(
                "input '{name}': dtype {} is not accepted: give float32 or float16 \
                 (the host rounds it to the binding's element type; {expected})",
                dtype.str()?
            ),
        ));
    };
    Ok(Tensor { shape, data })
}

/// The outputs as float32 arrays of their shapes.
pub fn outputs<'py>(
    py: Python<'py>,
    tensors: &BTreeMap<String, Tensor>,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (name, tensor) in tensors {
        let shape: Vec<usize> = tensor.shape.iter().map(|&d| d as usize).collect();
        let array = PyArray1::from_slice(py, &tensor.data).reshape(shape)?;
        dict.set_item(name, array)?;
    }
    Ok(dict)
}
