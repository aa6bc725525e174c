//! Element precisions and memory classes shared by the target table, kernels and simulator.

use serde::{Deserialize, Serialize};

/// Element precision of a tensor on the device.
///
/// `F8E4M3` is Graphcore F143 (MLIR `f8E4M3FNUZ`), `F8E5M2` is F152 (MLIR `f8E5M2FNUZ`); both
/// carry a per-tensor power-of-two scale held outside the element (value = q * 2^scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Precision {
    F32,
    F16,
    F8E4M3,
    F8E5M2,
}

impl Precision {
    /// Bytes per element.
    pub const fn bytes(self) -> u32 {
        match self {
            Precision::F32 => 4,
            Precision::F16 => 2,
            Precision::F8E4M3 | Precision::F8E5M2 => 1,
        }
    }

    /// Short name used in kernel specialization names (`gemm_f8_...`, `cast_f16_f8_...`).
    pub const fn short_name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::F8E4M3 => "f8",
            Precision::F8E5M2 => "f8e5",
        }
    }

    /// The MLIR element type spelling.
    pub const fn mlir_name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::F8E4M3 => "f8E4M3FNUZ",
            Precision::F8E5M2 => "f8E5M2FNUZ",
        }
    }

    /// Parses an MLIR element type spelling.
    pub fn from_mlir_name(name: &str) -> Option<Self> {
        Some(match name {
            "f32" => Precision::F32,
            "f16" => Precision::F16,
            "f8E4M3FNUZ" => Precision::F8E4M3,
            "f8E5M2FNUZ" => Precision::F8E5M2,
            _ => return None,
        })
    }

    pub const fn is_fp8(self) -> bool {
        matches!(self, Precision::F8E4M3 | Precision::F8E5M2)
    }
}

/// Tile memory class a buffer lives in. Interleaved memory (region 1) is the only one that
/// serves 128-bit loads, so AMP weights fed from it run at full rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum MemoryClass {
    Standard,
    Interleaved,
}

impl MemoryClass {
    pub const fn name(self) -> &'static str {
        match self {
            MemoryClass::Standard => "standard",
            MemoryClass::Interleaved => "interleaved",
        }
    }
}
