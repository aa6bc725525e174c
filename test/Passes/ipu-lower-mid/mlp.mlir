// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// The same MLP under precision=fp8 keeps the older output-stationary plans (device casts, a
// row-major GeLU on the first GEMM's grid, its result converted to AMP-left for the second):
// the GeLU's result is an F16 device value, not in the AMP input precision F8 (only host
// operands are encoded to F8 as they are streamed), so the second matmul is not split, and
// the first, whose result feeds it through the GeLU, is not either.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' | FileCheck %s --check-prefix=FP8
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8-LOG

// An F16 MLP: x and both weights (constants, laid out at compile time) are in the AMP input
// precision and each product is only used by the GeLU or the second matmul's left operand,
// so both matmuls are split GEMMs (host_order = true): the first output-stationary on grid
// [1, 1, 16, 1], the second a K split on [1, 1, 4, 4]. The GeLU gets a ranged plan (no grid:
// it runs in place on the ranges of the first GEMM's AMP-output blocks, so its result keeps
// that format), and the second matmul takes the GeLU's result as its left operand directly:
// no cast and no rearrange into AMP-left between them. Every op carries its estimate.
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: ipu.estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9]+}} : i64
// CHECK-NEXT: %cst = arith.constant
// CHECK-NEXT: %cst_0 = arith.constant
// CHECK-NEXT: [[X:%[0-9]+]] = "ipu.rearrange"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf16, #ipu.format<"amp_left"
// CHECK-NEXT: [[W1:%[0-9]+]] = "ipu.rearrange"(%cst) {ipu.inserted} : (tensor<256x512xf16>) -> tensor<256x512xf16, #ipu.format<"amp_right"
// CHECK-NEXT: [[H:%[0-9]+]] = "ipu.matmul"([[X]], [[W1]]) {estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 1, 16, 1], host_order = true, k_block = 256 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 16 : i64, weights = "interleaved", weights_resident = false}>}
// CHECK-SAME: -> tensor<128x512xf16, [[HFMT:#ipu.format<"amp_output", \[128, 32\], \[1, 16\], \[0, 0\], "standard", 0 : i64>]]>
// CHECK-NEXT: [[G:%[0-9]+]] = "ipu.gelu"([[H]]) {approximate = "tanh", estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"pointwise_gelu", {precision = "f16", ranged = true}>} : (tensor<128x512xf16, [[HFMT]]>) -> tensor<128x512xf16, [[HFMT]]>
// CHECK-NEXT: [[W2:%[0-9]+]] = "ipu.rearrange"(%cst_0) {ipu.inserted} : (tensor<512x256xf16>) -> tensor<512x256xf16, #ipu.format<"amp_right"
// CHECK-NEXT: [[Y:%[0-9]+]] = "ipu.matmul"([[G]], [[W2]]) {estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"gemm_k_split", {c_block = 64 : i64, grid = [1, 1, 4, 4], host_order = true, k_block = 128 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 16 : i64, weights = "interleaved", weights_resident = false}>} : (tensor<128x512xf16, [[HFMT]]>,
// CHECK-SAME: -> tensor<128x256xf16, #ipu.format<"amp_output"
// CHECK-NEXT: [[R:%[0-9]+]] = "ipu.rearrange"([[Y]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf16>
// CHECK-NEXT: return [[R]] : tensor<128x256xf16>

// No finalist plans a conversion: the graph's six values (x, the two weights, the two
// products, the GeLU's result) are all there is.
// LOG: retained operator-plan finalist finalist=0 values=6 operations=3 {{.*}} conversion_sources=[]

// precision=fp8: nothing is split (no host_order, no ranged plan). x and the weights are cast
// to F8 (the weights with a scale) and rearranged; the GeLU is a row-major pointwise plan on
// the first GEMM's [1, gm, gn] grid, and its result is cast to F8 and rearranged from
// AMP-output into AMP-left order for the second output-stationary GEMM.
// FP8-NOT: host_order
// FP8-NOT: ranged
// FP8-LABEL: func.func @mlp
// FP8: "ipu.cast"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf8E4M3FNUZ>
// FP8-NEXT: "ipu.rearrange"
// FP8-SAME: #ipu.format<"amp_left"
// FP8-NEXT: "ipu.cast"(%cst) {ipu.inserted, scale = -8 : i32}
// FP8-NEXT: "ipu.rearrange"
// FP8-SAME: #ipu.format<"amp_right"
// FP8-NEXT: [[H8:%[0-9]+]] = "ipu.matmul"({{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = {{[0-9]+}} : i64, grid = [1, [[GM:[0-9]+]], [[GN:[0-9]+]], 1], k_block = {{.*}}precision = "f8"
// FP8-NEXT: [[G8:%[0-9]+]] = "ipu.gelu"([[H8]]) {{.*}}plan = #ipu.plan<"pointwise_gelu", {grid = [1, [[GM]], [[GN]]], order = "amp_output", precision = "f16", tiles = 16 : i64}>}
// FP8-NEXT: [[C8:%[0-9]+]] = "ipu.cast"([[G8]]) {ipu.inserted} : (tensor<128x512xf16, #ipu.format<"amp_output"{{.*}}>>) -> tensor<128x512xf8E4M3FNUZ, #ipu.format<"amp_output"
// FP8-NEXT: [[L8:%[0-9]+]] = "ipu.rearrange"([[C8]]) {ipu.inserted} : {{.*}} -> tensor<128x512xf8E4M3FNUZ, #ipu.format<"amp_left"
// FP8-NEXT: "ipu.cast"(%cst_0) {ipu.inserted, scale = -9 : i32}
// FP8-NEXT: [[W8:%[0-9]+]] = "ipu.rearrange"
// FP8-NEXT: "ipu.matmul"([[L8]], [[W8]]) {{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = {{[0-9]+}} : i64, grid = [1, {{[0-9]+}}, {{[0-9]+}}, 1], k_block = {{.*}}precision = "f8"
// FP8-NEXT: "ipu.rearrange"
// FP8-NEXT: return

// Two device conversions: x (%0) and the GeLU's result (%4).
// FP8-LOG: retained operator-plan finalist finalist=0 values=8 operations=3 {{.*}} conversion_sources=[%0,%4]
func.func @mlp(%x: tensor<128x256xf16>) -> tensor<128x256xf16> {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %w2 = arith.constant dense<0.25> : tensor<512x256xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  return %y : tensor<128x256xf16>
}
