//! The mid-level planner: pure Rust over plain data (no MLIR context), so it is unit-testable
//! and can run off the IR thread. It reads the vocabulary of [`crate::tiling`] (the graph,
//! layouts, formats, candidates, options; re-exported here under their old names) and asks
//! the strategies ([`crate::strategies`]) for candidates; it knows no strategy's internals.
//!
//! * [`candidates`]: the dispatch of each op to the strategies that offer its candidates;
//! * [`beam`]: the beam over the program keeping the Pareto front over cycles, exchange cycles
//!   and memory, grouped by the formats later ops see;
//! * [`expand`]: a finalist expanded to per-tile transfers and kernel calls;
//! * [`gemm`]: the dispatch of `ipu.matmul` among the GEMM strategies.

pub mod beam;
pub mod candidates;
pub mod expand;
pub mod gemm;
pub use crate::tiling::format as cost;
pub use crate::tiling::{constraints, graph, layout, ranges};
mod step;
#[cfg(test)]
mod tests;

pub use beam::{derive, evaluate, plan, Finalist, OpEstimate, ProgramEstimate};
pub use candidates::{Candidate, Need, SCALE_PARAMS};
pub use constraints::{Constraint, Constraints};
pub use cost::{MemoryUse, ValueFormat};
pub use graph::{Graph, Op, OpKind, Origin, Value, ValueId};
pub use layout::Shards;

pub use crate::tiling::options::{BudgetClass, PlannerError, PlannerOptions, PrecisionPolicy};
