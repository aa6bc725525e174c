//! The package build's trace, as the seed logs it: each stage of `ipu-compile` runs inside
//! `ipu.package.build{tile_count=... operations=...}` ([`in_package_build`]) and logs its
//! phases as `ipu.package.phase{phase="..."}` spans that end with
//! `package build phase finished phase=... elapsed_ms=... success=...` ([`staged`]).

use std::time::Instant;

use melior::ir::{block::BlockLike, operation::OperationLike, OperationRef, RegionLike};
use tracing::info;

use crate::plan_ir;

/// A phase of the package build: a tracing span `ipu.package.phase{phase=...}` and, when it
/// ends, `package build phase finished phase=... elapsed_ms=... success=...`.
pub struct Phase {
    name: &'static str,
    started: Instant,
    span: tracing::span::EnteredSpan,
    success: bool,
}

impl Phase {
    pub fn enter(name: &'static str) -> Phase {
        Phase {
            name,
            started: Instant::now(),
            span: tracing::info_span!("ipu.package.phase", phase = name).entered(),
            success: false,
        }
    }

    /// Marks the phase successful (a phase dropped without this reports `success=false`).
    pub fn finish(mut self) {
        self.success = true;
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        let _ = &self.span;
        // The target the line had when it was logged from compile.rs: log filters and readers
        // of the seed-style lines keep matching it.
        info!(
            target: "ipu_passes::compile",
            phase = self.name,
            elapsed_ms = self.started.elapsed().as_millis() as u64,
            success = self.success,
            "package build phase finished"
        );
    }
}

/// Runs `body` as phase `name` of the package build.
pub fn staged<T, E>(name: &'static str, body: impl FnOnce() -> Result<T, E>) -> Result<T, E> {
    let phase = Phase::enter(name);
    let result = body();
    if result.is_ok() {
        phase.finish();
    }
    result
}

/// Runs `body` (a stage of the package build of `module`) inside the build's span
/// `ipu.package.build{tile_count=... operations=...}`: `tile_count` (the stages go through
/// `lower_mid::in_package_build`, which passes the count planning recorded) and the module's
/// graph ops.
pub fn in_package_build<T>(module: OperationRef, tile_count: u32, body: impl FnOnce() -> T) -> T {
    let span = tracing::info_span!(
        "ipu.package.build",
        tile_count,
        operations = count_graph_ops(module)
    );
    let _build = span.enter();
    body()
}

/// Graph ops of the module's functions (`ipu.*` ops other than planning's inserted casts and
/// rearranges).
fn count_graph_ops(module: OperationRef) -> usize {
    let mut count = 0;
    for function in plan_ir::functions(module).values() {
        let Some(block) = function.region(0).ok().and_then(|r| r.first_block()) else {
            continue;
        };
        let mut next = block.first_operation();
        while let Some(inner) = next {
            let name = inner.name();
            if name
                .as_string_ref()
                .as_str()
                .is_ok_and(|n| n.starts_with("ipu."))
                && !inner.has_attribute("ipu.inserted")
            {
                count += 1;
            }
            next = inner.next_in_block();
        }
    }
    count
}
