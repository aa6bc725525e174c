// memory-budget lowers the per-tile budget below the table's: this GEMM fits 16 tiles with
// the default budget (see options.mlir) but not in 4 KiB per tile.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=16 memory-budget=4096})' --verify-diagnostics -o /dev/null

func.func @gemm(%x: tensor<64x128xf16>) -> tensor<64x256xf16> {
  %w = arith.constant dense<0.5> : tensor<128x256xf16>
  // expected-error@+1 {{'ipu.matmul' op does not fit: interleaved memory per tile is short by}}
  %h = "ipu.matmul"(%x, %w) : (tensor<64x128xf16>, tensor<128x256xf16>) -> tensor<64x256xf16>
  return %h : tensor<64x256xf16>
}
