// A constraint no candidate satisfies is diagnosed at the constrained op.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints={"ops":[{"op":0,"kind":"no_such_plan"}]}})' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints={"ops":[{}]}})' -o /dev/null 2>&1 | FileCheck %s

// CHECK: error: 'builtin.module' op ipu-lower-mid: plan constraints: ops[0] has no "op"

func.func @gelu(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  // expected-error@+1 {{'ipu.gelu' op has no operator plan: the plan pinned for op 0 is not offered: unknown plan kind "no_such_plan" (known: gemm_output_stationary,}}
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
