// The seed's GEMM class: FP8 on 64 tiles, lowered to tiles, placed, exchange-lowered and
// written as a package. Under the FP8 policy the host streams both operands encoded in FP8
// straight into the split GEMM's AMP orders (grid [1, 4, 16, 1]: the 250 rows in blocks of
// 63, 63, 62 and 62, nothing padded).











func.func @gemm(%x: tensor<250x256xf16>, %w: tensor<256x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x256xf16>, tensor<256x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
