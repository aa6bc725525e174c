// ipu.reshape is planned as a view (reshape_view): the result's row blocks are the same
// buffers as the input's, so the plan has no work and the input is needed on the matching row
// grid. Splitting [64, 128] into 4 heads of 32 on a [16, 1, 1] grid of whole tokens needs the
// input as 16 blocks of 4 rows; merging [64, 4, 32] back needs 16 blocks of 4 whole tokens.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints={"ops":[{"op":0,"kind":"reshape_view","params":{"grid":[16,1,1]}},{"op":1,"kind":"reshape_view","params":{"grid":[1,16,1]}}]}})' | FileCheck %s
// A grid whose blocks are not whole rows of the input admits no candidate.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints={"ops":[{"op":0,"kind":"reshape_view","params":{"grid":[1,16,1]}}]}})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// CHECK: %[[X:[0-9]+]] = "ipu.rearrange"(%arg0) {ipu.inserted} : (tensor<64x128xf16>) -> tensor<64x128xf16, #ipu.format<"row_major", [4, 128], [16, 1], [0, 0], "standard", 0 : i64>>
// CHECK: %[[H:[0-9]+]] = "ipu.reshape"(%[[X]]) {estimate = #ipu.estimate<0 : i64, {{.*}}plan = #ipu.plan<"reshape_view", {grid = [16, 1, 1], tiles = 16 : i64}>} : (tensor<64x128xf16, #ipu.format<"row_major", [4, 128], [16, 1], [0, 0], "standard", 0 : i64>>) -> tensor<64x4x32xf16, #ipu.format<"row_major", [4, 4, 32], [16, 1, 1], [0, 0, 0], "standard", 0 : i64>>
// CHECK: "ipu.reshape"(%[[H]]) {{.*}}plan = #ipu.plan<"reshape_view", {grid = [1, 16, 1], tiles = 16 : i64}>} : (tensor<64x4x32xf16, #ipu.format<"row_major", [4, 4, 32], [16, 1, 1], [0, 0, 0], "standard", 0 : i64>>) -> tensor<64x128xf16, #ipu.format<"row_major", [4, 128], [16, 1], [0, 0], "standard", 0 : i64>>

// NONE: error: 'ipu.reshape' op has no operator plan: no candidate satisfies the constraint on op 0

func.func @heads(%x: tensor<64x128xf16>) -> tensor<64x128xf16> {
  %h = "ipu.reshape"(%x) : (tensor<64x128xf16>) -> tensor<64x4x32xf16>
  %m = "ipu.reshape"(%h) : (tensor<64x4x32xf16>) -> tensor<64x128xf16>
  return %m : tensor<64x128xf16>
}
