// Ops the tile lowering does not handle yet are refused with the op and the reason.
// RUN: not ipu-translate --ipu-to-package %s -o %t.ipuexe --tiles=64 2>&1 | FileCheck %s

// CHECK: ipu.softmax: op 0 is not lowered to tiles yet
func.func @softmax(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %y = "ipu.softmax"(%x) : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %y : tensor<64x64xf16>
}
