// A graph that cannot fit gets a diagnostic at the op, naming the memory class that is short
// and by how many bytes for the best candidate.
// RUN: ipu-opt %s -p 'builtin.module(ipu-lower-mid{tiles=1})' --verify-diagnostics

func.func @gemm_too_big_for_one_tile(%x: tensor<128x256xf16>) -> tensor<128x1024xf16> {
  %w = arith.constant dense<0.5> : tensor<256x1024xf16>
  // On one tile no split GEMM grid fits (B alone is 512 KiB, resident or in panels, and the
  // 128 x 1024 result another 256 KiB), so the best candidate is the general matmul's, whose
  // packed operands alone overrun the interleaved memory (standard data beyond its budget
  // would spill into interleaved memory, so the interleaved and total budgets are checked).
  // expected-error@+1 {{'ipu.matmul' op does not fit: interleaved memory per tile is short by 623696 bytes for the best candidate (needs 1048576 B of 424880 B;}}
  %h = "ipu.matmul"(%x, %w) : (tensor<128x256xf16>, tensor<256x1024xf16>) -> tensor<128x1024xf16>
  return %h : tensor<128x1024xf16>
}
