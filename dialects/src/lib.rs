//! The `ipu` dialect family: IRDL declarations (`dialects/irdl/*.irdl.mlir`) loaded into every
//! context, typed Rust views and builders over melior operations, attribute codecs for tensor
//! formats and operator plans, and the semantic verifiers IRDL cannot express.

pub mod context;
pub mod diagnostics;
pub mod format;
pub mod graph;
pub mod ipu;
pub mod plan;
pub mod tensor;
pub mod tile;

pub use context::{create_context, load_dialects, IRDL_IPU};
pub use tensor::{ElementType, TensorInfo};
