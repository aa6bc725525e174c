// A product with a bias whose weight and bias are parameters: arguments marked
// {ipu.parameter}, written once by `initialize` and resident for every run.
func.func @main(%x: tensor<32x64xf16>, %w: tensor<64x48xf16> {ipu.parameter}, %b: tensor<48xf16> {ipu.parameter}) -> tensor<32x48xf16> {
  %m = "ipu.matmul"(%x, %w) : (tensor<32x64xf16>, tensor<64x48xf16>) -> tensor<32x48xf16>
  %r = "ipu.add"(%m, %b) : (tensor<32x48xf16>, tensor<48xf16>) -> tensor<32x48xf16>
  return %r : tensor<32x48xf16>
}
