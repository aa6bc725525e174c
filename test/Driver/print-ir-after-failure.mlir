// RUN: not ipu-opt %s -p 'builtin.module(cse, ipu-canonicalize{max-iterations=1})' --mlir-print-ir-after-failure -o /dev/null 2>&1 | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(cse, ipu-canonicalize{max-iterations=1})' --mlir-print-ir-after-all --mlir-print-ir-after-failure -o /dev/null 2>&1 | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(cse, ipu-canonicalize{max-iterations=1})' --mlir-print-ir-after=cse,ipu-canonicalize --mlir-print-ir-after-failure -o /dev/null 2>&1 | FileCheck %s
// RUN: not ipu-opt %s -p 'builtin.module(cse, ipu-canonicalize{max-iterations=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=QUIET

// --mlir-print-ir-after-failure: the IR as the failing pass left it, after that pass only (cse,
// which succeeded, is not dumped, even when -after-all or -after=cse ask for it: as in mlir-opt,
// the flag means "after a pass only if it failed"). ipu-canonicalize with one iteration folds the casts but
// cannot confirm convergence, so it fails with the fold done.

// CHECK-NOT: IR Dump
// CHECK: // -----// IR Dump After IpuCanonicalize Failed (ipu-canonicalize) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @round_trip(%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16> {
// CHECK-NEXT: return %[[X]]
// CHECK-NOT: IR Dump
// CHECK: error: ipu-canonicalize did not converge in 1 iterations (raise max-iterations)

// QUIET-NOT: IR Dump
// QUIET: error: ipu-canonicalize did not converge

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
