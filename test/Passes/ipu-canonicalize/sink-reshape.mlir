// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// sink-reshape: f(reshape(x), b) => reshape(f(x, b)) for add, gelu, map, softmax and layer
// norm. TFLite's [1, S, D] -> [S, D] before a dense layer and back after it: sunk below the
// add (its bias broadcasts over the kept last axis) and the GeLU, the two reshapes meet and
// cancel.
// CHECK-LABEL: func.func @cancel
// CHECK-NEXT: %[[A:.*]] = "ipu.add"(%arg0, %arg1) : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
// CHECK-NEXT: %[[G:.*]] = "ipu.gelu"(%[[A]]) {approximate = "tanh"} : (tensor<1x16x32xf32>) -> tensor<1x16x32xf32>
// CHECK-NEXT: return %[[G]]
func.func @cancel(%x: tensor<1x16x32xf32>, %b: tensor<32xf32>) -> tensor<1x16x32xf32> {
  %0 = "ipu.reshape"(%x) : (tensor<1x16x32xf32>) -> tensor<16x32xf32>
  %1 = "ipu.add"(%0, %b) : (tensor<16x32xf32>, tensor<32xf32>) -> tensor<16x32xf32>
  %2 = "ipu.gelu"(%1) {approximate = "tanh"} : (tensor<16x32xf32>) -> tensor<16x32xf32>
  %3 = "ipu.reshape"(%2) : (tensor<16x32xf32>) -> tensor<1x16x32xf32>
  return %3 : tensor<1x16x32xf32>
}

// -----

// Both full-size operands reshaped from one shape: the add runs on that shape. A map whose
// body reads no index sinks too; softmax and layer norm keep their last axis, so they sink.
// CHECK-LABEL: func.func @several
// CHECK-NEXT: %[[A:.*]] = "ipu.add"(%arg0, %arg1) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[M:.*]] = "ipu.map"(%[[A]]) {body = @neg} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[S:.*]] = "ipu.softmax"(%[[M]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[L:.*]] = "ipu.layer_norm"(%[[S]], %arg2, %arg2) {epsilon = {{.*}}} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%[[L]]) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
// CHECK-NEXT: return %[[R]]
func.func private @neg(%a: f32) -> f32 {
  %0 = arith.negf %a : f32
  return %0 : f32
}
func.func @several(%x: tensor<2x4x8xf32>, %y: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<8x8xf32> {
  %0 = "ipu.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %1 = "ipu.reshape"(%y) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %2 = "ipu.add"(%0, %1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "ipu.map"(%2) {body = @neg} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %4 = "ipu.softmax"(%3) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %5 = "ipu.layer_norm"(%4, %g, %g) {epsilon = 1.0e-05 : f32} : (tensor<8x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  return %5 : tensor<8x8xf32>
}

// -----

// Near misses, each left as it is: full-size operands reshaped from different shapes; a
// bias over an axis the reshape changes; a full-size operand that is no reshape; a map
// whose body reads the loop indices (its result depends on the shape it runs on); a softmax
// whose rows the reshape regroups.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-2: "ipu.reshape"
// CHECK-NEXT: "ipu.add"({{.*}}) : (tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: "ipu.reshape"
// CHECK-NEXT: "ipu.add"({{.*}}) : (tensor<8x8xf32>, tensor<8xf32>)
// CHECK-NEXT: "ipu.add"({{.*}}) : (tensor<8x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: "ipu.map"({{.*}}) {body = @iota} : (tensor<8x8xf32>)
// CHECK-NEXT: "ipu.reshape"
// CHECK-NEXT: "ipu.softmax"({{.*}}) : (tensor<4x16xf32>)
func.func private @iota(%a: f32, %i: index, %j: index) -> f32 {
  %0 = arith.index_cast %j : index to i64
  %1 = arith.sitofp %0 : i64 to f32
  %2 = arith.addf %a, %1 : f32
  return %2 : f32
}
func.func @near_misses(%x: tensor<2x4x8xf32>, %y: tensor<4x16xf32>, %z: tensor<8x8xf32>, %b: tensor<8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>) {
  %0 = "ipu.reshape"(%x) : (tensor<2x4x8xf32>) -> tensor<8x8xf32>
  %1 = "ipu.reshape"(%y) : (tensor<4x16xf32>) -> tensor<8x8xf32>
  %2 = "ipu.add"(%0, %1) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %3 = "ipu.reshape"(%y) : (tensor<4x16xf32>) -> tensor<8x8xf32>
  %4 = "ipu.add"(%3, %b) : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %5 = "ipu.add"(%0, %z) : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %6 = "ipu.map"(%0) {body = @iota} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %7 = "ipu.reshape"(%z) : (tensor<8x8xf32>) -> tensor<4x16xf32>
  %8 = "ipu.softmax"(%7) : (tensor<4x16xf32>) -> tensor<4x16xf32>
  return %2, %4, %5, %6, %8 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x16xf32>
}
