// Plans for the other graph ops: attention (its keys split over the tiles of each query
// block), layer norm and softmax on whole rows, a user cast, and a repeat whose body is planned
// once.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=64})' | FileCheck %s

// CHECK-LABEL: func.func @attention_block
// CHECK: "ipu.attention"{{.*}}plan = #ipu.plan<"attention_flash", {causal = true, grid = [4, {{[0-9]+}}, {{[0-9]+}}], key_block = {{[0-9]+}} : i64, precision = "f16", tiles = {{[0-9]+}} : i64}>
// CHECK: "ipu.layer_norm"{{.*}}plan = #ipu.plan<"rows_layer_norm", {grid = [{{[0-9]+}}, {{[0-9]+}}, 1]
// CHECK: "ipu.softmax"{{.*}}plan = #ipu.plan<"rows_softmax", {grid = [{{[0-9]+}}, {{[0-9]+}}, 1]
// CHECK: "ipu.cast"{{.*}}plan = #ipu.plan<"pointwise_cast"
func.func @attention_block(%q: tensor<4x128x64xf16>, %g: tensor<64xf16>) -> tensor<4x128x64xf32> {
  %a = "ipu.attention"(%q, %q, %q) {causal} : (tensor<4x128x64xf16>, tensor<4x128x64xf16>, tensor<4x128x64xf16>) -> tensor<4x128x64xf16>
  %n = "ipu.layer_norm"(%a, %g, %g) {epsilon = 1.0e-05 : f32} : (tensor<4x128x64xf16>, tensor<64xf16>, tensor<64xf16>) -> tensor<4x128x64xf16>
  %s = "ipu.softmax"(%n) : (tensor<4x128x64xf16>) -> tensor<4x128x64xf16>
  %c = "ipu.cast"(%s) : (tensor<4x128x64xf16>) -> tensor<4x128x64xf32>
  return %c : tensor<4x128x64xf32>
}

// The body is planned once: its GeLU gets a plan, the repeat costs ten iterations of it and
// keeps its carried types plain (the body's signature fixes them).
// CHECK-LABEL: func.func private @layer
// CHECK-SAME: ipu.estimate = #ipu.estimate<[[BODY:[0-9]+]] : i64
// CHECK: "ipu.gelu"{{.*}}plan = #ipu.plan<"pointwise_gelu"
// CHECK-LABEL: func.func @repeated
// CHECK: "ipu.repeat"(%arg0) {body = @layer, count = 10 : i64, estimate = #ipu.estimate<{{[0-9]+}} : i64, {{.*}}, plan = #ipu.plan<"repeat_body_once", {body_choices = [{{[0-9]+}}], count = 10 : i64}>} : (tensor<64x64xf16>) -> tensor<64x64xf16>
func.func private @layer(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.gelu"(%x) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
func.func @repeated(%x: tensor<64x64xf16>) -> tensor<64x64xf16> {
  %0 = "ipu.repeat"(%x) {body = @layer, count = 10 : i64} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  return %0 : tensor<64x64xf16>
}
