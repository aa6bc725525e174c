// RUN: ipu-opt %s -split-input-file -pass-pipeline='builtin.module(ipu-canonicalize)' -mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s -split-input-file -pass-pipeline 'builtin.module(ipu-canonicalize)' -mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' --mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s -split-input-file -p 'builtin.module(ipu-canonicalize)' -mlir-print-op-generic -o %t && FileCheck %s --input-file=%t
// RUN: ipu-opt %s -split-input-file -p='builtin.module(ipu-canonicalize)' -mlir-print-op-generic -o=%t.equals && FileCheck %s --input-file=%t.equals
// RUN: not ipu-opt %s -no-such-option 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// A value is never glued to -o or -p (as in mlir-opt): an unknown option starting with o or p
// is an unknown option, not an output file or a pipeline.
// RUN: rm -rf %t.d && mkdir %t.d && cd %t.d && not ipu-opt %s -output-split-markr=XYZ 2>&1 | FileCheck %s --check-prefix=NOT-OUTPUT
// RUN: ls %t.d | count 0
// RUN: not ipu-opt %s -oout.mlir 2>&1 | FileCheck %s --check-prefix=GLUED
// RUN: ipu-opt %s -split-input-file -output-split-marker=XYZ | FileCheck %s --check-prefix=MARKER
// Boolean flags take LLVM's values.
// RUN: ipu-opt %s -split-input-file -mlir-disable-threading=true --allow-unregistered-dialect=1 --mlir-print-op-generic=false | FileCheck %s --check-prefix=CUSTOM
// RUN: not ipu-opt %s --mlir-print-op-generic=maybe 2>&1 | FileCheck %s --check-prefix=BAD-BOOL
// Command-line errors exit with 1, as mlir-opt's.
// RUN: sh -c 'ipu-opt %s -no-such-option 2>/dev/null; test $? -eq 1'

// Long options with a single dash, as mlir-opt spells them (`-split-input-file`,
// `-pass-pipeline=...` or with the value as the next argument), mean the same as with two;
// `-p` and `-o` take their value after `=` or as the next argument. An unknown option is an
// error.

// CHECK: "func.func"() <{function_type = (tensor<4xf16>) -> tensor<4xf16>, sym_name = "first"}>
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<4xf16>):
// CHECK-NEXT: "func.return"(%[[X]])
// CHECK: // -----
// CHECK: sym_name = "second"
func.func @first(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @second() {
  return
}

// UNKNOWN: ipu-opt: Unknown command line argument '-no-such-option'.  Try: 'ipu-opt --help'
// NOT-OUTPUT: Unknown command line argument '-output-split-markr=XYZ'
// NOT-OUTPUT-NEXT: Did you mean '--output-split-marker'?
// GLUED: Unknown command line argument '-oout.mlir'
// MARKER: func.func @first
// MARKER: XYZ
// MARKER-NEXT: module {
// CUSTOM: func.func @first
// BAD-BOOL: for the --mlir-print-op-generic option: 'maybe' is invalid value for boolean argument! Try 0 or 1
