// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-eqsat))' | FileCheck %s

// A chain written A (B C) whose middle dimension is narrow: (A B) C does 2 * 16 * 16 * 2048
// multiply-adds where A (B C) does 2 * 2048 * 2048 * 16, so the extracted program multiplies
// A B first. (matmul-chain-right.mlir is the same chain with the opposite shapes.)

// CHECK-LABEL: func.func @narrow_middle_goes_left
// CHECK-SAME: (%[[A:.*]]: tensor<16x2048xf16>, %[[B:.*]]: tensor<2048x16xf16>, %[[C:.*]]: tensor<16x2048xf16>)
// CHECK-NEXT: %[[AB:.*]] = "ipu.matmul"(%[[A]], %[[B]]) : (tensor<16x2048xf16>, tensor<2048x16xf16>) -> tensor<16x16xf16>
// CHECK-NEXT: %[[ABC:.*]] = "ipu.matmul"(%[[AB]], %[[C]]) : (tensor<16x16xf16>, tensor<16x2048xf16>) -> tensor<16x2048xf16>
// CHECK-NEXT: return %[[ABC]]
func.func @narrow_middle_goes_left(%a: tensor<16x2048xf16>, %b: tensor<2048x16xf16>, %c: tensor<16x2048xf16>) -> tensor<16x2048xf16> {
  %bc = "ipu.matmul"(%b, %c) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>
  %abc = "ipu.matmul"(%a, %bc) : (tensor<16x2048xf16>, tensor<2048x2048xf16>) -> tensor<16x2048xf16>
  return %abc : tensor<16x2048xf16>
}

// Already the cheaper order: the input is kept as it is.
// CHECK-LABEL: func.func @cheaper_order_stays
// CHECK-SAME: (%[[A:.*]]: tensor<16x2048xf16>, %[[B:.*]]: tensor<2048x16xf16>, %[[C:.*]]: tensor<16x2048xf16>)
// CHECK-NEXT: %[[AB:.*]] = "ipu.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[ABC:.*]] = "ipu.matmul"(%[[AB]], %[[C]])
// CHECK-NEXT: return %[[ABC]]
func.func @cheaper_order_stays(%a: tensor<16x2048xf16>, %b: tensor<2048x16xf16>, %c: tensor<16x2048xf16>) -> tensor<16x2048xf16> {
  %ab = "ipu.matmul"(%a, %b) : (tensor<16x2048xf16>, tensor<2048x16xf16>) -> tensor<16x16xf16>
  %abc = "ipu.matmul"(%ab, %c) : (tensor<16x16xf16>, tensor<16x2048xf16>) -> tensor<16x2048xf16>
  return %abc : tensor<16x2048xf16>
}

// The intermediate has another use (a call, a leaf of the e-graph): it stays, and the chain is
// still reassociated for the returned value.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK-SAME: (%[[A:.*]]: tensor<16x2048xf16>, %[[B:.*]]: tensor<2048x16xf16>, %[[C:.*]]: tensor<16x2048xf16>)
// CHECK-NEXT: %[[BC:.*]] = "ipu.matmul"(%[[B]], %[[C]])
// CHECK-NEXT: call @sink(%[[BC]])
// CHECK-NEXT: %[[AB:.*]] = "ipu.matmul"(%[[A]], %[[B]])
// CHECK-NEXT: %[[ABC:.*]] = "ipu.matmul"(%[[AB]], %[[C]])
// CHECK-NEXT: return %[[ABC]]
func.func private @sink(tensor<2048x2048xf16>)
func.func @shared_intermediate(%a: tensor<16x2048xf16>, %b: tensor<2048x16xf16>, %c: tensor<16x2048xf16>) -> tensor<16x2048xf16> {
  %bc = "ipu.matmul"(%b, %c) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>
  call @sink(%bc) : (tensor<2048x2048xf16>) -> ()
  %abc = "ipu.matmul"(%a, %bc) : (tensor<16x2048xf16>, tensor<2048x2048xf16>) -> tensor<16x2048xf16>
  return %abc : tensor<16x2048xf16>
}
