// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-eqsat))' | FileCheck %s

// Only pure ipu ops are in the e-graph: ipu.repeat, calls and ops carrying other attributes are
// leaves and stay untouched, while the pure ops around them are still rewritten.

func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  return %x : tensor<64x64xf16>
}

// CHECK-LABEL: func.func @repeat_is_a_leaf
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.repeat"(%[[X]]) {body = @layer, count = 4 : i64}
// CHECK-NEXT: %[[A:.*]] = "ipu.matmul"(%[[R]], %[[R]]) {ipu.flops = 1 : i64}
// CHECK-NEXT: return %[[A]]
func.func @repeat_is_a_leaf(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %w = "ipu.cast"(%x) : (tensor<64x64xf16>) -> tensor<64x64xf32>
  %n = "ipu.cast"(%w) : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %r = "ipu.repeat"(%n) {body = @layer, count = 4 : i64} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %t = "ipu.rearrange"(%r) {permutation = array<i64: 1, 0>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %tt = "ipu.rearrange"(%t) {permutation = array<i64: 1, 0>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %a = "ipu.matmul"(%tt, %r) {ipu.flops = 1 : i64} : (tensor<64x64xf16>, tensor<64x64xf16>) -> tensor<64x64xf16>
  return %a : tensor<64x64xf16>
}
