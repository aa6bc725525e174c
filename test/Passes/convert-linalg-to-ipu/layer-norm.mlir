// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s --check-prefix=NEAR
// RUN: sed -n '1,/^\/\/ Near miss/p' %s | ipu-opt - --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s

// Layer norm over the last axis, (x - mean) * rsqrt(mean((x - mean)^2) + eps) * gamma + beta,
// becomes one ipu.layer_norm with gamma and beta as [N] constants and the epsilon attribute:
// in the named-op form (linalg.reduce, linalg.broadcast, elementwise ops) and in the generic
// form torch-mlir emits (keepdim sum reductions, the mean and the squares fused into bodies,
// the normalization, scale and shift fused into one generic).

// CHECK-LABEL: func.func @layer_norm_named
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-DAG: %[[G:.*]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00, 6.000000e+00, 7.000000e+00, 8.000000e+00]> : tensor<8xf32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<5.000000e-01> : tensor<8xf32>
// CHECK: %[[R:.*]] = "ipu.layer_norm"(%[[X]], %[[G]], %[[B]]) {epsilon = 9.99999974E-6 : f32} : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[R]]
// CHECK-NOT: linalg.
func.func @layer_norm_named(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %inv_n = arith.constant dense<0.125> : tensor<4xf32>
  %eps = arith.constant dense<1.0e-5> : tensor<4xf32>
  %gamma = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %beta = arith.constant dense<[0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]> : tensor<8xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%s0 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %mean = linalg.mul ins(%sum, %inv_n : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %meanb = linalg.broadcast ins(%mean : tensor<4xf32>) outs(%e48 : tensor<4x8xf32>) dimensions = [1]
  %d = linalg.sub ins(%x, %meanb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %sq = linalg.mul ins(%d, %d : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %q0 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %sqsum = linalg.reduce ins(%sq : tensor<4x8xf32>) outs(%q0 : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %var = linalg.mul ins(%sqsum, %inv_n : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %ve = linalg.add ins(%var, %eps : tensor<4xf32>, tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.rsqrt ins(%ve : tensor<4xf32>) outs(%e4 : tensor<4xf32>) -> tensor<4xf32>
  %rb = linalg.broadcast ins(%r : tensor<4xf32>) outs(%e48 : tensor<4x8xf32>) dimensions = [1]
  %n = linalg.mul ins(%d, %rb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %gb = linalg.broadcast ins(%gamma : tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) dimensions = [0]
  %s = linalg.mul ins(%n, %gb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %bb = linalg.broadcast ins(%beta : tensor<8xf32>) outs(%e48 : tensor<4x8xf32>) dimensions = [0]
  %out = linalg.add ins(%s, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %out : tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#last = affine_map<(d0, d1, d2) -> (d2)>

// CHECK-LABEL: func.func @layer_norm_generic
// CHECK-SAME: (%[[X:.*]]: tensor<1x4x8xf32>, %[[Y:.*]]: tensor<1x4x8xf32>)
// CHECK: %[[R:.*]] = "ipu.layer_norm"(%[[X]], %{{.*}}, %{{.*}}) {epsilon = 9.99999974E-6 : f32} : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<1x4x8xf32>
// Without the affine part: gamma ones, beta zeros.
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: %[[ZEROS:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[S:.*]] = "ipu.layer_norm"(%[[Y]], %[[ONES]], %[[ZEROS]]) {epsilon = 9.99999974E-6 : f32}
// CHECK: return %[[R]], %[[S]]
// CHECK-NOT: linalg.
func.func @layer_norm_generic(%x: tensor<1x4x8xf32>, %y: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %gamma = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]> : tensor<8xf32>
  %beta = arith.constant dense<[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]> : tensor<8xf32>
  %e1 = tensor.empty() : tensor<1x4x1xf32>
  %e = tensor.empty() : tensor<1x4x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8xf32>) outs(%s0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %q0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %var = linalg.generic {indexing_maps = [#id, #keep, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %sum : tensor<1x4x8xf32>, tensor<1x4x1xf32>) outs(%q0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %s: f32, %acc: f32):
    %n = arith.constant 8.0 : f32
    %m = arith.divf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %out = linalg.generic {indexing_maps = [#id, #keep, #keep, #last, #last, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %var, %gamma, %beta : tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %v: f32, %g: f32, %b: f32, %o: f32):
    %n = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.divf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %vn = arith.divf %v, %n : f32
    %ve = arith.addf %vn, %eps : f32
    %r = math.rsqrt %ve : f32
    %nd = arith.mulf %d, %r : f32
    %sc = arith.mulf %nd, %g : f32
    %sh = arith.addf %sc, %b : f32
    linalg.yield %sh : f32
  } -> tensor<1x4x8xf32>
  // The same without gamma and beta, the deviation as a division by sqrt.
  %ysum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y : tensor<1x4x8xf32>) outs(%s0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %yvar = linalg.generic {indexing_maps = [#id, #keep, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %ysum : tensor<1x4x8xf32>, tensor<1x4x1xf32>) outs(%q0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %s: f32, %acc: f32):
    %n = arith.constant 0.125 : f32
    %m = arith.mulf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %yout = linalg.generic {indexing_maps = [#id, #keep, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %ysum, %yvar : tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %v: f32, %o: f32):
    %n = arith.constant 0.125 : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.mulf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %vn = arith.mulf %v, %n : f32
    %ve = arith.addf %vn, %eps : f32
    %sd = math.sqrt %ve : f32
    %nd = arith.divf %d, %sd : f32
    linalg.yield %nd : f32
  } -> tensor<1x4x8xf32>
  return %out, %yout : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// Near miss: epsilon added after the rsqrt (rsqrt(var) + eps) is not a layer norm: it is
// imported op by op (reductions, broadcasts of their kept axis, maps), never as ipu.layer_norm.
// NEAR-LABEL: func.func @layer_norm_epsilon_outside_the_rsqrt
// NEAR-NOT: ipu.layer_norm
// NEAR: %[[SUM:.*]] = "ipu.reduce"(%arg0) {combiner = "add"} : (tensor<1x4x8xf32>) -> tensor<1x4x1xf32>
// NEAR: %[[MEAN:.*]] = "ipu.broadcast"(%[[SUM]]) : (tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
// NEAR: %[[SQ:.*]] = "ipu.map"(%arg0, %[[MEAN]]) {body = @{{.*}}} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// NEAR: %[[VAR:.*]] = "ipu.reduce"(%[[SQ]]) {combiner = "add"}
// NEAR: "ipu.map"(%arg0, %{{.*}}, %{{.*}}) {body = @{{.*}}} : (tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
// NEAR-NOT: linalg.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#keep = affine_map<(d0, d1, d2) -> (d0, d1, 0)>

func.func @layer_norm_epsilon_outside_the_rsqrt(%x: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<1x4x1xf32>
  %e = tensor.empty() : tensor<1x4x8xf32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<1x4x8xf32>) outs(%s0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %r = arith.addf %in, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %q0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %var = linalg.generic {indexing_maps = [#id, #keep, #keep], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %sum : tensor<1x4x8xf32>, tensor<1x4x1xf32>) outs(%q0 : tensor<1x4x1xf32>) {
  ^bb0(%in: f32, %s: f32, %acc: f32):
    %n = arith.constant 8.0 : f32
    %m = arith.divf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  } -> tensor<1x4x1xf32>
  %out = linalg.generic {indexing_maps = [#id, #keep, #keep, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %var : tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>) outs(%e : tensor<1x4x8xf32>) {
  ^bb0(%in: f32, %s: f32, %v: f32, %o: f32):
    %n = arith.constant 8.0 : f32
    %eps = arith.constant 1.0e-5 : f32
    %m = arith.divf %s, %n : f32
    %d = arith.subf %in, %m : f32
    %vn = arith.divf %v, %n : f32
    %r = math.rsqrt %vn : f32
    %re = arith.addf %r, %eps : f32
    %nd = arith.mulf %d, %re : f32
    linalg.yield %nd : f32
  } -> tensor<1x4x8xf32>
  return %out : tensor<1x4x8xf32>
}
