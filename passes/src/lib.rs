//! Passes of ipu-opt: the pass trait and registry, the pipeline grammar and pass-manager
//! construction, and one module per pass.

pub mod annotate_flops;
pub mod build_trace;
pub mod canonicalize;
pub mod compile;
pub mod convert;
pub mod demote;
pub mod element;
pub mod eqsat;
pub mod exchange;
pub mod fold_add_zero;
pub mod form_attention;
pub mod fuse_maps;
pub mod ir;
pub mod lower;
pub mod lower_mid;
pub mod manager;
pub mod mlir_cxx;
pub mod pass;
pub mod pipeline;
pub mod plan_ir;
pub mod planner;
pub mod registry;
pub mod rewrite;
pub mod select_finalist;
pub mod strategies;
pub mod tiling;

pub use pass::{DynPass, Pass, PassFailure, PassRun, Statistics};
pub use registry::Registry;

/// Registers every pass and named pipeline that ships with ipu-opt.
pub fn register_builtin(registry: &mut Registry) {
    registry.register::<annotate_flops::AnnotateFlops>();
    registry.register::<canonicalize::Canonicalize>();
    registry.register::<fold_add_zero::FoldAddZero>();
    registry.register::<demote::DemoteF32>();
    registry.register::<form_attention::FormAttention>();
    registry.register::<fuse_maps::FuseMaps>();
    convert::register(registry);
    registry.register::<eqsat::Eqsat>();
    registry.register::<lower_mid::LowerMid>();
    registry.register::<select_finalist::SelectFinalist>();
    registry.register::<lower::passes::LowerToTiles>();
    registry.register::<lower::passes::PlanKernels>();
    registry.register::<lower::passes::PlaceStorage>();
    registry.register::<lower::passes::LowerExchanges>();
    registry.register::<lower::passes::OptimizeExchangePlacement>();
    registry.register::<lower::passes::EmitTileCode>();
    registry.register_pipeline::<compile::CompileOptions>(
        "Plan and lower an ipu graph to an emitted ipu_tile program: ipu-lower-mid, ipu-select-finalist, ipu-lower-to-tiles, ipu-plan-kernels, ipu-place-storage, ipu-lower-exchanges, ipu-optimize-exchange-placement, ipu-emit-tile-code",
        compile::expand_compile,
    );
    registry.register_pipeline::<canonicalize::CleanupOptions>(
        "ipu-canonicalize, then upstream cse, canonicalize and symbol-dce",
        canonicalize::expand_cleanup,
    );
}

/// Registers every upstream MLIR pass with MLIR's own registry (idempotent).
pub fn register_upstream_passes() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(melior::utility::register_all_passes);
}
