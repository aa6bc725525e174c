// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu{recognize-patterns=false}))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-tosa-to-ipu))' | FileCheck %s --check-prefix=DEFAULT

// recognize-patterns=false: decompositions are not recognized, so their ops are imported one by
// one (maps and a reduction); by default the softmax is recognized.

// CHECK-LABEL: func.func @softmax_not_recognized
// CHECK-NOT: ipu.softmax
// CHECK: "ipu.map"
// CHECK: "ipu.reduce"
// CHECK: "ipu.map"
// CHECK-NOT: ipu.softmax
// CHECK: return
// DEFAULT-LABEL: func.func @softmax_not_recognized
// DEFAULT-NEXT: "ipu.softmax"
func.func @softmax_not_recognized(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %e = tosa.exp %x : (tensor<4x16xf32>) -> tensor<4x16xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<4x16xf32>) -> tensor<4x1xf32>
  %inv = tosa.reciprocal %sum : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %0 = tosa.mul %e, %inv, %shift : (tensor<4x16xf32>, tensor<4x1xf32>, tensor<1xi8>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
