// Ops the tile lowering does not handle yet are refused with the op and the reason.
// RUN: not ipu-translate --ipu-to-package %s -o %t.ipuexe --tiles=64 2>&1 | FileCheck %s

// CHECK: 'ipu.cast' op has no operator plan: a cast at FP8 scale 3: the cast kernel reads and writes FP8 at scale 0
func.func @cast(%x: tensor<64x64xf16>) -> tensor<64x64xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<64x64xf16>) -> tensor<64x64xf8E4M3FNUZ>
  return %0 : tensor<64x64xf8E4M3FNUZ>
}
