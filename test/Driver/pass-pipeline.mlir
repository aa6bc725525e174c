// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' | FileCheck %s
// RUN: ipu-opt %s --pass-pipeline=builtin.module\(ipu-canonicalize\) | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(any(ipu-canonicalize))' | FileCheck %s
// RUN: ipu-opt %s -p 'any(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(canonicalize{max-iterations=2 region-simplify=disabled}, func.func(ipu-canonicalize{max-iterations=4 disable-patterns="fold-identity-rearrange,fold-transpose-into-matmul"}, cse), symbol-dce)' | FileCheck %s --check-prefixes=CHECK,MIXED
// RUN: ipu-opt %s | FileCheck %s --check-prefix=NONE

// --pass-pipeline (and its short form -p) in MLIR's textual syntax: our pass on its own, nested
// under func.func, under the any() anchor, and mixed with upstream passes that take options,
// including a quoted list value. Without a pipeline the input is only parsed and verified.

// The cast round trip folds in every pipeline that runs ipu-canonicalize.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
// NONE-LABEL: func.func @round_trip
// NONE-COUNT-2: "ipu.cast"
func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// symbol-dce in the mixed pipeline removes the unused private function.
// MIXED-NOT: @unused
// NONE-LABEL: func.func private @unused
func.func private @unused() {
  return
}

// Patterns disabled through the quoted list keep the transpose in the mixed pipeline.
// MIXED-LABEL: func.func @transposed
// MIXED: "ipu.rearrange"
// MIXED: "ipu.matmul"(%{{.*}}, %{{.*}}) :
func.func @transposed(%a: tensor<16x4xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %t = "ipu.rearrange"(%a) {permutation = array<i64: 1, 0>} : (tensor<16x4xf16>) -> tensor<4x16xf16>
  %0 = "ipu.matmul"(%t, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
