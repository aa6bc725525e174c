// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize), cse, ipu-canonicalize)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s

// --mlir-pass-statistics: per pass instance, how often each pattern rewrote an op (summed over
// the functions the instance ran on) and the total; patterns that never fired are not listed,
// the total always is.

// CHECK: ... Pass statistics report ...
// CHECK: IpuCanonicalize
// CHECK-NEXT: (S) 2 fold-cast-of-cast - Number of times the pattern rewrote an op
// CHECK-NEXT: (S) 1 fold-identity-cast - Number of times the pattern rewrote an op
// CHECK-NEXT: (S) 1 fold-rearrange-of-rearrange - Number of times the pattern rewrote an op
// CHECK-NEXT: (S) 4 rewrites - Number of ops rewritten
// The second instance finds nothing left to do.
// CHECK-NEXT: IpuCanonicalize
// CHECK-NEXT: (S) 0 rewrites - Number of ops rewritten
// CHECK-NOT: (S)

func.func @two_cast_chains(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  %2 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %3 = "ipu.cast"(%2) : (tensor<4xf32>) -> tensor<4xf16>
  return %1, %3 : tensor<4xf16>, tensor<4xf16>
}

func.func @identity_cast_and_double_transpose(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %2 = "ipu.rearrange"(%1) {permutation = array<i64: 1, 0>} : (tensor<8x4xf16>) -> tensor<4x8xf16>
  return %2 : tensor<4x8xf16>
}
