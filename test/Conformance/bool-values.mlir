// Checks that boolean options take LLVM's spellings of a value after `=`
// (true/false, 1/0, True/FALSE, ...), with one or two leading dashes, and that
// any other value is rejected with LLVM's message.

// RUN: %mlir_opt %s -mlir-disable-threading=true --allow-unregistered-dialect=1 --mlir-print-op-generic=false | FileCheck %s --check-prefix=CUSTOM
// RUN: ipu-opt %s -mlir-disable-threading=true --allow-unregistered-dialect=1 --mlir-print-op-generic=false | FileCheck %s --check-prefix=CUSTOM
// RUN: %mlir_opt %s --allow-unregistered-dialect=True --mlir-print-op-generic=FALSE | FileCheck %s --check-prefix=CUSTOM
// RUN: ipu-opt %s --allow-unregistered-dialect=True --mlir-print-op-generic=FALSE | FileCheck %s --check-prefix=CUSTOM

// RUN: %mlir_opt %s --allow-unregistered-dialect=1 --mlir-print-op-generic=true | FileCheck %s --check-prefix=GENERIC
// RUN: ipu-opt %s --allow-unregistered-dialect=1 --mlir-print-op-generic=true | FileCheck %s --check-prefix=GENERIC

// `=0` really turns the option off: the unregistered op is rejected.
// RUN: not %mlir_opt %s --allow-unregistered-dialect=0 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: not ipu-opt %s --allow-unregistered-dialect=0 2>&1 | FileCheck %s --check-prefix=OFF

// RUN: not %mlir_opt %s --allow-unregistered-dialect --mlir-print-op-generic=maybe 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not ipu-opt %s --allow-unregistered-dialect --mlir-print-op-generic=maybe 2>&1 | FileCheck %s --check-prefix=BAD

// CUSTOM:      module {
// CUSTOM-NEXT:   func.func @f(%[[A:.*]]: i32) -> i32 {
// CUSTOM-NEXT:     %[[R:.*]] = "x.opaque"(%[[A]]) : (i32) -> i32
// CUSTOM-NEXT:     return %[[R]] : i32

// GENERIC:      "builtin.module"() ({
// GENERIC-NEXT:   "func.func"() <{function_type = (i32) -> i32, sym_name = "f"}> ({
// GENERIC-NEXT:   ^bb0(%[[A:.*]]: i32):
// GENERIC-NEXT:     %[[R:.*]] = "x.opaque"(%[[A]]) : (i32) -> i32
// GENERIC-NEXT:     "func.return"(%[[R]]) : (i32) -> ()
// GENERIC-NEXT:   }) : () -> ()
// GENERIC-NEXT: }) : () -> ()

// OFF: error: operation being parsed with an unregistered dialect

// BAD: for the --mlir-print-op-generic option: 'maybe' is invalid value for boolean argument! Try 0 or 1

func.func @f(%a: i32) -> i32 {
  %0 = "x.opaque"(%a) : (i32) -> i32
  return %0 : i32
}
