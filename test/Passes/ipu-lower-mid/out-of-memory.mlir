// A graph that cannot fit gets a diagnostic at the op, naming the memory class that is short
// and by how many bytes for the best candidate.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=1})' --verify-diagnostics

func.func @gemm_too_big_for_one_tile(%x: tensor<128x256xf16>) -> tensor<128x512xf16> {
  %w = arith.constant dense<0.5> : tensor<256x512xf16>
  // On one tile the GEMM lowering builds no grid for it (512 columns in one block), so the
  // candidates are the general matmul's: its operand blocks and scratch are interleaved.
  // expected-error@+1 {{'ipu.matmul' op does not fit: interleaved memory per tile is short by 230480 bytes for the best candidate (needs 655360 B of 424880 B;}}
  %h = "ipu.matmul"(%x, %w) : (tensor<128x256xf16>, tensor<256x512xf16>) -> tensor<128x512xf16>
  return %h : tensor<128x512xf16>
}
