// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s

// TOSA ops outside a recognized decomposition are imported one by one (ipu.map of their scalar
// op, ipu.reduce over their axis): near misses of softmax and GeLU stay those general ops.
// -----

// (Formerly reported as unconvertible:)
// the op and why, and the pass fails without rewriting anything.

// CHECK-LABEL: func.func @exp_alone
// CHECK: "ipu.map"(%arg0)
func.func @exp_alone(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A softmax whose exp is also used elsewhere is not a softmax: every op of it is reported
// (and the convertible matmul is not rewritten, since the pass fails as a whole).
// CHECK-LABEL: func.func @softmax_exp_escapes
// CHECK-NOT: ipu.softmax
// CHECK: "ipu.reduce"
// CHECK-NOT: ipu.softmax
// CHECK: return
func.func @softmax_exp_escapes(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0, %e : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Softmax over a leading axis is not ipu.softmax (which normalizes the last axis).
// CHECK-LABEL: func.func @softmax_wrong_axis
// CHECK-NOT: ipu.softmax
// CHECK: "ipu.rearrange"
// CHECK: "ipu.reduce"
// CHECK-NOT: ipu.softmax
// CHECK: return
func.func @softmax_wrong_axis(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = tosa.reduce_sum %e {axis = 0 : i32} : (tensor<4x16xf32>) -> tensor<1x16xf32>
  %inv = tosa.reciprocal %sum : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<1x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

// A GeLU with a wrong constant (0.6 instead of 0.5) is a different function.
// CHECK-LABEL: func.func @gelu_wrong_constant
// CHECK-NOT: ipu.gelu
// CHECK: "ipu.map"
// CHECK-NOT: ipu.gelu
// CHECK: return
func.func @gelu_wrong_constant(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %c = "tosa.const"() <{values = dense<0.6> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %one = "tosa.const"() <{values = dense<1.0> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %k = "tosa.const"() <{values = dense<0.707106769> : tensor<1x1xf32>}> : () -> tensor<1x1xf32>
  %s = tosa.mul %x, %k, %shift : (tensor<4x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %e = tosa.erf %s : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %t = tosa.add %e, %one : (tensor<4x16xf32>, tensor<1x1xf32>) -> tensor<4x16xf32>
  %h = tosa.mul %x, %c, %shift : (tensor<4x16xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  %0 = tosa.mul %h, %t, %shift : (tensor<4x16xf32>, tensor<4x16xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

