// RUN: ipu-opt %s --emit-bytecode | %mlir_opt --irdl-file=%irdl_ipu | FileCheck %s
// RUN: ipu-opt %s --emit-bytecode -p 'builtin.module(ipu-canonicalize)' | ipu-opt | FileCheck %s --check-prefix=FOLDED
// RUN: ipu-opt %s --emit-bytecode -o %t.mlirbc && ipu-opt %t.mlirbc | FileCheck %s
// RUN: ipu-opt %s --emit-bytecode | not FileCheck %s --check-prefix=NOT-TEXT

// --emit-bytecode: the output is MLIR bytecode, which stock mlir-opt (with our IRDL file) and
// ipu-opt itself read back; pass results are in it too.

// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0 : i64>>)
// CHECK: %[[WIDE:.*]] = "ipu.cast"(%[[X]]) : (tensor<4x8xf16, #ipu.format<{{.*}}>>) -> tensor<4x8xf32>
// CHECK: "ipu.cast"(%[[WIDE]]) : (tensor<4x8xf32>) -> tensor<4x8xf16>

// FOLDED-LABEL: func.func @round_trip
// FOLDED-NOT: "ipu.cast"(%{{.*}}) : (tensor<4x8xf32>)

// The bytecode is not text.
// NOT-TEXT: func.func
func.func @round_trip(%x: tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>) -> tensor<4x8xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>) -> tensor<4x8xf32>
  %1 = "ipu.cast"(%0) : (tensor<4x8xf32>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}
