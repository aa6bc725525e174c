// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-eqsat))' | FileCheck %s

// Transposes: (A^T)^T = A, (A B)^T = B^T A^T with the transposes folded into matmul flags,
// and a transpose pushed through gelu and a widening cast to the narrow side.

// CHECK-LABEL: func.func @transpose_of_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<64x32xf16>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_of_transpose(%x: tensor<64x32xf16>) -> tensor<64x32xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<64x32xf16>) -> tensor<32x64xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0>} : (tensor<32x64xf16>) -> tensor<64x32xf16>
  return %1 : tensor<64x32xf16>
}

// (A B)^T = B^T A^T = matmul{transpose_lhs, transpose_rhs}(B, A): no rearrange is left.
// CHECK-LABEL: func.func @transpose_of_product
// CHECK-SAME: (%[[A:.*]]: tensor<256x128xf16>, %[[B:.*]]: tensor<128x64xf16>)
// CHECK-NEXT: %[[P:.*]] = "ipu.matmul"(%[[B]], %[[A]]) {transpose_lhs, transpose_rhs} : (tensor<128x64xf16>, tensor<256x128xf16>) -> tensor<64x256xf16>
// CHECK-NEXT: return %[[P]]
func.func @transpose_of_product(%a: tensor<256x128xf16>, %b: tensor<128x64xf16>) -> tensor<64x256xf16> {
  %p = "ipu.matmul"(%a, %b) : (tensor<256x128xf16>, tensor<128x64xf16>) -> tensor<256x64xf16>
  %t = "ipu.rearrange"(%p) {permutation = array<i64: 1, 0>} : (tensor<256x64xf16>) -> tensor<64x256xf16>
  return %t : tensor<64x256xf16>
}

// A transpose after a widening cast moves before it: half the bytes to move.
// CHECK-LABEL: func.func @transpose_moves_to_the_narrow_side
// CHECK-SAME: (%[[X:.*]]: tensor<512x256xf16>)
// CHECK-NEXT: %[[T:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 1, 0>} : (tensor<512x256xf16>) -> tensor<256x512xf16>
// CHECK-NEXT: %[[W:.*]] = "ipu.cast"(%[[T]]) : (tensor<256x512xf16>) -> tensor<256x512xf32>
// CHECK-NEXT: return %[[W]]
func.func @transpose_moves_to_the_narrow_side(%x: tensor<512x256xf16>) -> tensor<256x512xf32> {
  %w = "ipu.cast"(%x) : (tensor<512x256xf16>) -> tensor<512x256xf32>
  %t = "ipu.rearrange"(%w) {permutation = array<i64: 1, 0>} : (tensor<512x256xf32>) -> tensor<256x512xf32>
  return %t : tensor<256x512xf32>
}

// A transpose feeding a matmul becomes its flag.
// CHECK-LABEL: func.func @transpose_into_flag
// CHECK-SAME: (%[[X:.*]]: tensor<128x64xf16>, %[[W:.*]]: tensor<128x32xf16>)
// CHECK-NEXT: %[[P:.*]] = "ipu.matmul"(%[[X]], %[[W]]) {transpose_lhs} : (tensor<128x64xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
// CHECK-NEXT: return %[[P]]
func.func @transpose_into_flag(%x: tensor<128x64xf16>, %w: tensor<128x32xf16>) -> tensor<64x32xf16> {
  %t = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<128x64xf16>) -> tensor<64x128xf16>
  %p = "ipu.matmul"(%t, %w) : (tensor<64x128xf16>, tensor<128x32xf16>) -> tensor<64x32xf16>
  return %p : tensor<64x32xf16>
}
