// RUN: not ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// What --verify-diagnostics reports when expectations and diagnostics disagree.

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:1: error: unexpected error: 'func.return' op expects parent op 'func.func'
"func.return"() : () -> ()

// -----

// A diagnostic with the expected text on the expected line but another severity.
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 2]]:4: error: 'error' diagnostic emitted when expecting a 'warning'
// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected warning "expects parent op" was not produced
// expected-warning@+1 {{expects parent op}}
"func.return"() : () -> ()

// -----

// CHECK: verify-diagnostics-mismatch.mlir:[[# @LINE + 1]]:4: error: expected error "never emitted" was not produced
// expected-error@+1 {{never emitted}}
func.func @fine() {
  return
}
