// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// squeeze-unit-batch-rhs: torch.export's batch-1 weight, matmul(x : [1, S, K], w : [1, K, N]),
// reads the 2-D weight; a reshaped constant is the constant in the new shape.
// CHECK-LABEL: func.func @batch_one_weight
// CHECK-NEXT: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<32x128xf32>
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%arg0, %[[W]]) : (tensor<1x16x32xf32>, tensor<32x128xf32>) -> tensor<1x16x128xf32>
// CHECK-NEXT: return %[[M]]
func.func @batch_one_weight(%x: tensor<1x16x32xf32>) -> tensor<1x16x128xf32> {
  %w = arith.constant dense<0.5> : tensor<32x128xf32>
  %w1 = "ipu.reshape"(%w) : (tensor<32x128xf32>) -> tensor<1x32x128xf32>
  %0 = "ipu.matmul"(%x, %w1) : (tensor<1x16x32xf32>, tensor<1x32x128xf32>) -> tensor<1x16x128xf32>
  return %0 : tensor<1x16x128xf32>
}

// -----

// The transpose flag acts on the last two axes, which stay; an argument weight is reshaped.
// CHECK-LABEL: func.func @transposed_argument
// CHECK-NEXT: %[[W:.*]] = "ipu.reshape"(%arg1) : (tensor<1x1x128x32xf16>) -> tensor<128x32xf16>
// CHECK-NEXT: "ipu.matmul"(%arg0, %[[W]]) {transpose_rhs} : (tensor<1x2x16x32xf16>, tensor<128x32xf16>) -> tensor<1x2x16x128xf16>
func.func @transposed_argument(%x: tensor<1x2x16x32xf16>, %w: tensor<1x1x128x32xf16>) -> tensor<1x2x16x128xf16> {
  %0 = "ipu.matmul"(%x, %w) {transpose_rhs} : (tensor<1x2x16x32xf16>, tensor<1x1x128x32xf16>) -> tensor<1x2x16x128xf16>
  return %0 : tensor<1x2x16x128xf16>
}

// -----

// Not squeezed: a right operand with a real batch axis, and a 2-D left operand (the result
// keeps the weight's unit axis).
// CHECK-LABEL: func.func @kept_batches
// CHECK-NOT: ipu.reshape
func.func @kept_batches(%x: tensor<2x16x32xf32>, %w: tensor<2x32x8xf32>, %y: tensor<16x32xf32>, %v: tensor<1x32x8xf32>) -> (tensor<2x16x8xf32>, tensor<1x16x8xf32>) {
  %0 = "ipu.matmul"(%x, %w) : (tensor<2x16x32xf32>, tensor<2x32x8xf32>) -> tensor<2x16x8xf32>
  %1 = "ipu.matmul"(%y, %v) : (tensor<16x32xf32>, tensor<1x32x8xf32>) -> tensor<1x16x8xf32>
  return %0, %1 : tensor<2x16x8xf32>, tensor<1x16x8xf32>
}

// -----

// sink-reshape-through-matmul: TFLite's flatten before a dense layer and restore after it
// meet below the matmul (the flatten keeps K, the last axis) and the bias add, and cancel.
// CHECK-LABEL: func.func @dense_layer
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%arg0, %arg1) : (tensor<1x16x32xf32>, tensor<32x64xf32>) -> tensor<1x16x64xf32>
// CHECK-NEXT: %[[A:.*]] = "ipu.add"(%[[M]], %arg2) : (tensor<1x16x64xf32>, tensor<64xf32>) -> tensor<1x16x64xf32>
// CHECK-NEXT: return %[[A]]
func.func @dense_layer(%x: tensor<1x16x32xf32>, %w: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<1x16x64xf32> {
  %0 = "ipu.reshape"(%x) : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %1 = "ipu.matmul"(%0, %w) : (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>
  %2 = "ipu.add"(%1, %b) : (tensor<16x64xf32>, tensor<64xf32>) -> tensor<16x64xf32>
  %3 = "ipu.reshape"(%2) : (tensor<16x64xf32>) -> tensor<1x16x64xf32>
  return %3 : tensor<1x16x64xf32>
}

// -----

// Near misses: a reshape that changes the last axis (K is not the rows' length before it),
// a transposed left operand, a batched right operand.
// CHECK-LABEL: func.func @not_sunk
// CHECK: %[[R:.*]] = "ipu.reshape"(%arg0) : (tensor<4x64xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: "ipu.matmul"(%[[R]], %arg1) : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[T:.*]] = "ipu.reshape"(%arg2) : (tensor<1x32x8xf32>) -> tensor<32x8xf32>
// CHECK-NEXT: "ipu.matmul"(%[[T]], %arg1) {transpose_lhs} : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
// CHECK: %[[B:.*]] = "ipu.reshape"(%arg3) : (tensor<2x4x32xf32>) -> tensor<8x32xf32>
// CHECK-NEXT: "ipu.matmul"(%[[B]], %arg4) : (tensor<8x32xf32>, tensor<2x32x8xf32>) -> tensor<2x8x8xf32>
func.func @not_sunk(%x: tensor<4x64xf32>, %w: tensor<32x8xf32>, %t: tensor<1x32x8xf32>, %y: tensor<2x4x32xf32>, %v: tensor<2x32x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>) {
  %0 = "ipu.reshape"(%x) : (tensor<4x64xf32>) -> tensor<8x32xf32>
  %1 = "ipu.matmul"(%0, %w) : (tensor<8x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  %2 = "ipu.reshape"(%t) : (tensor<1x32x8xf32>) -> tensor<32x8xf32>
  %3 = "ipu.matmul"(%2, %w) {transpose_lhs} : (tensor<32x8xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  %4 = "ipu.reshape"(%y) : (tensor<2x4x32xf32>) -> tensor<8x32xf32>
  %5 = "ipu.matmul"(%4, %v) : (tensor<8x32xf32>, tensor<2x32x8xf32>) -> tensor<2x8x8xf32>
  return %1, %3, %5 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x8x8xf32>
}
