// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s

// Layer norm over the last axis, as mean / variance / rsqrt:
//   d = x - reduce_sum(x) * (1/n);  y = d * rsqrt(reduce_sum(d * d) * (1/n) + eps) * gamma + beta
// becomes ipu.layer_norm with 1-D gamma and beta constants (reshaped from the broadcast shape
// TOSA needs) and epsilon.

// CHECK-LABEL: func.func @layer_norm_affine
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>)
// CHECK-DAG: %[[G:.*]] = arith.constant dense<2.000000e+00> : tensor<8xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<{{\[}}0.000000e+00, 1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00]> : tensor<8xf32>
// CHECK: %[[R:.*]] = "ipu.layer_norm"(%[[X]], %[[G]], %[[B]]) {epsilon = 9.99999974E-6 : f32} : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: tosa.
func.func @layer_norm_affine(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %inv_n = "tosa.const"() <{values = dense<0.125> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %eps = "tosa.const"() <{values = dense<1.0e-5> : tensor<1x1x1xf32>}> : () -> tensor<1x1x1xf32>
  %gamma = "tosa.const"() <{values = dense<2.0> : tensor<1x1x8xf32>}> : () -> tensor<1x1x8xf32>
  %beta = "tosa.const"() <{values = dense<[[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]]]> : tensor<1x1x8xf32>}> : () -> tensor<1x1x8xf32>
  %sum = tosa.reduce_sum %x {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %mean = tosa.mul %sum, %inv_n, %shift : (tensor<1x4x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x1xf32>
  %d = tosa.sub %x, %mean : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
  %sq = tosa.mul %d, %d, %shift : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %sqsum = tosa.reduce_sum %sq {axis = 2 : i32} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
  %var = tosa.mul %sqsum, %inv_n, %shift : (tensor<1x4x1xf32>, tensor<1x1x1xf32>, tensor<1xi8>) -> tensor<1x4x1xf32>
  %shifted = tosa.add %var, %eps : (tensor<1x4x1xf32>, tensor<1x1x1xf32>) -> tensor<1x4x1xf32>
  %r = tosa.rsqrt %shifted : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %n = tosa.mul %d, %r, %shift : (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %scaled = tosa.mul %n, %gamma, %shift : (tensor<1x4x8xf32>, tensor<1x1x8xf32>, tensor<1xi8>) -> tensor<1x4x8xf32>
  %0 = tosa.add %scaled, %beta : (tensor<1x4x8xf32>, tensor<1x1x8xf32>) -> tensor<1x4x8xf32>
  return %0 : tensor<1x4x8xf32>
}

// Without the affine part (and with pow for the square): gamma is ones, beta zeros.
// CHECK-LABEL: func.func @layer_norm_plain_pow
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-DAG: %[[G:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf16>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf16>
// CHECK: %[[R:.*]] = "ipu.layer_norm"(%[[X]], %[[G]], %[[B]])
// CHECK-NEXT: return %[[R]]
func.func @layer_norm_plain_pow(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %inv_n = "tosa.const"() <{values = dense<0.125> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %eps = "tosa.const"() <{values = dense<1.0e-3> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %two = "tosa.const"() <{values = dense<2.0> : tensor<1x1xf16>}> : () -> tensor<1x1xf16>
  %sum = tosa.reduce_sum %x {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %mean = tosa.mul %inv_n, %sum, %shift : (tensor<1x1xf16>, tensor<4x1xf16>, tensor<1xi8>) -> tensor<4x1xf16>
  %d = tosa.sub %x, %mean : (tensor<4x8xf16>, tensor<4x1xf16>) -> tensor<4x8xf16>
  %sq = tosa.pow %d, %two : (tensor<4x8xf16>, tensor<1x1xf16>) -> tensor<4x8xf16>
  %sqsum = tosa.reduce_sum %sq {axis = 1 : i32} : (tensor<4x8xf16>) -> tensor<4x1xf16>
  %var = tosa.mul %sqsum, %inv_n, %shift : (tensor<4x1xf16>, tensor<1x1xf16>, tensor<1xi8>) -> tensor<4x1xf16>
  %shifted = tosa.add %eps, %var : (tensor<1x1xf16>, tensor<4x1xf16>) -> tensor<4x1xf16>
  %r = tosa.rsqrt %shifted : (tensor<4x1xf16>) -> tensor<4x1xf16>
  %0 = tosa.mul %r, %d, %shift : (tensor<4x1xf16>, tensor<4x8xf16>, tensor<1xi8>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
