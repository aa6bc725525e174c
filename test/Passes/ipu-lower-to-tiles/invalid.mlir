// What ipu-lower-to-tiles cannot lower yet is diagnosed at the function; bad options at the
// module.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=1473})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{target=bow tiles=5000})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOW-TILES
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{fp8-scale=32})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{function=missing})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNCTION
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{target=gc200})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{precision=bf16})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRECISION

// TILES: error: 'builtin.module' op ipu-lower-to-tiles: tiles=1473 is outside 1..=1472 of target c600
// BOW-TILES: error: 'builtin.module' op ipu-lower-to-tiles: tiles=5000 is outside 1..=1472 of target bow
// SCALE: error: 'builtin.module' op ipu-lower-to-tiles: fp8-scale=32 is outside -31..=31
// FUNCTION: error: 'builtin.module' op ipu-lower-to-tiles: no function 'missing'
// TARGET: error: 'builtin.module' op ipu-lower-to-tiles: unknown target 'gc200'; known targets: c600, bow
// PRECISION: error: invalid value 'bf16' for option 'precision' of pass 'ipu-lower-to-tiles': expected one of auto|native|f32|f16|fp8

// A cast with an FP8 scale other than 0.
// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.cast: op 0: a cast with FP8 scale 3 is not lowered (scale 0 is)}}
func.func @cast(%x: tensor<32x64xf16>) -> tensor<32x64xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<32x64xf16>) -> tensor<32x64xf8E4M3FNUZ>
  return %0 : tensor<32x64xf8E4M3FNUZ>
}

// -----

// A permutation that moves the last axis elsewhere than the second-to-last.
// expected-error@+1 {{ipu-lower-to-tiles: ipu.rearrange: op 0: permutation [2, 0, 1] of shape [2, 4, 16] moves the last axis; only permutations of the leading axes and swaps of the last two axes are lowered}}
func.func @rotate(%x: tensor<2x4x16xf16>) -> tensor<16x2x4xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x16xf16>) -> tensor<16x2x4xf16>
  return %0 : tensor<16x2x4xf16>
}

// -----

// Batch axes that broadcast only in part.
// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: op 0: shapes [2, 3, 32, 64] x [3, 64, 64] -> [2, 3, 32, 64] (transposes false, false) are not a matmul with whole-batch broadcasting}}
func.func @partial_broadcast(%x: tensor<2x3x32x64xf16>, %w: tensor<3x64x64xf16>) -> tensor<2x3x32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<2x3x32x64xf16>, tensor<3x64x64xf16>) -> tensor<2x3x32x64xf16>
  return %y : tensor<2x3x32x64xf16>
}

// -----

// A column broadcast (only row vectors broadcast).
// expected-error@+1 {{ipu-lower-to-tiles: ipu.add: op 0: operands of shapes [[32, 64], [32, 1]] for a result of [32, 64]: only full-size operands and [64] row vectors are read, at least one full-size}}
func.func @column(%x: tensor<32x64xf16>, %y: tensor<32x1xf16>) -> tensor<32x64xf16> {
  %0 = "ipu.add"(%x, %y) : (tensor<32x64xf16>, tensor<32x1xf16>) -> tensor<32x64xf16>
  return %0 : tensor<32x64xf16>
}


// -----

// Lowering the same function twice is refused at the first lowering.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-lower-to-tiles{tiles=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'builtin.module' op ipu-lower-to-tiles: function 'gemm' is already lowered to tiles
func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
