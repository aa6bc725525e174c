//! Passes, pass registry and pipeline grammar of ipu-opt.
pub mod pipeline;
