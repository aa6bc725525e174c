// RUN: rm -rf %t && mkdir -p %t
// RUN: env -u RUST_LOG ipu-opt %s -p 'builtin.module(func.func(ipu-canonicalize), cse)' --mlir-print-ir-after-all --mlir-print-ir-before=cse --mlir-print-ir-tree-dir=%t/tree -o /dev/null 2>&1 | count 0
// RUN: ls %t/tree/builtin_module_no-symbol-name %t/tree/builtin_module_no-symbol-name/func_func_round_trip | FileCheck %s --check-prefix=FILES
// RUN: FileCheck %s --input-file=%t/tree/builtin_module_no-symbol-name/func_func_round_trip/0_0_ipu-canonicalize.mlir --check-prefix=FOLDED

// --mlir-print-ir-tree-dir: the dumps go to files (nothing on stderr), one folder per op the
// pass ran on, nested like the IR, each file named by the pass's position in the pipeline and
// its argument, as MLIR's IR printer names them (here: the before- and after-dump of cse, and
// the after-dump of ipu-canonicalize nested under func.func, element 0 of element 0).

// FILES: builtin_module_no-symbol-name:
// FILES-NEXT: 1_cse.mlir
// FILES-NEXT: 2_cse.mlir
// FILES-NEXT: func_func_round_trip
// FILES: builtin_module_no-symbol-name/func_func_round_trip:
// FILES-NEXT: 0_0_ipu-canonicalize.mlir

// FOLDED: func.func @round_trip(%[[X:.*]]: tensor<4xf16>) -> tensor<4xf16> {
// FOLDED-NEXT: return %[[X]]

func.func @round_trip(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
