// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s

// fold-identity-rearrange: rearrange(x : T -> T) with no or an identity permutation => x.

// Same type, no permutation: nothing moves.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK-NEXT: return %[[X]] : tensor<4x8xf16>
func.func @same_type(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// The identity permutation is no permutation.
// CHECK-LABEL: func.func @identity_permutation
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf16>)
// CHECK-NEXT: return %[[X]]
func.func @identity_permutation(%x: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 0, 1, 2>} : (tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// A rearrange into another format changes the layout and stays.
// CHECK-LABEL: func.func @format_change_stays
// CHECK: "ipu.rearrange"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left"
func.func @format_change_stays(%x: tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>> {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
}

// A transpose of a square tensor keeps the type but moves elements: it stays.
// CHECK-LABEL: func.func @square_transpose_stays
// CHECK: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0>} : (tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @square_transpose_stays(%x: tensor<4x4xf16>) -> tensor<4x4xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x4xf16>) -> tensor<4x4xf16>
  return %0 : tensor<4x4xf16>
}
