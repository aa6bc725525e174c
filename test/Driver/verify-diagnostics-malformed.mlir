// RUN: not ipu-opt %s --split-input-file --verify-diagnostics 2>&1 | FileCheck %s

// Mistyped expectations, which mlir-opt silently ignores (so a test could never fail), are
// errors in ipu-opt, reported where they are written.

// CHECK: verify-diagnostics-malformed.mlir:[[# @LINE + 1]]:4: error: 'expected-error' must be followed by the expected message
// expected-error@+1 missing braces
func.func @missing_braces() {
  return
}

// -----

// CHECK: verify-diagnostics-malformed.mlir:[[# @LINE + 1]]:4: error: 'expected-error' does not take a count
// expected-error 2 {{twice}}
func.func @count_suffix() {
  return
}

// -----

// CHECK: verify-diagnostics-malformed.mlir:[[# @LINE + 1]]:4: error: 'expected-error@+9' refers to line [[# @LINE + 10]], outside the checked input (lines [[# @LINE - 2]]-[[# @LINE + 5]])
// expected-error@+9 {{past the end of this chunk}}
func.func @offset_outside_chunk() {
  return
}

// -----

// CHECK: verify-diagnostics-malformed.mlir:[[# @LINE + 1]]:4: error: 'expected-note' has an invalid designator '@sideways'
// expected-note@sideways {{x}}
func.func @bad_designator() {
  return
}

// -----

func.func @dangling_below() {
  return
}
// CHECK: verify-diagnostics-malformed.mlir:[[# @LINE + 1]]:4: error: 'expected-error@below' has no line below it to apply to
// expected-error@below {{x}}
