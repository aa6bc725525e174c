// RUN: ipu-opt %s --mlir-print-debuginfo | FileCheck %s
// RUN: ipu-opt %s -p 'builtin.module(ipu-canonicalize)' --mlir-print-debuginfo | FileCheck %s --check-prefix=FOLDED
// RUN: ipu-opt %s | FileCheck %s --check-prefix=NO-LOC
// RUN: cat %s | ipu-opt --mlir-print-debuginfo | FileCheck %s --check-prefix=STDIN

// --mlir-print-debuginfo: locations are printed, with this file's name, lines and columns; ops a
// pass creates keep the location of the op they replace.

// CHECK: "ipu.cast"(%{{.*}}) : (tensor<4xf16>) -> tensor<4xf32> loc(#[[CAST:loc[0-9]*]])
// CHECK: #[[CAST]] = loc("{{.*}}print-debuginfo.mlir":[[# @LINE + 12]]:8)

// FOLDED: "ipu.cast"(%{{.*}}) {scale = -2 : i32} : (tensor<4xf16>) -> tensor<4xf8E4M3FNUZ> loc(#[[OUTER:loc[0-9]*]])
// FOLDED: #[[OUTER]] = loc("{{.*}}print-debuginfo.mlir":[[# @LINE + 10]]:8)

// Standard input is named <stdin>, as in mlir-opt.
// STDIN: "ipu.cast"(%{{.*}}) : (tensor<4xf16>) -> tensor<4xf32> loc(#[[CAST:loc[0-9]*]])
// STDIN: #[[CAST]] = loc("<stdin>":[[# @LINE + 5]]:8)

// NO-LOC-NOT: loc(

func.func @quantize(%x: tensor<4xf16>) -> tensor<4xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) {scale = -2 : i32} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  return %1 : tensor<4xf8E4M3FNUZ>
}
