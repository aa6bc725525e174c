// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// fold-unit-axes-rearrange: a permutation that only moves unit axes keeps the element order,
// so it is a reshape; one that moves a longer axis stays.
// CHECK-LABEL: func.func @unit_axes
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%arg0) : (tensor<1x1x4x16x8xf32>) -> tensor<1x4x1x16x8xf32>
// CHECK-NEXT: %[[S:.*]] = "ipu.rearrange"(%arg0) {permutation = array<i64: 0, 1, 3, 2, 4>}
// CHECK-NEXT: return %[[R]], %[[S]]
func.func @unit_axes(%x: tensor<1x1x4x16x8xf32>) -> (tensor<1x4x1x16x8xf32>, tensor<1x1x16x4x8xf32>) {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 2, 0, 3, 4>} : (tensor<1x1x4x16x8xf32>) -> tensor<1x4x1x16x8xf32>
  %1 = "ipu.rearrange"(%x) {permutation = array<i64: 0, 1, 3, 2, 4>} : (tensor<1x1x4x16x8xf32>) -> tensor<1x1x16x4x8xf32>
  return %0, %1 : tensor<1x4x1x16x8xf32>, tensor<1x1x16x4x8xf32>
}

// -----

// fold-transpose-of-matmul then fold-transpose-into-matmul: JAX's p @ v written as
// (v^T p^T)^T, with batch-regrouping reshapes between, is the product p @ v.
// CHECK-LABEL: func.func @product_computed_transposed
// CHECK-NEXT: %[[V:.*]] = "ipu.reshape"(%arg1) : (tensor<1x4x16x8xf32>) -> tensor<4x16x8xf32>
// CHECK-NEXT: %[[M:.*]] = "ipu.matmul"(%arg0, %[[V]]) : (tensor<4x16x16xf32>, tensor<4x16x8xf32>) -> tensor<4x16x8xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%[[M]]) : (tensor<4x16x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @product_computed_transposed(%p: tensor<4x16x16xf32>, %v: tensor<1x4x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %vt = "ipu.rearrange"(%v) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x4x16x8xf32>) -> tensor<1x4x8x16xf32>
  %vt3 = "ipu.reshape"(%vt) : (tensor<1x4x8x16xf32>) -> tensor<4x8x16xf32>
  %pt = "ipu.rearrange"(%p) {permutation = array<i64: 0, 2, 1>} : (tensor<4x16x16xf32>) -> tensor<4x16x16xf32>
  %m = "ipu.matmul"(%vt3, %pt) : (tensor<4x8x16xf32>, tensor<4x16x16xf32>) -> tensor<4x8x16xf32>
  %m4 = "ipu.reshape"(%m) : (tensor<4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %o = "ipu.rearrange"(%m4) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x4x8x16xf32>) -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// -----

// Near miss: a product another op also reads stays (it is computed once either way).
// CHECK-LABEL: func.func @product_read_twice
// CHECK: %[[M:.*]] = "ipu.matmul"(%arg0, %arg1) : (tensor<4x8x16xf32>, tensor<4x16x16xf32>)
// CHECK-NEXT: "ipu.rearrange"(%[[M]]) {permutation = array<i64: 0, 2, 1>}
func.func @product_read_twice(%a: tensor<4x8x16xf32>, %b: tensor<4x16x16xf32>) -> (tensor<4x16x8xf32>, tensor<4x8x16xf32>) {
  %m = "ipu.matmul"(%a, %b) : (tensor<4x8x16xf32>, tensor<4x16x16xf32>) -> tensor<4x8x16xf32>
  %o = "ipu.rearrange"(%m) {permutation = array<i64: 0, 2, 1>} : (tensor<4x8x16xf32>) -> tensor<4x16x8xf32>
  return %o, %m : tensor<4x16x8xf32>, tensor<4x8x16xf32>
}

// -----

// fold-unit-reshape-into-rearrange: JAX's head split of an argument, a unit axis inserted and
// the heads moved in front, is the same permutation of the argument's own axes, then a
// reshape (the rearrange reads the argument itself).
// CHECK-LABEL: func.func @unit_reshape_then_permutation
// CHECK-NEXT: %[[R:.*]] = "ipu.rearrange"(%arg0) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x16x4x16xf32>) -> tensor<1x4x16x16xf32>
// CHECK-NEXT: %[[S:.*]] = "ipu.reshape"(%[[R]]) : (tensor<1x4x16x16xf32>) -> tensor<1x4x16x1x16xf32>
// CHECK-NEXT: return %[[S]]
func.func @unit_reshape_then_permutation(%x: tensor<1x16x4x16xf32>) -> tensor<1x4x16x1x16xf32> {
  %0 = "ipu.reshape"(%x) : (tensor<1x16x4x16xf32>) -> tensor<1x16x4x1x16xf32>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x16x4x1x16xf32>) -> tensor<1x4x16x1x16xf32>
  return %1 : tensor<1x4x16x1x16xf32>
}

// -----

// Near miss: a reshape that regroups long axes ([16, 64] -> [16, 4, 16]) is no unit-axis
// reshape; the rearrange keeps reading it.
// CHECK-LABEL: func.func @head_split_stays
// CHECK-NEXT: %[[R:.*]] = "ipu.reshape"(%arg0) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
// CHECK-NEXT: "ipu.rearrange"(%[[R]]) {permutation = array<i64: 1, 0, 2>}
func.func @head_split_stays(%x: tensor<16x64xf32>) -> tensor<4x16x16xf32> {
  %0 = "ipu.reshape"(%x) : (tensor<16x64xf32>) -> tensor<16x4x16xf32>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x16xf32>) -> tensor<4x16x16xf32>
  return %1 : tensor<4x16x16xf32>
}
