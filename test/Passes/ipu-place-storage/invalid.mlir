// ipu-place-storage needs a tile program; out of memory names the tile, the class, the
// buffer, the shortfall and the largest live buffers; a bad target is named.
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-place-storage)' --verify-diagnostics -o /dev/null
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-place-storage)' -o /dev/null 2>&1 | FileCheck %s --check-prefix=OOM
// RUN: not ipu-opt %s --split-input-file -p 'builtin.module(ipu-lower-to-tiles{tiles=1}, ipu-place-storage{target=gc200})' -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET

// TARGET: error: 'builtin.module' op ipu-place-storage: unknown target 'gc200'; known targets: c600, bow

// expected-error@below {{ipu-place-storage: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @gemm(%x: tensor<32x64xf16>, %w: tensor<64x64xf16>) -> tensor<32x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x64xf16>) -> tensor<32x64xf16>
    return %y : tensor<32x64xf16>
  }
}

// -----

// 256x256x64 on one tile: K runs in two panels, so the host copies of A (128 KiB) and B
// (32 KiB) stay live until the second panel's conversion, when C's AMP output (32 KiB) is
// already live too: 192 KiB in 160 KiB of standard memory.
// OOM: error: 'builtin.module' op ipu-place-storage: tile 0 needs 32768 B of standard memory for op0.c.amp_output, 0 B free (short by 32768 B); largest live: op0.a (131072 B), op0.b (32768 B)
// expected-error@below {{ipu-place-storage: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @big(%x: tensor<256x256xf16>, %w: tensor<256x64xf16>) -> tensor<256x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<256x256xf16>, tensor<256x64xf16>) -> tensor<256x64xf16>
    return %y : tensor<256x64xf16>
  }
}
