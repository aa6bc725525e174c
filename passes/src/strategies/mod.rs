//! Strategies: each is one way of running an op on tiles and the single owner of everything
//! about that way (docs/design/ARCHITECTURE.md, "Strategies"): the plans it offers for an op,
//! the tile work a plan means, and the rules both the planner and the lowering follow. The
//! planner prices a candidate from the strategy's work with the device cost model; the
//! lowering emits that same work.
//!
//! * [`pointwise`]: `ipu.add`, `ipu.gelu`, `ipu.cast` on a grid of blocks, in place on a
//!   device operand's blocks, or on a split GEMM's reduced ranges.
//! * [`rows`]: `ipu.softmax`, `ipu.layer_norm` on whole rows per tile.
//! * [`rearrange`]: `ipu.rearrange`, batched transposes whole matrices per tile, row copies.
//! * [`blocks`]: the work on blocks of a grid both of those emit.

pub mod blocks;
pub mod pointwise;
pub mod rearrange;
pub mod rows;
