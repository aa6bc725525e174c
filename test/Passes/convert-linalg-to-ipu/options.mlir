// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu{empty-init-is-zero=true}))' | FileCheck %s

// empty-init-is-zero=true: a matmul into a bare tensor.empty is taken as zero-initialized.

// CHECK-LABEL: func.func @matmul_into_empty
// CHECK-SAME: (%[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: return %[[R]]
func.func @matmul_into_empty(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %empty = tensor.empty() : tensor<4x16xf32>
  %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
