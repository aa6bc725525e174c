//! Plain-data view of a tensor type: shape, element type and format encoding.

use melior::ir::{
    attribute::AttributeLike,
    r#type::{RankedTensorType, ShapedTypeLike, TypeLike},
    Attribute, Type,
};

use std::cell::RefCell;
use std::collections::HashMap;

use crate::format::Format;

/// Element types of `ipu` tensors, and the precisions of the device (`ipu_device::Precision`
/// names this type).
///
/// `F8E4M3` is Graphcore F143 (MLIR `f8E4M3FNUZ`), `F8E5M2` is F152 (MLIR `f8E5M2FNUZ`); both
/// carry a per-tensor power-of-two scale held outside the element (value = q * 2^scale).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum ElementType {
    F32,
    F16,
    /// Graphcore F143: 1 sign, 4 exponent, 3 mantissa bits, bias 8.
    F8E4M3,
    /// Graphcore F152: 1 sign, 5 exponent, 2 mantissa bits, bias 16.
    F8E5M2,
}

impl ElementType {
    pub const ALL: [ElementType; 4] = [
        ElementType::F32,
        ElementType::F16,
        ElementType::F8E4M3,
        ElementType::F8E5M2,
    ];

    pub const fn mlir_name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F16 => "f16",
            ElementType::F8E4M3 => "f8E4M3FNUZ",
            ElementType::F8E5M2 => "f8E5M2FNUZ",
        }
    }

    pub fn from_mlir_name(name: &str) -> Option<Self> {
        ElementType::ALL
            .into_iter()
            .find(|element| element.mlir_name() == name)
    }

    /// The element type `r#type` stands for, if it is one of ours. Uses MLIR's type predicates
    /// rather than printing the type: each print builds an `AsmState` over every loaded dialect,
    /// which was ~40% of `ipu-opt`'s run time on the 100k-op benchmark (BENCHMARKS.md).
    pub fn from_type(r#type: Type) -> Option<Self> {
        let raw = r#type.to_raw();
        // SAFETY: `raw` is a live type; the predicates only compare its TypeID.
        unsafe {
            if mlir_sys::mlirTypeIsAF16(raw) {
                Some(ElementType::F16)
            } else if mlir_sys::mlirTypeIsAF32(raw) {
                Some(ElementType::F32)
            } else if mlir_sys::mlirTypeIsAFloat8E4M3FNUZ(raw) {
                Some(ElementType::F8E4M3)
            } else if mlir_sys::mlirTypeIsAFloat8E5M2FNUZ(raw) {
                Some(ElementType::F8E5M2)
            } else {
                None
            }
        }
    }

    pub const fn is_fp8(self) -> bool {
        matches!(self, ElementType::F8E4M3 | ElementType::F8E5M2)
    }

    /// Short name used in kernel specialization names (`gemm_f8_...`, `cast_f16_f8_...`).
    pub const fn short_name(self) -> &'static str {
        match self {
            ElementType::F32 => "f32",
            ElementType::F16 => "f16",
            ElementType::F8E4M3 => "f8",
            ElementType::F8E5M2 => "f8e5",
        }
    }

    /// Bytes per element.
    pub const fn bytes(self) -> u32 {
        match self {
            ElementType::F32 => 4,
            ElementType::F16 => 2,
            ElementType::F8E4M3 | ElementType::F8E5M2 => 1,
        }
    }
}

impl std::fmt::Display for ElementType {
    fn fmt(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str(self.mlir_name())
    }
}

/// Why a type is not an `ipu` tensor.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorTypeError {
    #[error("expected a ranked tensor, found {found}")]
    NotRankedTensor { found: String },
    #[error("dimension {axis} of {found} is dynamic; ipu tensors have static shapes")]
    DynamicDimension { axis: usize, found: String },
    #[error("element type {found} is not one of f32, f16, f8E4M3FNUZ, f8E5M2FNUZ")]
    ElementType { found: String },
    #[error("bad #ipu.format encoding: {detail}")]
    Format { detail: String },
}

/// Shape, element type and optional format of a ranked tensor type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorInfo {
    pub shape: Vec<i64>,
    pub element: ElementType,
    pub format: Option<Format>,
}

impl TensorInfo {
    /// Reads an `ipu` tensor type.
    pub fn from_type(r#type: Type) -> Result<TensorInfo, TensorTypeError> {
        let tensor =
            RankedTensorType::try_from(r#type).map_err(|_| TensorTypeError::NotRankedTensor {
                found: r#type.to_string(),
            })?;
        let mut shape = Vec::with_capacity(tensor.rank());
        for axis in 0..tensor.rank() {
            let size = tensor
                .dim_size(axis)
                .map_err(|_| TensorTypeError::DynamicDimension {
                    axis,
                    found: r#type.to_string(),
                })?;
            match size {
                melior::ir::r#type::DimSize::Static(size) => shape.push(size as i64),
                melior::ir::r#type::DimSize::Dynamic => {
                    return Err(TensorTypeError::DynamicDimension {
                        axis,
                        found: r#type.to_string(),
                    })
                }
            }
        }
        let element = ElementType::from_type(tensor.element()).ok_or_else(|| {
            TensorTypeError::ElementType {
                found: tensor.element().to_string(),
            }
        })?;
        let format = match tensor.encoding() {
            None => None,
            Some(attribute) => Some(decode_format(attribute)?),
        };
        Ok(TensorInfo {
            shape,
            element,
            format,
        })
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    pub fn elements(&self) -> i64 {
        self.shape.iter().product()
    }

    /// The type's textual form, e.g. `tensor<4x8xf16>` or with its `#ipu.format` encoding.
    pub fn to_type_string(&self) -> String {
        let mut text = String::from("tensor<");
        for size in &self.shape {
            text.push_str(&format!("{size}x"));
        }
        text.push_str(self.element.mlir_name());
        if let Some(format) = &self.format {
            text.push_str(", ");
            text.push_str(&format.to_string());
        }
        text.push('>');
        text
    }
}

/// Decodes a format encoding. Decoding prints the attribute (the C API cannot read IRDL
/// attribute parameters), and a print builds an `AsmState` over every loaded dialect, so inside
/// a [`FormatCache`] scope each distinct encoding is printed once.
fn decode_format(attribute: Attribute) -> Result<Format, TensorTypeError> {
    let key = attribute.to_raw().ptr as usize;
    let cached = FORMAT_CACHE.with(|cache| {
        cache
            .borrow()
            .as_ref()
            .and_then(|map| map.get(&key).cloned())
    });
    if let Some(result) = cached {
        return result;
    }
    let result = Format::parse(&attribute.to_string()).map_err(|error| TensorTypeError::Format {
        detail: error.to_string(),
    });
    FORMAT_CACHE.with(|cache| {
        if let Some(map) = cache.borrow_mut().as_mut() {
            map.insert(key, result.clone());
        }
    });
    result
}

thread_local! {
    static FORMAT_CACHE: RefCell<Option<HashMap<usize, Result<Format, TensorTypeError>>>> =
        const { RefCell::new(None) };
}

/// While alive, [`TensorInfo::from_type`] on this thread decodes each distinct format encoding
/// once. Attributes are uniqued and live as long as their context, so an attribute's address
/// identifies it only while that context is alive: hold the guard only while one context is in
/// use (as `verify_module` does for one walk). Dropping the outermost guard clears the cache.
pub struct FormatCache {
    outermost: bool,
}

impl FormatCache {
    pub fn enable() -> FormatCache {
        let outermost = FORMAT_CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            let outermost = cache.is_none();
            if outermost {
                *cache = Some(HashMap::new());
            }
            outermost
        });
        FormatCache { outermost }
    }
}

impl Drop for FormatCache {
    fn drop(&mut self) {
        if self.outermost {
            FORMAT_CACHE.with(|cache| *cache.borrow_mut() = None);
        }
    }
}
