// ipu-plan-kernels names every kernel specialization of the tile program (the seed's names)
// and leaves the program as it is; compile=false skips the kernel cache.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' | FileCheck %s
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOG
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false})' --mlir-pass-statistics -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATS
// The program is unchanged.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4})' -o %t.tiles.mlir
// RUN: ipu-opt %t.tiles.mlir -p 'builtin.module(ipu-plan-kernels{compile=false})' | diff %t.tiles.mlir -
// With FP8 inputs on F16 tensors from the host the product is still a split GEMM: the host
// encodes A and B in FP8 as it streams them, so the kernels are the same three with one-byte
// elements (half the copy sizes) and an FP8 GEMM.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8
// A product the split lowering does not take (its result feeds an add of another full
// tensor, not a bias add) keeps the output-stationary lowering: with FP8 inputs the casts on
// the device, the AMP packs of A and B and C's rearrange back to row-major are
// specializations too.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 precision=fp8 function=gemm_then_add}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8-STATIONARY
// A K split adds the reduction's kernels.
// RUN: env RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=k_split}, ipu-plan-kernels{compile=false})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=KSPLIT

// @gemm (32x64x64, F16 from the host, only returned) is a split GEMM on grid [1, 1, 4, 1]:
// the host streams A and B into AMP order, so the only kernels are the Copy of each home
// into its panel and one GEMM call per tile (K = 64, 16 columns, 32 rows).
// CHECK: module @gemm.tiles
// CHECK: "ipu_tile.kernel"() {index = {{[0-9]+}} : i64, name = "gemm_f16_interleaved_k64_c16_r32"
// CHECK-NOT: address =
// CHECK: "ipu_tile.host_read"

// Nothing is compiled, and nothing is packed or rearranged on the device.
// LOG-NOT: compiling kernel
// LOG: planned kernel specialization kernel=copy_b1024
// LOG-NEXT: planned kernel specialization kernel=copy_b2048
// LOG-NEXT: planned kernel specialization kernel=gemm_f16_interleaved_k64_c16_r32
// LOG-NEXT: package build phase finished phase="plan_kernels" elapsed_ms={{[0-9]+}} success=true
// LOG-NEXT: package build phase finished phase="link_runtime" elapsed_ms={{[0-9]+}} success=true
// LOG-NEXT: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATS: IpuPlanKernels
// STATS-NEXT: (S) 3 kernels - kernel specializations

// FP8: split GEMM grid op=0 grid=[1, 1, 4, 1] panels=1 k_panel=64
// FP8-NOT: planned kernel specialization
// FP8: planned kernel specialization kernel=copy_b512
// FP8-NEXT: planned kernel specialization kernel=copy_b1024
// FP8-NEXT: planned kernel specialization kernel=gemm_f8_interleaved_k64_c16_r32
// FP8-NEXT: package build phase finished phase="plan_kernels"
// FP8-NEXT: package build phase finished phase="link_runtime"
// FP8-NEXT: pass finished pass=ipu-plan-kernels

// FP8-STATIONARY-NOT: split GEMM grid
// FP8-STATIONARY: planned kernel specialization kernel=cast_f16_f8_n512
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=rearrange_amp_left_f8_o0_r8_p8_c64_p64
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=cast_f16_f8_n1024
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=rearrange_amp_right_f8_o0_r16_p16_c64_p64
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=copy_b256
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=gemm_f8_interleaved_k64_c64_r8
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=rearrange_from_amp_output_f16_o0_r8_p8_c64_p64
// FP8-STATIONARY-NEXT: planned kernel specialization kernel=add_f16_r8_c64_b8
// FP8-STATIONARY-NEXT: package build phase finished phase="plan_kernels"
// FP8-STATIONARY-NEXT: package build phase finished phase="link_runtime"
// FP8-STATIONARY-NEXT: pass finished pass=ipu-plan-kernels

// @k_split (16x512x32 on grid [1, 1, 1, 4]): besides the copies and the GEMM (K slice of
// 128), each tile reduce-adds the stack of three received partial ranges (128 elements
// each) and adds its own range.
// KSPLIT: planned kernel specialization kernel=copy_b4096
// KSPLIT-NEXT: planned kernel specialization kernel=copy_b8192
// KSPLIT-NEXT: planned kernel specialization kernel=gemm_f16_interleaved_k128_c32_r16
// KSPLIT-NEXT: planned kernel specialization kernel=reduce_add_f16_f16_n128_p3
// KSPLIT-NEXT: planned kernel specialization kernel=add_f16_r1_c128_b1
// KSPLIT-NEXT: package build phase finished phase="plan_kernels"
// KSPLIT-NEXT: package build phase finished phase="link_runtime"
// KSPLIT-NEXT: pass finished pass=ipu-plan-kernels

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @k_split(%x: tensor<16x512xf16>, %w: tensor<512x32xf16>) -> tensor<16x32xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<16x512xf16>, tensor<512x32xf16>) -> tensor<16x32xf16>
  return %y : tensor<16x32xf16>
}

func.func @gemm_then_add(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %r: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.add"(%y, %r) : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}
