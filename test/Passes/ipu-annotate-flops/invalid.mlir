// A count that does not fit the i64 attribute is an error at the op, and the pass fails.
// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=true})'
// An option value that is not a bool is a pipeline error naming the pass and the option.
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=maybe})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops{elementwise=true})' 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// OPTION: error: invalid value 'maybe' for option 'include-elementwise' of pass 'ipu-annotate-flops': expected bool (use true, false, 1 or 0)
// OPTION-NEXT: builtin.module(ipu-annotate-flops{include-elementwise=maybe})
// UNKNOWN: error: pass 'ipu-annotate-flops' has no option 'elementwise'; valid options: include-elementwise

// 2 * M * N * K = 2 * 3037000500 * 2 * 3037000500 is about 3.7e19 > 2^63.
func.func @matmul_overflows(%a: tensor<3037000500x3037000500xf16>, %b: tensor<3037000500x2xf16>) -> tensor<3037000500x2xf16> {
  // expected-error@+1 {{'ipu.matmul' op ipu-annotate-flops: flop count 2 * 3037000500 * 3037000500 * 2 overflows i64}}
  %0 = "ipu.matmul"(%a, %b) : (tensor<3037000500x3037000500xf16>, tensor<3037000500x2xf16>) -> tensor<3037000500x2xf16>
  return %0 : tensor<3037000500x2xf16>
}

// -----

// Every op that cannot be counted is reported, not just the first.
func.func @elementwise_overflows(%x: tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16> {
  // expected-error@+1 {{'ipu.gelu' op ipu-annotate-flops: flop count 4294967296 * 4294967296 overflows i64}}
  %0 = "ipu.gelu"(%x) : (tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16>
  // expected-error@+1 {{'ipu.softmax' op ipu-annotate-flops: flop count 4294967296 * 4294967296 overflows i64}}
  %1 = "ipu.softmax"(%0) : (tensor<4294967296x4294967296xf16>) -> tensor<4294967296x4294967296xf16>
  return %1 : tensor<4294967296x4294967296xf16>
}
