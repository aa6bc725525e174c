//! The registry of our passes and named pipelines. Upstream MLIR passes are not listed here:
//! MLIR's own registry resolves them when the pass manager is built.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::pass::{DynPass, Pass};
use crate::pipeline::{OptionInfo, PassOption, PassOptions, PipelineError};

/// Creates a pass instance from parsed options.
pub type CreatePass = fn(&[PassOption]) -> Result<Arc<dyn DynPass>, PipelineError>;
/// Expands a named pipeline with parsed options into pipeline text (an element list).
pub type ExpandPipeline = fn(&[PassOption]) -> Result<String, PipelineError>;

/// A registered pass.
#[derive(Clone)]
pub struct PassInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    pub options: fn() -> Vec<OptionInfo>,
    pub create: CreatePass,
}

/// A registered named pipeline (with typed options of its own).
#[derive(Clone)]
pub struct PipelineInfo {
    pub argument: &'static str,
    pub summary: &'static str,
    pub options: fn() -> Vec<OptionInfo>,
    pub expand: ExpandPipeline,
}

/// Passes and named pipelines by argument.
#[derive(Clone, Default)]
pub struct Registry {
    passes: BTreeMap<&'static str, PassInfo>,
    pipelines: BTreeMap<&'static str, PipelineInfo>,
}

fn create<P: Pass>(options: &[PassOption]) -> Result<Arc<dyn DynPass>, PipelineError> {
    let options = P::Options::from_pass_options(options)?;
    Ok(Arc::new(P::new(options)))
}

impl Registry {
    /// The registry with every pass and pipeline ipu-opt ships.
    pub fn with_builtin() -> Registry {
        let mut registry = Registry::default();
        crate::register_builtin(&mut registry);
        registry
    }

    /// Registers pass `P`.
    pub fn register<P: Pass>(&mut self) {
        self.passes.insert(
            P::ARGUMENT,
            PassInfo {
                argument: P::ARGUMENT,
                summary: P::SUMMARY,
                options: P::Options::describe,
                create: create::<P>,
            },
        );
    }

    /// Registers a named pipeline whose options are `O`.
    pub fn register_pipeline<O: PassOptions>(
        &mut self,
        summary: &'static str,
        expand: ExpandPipeline,
    ) {
        self.pipelines.insert(
            O::pass_name(),
            PipelineInfo {
                argument: O::pass_name(),
                summary,
                options: O::describe,
                expand,
            },
        );
    }

    pub fn pass(&self, argument: &str) -> Option<&PassInfo> {
        self.passes.get(argument)
    }

    pub fn pipeline(&self, argument: &str) -> Option<&PipelineInfo> {
        self.pipelines.get(argument)
    }

    pub fn passes(&self) -> impl Iterator<Item = &PassInfo> {
        self.passes.values()
    }

    pub fn pipelines(&self) -> impl Iterator<Item = &PipelineInfo> {
        self.pipelines.values()
    }

    /// Every name a pipeline element may use: ours and the upstream passes we know of.
    pub fn known_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self
            .passes
            .keys()
            .chain(self.pipelines.keys())
            .copied()
            .collect();
        names.extend(UPSTREAM_PASSES);
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// Upstream passes commonly mixed into our pipelines. MLIR's registry is the authority on what
/// exists; this list only feeds "did you mean" suggestions and the valid-pass list in errors.
pub const UPSTREAM_PASSES: &[&str] = &[
    "canonicalize",
    "cse",
    "symbol-dce",
    "symbol-privatize",
    "inline",
    "loop-invariant-code-motion",
    "sccp",
    "strip-debuginfo",
    "print-ir",
    "print-op-stats",
    "remove-dead-values",
    "control-flow-sink",
    "topological-sort",
    "view-op-graph",
    "generate-runtime-verification",
    "mem2reg",
    "sroa",
    "convert-scf-to-cf",
    "convert-cf-to-llvm",
    "convert-arith-to-llvm",
    "convert-func-to-llvm",
    "finalize-memref-to-llvm",
    "convert-to-llvm",
    "reconcile-unrealized-casts",
    "one-shot-bufferize",
    "linalg-generalize-named-ops",
    "tosa-to-linalg",
    "tosa-to-linalg-named",
];
