// RUN: not ipu-opt %s --split-input-file 2>&1 | FileCheck %s
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-canonicalize)' -o %t 2>&1 | FileCheck %s
// RUN: not ls %t
// RUN: ipu-opt %s --split-input-file --verify-diagnostics
// RUN: cat %s | not ipu-opt --split-input-file 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not ipu-opt %s --split-input-file 2>&1 | FileCheck %s --strict-whitespace --check-prefix=SNIPPET

// Malformed IR: each error names the file, line and column (of this file, also inside split
// chunks and for standard input), followed by the source line and a caret as in mlir-opt; the
// exit code is non-zero and no output file is written.

// SNIPPET: malformed-ir.mlir:[[# @LINE + 7]]:24: error: expected ')' to end operand list
// SNIPPET-NEXT: {{^}}  %0 = "ipu.add"(%x, %x : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>{{$}}
// SNIPPET-NEXT: {{^ {23}\^$}}
// CHECK: malformed-ir.mlir:[[# @LINE + 4]]:24: error: expected ')' to end operand list
// STDIN: <stdin>:[[# @LINE + 3]]:24: error: expected ')' to end operand list
func.func @unclosed_operands(%x: tensor<4xf16>) -> tensor<4xf16> {
  // expected-error@+1 {{expected ')' to end operand list}}
  %0 = "ipu.add"(%x, %x : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// CHECK: malformed-ir.mlir:[[# @LINE + 3]]:41: error: expected non-function type
func.func @unknown_type() {
  // expected-error@+1 {{expected non-function type}}
  %0 = "ipu.softmax"() : () -> tensor<4xbogus>
  return
}

// -----

// CHECK: malformed-ir.mlir:[[# @LINE + 3]]:10: error: use of undeclared SSA value name
func.func @undeclared_value() -> tensor<4xf16> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %nowhere : tensor<4xf16>
}
