//! The vocabulary planning on tiles is written in, shared by the strategies, the planner and
//! the lowering (dependencies point one way: `tiling` <- `strategies` <- `planner`, and the
//! lowering reads `tiling` and `strategies`):
//!
//! * [`graph`]: the program as plain data, values and ops (`ipu_dialects::graph`, where it is
//!   read from `ipu` IR); [`ranges`]: bounds on `max |x|` propagated through its ops, for FP8
//!   scales;
//! * [`layout`]: how a tensor is spread over tiles and what moving it costs the exchange;
//! * [`format`]: value formats (precision, element order, memory class) and memory use;
//! * [`candidate`]: what a strategy offers the planner for an op;
//! * [`options`]: what planning is told, and its errors; [`constraints`]: plans pinned from
//!   JSON;
//! * [`program`]: the tile program strategies' work is emitted into.

pub mod candidate;
pub mod carried;
pub mod constraints;
pub mod format;
pub mod layout;
pub mod options;
pub mod program;
pub mod ranges;

pub use ipu_dialects::graph;

pub use candidate::{Candidate, Need};
pub use format::{MemoryUse, ValueFormat};
pub use graph::{Graph, Op, OpKind, Origin, Value, ValueId};
pub use ipu_dialects::ipu::Combiner;
pub use layout::Shards;
pub use options::{PlannerError, PlannerOptions, PrecisionPolicy};
