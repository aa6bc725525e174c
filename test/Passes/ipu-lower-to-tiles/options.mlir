// One RUN per option of ipu-lower-to-tiles, on a module of two GEMMs.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' | FileCheck %s --check-prefix=TILES
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles)' | FileCheck %s --check-prefix=ALL
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8 fp8-scale=-3})' | FileCheck %s --check-prefix=FP8
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
// explicit options override it.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=8 precision=fp8 fp8-scale=-2}, ipu-select-finalist, ipu-lower-to-tiles)' | FileCheck %s --check-prefix=PLANNED
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=8 precision=fp8}, ipu-select-finalist, ipu-lower-to-tiles{tiles=4 precision=native})' | FileCheck %s --check-prefix=OVERRIDE
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-lower-to-tiles{tiles=4 function=second})' | FileCheck %s --check-prefix=BOTH

// tiles=16: the split GEMM lowering's grid [1, 4, 4, 1] (8 rows x 16 columns per tile; each
// A home holds 8 rows x 16 of K), every buffer on tiles 0..15.
// TILES: module @gemm.tiles
// TILES: "ipu_tile.kernel"() {index = 2 : i64, name = "gemm_f16_interleaved_k64_c16_r8"
// TILES: "ipu_tile.buffer"() {bytes = 256 : i64, {{.*}}name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15>}
// TILES-NOT: module @second.tiles

// The default without planning: every tile of the target may be used. No split grid of
// 32x64x64 keeps 90 % of the 1472 tiles busy, so the output-stationary lowering takes it,
// one row per tile, packing A into AMP order on the device.
// ALL: "ipu_tile.kernel"() {index = 0 : i64, name = "rearrange_amp_left_f16_o0_r1_p1_c64_p64"
// ALL: "ipu_tile.kernel"() {index = 3 : i64, name = "gemm_f16_interleaved_k64_c64_r1"
// ALL: "ipu_tile.buffer"() {bytes = 128 : i64, {{.*}}name = "op0.a", tiles = array<i32: 0, 1, {{.*}}, 30, 31>}

// precision=fp8: on-device casts to F8E4M3 with the scale exponent (-3 as the u32 argument
// 4294967293), then an FP8 GEMM with F16 partials.
// FP8-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "cast_f16_f8_n512"
// FP8-DAG: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "cast_f16_f8_n1024"
// FP8-DAG: name = "gemm_f8_interleaved_k64_c64_r8"
// FP8-DAG: "ipu_tile.buffer"() {bytes = 512 : i64, {{.*}}name = "op0.a.{{[a-z]+}}"
// FP8-DAG: "ipu_tile.buffer"() {bytes = 1024 : i64, {{.*}}name = "op0.b.cast"
// FP8: "ipu_tile.compute"() {program = "run", provenance = "op0.convert", runs = array<i64: {{.*}}, -1, 4294967293

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

// PLANNED: module @gemm.tiles
// PLANNED: name = "cast_f16_f8_n{{[0-9]+}}"
// PLANNED: name = "gemm_f8_interleaved_
// PLANNED: name = "op0.a", tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7>}
// PLANNED: provenance = "op0.convert", runs = array<i64: {{.*}}, -1, 4294967294

// With precision=native the product needs no cast and takes the split GEMM lowering; the
// planned grid [1, 2, 4, 1] needs 8 tiles, more than tiles=4, so the lowering picks its own.
// OVERRIDE: module @gemm.tiles
// OVERRIDE-NOT: cast
// OVERRIDE: name = "gemm_f16_interleaved_k64_c16_r32"
// OVERRIDE: name = "op0.a.home", tiles = array<i32: 0, 1, 2, 3>}

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
