// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s

// linalg named ops on tensors become ipu ops; destination tensor.empty ops and zero fills
// disappear once unused.

// A matmul into a zero fill is a plain ipu.matmul.
// CHECK-LABEL: func.func @matmul_zero_fill
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.matmul"(%[[A]], %[[B]]) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @matmul_zero_fill(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%init : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// A non-zero fill is added to the product.
// CHECK-LABEL: func.func @matmul_nonzero_fill
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf16>, %[[B:.*]]: tensor<8x16xf16>)
// CHECK-NEXT: %[[P:.*]] = "ipu.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.500000e+00> : tensor<4x16xf16>
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[P]], %[[C]]) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
// CHECK-NEXT: return %[[R]]
func.func @matmul_nonzero_fill(%a: tensor<4x8xf16>, %b: tensor<8x16xf16>) -> tensor<4x16xf16> {
  %c = arith.constant 1.5 : f16
  %empty = tensor.empty() : tensor<4x16xf16>
  %init = linalg.fill ins(%c : f16) outs(%empty : tensor<4x16xf16>) -> tensor<4x16xf16>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf16>, tensor<8x16xf16>) outs(%init : tensor<4x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// linalg accumulates into its init: an init that is a value is added.
// CHECK-LABEL: func.func @matmul_accumulates
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[ACC:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[P:.*]] = "ipu.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[P]], %[[ACC]])
// CHECK-NEXT: return %[[R]]
func.func @matmul_accumulates(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %acc: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%acc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @batch_matmul_zero_fill
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<2x8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.matmul"(%[[A]], %[[B]]) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @batch_matmul_zero_fill(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<2x4x16xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x4x8xf32>, tensor<2x8x16xf32>) outs(%init : tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// CHECK-LABEL: func.func @add
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>, %[[Y:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[X]], %[[Y]]) : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @add(%x: tensor<4x16xf32>, %y: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %empty = tensor.empty() : tensor<4x16xf32>
  %0 = linalg.add ins(%x, %y : tensor<4x16xf32>, tensor<4x16xf32>) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 1, 0>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose(%x: tensor<4x16xf32>) -> tensor<16x4xf32> {
  %empty = tensor.empty() : tensor<16x4xf32>
  %0 = linalg.transpose ins(%x : tensor<4x16xf32>) outs(%empty : tensor<16x4xf32>) permutation = [1, 0]
  return %0 : tensor<16x4xf32>
}

// A broadcast of a constant is the constant with size-1 axes (ipu.add broadcasts like NumPy).
// CHECK-LABEL: func.func @bias_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>)
// CHECK-NEXT: %[[B:.*]] = arith.constant dense<{{.*}}> : tensor<1x1x8xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[X]], %[[B]]) : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @bias_broadcast(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %bias = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %e0 = tensor.empty() : tensor<1x4x8xf32>
  %b = linalg.broadcast ins(%bias : tensor<8xf32>) outs(%e0 : tensor<1x4x8xf32>) dimensions = [0, 1]
  %e1 = tensor.empty() : tensor<1x4x8xf32>
  %0 = linalg.add ins(%x, %b : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e1 : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// A generic bias add with a broadcasting map (as torch-mlir emits it) is ipu.add.
// CHECK-LABEL: func.func @generic_bias_add
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[X]], %[[B]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @generic_bias_add(%x: tensor<4x8xf32>, %bias: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// linalg.softmax over the last axis is ipu.softmax.
// CHECK-LABEL: func.func @softmax_op
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.softmax"(%[[X]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @softmax_op(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %e = tensor.empty() : tensor<2x4x8xf32>
  %0 = linalg.softmax dimension(2) ins(%x : tensor<2x4x8xf32>) outs(%e : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// A vector-matrix and a matrix-vector product: a one-row / one-column matmul, reshaped.
// CHECK-LABEL: func.func @vector_products
// CHECK: %[[ROW:.*]] = "ipu.reshape"(%arg0) : (tensor<16xf32>) -> tensor<1x16xf32>
// CHECK: %[[VM:.*]] = "ipu.matmul"(%[[ROW]], %arg1) : (tensor<1x16xf32>, tensor<16x8xf32>) -> tensor<1x8xf32>
// CHECK: "ipu.reshape"(%[[VM]]) : (tensor<1x8xf32>) -> tensor<8xf32>
// CHECK: %[[COL:.*]] = "ipu.reshape"(%arg0) : (tensor<16xf32>) -> tensor<16x1xf32>
// CHECK: %[[MV:.*]] = "ipu.matmul"(%arg2, %[[COL]]) : (tensor<4x16xf32>, tensor<16x1xf32>) -> tensor<4x1xf32>
// CHECK: "ipu.reshape"(%[[MV]]) : (tensor<4x1xf32>) -> tensor<4xf32>
func.func @vector_products(%v: tensor<16xf32>, %w: tensor<16x8xf32>, %m: tensor<4x16xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %0 = linalg.vecmat ins(%v, %w : tensor<16xf32>, tensor<16x8xf32>) outs(%i : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<4xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
  %1 = linalg.matvec ins(%m, %v : tensor<4x16xf32>, tensor<16xf32>) outs(%i2 : tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<8xf32>, tensor<4xf32>
}
