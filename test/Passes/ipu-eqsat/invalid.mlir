// RUN: ipu-opt %s --split-input-file --verify-diagnostics --pass-pipeline='builtin.module(func.func(ipu-eqsat{tiles=0}))'
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-eqsat{iteration=3})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-eqsat{time-limit-ms=-5})' 2>&1 | FileCheck %s --check-prefix=VALUE

// Invalid uses of ipu-eqsat. Zero tiles cannot price an op: an error at each function.

// expected-error@+1 {{ipu-eqsat: tiles and nodes must be at least 1, found tiles=0 nodes=10000}}
func.func @zero_tiles(%x: tensor<4x4xf16>) -> tensor<4x4xf16> {
  return %x : tensor<4x4xf16>
}

// An unknown option names the valid ones.
// OPTION: error: pass 'ipu-eqsat' has no option 'iteration'; did you mean 'iterations'? valid options: iterations, nodes, time-limit-ms, tiles

// A negative budget is not a u64.
// VALUE: error: invalid value '-5' for option 'time-limit-ms' of pass 'ipu-eqsat': expected u64
