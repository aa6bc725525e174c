// ipu-lower-mid gives every graph op an operator plan and an estimate, puts formats on the
// values it plans and inserts explicit conversions where a reader wants another format.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=1})' | FileCheck %s

// A GeLU on one tile costs the table's 10 cycles per element plus the 11-cycle launch:
// 32 * 10 + 11 = 331; no exchange; input and output buffers of 64 B each.
// CHECK-LABEL: func.func @gelu_on_one_tile
// CHECK-SAME: ipu.estimate = #ipu.estimate<331 : i64, 0 : i64, 128 : i64, 0 : i64, 128 : i64, 64 : i64>
// CHECK: %[[IN:.*]] = "ipu.rearrange"(%arg0) {ipu.inserted}
// CHECK: "ipu.gelu"(%[[IN]]) {approximate = "tanh", estimate = #ipu.estimate<331 : i64, 0 : i64, 128 : i64, 0 : i64, 128 : i64, 64 : i64>, plan = #ipu.plan<"pointwise_gelu", {grid = [1, 1, 1], order = "row_major", precision = "f16", tiles = 1 : i64}>}
// CHECK-SAME: -> tensor<4x8xf16, #ipu.format<"row_major", [4, 8], [1, 1], [0, 0], "standard", 0 : i64>>
// The function still returns its declared type.
// CHECK: %[[OUT:.*]] = "ipu.rearrange"(%{{.*}}) {ipu.inserted} : ({{.*}}) -> tensor<4x8xf16>
// CHECK: return %[[OUT]] : tensor<4x8xf16>
func.func @gelu_on_one_tile(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

