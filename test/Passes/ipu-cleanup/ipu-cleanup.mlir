// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-cleanup)' --dump-pass-pipeline 2>&1 | FileCheck %s --check-prefixes=PIPELINE,CHECK
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-cleanup{symbol-dce=false max-iterations=3})' --dump-pass-pipeline 2>&1 | FileCheck %s --check-prefixes=KEEP-PIPELINE,KEEP
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-cleanup{max-iterations=1})' 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-cleanup{symbol-dce=maybe})' 2>&1 | FileCheck %s --check-prefix=BAD-VALUE
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-cleanup{dce=1})' 2>&1 | FileCheck %s --check-prefix=BAD-OPTION

// The ipu-cleanup named pipeline: ipu-canonicalize (with its max-iterations), then upstream cse
// and canonicalize, then symbol-dce unless symbol-dce=false.

// PIPELINE: Pass Manager with 4 passes:
// PIPELINE-NEXT: builtin.module(
// PIPELINE-NEXT:   ipu-canonicalize{max-iterations=10 disable-patterns=},
// PIPELINE-NEXT:   cse,
// PIPELINE-NEXT:   canonicalize{{{.*}}},
// PIPELINE-NEXT:   symbol-dce
// PIPELINE-NEXT: )
// KEEP-PIPELINE: Pass Manager with 3 passes:
// KEEP-PIPELINE-NEXT: builtin.module(
// KEEP-PIPELINE-NEXT:   ipu-canonicalize{max-iterations=3 disable-patterns=},
// KEEP-PIPELINE-NEXT:   cse,
// KEEP-PIPELINE-NEXT:   canonicalize{{{.*}}}
// KEEP-PIPELINE-NEXT: )

// symbol-dce removes the unused private function; with symbol-dce=false it stays.
// CHECK-NOT: @unused
// KEEP: func.func private @unused
func.func private @unused(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}

// The cast round trip folds either way.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
// KEEP-LABEL: func.func @main
// KEEP-SAME: (%[[X:.*]]: tensor<4xf16>)
// KEEP-NEXT: return %[[X]]
func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// max-iterations reaches ipu-canonicalize.
// ONE: error: ipu-canonicalize did not converge in 1 iterations (raise max-iterations)

// Pipeline options are typed and checked like pass options.
// BAD-VALUE: error: invalid value 'maybe' for option 'symbol-dce' of pass 'ipu-cleanup': expected bool (use true, false, 1 or 0)
// BAD-OPTION: error: pass 'ipu-cleanup' has no option 'dce'; valid options: max-iterations, symbol-dce
