// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s

// softmax(x) = exp(x - reduce_max(x)) * reciprocal(reduce_sum(exp(x - reduce_max(x)))) over
// the last axis, as TOSA frontends decompose it, becomes one ipu.softmax; every op of the
// decomposition disappears with it.

// CHECK-LABEL: func.func @softmax_stable
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.softmax"(%[[X]]) : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @softmax_stable(%x: tensor<2x4x16xf32>) -> tensor<2x4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %max = tosa.reduce_max %x {axis = 2 : i32} : (tensor<2x4x16xf32>) -> tensor<2x4x1xf32>
  %centered = tosa.sub %x, %max : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %e = tosa.exp %centered : (tensor<2x4x16xf32>) -> tensor<2x4x16xf32>
  %sum = tosa.reduce_sum %e {axis = 2 : i32} : (tensor<2x4x16xf32>) -> tensor<2x4x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %0 = tosa.mul %e, %inv, %shift : (tensor<2x4x16xf32>, tensor<2x4x1xf32>, tensor<1xi8>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// The same without the max subtraction, and with the product's operands swapped.
// CHECK-LABEL: func.func @softmax_unstable_swapped
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.softmax"(%[[X]])
// CHECK-NEXT: return %[[R]]
func.func @softmax_unstable_swapped(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %e = tosa.exp %x : (tensor<4x16xf16>) -> tensor<4x16xf16>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf16>) -> tensor<4x1xf16>
  %inv = tosa.reciprocal %sum : (tensor<4x1xf16>) -> tensor<4x1xf16>
  %0 = tosa.mul %inv, %e, %shift : (tensor<4x1xf16>, tensor<4x16xf16>, tensor<1xi8>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}
