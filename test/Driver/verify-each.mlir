// RUN: not ipu-opt %s -p 'builtin.module(remove-dead-values)' 2>&1 | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(remove-dead-values)' --verify-each 2>&1 | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(remove-dead-values)' --verify-each=1 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(remove-dead-values)' --verify-each=false | FileCheck %s --check-prefix=UNVERIFIED
// RUN: ipu-opt %s -p 'builtin.module(remove-dead-values)' -verify-each=0 | FileCheck %s --check-prefix=UNVERIFIED
// RUN: not ipu-opt %s --verify-each=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// --verify-each (on by default): the IR is verified after the passes, including the ipu
// semantic checks MLIR's own verifier does not know. Upstream remove-dead-values drops the
// unused second result of @body but cannot update the ipu.repeat that calls it, which the
// verifier catches; with --verify-each=false (or 0) the broken IR is printed as is.

// CHECK: verify-each.mlir:[[# @LINE + 11]]:10: error: 'ipu.repeat' op carried types must flow through @body unchanged: inputs (tensor<4xf16>, tensor<4xf16>), body results (tensor<4xf16>), op results (tensor<4xf16>)
// CHECK-NOT: module

// UNVERIFIED: func.func private @body({{.*}}) -> tensor<4xf16>

// BAD: error: invalid value 'maybe' for '--verify-each[=<VERIFY_EACH>]'

func.func private @body(%x: tensor<4xf16>, %y: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>) {
  return %x, %y : tensor<4xf16>, tensor<4xf16>
}
func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0:2 = "ipu.repeat"(%x, %x) {body = @body, count = 2 : i64} : (tensor<4xf16>, tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf16>)
  return %0#0 : tensor<4xf16>
}
