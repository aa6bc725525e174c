// Shapes whose counts would overflow are errors at the op: the verifier refuses tensors over
// 2^40 bytes before the pass runs (every count of a verified op fits i64: 2 * M * N * K is at
// most about 2^59.5 when each operand and the result hold at most 2^40 bytes).
// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=true})'
// An option value that is not a bool is a pipeline error naming the pass and the option.
// RUN: not ipu-opt %repo/examples/gemm_fp8.mlir --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=maybe})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ipu-opt %repo/examples/gemm_fp8.mlir --pass-pipeline='builtin.module(ipu-annotate-flops{elementwise=true})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// OPTION: error: invalid value 'maybe' for option 'include-elementwise' of pass 'ipu-annotate-flops': expected bool (use true, false, 1 or 0)
// OPTION-NEXT: builtin.module(ipu-annotate-flops{include-elementwise=maybe})
// UNKNOWN: error: pass 'ipu-annotate-flops' has no option 'elementwise'; valid options: include-elementwise

// 2 * M * N * K = 2 * 3037000500 * 2 * 3037000500 is about 3.7e19 > 2^63.
func.func @matmul_overflows(%a: tensor<3037000500x3037000500xf16>, %b: tensor<3037000500x2xf16>) -> tensor<3037000500x2xf16> {
  // expected-error@+1 {{'ipu.matmul' op lhs: [3037000500, 3037000500] of f16 is over the 1099511627776 bytes an ipu tensor may hold}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<3037000500x3037000500xf16>, tensor<3037000500x2xf16>) -> tensor<3037000500x2xf16>
  return %0 : tensor<3037000500x2xf16>
}

// -----

// Every op that is refused is reported, not just the first.
func.func @elementwise_overflows(%x: tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16> {
  // expected-error@+1 {{'ipu.gelu' op input: [4294967296, 4294967296] of f16 is over the 1099511627776 bytes an ipu tensor may hold}}
  %0 = "ipu.gelu"(%x) : (tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16>
  // expected-error@+1 {{'ipu.softmax' op input: [4294967296, 4294967296] of f16 is over the 1099511627776 bytes an ipu tensor may hold}}
  %1 = "ipu.softmax"(%0) : (tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16>
  return %1 : tensor<4294967296x4294967296xf16>
}
