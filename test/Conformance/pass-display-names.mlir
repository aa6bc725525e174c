// Checks the titles of the IR dumps printed by --mlir-print-ir-after-all and
// --mlir-print-ir-before: each names the pass by its display name followed by
// its argument in parentheses. The inliner runs the canonicalizer on each
// callable it visits, and those nested runs are dumped too (function scope).

// RUN: %mlir_opt %s -mlir-disable-threading --mlir-print-ir-after-all -cse -canonicalize -inline -sccp -symbol-dce -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: ipu-opt %s -mlir-disable-threading --mlir-print-ir-after-all -cse -canonicalize -inline -sccp -symbol-dce -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER

// RUN: %mlir_opt %s -mlir-disable-threading --mlir-print-ir-before=cse -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: ipu-opt %s -mlir-disable-threading --mlir-print-ir-before=cse -cse -canonicalize -o /dev/null 2>&1 | FileCheck %s --check-prefix=BEFORE

// AFTER:      // -----// IR Dump After CSE (cse) //----- //
// AFTER-NEXT: module {
// AFTER:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-NEXT: module {
// AFTER:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-NEXT: func.func private @callee(
// AFTER:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-NEXT: func.func @caller()
// AFTER:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-NEXT: func.func @caller()
// AFTER:      // -----// IR Dump After Inliner (inline) //----- //
// AFTER-NEXT: module {
// AFTER:      // -----// IR Dump After SCCP (sccp) //----- //
// AFTER-NEXT: module {
// AFTER:      // -----// IR Dump After SymbolDCE (symbol-dce) //----- //
// AFTER-NEXT: module {
// AFTER-NEXT:   func.func @caller() -> i32 {
// AFTER-NEXT:     %[[C:.*]] = arith.constant 6 : i32
// AFTER-NEXT:     return %[[C]] : i32
// AFTER-NOT:  IR Dump

// Only cse is dumped, and only before it runs.
// BEFORE-NOT:  IR Dump
// BEFORE:      // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-NEXT: module {
// BEFORE-NEXT:   func.func private @callee(
// BEFORE-NOT:  IR Dump

func.func private @callee(%v: i32) -> i32 {
  %0 = arith.addi %v, %v : i32
  return %0 : i32
}

func.func @caller() -> i32 {
  %c3 = arith.constant 3 : i32
  %0 = call @callee(%c3) : (i32) -> i32
  return %0 : i32
}
