// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// Under precision=fp8 the same MLP (@mlp) is planned as chained split GEMMs too: the planner
// inserts an ipu.cast (F16 -> F8 at the policy scale, {ipu.inserted}) of the GeLU's result
// before the second matmul, so the planned module verifies (both matmul operands FP8; ipu-opt
// runs the ipu verifier on its output, which used to fail here with "'ipu.matmul' op operand
// element types differ"). @mlp_shared's hidden value also feeds an add with another full
// tensor, so it is not held as ranges: both matmuls are split GEMMs with their results
// converted to row grids (host_order, no ranged plan anywhere), the second gathering the
// GeLU's result, cast on its owners, from its rows.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' | FileCheck %s --check-prefix=FP8
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8-LOG

// An F16 MLP: x and both weights (constants, laid out at compile time) are in the AMP input
// precision and each product is only used by the GeLU or the second matmul's left operand,
// so both matmuls are split GEMMs (host_order = true): the first output-stationary on grid
// [1, 2, 8, 1], the second a K split on [1, 1, 2, 8], both keeping their constant weights
// resident (weights_resident = true: written at initialization where each tile reads them). The GeLU gets a ranged plan (no grid:
// it runs in place on the ranges of the first GEMM's AMP-output blocks, so its result keeps
// that format), and the second matmul takes the GeLU's result as its left operand directly:
// no cast and no rearrange into AMP-left between them. Every op carries its estimate.
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: ipu.estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9]+}} : i64
// CHECK-NEXT: %cst = arith.constant
// CHECK-NEXT: %cst_0 = arith.constant
// CHECK-NEXT: [[X:%[0-9]+]] = "ipu.rearrange"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf16, #ipu.format<"amp_left"
// CHECK-NEXT: [[W1:%[0-9]+]] = "ipu.rearrange"(%cst) {ipu.inserted} : (tensor<256x512xf16>) -> tensor<256x512xf16, #ipu.format<"amp_right"
// CHECK-NEXT: [[H:%[0-9]+]] = "ipu.matmul"([[X]], [[W1]]) {estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"gemm_output_stationary", {c_block = 64 : i64, grid = [1, 2, 8, 1], host_order = true, k_block = 256 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 16 : i64, weights = "interleaved", weights_resident = true}>}
// CHECK-SAME: -> tensor<128x512xf16, [[HFMT:#ipu.format<"amp_output", \[64, 64\], \[2, 8\], \[0, 0\], "standard", 0 : i64>]]>
// CHECK-NEXT: [[G:%[0-9]+]] = "ipu.gelu"([[H]]) {approximate = "tanh", estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"pointwise_gelu", {precision = "f16", ranged = true}>} : (tensor<128x512xf16, [[HFMT]]>) -> tensor<128x512xf16, [[HFMT]]>
// CHECK-NEXT: [[W2:%[0-9]+]] = "ipu.rearrange"(%cst_0) {ipu.inserted} : (tensor<512x256xf16>) -> tensor<512x256xf16, #ipu.format<"amp_right"
// CHECK-NEXT: [[Y:%[0-9]+]] = "ipu.matmul"([[G]], [[W2]]) {estimate = #ipu.estimate<{{[0-9]+}} : i64, {{[0-9, :i]+}}>, plan = #ipu.plan<"gemm_k_split", {c_block = 128 : i64, grid = [1, 1, 2, 8], host_order = true, k_block = 64 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 16 : i64, weights = "interleaved", weights_resident = true}>} : (tensor<128x512xf16, [[HFMT]]>,
// CHECK-SAME: -> tensor<128x256xf16, #ipu.format<"amp_output"
// CHECK-NEXT: [[R:%[0-9]+]] = "ipu.rearrange"([[Y]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf16>
// CHECK-NEXT: return [[R]] : tensor<128x256xf16>

// No finalist plans a conversion: the graph's six values (x, the two weights, the two
// products, the GeLU's result) are all there is.
// LOG: planned operator-plan frontier function=mlp frontier_sizes=
// LOG-NEXT: retained operator-plan finalist finalist=0 values=6 operations=3 {{.*}} conversion_sources=[]

// precision=fp8, @mlp: two split GEMMs (host_order = true, constant weights resident) on FP8
// inputs: the first on [1, 2, 8, 1] with x at scale 0 (no fp8-scale, no calibration) and W1 at -8 (its constant
// 0.5), the GeLU ranged in place on its AMP-output blocks, then the inserted cast of the
// GeLU's result to F8 at the policy scale (0: no scale attribute), which keeps the ranges'
// AMP-output format (no rearrange: the split lowering reads through the cast and casts each
// owner's range itself), and the second GEMM on [1, 2, 8, 1] taking the cast as its left
// operand with lhs_scale = the policy scale 0 and W2 at -9 (0.25).
// FP8-LABEL: func.func @mlp(
// FP8-NEXT: %cst = arith.constant
// FP8-NEXT: %cst_0 = arith.constant
// FP8-NEXT: [[X8:%[0-9]+]] = "ipu.cast"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf8E4M3FNUZ>
// FP8-NEXT: [[XA:%[0-9]+]] = "ipu.rearrange"([[X8]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf8E4M3FNUZ, #ipu.format<"amp_left"
// FP8-NEXT: [[W18:%[0-9]+]] = "ipu.cast"(%cst) {ipu.inserted, scale = -8 : i32}
// FP8-NEXT: [[W1A:%[0-9]+]] = "ipu.rearrange"([[W18]]) {ipu.inserted} : {{.*}} -> tensor<256x512xf8E4M3FNUZ, #ipu.format<"amp_right"
// FP8-NEXT: [[H8:%[0-9]+]] = "ipu.matmul"([[XA]], [[W1A]]) {{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 64 : i64, grid = [1, 2, 8, 1], host_order = true, k_block = 256 : i64, k_steps = 1 : i64, left = "interleaved", lhs_scale = 0 : i64, orientation = "normal", precision = "f8", rhs_scale = -8 : i64, tiles = 16 : i64, weights = "interleaved", weights_resident = true}
// FP8-SAME: -> tensor<128x512xf16, [[HFMT8:#ipu.format<"amp_output", \[64, 64\], \[2, 8\], \[0, 0\], "standard", 0 : i64>]]>
// FP8-NEXT: [[G8:%[0-9]+]] = "ipu.gelu"([[H8]]) {approximate = "tanh", {{.*}}plan = #ipu.plan<"pointwise_gelu", {precision = "f16", ranged = true}>} : (tensor<128x512xf16, [[HFMT8]]>) -> tensor<128x512xf16, [[HFMT8]]>
// FP8-NEXT: [[C8:%[0-9]+]] = "ipu.cast"([[G8]]) {ipu.inserted} : (tensor<128x512xf16, [[HFMT8]]>) -> tensor<128x512xf8E4M3FNUZ, [[HFMT8]]>
// FP8-NEXT: [[W28:%[0-9]+]] = "ipu.cast"(%cst_0) {ipu.inserted, scale = -9 : i32}
// FP8-NEXT: [[W2A:%[0-9]+]] = "ipu.rearrange"([[W28]]) {ipu.inserted} : {{.*}} -> tensor<512x256xf8E4M3FNUZ, #ipu.format<"amp_right"
// FP8-NEXT: [[Y8:%[0-9]+]] = "ipu.matmul"([[C8]], [[W2A]]) {{.*}}plan = #ipu.plan<"gemm_output_stationary", {c_block = 32 : i64, grid = [1, 2, 8, 1], host_order = true, k_block = 512 : i64, k_steps = 1 : i64, left = "interleaved", lhs_scale = 0 : i64, orientation = "normal", precision = "f8", rhs_scale = -9 : i64, tiles = 16 : i64, weights = "interleaved", weights_resident = true}
// FP8-SAME: : (tensor<128x512xf8E4M3FNUZ, [[HFMT8]]>, tensor<512x256xf8E4M3FNUZ, #ipu.format<"amp_right"
// FP8-NEXT: [[R8:%[0-9]+]] = "ipu.rearrange"([[Y8]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf16>
// FP8-NEXT: return [[R8]] : tensor<128x256xf16>

// precision=fp8, @mlp_shared: the GeLU's result also feeds an add with another full tensor,
// so nothing is held as ranges (no ranged plan). Both matmuls are split GEMMs offered beside
// the other strategies (host_order), each leaving its result in a row grid (8-row blocks on
// 16 tiles): the first streams x and W1 (at its scale -8) from the host; the GeLU and the add
// run in place on its rows (x's second use fetched onto them); the second gathers the GeLU's
// result, cast to F8 where it is at the policy scale (lhs_scale 0), from those rows, with W2
// resident at its own scale -9. The results are read back from their rows.
// FP8-LABEL: func.func @mlp_shared(
// FP8-NEXT: %cst = arith.constant
// FP8-NEXT: %cst_0 = arith.constant
// FP8-NEXT: [[SX8:%[0-9]+]] = "ipu.cast"(%arg0) {ipu.inserted} : (tensor<128x256xf16>) -> tensor<128x256xf8E4M3FNUZ>
// FP8-NEXT: [[SXA:%[0-9]+]] = "ipu.rearrange"([[SX8]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf8E4M3FNUZ, #ipu.format<"amp_left"
// FP8-NEXT: [[SW18:%[0-9]+]] = "ipu.cast"(%cst) {ipu.inserted, scale = -8 : i32}
// FP8-NEXT: [[SW1A:%[0-9]+]] = "ipu.rearrange"([[SW18]]) {ipu.inserted} : {{.*}} -> tensor<256x512xf8E4M3FNUZ, #ipu.format<"amp_right"
// FP8-NEXT: [[SH:%[0-9]+]] = "ipu.matmul"([[SXA]], [[SW1A]]) {{.*}}plan = #ipu.plan<"gemm_{{output_stationary|k_split}}", {c_block = {{[0-9]+}} : i64, grid = [1, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], host_order = true, {{.*}}lhs_scale = 0 : i64, orientation = "normal", precision = "f8", rhs_scale = -8 : i64,
// FP8-SAME: -> tensor<128x512xf16, [[SGF:#ipu.format<"row_major", \[8, 512\][^>]*>]]>
// FP8-NEXT: [[SG:%[0-9]+]] = "ipu.gelu"([[SH]]) {{.*}}plan = #ipu.plan<"pointwise_gelu", {in_place = true, precision = "f16"}>} : (tensor<128x512xf16, [[SGF]]>) -> tensor<128x512xf16, [[SGF]]>
// FP8-NEXT: [[SG8:%[0-9]+]] = "ipu.cast"([[SG]]) {ipu.inserted} : (tensor<128x512xf16, [[SGF]]>) -> tensor<128x512xf8E4M3FNUZ, #ipu.format<"row_major"
// FP8-NEXT: [[SW28:%[0-9]+]] = "ipu.cast"(%cst_0) {ipu.inserted, scale = -9 : i32} : (tensor<512x256xf16>) -> tensor<512x256xf8E4M3FNUZ>
// FP8-NEXT: [[SW2A:%[0-9]+]] = "ipu.rearrange"([[SW28]]) {ipu.inserted} : {{.*}} -> tensor<512x256xf8E4M3FNUZ, #ipu.format<"amp_right", {{.*}} "interleaved", -9 : i64>>
// FP8-NEXT: [[SY:%[0-9]+]] = "ipu.matmul"([[SG8]], [[SW2A]]) {{.*}}plan = #ipu.plan<"gemm_{{output_stationary|k_split}}", {c_block = {{[0-9]+}} : i64, grid = [1, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}], host_order = true, {{.*}}lhs_scale = 0 : i64, {{.*}}precision = "f8", rhs_scale = -9 : i64, tiles = 16 : i64, weights = "interleaved", weights_resident = true}
// FP8-SAME: -> tensor<128x256xf16, #ipu.format<"row_major", [8, 256],
// FP8-NEXT: [[SZ:%[0-9]+]] = "ipu.rearrange"(%arg1) {ipu.inserted} : (tensor<128x512xf16>) -> tensor<128x512xf16, #ipu.format<"row_major"
// FP8-NEXT: [[SS:%[0-9]+]] = "ipu.add"([[SG]], [[SZ]]) {{.*}}plan = #ipu.plan<"pointwise_add", {in_place = true, precision = "f16"}>} : (tensor<128x512xf16, [[SGF]]>
// FP8-NEXT: [[R1:%[0-9]+]] = "ipu.rearrange"([[SY]]) {ipu.inserted} : {{.*}} -> tensor<128x256xf16>
// FP8-NEXT: [[R2:%[0-9]+]] = "ipu.rearrange"([[SS]]) {ipu.inserted} : {{.*}} -> tensor<128x512xf16>
// FP8-NEXT: return [[R1]], [[R2]] : tensor<128x256xf16>, tensor<128x512xf16>

// @mlp: one device conversion, the GeLU's result (%4) cast to F8; its F8 copy is the
// seventh value (x and the weights are encoded by the host or at compile time).
// FP8-LOG: planned operator-plan frontier function=mlp frontier_sizes=
// FP8-LOG-NEXT: retained operator-plan finalist finalist=0 values=7 operations=3 {{.*}} conversion_sources=[%4]
// @mlp_shared: one device conversion, the GeLU's result (%5) cast to F8 on its tiles for the
// second split GEMM (x and the weights are encoded by the host or at compile time; the first
// product is left in rows).
// FP8-LOG: planned operator-plan frontier function=mlp_shared frontier_sizes=
// FP8-LOG-NEXT: retained operator-plan finalist finalist=0 values=9 operations=4 {{.*}} conversion_sources=[%5]
func.func @mlp(%x: tensor<128x256xf16>) -> tensor<128x256xf16> {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %w2 = arith.constant dense<0.25> : tensor<512x256xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  return %y : tensor<128x256xf16>
}

func.func @mlp_shared(%x: tensor<128x256xf16>, %z: tensor<128x512xf16>) -> (tensor<128x256xf16>, tensor<128x512xf16>) {
  %w1 = arith.constant dense<0.5> : tensor<256x512xf16>
  %w2 = arith.constant dense<0.25> : tensor<512x256xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<128x512xf16>) -> tensor<128x512xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<128x512xf16>, tensor<512x256xf16>) -> tensor<128x256xf16>
  %s = "ipu.add"(%g, %z) : (tensor<128x512xf16>, tensor<128x512xf16>) -> tensor<128x512xf16>
  return %y, %s : tensor<128x256xf16>, tensor<128x512xf16>
}
