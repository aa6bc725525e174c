// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// The general import: linalg ops no decomposition pattern covers become ipu.map (a scalar body
// function), ipu.reduce, ipu.broadcast and ipu.reshape. Chains of single-use elementwise
// generics are one map (a broadcast copy feeding it included); a boolean mask is recomputed
// in each user.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @chain_is_one_map
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[BB:.*]] = "ipu.broadcast"(%[[B]]) : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[M:.*]] = "ipu.map"(%[[X]], %[[BB]]) {body = @[[BODY:ipu_map_[0-9a-f]+]]} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[M]]
// CHECK: func.func private @[[BODY]](%arg0: f32, %arg1: f32) -> f32
// CHECK-NEXT: arith.addf %arg0, %arg1
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.constant 5.000000e-01 : f32
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: return
func.func @chain_is_one_map(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.generic {indexing_maps = [#row, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%ex : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %v = arith.mulf %in, %half : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %h : tensor<4x8xf32>
}

// -----

// A causal mask from index iotas (i32 tensors), a comparison (i1) and a select: the integer
// and boolean tensors are recomputed inside the one map that reads them (ipu tensors are
// floats); its body reads the element indices.
// CHECK-LABEL: func.func @causal_mask
// CHECK-NEXT: %[[M:.*]] = "ipu.map"(%arg0) {body = @[[BODY:ipu_map_[0-9a-f]+]]} : (tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NEXT: return %[[M]]
// CHECK: func.func private @[[BODY]](%arg0: f32, %arg1: index, %arg2: index) -> f32
// CHECK-DAG: arith.index_cast %arg1 : index to i64
// CHECK-DAG: arith.index_cast %arg2 : index to i64
// CHECK: arith.cmpi sge
// CHECK: arith.select
#id2 = affine_map<(d0, d1) -> (d0, d1)>
func.func @causal_mask(%s: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %ei = tensor.empty() : tensor<4x4xi32>
  %rows = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%ei : tensor<4x4xi32>) {
  ^bb0(%out: i32):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i32
    linalg.yield %c : i32
  } -> tensor<4x4xi32>
  %cols = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%ei : tensor<4x4xi32>) {
  ^bb0(%out: i32):
    %j = linalg.index 1 : index
    %c = arith.index_cast %j : index to i32
    linalg.yield %c : i32
  } -> tensor<4x4xi32>
  %eb = tensor.empty() : tensor<4x4xi1>
  %keep = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%rows, %cols : tensor<4x4xi32>, tensor<4x4xi32>) outs(%eb : tensor<4x4xi1>) {
  ^bb0(%a: i32, %b: i32, %out: i1):
    %ge = arith.cmpi sge, %a, %b : i32
    linalg.yield %ge : i1
  } -> tensor<4x4xi1>
  %e = tensor.empty() : tensor<4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%keep, %s : tensor<4x4xi1>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%k: i1, %v: f32, %out: f32):
    %low = arith.constant -3.40282347E+38 : f32
    %r = arith.select %k, %v, %low : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %masked : tensor<4x4xf32>
}

// -----

// A reduction whose per-element part is x * x, into a fill that is not the identity: the
// map of the part, ipu.reduce over the last axis (kept as size 1), the init combined by a
// map, and the kept axis dropped by ipu.reshape.
// CHECK-LABEL: func.func @sum_of_squares_plus_one
// CHECK-NEXT: %[[SQ:.*]] = "ipu.map"(%arg0) {body = @{{.*}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = "ipu.reduce"(%[[SQ]]) {combiner = "add"} : (tensor<4x8xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<4x1xf32>
// CHECK-NEXT: %[[C:.*]] = "ipu.map"(%[[R]], %[[ONE]]) {body = @{{.*}}} : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
// CHECK-NEXT: %[[OUT:.*]] = "ipu.reshape"(%[[C]]) : (tensor<4x1xf32>) -> tensor<4xf32>
// CHECK-NEXT: return %[[OUT]]
func.func @sum_of_squares_plus_one(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%one : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Named elementwise ops, a broadcast of a value, a copy, a fill used as a tensor, and the
// shape ops around them.
// CHECK-LABEL: func.func @named_and_shape_ops
// CHECK: %[[B:.*]] = "ipu.broadcast"(%arg1) : (tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[SUB:.*]] = "ipu.map"(%arg0, %[[B]]) {body = @{{.*}}} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[EXP:.*]] = "ipu.map"(%[[SUB]]) {body = @{{.*}}} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[TWO:.*]] = arith.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK: %[[MUL:.*]] = "ipu.map"(%[[EXP]], %[[TWO]]) {body = @{{.*}}}
// CHECK: %[[Y:.*]] = "ipu.reshape"(%[[MUL]]) : (tensor<4x8xf32>) -> tensor<32xf32>
// CHECK: return %[[Y]]
func.func @named_and_shape_ops(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<32xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %bb = linalg.broadcast ins(%b : tensor<8xf32>) outs(%e : tensor<4x8xf32>) dimensions = [0]
  %d = linalg.sub ins(%x, %bb : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %v = linalg.exp ins(%d : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = linalg.copy ins(%v : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %two = arith.constant 2.0 : f32
  %t = linalg.fill ins(%two : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.mul ins(%c, %t : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %x3 = tensor.expand_shape %m [[0], [1, 2]] output_shape [4, 2, 4] : tensor<4x8xf32> into tensor<4x2x4xf32>
  %y = tensor.collapse_shape %x3 [[0, 1, 2]] : tensor<4x2x4xf32> into tensor<32xf32>
  return %y : tensor<32xf32>
}

// -----

// A transpose that moves the last axis is a permutation of the leading axes, a swap of the
// last two and another permutation of the leading axes (the rearranges the tiles lower).
// CHECK-LABEL: func.func @transpose_moving_the_last_axis
// CHECK-NEXT: %[[A:.*]] = "ipu.rearrange"(%arg0) {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x3x4x5xf32>) -> tensor<1x4x3x5xf32>
// CHECK-NEXT: %[[B:.*]] = "ipu.rearrange"(%[[A]]) {permutation = array<i64: 0, 1, 3, 2>} : (tensor<1x4x3x5xf32>) -> tensor<1x4x5x3xf32>
// CHECK-NEXT: return %[[B]]
func.func @transpose_moving_the_last_axis(%x: tensor<1x3x4x5xf32>) -> tensor<1x4x5x3xf32> {
  %e = tensor.empty() : tensor<1x4x5x3xf32>
  %t = linalg.transpose ins(%x : tensor<1x3x4x5xf32>) outs(%e : tensor<1x4x5x3xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<1x4x5x3xf32>
}

// -----

// Generics sharing an intermediate (a = 2x read by two ops, b = a + 1 ... ) whose values are
// read only inside the web are one map, the shared value computed once in its body.
// CHECK-LABEL: func.func @shared_intermediates_are_one_map
// CHECK-NEXT: %[[M:.*]] = "ipu.map"(%arg0) {body = @[[BODY:ipu_map_[0-9a-f]+]]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[M]]
// CHECK: func.func private @[[BODY]](%arg0: f32) -> f32
// CHECK-COUNT-1: arith.mulf %arg0
// CHECK-NOT: arith.mulf %arg0
// CHECK: return
#sid = affine_map<(d0, d1) -> (d0, d1)>
func.func @shared_intermediates_are_one_map(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %v = arith.mulf %in, %two : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %c = linalg.generic {indexing_maps = [#sid, #sid, #sid], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%p: f32, %q: f32, %out: f32):
    %v = arith.divf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
