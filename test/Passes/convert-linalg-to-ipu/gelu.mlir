// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s --check-prefix=NEAR
// RUN: sed -n '1,/^\/\/ Near miss/p' %s | ipu-opt - --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s

// GeLU as frontends emit it: one linalg.generic whose body holds the exact form
// 0.5 x (1 + erf(x / sqrt 2)) or the tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// or the same as named elementwise ops, becomes ipu.gelu.

#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @gelu_erf_generic
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @gelu_erf_generic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %sqrt2 = arith.constant 1.41421354 : f32
    %s = arith.divf %in, %sqrt2 : f32
    %erf = math.erf %s : f32
    %p = arith.addf %one, %erf : f32
    %h = arith.mulf %half, %p : f32
    %g = arith.mulf %in, %h : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// CHECK-LABEL: func.func @gelu_tanh_generic
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) {approximate = "tanh"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @gelu_tanh_generic(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.044715 : f32
    %k = arith.constant 0.797884583 : f32
    %x2 = arith.mulf %in, %in : f32
    %x3 = arith.mulf %x2, %in : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %inner = arith.addf %in, %cx3 : f32
    %arg = arith.mulf %k, %inner : f32
    %t = math.tanh %arg : f32
    %p = arith.addf %t, %one : f32
    %hx = arith.mulf %in, %half : f32
    %g = arith.mulf %hx, %p : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// The tanh form with x^3 as math.powf.
// CHECK-LABEL: func.func @gelu_tanh_powf
// CHECK-NEXT: "ipu.gelu"(%{{.*}}) {approximate = "tanh"}
// CHECK-NEXT: return
func.func @gelu_tanh_powf(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %three = arith.constant 3.0 : f32
    %c = arith.constant 0.044715 : f32
    %k = arith.constant 0.797884583 : f32
    %x3 = math.powf %in, %three : f32
    %cx3 = arith.mulf %x3, %c : f32
    %inner = arith.addf %cx3, %in : f32
    %arg = arith.mulf %inner, %k : f32
    %t = math.tanh %arg : f32
    %p = arith.addf %t, %one : f32
    %hp = arith.mulf %p, %half : f32
    %g = arith.mulf %hp, %in : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The named-op form (splat constants, linalg.erf).
// CHECK-LABEL: func.func @gelu_erf_named
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.gelu"(%[[X]]) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @gelu_erf_named(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %rsqrt2 = arith.constant dense<0.707106769> : tensor<1x4x8xf32>
  %half = arith.constant dense<0.5> : tensor<1x4x8xf32>
  %one = arith.constant dense<1.0> : tensor<1x4x8xf32>
  %e = tensor.empty() : tensor<1x4x8xf32>
  %s = linalg.mul ins(%x, %rsqrt2 : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %erf = linalg.erf ins(%s : tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %p = linalg.add ins(%erf, %one : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %h = linalg.mul ins(%x, %half : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  %g = linalg.mul ins(%h, %p : tensor<1x4x8xf32>, tensor<1x4x8xf32>) outs(%e : tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
  return %g : tensor<1x4x8xf32>
}

// -----

// Near miss: erf(x) without the 1/sqrt(2) scale is not GeLU: it stays a general map.
// NEAR-LABEL: func.func @gelu_missing_scale
// NEAR-NOT: ipu.gelu
// NEAR: "ipu.map"(%arg0) {body = @[[BODY1:ipu_map_[0-9a-f]+]]}
// NEAR: func.func private @[[BODY1]](%arg0: f32) -> f32
// NEAR: math.erf

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @gelu_missing_scale(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %erf = math.erf %in : f32
    %p = arith.addf %one, %erf : f32
    %h = arith.mulf %half, %p : f32
    %g = arith.mulf %in, %h : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Near miss: the tanh form with the wrong cubic coefficient (0.44715): a general map.
// NEAR-LABEL: func.func @gelu_tanh_wrong_coefficient
// NEAR-NOT: ipu.gelu
// NEAR: "ipu.map"(%arg0) {body = @[[BODY2:ipu_map_[0-9a-f]+]]}
// NEAR: func.func private @[[BODY2]](%arg0: f32) -> f32
// NEAR: arith.constant 4.471500e-01 : f32
// NEAR: math.tanh

#id = affine_map<(d0, d1) -> (d0, d1)>

func.func @gelu_tanh_wrong_coefficient(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %one = arith.constant 1.0 : f32
    %c = arith.constant 0.44715 : f32
    %k = arith.constant 0.797884583 : f32
    %x2 = arith.mulf %in, %in : f32
    %x3 = arith.mulf %x2, %in : f32
    %cx3 = arith.mulf %c, %x3 : f32
    %inner = arith.addf %in, %cx3 : f32
    %arg = arith.mulf %k, %inner : f32
    %t = math.tanh %arg : f32
    %p = arith.addf %t, %one : f32
    %hx = arith.mulf %in, %half : f32
    %g = arith.mulf %hx, %p : f32
    linalg.yield %g : f32
  } -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
