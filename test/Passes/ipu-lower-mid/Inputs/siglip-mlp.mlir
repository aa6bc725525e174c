func.func @siglip_mlp(%x: tensor<4x729x1152xf16>) -> tensor<4x729x1152xf16> {
  %w1 = arith.constant dense<0.01> : tensor<1152x4304xf16>
  %w2 = arith.constant dense<0.01> : tensor<4304x1152xf16>
  %h = "ipu.matmul"(%x, %w1) : (tensor<4x729x1152xf16>, tensor<1152x4304xf16>) -> tensor<4x729x4304xf16>
  %g = "ipu.gelu"(%h) {approximate = "tanh"} : (tensor<4x729x4304xf16>) -> tensor<4x729x4304xf16>
  %y = "ipu.matmul"(%g, %w2) : (tensor<4x729x4304xf16>, tensor<4304x1152xf16>) -> tensor<4x729x1152xf16>
  return %y : tensor<4x729x1152xf16>
}
