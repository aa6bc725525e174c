// The seed's GEMM class (examples/gemm_fp8.mlir: 250x256x512, FP8 on 64 tiles, 250 rows in row
// blocks with the last one padded) through ipu-compile: planning, selection and every lowering
// phase of one package build, each logged like the seed's trace, in order.
// RUN: env RUST_LOG=info ipu-opt %repo/examples/gemm_fp8.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 compile-kernels=false})' -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PHASES
// RUN: FileCheck %s < %t.mlir
// The emitted program is read back and emitted again unchanged.
// RUN: ipu-opt %t.mlir -p 'builtin.module(ipu-emit-tile-code)' | diff %t.mlir -

// PHASES: ipu.pass{pass=ipu-compile}:ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="lower_mid"}: {{.*}}package build phase finished phase="lower_mid" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}screened tile mappings by exchange resource load finalist=0
// PHASES: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}selected physically scheduled operator-plan finalist selected={{[0-3]}}
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}package build phase finished phase="select_finalist" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}: ipu_passes::lower::graph: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// PHASES-NEXT: ipu.package.phase{phase="compile_runtime"}: {{.*}}package build phase finished phase="compile_runtime" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}planned kernel specialization kernel=cast_f16_f8_n{{[0-9]+}}
// PHASES: planned kernel specialization kernel=gemm_f8_interleaved_k256_c{{[0-9]+}}_r{{[0-9]+}}
// PHASES: ipu.package.phase{phase="plan_kernels"}: {{.*}}package build phase finished phase="plan_kernels" elapsed_ms={{[0-9]+}} success=true
// PHASES-NOT: phase="compile_kernels"
// PHASES-NEXT: ipu.package.phase{phase="link_runtime"}: {{.*}}package build phase finished phase="link_runtime" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="size_tile_code"}: {{.*}}package build phase finished phase="size_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="place_storage"}: {{.*}}allocated package support memory linked_end={{[0-9]+}} profile_bytes=32 exchange_table_bytes={{[0-9]+}} host_code_bytes=436 generated_code_bytes={{[0-9]+}} code_address={{[0-9]+}} standard_ranges=[({{[0-9]+}}, {{[0-9]+}})]
// PHASES-NEXT: ipu.package.phase{phase="place_storage"}: {{.*}}package build phase finished phase="place_storage" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="lower_exchanges"}: {{.*}}package build phase finished phase="lower_exchanges" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}reused exchange optimization after validating relocated rows phase=0
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}optimized exchange placement moved_buffers={{[0-9]+}} phases=1
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}package build phase finished phase="optimize_exchange_placement" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="prepare_tile_code"}: {{.*}}package build phase finished phase="prepare_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}: {{.*}}costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}
// PHASES-NEXT: ipu.package.phase{phase="emit_tile_code"}: {{.*}}package build phase finished phase="emit_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="build_tile_images"}: {{.*}}package build phase finished phase="build_tile_images" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.pass{pass=ipu-compile}: ipu_passes::pass: pass finished pass=ipu-compile op=builtin.module elapsed_ms={{[0-9]+}} success=true

// The planned function and its emitted tile program: 64 tiles, FP8 casts on device, the
// output stream of the unpadded 250 x 512 result.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: ipu.selected_finalist
// CHECK: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64}
// CHECK: "ipu_tile.kernel"() {index = 0 : i64, name = "cast_f16_f8_n{{[0-9]+}}"
// CHECK: name = "gemm_f8_interleaved_k256_c{{[0-9]+}}_r{{[0-9]+}}"
// CHECK: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, {{.*}}name = "op0.a", tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
// CHECK: "ipu_tile.stream"() {name = "result0", {{.*}}role = "output", shape = array<i64: 250, 512>}
// CHECK: "ipu_tile.support"
// CHECK: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, {{.*}}schedule = array<i64: {{.*}}>, schedule_key = {{-?[0-9]+}} : i64}
// CHECK: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
