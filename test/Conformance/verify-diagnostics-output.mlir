// Checks that -verify-diagnostics, when every expected diagnostic is produced,
// still prints the IR of the chunks that parse and verify: with
// -split-input-file, the chunk holding an expected error prints nothing (only
// its separator remains) while the other chunks print their module, and the
// run succeeds with nothing on stderr. (The separator is matched with a regex
// so that the check lines themselves do not split the input.)

// RUN: %mlir_opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: ipu-opt %s -split-input-file -verify-diagnostics | FileCheck %s
// RUN: %mlir_opt %s -split-input-file -verify-diagnostics 2>&1 >/dev/null | count 0
// RUN: ipu-opt %s -split-input-file -verify-diagnostics 2>&1 >/dev/null | count 0

// CHECK:      module {
// CHECK-NEXT:   func.func @before(%[[A:.*]]: i32) -> i32 {
// CHECK-NEXT:     return %[[A]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @after() {
// CHECK-NEXT:     return
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NOT:  @wrong_count

func.func @before(%v: i32) -> i32 {
  return %v : i32
}

// -----

func.func @wrong_count(%v: i32) -> i32 {
  // expected-error @+1 {{'func.return' op has 2 operands, but enclosing function (@wrong_count) returns 1}}
  return %v, %v : i32, i32
}

// -----

func.func @after() {
  return
}
