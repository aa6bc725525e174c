// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' | FileCheck %s

// An MLP: both GEMMs get AMP operands (left and right orders), the GeLU reads the GEMM's
// output; weights are laid out at compile time.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: ipu.estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9]+}} : i64
// CHECK: "ipu.rearrange"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf16, #ipu.format<"amp_left"
// CHECK: "ipu.matmul"({{.*}}) {estimate = #ipu.estimate<{{.*}}>, plan = #ipu.plan<"gemm_{{output_stationary|k_split}}", {c_block = {{[0-9]+}} : i64, grid = [1, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], k_block = {{[0-9]+}} : i64, k_steps = 1 : i64, left = "{{standard|interleaved}}", orientation = "{{normal|swapped}}", precision = "f16", tiles = 16 : i64, weights = "{{standard|interleaved}}", weights_resident = {{true|false}}}>}
// CHECK-SAME: -> tensor<128x512xf16, #ipu.format<"amp_output"
// CHECK: "ipu.gelu"{{.*}}plan = #ipu.plan<"pointwise_gelu"
// CHECK: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_
// CHECK: return {{.*}} : tensor<128x256xf16>
func.func @mlp(%x: tensor<128x256xf16>) -> tensor<128x256xf16> {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %w2 = arith.constant dense<0.25> : tensor<512x256xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  return %y : tensor<128x256xf16>
}
