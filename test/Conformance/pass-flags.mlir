// Checks that passes given as individual command-line flags build the same
// pipeline as in mlir-opt: several module passes in order (one with options),
// a func.func-only pass nested under func.func, and that -pass-pipeline cannot
// be mixed with individual pass flags. Each check runs with stock mlir-opt and
// with ipu-opt under the same prefix.

// RUN: %mlir_opt %s -cse -canonicalize='max-iterations=3' -symbol-dce | FileCheck %s
// RUN: ipu-opt %s -cse -canonicalize='max-iterations=3' -symbol-dce | FileCheck %s

// RUN: %mlir_opt %s -cse -canonicalize='max-iterations=3' -symbol-dce --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: ipu-opt %s -cse -canonicalize='max-iterations=3' -symbol-dce --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER

// RUN: %mlir_opt %s -affine-scalrep --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED
// RUN: ipu-opt %s -affine-scalrep --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTED

// RUN: not %mlir_opt %s -pass-pipeline='builtin.module(cse)' -canonicalize 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not ipu-opt %s -pass-pipeline='builtin.module(cse)' -canonicalize 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not %mlir_opt %s -canonicalize -pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: not ipu-opt %s -canonicalize -pass-pipeline='builtin.module(cse)' 2>&1 | FileCheck %s --check-prefix=MIXED

// The duplicate addi is merged, the add of zero folds away, and the unused
// private function is removed.
// CHECK-LABEL: func.func @twice(
// CHECK-SAME:    %[[A:.*]]: i32, %[[B:.*]]: i32) -> (i32, i32) {
// CHECK-NEXT:    %[[S:.*]] = arith.addi %[[A]], %[[B]] : i32
// CHECK-NEXT:    return %[[S]], %[[S]] : i32, i32
// CHECK-NEXT:  }
// CHECK-NOT:   @never_called

// ORDER:      Pass Manager with 3 passes:
// ORDER-NEXT: builtin.module(
// ORDER-NEXT:   cse,
// ORDER-NEXT:   canonicalize{{[{].*}}max-iterations=3{{.*[}]}},
// ORDER-NEXT:   symbol-dce
// ORDER-NEXT: )

// NESTED:      Pass Manager with 1 passes:
// NESTED-NEXT: builtin.module(
// NESTED-NEXT:   func.func(
// NESTED-NEXT:     affine-scalrep
// NESTED-NEXT:   )
// NESTED-NEXT: )

// MIXED: error: '-pass-pipeline' option can't be used with individual pass options

func.func @twice(%x: i32, %y: i32) -> (i32, i32) {
  %0 = arith.addi %x, %y : i32
  %1 = arith.addi %x, %y : i32
  %zero = arith.constant 0 : i32
  %2 = arith.addi %1, %zero : i32
  return %0, %2 : i32, i32
}

func.func private @never_called() {
  return
}
