// compile=true (the default) compiles every specialization through the content-addressed
// kernel cache: a cold cache compiles and stores each kernel, a warm one only looks it up.
// RUN: rm -rf %t.cache
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=debug ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: ls %t.cache | count 3
// A matmul feeding a gelu is the same split GEMM plus an in-place gelu: its three GEMM
// kernels are cache hits and only the gelu compiles.
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=debug ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_gelu}, ipu-plan-kernels)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=GELU
// RUN: ls %t.cache | count 4
// The output-stationary lowering (a matmul feeding an add of another full tensor, not a
// bias add) shares none of those kernels: its six (the AMP packs and C's rearrange from
// rearrange.mlir, a copy, the GEMM, the add) compile into the same cache.
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=debug ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4 function=gemm_then_add}, ipu-plan-kernels)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=STATIONARY
// RUN: ls %t.cache | count 10

// @gemm is a split GEMM: three kernels (the two home copies and the GEMM).
// COLD: planned kernel specialization kernel=gemm_f16_interleaved_k64_c16_r32
// COLD: compiling kernel source={{.*}}copy.mlir name="copy_b1024" target=ipu21
// COLD: kernel artifact created object={{.*}}kernel.o
// COLD: compiling kernel source={{.*}}copy.mlir name="copy_b2048" target=ipu21
// COLD: kernel artifact created object={{.*}}kernel.o
// COLD: compiling kernel source={{.*}}gemm.mlir name="gemm_f16_interleaved_k64_c16_r32" target=ipu21
// COLD: kernel artifact created object={{.*}}kernel.o
// COLD: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// WARM-NOT: compiling kernel
// WARM: kernel cache hit name=copy_b1024 object={{.*}}kernel.o
// WARM: kernel cache hit name=copy_b2048 object={{.*}}kernel.o
// WARM: kernel cache hit name=gemm_f16_interleaved_k64_c16_r32 object={{.*}}kernel.o
// WARM-NOT: compiling kernel
// WARM: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// GELU: planned kernel specialization kernel=gelu_tanh_f16_n512
// GELU-NOT: compiling kernel
// GELU: kernel cache hit name=copy_b1024 object={{.*}}kernel.o
// GELU-NEXT: kernel cache hit name=copy_b2048 object={{.*}}kernel.o
// GELU-NEXT: kernel cache hit name=gemm_f16_interleaved_k64_c16_r32 object={{.*}}kernel.o
// GELU-NEXT: compiling kernel source={{.*}}gelu.mlir name="gelu_tanh_f16_n512" target=ipu21
// GELU-NEXT: kernel artifact created object={{.*}}kernel.o
// GELU-NOT: compiling kernel
// GELU: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// STATIONARY-NOT: kernel cache hit
// STATIONARY: compiling kernel source={{.*}}rearrange.mlir name="rearrange_amp_left_f16_o0_r8_p8_c64_p64" target=ipu21
// STATIONARY: compiling kernel source={{.*}}rearrange.mlir name="rearrange_amp_right_f16_o0_r16_p16_c64_p64" target=ipu21
// STATIONARY: compiling kernel source={{.*}}copy.mlir name="copy_b512" target=ipu21
// STATIONARY: compiling kernel source={{.*}}gemm.mlir name="gemm_f16_interleaved_k64_c64_r8" target=ipu21
// STATIONARY: compiling kernel source={{.*}}rearrange.mlir name="rearrange_from_amp_output_f16_o0_r8_p8_c64_p64" target=ipu21
// STATIONARY: compiling kernel source={{.*}}add.mlir name="add_f16_r8_c64_b8" target=ipu21
// STATIONARY-NOT: kernel cache hit
// STATIONARY: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}

func.func @gemm_then_gelu(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.gelu"(%y) {approximate = "tanh"} : (tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}

func.func @gemm_then_add(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>, %r: tensor<32x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  %z = "ipu.add"(%y, %r) : (tensor<32x64xf16>, tensor<32x64xf16>) -> tensor<32x64xf16>
  return %z : tensor<32x64xf16>
}
