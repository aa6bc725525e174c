// ipu-plan-kernels needs a tile program (ipu-lower-to-tiles first); a bad target is named.
// RUN: ipu-opt %s -p 'builtin.module(ipu-plan-kernels{compile=false})' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s -p 'builtin.module(ipu-lower-to-tiles{tiles=4}, ipu-plan-kernels{compile=false target=gc200})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not ipu-opt %s -p 'builtin.module(ipu-plan-kernels{compile=maybe})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTION

// TARGET: error: 'builtin.module' op ipu-plan-kernels: unknown target 'gc200'; known targets: c600, bow
// OPTION: error: invalid value 'maybe' for option 'compile' of pass 'ipu-plan-kernels'

// expected-error@below {{ipu-plan-kernels: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
    return %y : tensor<32x64xf16>
  }
}
