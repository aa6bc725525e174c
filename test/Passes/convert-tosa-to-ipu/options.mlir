// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu{recognize-patterns=false}))'

// recognize-patterns=false: decompositions are not recognized, so their ops are errors.

func.func @softmax_not_recognized(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  // expected-error@+1 {{'tosa.exp' op cannot be converted to ipu: only exp inside a softmax decomposition is supported}}
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  // expected-error@+1 {{'tosa.reduce_sum' op cannot be converted}}
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{'tosa.reciprocal' op cannot be converted}}
  %inv = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  // expected-error@+1 {{'tosa.mul' op cannot be converted}}
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
