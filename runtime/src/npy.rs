//! Host tensors: `.npy` files (NumPy format versions 1.0 to 3.0, little-endian `<f4` and
//! `<f2`, C order) and seeded Gaussian generators for inputs and weights.
//!
//! Values are held as f32 on the host; f16 files are widened on read and rounded (to nearest
//! even) on write. Headers are validated: magic, version, a dict with exactly `descr`,
//! `fortran_order` and `shape`, a supported dtype, C order, a shape whose element count
//! matches the data that follows, and no header or shape larger than the file.

use std::path::Path;

use half::f16;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// A host tensor: C-order f32 values.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub shape: Vec<u64>,
    pub data: Vec<f32>,
}

/// Element type of an `.npy` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpyDtype {
    F32,
    F16,
}

impl NpyDtype {
    const fn descr(self) -> &'static str {
        match self {
            NpyDtype::F32 => "<f4",
            NpyDtype::F16 => "<f2",
        }
    }

    const fn bytes(self) -> usize {
        match self {
            NpyDtype::F32 => 4,
            NpyDtype::F16 => 2,
        }
    }
}

/// Why an `.npy` file or a tensor is refused.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("{origin}: {detail}")]
    NotAFile { origin: String, detail: String },
    #[error("{origin}: not an .npy file (bad magic)")]
    Magic { origin: String },
    #[error("{origin}: .npy version {major}.{minor} is not supported (1.0, 2.0, 3.0)")]
    Version {
        origin: String,
        major: u8,
        minor: u8,
    },
    #[error("{origin}: truncated: {what} needs {needed} bytes, {available} available")]
    Truncated {
        origin: String,
        what: &'static str,
        needed: u64,
        available: u64,
    },
    #[error("{origin}: malformed header: {detail}")]
    Header { origin: String, detail: String },
    #[error("{origin}: dtype '{descr}' is not supported (little-endian '<f4' or '<f2')")]
    Dtype { origin: String, descr: String },
    #[error("{origin}: Fortran-order arrays are not supported")]
    FortranOrder { origin: String },
    #[error("{origin}: shape {shape:?} has {expected} bytes of data, the file holds {found}")]
    DataLength {
        origin: String,
        shape: Vec<u64>,
        expected: u64,
        found: u64,
    },
    #[error("tensor shape {shape:?} has {expected} elements, data has {found}")]
    ShapeMismatch {
        shape: Vec<u64>,
        expected: u64,
        found: u64,
    },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl Tensor {
    /// A tensor after checking that `data` has as many elements as `shape` says.
    pub fn new(shape: Vec<u64>, data: Vec<f32>) -> Result<Tensor, NpyError> {
        let expected = element_count(&shape).unwrap_or(u64::MAX);
        if expected != data.len() as u64 {
            return Err(NpyError::ShapeMismatch {
                shape,
                expected,
                found: data.len() as u64,
            });
        }
        Ok(Tensor { shape, data })
    }

    /// Encodes as an `.npy` file (version 1.0; 3.0 is never needed for our short headers).
    pub fn to_npy(&self, dtype: NpyDtype) -> Vec<u8> {
        let shape = match self.shape.as_slice() {
            [] => "()".to_string(),
            [one] => format!("({one},)"),
            dims => format!(
                "({})",
                dims.iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let mut header = format!(
            "{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}",
            dtype.descr()
        );
        // NumPy pads the header with spaces and a newline so the data starts 64-byte aligned.
        let unpadded = MAGIC.len() + 2 + 2 + header.len() + 1;
        header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
        header.push('\n');
        let mut out = Vec::with_capacity(10 + header.len() + self.data.len() * dtype.bytes());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(header.len() as u16).to_le_bytes());
        out.extend_from_slice(header.as_bytes());
        match dtype {
            NpyDtype::F32 => self
                .data
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
            NpyDtype::F16 => self
                .data
                .iter()
                .for_each(|v| out.extend_from_slice(&f16::from_f32(*v).to_le_bytes())),
        }
        out
    }

    /// Decodes an `.npy` file; `origin` names it in errors.
    pub fn from_npy(bytes: &[u8], origin: &str) -> Result<Tensor, NpyError> {
        let origin_s = || origin.to_string();
        let truncated = |what, needed: usize| NpyError::Truncated {
            origin: origin.to_string(),
            what,
            needed: needed as u64,
            available: bytes.len() as u64,
        };
        if bytes.len() < 8 {
            return Err(if MAGIC.starts_with(bytes) || bytes.starts_with(MAGIC) {
                truncated("the preamble", 10)
            } else {
                NpyError::Magic { origin: origin_s() }
            });
        }
        if &bytes[..6] != MAGIC {
            return Err(NpyError::Magic { origin: origin_s() });
        }
        let (major, minor) = (bytes[6], bytes[7]);
        let (length_bytes, utf8) = match (major, minor) {
            (1, 0) => (2, false),
            (2, 0) => (4, false),
            (3, 0) => (4, true),
            _ => {
                return Err(NpyError::Version {
                    origin: origin_s(),
                    major,
                    minor,
                })
            }
        };
        if bytes.len() < 8 + length_bytes {
            return Err(truncated("the header length", 8 + length_bytes));
        }
        let header_len = if length_bytes == 2 {
            u16::from_le_bytes([bytes[8], bytes[9]]) as usize
        } else {
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize
        };
        let data_start = 8 + length_bytes + header_len;
        if bytes.len() < data_start {
            return Err(truncated("the header", data_start));
        }
        let header = &bytes[8 + length_bytes..data_start];
        let header = if utf8 {
            std::str::from_utf8(header).ok()
        } else {
            header
                .is_ascii()
                .then(|| std::str::from_utf8(header).ok())
                .flatten()
        }
        .ok_or_else(|| NpyError::Header {
            origin: origin_s(),
            detail: "header is not text".into(),
        })?;
        let (descr, fortran, shape) = parse_header(header).map_err(|detail| NpyError::Header {
            origin: origin_s(),
            detail,
        })?;
        let dtype = match descr.as_str() {
            "<f4" => NpyDtype::F32,
            "<f2" => NpyDtype::F16,
            _ => {
                return Err(NpyError::Dtype {
                    origin: origin_s(),
                    descr,
                })
            }
        };
        if fortran {
            return Err(NpyError::FortranOrder { origin: origin_s() });
        }
        let data = &bytes[data_start..];
        // Checked before allocating: the shape is untrusted, the data length is not.
        let expected = element_count(&shape)
            .and_then(|n| n.checked_mul(dtype.bytes() as u64))
            .unwrap_or(u64::MAX);
        if expected != data.len() as u64 {
            return Err(NpyError::DataLength {
                origin: origin_s(),
                shape,
                expected,
                found: data.len() as u64,
            });
        }
        let values = match dtype {
            NpyDtype::F32 => data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect(),
            NpyDtype::F16 => data
                .chunks_exact(2)
                .map(|c| f16::from_le_bytes([c[0], c[1]]).to_f32())
                .collect(),
        };
        Ok(Tensor {
            shape,
            data: values,
        })
    }

    pub fn read(path: &Path) -> Result<Tensor, NpyError> {
        let bytes = std::fs::read(path).map_err(|source| NpyError::Io {
            action: "reading",
            path: path.display().to_string(),
            source,
        })?;
        Self::from_npy(&bytes, &path.display().to_string())
    }

    pub fn write(&self, path: &Path, dtype: NpyDtype) -> Result<(), NpyError> {
        std::fs::write(path, self.to_npy(dtype)).map_err(|source| NpyError::Io {
            action: "writing",
            path: path.display().to_string(),
            source,
        })
    }

    /// Seeded Gaussian values, mean 0 and standard deviation `sigma` (see [`Sigma`]).
    /// The same seed, shape and sigma give the same values on every platform: ChaCha8 is a
    /// specified stream and Box-Muller uses only IEEE-exact operations plus `ln`, `sqrt`,
    /// `cos` and `sin` in f64, rounded once to f32.
    pub fn gaussian(shape: Vec<u64>, sigma: f64, seed: u64) -> Tensor {
        let count = element_count(&shape).unwrap_or(0) as usize;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut data = Vec::with_capacity(count);
        while data.len() < count {
            // u1 in (0, 1]: ln(0) would be -inf.
            let u1 = 1.0 - rng.random::<f64>();
            let u2 = rng.random::<f64>();
            let radius = (-2.0 * u1.ln()).sqrt() * sigma;
            let angle = std::f64::consts::TAU * u2;
            data.push((radius * angle.cos()) as f32);
            if data.len() < count {
                data.push((radius * angle.sin()) as f32);
            }
        }
        Tensor { shape, data }
    }
}

/// Documented standard deviations of generated tensors.
pub struct Sigma;

impl Sigma {
    /// Activations (model inputs): unit variance, as after a layer norm.
    pub const INPUT: f64 = 1.0;
    /// A weight matrix with `fan_in` input features: `1 / sqrt(fan_in)` keeps the output of a
    /// matmul with unit-variance inputs at unit variance (LeCun initialization), so FP8 scales
    /// chosen for one layer suit the next.
    pub fn weight(fan_in: u64) -> f64 {
        1.0 / (fan_in.max(1) as f64).sqrt()
    }
    /// Biases: small against unit-variance activations, nonzero so that an add that is
    /// dropped or misplaced shows in the output.
    pub const BIAS: f64 = 0.02;
}

fn element_count(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d))
}

/// Parses `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
fn parse_header(text: &str) -> Result<(String, bool, Vec<u64>), String> {
    let body = text
        .trim_end_matches(['\n', ' ', '\0'])
        .trim()
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .ok_or("header is not a dict")?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    let mut rest = body.trim();
    while !rest.is_empty() {
        let (key, after) =
            quoted(rest).ok_or_else(|| format!("expected a quoted key at '{rest}'"))?;
        let after = after
            .trim_start()
            .strip_prefix(':')
            .ok_or_else(|| format!("expected ':' after '{key}'"))?
            .trim_start();
        let after = match key {
            "descr" => {
                let (value, after) = quoted(after).ok_or("descr is not a string")?;
                descr = Some(value.to_string());
                after
            }
            "fortran_order" => {
                if let Some(after) = after.strip_prefix("False") {
                    fortran = Some(false);
                    after
                } else if let Some(after) = after.strip_prefix("True") {
                    fortran = Some(true);
                    after
                } else {
                    return Err("fortran_order is not True or False".into());
                }
            }
            "shape" => {
                let inner = after.strip_prefix('(').ok_or("shape is not a tuple")?;
                let close = inner.find(')').ok_or("shape tuple is not closed")?;
                let mut dims = Vec::new();
                for part in inner[..close].split(',') {
                    let part = part.trim();
                    if part.is_empty() {
                        continue;
                    }
                    // Shapes longer than 32 dimensions are NumPy's own limit.
                    if dims.len() == 32 {
                        return Err("shape has more than 32 dimensions".into());
                    }
                    dims.push(
                        part.trim_end_matches('L')
                            .parse::<u64>()
                            .map_err(|_| format!("shape entry '{part}' is not a size"))?,
                    );
                }
                shape = Some(dims);
                &inner[close + 1..]
            }
            other => return Err(format!("unexpected key '{other}'")),
        };
        let after = after.trim_start();
        rest = after.strip_prefix(',').unwrap_or(after).trim_start();
        if !after.starts_with(',') && !rest.is_empty() {
            return Err(format!("expected ',' at '{rest}'"));
        }
    }
    Ok((
        descr.ok_or("missing 'descr'")?,
        fortran.ok_or("missing 'fortran_order'")?,
        shape.ok_or("missing 'shape'")?,
    ))
}

/// A single- or double-quoted string at the start of `text`, and what follows it.
fn quoted(text: &str) -> Option<(&str, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = &text[1..];
    let end = inner.find(quote)?;
    Some((&inner[..end], &inner[end + 1..]))
}
