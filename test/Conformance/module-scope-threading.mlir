// Checks --mlir-print-ir-module-scope against multi-threading: while threading
// is on, the pass manager refuses the option and the run fails; with
// -mlir-disable-threading, the IR dumps of a pass nested on func.func show the
// whole module, titled with the function the pass ran on. Stock also refuses
// the option under threading when no IR-printing flag, or no pass at all, is
// given.

// RUN: not %mlir_opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -pass-pipeline='builtin.module(func.func(cse))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADED
// RUN: not ipu-opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -pass-pipeline='builtin.module(func.func(cse))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=THREADED

// RUN: %mlir_opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -mlir-disable-threading -pass-pipeline='builtin.module(func.func(cse))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCOPE
// RUN: ipu-opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -mlir-disable-threading -pass-pipeline='builtin.module(func.func(cse))' -o /dev/null 2>&1 | FileCheck %s --check-prefix=SCOPE

// The message ends with a newline of its own, so stock prints an empty line
// after it: two lines on stderr in all.
// RUN: not %mlir_opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -cse -o /dev/null 2>&1 | count 2
// RUN: not ipu-opt %s --mlir-print-ir-module-scope --mlir-print-ir-after-all -cse -o /dev/null 2>&1 | count 2

// RUN: not %mlir_opt %s --mlir-print-ir-module-scope -cse 2>&1 | FileCheck %s --check-prefix=THREADED
// RUN: not ipu-opt %s --mlir-print-ir-module-scope -cse 2>&1 | FileCheck %s --check-prefix=THREADED
// RUN: not %mlir_opt %s --mlir-print-ir-module-scope 2>&1 | FileCheck %s --check-prefix=THREADED
// RUN: not ipu-opt %s --mlir-print-ir-module-scope 2>&1 | FileCheck %s --check-prefix=THREADED

// THREADED:     {{^}}<unknown>:0: error: IR print for module scope can't be setup on a pass-manager without disabling multi-threading first.
// THREADED-NOT: {{.}}

// SCOPE:      // -----// IR Dump After CSE (cse) ('func.func' operation: @first) //----- //
// SCOPE-NEXT: module {
// SCOPE-NEXT:   func.func @first()
// SCOPE:        func.func @second()
// SCOPE:      // -----// IR Dump After CSE (cse) ('func.func' operation: @second) //----- //
// SCOPE-NEXT: module {
// SCOPE-NEXT:   func.func @first()
// SCOPE:        func.func @second()

func.func @first() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
}

func.func @second() -> i32 {
  %c = arith.constant 2 : i32
  return %c : i32
}
