//! Determinism of the whole compiler: the same input gives byte-identical packages with 1
//! and 2 threads, and the packages' SHA-256 are pinned.

use sha2::Digest;

use ipu_device::Target;
use ipu_passes::lower::passes;
use ipu_passes::manager::{build_pass_manager, PrintAround};
use ipu_passes::Registry;
use melior::ir::Module;

use crate::lower_properties::{context, gemm_source};

/// The package bytes of `source` compiled by `pipeline`, in a rayon pool of `threads`.
fn package_bytes(source: &str, pipeline: &str, threads: usize) -> Vec<u8> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool");
    pool.install(|| {
        let context = context();
        ipu_passes::register_upstream_passes();
        let mut module = Module::parse(&context, source).expect("parse");
        let registry = Registry::with_builtin();
        let parsed = ipu_passes::pipeline::parse_pipeline(pipeline).expect("pipeline");
        let built = build_pass_manager(
            &context,
            &registry,
            &parsed,
            "builtin.module",
            &PrintAround::default(),
            None,
        )
        .expect("pass manager");
        built.manager.run(&mut module).expect("ipu-compile");
        let package = passes::package_from_module(module.as_operation(), &Target::c600(), None)
            .expect("package");
        package.to_bytes().expect("encode package")
    })
}

/// A binding as format 3 wrote it (pieces without padding); its fields are the package's
/// bindings section in order.
#[derive(serde::Serialize)]
struct Format3Binding {
    name: String,
    role: ipu_runtime::BindingRole,
    stream: String,
    precision: ipu_device::Precision,
    scale_exp: i32,
    shape: Vec<u64>,
    pieces: Vec<(u32, u32, u64, u32, u32, u64)>,
    data_bytes: u64,
}

/// The bindings section of a package as format 3 wrote it, `None` when a piece has padding
/// (format 5), which format 3 cannot hold.
fn format_3_bindings(bytes: &[u8]) -> Option<Vec<u8>> {
    let package = ipu_runtime::Package::from_bytes(bytes).expect("package reads");
    let bindings: Option<Vec<Format3Binding>> = package
        .bindings
        .iter()
        .map(|b| {
            let pieces = b
                .pieces
                .iter()
                .map(|p| {
                    (p.pad == 0).then_some((p.tile, p.address, p.offset, p.bytes, p.runs, p.stride))
                })
                .collect::<Option<Vec<_>>>()?;
            Some(Format3Binding {
                name: b.name.clone(),
                role: b.role,
                stream: b.stream.clone(),
                precision: b.precision,
                scale_exp: b.scale_exp,
                shape: b.shape.clone(),
                pieces,
                data_bytes: b.data.len() as u64,
            })
        })
        .collect();
    Some(postcard::to_stdvec(&bindings?).expect("bindings encode"))
}

/// A package file as format 3 wrote it: without the `memory` section (kind 10, added by
/// format 4, descriptive only), its pieces without format 5's padding, the header's version,
/// section count, payload length and checksum rewritten. The pins below were taken on format
/// 3 files; comparing this keeps them meaning "same program", the memory plan being checked
/// for determinism with the rest.
fn as_format_3(bytes: &[u8]) -> Option<Vec<u8>> {
    let bindings = format_3_bindings(bytes)?;
    const HEADER: usize = ipu_runtime::container::HEADER_BYTES;
    let count = u32::from_le_bytes(bytes[16..20].try_into().unwrap()) as usize;
    let mut out = bytes[..HEADER].to_vec();
    let (mut at, mut kept) = (HEADER, 0u32);
    for _ in 0..count {
        let kind = u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let length = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
        if kind == 4 {
            out.extend_from_slice(&bytes[at..at + 8]);
            out.extend_from_slice(&(bindings.len() as u64).to_le_bytes());
            out.extend_from_slice(&bindings);
            kept += 1;
        } else if kind != 10 {
            out.extend_from_slice(&bytes[at..at + 16 + length]);
            kept += 1;
        }
        at += 16 + length;
    }
    out[8..12].copy_from_slice(&3u32.to_le_bytes());
    out[16..20].copy_from_slice(&kept.to_le_bytes());
    let payload = (out.len() - HEADER) as u64;
    out[24..32].copy_from_slice(&payload.to_le_bytes());
    let mut hasher = sha2::Sha256::new();
    hasher.update(&out[..32]);
    hasher.update([0u8; 32]);
    hasher.update(&out[64..]);
    let sum: [u8; 32] = hasher.finalize().into();
    out[32..64].copy_from_slice(&sum);
    Some(out)
}

/// Compiles `source` with 1 and 2 threads (and 2 again) and checks the packages are
/// byte-identical, and that the SHA-256 of the package as format 3 wrote it ([`as_format_3`];
/// a package with padded host pieces as it is written) is `pinned`: the bytes the compiler produced for these plans before the typed-plan redesign
/// (5a76ce0), so a change that keeps a plan keeps its package (a pin changed since says why,
/// beside it).
fn assert_deterministic(source: &str, pipeline: &str, pinned: &str) {
    let one = package_bytes(source, pipeline, 1);
    let two = package_bytes(source, pipeline, 2);
    assert!(!one.is_empty());
    if one != two {
        let first = one.iter().zip(&two).position(|(a, b)| a != b);
        panic!(
            "packages differ between 1 and 2 threads: {} vs {} B, first difference at {first:?}",
            one.len(),
            two.len()
        );
    }
    // And again with 2 threads: no run-to-run variation either.
    assert!(
        package_bytes(source, pipeline, 2) == two,
        "2-thread runs differ"
    );
    // A package whose host writes carry zero padding (format 5) has no format-3 form: its
    // pin is of the bytes as written.
    let pinned_form = as_format_3(&one).unwrap_or_else(|| one.clone());
    let digest: String = sha2::Sha256::digest(pinned_form)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    assert_eq!(digest, pinned, "package bytes changed for {pipeline}");
}

#[test]
fn fp8_seed_gemm_package_is_identical_with_1_and_2_threads() {
    let source = include_str!("../../../examples/gemm_fp8.mlir");
    assert_deterministic(
        source,
        "builtin.module(ipu-compile{tiles=64 precision=fp8 compile-kernels=false})",
        // Since the exchange phase's fixed cost is fitted to the multicast replay (542 cycles,
        // was 600; packages record each phase's cycles and the estimates): same plans, final
        // cycles 15,170 -> 15,112 (one phase). The same change re-pinned every package below.
        // Since a physical pair's sends no longer share a bus (the SigLIP MLP replay): the
        // exchange schedules place a pair's sends at once; same 15,112 cycles. It re-pinned
        // every package below too. Since a receiver switching sender pays the select latency
        // (the SigLIP MLP replay): 15,112 -> 17,240 (19 switches on the critical receiver);
        // re-pinned every package below too.
        // Route time by folded column (phase cost 542 -> 521 plus each receiver's route,
        // issue 19): same plans, 17,240 -> 17,220 final cycles.
        "3219dc41efe7846d5a710b786d2fded94981c2dcb6ac2551e930339d9204381e",
    );
}

#[test]
fn f16_gemm_package_is_identical_with_1_and_2_threads() {
    assert_deterministic(
        &gemm_source(96, 128, 256),
        "builtin.module(ipu-compile{tiles=16 precision=f16 compile-kernels=false})",
        // Pairs sending at once: 12,658 -> 12,490 final cycles. Select latency per source
        // switch: 13,386.
        // Route time by folded column (phase cost 542 -> 521 plus each receiver's route,
        // issue 19): same plans, 13,386 -> 13,365 final cycles.
        "c4eb129625856d0a7b3909e46bba8f83d715d275bc8ec520c1bdcf638f5e7175",
    );
}

#[test]
fn mlp_package_is_identical_with_1_and_2_threads() {
    // Chained split GEMMs with the bias add and GeLU in place on their ranges.
    assert_deterministic(
        include_str!("../../../examples/mlp_small.mlir"),
        "builtin.module(ipu-compile{tiles=64 compile-kernels=false})",
        // Since split GEMM candidates are priced from the copies and transfers their lowering
        // emits: the second matmul's estimate 6,162 -> 6,151 cycles (the package carries each
        // op's estimate); same plans, same program, same 16,830 final cycles. Fitted phase
        // cost: 16,656 (three phases). Pairs sending at once: 15,184. Select latency per
        // source switch (and the chained GEMM's gather priced from its producer's blocks):
        // 18,336.
        // Route time by folded column (phase cost 542 -> 521 plus each receiver's route,
        // issue 19): same plans, 18,336 -> 18,258 final cycles.
        "541065eb1156c87e6507f79055edb184b3cf6c2ead0e1a4492fd06f74e70fade",
    );
}

#[test]
fn repeat_package_is_identical_with_1_and_2_threads() {
    assert_deterministic(
        include_str!("../../../test/Runtime/Inputs/repeat_layer.mlir"),
        "builtin.module(ipu-compile{tiles=64 precision=f32 compile-kernels=false})",
        // Since the pointwise and rows strategies: the in-place bias add and the layer norm
        // read their argument vectors where the planner homes them (each reader its piece,
        // exchanged among the readers) instead of one tile broadcasting; same plans, same
        // 13,434 final cycles. Since the body's own buffers live only from first to last
        // use (tiling::carried; a tile's runs of one step in order): other addresses, the
        // same plans and 13,434 cycles. Fitted phase cost: 12,846 (ten phases 58 cycles
        // cheaper, and 8 cycles from how one phase is scheduled). Pairs sending at once: 12,702.
        // Select latency per source switch (the vectors sent from staging buffers): 14,094.
        // Route time by folded column (phase cost 542 -> 521 plus each receiver's route,
        // issue 19): same plans, 14,094 -> 13,986 final cycles.
        "49dd0d8c872d7f2243256649e78293e930b20166f259145aabe5e573691d2838",
    );
}

#[test]
fn transformer_block_package_is_identical_with_1_and_2_threads() {
    // The general lowering's fetches, broadcasts and copies are ordered maps: no thread or
    // hash order reaches the package.
    assert_deterministic(
        include_str!("../../../test/Runtime/Inputs/general_ops.mlir"),
        "builtin.module(ipu-compile{tiles=64 precision=f32 compile-kernels=false})",
        // Since the pointwise, rows and rearrange strategies: every op of it but the attention
        // and the matmul runs on its plan's grid (host operands written there; the lowering
        // used to pick its own grids), and the rearranges are priced as they run, which
        // changes the selected plans; final cycles 24,148 -> 24,148, refined error -2.87 % ->
        // -1.70 %. Fitted phase cost: 24,148 -> 23,858 (five phases); pairs sending at once:
        // 23,838. Select latency per source switch: 26,749. Since the planner prices the
        // rows formulation: the attention runs as `attention_flash_rows` ([2, 24], key
        // block 32; its host writes carry zero padding, so the pin is of the package as
        // written), 26,749 -> 16,453 final cycles; its kernels computing as the measured runs'
        // do (each block's softmax on its own maxima, merges with two exps per row, a final
        // conversion): 16,430.
        // Route time by folded column (phase cost 542 -> 521 plus each receiver's route,
        // issue 19): same plans, 16,430 -> 16,355 final cycles.
        "75f88bf5c896b6cf5c56a04f592b9c6a03c4246e7e067ae7dc31de3865216691",
    );
}
