// RUN: ipu-opt %s -split-input-file -pass-pipeline='builtin.module(ipu-canonicalize)' -mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s -split-input-file -pass-pipeline 'builtin.module(ipu-canonicalize)' -mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(ipu-canonicalize)' --mlir-print-op-generic | FileCheck %s
// RUN: ipu-opt %s -split-input-file -p 'builtin.module(ipu-canonicalize)' -mlir-print-op-generic -o %t && FileCheck %s --input-file=%t
// RUN: ipu-opt %s -split-input-file -p'builtin.module(ipu-canonicalize)' -mlir-print-op-generic -o%t.attached && FileCheck %s --input-file=%t.attached
// RUN: not ipu-opt %s -no-such-option 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Long options with a single dash, as mlir-opt spells them (`-split-input-file`,
// `-pass-pipeline=...` or with the value as the next argument), mean the same as with two;
// `-p` and `-o` take their value attached or separate. An unknown option is an error.

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

// UNKNOWN: error: unexpected argument '--no-such-option' found
