// compile=true (the default) compiles every specialization through the content-addressed
// kernel cache: a cold cache compiles and stores each kernel, a warm one only looks it up.
// RUN: rm -rf %t.cache
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=info ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=COLD
// RUN: env IPU_KERNEL_CACHE=%t.cache RUST_LOG=debug ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=true})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WARM
// RUN: ls %t.cache | count 5

// COLD: planned kernel specialization kernel=gemm_f16_interleaved_k64_c64_r8
// COLD: compiling kernel source={{.*}}gemm.mlir name="gemm_f16_interleaved_k64_c64_r8" target=ipu21
// COLD: kernel artifact created object={{.*}}kernel.o
// COLD: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

// WARM-NOT: compiling kernel
// WARM: kernel cache hit name=gemm_f16_interleaved_k64_c64_r8 object={{.*}}kernel.o
// WARM-NOT: compiling kernel
// WARM: pass finished pass=ipu-plan-kernels op=builtin.module elapsed_ms={{[0-9]+}} success=true

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
