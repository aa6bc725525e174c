// RUN: ipu-opt %s --mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-canonicalize)' --mlir-print-op-generic --mlir-print-ir-after=ipu-canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=DUMP
// RUN: ipu-opt %s | FileCheck %s --check-prefix=CUSTOM

// --mlir-print-op-generic: every op in the generic form, in the output and in IR dumps.

// CHECK: "builtin.module"() ({
// CHECK-NEXT: "func.func"() <{function_type = (tensor<4xf16>) -> tensor<4xf32>, sym_name = "widen"}> ({
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4xf16>):
// CHECK-NEXT: %[[WIDE:.*]] = "ipu.cast"(%[[X]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: "func.return"(%[[WIDE]]) : (tensor<4xf32>) -> ()

// DUMP: IR Dump After IpuCanonicalize
// DUMP-NEXT: "builtin.module"() ({
// DUMP: "func.return"

// CUSTOM: module {
// CUSTOM-NEXT: func.func @widen
// CUSTOM: return

func.func @widen(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
