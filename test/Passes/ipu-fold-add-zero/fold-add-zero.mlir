// ipu-fold-add-zero replaces ipu.add(x, zeros) by x when the result has x's type, the zeros on
// either side, and erases the zero constant once nothing uses it.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-fold-add-zero)' | FileCheck %s
// The pass runs on any op: nested on functions it gives the same result.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-fold-add-zero))' | FileCheck %s
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-fold-add-zero)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// STATS:      IpuFoldAddZero
// STATS-NEXT:   (S) 3 fold-add-zero - Number of times the pattern rewrote an op
// STATS-NEXT:   (S) 3 rewrites - Number of ops rewritten

// CHECK-LABEL: func.func @zeros_on_the_right
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf16>)
func.func @zeros_on_the_right(%x: tensor<4x16xf16>) -> tensor<4x16xf16> {
  // CHECK-NOT: arith.constant
  // CHECK-NOT: ipu.add
  // CHECK: return %[[X]]
  %z = arith.constant dense<0.0> : tensor<4x16xf16>
  %0 = "ipu.add"(%x, %z) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// A broadcast row of negative zeros, on the left, folds too.
// CHECK-LABEL: func.func @row_of_zeros_on_the_left
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
func.func @row_of_zeros_on_the_left(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  // CHECK-NEXT: return %[[X]]
  %z = arith.constant dense<-0.0> : tensor<16xf32>
  %0 = "ipu.add"(%z, %x) : (tensor<16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Zeros another op still reads stay; the add still folds.
// CHECK-LABEL: func.func @shared_zeros
func.func @shared_zeros(%x: tensor<8xf16>, %y: tensor<8xf16>) -> (tensor<8xf16>, tensor<8xf16>) {
  // CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00>
  // CHECK-NEXT: %[[G:.*]] = "ipu.gelu"(%[[Z]])
  // CHECK-NEXT: return %{{.*}}, %[[G]]
  %z = arith.constant dense<0.0> : tensor<8xf16>
  %0 = "ipu.add"(%x, %z) : (tensor<8xf16>, tensor<8xf16>) -> tensor<8xf16>
  %1 = "ipu.gelu"(%z) {approximate = "tanh"} : (tensor<8xf16>) -> tensor<8xf16>
  return %0, %1 : tensor<8xf16>, tensor<8xf16>
}

// Kept: an add that broadcasts x to a larger result, an add of a non-zero splat, an add of
// two arguments, and zeros that are not a splat.
// CHECK-LABEL: func.func @kept
func.func @kept(%x: tensor<16xf16>, %y: tensor<4x16xf16>) -> (tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<2xf16>) {
  %z = arith.constant dense<0.0> : tensor<4x16xf16>
  %one = arith.constant dense<1.0> : tensor<4x16xf16>
  %mixed = arith.constant dense<[0.0, 1.0]> : tensor<2xf16>
  %w = arith.constant dense<[2.0, 3.0]> : tensor<2xf16>
  // CHECK-COUNT-4: "ipu.add"
  %0 = "ipu.add"(%x, %z) : (tensor<16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %1 = "ipu.add"(%y, %one) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %2 = "ipu.add"(%y, %y) : (tensor<4x16xf16>, tensor<4x16xf16>) -> tensor<4x16xf16>
  %3 = "ipu.add"(%w, %mixed) : (tensor<2xf16>, tensor<2xf16>) -> tensor<2xf16>
  return %0, %1, %2, %3 : tensor<4x16xf16>, tensor<4x16xf16>, tensor<4x16xf16>, tensor<2xf16>
}
