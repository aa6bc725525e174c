// The corpus's tf/mlp_gelu_tanh (Keras Dense 32->128 with tanh GeLU, Dense 128->32, both with
// bias) written by hand in the ipu dialect, on its [1, 16, 32] input, for the
// imported-vs-hand-written comparison. Weights as constants (their values do not change the
// cycles).
func.func @main(%x: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %w1 = arith.constant dense<0.125> : tensor<32x128xf32>
  %b1 = arith.constant dense<0.0625> : tensor<128xf32>
  %w2 = arith.constant dense<0.25> : tensor<128x32xf32>
  %b2 = arith.constant dense<0.5> : tensor<32xf32>
  %h = "ipu.matmul"(%x, %w1) : (tensor<1x16x32xf32>, tensor<32x128xf32>) -> tensor<1x16x128xf32>
  %hb = "ipu.add"(%h, %b1) : (tensor<1x16x128xf32>, tensor<128xf32>) -> tensor<1x16x128xf32>
  %g = "ipu.gelu"(%hb) {approximate = "tanh"} : (tensor<1x16x128xf32>) -> tensor<1x16x128xf32>
  %y = "ipu.matmul"(%g, %w2) : (tensor<1x16x128xf32>, tensor<128x32xf32>) -> tensor<1x16x32xf32>
  %yb = "ipu.add"(%y, %b2) : (tensor<1x16x32xf32>, tensor<32xf32>) -> tensor<1x16x32xf32>
  return %yb : tensor<1x16x32xf32>
}
