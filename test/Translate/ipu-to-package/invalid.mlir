// Ops the tile lowering does not handle yet are refused with the op and the reason.
// RUN: not ipu-translate --ipu-to-package %s -o %t.ipuexe --tiles=64 2>&1 | FileCheck %s

// CHECK: ipu.cast: op 0 is not lowered to tiles yet
func.func @cast(%x: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %y = "ipu.cast"(%x) : (tensor<64x64xf16>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
