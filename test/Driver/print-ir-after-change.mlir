// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after-all --mlir-print-ir-after-change -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after=ipu-canonicalize,cse --mlir-print-ir-after-change -o /dev/null 2>&1 | FileCheck %s

// --mlir-print-ir-after-change: an after-dump only where the pass changed the IR. ipu-canonicalize
// folds @round_trip but finds nothing in @nothing_to_fold; cse changes nothing at all.

// CHECK-NOT: IR Dump
// CHECK: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) //----- //
// CHECK-NEXT: func.func @round_trip
// CHECK-NOT: IR Dump

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

func.func @nothing_to_fold(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
