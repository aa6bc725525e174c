// ipu-plan-kernels names every kernel specialization of the tile program (the seed's names)
// and leaves the program as it is; compile=false skips the kernel cache.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// The program is unchanged.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' -o %t.tiles.mlir
// RUN: ipu-opt %t.tiles.mlir -p 'builtin.module(ipu-plan-kernels{compile=false})' | diff %t.tiles.mlir -
// With FP8 inputs the casts are specializations too.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8

// CHECK: module @gemm.tiles
// CHECK: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "rearrange_amp_left_f16_o0_r8_p8_c64_p64"
// CHECK-NOT: address =
// CHECK: "ipu_tile.host_read"

// LOG-DAG: planned kernel specialization kernel=rearrange_amp_left_f16_o0_r8_p8_c64_p64
// LOG-DAG: planned kernel specialization kernel=rearrange_amp_right_f16_o0_r16_p16_c64_p64
// LOG-DAG: planned kernel specialization kernel=gemm_f16_interleaved_k64_c64_r8
// LOG-DAG: planned kernel specialization kernel=rearrange_from_amp_output_f16_o0_r8_p8_c64_p64
// LOG-DAG: planned kernel specialization kernel=copy_b512
// LOG-NOT: compiling kernel
// LOG: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuPlanKernels
// STATS-NEXT: (S) 5 kernels - kernel specializations

// FP8-DAG: planned kernel specialization kernel=cast_f16_f8_n512
// FP8-DAG: planned kernel specialization kernel=cast_f16_f8_n1024
// FP8-DAG: planned kernel specialization kernel=gemm_f8_interleaved_k64_c64_r8

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
