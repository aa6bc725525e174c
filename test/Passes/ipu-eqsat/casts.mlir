// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-eqsat))' | FileCheck %s

// Cast pairs: an exact round trip is removed, an inexact one stays, and an FP8 round trip is
// the identity only with the same scale both ways.

// CHECK-LABEL: func.func @widen_then_narrow_back
// CHECK-SAME: (%[[X:.*]]: tensor<64x64xf16>)
// CHECK-NEXT: %[[G:.*]] = "ipu.gelu"(%[[X]])
// CHECK-NEXT: return %[[G]]
func.func @widen_then_narrow_back(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.cast"(%x) : (tensor<64x64xf16>) -> tensor<64x64xf32>
  %1 = "ipu.cast"(%0) : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %2 = "ipu.gelu"(%1) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %2 : tensor<64x64xf16>
}

// f32 -> f16 rounds: the pair stays.
// CHECK-LABEL: func.func @narrow_then_widen_stays
// CHECK: "ipu.cast"
// CHECK-NEXT: "ipu.cast"
// CHECK-NEXT: return
func.func @narrow_then_widen_stays(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %0 = "ipu.cast"(%x) : (tensor<64x64xf32>) -> tensor<64x64xf16>
  %1 = "ipu.cast"(%0) : (tensor<64x64xf16>) -> tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}

// CHECK-LABEL: func.func @fp8_same_scale
// CHECK-SAME: (%[[Q:.*]]: tensor<64x64xf8E4M3FNUZ>)
// CHECK-NEXT: return %[[Q]]
func.func @fp8_same_scale(%q: tensor<64x64xf8E4M3FNUZ>) -> tensor<64x64xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%q) {scale = 2 : i32} : (tensor<64x64xf8E4M3FNUZ>) -> tensor<64x64xf32>
  %1 = "ipu.cast"(%0) {scale = 2 : i32} : (tensor<64x64xf32>) -> tensor<64x64xf8E4M3FNUZ>
  return %1 : tensor<64x64xf8E4M3FNUZ>
}

// CHECK-LABEL: func.func @fp8_other_scale_stays
// CHECK: "ipu.cast"(%{{.*}}) {scale = 2 : i32}
// CHECK-NEXT: "ipu.cast"(%{{.*}}) {scale = 1 : i32}
func.func @fp8_other_scale_stays(%q: tensor<64x64xf8E4M3FNUZ>) -> tensor<64x64xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%q) {scale = 2 : i32} : (tensor<64x64xf8E4M3FNUZ>) -> tensor<64x64xf32>
  %1 = "ipu.cast"(%0) {scale = 1 : i32} : (tensor<64x64xf32>) -> tensor<64x64xf8E4M3FNUZ>
  return %1 : tensor<64x64xf8E4M3FNUZ>
}
