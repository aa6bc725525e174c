// The lowering follows a reshape's view plan or refuses it at the op: a grid whose blocks are
// not whole rows of the input, or a plan of another strategy, is an error naming the plan and
// why. Followed, the reshape is a view: no kernel, its result the input's buffers.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' 2>&1 | FileCheck %s

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.reshape: op 0: plan #ipu.plan<"reshape_view", {grid = [64, 1, 1], tiles = 64 : i64}> cannot be followed: it needs 64 tiles, the lowering has 16
func.func @split(%x: tensor<64x128xf16>) -> tensor<64x4x32xf16> {
  %0 = "ipu.reshape"(%x) {plan = #ipu.plan<"reshape_view", {grid = [64, 1, 1], tiles = 64 : i64}>} : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  return %0 : tensor<64x4x32xf16>
}

// -----

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.reshape: op 0: plan #ipu.plan<"reshape_view", {grid = [1, 4, 1], tiles = 4 : i64}> cannot be followed: a block of 1 rows of 6 elements is not whole rows of 4
func.func @rows(%x: tensor<6x4xf16>) -> tensor<4x6xf16> {
  %0 = "ipu.reshape"(%x) {plan = #ipu.plan<"reshape_view", {grid = [1, 4, 1], tiles = 4 : i64}>} : (tensor<6x4xf16>) -> tensor<4x6xf16>
  return %0 : tensor<4x6xf16>
}

// -----

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.reshape: op 0: plan {{.*}}"rows_softmax"{{.*}} cannot be followed: not a reshape plan
func.func @other(%x: tensor<64x128xf16>) -> tensor<64x4x32xf16> {
  %0 = "ipu.reshape"(%x) {plan = #ipu.plan<"rows_softmax", {grid = [4, 1, 1], precision = "f16", tiles = 4 : i64}>} : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  return %0 : tensor<64x4x32xf16>
}
