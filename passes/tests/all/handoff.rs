//! The stage passes' design handoff (`ipu_passes::lower::ir::handoff`): a stage takes the
//! design the previous one kept only while the tile module is exactly what was written; any
//! change in between makes it read the IR again. Either way the result is the same.

use ipu_device::Target;
use ipu_passes::lower::ir::{self, handoff};
use ipu_passes::manager::{build_pass_manager, PrintAround};
use ipu_passes::Registry;
use melior::ir::{
    attribute::AttributeLike, attribute::IntegerAttribute, block::BlockLike,
    operation::OperationLike, r#type::IntegerType, Module, RegionLike,
};

const SOURCE: &str =
    "func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {\n\
    %y = \"ipu.matmul\"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>\n\
    return %y : tensor<32x64xf16>\n}\n";

fn run(module: &mut Module, pipeline: &str) {
    let context = module.context();
    // SAFETY: the module's context outlives this call.
    let context = unsafe { context.to_ref() };
    ipu_passes::register_upstream_passes();
    let parsed = ipu_passes::pipeline::parse_pipeline(pipeline).expect("pipeline");
    let built = build_pass_manager(
        context,
        &Registry::with_builtin(),
        &parsed,
        "builtin.module",
        &PrintAround::default(),
        None,
    )
    .expect("pass manager");
    built.manager.run(module).expect(pipeline);
}

#[test]
fn a_kept_design_is_taken_only_while_the_module_is_unchanged() {
    let context = ipu_dialects::context::create_context(false).expect("context");
    let mut module = Module::parse(&context, SOURCE).expect("parse");
    run(
        &mut module,
        "builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-place-storage)",
    );
    let target = Target::c600();
    let tile_module = ir::tile_modules(module.as_operation())[0];
    let read = ir::read_design(tile_module, &target).expect("reads");
    // ipu-place-storage kept the design it wrote: it is the design the IR holds.
    let (kept, validated) = handoff::take(tile_module).expect("kept by ipu-place-storage");
    assert_eq!(kept, read);
    assert!(!validated, "placement leaves the schedules unvalidated");
    // Taken once; keep it again, then change one attribute of one op in the module.
    assert!(handoff::take(tile_module).is_none());
    handoff::keep(tile_module, kept, false);
    let buffer = {
        let region = tile_module.region(0).unwrap();
        let block = region.first_block().unwrap();
        let mut op = block.first_operation().unwrap();
        while op.name().as_string_ref().as_str() != Ok("ipu_tile.buffer") {
            op = op.next_in_block().unwrap();
        }
        op
    };
    let address = buffer.attribute("address").expect("placed");
    let moved = IntegerAttribute::new(IntegerType::new(&context, 64).into(), 4096);
    assert_ne!(address, moved.into());
    // SAFETY: `buffer` is a live op of the module; the name and attribute outlive the call.
    unsafe {
        mlir_sys::mlirOperationSetAttributeByName(
            buffer.to_raw(),
            melior::StringRef::new("address").to_raw(),
            melior::ir::Attribute::from(moved).to_raw(),
        );
    }
    assert!(
        handoff::take(tile_module).is_none(),
        "a changed module must be read again"
    );
}

#[test]
fn stages_with_and_without_the_handoff_write_the_same_program() {
    let context = ipu_dialects::context::create_context(false).expect("context");
    let stages = [
        "ipu-lower-to-tiles{tiles=4}",
        "ipu-plan-kernels{compile=false}",
        "ipu-place-storage",
        "ipu-lower-exchanges",
        "ipu-optimize-exchange-placement",
        "ipu-emit-tile-code",
    ];
    // All stages in one pipeline (each takes its predecessor's design) ...
    let mut handed = Module::parse(&context, SOURCE).expect("parse");
    run(
        &mut handed,
        &format!("builtin.module({})", stages.join(", ")),
    );
    // ... and each stage on IR printed and parsed again (every stage reads the IR).
    let mut text = SOURCE.to_string();
    for stage in stages {
        let mut module = Module::parse(&context, &text).expect("reparse");
        run(&mut module, &format!("builtin.module({stage})"));
        text = module.as_operation().to_string();
    }
    assert_eq!(handed.as_operation().to_string(), text);
}
