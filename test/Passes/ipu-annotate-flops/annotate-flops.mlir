// ipu-annotate-flops sets `ipu.flops` (2*M*N*K*batch) on every ipu.matmul and
// 2*S*T*(D+E)*batch on every ipu.attention; elementwise ops are left alone by default.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops, cse)' | FileCheck %s
// The pass runs on any op: nested on functions it gives the same result.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-annotate-flops))' | FileCheck %s
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops)' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS

// STATS:      IpuAnnotateFlops
// STATS-NEXT:   (S) 2 attentions - Number of ipu.attention ops annotated
// STATS-NEXT:   (S) 0 elementwise - Number of elementwise ops annotated
// STATS-NEXT:   (S) 4 matmuls - Number of ipu.matmul ops annotated

// A plain [4, 16] x [16, 8] product: 2 * 4 * 8 * 16 = 1024.
// CHECK-LABEL: func.func @matmul_plain
func.func @matmul_plain(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  // CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) {ipu.flops = 1024 : i64}
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// Transpose flags choose the contraction axis: the same product stored transposed counts the
// same, while [16, 4]^T x [16, 8] with K = 16 is not confused with K = 4.
// CHECK-LABEL: func.func @matmul_transposed
func.func @matmul_transposed(%a: tensor<16x4xf16>, %b: tensor<8x16xf16>, %c: tensor<16x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>) {
  // CHECK: "ipu.matmul"{{.*}}ipu.flops = 1024 : i64, transpose_lhs, transpose_rhs
  %0 = "ipu.matmul"(%a, %b) {transpose_lhs, transpose_rhs} : (tensor<16x4xf16>, tensor<8x16xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.matmul"{{.*}}ipu.flops = 1024 : i64, transpose_lhs
  %1 = "ipu.matmul"(%a, %c) {transpose_lhs} : (tensor<16x4xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0, %1 : tensor<4x8xf16>, tensor<4x8xf16>
}

// Batch axes [2, 1] and [3] broadcast to 6 products of 2 * 4 * 8 * 16: 6144.
// CHECK-LABEL: func.func @matmul_batched
func.func @matmul_batched(%a: tensor<2x1x4x16xf16>, %b: tensor<3x16x8xf16>) -> tensor<2x3x4x8xf32> {
  // CHECK: "ipu.matmul"{{.*}}{ipu.flops = 6144 : i64}
  %0 = "ipu.matmul"(%a, %b) : (tensor<2x1x4x16xf16>, tensor<3x16x8xf16>) -> tensor<2x3x4x8xf32>
  return %0 : tensor<2x3x4x8xf32>
}

// q [2, 8, 16], k [2, 32, 16], v [2, 32, 4]: 2 * 2 * 8 * 32 * (16 + 4) = 20480 (the causal
// mask is not subtracted).
// CHECK-LABEL: func.func @attention
func.func @attention(%q: tensor<2x8x16xf16>, %k: tensor<2x32x16xf16>, %v: tensor<2x32x4xf16>, %s: tensor<2x32x16xf16>) -> (tensor<2x8x4xf16>, tensor<2x32x16xf16>) {
  // CHECK: "ipu.attention"{{.*}}{ipu.flops = 20480 : i64}
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<2x8x16xf16>, tensor<2x32x16xf16>, tensor<2x32x4xf16>) -> tensor<2x8x4xf16>
  // CHECK: "ipu.attention"{{.*}}{causal, ipu.flops = 131072 : i64, scale = 2.500000e-01 : f32}
  %1 = "ipu.attention"(%s, %s, %s) {causal, scale = 0.25 : f32} : (tensor<2x32x16xf16>, tensor<2x32x16xf16>, tensor<2x32x16xf16>) -> tensor<2x32x16xf16>
  return %0, %1 : tensor<2x8x4xf16>, tensor<2x32x16xf16>
}

// Without include-elementwise, elementwise ops and rearranges keep their attributes.
// CHECK-LABEL: func.func @elementwise_untouched
func.func @elementwise_untouched(%x: tensor<4x8xf16>) -> tensor<8x4xf16> {
  // CHECK: "ipu.gelu"(%{{.*}}) :
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.add"(%{{.*}}, %{{.*}}) :
  %1 = "ipu.add"(%0, %x) : (tensor<4x8xf16>, tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0>} :
  %2 = "ipu.rearrange"(%1) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  return %2 : tensor<8x4xf16>
}
