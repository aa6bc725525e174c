// RUN: ipu-opt %s | ipu-opt | FileCheck %s
// RUN: ipu-opt %s --mlir-print-op-generic | ipu-opt | FileCheck %s

// Valid IR for every ipu op and its variants: each case parses, passes the IRDL and Rust
// verifiers, and prints back to the same op (also through the generic form).

// CHECK-LABEL: func.func @matmul_plain
// CHECK-SAME: (%[[A:.*]]: tensor<4x16xf16>, %[[B:.*]]: tensor<16x8xf16>)
// CHECK: "ipu.matmul"(%[[A]], %[[B]]) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
func.func @matmul_plain(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// Both transpose flags: [16, 4]^T @ [8, 16]^T is [4, 8]; `true` is accepted like a unit flag.
// CHECK-LABEL: func.func @matmul_transposed
// CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) {transpose_lhs, transpose_rhs = true} : (tensor<16x4xf16>, tensor<8x16xf16>) -> tensor<4x8xf16>
func.func @matmul_transposed(%a: tensor<16x4xf16>, %b: tensor<8x16xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.matmul"(%a, %b) {transpose_lhs, transpose_rhs = true} : (tensor<16x4xf16>, tensor<8x16xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// A false flag means no transpose.
// CHECK-LABEL: func.func @matmul_false_flag
// CHECK: "ipu.matmul"(%{{.*}}, %{{.*}}) {transpose_lhs = false}
func.func @matmul_false_flag(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.matmul"(%a, %b) {transpose_lhs = false} : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

// Batch axes broadcast: [2, 1] with [3] gives [2, 3].
// CHECK-LABEL: func.func @matmul_batch_broadcast
// CHECK: "ipu.matmul"{{.*}} -> tensor<2x3x4x8xf32>
func.func @matmul_batch_broadcast(%a: tensor<2x1x4x16xf32>, %b: tensor<3x16x8xf32>) -> tensor<2x3x4x8xf32> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<2x1x4x16xf32>, tensor<3x16x8xf32>) -> tensor<2x3x4x8xf32>
  return %0 : tensor<2x3x4x8xf32>
}

// f16 products may accumulate into f32; FP8 products into f16 or f32.
// CHECK-LABEL: func.func @matmul_accumulators
// CHECK: "ipu.matmul"{{.*}} -> tensor<4x8xf32>
// CHECK: "ipu.matmul"{{.*}} -> tensor<4x8xf16>
// CHECK: "ipu.matmul"{{.*}} -> tensor<4x8xf32>
func.func @matmul_accumulators(%a: tensor<4x16xf16>, %b: tensor<16x8xf16>, %qa: tensor<4x16xf8E4M3FNUZ>, %qb: tensor<16x8xf8E4M3FNUZ>, %ra: tensor<4x16xf8E5M2FNUZ>, %rb: tensor<16x8xf8E5M2FNUZ>) -> (tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>) {
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xf16>, tensor<16x8xf16>) -> tensor<4x8xf32>
  %1 = "ipu.matmul"(%qa, %qb) : (tensor<4x16xf8E4M3FNUZ>, tensor<16x8xf8E4M3FNUZ>) -> tensor<4x8xf16>
  %2 = "ipu.matmul"(%ra, %rb) : (tensor<4x16xf8E5M2FNUZ>, tensor<16x8xf8E5M2FNUZ>) -> tensor<4x8xf32>
  return %0, %1, %2 : tensor<4x8xf32>, tensor<4x8xf16>, tensor<4x8xf32>
}

// Operands in tile formats, with an operator plan and estimates attached by planning.
// CHECK-LABEL: func.func @matmul_planned
// CHECK: "ipu.matmul"{{.*}}estimate = #ipu.estimate<{{.*}}>, plan = #ipu.plan<"gemm_output_stationary", {c_block = 16 : i64, grid = [1, 2, 2, 1], k_block = 16 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 4 : i64, weights = "interleaved", weights_resident = false}>
// CHECK-SAME: #ipu.format<"amp_left", [4, 16], [1, 1], [0, 0], "interleaved", 0 : i64>
func.func @matmul_planned(%a: tensor<4x16xf16, #ipu.format<"amp_left", [4, 16], [1, 1], [0, 0], "interleaved", 0>>, %b: tensor<16x8xf16, #ipu.format<"amp_right", [16, 8], [1, 2], [0, 0], "interleaved", 0>>) -> tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [2, 2], [0, 0], "standard", 0>> {
  %0 = "ipu.matmul"(%a, %b) {plan = #ipu.plan<"gemm_output_stationary", {c_block = 16 : i64, grid = [1, 2, 2, 1], k_block = 16 : i64, k_steps = 1 : i64, left = "interleaved", orientation = "normal", precision = "f16", tiles = 4 : i64, weights = "interleaved", weights_resident = false}>, estimate = #ipu.estimate<1200, 300, 4096, 8192, 12288, 2048>} : (tensor<4x16xf16, #ipu.format<"amp_left", [4, 16], [1, 1], [0, 0], "interleaved", 0>>, tensor<16x8xf16, #ipu.format<"amp_right", [16, 8], [1, 2], [0, 0], "interleaved", 0>>) -> tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [2, 2], [0, 0], "standard", 0>>
  return %0 : tensor<4x8xf16, #ipu.format<"amp_output", [4, 8], [2, 2], [0, 0], "standard", 0>>
}

// Elementwise add with NumPy broadcasting in both directions and across ranks.
// CHECK-LABEL: func.func @add_broadcasting
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>, %[[BIAS:.*]]: tensor<8xf16>, %[[COL:.*]]: tensor<4x1xf16>, %[[ROW:.*]]: tensor<1x8xf16>,
// CHECK: "ipu.add"(%[[X]], %[[BIAS]]) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.add"(%[[COL]], %[[ROW]]) : (tensor<4x1xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.add"(%[[BIAS]], %{{.*}}) : (tensor<8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
func.func @add_broadcasting(%x: tensor<4x8xf16>, %bias: tensor<8xf16>, %col: tensor<4x1xf16>, %row: tensor<1x8xf16>, %batch: tensor<2x4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>, tensor<2x4x8xf16>) {
  %0 = "ipu.add"(%x, %bias) : (tensor<4x8xf16>, tensor<8xf16>) -> tensor<4x8xf16>
  %1 = "ipu.add"(%col, %row) : (tensor<4x1xf16>, tensor<1x8xf16>) -> tensor<4x8xf16>
  %2 = "ipu.add"(%bias, %batch) : (tensor<8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %0, %1, %2 : tensor<4x8xf16>, tensor<4x8xf16>, tensor<2x4x8xf16>
}

// GeLU in its default (erf) form, spelled out, and the tanh form.
// CHECK-LABEL: func.func @gelu_forms
// CHECK: "ipu.gelu"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.gelu"(%{{.*}}) {approximate = "erf"}
// CHECK: "ipu.gelu"(%{{.*}}) {approximate = "tanh"}
func.func @gelu_forms(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = "ipu.gelu"(%0) {approximate = "erf"} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %2 = "ipu.gelu"(%1) {approximate = "tanh"} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %2 : tensor<4x8xf16>
}

// Softmax over the last axis of a rank-3 tensor; a rank-1 input is fine too.
// CHECK-LABEL: func.func @softmax_ranks
// CHECK: "ipu.softmax"(%{{.*}}) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: "ipu.softmax"(%{{.*}}) : (tensor<8xf8E4M3FNUZ>) -> tensor<8xf8E4M3FNUZ>
func.func @softmax_ranks(%x: tensor<2x4x8xf32>, %y: tensor<8xf8E4M3FNUZ>) -> (tensor<2x4x8xf32>, tensor<8xf8E4M3FNUZ>) {
  %0 = "ipu.softmax"(%x) : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %1 = "ipu.softmax"(%y) : (tensor<8xf8E4M3FNUZ>) -> tensor<8xf8E4M3FNUZ>
  return %0, %1 : tensor<2x4x8xf32>, tensor<8xf8E4M3FNUZ>
}

// Layer norm with gamma and beta of the last axis' size.
// CHECK-LABEL: func.func @layer_norm_last_axis
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf16>, %[[G:.*]]: tensor<8xf16>, %[[B:.*]]: tensor<8xf16>)
// CHECK: "ipu.layer_norm"(%[[X]], %[[G]], %[[B]]) {epsilon = 9.99999997E-7 : f32}
func.func @layer_norm_last_axis(%x: tensor<2x4x8xf16>, %g: tensor<8xf16>, %b: tensor<8xf16>) -> tensor<2x4x8xf16> {
  %0 = "ipu.layer_norm"(%x, %g, %b) {epsilon = 1.0e-06 : f32} : (tensor<2x4x8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// Self attention, causal with an explicit scale, over batched heads.
// CHECK-LABEL: func.func @attention_causal_scaled
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8xf16>, %[[K:.*]]: tensor<2x4x8xf16>, %[[V:.*]]: tensor<2x4x8xf16>)
// CHECK: "ipu.attention"(%[[Q]], %[[K]], %[[V]]) {causal, scale = 1.250000e-01 : f32}
func.func @attention_causal_scaled(%q: tensor<2x4x8xf16>, %k: tensor<2x4x8xf16>, %v: tensor<2x4x8xf16>) -> tensor<2x4x8xf16> {
  %0 = "ipu.attention"(%q, %k, %v) {causal, scale = 0.125 : f32} : (tensor<2x4x8xf16>, tensor<2x4x8xf16>, tensor<2x4x8xf16>) -> tensor<2x4x8xf16>
  return %0 : tensor<2x4x8xf16>
}

// Cross attention: 4 queries over 6 keys, head size 8, value width 16.
// CHECK-LABEL: func.func @attention_cross
// CHECK: "ipu.attention"{{.*}} : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x16xf32>) -> tensor<4x16xf32>
func.func @attention_cross(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x16xf32>) -> tensor<4x16xf32> {
  %0 = "ipu.attention"(%q, %k, %v) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// Casts between every precision; FP8 scales at both ends of [-31, 31].
// CHECK-LABEL: func.func @cast_precisions
// CHECK: "ipu.cast"(%{{.*}}) {scale = -31 : i32} : (tensor<4xf16>) -> tensor<4xf8E4M3FNUZ>
// CHECK: "ipu.cast"(%{{.*}}) {scale = 31 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E5M2FNUZ>
// CHECK: "ipu.cast"(%{{.*}}) : (tensor<4xf8E5M2FNUZ>) -> tensor<4xf32>
// CHECK: "ipu.cast"(%{{.*}}) {scale = 0 : i32} : (tensor<4xf32>) -> tensor<4xf16>
func.func @cast_precisions(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "ipu.cast"(%x) {scale = -31 : i32} : (tensor<4xf16>) -> tensor<4xf8E4M3FNUZ>
  %1 = "ipu.cast"(%0) {scale = 31 : i32} : (tensor<4xf8E4M3FNUZ>) -> tensor<4xf8E5M2FNUZ>
  %2 = "ipu.cast"(%1) : (tensor<4xf8E5M2FNUZ>) -> tensor<4xf32>
  %3 = "ipu.cast"(%2) {scale = 0 : i32} : (tensor<4xf32>) -> tensor<4xf16>
  return %3 : tensor<4xf16>
}

// Rearranges: into a tile format, a transpose, a rank-3 permutation, and between formats.
// CHECK-LABEL: func.func @rearrange_forms
// CHECK: "ipu.rearrange"(%{{.*}}) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0 : i64>>
// CHECK: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
// CHECK: "ipu.rearrange"(%{{.*}}) {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x8xf16>) -> tensor<8x2x4xf16>
// CHECK: "ipu.rearrange"(%{{.*}}) : (tensor<4x8xf16, #ipu.format<"amp_left", {{.*}}>>) -> tensor<4x8xf16, #ipu.format<"row_major", [0, 0], [2, 1], [4, 0], "interleaved", 0 : i64>>
func.func @rearrange_forms(%x: tensor<4x8xf16>, %y: tensor<2x4x8xf16>) -> (tensor<8x4xf16>, tensor<8x2x4xf16>, tensor<4x8xf16, #ipu.format<"row_major", [0, 0], [2, 1], [4, 0], "interleaved", 0>>) {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>
  %1 = "ipu.rearrange"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x8xf16>) -> tensor<8x4xf16>
  %2 = "ipu.rearrange"(%y) {permutation = array<i64: 2, 0, 1>} : (tensor<2x4x8xf16>) -> tensor<8x2x4xf16>
  %3 = "ipu.rearrange"(%0) : (tensor<4x8xf16, #ipu.format<"amp_left", [4, 8], [1, 1], [0, 0], "standard", 0>>) -> tensor<4x8xf16, #ipu.format<"row_major", [0, 0], [2, 1], [4, 0], "interleaved", 0>>
  return %1, %2, %3 : tensor<8x4xf16>, tensor<8x2x4xf16>, tensor<4x8xf16, #ipu.format<"row_major", [0, 0], [2, 1], [4, 0], "interleaved", 0>>
}

// Reshapes: a head split, a head merge and a flattening; any shape of the same elements.
// CHECK-LABEL: func.func @reshape_forms
// CHECK: "ipu.reshape"(%{{.*}}) : (tensor<197x768xf16>) -> tensor<197x12x64xf16>
// CHECK: "ipu.reshape"(%{{.*}}) : (tensor<197x12x64xf16>) -> tensor<197x768xf16>
// CHECK: "ipu.reshape"(%{{.*}}) : (tensor<2x3x4xf32>) -> tensor<24xf32>
func.func @reshape_forms(%x: tensor<197x768xf16>, %y: tensor<2x3x4xf32>) -> (tensor<197x768xf16>, tensor<24xf32>) {
  %0 = "ipu.reshape"(%x) : (tensor<197x768xf16>) -> tensor<197x12x64xf16>
  %1 = "ipu.reshape"(%0) : (tensor<197x12x64xf16>) -> tensor<197x768xf16>
  %2 = "ipu.reshape"(%y) : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return %1, %2 : tensor<197x768xf16>, tensor<24xf32>
}

// FP8 tensors carry their scale exponent in the format.
// CHECK-LABEL: func.func @fp8_format_scale
// CHECK-SAME: tensor<4x8xf8E4M3FNUZ, #ipu.format<"amp_right", [4, 8], [1, 1], [0, 0], "interleaved", -3 : i64>>
func.func @fp8_format_scale(%x: tensor<4x8xf8E4M3FNUZ>) -> tensor<4x8xf8E4M3FNUZ, #ipu.format<"amp_right", [4, 8], [1, 1], [0, 0], "interleaved", -3>> {
  %0 = "ipu.rearrange"(%x) : (tensor<4x8xf8E4M3FNUZ>) -> tensor<4x8xf8E4M3FNUZ, #ipu.format<"amp_right", [4, 8], [1, 1], [0, 0], "interleaved", -3>>
  return %0 : tensor<4x8xf8E4M3FNUZ, #ipu.format<"amp_right", [4, 8], [1, 1], [0, 0], "interleaved", -3>>
}

func.func private @layer(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.gelu"(%x) : (tensor<4x8xf16>) -> tensor<4x8xf16>
  return %0 : tensor<4x8xf16>
}

func.func private @pair(%x: tensor<4x8xf16>, %y: tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>)

// A loop over a body function, with one and with two carried values.
// CHECK-LABEL: func.func @repeat_bodies
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf16>)
// CHECK: %[[ONE:.*]] = "ipu.repeat"(%[[X]]) {body = @layer, count = 27 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
// CHECK: "ipu.repeat"(%[[ONE]], %[[X]]) {body = @pair, count = 1 : i64} : (tensor<4x8xf16>, tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>)
func.func @repeat_bodies(%x: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %0 = "ipu.repeat"(%x) {body = @layer, count = 27 : i64} : (tensor<4x8xf16>) -> tensor<4x8xf16>
  %1:2 = "ipu.repeat"(%0, %x) {body = @pair, count = 1 : i64} : (tensor<4x8xf16>, tensor<4x8xf16>) -> (tensor<4x8xf16>, tensor<4x8xf16>)
  return %1#1 : tensor<4x8xf16>
}

// A strided window and a join on a leading and on the last axis.
// CHECK-LABEL: func.func @slice_and_concat
// CHECK: %[[W:.*]] = "ipu.slice"(%{{.*}}) {offsets = array<i64: 1, 32>, strides = array<i64: 2, 1>} : (tensor<8x96xf16>) -> tensor<4x32xf16>
// CHECK: %[[R:.*]] = "ipu.concat"(%{{.*}}, %[[W]]) {axis = 0 : i64} : (tensor<1x32xf16>, tensor<4x32xf16>) -> tensor<5x32xf16>
// CHECK: "ipu.concat"(%[[R]], %[[R]]) {axis = 1 : i64} : (tensor<5x32xf16>, tensor<5x32xf16>) -> tensor<5x64xf16>
func.func @slice_and_concat(%x: tensor<8x96xf16>, %c: tensor<1x32xf16>) -> tensor<5x64xf16> {
  %0 = "ipu.slice"(%x) {offsets = array<i64: 1, 32>, strides = array<i64: 2, 1>} : (tensor<8x96xf16>) -> tensor<4x32xf16>
  %1 = "ipu.concat"(%c, %0) {axis = 0 : i64} : (tensor<1x32xf16>, tensor<4x32xf16>) -> tensor<5x32xf16>
  %2 = "ipu.concat"(%1, %1) {axis = 1 : i64} : (tensor<5x32xf16>, tensor<5x32xf16>) -> tensor<5x64xf16>
  return %2 : tensor<5x64xf16>
}
