// RUN: ipu-opt %s --split-input-file | FileCheck %s
// RUN: ipu-opt %s --split-input-file --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Each chunk is parsed, verified and printed on its own; the outputs are joined with the marker,
// and locations keep the line numbers of this file.

// CHECK-LABEL: func.func @first
// LOC: loc("{{.*}}split-input-file.mlir":[[# @LINE + 1]]:1)
func.func @first() {
  return
}

// -----

// The second chunk cannot see the first one's symbols.
// CHECK: // -----
// CHECK-LABEL: func.func @second
// CHECK-NOT: @first
// LOC: loc("{{.*}}split-input-file.mlir":[[# @LINE + 1]]:1)
func.func @second(%value: i32) -> i32 {
  return %value : i32
}

// -----

// An empty chunk prints an empty module.
// CHECK: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: }
