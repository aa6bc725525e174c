// A post-norm residual: x feeds an FP8 product first and then the residual add (BERT's
// layout), so under the FP8 policy the host must not stream x as FP8 codes the add would read.
func.func @main(%x: tensor<64x128xf16>, %w: tensor<128x128xf16>, %b: tensor<128xf16>, %g: tensor<128xf16>, %s: tensor<128xf16>) -> tensor<64x128xf16> {
  %m = "ipu.matmul"(%x, %w) : (tensor<64x128xf16>, tensor<128x128xf16>) -> tensor<64x128xf16>
  %a = "ipu.add"(%m, %b) : (tensor<64x128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  %r = "ipu.add"(%x, %a) : (tensor<64x128xf16>, tensor<64x128xf16>) -> tensor<64x128xf16>
  %l = "ipu.layer_norm"(%r, %g, %s) {epsilon = 1.0e-12 : f32} : (tensor<64x128xf16>, tensor<128xf16>, tensor<128xf16>) -> tensor<64x128xf16>
  return %l : tensor<64x128xf16>
}
