// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-after=ipu-canonicalize --mlir-print-ir-module-scope -mlir-disable-threading -o /dev/null 2>&1 | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-after-all --mlir-print-ir-module-scope --mlir-disable-threading=true -o /dev/null 2>&1 | FileCheck %s
// Module scope needs one thread, as in mlir-opt: with threading on it is an error.
// RUN: not ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-after-all --mlir-print-ir-module-scope -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADS
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize))' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNCTION

// --mlir-print-ir-module-scope: a pass on a function prints the whole module (both functions)
// instead of only the function it ran on, and the title names that function (as MLIR's IR
// printer does; without module scope the title names no op).

// CHECK: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) ('func.func' operation: @{{first|second}}) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @first
// CHECK: func.func @second
// CHECK: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) ('func.func' operation: @{{first|second}}) //----- //
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @first
// CHECK: func.func @second

// THREADS: error: IR print for module scope can't be setup on a pass-manager without disabling multi-threading first.

// FUNCTION: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) //----- //
// FUNCTION-NEXT: func.func @{{first|second}}
// FUNCTION-NOT: module {

func.func @first(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

func.func @second(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}
