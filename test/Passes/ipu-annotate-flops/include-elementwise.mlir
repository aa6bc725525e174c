// include-elementwise=true also annotates ipu.add, ipu.gelu, ipu.softmax, ipu.layer_norm and
// ipu.cast with one operation per result element; ipu.rearrange only moves data and is skipped.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=true})' | FileCheck %s
// The default, spelled out, is the same as leaving the option off.
// RUN: ipu-opt %s --pass-pipeline='builtin.module(ipu-annotate-flops{include-elementwise=false})' | FileCheck %s --check-prefix=OFF

// CHECK-LABEL: func.func @elementwise_counted
// OFF-LABEL: func.func @elementwise_counted
func.func @elementwise_counted(%x: tensor<4x8xf16>, %g: tensor<8xf16>) -> tensor<8x4xf8E4M3FNUZ> {
  // A broadcast add counts its result's 32 elements, not its operands'.
  // CHECK: "ipu.add"{{.*}}{ipu.flops = 32 : i64}
  // OFF: "ipu.add"(%{{.*}}, %{{.*}}) :
  %0 = "ipu.add"(%x, %g) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.gelu"{{.*}}{approximate = "tanh", ipu.flops = 32 : i64}
  // OFF: "ipu.gelu"{{.*}}{approximate = "tanh"} :
  %1 = "ipu.gelu"(%0) {approximate = "tanh"} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.softmax"{{.*}}{ipu.flops = 32 : i64}
  %2 = "ipu.softmax"(%1) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.layer_norm"{{.*}}{epsilon = {{.*}}, ipu.flops = 32 : i64}
  %3 = "ipu.layer_norm"(%2, %g, %g) {epsilon = 1.0e-05 : f32} : (tensor<4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  // CHECK: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0>} :
  %4 = "ipu.rearrange"(%3) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  // CHECK: "ipu.cast"{{.*}}{ipu.flops = 32 : i64, scale = -2 : i32}
  // OFF: "ipu.cast"{{.*}}{scale = -2 : i32} :
  %5 = "ipu.cast"(%4) {scale = -2 : i32} : (tensor<8x4xf16>) -> tensor<8x4xf8E4M3FNUZ>
  return %5 : tensor<8x4xf8E4M3FNUZ>
}
