// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s

// fold-identity-cast: cast(x : T -> T, scale 0) => x.

// A cast to its own type is removed.
// CHECK-LABEL: func.func @same_type
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]] : tensor<4xf16>
func.func @same_type(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// An explicit zero scale is no scale.
// CHECK-LABEL: func.func @explicit_zero_scale
// CHECK-SAME: (%[[X:.*]]: tensor<4xf8E5M2FNUZ>)
// CHECK-NEXT: return %[[X]]
func.func @explicit_zero_scale(%x: tensor<4xf8E5M2FNUZ>) -> tensor<4xf8E5M2FNUZ> {
  %0 = "ipu.cast"(%x) {scale = 0 : i32} : (tensor<4xf8E5M2FNUZ>) -> tensor<4xf8E5M2FNUZ>
  return %0 : tensor<4xf8E5M2FNUZ>
}

// Same type including the format encoding.
// CHECK-LABEL: func.func @same_formatted_type
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16, #ipu.format<{{.*}}>>)
// CHECK-NEXT: return %[[X]]
func.func @same_formatted_type(%x: tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "interleaved", 0>>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "interleaved", 0>> {
  %0 = "ipu.cast"(%x) : (tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "interleaved", 0>>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "interleaved", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "interleaved", 0>>
}

// A rescale of FP8 values changes them: it stays.
// CHECK-LABEL: func.func @rescale_stays
// CHECK: "ipu.cast"(%{{.*}}) {scale = 2 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E4M3FNUZ>
func.func @rescale_stays(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%x) {scale = 2 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E4M3FNUZ>
  return %0 : tensor<4xf8E4M3FNUZ>
}

// A real conversion stays.
// CHECK-LABEL: func.func @conversion_stays
// CHECK: "ipu.cast"(%{{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
func.func @conversion_stays(%x: tensor<4xf16>) -> tensor<4xf32> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
