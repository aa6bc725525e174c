// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s

// Ops with an ipu equivalent of their own convert one to one; constants become arith.constant
// feeding the ipu ops, and zero points and shape constants disappear once unused.

// A batched matmul with zero zero-points is a plain ipu.matmul.
// CHECK-LABEL: func.func @matmul_batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x8xf32>, %[[B:.*]]: tensor<2x8x16xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.matmul"(%[[A]], %[[B]]) : (tensor<2x4x8xf32>, tensor<2x8x16xf32>) -> tensor<2x4x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @matmul_batched(%a: tensor<2x4x8xf32>, %b: tensor<2x8x16xf32>) -> tensor<2x4x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x4x8xf32>, tensor<2x8x16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}

// A bias add against a constant: the weight stays an arith.constant.
// CHECK-LABEL: func.func @add_bias_constant
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x16xf16>)
// CHECK-NEXT: %[[BIAS:.*]] = arith.constant dense<5.000000e-01> : tensor<1x1x16xf16>
// CHECK-NEXT: %[[R:.*]] = "ipu.add"(%[[X]], %[[BIAS]]) : (tensor<1x4x16xf16>, tensor<1x1x16xf16>) -> tensor<1x4x16xf16>
// CHECK-NEXT: return %[[R]]
func.func @add_bias_constant(%x: tensor<1x4x16xf16>) -> tensor<1x4x16xf16> {
  %bias = "tosa.const"() <{values = dense<0.5> : tensor<1x1x16xf16>}> : () -> tensor<1x1x16xf16>
  %0 = tosa.add %x, %bias : (tensor<1x4x16xf16>, tensor<1x1x16xf16>) -> tensor<1x4x16xf16>
  return %0 : tensor<1x4x16xf16>
}

// A transpose is an ipu.rearrange with the same permutation.
// CHECK-LABEL: func.func @transpose_last_two
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @transpose_last_two(%x: tensor<2x4x8xf32>) -> tensor<2x8x4xf32> {
  %0 = tosa.transpose %x {perms = array<i32: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// The identity permutation is no op at all.
// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @transpose_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tosa.transpose %x {perms = array<i32: 0, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// A reshaped weight folds into one reshaped constant (the 2-D weight a frontend wrote becomes
// the 3-D operand tosa.matmul needs).
// CHECK-LABEL: func.func @reshape_weight_folds
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x2xf32>)
// CHECK-NEXT: %[[W:.*]] = arith.constant dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 3.000000e+00], [4.000000e+00, 5.000000e+00, 6.000000e+00]]]> : tensor<1x2x3xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.matmul"(%[[X]], %[[W]])
// CHECK-NEXT: return %[[R]]
func.func @reshape_weight_folds(%x: tensor<1x4x2xf32>) -> tensor<1x4x3xf32> {
  %w = "tosa.const"() <{values = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
  %shape = tosa.const_shape {values = dense<[1, 2, 3]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %w3 = tosa.reshape %w, %shape : (tensor<2x3xf32>, !tosa.shape<3>) -> tensor<1x2x3xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %0 = tosa.matmul %x, %w3, %zp, %zp : (tensor<1x4x2xf32>, tensor<1x2x3xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x4x3xf32>
  return %0 : tensor<1x4x3xf32>
}

// An activation reshape is an ipu.reshape.
// CHECK-LABEL: func.func @reshape_activation
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%[[X]]) : (tensor<1x4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_activation(%x: tensor<1x4x8xf32>) -> tensor<4x8xf32> {
  %shape = tosa.const_shape {values = dense<[4, 8]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %0 = tosa.reshape %x, %shape : (tensor<1x4x8xf32>, !tosa.shape<2>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// Ops of other dialects are left alone.
// CHECK-LABEL: func.func @other_dialects_untouched
// CHECK: arith.addf
func.func @other_dialects_untouched(%x: f32) -> f32 {
  %0 = arith.addf %x, %x : f32
  return %0 : f32
}
