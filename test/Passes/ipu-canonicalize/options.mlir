// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s --check-prefix=DEFAULT
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize{max-iterations=2}))' | FileCheck %s --check-prefix=DEFAULT
// RUN: not ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize{max-iterations=1}))' 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize{disable-patterns=fold-cast-of-cast}))' | FileCheck %s --check-prefix=NO-CHAIN
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize{disable-patterns=fold-cast-of-cast,fold-identity-cast max-iterations=4}))' | FileCheck %s --check-prefix=NO-CAST
// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize{disable-patterns="fold-cast-of-cast,fold-identity-cast"}))' | FileCheck %s --check-prefix=NO-CAST

// The options of ipu-canonicalize: max-iterations bounds the greedy driver (it needs one sweep
// that changes nothing to converge), disable-patterns leaves patterns out by name (a list,
// plain or quoted).

// Three casts fold in one sweep of the driver; a second sweep confirms nothing is left.
// DEFAULT-LABEL: func.func @three_casts
// DEFAULT-SAME: (%[[X:.*]]: tensor<4xf16>)
// DEFAULT-NEXT: return %[[X]]
// With one iteration the driver cannot confirm convergence, and the pass fails at the function.
// ONE: options.mlir:[[# @LINE + 9]]:1: error: ipu-canonicalize did not converge in 1 iterations (raise max-iterations)
// Without fold-cast-of-cast, only the identity cast in the middle goes.
// NO-CHAIN-LABEL: func.func @three_casts
// NO-CHAIN: %[[WIDE:.*]] = "ipu.cast"(%{{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
// NO-CHAIN-NEXT: %[[NARROW:.*]] = "ipu.cast"(%[[WIDE]]) : (tensor<4xf32>) -> tensor<4xf16>
// NO-CHAIN-NEXT: return %[[NARROW]]
// Without both cast patterns, nothing changes.
// NO-CAST-LABEL: func.func @three_casts
// NO-CAST-COUNT-3: "ipu.cast"
func.func @three_casts(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ipu.cast"(%1) : (tensor<4xf32>) -> tensor<4xf16>
  return %2 : tensor<4xf16>
}

// Disabling cast patterns leaves the rearrange patterns on.
// DEFAULT-LABEL: func.func @double_transpose
// DEFAULT-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// DEFAULT-NEXT: return %[[X]]
// NO-CAST-LABEL: func.func @double_transpose
// NO-CAST-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// NO-CAST-NEXT: return %[[X]]
func.func @double_transpose(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %1 = "ipu.rearrange"(%0) {permutation = array<i64: 1, 0>} : (tensor<8x4xf16>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}
