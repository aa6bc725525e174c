// RUN: ipu-opt %s --verify-diagnostics=only-expected
// RUN: not ipu-opt %s --verify-diagnostics 2>&1 | FileCheck %s
// RUN: not ipu-opt %s --verify-diagnostics=all 2>&1 | FileCheck %s

// --verify-diagnostics=only-expected checks the expected diagnostics and ignores the others;
// the default (`all`) also fails on diagnostics nobody expected. The ipu verifier reports every
// bad op, so the second cast's error is one nobody expected.

// CHECK: verify-diagnostics-only-expected.mlir:[[# @LINE + 5]]:8: error: unexpected error: 'ipu.cast' op result shape [2] must equal the input shape [4]
// CHECK-NOT: expected error
func.func @two_bad_casts(%x: tensor<4xf16>) -> (tensor<8xf16>, tensor<2xf16>) {
  // expected-error@+1 {{'ipu.cast' op result shape [8] must equal the input shape [4]}}
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<8xf16>
  %1 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<2xf16>
  return %0, %1 : tensor<8xf16>, tensor<2xf16>
}
