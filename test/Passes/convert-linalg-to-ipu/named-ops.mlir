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
