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

// An op the tile lowering does not handle.
// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.softmax: op 0 is not lowered to tiles yet (matmul, add and gelu are)}}
func.func @softmax(%x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %0 = "ipu.softmax"(%x) : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %0 : tensor<32x64xf16>
}

// -----

// GeLU of a function argument (no device distribution to apply it to).
// expected-error@+1 {{'func.func' op ipu-lower-to-tiles: ipu.gelu: op 0: GeLU of a host value is not lowered yet}}
func.func @gelu(%x: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %0 : tensor<32x64xf16>
}

// -----

// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: op 0: transposed operands are not lowered yet}}
func.func @transposed(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) {transpose_rhs} : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

// -----

// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: N = 40 is not a multiple of 16}}
func.func @narrow(%x: tensor<32x64xf16>, %w: tensor<64x40xf16>) -> tensor<32x40xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x40xf16>) -> tensor<32x40xf16>
  return %y : tensor<32x40xf16>
}

// -----

// 16 column blocks of 64 do not fit 4 tiles.
// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: N = 1024 needs 16 column blocks of 64, only 4 tiles}}
func.func @wide(%x: tensor<32x64xf16>, %w: tensor<64x1024xf16>) -> tensor<32x1024xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x1024xf16>) -> tensor<32x1024xf16>
  return %y : tensor<32x1024xf16>
}

// -----

// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: op 0: batched right operands are not lowered yet}}
func.func @batched(%x: tensor<2x32x64xf16>, %w: tensor<2x64x64xf16>) -> tensor<2x32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<2x32x64xf16>, tensor<2x64x64xf16>) -> tensor<2x32x64xf16>
  return %y : tensor<2x32x64xf16>
}

// -----

// A GEMM whose right operand another GEMM computed.
// expected-error@+1 {{ipu-lower-to-tiles: ipu.matmul: op 1: the right operand is computed on the device (by op 0); only function arguments and constants are lowered in that position yet}}
func.func @chain(%x: tensor<64x64xf16>, %w: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  %z = "ipu.matmul"(%x, %y) : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %z : tensor<64x64xf16>
}

// -----

// Lowering the same function twice is refused at the first lowering.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-lower-to-tiles{tiles=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: 'builtin.module' op ipu-lower-to-tiles: function 'gemm' is already lowered to tiles
func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
