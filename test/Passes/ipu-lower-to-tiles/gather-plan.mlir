// The lowering follows a row gather's plan (ipu.slice, ipu.concat) or refuses it at the op:
// a grid that splits the rows' columns, more tiles than the lowering has, or a plan of another
// strategy is an error naming the plan and why.
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=16})' 2>&1 | FileCheck %s

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.slice: op 0: plan #ipu.plan<"row_gather", {grid = [1, 4, 2], tiles = 8 : i64}> cannot be followed: a row gather holds whole rows on a [batch, rows, 1] grid, not [1, 4, 2]
func.func @columns(%x: tensor<64x128xf16>) -> tensor<64x32xf16> {
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0, 64>, strides = array<i64: 1, 1>, plan = #ipu.plan<"row_gather", {grid = [1, 4, 2], tiles = 8 : i64}>} : (tensor<64x128xf16>) -> tensor<64x32xf16>
  return %0 : tensor<64x32xf16>
}

// -----

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.concat: op 0: plan #ipu.plan<"row_gather", {grid = [1, 32, 1], tiles = 32 : i64}> cannot be followed: it needs 32 tiles, the lowering has 16
func.func @tiles(%a: tensor<32x16xf16>, %b: tensor<32x16xf16>) -> tensor<64x16xf16> {
  %0 = "ipu.concat"(%a, %b) {axis = 0 : i64, plan = #ipu.plan<"row_gather", {grid = [1, 32, 1], tiles = 32 : i64}>} : (tensor<32x16xf16>, tensor<32x16xf16>) -> tensor<64x16xf16>
  return %0 : tensor<64x16xf16>
}

// -----

// CHECK: error: 'func.func' op ipu-lower-to-tiles: ipu.slice: op 0: plan {{.*}}"reshape_view"{{.*}} cannot be followed: not a row gather plan
func.func @other(%x: tensor<64x128xf16>) -> tensor<64x32xf16> {
  %0 = "ipu.slice"(%x) {offsets = array<i64: 0, 64>, strides = array<i64: 1, 1>, plan = #ipu.plan<"reshape_view", {grid = [4, 1, 1], tiles = 4 : i64}>} : (tensor<64x128xf16>) -> tensor<64x32xf16>
  return %0 : tensor<64x32xf16>
}
