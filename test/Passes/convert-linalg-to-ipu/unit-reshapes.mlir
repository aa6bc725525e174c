// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | FileCheck %s
// RUN: ipu-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-linalg-to-ipu))' | %mlir_opt --split-input-file --irdl-file=%irdl_ipu > /dev/null

// A mask built as Hugging Face's attention does: an i64 iota, reshaped by size-1 axes
// (tensor.expand_shape), compared (i1), reshaped again (collapse_shape) and broadcast, then
// selecting scores. The integer and boolean reshapes fold into their generic readers (which
// read the iota through a map with the size-1 axes dropped), so the whole mask is recomputed
// inside the one map that selects: no integer tensor is left.
// CHECK-LABEL: func.func @mask
// CHECK-NOT: tensor.
// CHECK-NOT: linalg.
// CHECK: %[[M:.*]] = "ipu.map"(%arg0) {body = @[[BODY:.*]]} : (tensor<1x1x17x17xf32>) -> tensor<1x1x17x17xf32>
// CHECK: return %[[M]]
// CHECK: func.func private @[[BODY]](%{{.*}}: f32, %{{.*}}: index, %{{.*}}: index, %[[ROW:[a-z0-9]+]]: index, %{{.*}}: index) -> f32
// CHECK: arith.index_cast %[[ROW]]
// CHECK: arith.cmpi sge
// CHECK: arith.select
func.func @mask(%scores: tensor<1x1x17x17xf32>) -> tensor<1x1x17x17xf32> {
  %c0 = arith.constant 0 : i64
  %neg = arith.constant -3.40282347E+38 : f32
  %0 = tensor.empty() : tensor<17xi64>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%0 : tensor<17xi64>) {
  ^bb0(%out: i64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %i : index to i64
    linalg.yield %c : i64
  } -> tensor<17xi64>
  %e = tensor.expand_shape %1 [[0, 1, 2, 3]] output_shape [1, 1, 17, 1] : tensor<17xi64> into tensor<1x1x17x1xi64>
  %2 = tensor.empty() : tensor<1x1x17x1xi1>
  %3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%e : tensor<1x1x17x1xi64>) outs(%2 : tensor<1x1x17x1xi1>) {
  ^bb0(%in: i64, %out: i1):
    %b = arith.cmpi sge, %in, %c0 : i64
    linalg.yield %b : i1
  } -> tensor<1x1x17x1xi1>
  %c = tensor.collapse_shape %3 [[0], [1], [2, 3]] : tensor<1x1x17x1xi1> into tensor<1x1x17xi1>
  %4 = tensor.empty() : tensor<1x1x17x17xf32>
  %5 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %scores : tensor<1x1x17xi1>, tensor<1x1x17x17xf32>) outs(%4 : tensor<1x1x17x17xf32>) {
  ^bb0(%m: i1, %s: f32, %out: f32):
    %r = arith.select %m, %s, %neg : f32
    linalg.yield %r : f32
  } -> tensor<1x1x17x17xf32>
  return %5 : tensor<1x1x17x17xf32>
}

