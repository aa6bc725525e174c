// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s --check-prefix=NEAR
// RUN: sed -n '1,/^\/\/ Near miss/p' %s | ipu-opt - --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s

// softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))) over the last axis becomes one
// ipu.softmax, in the named-op form (linalg.reduce + linalg.broadcast + elementwise ops) and in
// the generic form (keepdim reductions, broadcasting maps, exp fused with the subtraction).
// Every op of the decomposition, its fills and destinations disappear.

// CHECK-LABEL: func.func @softmax_named
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.softmax"(%[[X]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @softmax_named(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e0 = tensor.empty() : tensor<2x4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %max = linalg.reduce ins(%x : tensor<2x4x8xf32>) outs(%m0 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %e1 = tensor.empty() : tensor<2x4x8xf32>
  %maxb = linalg.broadcast ins(%max : tensor<2x4xf32>) outs(%e1 : tensor<2x4x8xf32>) dimensions = [2]
  %e2 = tensor.empty() : tensor<2x4x8xf32>
  %d = linalg.sub ins(%x, %maxb : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e2 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %e3 = tensor.empty() : tensor<2x4x8xf32>
  %ex = linalg.exp ins(%d : tensor<2x4x8xf32>) outs(%e3 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %sum = linalg.reduce ins(%ex : tensor<2x4x8xf32>) outs(%s0 : tensor<2x4xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %e4 = tensor.empty() : tensor<2x4x8xf32>
  %sumb = linalg.broadcast ins(%sum : tensor<2x4xf32>) outs(%e4 : tensor<2x4x8xf32>) dimensions = [2]
  %e5 = tensor.empty() : tensor<2x4x8xf32>
  %p = linalg.div ins(%ex, %sumb : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e5 : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %p : tensor<2x4x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

// CHECK-LABEL: func.func @softmax_generic
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = "ipu.softmax"(%[[X]]) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @softmax_generic(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32
  %e1 = tensor.empty() : tensor<2x4x1xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %max = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<2x4x8xf32>) outs(%m0 : tensor<2x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %max : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x8xf32>) outs(%s0 : tensor<2x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  %p = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<2x4x8xf32>
  return %p : tensor<2x4x8xf32>
}

// -----

// Near miss: the max is taken over axis 1 (and subtracted along it), not the softmax axis.
// That is still a valid shift only when it is the softmax axis's max; here it is not
// recognized as ipu.softmax: imported op by op, the axis-1 max as a transpose and a
// last-axis reduction.
// NEAR-LABEL: func.func @softmax_max_on_the_wrong_axis
// NEAR-NOT: ipu.softmax
// NEAR: %[[T:.*]] = "ipu.rearrange"(%arg0) {permutation = array<i64: 0, 2, 1>} : (tensor<2x4x8xf32>) -> tensor<2x8x4xf32>
// NEAR: %[[MAX:.*]] = "ipu.reduce"(%[[T]]) {combiner = "max"} : (tensor<2x8x4xf32>) -> tensor<2x8x1xf32>
// NEAR: %[[M:.*]] = "ipu.reshape"(%[[MAX]]) : (tensor<2x8x1xf32>) -> tensor<2x1x8xf32>
// NEAR: %[[MB:.*]] = "ipu.broadcast"(%[[M]]) : (tensor<2x1x8xf32>) -> tensor<2x4x8xf32>
// NEAR: %[[EX:.*]] = "ipu.map"(%arg0, %[[MB]])
// NEAR: %[[SUM:.*]] = "ipu.reduce"(%[[EX]]) {combiner = "add"} : (tensor<2x4x8xf32>) -> tensor<2x4x1xf32>
// NEAR: %[[SB:.*]] = "ipu.broadcast"(%[[SUM]])
// NEAR: "ipu.map"(%[[EX]], %[[SB]])

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#keep1 = affine_map<(d0, d1, d2) -> (d0, 0, d2)>

func.func @softmax_max_on_the_wrong_axis(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e1 = tensor.empty() : tensor<2x1x8xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<2x1x8xf32>) -> tensor<2x1x8xf32>
  %max = linalg.generic {indexing_maps = [#id, #keep1], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<2x4x8xf32>) outs(%m0 : tensor<2x1x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.maximumf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x1x8xf32>
  %e = tensor.empty() : tensor<2x4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #keep1, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %max : tensor<2x4x8xf32>, tensor<2x1x8xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<2x4x8xf32>
  %e2 = tensor.empty() : tensor<2x4x1xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<2x4x8xf32>) outs(%s0 : tensor<2x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<2x4x1xf32>
  %p = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %sum : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%e : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %q = arith.divf %a, %b : f32
    linalg.yield %q : f32
  } -> tensor<2x4x8xf32>
  return %p : tensor<2x4x8xf32>
}
