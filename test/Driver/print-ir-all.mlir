// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-before-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' -mlir-print-ir-after-all -mlir-timing --mlir-print-ir-before=cse -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after-all --mlir-timing -o /dev/null 2>&1 | grep "IR Dump" | count 2

// --mlir-print-ir-before-all / --mlir-print-ir-after-all: the IR around every pass of the
// pipeline, and only those: the driver's own helpers (timing markers, the printers of
// --mlir-print-ir-before=) never show up.

// BEFORE: // -----// IR Dump Before IpuCanonicalize (ipu-canonicalize) //----- //
// BEFORE-NEXT: func.func @round_trip
// BEFORE-NEXT: "ipu.cast"
// BEFORE: // -----// IR Dump Before {{.*}} (cse) //----- //
// BEFORE-NOT: IR Dump

// AFTER-NOT: IR Dump Before IpuCanonicalize
// AFTER: // -----// IR Dump After IpuCanonicalize (ipu-canonicalize) //----- //
// AFTER-NEXT: func.func @round_trip(%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16> {
// AFTER-NEXT: return %[[X]]
// AFTER: // -----// IR Dump After {{.*}} (cse) //----- //
// AFTER-NOT: IR Dump After
// AFTER-NOT: Timing
// AFTER-NOT: IRPrinter

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
