// One RUN per option of ipu-compile, on a 32x64x64 F16 GEMM.
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' | FileCheck %s --check-prefix=F16
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=f16 target=bow compile-kernels=false})' | FileCheck %s --check-prefix=BOW
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=fp8 fp8-scale=-4 compile-kernels=false})' | FileCheck %s --check-prefix=FP8
// The same option on a GEMM the split lowering does not take (K = 200, see
// Inputs/gemm_fp8_k200.mlir), which keeps the on-device casts.
// RUN: ipu-opt %S/Inputs/gemm_fp8_k200.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 fp8-scale=-4 compile-kernels=false})' | FileCheck %s --check-prefix=FP8-PAD
// RUN: ipu-opt %S/../../Runtime/Inputs/mlp_small_k120.mlir -p 'builtin.module(ipu-compile{tiles=64 precision=fp8 fp8-scale=-4 compile-kernels=false constraints-file=%S/../../Runtime/Inputs/mlp_small_k120-general.json})' | FileCheck %s --check-prefix=FP8-CAST
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 finalists=1 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FINALISTS
// function= picks the function lowered to tiles (planning still plans every function).
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 function=other compile-kernels=false})' | FileCheck %s --check-prefix=FUNCTION
// RUN: not ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 function=missing compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=MISSING
// FUNCTION-NOT: module @gemm.tiles
// FUNCTION: module @other.tiles attributes {ipu_tile.function = "other"
// FUNCTION-NOT: module @gemm.tiles
// MISSING: no function 'missing'
// compile-kernels (the default) compiles every specialization through the kernel cache as
// its own phase.
// RUN: rm -rf %t.cache
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-compile{tiles=4})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-compile{tiles=4 compile-kernels=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-KERNELS

// tiles=8: every buffer and the code on tiles 0..7, F16 kernels.
// F16: ipu.plan_options = "{target=c600 tiles=8
// F16: module @gemm.tiles attributes {ipu_tile.function = "gemm", ipu_tile.target = "c600", ipu_tile.tiles = 1472 : i64}
// F16-NOT: cast_f16_f8
// F16: name = "gemm_f16_interleaved_
// F16: "ipu_tile.code"() {final_cycles = {{[0-9]+}} : i64, final_exchange = {{[0-9]+}} : i64, tiles = array<i32: 0, 1, 2, 3, 4, 5, 6, 7>}

// BOW: ipu.plan_options = "{target=bow
// BOW: ipu_tile.target = "bow"
// BOW: "ipu_tile.code"

// fp8-scale=-4 is the FP8 scale of both operands. Both come from the host (F16) and the
// product is only returned, so the split GEMM lowering takes it: the plan records the two
// scales, the host encodes A and B in FP8 at 2^-4 as it streams them (scale_exp = -4), and
// every GEMM call gets both scales (-4 as the u32 argument 4294967292) after its row entry.
// Nothing is cast on the device.
// FP8: ipu.plan_options = "{target=c600 tiles=8 active-tiles= precision=fp8 fp8-scale=-4
// FP8: "ipu.matmul"{{.*}}host_order = true,{{.*}}lhs_scale = -4 : i64,{{.*}}precision = "f8", rhs_scale = -4 : i64,
// FP8: module @gemm.tiles
// FP8-NOT: cast_f16_f8
// FP8: name = "gemm_f8_interleaved_k64_c16_r{{[0-9]+}}"
// FP8-NOT: cast_f16_f8
// FP8: "ipu_tile.stream"() {name = "arg0", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -4 : i64, shape = array<i64: 32, 64>}
// FP8-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -4 : i64, shape = array<i64: 64, 64>}
// FP8-NEXT: "ipu_tile.stream"() {name = "result0", pieces = {{.*}}, precision = "f16", role = "output", shape = array<i64: 32, 64>}
// FP8-NOT: provenance = "op0.convert"
// FP8: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: 0, {{[0-9]+}}, 2, {{.*}}, 0, {{[0-9]+}}, 6, {{[0-9]+}}, 0, {{[0-9]+}}, 0, {{[0-9]+}}, 0, -1, 0, -1, 4294967292, -1, 4294967292, {{.*}}>}
// FP8-NOT: provenance = "op0.convert"
// FP8: "ipu_tile.code"

// With K = 200 (not whole 16-groups) the split GEMM pads K on the host: fp8-scale=-4 reaches
// the host streams (FP8 at scale -4) and every GEMM call; a strided piece ending in 8 zero
// bytes per run pads A's last group; nothing is cast on the device.
// FP8-PAD: module @gemm.tiles
// FP8-PAD-NOT: cast_f16_f8
// FP8-PAD: "ipu_tile.stream"() {name = "arg0", pieces = {{.*}}array<i64: {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, 200, 8>{{.*}}, precision = "f8", role = "input", scale_exp = -4 : i64, shape = array<i64: 250, 200>}
// FP8-PAD-NEXT: "ipu_tile.stream"() {name = "arg1", pieces = {{.*}}, precision = "f8", role = "input", scale_exp = -4 : i64, shape = array<i64: 200, 512>}
// FP8-PAD: "ipu_tile.compute"() {program = "run", provenance = "op0", runs = array<i64: {{.*}}, 0, -1, {{[0-9]+}}, -1, 4294967292, -1, 4294967292, {{.*}}>}
// FP8-PAD: "ipu_tile.code"

// Pinned to the output-stationary lowering (Runtime/Inputs/mlp_small_k120.mlir, K = 120, its
// first matmul pinned with host_order false), the device casts A and B: fp8-scale=-4 reaches
// the casts (the last argument of each cast run).
// FP8-CAST: module @mlp.tiles
// FP8-CAST: "ipu_tile.kernel"() {index = [[CAST:[0-9]+]] : i64, name = "cast_f16_f8_n192"
// FP8-CAST: "ipu_tile.stream"() {name = "arg0", pieces = {{.*}}, precision = "f16", role = "input", shape = array<i64: 2, 48, 120>}
// FP8-CAST: "ipu_tile.compute"() {program = "run", provenance = "op0.convert", runs = array<i64: 0, [[CAST]], 3, {{[0-9]+}}, 0, {{[0-9]+}}, 0, -1, 4294967292, {{.*}}>}
// FP8-CAST: "ipu_tile.code"

// FINALISTS: retained operator-plan finalist finalist=0
// FINALISTS-NOT: finalist=1
// FINALISTS: selected physically scheduled operator-plan finalist selected=0
// FINALISTS: pass finished pass=ipu-emit-tile-code op=builtin.module elapsed_ms={{[0-9]+}} success=true

// KERNELS: package build phase finished phase="plan_kernels"
// KERNELS: compiling kernel source={{.*}}gemm.mlir name="gemm_f16_interleaved_
// KERNELS: package build phase finished phase="compile_kernels" elapsed_ms={{[0-9]+}} success=true
// KERNELS-NEXT: package build phase finished phase="link_runtime"

// NO-KERNELS: package build phase finished phase="plan_kernels"
// NO-KERNELS-NOT: compiling kernel
// NO-KERNELS-NEXT: package build phase finished phase="link_runtime"

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @other(%x: tensor<16x32xf16>, %w: tensor<32x32xf16>) -> tensor<16x32xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<16x32xf16>, tensor<32x32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}
