// One RUN per option of ipu-compile, on a 32x64x64 F16 GEMM.
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 compile-kernels=false})' | FileCheck %s --check-prefix=F16
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=f16 target=bow compile-kernels=false})' | FileCheck %s --check-prefix=BOW
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=fp8 fp8-scale=-4 compile-kernels=false})' | FileCheck %s --check-prefix=FP8
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

// fp8-scale=-4 reaches the on-device casts (-4 as the u32 argument 4294967292).
// FP8: ipu.plan_options = "{target=c600 tiles=8 active-tiles= precision=fp8 fp8-scale=-4
// FP8-DAG: name = "cast_f16_f8_n{{[0-9]+}}"
// FP8-DAG: name = "gemm_f8_interleaved_
// FP8: "ipu_tile.compute"() {program = "run", provenance = "op0.{{[a-z]+}}", runs = array<i64: {{.*}}, -1, 4294967292
// FP8: "ipu_tile.code"

// FINALISTS: retained operator-plan finalist finalist=0
// FINALISTS-NOT: finalist=1
// FINALISTS: selected physically scheduled operator-plan finalist selected=0
// FINALISTS: pass finished pass=ipu-compile op=builtin.module elapsed_ms={{[0-9]+}} success=true

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
