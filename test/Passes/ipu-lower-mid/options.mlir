// One RUN per option of ipu-lower-mid, on one GEMM.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' | FileCheck %s --check-prefix=FP8
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 fp8-scale=-3})' | FileCheck %s --check-prefix=SCALE
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=f32})' | FileCheck %s --check-prefix=F32
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=native})' | FileCheck %s --check-prefix=NATIVE
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 weight-memory=standard})' | FileCheck %s --check-prefix=WSTD
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 active-tiles=4})' | FileCheck %s --check-prefix=ACTIVE
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints={"ops":[{"op":0,"kind":"gemm_output_stationary","params":{"grid":[1,2,8,1],"weights":"interleaved"}}]}})' | FileCheck %s --check-prefix=PINNED
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints-file=%S/Inputs/constraints.json})' | FileCheck %s --check-prefix=PINNED
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 dump-plans=%t.json})' -o /dev/null
// RUN: FileCheck %s --check-prefix=DUMP < %t.json
// The dump, fed back as constraints, reproduces the same plan.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 dump-plans=%t.json})' | grep -o 'plan = .*}>' > %t.first
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 constraints-file=%t.json})' | grep -o 'plan = .*}>' | diff %t.first -
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 beam-width=1 candidates-per-op=1 finalists=1})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{target=bow tiles=16})' | FileCheck %s --check-prefix=BOW

// With precision=fp8 both operands are encoded as F143 (the weights with a scale from their
// range: 0.5 needs 2^-8 to sit under 240; x, an argument of unknown range, at scale 0) and the
// GEMM runs on FP8 inputs with F16 output. Both operands are host tensors and K, N are whole
// 16-groups, so every finalist is a split GEMM plan (host_order: the host encodes each
// operand in FP8 at its own scale as it streams it into AMP order) recording the two scales
// (lhs_scale, rhs_scale). The planned function still shows the encodings as casts.
// FP8: ipu.finalists = "{\22functions\22:{\22gemm\22:[
// FP8-NOT: {{\\22grid\\22:\[[0-9,]*\],\\22k_block}}
// FP8: "ipu.cast"(%arg0) {ipu.inserted} : (tensor<64x128xf16>) -> tensor<64x128xf8E4M3FNUZ>
// FP8: "ipu.cast"(%cst) {ipu.inserted, scale = -8 : i32}
// FP8: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_{{[a-z_]+}}", {{.*}}host_order = true,{{.*}}lhs_scale = 0 : i64,{{.*}}precision = "f8", rhs_scale = -8 : i64,{{.*}} -> tensor<64x256xf16,

// fp8-scale=-3 pins both operands' scale.
// SCALE: "ipu.cast"(%arg0) {ipu.inserted, scale = -3 : i32}
// SCALE: "ipu.cast"(%cst) {ipu.inserted, scale = -3 : i32}
// SCALE: "ipu.matmul"{{.*}}host_order = true,{{.*}}lhs_scale = -3 : i64,{{.*}}rhs_scale = -3 : i64,

// F32: "ipu.cast"(%arg0) {ipu.inserted} : (tensor<64x128xf16>) -> tensor<64x128xf32>
// F32: "ipu.matmul"{{.*}}precision = "f32"{{.*}} -> tensor<64x256xf32,

// precision=native: the product runs in its operands' own type (the f32 policy casts this
// returned-only F16 product up); nothing is converted.
// NATIVE-NOT: "ipu.cast"
// NATIVE: "ipu.matmul"{{.*}}precision = "f16"{{.*}} -> tensor<64x256xf16,
// NATIVE-NOT: "ipu.cast"

// WSTD: "ipu.matmul"{{.*}}weights = "standard"

// ACTIVE: "ipu.matmul"{{.*}}tiles = 4 : i64

// The pinned grid is kept; the planner marks it host_order (both operands come from the host
// in F16, so the lowering streams them straight into AMP order).
// PINNED: "ipu.matmul"{{.*}}plan = #ipu.plan<"gemm_output_stationary", {{{.*}}grid = [1, 2, 8, 1], host_order = true, {{.*}}weights = "interleaved", weights_resident = {{true|false}}}>

// DUMP: "ops": [
// DUMP: "kind": "gemm_
// DUMP: "op": 0,
// DUMP: "grid": [
// DUMP: "host_order": true,

// One candidate, one finalist. The F16 GEMM's operands come from the host in the AMP input
// precision, so the plan is a host_order one and no conversion is planned for them: values
// counts only the graph's three (x, the constant, the product) and conversion_sources is empty.
// LOG: planned operator-plan frontier function=gemm frontier_sizes=[1] candidates=1
// LOG: retained operator-plan finalist finalist=0 values=3 operations=1 estimated_cycles={{[0-9]+}} estimated_exchange_cycles={{[0-9]+}} exchange_row_bytes={{[0-9]+}} peak_standard_bytes={{[0-9]+}} peak_interleaved_bytes={{[0-9]+}} peak_total_bytes={{[0-9]+}} maximum_standard_allocation_bytes={{[0-9]+}} active_tile_counts={16} padding_group_counts={} conversion_sources=[]
// LOG-NOT: finalist=1

// BOW: plan = #ipu.plan<"gemm_

func.func @gemm(%x: tensor<64x128xf16>) -> tensor<64x256xf16> {
  %w = arith.constant dense<0.5> : tensor<128x256xf16>
  %h = "ipu.matmul"(%x, %w) : (tensor<64x128xf16>, tensor<128x256xf16>) -> tensor<64x256xf16>
  return %h : tensor<64x256xf16>
}
