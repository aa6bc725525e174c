// RUN: ipu-opt %s --pass-pipeline='builtin.module(func.func(ipu-canonicalize))' | FileCheck %s

// fold-cast-of-cast: cast(cast(x : A -> B) : B -> C) => cast(x : A -> C) when A -> B is exact,
// and => x when also C = A (with the same FP8 scale).

// A widening round trip is the identity.
// CHECK-LABEL: func.func @widen_then_narrow_back
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]] : tensor<4xf16>
func.func @widen_then_narrow_back(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// f32 -> f16 rounds, so f32 -> f16 -> f32 is not the identity and must stay.
// CHECK-LABEL: func.func @inexact_round_trip_stays
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK: %[[NARROW:.*]] = "ipu.cast"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf16>
// CHECK: %[[WIDE:.*]] = "ipu.cast"(%[[NARROW]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK: return %[[WIDE]]
func.func @inexact_round_trip_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "ipu.cast"(%x) : (tensor<4xf32>) -> tensor<4xf16>
  %1 = "ipu.cast"(%0) : (tensor<4xf16>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// An exact first step folds into one cast; the FP8 source keeps its scale.
// CHECK-LABEL: func.func @scaled_fp8_through_f32
// CHECK-SAME: (%[[X:.*]]: tensor<4xf8E4M3FNUZ>)
// CHECK-NEXT: %[[CAST:.*]] = "ipu.cast"(%[[X]]) {scale = 3 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf16>
// CHECK-NEXT: return %[[CAST]]
func.func @scaled_fp8_through_f32(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}

// Quantizing through f32: the FP8 result keeps the outer cast's scale.
// CHECK-LABEL: func.func @quantize_through_f32
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[CAST:.*]] = "ipu.cast"(%[[X]]) {scale = -2 : i32} : (tensor<4xf16>) -> tensor<4xf8E5M2FNUZ>
// CHECK-NEXT: return %[[CAST]]
func.func @quantize_through_f32(%x: tensor<4xf16>) -> tensor<4xf8E5M2FNUZ> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) {scale = -2 : i32} : (tensor<4xf32>) -> tensor<4xf8E5M2FNUZ>
  return %1 : tensor<4xf8E5M2FNUZ>
}

// A scaled FP8 value may not fit f16 exactly, so the chain through f16 stays.
// CHECK-LABEL: func.func @scaled_fp8_through_f16_stays
// CHECK: "ipu.cast"(%{{.*}}) {scale = 3 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf16>
// CHECK: "ipu.cast"(%{{.*}}) : (tensor<4xf16>) -> tensor<4xf32>
func.func @scaled_fp8_through_f16_stays(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xf32> {
  %0 = "ipu.cast"(%x) {scale = 3 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf16>
  %1 = "ipu.cast"(%0) : (tensor<4xf16>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// Dequantize and requantize with the same scale is the identity.
// CHECK-LABEL: func.func @fp8_round_trip_same_scale
// CHECK-SAME: (%[[X:.*]]: tensor<4xf8E4M3FNUZ>)
// CHECK-NEXT: return %[[X]]
func.func @fp8_round_trip_same_scale(%x: tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E4M3FNUZ> {
  %0 = "ipu.cast"(%x) {scale = 2 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) {scale = 2 : i32} : (tensor<4xf32>) -> tensor<4xf8E4M3FNUZ>
  return %1 : tensor<4xf8E4M3FNUZ>
}

// An intermediate cast with another use stays for that use; the chain still folds.
// CHECK-LABEL: func.func @shared_intermediate_stays
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[WIDE:.*]] = "ipu.cast"(%[[X]]) : (tensor<4xf16>) -> tensor<4xf32>
// CHECK-NEXT: return %[[X]], %[[WIDE]]
func.func @shared_intermediate_stays(%x: tensor<4xf16>) -> (tensor<4xf16>, tensor<4xf32>) {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf16>
  return %1, %0 : tensor<4xf16>, tensor<4xf32>
}

// Chains of three fold completely (with fold-identity-cast removing the middle one).
// CHECK-LABEL: func.func @chain_of_three
// CHECK-SAME: (%[[X:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[X]]
func.func @chain_of_three(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) : (tensor<4xf16>) -> tensor<4xf32>
  %1 = "ipu.cast"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "ipu.cast"(%1) : (tensor<4xf32>) -> tensor<4xf16>
  return %2 : tensor<4xf16>
}
