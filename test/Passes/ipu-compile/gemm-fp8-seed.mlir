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
// The output-stationary lowering, with its FP8 casts and AMP packs on the device, K chunks
// and padded row blocks, stays covered by the same GEMM with K = 200 (not a multiple of 16,
// so the planner never plans it as a split GEMM; see Inputs/gemm_fp8_k200.mlir). Its
// finalists are all output-stationary plans (no host_order split):
// RUN: ipu-opt %S/Inputs/gemm_fp8_k200.mlir -p 'builtin.module(ipu-lower-mid{tiles=64 precision=fp8})' | FileCheck %s --check-prefix=OLD-PLANS
// RUN: env RUST_LOG=info ipu-opt %S/Inputs/gemm_fp8_k200.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 compile-kernels=false})' -o %t.k200.mlir 2>&1 | FileCheck %s --check-prefix=OLD-PHASES
// RUN: FileCheck %s --check-prefix=OLD < %t.k200.mlir
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

// K = 200: the four finalists are output-stationary plans on grid [1, 4, 16, 1] (the
// split GEMM's host_order plans need K and N in whole 16-groups), both FP8 scales 0, in each
// of the four A / B panel memory-class combinations.
// OLD-PLANS: ipu.finalists = "{\22functions\22:{\22gemm\22:[
// OLD-PLANS-SAME: {\22ops\22:[{\22kind\22:\22gemm_output_stationary\22,\22op\22:0,\22params\22:{\22c_block\22:32,\22grid\22:[1,4,16,1],\22k_block\22:{{[0-9]+}},\22k_steps\22:1,\22left\22:\22interleaved\22,\22lhs_scale\22:0,\22orientation\22:\22normal\22,\22precision\22:\22f8\22,\22rhs_scale\22:0,\22tiles\22:64,\22weights\22:\22interleaved\22,\22weights_resident\22:false}}]},
// OLD-PLANS-SAME: {\22ops\22:[{\22kind\22:\22gemm_output_stationary\22,\22op\22:0,\22params\22:{\22c_block\22:32,\22grid\22:[1,4,16,1],\22k_block\22:{{[0-9]+}},\22k_steps\22:1,\22left\22:\22interleaved\22,\22lhs_scale\22:0,\22orientation\22:\22normal\22,\22precision\22:\22f8\22,\22rhs_scale\22:0,\22tiles\22:64,\22weights\22:\22standard\22,\22weights_resident\22:false}}]},
// OLD-PLANS-SAME: {\22ops\22:[{\22kind\22:\22gemm_output_stationary\22,\22op\22:0,\22params\22:{\22c_block\22:32,\22grid\22:[1,4,16,1],\22k_block\22:{{[0-9]+}},\22k_steps\22:1,\22left\22:\22standard\22,\22lhs_scale\22:0,\22orientation\22:\22normal\22,\22precision\22:\22f8\22,\22rhs_scale\22:0,\22tiles\22:64,\22weights\22:\22interleaved\22,\22weights_resident\22:false}}]},
// OLD-PLANS-SAME: {\22ops\22:[{\22kind\22:\22gemm_output_stationary\22,\22op\22:0,\22params\22:{\22c_block\22:32,\22grid\22:[1,4,16,1],\22k_block\22:{{[0-9]+}},\22k_steps\22:1,\22left\22:\22standard\22,\22lhs_scale\22:0,\22orientation\22:\22normal\22,\22precision\22:\22f8\22,\22rhs_scale\22:0,\22tiles\22:64,\22weights\22:\22standard\22,\22weights_resident\22:false}}]}]},
// OLD-PLANS-SAME: \22options\22:
// OLD-PLANS-NOT: host_order
// OLD-PLANS: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 4, 16, 1], k_block = {{[0-9]+}} : i64, k_steps = 1 : i64, left = "interleaved", lhs_scale = 0 : i64,

// K = 200 keeps the output-stationary lowering: no split GEMM is planned, so the lowering
// neither builds one nor says it refuses a planned grid (no "split GEMM" line at all), and
// the lowered program is the older one, with one exchange phase for the converted B chunks.
// OLD-PHASES: selected physically scheduled operator-plan finalist selected={{[0-3]}}
// OLD-PHASES-NOT: split GEMM
// OLD-PHASES: lowered graph for package construction logical_shards={{[0-9]+}} exchange_phases=1
// Row blocks of 63 rows, the last padded from 61. Each row block's K is converted in chunks of
// one 16-column group per tile of its grid row, cast to FP8 and rearranged to AMP-left: twelve
// whole groups and a last one of 8 columns padded to 16 with zeros (K = 208 for the GEMM).
// B's column blocks of 32 are converted in four chunks of K rows (three of 52, a last of 44
// padded to 52) and copied from their AMP-right staging; C is rearranged back to row-major.
// OLD-PHASES: planned kernel specialization kernel=cast_f16_f8_n1008
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r63_p63_c16_p16
// OLD-PHASES-NEXT: planned kernel specialization kernel=cast_f16_f8_n976
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r61_p63_c16_p16
// OLD-PHASES-NEXT: planned kernel specialization kernel=cast_f16_f8_n504
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r63_p63_c8_p16
// OLD-PHASES-NEXT: planned kernel specialization kernel=cast_f16_f8_n488
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r61_p63_c8_p16
// OLD-PHASES-NEXT: planned kernel specialization kernel=cast_f16_f8_n1664
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_right_f8_o0_r52_p52_c32_p32
// OLD-PHASES-NEXT: planned kernel specialization kernel=copy_b832
// OLD-PHASES-NEXT: planned kernel specialization kernel=cast_f16_f8_n1408
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_amp_right_f8_o0_r44_p52_c32_p32
// OLD-PHASES-NEXT: planned kernel specialization kernel=gemm_f8_interleaved_k208_c32_r63
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_from_amp_output_f16_o0_r63_p63_c32_p32
// OLD-PHASES-NEXT: planned kernel specialization kernel=rearrange_from_amp_output_f16_o0_r61_p63_c32_p32
// OLD-PHASES-NEXT: package build phase finished phase="plan_kernels" elapsed_ms={{[0-9]+}} success=true
// OLD-PHASES: optimized exchange placement moved_buffers={{[0-9]+}} rescheduled_phases=0 phases=1
// OLD-PHASES: costed final placed program final_cycles={{[0-9]+}} final_exchange={{[0-9]+}}
// OLD-PHASES: pass finished pass=ipu-emit-tile-code op=builtin.module elapsed_ms={{[0-9]+}} success=true

// The plan is not host_order; the host writes F16 row-major pieces of A and B to every tile,
// op0.convert casts (scale 0 as the last argument) and packs them on the device, one
// exchange phase broadcasts the converted B chunks, op0 runs the GEMM and op0.output
// rearranges C to row-major for the unpadded 250 x 512 output stream.
// OLD-LABEL: func.func @gemm
// OLD: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 4, 16, 1], k_block = {{[0-9]+}} : i64, k_steps = 1 : i64, left = "{{interleaved|standard}}", lhs_scale = 0 : i64, orientation = "normal", precision = "f8", rhs_scale = 0 : i64,
// OLD: module @gemm.tiles
// OLD-NEXT: "ipu_tile.op"() {estimate = {{[0-9]+}} : i64, op = "ipu.matmul", provenance = "op0"}
// OLD-NEXT: "ipu_tile.kernel"() {index = [[CAST:[0-9]+]] : i64, name = "cast_f16_f8_n1008", spec = "{\22Cast\22:{\22from\22:\22F16\22,\22to\22:\22F8E4M3\22,\22elements\22:1008}}"}
// OLD: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 2016 : i64, class = "standard", id = [[A:[0-9]+]] : i64, {{.*}}name = "op0.a", tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
// OLD: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1008 : i64, class = "standard", id = [[A_CAST:[0-9]+]] : i64, {{.*}}name = "op0.a.cast"
// OLD: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1664 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b.cast"
// OLD: "ipu_tile.buffer"() {address = {{[0-9]+}} : i64, bytes = 1664 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b.amp_chunk"
// OLD: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: 0, [[A]], 0, 0, 32, {{.*}}>, precision = "f16", role = "input", shape = array<i64: 250, 200>}
// OLD-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = array<i64: {{.*}}>, precision = "f16", role = "input", shape = array<i64: 200, 512>}
// OLD-NEXT: "ipu_tile.stream"() {name = "result0", pieces = array<i64: {{.*}}>, precision = "f16", role = "output", shape = array<i64: 250, 512>}
// OLD: "ipu_tile.host_write"() {program = "run", stream = "arg1"}
// OLD-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.convert", runs = array<i64: 0, [[CAST]], 3, [[A]], 0, [[A_CAST]], 0, -1, 0, {{.*}}>}
// OLD-NEXT: "ipu_tile.exchange"() {cycles = {{[0-9]+}} : i64, {{.*}}phase = 0 : i64, program = "run", schedule = array<i64: {{.*}}>, schedule_key = {{-?[0-9]+}} : i64}
// OLD-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs
// OLD-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.output", runs
// OLD-NEXT: "ipu_tile.host_read"() {program = "run", stream = "result0"}
// OLD-NEXT: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 1, 2, {{.*}}, 62, 63>}
