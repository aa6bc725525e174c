// The lowering follows a repeat's selected plan or refuses it at the op: a plan recorded for
// another count, or a plan of another strategy, is an error naming the plan and why.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' 2>&1 | FileCheck %s

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.repeat: op 0: plan #ipu.plan<"repeat_body_once", {body_choices = [0], count = 3 : i64}> cannot be followed: its plan repeats 3 times but the op repeats 10 times
func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @repeated(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.repeat"(%x) {body = @layer, count = 10 : i64, plan = #ipu.plan<"repeat_body_once", {body_choices = [0], count = 3 : i64}>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}

// -----

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.repeat: op 0: plan {{.*}}"rows_softmax"{{.*}} cannot be followed: not a repeat plan
func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @repeated(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.repeat"(%x) {body = @layer, count = 10 : i64, plan = #ipu.plan<"rows_softmax", {grid = [1, 16, 1], precision = "f16", tiles = 16 : i64}>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
