// RUN: ipu-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: ipu-opt %s -allow-unregistered-dialect -p 'builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: not ipu-opt %s 2>&1 | FileCheck %s --check-prefix=REJECTED

// --allow-unregistered-dialect: ops of unknown dialects are accepted and printed back (in the
// generic form); without it they are a parse error at the op.

// CHECK-LABEL: func.func @custom
// CHECK: "acme.widget"(%{{.*}}) {size = 3 : i64} : (tensor<4xf16>) -> tensor<4xf16>
// REJECTED: allow-unregistered-dialect.mlir:[[# @LINE + 3]]:21: error: operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used
// REJECTED-NOT: module
func.func @custom(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "acme.widget"(%x) {size = 3 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}
