// The seed's GEMM class (examples/gemm_fp8.mlir: 250x256x512, FP8 on 64 tiles) through
// ipu-compile: planning, selection and every lowering phase of one package build, each logged
// like the seed's trace, in order. Both operands come from the host (F16) and K = 256 and
// N = 512 are whole 16-groups, so under precision=fp8 the split GEMM lowering takes it: the
// host encodes each operand in FP8 E4M3 as it streams it, straight into AMP order, so there
// is no device cast or pack. Its 250 rows need no padding there: grid [1, 4, 16, 1] gives row
// blocks of 63, 63, 62 and 62 rows, and one GEMM specialization covers both row counts.
// RUN: env RUST_LOG=info ipu-opt %repo/examples/gemm_fp8.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 compile-kernels=false})' -o %t.mlir 2>&1 | FileCheck %s --check-prefix=PHASES
// RUN: FileCheck %s < %t.mlir
// The emitted program is read back and emitted again unchanged.
// RUN: ipu-opt %t.mlir -p 'builtin.module(ipu-emit-tile-code)' | diff %t.mlir -
// The same GEMM with K = 200 (not a multiple of 16; Inputs/gemm_fp8_k200.mlir) is a split
// GEMM too: the host pads K to 208 as it streams the operands (the output-stationary
// lowering's device casts and packs stay covered by Runtime/mlp-numerical.test, which pins
// it). Its finalists are all host_order split plans:
// RUN: ipu-opt %S/Inputs/gemm_fp8_k200.mlir -p 'builtin.module(ipu-lower-mid{tiles=64 precision=fp8})' | FileCheck %s --check-prefix=PAD-PLANS
// RUN: env RUST_LOG=info ipu-opt %S/Inputs/gemm_fp8_k200.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 compile-kernels=false})' -o %t.k200.mlir 2>&1 | FileCheck %s --check-prefix=PAD-PHASES
// RUN: FileCheck %s --check-prefix=PAD < %t.k200.mlir
// RUN: ipu-opt %t.k200.mlir -p 'builtin.module(ipu-emit-tile-code)' | diff %t.k200.mlir -

// ipu-compile is the pipeline of its stages: each stage pass ends with its own "pass finished".
// PHASES: ipu.pass{pass=ipu-lower-mid}:ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="lower_mid"}: {{.*}}package build phase finished phase="lower_mid" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.pass{pass=ipu-lower-mid}: ipu_passes::pass: pass finished pass=ipu-lower-mid op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}screened tile mappings by exchange resource load finalist=0
// PHASES: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}selected physically scheduled operator-plan finalist selected={{[0-3]}}
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="select_finalist"}: {{.*}}package build phase finished phase="select_finalist" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: pass finished pass=ipu-select-finalist op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}: ipu_passes::lower::graph::split: split GEMM grid op=0 grid=[1, 4, 16, 1] panels=1 k_panel=256
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}: ipu_passes::lower::graph: lowered graph for package construction logical_shards=320 exchange_phases=1
// PHASES-NEXT: pass finished pass=ipu-lower-to-tiles op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}:ipu.package.phase{phase="compile_runtime"}: {{.*}}package build phase finished phase="compile_runtime" elapsed_ms={{[0-9]+}} success=true
// Four specializations, none a cast or a rearrange: the Copy of each tile's A home (63 or 62
// rows of its 16-byte K group) and of its B home (128 K rows x 16 columns) into the panels,
// and the FP8 GEMM (K = 256, 32 columns, 62 or 63 rows).
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}planned kernel specialization kernel=copy_b1008
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}planned kernel specialization kernel=copy_b992
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}planned kernel specialization kernel=copy_b2048
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}planned kernel specialization kernel=gemm_f8_interleaved_k256_c32_r62_r63
// PHASES-NEXT: ipu.package.phase{phase="plan_kernels"}: {{.*}}package build phase finished phase="plan_kernels" elapsed_ms={{[0-9]+}} success=true
// PHASES-NOT: phase="compile_kernels"
// PHASES-NEXT: ipu.package.phase{phase="link_runtime"}: {{.*}}package build phase finished phase="link_runtime" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="size_tile_code"}: {{.*}}package build phase finished phase="size_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="place_storage"}: {{.*}}allocated package support memory linked_end={{[0-9]+}} profile_bytes=32 exchange_table_bytes={{[0-9]+}} host_code_bytes=436 generated_code_bytes={{[0-9]+}} code_address={{[0-9]+}} standard_ranges=[({{[0-9]+}}, {{[0-9]+}})]
// PHASES-NEXT: ipu.package.phase{phase="place_storage"}: {{.*}}package build phase finished phase="place_storage" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: pass finished pass=ipu-place-storage op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="lower_exchanges"}: {{.*}}package build phase finished phase="lower_exchanges" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: pass finished pass=ipu-lower-exchanges op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}reused exchange optimization after validating relocated rows phase=0
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}optimized exchange placement moved_buffers={{[0-9]+}} rescheduled_phases=0 phases=1
// PHASES-NEXT: ipu.package.phase{phase="optimize_exchange_placement"}: {{.*}}package build phase finished phase="optimize_exchange_placement" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: pass finished pass=ipu-optimize-exchange-placement op=builtin.module elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="prepare_tile_code"}: {{.*}}package build phase finished phase="prepare_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.build{tile_count=64 operations=1}: {{.*}}costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}
// PHASES-NEXT: ipu.package.phase{phase="emit_tile_code"}: {{.*}}package build phase finished phase="emit_tile_code" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.package.phase{phase="build_tile_images"}: {{.*}}package build phase finished phase="build_tile_images" elapsed_ms={{[0-9]+}} success=true
// PHASES-NEXT: ipu.pass{pass=ipu-emit-tile-code}: ipu_passes::pass: pass finished pass=ipu-emit-tile-code op=builtin.module elapsed_ms={{[0-9]+}} success=true

// The planned function and its emitted tile program on 64 tiles. The selected plan is a
// host_order output-stationary one on grid [1, 4, 16, 1] with both operands' FP8 scales 0,
// and the planner prices exactly the program the lowering builds: the selection's refined
// estimate (cycles, exchange cycles) is the placed program's final cost.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: ipu.refined_estimate = #ipu.estimate<[[REFINED:[0-9]+]] : i64, [[REFINED_EXCHANGE:[0-9]+]] : i64,
// CHECK-SAME: ipu.selected_finalist
// CHECK: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 4, 16, 1], host_order = true, k_block = 256 : i64, k_steps = 1 : i64, left = "interleaved", lhs_scale = 0 : i64, orientation = "normal", precision = "f8", rhs_scale = 0 : i64, tiles = 64 : i64,
// CHECK: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64}
// CHECK-NEXT: "ipu_tile.op"() {estimate = {{[0-9]+}} : i64, op = "ipu.matmul", provenance = "op0"}
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[COPY_A:[0-9]+]] : i64, name = "copy_b1008"
// CHECK-NEXT: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "copy_b992"
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[COPY_B:[0-9]+]] : i64, name = "copy_b2048"
// CHECK-NEXT: "ipu_tile.kernel"() {index = [[GEMM:[0-9]+]] : i64, name = "gemm_f8_interleaved_k256_c32_r62_r63", spec = "{\22Gemm\22:{\22input\22:\22F8E4M3\22,\22partials\22:\22F16\22,\22weights\22:\22Interleaved\22,\22k\22:256,\22c\22:32,\22rows\22:[62,63],\22accumulate\22:false}}"}
// Buffers on all 64 tiles: the FP8 homes the host writes (A: 63 rows x 16 bytes; B: 128 x 16),
// the panels (A's 63 x 256, B's 256 x 32) and C's 63 x 32 F16 block in AMP-output order.
// CHECK-NEXT: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1008 : i64, class = "standard", id = [[A_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.a.home", tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
// CHECK-NEXT: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 2048 : i64, class = "standard", id = [[B_HOME:[0-9]+]] : i64, live = array<i64: {{[0-9]+}}, {{[0-9]+}}>, name = "op0.b.home", tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
// CHECK-NEXT: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 16128 : i64, class = "interleaved", id = [[A_PANEL:[0-9]+]] : i64, {{.*}}name = "op0.a.amp_left"
// CHECK-NEXT: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 8192 : i64, class = "interleaved", id = [[B_PANEL:[0-9]+]] : i64, {{.*}}name = "op0.b.amp_right"
// CHECK-NEXT: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 4032 : i64, class = "interleaved", id = [[C_AMP:[0-9]+]] : i64, {{.*}}name = "op0.c.amp_output"
// The operand streams are FP8 (scale 0: no scale_exp), in strided pieces: tile 0's A home is
// K group 0 (16 bytes) of rows 0..62, one 256-byte FP8 row apart; tile 0's B home is columns
// 0..15 of K rows 0..127, one 512-byte row apart, and tile 16's the next 128 K rows. The
// output stream is the unpadded 250 x 512 F16 result.
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, [[A_HOME]], 0, 0, 1008, 63, 256>, array<i64: 1, [[A_HOME]], 0, 16, 1008, 63, 256>, {{.*}}], precision = "f8", role = "input", shape = array<i64: 250, 256>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [array<i64: 0, [[B_HOME]], 0, 0, 2048, 128, 512>, array<i64: 16, [[B_HOME]], 0, 65536, 2048, 128, 512>, {{.*}}], precision = "f8", role = "input", shape = array<i64: 256, 512>}
// CHECK-NEXT: "ipu_tile.stream"() {name = "result0", pieces = [array<i64: 0, [[C_AMP]], 0, 0, 2016, 63, 1024>, {{.*}}], precision = "f16", role = "output", shape = array<i64: 250, 512>}
// CHECK-NEXT: "ipu_tile.support"
// One exchange phase gathers the panels, then one compute step: tile 0 copies its A and B
// homes into the panels and calls the GEMM (row entry 1: 63 rows) with both scales 0.
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// CHECK-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// CHECK-NEXT: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, moves = array<i64: 0, [[A_HOME]], 0, [[A_PANEL]], 0, 1008, 15, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, {{.*}}>, phase = 0 : i64, program = "run", schedule = array<i64: {{.*}}>, schedule_key = {{-?[0-9]+}} : i64}
// CHECK-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, [[COPY_A]], 2, [[A_HOME]], 0, [[A_PANEL]], 0, 0, [[COPY_B]], 2, [[B_HOME]], 0, [[B_PANEL]], 0, 0, [[GEMM]], 6, [[A_PANEL]], 0, [[B_PANEL]], 0, [[C_AMP]], 0, -1, 1, -1, 0, -1, 0, 1, {{.*}}>}
// CHECK-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// CHECK-NEXT: "ipu_tile.code"() {final_cycles = [[REFINED]] : i64, final_exchange = [[REFINED_EXCHANGE]] : i64, tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
// CHECK-NOT: "ipu_tile.

// K = 200: the four finalists are split GEMM plans (host_order), K panels of 208 (the
// padded K), both FP8 scales 0; none is an output-stationary plan the device converts for.
// PAD-PLANS: ipu.finalists = "{\22functions\22:{\22gemm\22:[
// PAD-PLANS-SAME: {\22ops\22:[{\22kind\22:\22gemm_output_stationary\22,\22op\22:0,\22params\22:{\22c_block\22:32,\22grid\22:[1,4,16,1],\22host_order\22:true,\22k_block\22:208,
// PAD-PLANS-NOT: \22grid\22:[{{[0-9,]+}}],\22k_block\22
// PAD-PLANS: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 4, 16, 1], host_order = true, k_block = 208 : i64, k_steps = 1 : i64, left = "interleaved", lhs_scale = 0 : i64,

// The lowering builds the planned split grid in one K panel of 208: one exchange phase, the
// home copies and one GEMM specialization, nothing cast or rearranged on the device; the
// placed program costs exactly the selection's refined estimate.
// PAD-PHASES: selected physically scheduled operator-plan finalist selected=0
// PAD-PHASES: split GEMM grid op=0 grid=[1, 4, 16, 1] panels=1 k_panel=208
// PAD-PHASES: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// PAD-PHASES-NOT: kernel=cast_
// PAD-PHASES-NOT: kernel=rearrange_
// PAD-PHASES: planned kernel specialization kernel=gemm_f8_interleaved_k208_c32_r62_r63
// PAD-PHASES-NEXT: package build phase finished phase="plan_kernels" elapsed_ms={{[0-9]+}} success=true
// PAD-PHASES: costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}

// The streams are FP8: A's pieces gather 16-byte runs of its 200-byte rows, the last group of
// each row 8 bytes of the tensor and 8 zero bytes (the 8-entry rows); B's K rows 200..207 of
// each column group are a piece of zeros (128 bytes: 8 rows x 16). The output stream is the
// unpadded 250 x 512 F16 result.
// PAD-LABEL: func.func @gemm
// PAD-SAME: ipu.refined_estimate = #ipu.estimate<[[REFINED:[0-9]+]] : i64,
// PAD: module @gemm.tiles
// PAD-NOT: cast_f16_f8
// PAD: "ipu_tile.stream"() {name = "arg0", pieces = [{{.*}}array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 200, 8>{{.*}}], precision = "f8", role = "input", shape = array<i64: 250, 200>}
// PAD-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = [{{.*}}array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 0, 128, 1, 0, 128>{{.*}}], precision = "f8", role = "input", shape = array<i64: 200, 512>}
// PAD-NEXT: "ipu_tile.stream"() {name = "result0", pieces = [{{.*}}], precision = "f16", role = "output", shape = array<i64: 250, 512>}
// PAD: "ipu_tile.host_write"() {program = "run", stream = "arg0"}
// PAD-NEXT: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// PAD-NEXT: "ipu_tile.exchange"
// PAD-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0"
// PAD-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// PAD-NEXT: "ipu_tile.code"() {final_cycles = [[REFINED]] : i64,
