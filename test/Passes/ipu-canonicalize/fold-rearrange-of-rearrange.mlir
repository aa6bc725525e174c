// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s

// fold-rearrange-of-rearrange: rearrange_q(rearrange_p(x)) => rearrange_{p.q}(x), and => x
// when the composition is the identity and the types agree.

// Into a tile format and back out is the identity.
// CHECK-LABEL: func.func @format_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf16>
func.func @format_round_trip(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  %1 = "ipu.rearrange"(%0) : (tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// Two transposes cancel.
// CHECK-LABEL: func.func @double_transpose
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @double_transpose(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0>} : (tensor<8x4xf16>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}

// Permutations compose: [1, 2, 0] then [2, 1, 0] is [0, 2, 1], a swap of the last two axes.
// CHECK-LABEL: func.func @permutations_compose
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x8xf16>) -> tensor<2x8x4xf16>
// CHECK-NEXT: return %[[R]]
func.func @permutations_compose(%x: tensor<2x4x8xf16>) -> tensor<2x8x4xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 2, 0>} : (tensor<2x4x8xf16>) -> tensor<4x8x2xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 2, 1, 0>} : (tensor<4x8x2xf16>) -> tensor<2x8x4xf16>
  return %1 : tensor<2x8x4xf16>
}

// [2, 0, 1] twice would be [1, 2, 0], which moves the last axis other than by swapping the
// last two: the tile lowering runs only the steps, so they stay as written.
// CHECK-LABEL: func.func @unlowered_composition_stays
// CHECK-NEXT: "ipu.rearrange"(%arg0) {permutation = array<i64: 2, 0, 1>}
// CHECK-NEXT: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 2, 0, 1>}
func.func @unlowered_composition_stays(%x: tensor<2x4x8xf16>) -> tensor<4x8x2xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x8xf16>) -> tensor<8x2x4xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 2, 0, 1>} : (tensor<8x2x4xf16>) -> tensor<4x8x2xf16>
  return %1 : tensor<4x8x2xf16>
}

// A transpose then a format change is one rearrange doing both.
// CHECK-LABEL: func.func @transpose_then_format
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16, #ipu.format<"amp_right"
// CHECK-NEXT: return %[[R]]
func.func @transpose_then_format(%x: tensor<4x8xf16>) -> tensor<8x4xf16, #ipu.format<"amp_right", [8, 4], [1, 1], [0, 0], "interleaved", 0>> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %1 = "ipu.rearrange"(%0) : (tensor<8x4xf16>) -> tensor<8x4xf16, #ipu.format<"amp_right", [8, 4], [1, 1], [0, 0], "interleaved", 0>>
  return %1 : tensor<8x4xf16, #ipu.format<"amp_right", [8, 4], [1, 1], [0, 0], "interleaved", 0>>
}

// Two format changes that do not return to the start become one format change.
// CHECK-LABEL: func.func @format_to_format
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%[[X]]) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_output"
// CHECK-NEXT: return %[[R]]
func.func @format_to_format(%x: tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [1, 1], [0, 0], "standard", 0>> {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  %1 = "ipu.rearrange"(%0) : (tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>) -> tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [1, 1], [0, 0], "standard", 0>>
  return %1 : tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [1, 1], [0, 0], "standard", 0>>
}

// The inner rearrange stays when something else uses it.
// CHECK-LABEL: func.func @shared_inner_stays
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: %[[T:.*]] = "ipu.rearrange"(%[[X]]) {permutation = array<i64: 1, 0>}
// CHECK-NEXT: return %[[X]], %[[T]]
func.func @shared_inner_stays(%x: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<8x4xf16>) {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0>} : (tensor<8x4xf16>) -> tensor<4x8xf16>
  return %1, %0 : tensor<4x8xf16>, tensor<8x4xf16>
}
