// The seed's GEMM class: FP8 on 64 tiles, 250 rows in row blocks of 32 (the last padded from
// 26), lowered to tiles, placed, exchange-lowered and written as a package.











func.func @gemm(%x: tensor<250x256xf16>, %w: tensor<256x512xf16>) -> tensor<250x512xf16> {
  %y = "ipu.matmul"(%x, %w) : (tensor<250x256xf16>, tensor<256x512xf16>) -> tensor<250x512xf16>
  return %y : tensor<250x512xf16>
}
