// Checks driver outputs other than the IR: --mlir-print-ir-tree-dir writes one
// file per dump, in a folder per op the pass ran on (nested like the IR), named
// `<pipeline position>_<pass argument>.mlir`; an unknown command-line option
// exits with status 1; --list-passes lists the upstream passes.

// RUN: rm -rf %t.stock %t.ipu
// RUN: %mlir_opt %s -pass-pipeline='builtin.module(cse,func.func(canonicalize),symbol-dce)' --mlir-print-ir-after-all --mlir-print-ir-before=cse --mlir-print-ir-tree-dir=%t.stock -o /dev/null 2>&1 | count 0
// RUN: ipu-opt %s -pass-pipeline='builtin.module(cse,func.func(canonicalize),symbol-dce)' --mlir-print-ir-after-all --mlir-print-ir-before=cse --mlir-print-ir-tree-dir=%t.ipu -o /dev/null 2>&1 | count 0
// RUN: ls %t.stock/builtin_module_no-symbol-name %t.stock/builtin_module_no-symbol-name/func_func_kept | FileCheck %s --check-prefix=FILES
// RUN: ls %t.ipu/builtin_module_no-symbol-name %t.ipu/builtin_module_no-symbol-name/func_func_kept | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --check-prefix=BEFORE-CSE --input-file=%t.stock/builtin_module_no-symbol-name/0_cse.mlir
// RUN: FileCheck %s --check-prefix=BEFORE-CSE --input-file=%t.ipu/builtin_module_no-symbol-name/0_cse.mlir
// RUN: FileCheck %s --check-prefix=CANON --input-file=%t.stock/builtin_module_no-symbol-name/func_func_kept/1_0_canonicalize.mlir
// RUN: FileCheck %s --check-prefix=CANON --input-file=%t.ipu/builtin_module_no-symbol-name/func_func_kept/1_0_canonicalize.mlir

// RUN: sh -c '%mlir_opt %s --no-such-option >/dev/null 2>&1; test $? -eq 1'
// RUN: sh -c 'ipu-opt %s --no-such-option >/dev/null 2>&1; test $? -eq 1'

// ipu-opt lists its own passes as well.
// RUN: ipu-opt --list-passes | FileCheck %s --check-prefix=LIST-IPU
// RUN: %mlir_opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: ipu-opt --list-passes | FileCheck %s --check-prefix=LIST

// FILES:      builtin_module_no-symbol-name:
// FILES-NEXT: 0_cse.mlir
// FILES-NEXT: 1_cse.mlir
// FILES-NEXT: 2_symbol-dce.mlir
// FILES-NEXT: func_func_dropped
// FILES-NEXT: func_func_kept
// FILES-EMPTY:
// FILES-NEXT: builtin_module_no-symbol-name/func_func_kept:
// FILES-NEXT: 1_0_canonicalize.mlir
// FILES-NOT:  {{.}}

// BEFORE-CSE:      // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-CSE-NEXT: module {

// CANON:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// CANON-NEXT: func.func @kept() -> i32 {
// CANON-NEXT:   %[[C:.*]] = arith.constant 12 : i32
// CANON-NEXT:   return %[[C]] : i32

// LIST:     {{^}}Passes:
// LIST-DAG: {{^  --canonicalize +- +Canonicalize operations$}}
// LIST-DAG: {{^  --cse +- +Eliminate common sub-expressions$}}
// LIST-DAG: {{^  --symbol-dce +- +Eliminate dead symbols$}}

// LIST-IPU: {{^  (--)?ipu-canonicalize }}

func.func private @dropped() {
  return
}

func.func @kept() -> i32 {
  %c3 = arith.constant 3 : i32
  %c4 = arith.constant 4 : i32
  %0 = arith.muli %c3, %c4 : i32
  return %0 : i32
}
