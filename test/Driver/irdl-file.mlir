// RUN: ipu-opt %s --irdl-file=%S/Inputs/probe.irdl.mlir | FileCheck %s
// RUN: ipu-opt %s -irdl-file=%S/Inputs/probe.irdl.mlir -p 'builtin.module(ipu-canonicalize)' | FileCheck %s
// RUN: ipu-opt %S/Inputs/probe-invalid.mlir --irdl-file=%S/Inputs/probe.irdl.mlir --verify-diagnostics
// RUN: not ipu-opt %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not ipu-opt %s --irdl-file=%S/Inputs/missing.irdl.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: ipu-opt %s --irdl-file=%irdl_ipu --irdl-file=%S/Inputs/probe.irdl.mlir | FileCheck %s
// RUN: not ipu-opt %s --irdl-file=%S/Inputs/probe.irdl.mlir --irdl-file=%S/Inputs/probe.irdl.mlir 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not ipu-opt %s --irdl-file=%S/Inputs/arith.irdl.mlir 2>&1 | FileCheck %s --check-prefix=UPSTREAM

// --irdl-file: load another dialect declared in IRDL next to ipu; its ops parse, verify against
// the declaration (constraints and required attributes; Inputs/probe-invalid.mlir), and mix
// with ipu ops and passes.

// CHECK-LABEL: func.func @scaled_then_cast
// CHECK: %[[S:.*]] = "probe.scale"(%{{.*}}) {factor = 2 : i64} : (tensor<4xf16>) -> tensor<4xf16>
// CHECK: "ipu.cast"(%[[S]])
// UNKNOWN: irdl-file.mlir:[[# @LINE + 2]]:21: error: operation being parsed with an unregistered dialect
func.func @scaled_then_cast(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "probe.scale"(%x) {factor = 2 : i64} : (tensor<4xf16>) -> tensor<4xf16>
  %1 = "ipu.cast"(%0) : (tensor<4xf16>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// MISSING: ipu-opt: error: IRDL file {{.*}}missing.irdl.mlir: No such file or directory

// A dialect cannot be declared twice (MLIR would abort): not by two files, not over a dialect
// ipu-opt already has. Our own ipu declaration, which mlir-opt needs, is accepted as a no-op.
// TWICE: ipu-opt: error: IRDL file {{.*}}probe.irdl.mlir declares dialect 'probe', which is already loaded (built in, or declared by an earlier --irdl-file)
// UPSTREAM: ipu-opt: error: IRDL file {{.*}}arith.irdl.mlir declares dialect 'arith', which is already loaded
