//! Host tensors for a package's bindings: seeded inputs, inputs and weights read from a
//! directory of `.npy` files, outputs written as `.npy`.
//!
//! Files are named after bindings: `<dir>/<name>.npy`, with every character outside
//! `[A-Za-z0-9._-]` replaced by `_` (MLIR value names such as `%arg0` are not file names).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::npy::{NpyDtype, NpyError, Sigma, Tensor};
use crate::package::{BindingRole, Package};

/// The file name of a binding's tensor.
pub fn file_name(binding: &str) -> String {
    let stem: String = binding
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{stem}.npy")
}

/// The seed of one binding's generator: the run's seed mixed with the binding's name, so
/// each input gets an independent stream and adding or reordering bindings changes none of
/// the others.
pub fn binding_seed(seed: u64, binding: &str) -> u64 {
    let digest = Sha256::digest(binding.as_bytes());
    let mut word = [0u8; 8];
    word.copy_from_slice(&digest[..8]);
    seed ^ u64::from_le_bytes(word)
}

/// Seeded Gaussian values for every input and parameter of `package`: inputs at
/// [`Sigma::INPUT`]; parameters (weights the caller supplies at `initialize`) as
/// [`parameter_sigma`] says, and so per-layer stacks (a scan's per-iteration weights, streamed
/// one slice per iteration or resident) by their slice's shape.
pub fn seeded_inputs(package: &Package, seed: u64) -> BTreeMap<String, Tensor> {
    package
        .bindings
        .iter()
        .filter_map(|b| {
            let sigma = match b.role {
                BindingRole::Input if b.iterations > 1 => {
                    parameter_sigma(b.shape.get(1..).unwrap_or_default())
                }
                BindingRole::Input => Sigma::INPUT,
                // A resident per-iteration stack: by its slice's shape too.
                BindingRole::Parameter if b.iterations > 1 => {
                    parameter_sigma(b.shape.get(1..).unwrap_or_default())
                }
                BindingRole::Parameter => parameter_sigma(&b.shape),
                _ => return None,
            };
            let tensor = Tensor::gaussian(b.shape.clone(), sigma, binding_seed(seed, &b.name));
            Some((b.name.clone(), tensor))
        })
        .collect()
}

/// The deviation of a generated parameter of `shape`: a matrix `[.., fan_in, out]` (the
/// right operand of the products these models write) at [`Sigma::weight`] of its fan-in, so
/// activations keep unit variance through the layers, as trained models keep them; a vector
/// (a bias, a layer norm's gain or shift) at [`Sigma::INPUT`], the scale of what it is added to.
pub fn parameter_sigma(shape: &[u64]) -> f64 {
    match shape {
        [.., fan_in, _] => Sigma::weight(*fan_in),
        _ => Sigma::INPUT,
    }
}

/// Reads `<dir>/<name>.npy` for every input and weight of `package` whose file exists
/// (weights so read replace the package's values). Missing inputs are left for the session
/// to report by name.
pub fn read_tensors(package: &Package, dir: &Path) -> Result<BTreeMap<String, Tensor>, NpyError> {
    let mut tensors = BTreeMap::new();
    for binding in package
        .bindings
        .iter()
        .filter(|b| b.role != BindingRole::Output)
    {
        let path = dir.join(file_name(&binding.name));
        // Something named like the input that is not a regular file (a directory, a device or
        // a link to one) is the user's mistake, never skipped for a generated input, and never
        // read (a link to /dev/zero would not end).
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => {
                tensors.insert(binding.name.clone(), Tensor::read(&path)?);
            }
            Ok(_) => {
                return Err(NpyError::NotAFile {
                    origin: path.display().to_string(),
                    detail: format!(
                        "is not a regular file (input '{}' must be an .npy file)",
                        binding.name
                    ),
                })
            }
            Err(_) if path.symlink_metadata().is_ok() => {
                return Err(NpyError::NotAFile {
                    origin: path.display().to_string(),
                    detail: "is a link to nothing".to_string(),
                })
            }
            Err(_) => {}
        }
    }
    Ok(tensors)
}

/// Writes each tensor to `<dir>/<name>.npy` and returns the paths.
pub fn write_tensors(
    tensors: &BTreeMap<String, Tensor>,
    dir: &Path,
    dtype: NpyDtype,
) -> Result<Vec<PathBuf>, NpyError> {
    std::fs::create_dir_all(dir).map_err(|source| NpyError::Io {
        action: "creating",
        path: dir.display().to_string(),
        source,
    })?;
    let mut paths = Vec::with_capacity(tensors.len());
    for (name, tensor) in tensors {
        let path = dir.join(file_name(name));
        tensor.write(&path, dtype)?;
        paths.push(path);
    }
    Ok(paths)
}
