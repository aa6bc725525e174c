//! Element precisions and memory classes shared by the target table, kernels and simulator.

use serde::{Deserialize, Serialize};

/// Element precision of a tensor on the device: the dialect's element type, under the name
/// the target table, kernels and simulator use.
pub use ipu_dialects::ElementType as Precision;

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
