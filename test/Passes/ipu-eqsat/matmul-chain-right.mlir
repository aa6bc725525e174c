// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-eqsat))' | FileCheck %s

// The opposite shapes of matmul-chain-left.mlir: written (A B) C with a wide middle, where
// A (B C) does 2 * 2048 * 16 * 16 multiply-adds against 2 * 2048 * 2048 * 16, so the extracted
// program multiplies B C first.

// CHECK-LABEL: func.func @wide_middle_goes_right
// CHECK-SAME: (%[[A:.*]]: tensor<2048x16xf16>, %[[B:.*]]: tensor<16x2048xf16>, %[[C:.*]]: tensor<2048x16xf16>)
// CHECK-NEXT: %[[BC:.*]] = "ipu.matmul"(%[[B]], %[[C]]) : (tensor<16x2048xf16>, tensor<2048x16xf16>) -> tensor<16x16xf16>
// CHECK-NEXT: %[[ABC:.*]] = "ipu.matmul"(%[[A]], %[[BC]]) : (tensor<2048x16xf16>, tensor<16x16xf16>) -> tensor<2048x16xf16>
// CHECK-NEXT: return %[[ABC]]
func.func @wide_middle_goes_right(%a: tensor<2048x16xf16>, %b: tensor<16x2048xf16>, %c: tensor<2048x16xf16>) -> tensor<2048x16xf16> {
  %ab = "ipu.matmul"(%a, %b) : (tensor<2048x16xf16>, tensor<16x2048xf16>) -> tensor<2048x2048xf16>
  %abc = "ipu.matmul"(%ab, %c) : (tensor<2048x2048xf16>, tensor<2048x16xf16>) -> tensor<2048x16xf16>
  return %abc : tensor<2048x16xf16>
}

// A chain of four with batch axes: the narrow products are formed first (whatever the input
// order), and the bias add after the chain is untouched.
// CHECK-LABEL: func.func @batched_chain_with_bias
// CHECK-NOT: tensor<4x1024x1024xf16>
// CHECK: "ipu.add"
// CHECK-NEXT: return
func.func @batched_chain_with_bias(%a: tensor<4x1024x8xf16>, %b: tensor<8x1024xf16>, %c: tensor<1024x8xf16>, %bias: tensor<8xf16>) -> tensor<4x1024x8xf16> {
  %ab = "ipu.matmul"(%a, %b) : (tensor<4x1024x8xf16>, tensor<8x1024xf16>) -> tensor<4x1024x1024xf16>
  %abc = "ipu.matmul"(%ab, %c) : (tensor<4x1024x1024xf16>, tensor<1024x8xf16>) -> tensor<4x1024x8xf16>
  %out = "ipu.add"(%abc, %bias) : (tensor<4x1024x8xf16>, tensor<8xf16>) -> tensor<4x1024x8xf16>
  return %out : tensor<4x1024x8xf16>
}
