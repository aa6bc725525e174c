// calibration=FILE: FP8 scales of function arguments from calibrated data ranges. The scale
// of max |x| = m is the smallest s with m / 2^s <= 240 (tiling::format::fp8_scale_for).
// @mlp is an MLP planned as chained split GEMMs (host_order = true): calibration (and a
// constant's own data: W1 = 0.5 -> -8) sets the scales of the operands the host streams or
// lays out (x, W1, W2), not of the hidden value. The GeLU's result is a device value: the
// planner inserts an ipu.cast of it (F16 -> F8 at the policy scale, fp8-scale, 0 when none is
// given) before the second matmul, whose plan records lhs_scale = that policy scale, as the
// host reference casts device values; its range, propagated from x's calibrated one, plays
// no part (in (a): 128 * 7.5 * 0.5 + 0.5 = 480.5, which would be scale 2).
//
// (a) max_abs numbers: arg0 7.5 = 240 * 2^-5 exactly -> -5; arg1 (by position) 30.000001,
// just above 240 * 2^-3 -> -2. The hidden value is cast at scale 0 (no fp8-scale).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%S/Inputs/calibration/max-abs.json dump-plans=%t.json})' | FileCheck %s --check-prefix=MAX
// RUN: FileCheck %s --check-prefix=DUMP < %t.json
// The dump pins the scales: fed back as constraints without the calibration it reproduces them
// (and ipu-select-finalist re-derives the recorded plans).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%S/Inputs/calibration/max-abs.json})' | grep -o '"ipu.cast".*scale = [-0-9]*' > %t.first
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 constraints-file=%t.json}, ipu-select-finalist)' | grep -o '"ipu.cast".*scale = [-0-9]*' | diff %t.first -
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%S/Inputs/calibration/max-abs.json})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
//
// (b) .npy samples (paths relative to the calibration file; "%arg0" by name, arg1 for @mlp
// only): x-f32.npy has max |x| 5 -> -5; w-f16.npy has max |x| 1000 -> 3. The hidden value is
// cast at scale 0 again.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%S/Inputs/calibration/npy.json})' | FileCheck %s --check-prefix=NPY
//
// (c) An explicit fp8-scale overrides calibration for every operand, and is the policy scale
// the hidden value is cast at.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 fp8-scale=-1 calibration=%S/Inputs/calibration/max-abs.json})' | FileCheck %s --check-prefix=GIVEN
//
// Without calibration arguments get scale 0 (the constant W1 keeps its -8).
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8})' | FileCheck %s --check-prefix=NONE
//
// Other precisions read (and check) the file but have no scales.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 precision=f16 calibration=%S/Inputs/calibration/max-abs.json})' | FileCheck %s --check-prefix=F16

// x at -5 and W1 at -8 for the first GEMM; the GeLU's result G cast at scale 0 (no scale
// attribute) keeping its AMP-output ranges' format (scale 0); W2 (arg1) at -2; the second
// GEMM reads the cast with lhs_scale 0 and W2 with rhs_scale -2.
// On the split path of a row-major left operand too (an MLP whose hidden value has another
// use, so the hidden value is not held as ranges and the second matmul gathers it from its
// row-major blocks), the device casts the hidden value at the policy scale (0 here, no scale
// attribute), whatever its propagated range, and the plan records lhs_scale = that scale, as
// the host reference casts; W2, a constant, has its own scale (0.25 -> -9).
// RUN: ipu-opt %S/mlp.mlir -p 'builtin.module(ipu-lower-mid{tiles=16 precision=fp8 calibration=%S/Inputs/calibration/max-abs.json})' | FileCheck %s --check-prefix=SHARED
// SHARED-LABEL: func.func @mlp_shared(
// SHARED: "ipu.cast"(%arg0) {ipu.inserted, scale = -5 : i32}
// SHARED: [[G:%[0-9]+]] = "ipu.gelu"
// SHARED-NEXT: "ipu.cast"([[G]]) {ipu.inserted} :
// SHARED: "ipu.matmul"({{.*}}plan = #ipu.plan<"gemm_{{output_stationary|k_split}}", {{.*}}host_order = true, {{.*}}lhs_scale = 0 : i64, {{.*}}precision = "f8", rhs_scale = -9 : i64

// MAX-LABEL: func.func @mlp
// MAX: "ipu.cast"(%arg0) {ipu.inserted, scale = -5 : i32} : (tensor<64x128xf16>) -> tensor<64x128xf8E4M3FNUZ>
// MAX: #ipu.format<"amp_left", {{.*}}, -5 : i64>>
// MAX: "ipu.cast"(%cst) {ipu.inserted, scale = -8 : i32}
// MAX: "ipu.matmul"{{.*}}host_order = true, {{.*}}lhs_scale = -5 : i64, {{.*}}rhs_scale = -8 : i64
// MAX: [[G:%[0-9]+]] = "ipu.gelu"
// MAX-NEXT: [[G8:%[0-9]+]] = "ipu.cast"([[G]]) {ipu.inserted} : (tensor<64x64xf16, [[GFMT:#ipu.format<"amp_output", [^>]*, 0 : i64>]]>) -> tensor<64x64xf8E4M3FNUZ, [[GFMT]]>
// MAX-NEXT: [[W28:%[0-9]+]] = "ipu.cast"(%arg1) {ipu.inserted, scale = -2 : i32} : (tensor<64x32xf16>) -> tensor<64x32xf8E4M3FNUZ>
// MAX-NEXT: [[W2:%[0-9]+]] = "ipu.rearrange"([[W28]])
// MAX-NEXT: "ipu.matmul"([[G8]], [[W2]]) {{.*}}host_order = true, {{.*}}lhs_scale = 0 : i64, {{.*}}rhs_scale = -2 : i64
// MAX-SAME: (tensor<64x64xf8E4M3FNUZ, [[GFMT]]>, tensor<64x32xf8E4M3FNUZ, #ipu.format<{{.*}}, -2 : i64>>)

// DUMP: "op": 0,
// DUMP: "lhs_scale": -5,
// DUMP: "rhs_scale": -8,
// DUMP: "op": 3,
// DUMP: "lhs_scale": 0,
// DUMP: "rhs_scale": -2,

// LOG: calibrated argument range function=mlp argument=0 max_abs=7.5 source=max_abs fp8_scale=-5
// LOG: calibrated argument range function=mlp argument=1 max_abs=30.000001 source=max_abs fp8_scale=-2

// NPY: "ipu.cast"(%arg0) {ipu.inserted, scale = -5 : i32}
// NPY: "ipu.matmul"{{.*}}lhs_scale = -5 : i64, {{.*}}rhs_scale = -8 : i64
// NPY: [[G:%[0-9]+]] = "ipu.gelu"
// NPY-NEXT: "ipu.cast"([[G]]) {ipu.inserted} :
// NPY-NEXT: "ipu.cast"(%arg1) {ipu.inserted, scale = 3 : i32}
// NPY: "ipu.matmul"{{.*}}lhs_scale = 0 : i64, {{.*}}rhs_scale = 3 : i64

// GIVEN: "ipu.cast"(%arg0) {ipu.inserted, scale = -1 : i32}
// GIVEN: "ipu.cast"(%cst) {ipu.inserted, scale = -1 : i32}
// GIVEN: "ipu.matmul"{{.*}}lhs_scale = -1 : i64, {{.*}}rhs_scale = -1 : i64
// GIVEN: [[G:%[0-9]+]] = "ipu.gelu"
// GIVEN-NEXT: [[G8:%[0-9]+]] = "ipu.cast"([[G]]) {ipu.inserted, scale = -1 : i32} : {{.*}} -> tensor<64x64xf8E4M3FNUZ, #ipu.format<"amp_output", {{.*}}, -1 : i64>>
// GIVEN-NEXT: "ipu.cast"(%arg1) {ipu.inserted, scale = -1 : i32}
// GIVEN: "ipu.matmul"([[G8]], {{.*}}lhs_scale = -1 : i64, {{.*}}rhs_scale = -1 : i64

// NONE: "ipu.cast"(%arg0) {ipu.inserted} :
// NONE: "ipu.matmul"{{.*}}lhs_scale = 0 : i64, {{.*}}rhs_scale = -8 : i64
// NONE: [[G:%[0-9]+]] = "ipu.gelu"
// NONE-NEXT: "ipu.cast"([[G]]) {ipu.inserted} :
// NONE-NEXT: "ipu.cast"(%arg1) {ipu.inserted} :
// NONE: "ipu.matmul"{{.*}}lhs_scale = 0 : i64, {{.*}}rhs_scale = 0 : i64

// F16-NOT: {{scale = |lhs_scale|rhs_scale}}
// F16: "ipu.matmul"{{.*}}precision = "f16"
// F16-NOT: {{scale = |lhs_scale|rhs_scale}}

func.func @mlp(%x: tensor<64x128xf16>, %w2: tensor<64x32xf16>) -> tensor<64x32xf16> {
  %w1 = arith.constant dense<0.5> : tensor<128x64xf16>
  %b = arith.constant dense<0.5> : tensor<64xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<64x128xf16>, tensor<128x64xf16>) -> tensor<64x64xf16>
  %hb = "ipu.add"(%h, %b) : (tensor<64x64xf16>, tensor<64xf16>) -> tensor<64x64xf16>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<64x64xf16>) -> tensor<64x64xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<64x64xf16>, tensor<64x32xf16>) -> tensor<64x32xf16>
  return %y : tensor<64x32xf16>
}
