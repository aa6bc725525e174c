// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fuse-maps, symbol-dce)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-fuse-maps, symbol-dce)' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// A chain of single-use maps (what the TOSA import writes: one map per elementwise op) becomes
// one map computing the chain: (x - m) squared, the difference read twice, then scaled.
// CHECK-LABEL: func.func @chain
// CHECK: %[[F:.*]] = "ipu.map"(%arg0, %arg1, %arg0, %arg1, %arg2) {body = @[[BODY:.*]]} : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[F]]
// CHECK: func.func private @[[BODY]](%[[X0:.*]]: f32, %[[M0:.*]]: f32, %[[X1:.*]]: f32, %[[M1:.*]]: f32, %[[S:.*]]: f32) -> f32
// CHECK-DAG: arith.subf %[[X0]], %[[M0]]
// CHECK-DAG: arith.subf %[[X1]], %[[M1]]
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: func.func private @mul
func.func private @sub(%a: f32, %b: f32) -> f32 {
  %0 = arith.subf %a, %b : f32
  return %0 : f32
}
func.func private @mul(%a: f32, %b: f32) -> f32 {
  %0 = arith.mulf %a, %b : f32
  return %0 : f32
}
func.func @chain(%x: tensor<4x8xf32>, %m: tensor<4x8xf32>, %s: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %d = "ipu.map"(%x, %m) {body = @sub} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = "ipu.map"(%d, %d) {body = @mul} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = "ipu.map"(%sq, %s) {body = @mul} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// Not fused: a map read by two ops (computed once) and a map of another shape (a broadcast
// between).
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-4: "ipu.map"
func.func private @exp(%a: f32) -> f32 {
  %0 = math.exp %a : f32
  return %0 : f32
}
func.func private @neg(%a: f32) -> f32 {
  %0 = arith.negf %a : f32
  return %0 : f32
}
func.func @kept(%x: tensor<4x8xf32>, %r: tensor<4x1xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = "ipu.map"(%x) {body = @exp} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %a = "ipu.map"(%e) {body = @neg} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %small = "ipu.map"(%r) {body = @exp} : (tensor<4x1xf32>) -> tensor<4x1xf32>
  %wide = "ipu.broadcast"(%small) : (tensor<4x1xf32>) -> tensor<4x8xf32>
  %b = "ipu.map"(%wide) {body = @neg} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %b, %e : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
