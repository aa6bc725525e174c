// One RUN per option of ipu-lower-to-tiles, on a module of two GEMMs (and a third whose K is
// not a multiple of 16 and whose result an add reads, for the FP8 casts of the
// output-stationary lowering).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' | FileCheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles)' | FileCheck %s --check-prefix=ALL
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8 fp8-scale=-3})' | FileCheck %s --check-prefix=FP8
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8 fp8-scale=-3 function=k_unaligned})' | FileCheck %s --check-prefix=FP8-CAST
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=native})' | FileCheck %s --check-prefix=NATIVE
// precision=f16 on F16 tensors needs no cast; precision=f32 asks for F32 partials, which an
// unplanned F16 matmul's result type does not have (planning retypes it: see
// test/Passes/ipu-compile/precision-f32.mlir).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=f16})' | FileCheck %s --check-prefix=NATIVE
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=f32})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=F32
// F32: error: 'func.func' op ipu-lower-to-tiles: ipu.matmul: op 0: the result must be F32 (the GEMM partials), not F16
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=second})' | FileCheck %s --check-prefix=FUNCTION
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 target=bow})' | FileCheck %s --check-prefix=BOW
// After planning, the defaults follow what ipu-lower-mid recorded (tiles, precision, scale);
// explicit options override it, but the lowering still lowers exactly the selected plans: a
// tile count the plans do not fit is an error at the op naming the plan.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=8 precision=fp8 fp8-scale=-2}, ipu-select-finalist, ipu-lower-to-tiles)' | FileCheck %s --check-prefix=PLANNED
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=8 precision=fp8}, ipu-select-finalist, ipu-lower-to-tiles{tiles=16 precision=native})' | FileCheck %s --check-prefix=OVERRIDE
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=8 precision=fp8}, ipu-select-finalist, ipu-lower-to-tiles{tiles=4 precision=native})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TOO-FEW
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-lower-to-tiles{tiles=4 function=second})' | FileCheck %s --check-prefix=BOTH

// tiles=16: the split GEMM lowering's grid [1, 1, 4, 4] (all 32 rows x 16 columns x 16 of K
// per tile, the partials reduce-added; each A home holds 8 rows x 16 of K), every buffer on
// tiles 0..15. (With a physical pair's sends sharing one bus, its ranking estimate preferred
// [1, 4, 4, 1]: a K split's reduce-scatter sends from every tile of a pair at once.)
// TILES: module @gemm.tiles
// TILES: "ipu_tile.kernel"() {index = 2 : i64, name = "gemm_f16_interleaved_k16_c16_r32"
// TILES: "ipu_tile.buffer"() {bytes = 256 : i64, {{.*}}name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15>}
// TILES-NOT: module @second.tiles

// The default without planning: every tile of the target may be used. 32x64x64 has only
// 32 rows x 4 16-column groups x 4 16-deep K groups = 512 pieces for a split grid, and the
// split GEMM lowering's own grid [1, 32, 4, 4] uses them all: one row, 16 columns and 16 of
// K per tile, the K split's partials reduce-added. Nothing is packed on the device.
// ALL: "ipu_tile.kernel"() {index = 0 : i64, name = "copy_b32"
// ALL-NEXT: "ipu_tile.kernel"() {index = 1 : i64, name = "gemm_f16_interleaved_k16_c16_r1"
// ALL-NEXT: "ipu_tile.kernel"() {index = 2 : i64, name = "reduce_add_f16_f16_n16_p3"
// ALL-NEXT: "ipu_tile.kernel"() {index = 3 : i64, name = "add_f16_r1_c16_b1"
// ALL-NEXT: "ipu_tile.buffer"() {bytes = 32 : i64, {{.*}}name = "op0.a.home", tiles = array<i32: 0, 1, {{.*}}, 510, 511>}
// ALL-NOT: rearrange

// precision=fp8 on @gemm (both operands from the host, only returned, K and N whole
// 16-groups): the split GEMM lowering on grid [1, 1, 4, 1], with the host encoding A and B
// in F8E4M3 at the scale exponent (scale_exp = -3) as it streams them into the (now
// one-byte) homes; no cast or rearrange on the device. Every GEMM call (FP8 inputs, F16
// partials) gets both scales (-3 as the u32 argument 4294967293) after its row entry.
// FP8: module @gemm.tiles
// FP8-NOT: cast
// FP8-NOT: rearrange
// FP8: "ipu_tile.kernel"() {index = [[F8_GEMM:[0-9]+]] : i64, name = "gemm_f8_interleaved_k64_c16_r32"
// FP8: "ipu_tile.buffer"() {bytes = 512 : i64, class = "standard", id = [[F8_A:[0-9]+]] : i64, {{.*}}name = "op0.a.home"
// FP8-NEXT: "ipu_tile.buffer"() {bytes = 1024 : i64, class = "standard", id = {{[0-9]+}} : i64, {{.*}}name = "op0.b.home"
// FP8: "ipu_tile.stream"() {name = "arg0", pieces = [array<i64: 0, [[F8_A]], 0, 0, 512, 32, 64>, {{.*}}], precision = "f8", role = "input", scale_exp = -3 : i64, shape = array<i64: 32, 64>}
// FP8-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -3 : i64, shape = array<i64: 64, 64>}
// FP8-NEXT: "ipu_tile.stream"() {name = "result0", pieces = {{.*}}, precision = "f16", role = "output", shape = array<i64: 32, 64>}
// FP8: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, {{.*}}, 0, [[F8_GEMM]], 6, {{[0-9]+}}, 0, {{[0-9]+}}, 0, {{[0-9]+}}, 0, -1, 0, -1, 4294967293, -1, 4294967293, 1, {{.*}}>}
// FP8-NOT: cast
// FP8-NOT: rearrange
// FP8: "ipu_tile.host_read"

// @k_unaligned (32x40x64: K = 40 is not a multiple of 16, its result read by an add, so
// unplanned it is not split: the split GEMM pads K only for a result it alone returns, or
// where a plan says so) keeps the output-stationary lowering under precision=fp8: the host writes F16 row-major pieces and op0.convert casts
// them to F8E4M3 on the device with the scale exponent (the cast's last argument, -3 as
// 4294967293) and packs them (K padded with zeros to 48); the GEMM calls get the scales too.
// FP8-CAST: module @k_unaligned.tiles
// FP8-CAST-DAG: "ipu_tile.kernel"() {index = [[CAST_A:[0-9]+]] : i64, name = "cast_f16_f8_n320"
// FP8-CAST-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "rearrange_amp_left_f8_o0_r8_p8_c40_p48"
// FP8-CAST-DAG: "ipu_tile.kernel"() {index = [[CAST_B:[0-9]+]] : i64, name = "cast_f16_f8_n768"
// FP8-CAST-DAG: "ipu_tile.kernel"() {index = [[CAST_GEMM:[0-9]+]] : i64, name = "gemm_f8_interleaved_k48_c64_r8"
// FP8-CAST-DAG: "ipu_tile.buffer"() {bytes = 640 : i64, class = "standard", id = [[CA:[0-9]+]] : i64, {{.*}}name = "op0.a"
// FP8-CAST-DAG: "ipu_tile.buffer"() {bytes = 320 : i64, class = "standard", id = [[CA8:[0-9]+]] : i64, {{.*}}name = "op0.a.cast"
// FP8-CAST-DAG: "ipu_tile.buffer"() {bytes = 1536 : i64, class = "standard", id = [[CB:[0-9]+]] : i64, {{.*}}name = "op0.b"
// FP8-CAST-DAG: "ipu_tile.buffer"() {bytes = 768 : i64, class = "standard", id = [[CB8:[0-9]+]] : i64, {{.*}}name = "op0.b.cast"
// FP8-CAST: "ipu_tile.stream"() {name = "arg0", pieces = array<i64: {{.*}}>, precision = "f16", role = "input", shape = array<i64: 32, 40>}
// FP8-CAST: "ipu_tile.compute"() {program = "run", provenance = "op0.convert", runs = array<i64: 0, [[CAST_A]], 3, [[CA]], 0, [[CA8]], 0, -1, 4294967293, {{.*}}, 0, [[CAST_B]], 3, [[CB]], 0, [[CB8]], 0, -1, 4294967293, {{.*}}>}
// FP8-CAST-NEXT: "ipu_tile.exchange"
// FP8-CAST-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, [[CAST_GEMM]], 6, {{[0-9]+}}, 0, {{[0-9]+}}, 0, {{[0-9]+}}, 0, -1, 0, -1, 4294967293, -1, 4294967293, {{.*}}>}
// FP8-CAST-NEXT: "ipu_tile.compute"() {program = "run", provenance = "op0.output"

// precision=native (and f16) keep the F16 inputs, the AMP input precision, so the split GEMM
// lowering streams them into AMP order: nothing is cast or rearranged on the device.
// NATIVE-NOT: cast
// NATIVE-NOT: rearrange
// NATIVE: name = "gemm_f16_interleaved_k64_c16_r32"
// NATIVE-NOT: cast
// NATIVE-NOT: rearrange

// function=second lowers only @second (16x32x32 on grid [1, 2, 2, 1]: 8 rows x 16 columns
// per tile).
// FUNCTION-NOT: module @gemm.tiles
// FUNCTION: module @second.tiles attributes {ipu_tile.function = "second", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64}
// FUNCTION: name = "gemm_f16_interleaved_k32_c16_r8"
// FUNCTION-NOT: module @gemm.tiles

// BOW: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "bow", ipu_tile.tiles = 1472 : i64}

// The planned FP8 GEMM (fp8-scale=-2 recorded as both operands' scale in the plan) is a split
// GEMM on 8 tiles: the streams are encoded at scale_exp = -2 and the GEMM calls get -2
// (4294967294); nothing is cast on the device.
// PLANNED: module @gemm.tiles
// PLANNED-NOT: cast_f16_f8
// PLANNED: name = "gemm_f8_interleaved_
// PLANNED-NOT: cast_f16_f8
// PLANNED: name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7>}
// PLANNED: "ipu_tile.stream"() {name = "arg0", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -2 : i64, shape = array<i64: 32, 64>}
// PLANNED-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -2 : i64, shape = array<i64: 64, 64>}
// PLANNED: provenance = "op0", runs = array<i64: {{.*}}, -1, 0, -1, 4294967294, -1, 4294967294, {{.*}}>}
// PLANNED-NOT: provenance = "op0.convert"

// With precision=native the product needs no cast and takes the split GEMM lowering on the
// planned grid [1, 2, 4, 1] (8 of the 16 tiles allowed); with tiles=4 that grid does not fit.
// OVERRIDE: module @gemm.tiles
// OVERRIDE-NOT: cast
// OVERRIDE: name = "gemm_f16_interleaved_k64_c16_r16"
// OVERRIDE: name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7>}
// TOO-FEW: error: 'func.func' op ipu-lower-to-tiles: ipu.matmul: op 0: the split GEMM lowering takes this matmul; plan #ipu.plan<"gemm_output_stationary", {{.*}}grid = [1, 2, 4, 1]{{.*}}> cannot be followed: its grid needs 8 tiles, the lowering may use 4

// Each function gets its own tile module.
// BOTH: module @gemm.tiles attributes {ipu_tile.function = "gemm"
// BOTH: module @second.tiles attributes {ipu_tile.function = "second"

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @second(%x: tensor<16x32xf16>, %w: tensor<32x32xf16>) -> tensor<16x32xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}

func.func @k_unaligned(%x: tensor<32x40xf16>, %w: tensor<40x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x40xf16>, tensor<40x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.add"(%y, %y) : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}
