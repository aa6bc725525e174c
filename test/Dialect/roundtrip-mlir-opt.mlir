// What ipu-opt prints, stock mlir-opt-22 parses and verifies with our IRDL file, and the
// reverse: both print the same module.
// RUN: ipu-opt %s | %mlir_opt --irdl-file=%irdl_ipu | FileCheck %s
// RUN: ipu-opt %s --mlir-print-op-generic | %mlir_opt --irdl-file=%irdl_ipu --verify-each | FileCheck %s

// CHECK-LABEL: func.func @every_op
func.func private @body(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}
func.func @every_op(%a: tensor<4x16xf16>, %w: tensor<8x16xf16, #ipu.format<"amp_right", [16, 16], [1, 1], [0, 0], "interleaved", 0>>, %g: tensor<8xf16>, %q: tensor<2x4x8xf16>) -> tensor<4x8xf16> {
  // CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) {transpose_rhs}
  %0 = "ipu.matmul"(%a, %w) {transpose_rhs} : (tensor<4x16xf16>, tensor<8x16xf16, #ipu.format<"amp_right", [16, 16], [1, 1], [0, 0], "interleaved", 0>>) -> tensor<4x8xf16>
  // CHECK: "ipu.add"
  %1 = "ipu.add"(%0, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.softmax"
  %2 = "ipu.softmax"(%1) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.layer_norm"
  %3 = "ipu.layer_norm"(%2, %g, %g) {epsilon = 1.0e-05 : f32} : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.attention"
  %4 = "ipu.attention"(%q, %q, %q) {causal} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  // CHECK: "ipu.cast"{{.*}}f8E4M3FNUZ
  %5 = "ipu.cast"(%3) {scale = -2 : i32} : (tensor<4x8xf16>) -> tensor<4x8xf8E4M3FNUZ>
  // CHECK: "ipu.cast"{{.*}}f8E5M2FNUZ
  %6 = "ipu.cast"(%3) : (tensor<4x8xf16>) -> tensor<4x8xf8E5M2FNUZ>
  // CHECK: "ipu.rearrange"
  %7 = "ipu.rearrange"(%3) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  // CHECK: "ipu.repeat"{{.*}}body = @body, count = 3
  %8 = "ipu.repeat"(%3) {body = @body, count = 3 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %8 : tensor<4x8xf16>
}

// A scan over per-iteration stacks: each stack's slices are the body's arguments after the
// carried value, all of one type !ipu.stacked so that the variadic stacks unify under IRDL.
// CHECK-LABEL: func.func @layers
func.func private @layer(%x: tensor<4x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.matmul"(%x, %w) : (tensor<4x8xf16>, tensor<8x8xf16>) -> tensor<4x8xf16>
  %1 = "ipu.add"(%0, %b) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}
func.func @layers(%x: tensor<4x8xf16>, %ws: tensor<3x8x8xf16>, %bs: tensor<3x8xf16>) -> tensor<4x8xf16> {
  // CHECK: %[[W:.*]] = "ipu.stack"(%{{.*}}) : (tensor<3x8x8xf16>) -> !ipu.stacked
  %sw = "ipu.stack"(%ws) : (tensor<3x8x8xf16>) -> !ipu.stacked
  // CHECK: %[[B:.*]] = "ipu.stack"(%{{.*}}) : (tensor<3x8xf16>) -> !ipu.stacked
  %sb = "ipu.stack"(%bs) : (tensor<3x8xf16>) -> !ipu.stacked
  // CHECK: "ipu.scan"(%{{.*}}, %[[W]], %[[B]]) {body = @layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked, !ipu.stacked) -> tensor<4x8xf16>
  %y = "ipu.scan"(%x, %sw, %sb) {body = @layer, count = 3 : i64} : (tensor<4x8xf16>, !ipu.stacked, !ipu.stacked) -> tensor<4x8xf16>
  return %y : tensor<4x8xf16>
}
