// The pass's option and its errors.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-fold-add-zero{max-iterations=2})' | FileCheck %s
// One sweep rewrites, a second finds nothing more: one alone does not converge.
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-fold-add-zero{max-iterations=1})' 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(ipu-fold-add-zero{max-iteration=3})' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: ipu-opt --list-passes | FileCheck %s --check-prefix=LIST

// LIMIT: error: ipu-fold-add-zero did not converge in 1 iterations (raise max-iterations)
// OPTION: error: pass 'ipu-fold-add-zero' has no option 'max-iteration'
// LIST: ipu-fold-add-zero  -  Drop ipu.add(x, zeros) when the result has x's type
// LIST-NEXT: max-iterations=<u32>  (default: 10)  -  Upper bound on greedy driver iterations over the IR.

// Two adds of zeros in a chain fold in one sweep.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: return %[[X]]
func.func @chain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %0 = "ipu.add"(%x, %z) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = "ipu.add"(%z, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
