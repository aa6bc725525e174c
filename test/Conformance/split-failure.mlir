// Checks that with --split-input-file a chunk that fails to parse, or parses
// but fails to verify, does not stop the other chunks from being processed:
// the good chunks are still printed on stdout (with the separators of all
// chunks), both failures are reported on stderr, and the exit code is
// non-zero.

// RUN: not %mlir_opt %s --split-input-file -cse 2>/dev/null | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -cse 2>/dev/null | FileCheck %s
// RUN: not %mlir_opt %s --split-input-file -cse 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR
// RUN: not ipu-opt %s --split-input-file -cse 2>&1 >/dev/null | FileCheck %s --check-prefix=ERR

// CHECK:      module {
// CHECK-NEXT:   func.func @first() {
// CHECK:      {{^}}// {{-----$}}
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: {{^}}// {{-----$}}
// CHECK-NEXT: module {
// CHECK-NEXT:   func.func @last() {
// CHECK-NOT:  @unclosed
// CHECK-NOT:  @too_many

// ERR:      split-failure.mlir:{{[0-9]+}}:{{[0-9]+}}: error: expected non-function type
// ERR:      split-failure.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'func.return' op has 2 operands, but enclosing function (@too_many) returns 1
// ERR-NOT:  error:

func.func @first() {
  return
}

// -----

func.func @unclosed( {

// -----

func.func @too_many(%v: i32) -> i32 {
  return %v, %v : i32, i32
}

// -----

func.func @last() {
  return
}
