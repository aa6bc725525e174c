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

// 1024x512x64 on one tile: the host copy of A alone (1 MiB, kept in interleaved memory until
// the last K panel is converted) exceeds the tile's 424,880 B of interleaved data memory.
// OOM: error: 'builtin.module' op ipu-place-storage: tile 0 needs 1048576 B of interleaved memory for op0.a, 424880 B free (short by 623696 B); largest live: none
// expected-error@below {{ipu-place-storage: the module has no ipu_tile program; run ipu-lower-to-tiles first}}
module {
  func.func @big(%x: tensor<1024x512xf16>, %w: tensor<512x64xf16>) -> tensor<1024x64xf16> {
    %y = "ipu.matmul"(%x, %w) : (tensor<1024x512xf16>, tensor<512x64xf16>) -> tensor<1024x64xf16>
    return %y : tensor<1024x64xf16>
  }
}
