// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s

// fold-transpose-into-matmul: matmul(transpose(a), b) => matmul(a, b){transpose_lhs ^= 1}, and
// likewise for b, where transpose swaps the last two axes without changing the format.

// A transposed left operand becomes transpose_lhs.
// CHECK-LABEL: func.func @transposed_lhs
// CHECK-SAME: (%[[A:.*]]: tensor<16x4xf16>, %[[B:.*]]: tensor<16x8xf16>)
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%[[A]], %[[B]]) {transpose_lhs} : (tensor<16x4xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: return %[[M]]
func.func @transposed_lhs(%a: tensor<16x4xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0>} : (tensor<16x4xf16>) -> tensor<4x16xf16>
  %0 = "ipu.matmul"(%t, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// Both operands at once, over a batch axis.
// CHECK-LABEL: func.func @transposed_both_batched
// CHECK-SAME: (%[[A:.*]]: tensor<2x16x4xf16>, %[[B:.*]]: tensor<2x8x16xf16>)
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%[[A]], %[[B]]) {transpose_lhs, transpose_rhs} : (tensor<2x16x4xf16>, tensor<2x8x16xf16>) -> tensor<2x4x8xf16>
// CHECK-NEXT: return %[[M]]
func.func @transposed_both_batched(%a: tensor<2x16x4xf16>, %b: tensor<2x8x16xf16>) -> tensor<2x4x8xf16> {
  %ta = "ipu.rearrange"(%a) {permutation = array<i64: 0, 2, 1>} : (tensor<2x16x4xf16>) -> tensor<2x4x16xf16>
  %tb = "ipu.rearrange"(%b) {permutation = array<i64: 0, 2, 1>} : (tensor<2x8x16xf16>) -> tensor<2x16x8xf16>
  %0 = "ipu.matmul"(%ta, %tb) : (tensor<2x4x16xf16>, tensor<2x16x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// A transpose of an already transposed operand clears the flag; other attributes are kept.
// CHECK-LABEL: func.func @flag_cancels
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xf16>, %[[B:.*]]: tensor<16x8xf16>)
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%[[A]], %[[B]]) {plan = #ipu.plan<"gemm_output_stationary", {c_block = 16 : i64, grid = [1, 1, 1, 1], k_block = 16 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 1 : i64, weights = "interleaved", weights_resident = false}>} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
// CHECK-NEXT: return %[[M]]
func.func @flag_cancels(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0>} : (tensor<4x16xf16>) -> tensor<16x4xf16>
  %0 = "ipu.matmul"(%t, %b) {transpose_lhs, plan = #ipu.plan<"gemm_output_stationary", {c_block = 16 : i64, grid = [1, 1, 1, 1], k_block = 16 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 1 : i64, weights = "interleaved", weights_resident = false}>} : (tensor<16x4xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// A permutation that moves a batch axis is not a matmul transpose: it stays.
// CHECK-LABEL: func.func @batch_axes_permuted_stays
// CHECK: %[[T:.*]] = "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0, 2>}
// CHECK: "ipu.matmul"(%[[T]], %{{.*}}) : (tensor<2x4x16xf16>
func.func @batch_axes_permuted_stays(%a: tensor<4x2x16xf16>, %b: tensor<2x16x8xf16>) -> tensor<2x4x8xf16> {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0, 2>} : (tensor<4x2x16xf16>) -> tensor<2x4x16xf16>
  %0 = "ipu.matmul"(%t, %b) : (tensor<2x4x16xf16>, tensor<2x16x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// A transpose that also changes the format is a layout conversion the matmul cannot absorb.
// CHECK-LABEL: func.func @transpose_with_format_stays
// CHECK: %[[T:.*]] = "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0>}
// CHECK: "ipu.matmul"(%[[T]], %{{.*}}) :
func.func @transpose_with_format_stays(%a: tensor<16x4xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0>} : (tensor<16x4xf16>) -> tensor<4x16xf16, #ipu.format<"amp_left", [4, 16], [1, 1], [0, 0], "standard", 0>>
  %0 = "ipu.matmul"(%t, %b) : (tensor<4x16xf16, #ipu.format<"amp_left", [4, 16], [1, 1], [0, 0], "standard", 0>>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// A transpose with another user stays for that user; the matmul still takes the flag.
// CHECK-LABEL: func.func @shared_transpose_stays
// CHECK-SAME: (%[[A:.*]]: tensor<16x4xf16>, %[[B:.*]]: tensor<16x8xf16>)
// CHECK: %[[T:.*]] = "ipu.rearrange"(%[[A]]) {permutation = array<i64: 1, 0>}
// CHECK: %[[M:.*]] = "ipu.matmul"(%[[A]], %[[B]]) {transpose_lhs}
// CHECK: return %[[M]], %[[T]]
func.func @shared_transpose_stays(%a: tensor<16x4xf16>, %b: tensor<16x8xf16>) -> (tensor<4x8xf16>, tensor<4x16xf16>) {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0>} : (tensor<16x4xf16>) -> tensor<4x16xf16>
  %0 = "ipu.matmul"(%t, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0, %t : tensor<4x8xf16>, tensor<4x16xf16>
}
