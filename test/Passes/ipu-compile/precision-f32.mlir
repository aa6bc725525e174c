// precision=f32 on an F16 GEMM: planning chooses F32 AMP inputs and the lowering follows it,
// casting the F16 operands to F32 on device (F32 partials, gemm_f32 kernels).
// RUN: ipu-opt %s -p 'builtin.module(ipu-compile{tiles=8 precision=f32 compile-kernels=false})' | FileCheck %s
// CHECK: name = "gemm_f32_
// CHECK: "ipu_tile.code"

func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
  return %y : tensor<32x64xf16>
}
